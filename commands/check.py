"""``cli.py check``: validate a grammar (against the mapper's registry too) and print its analysis."""
from __future__ import annotations

import sys
import time

from ..search.options import add_plugin_argument, import_plugins, path_arg
from ._common import EXIT_OK, add_dataset_arguments, dataset_meta, fmt_count, load_checked_grammar, print_warnings


def run(args) -> int:
    t0 = time.perf_counter()
    import_plugins(args.plugin)
    grammar, mapper_warnings, produced = load_checked_grammar(args.grammar)  # what only the search would find
    meta, meta_name, dataset = dataset_meta(args, grammar)
    analysis = grammar.analysis
    grammar.bind(meta)
    summary = analysis.summary(meta)
    elapsed = time.perf_counter() - t0
    print_warnings(grammar, mapper_warnings)
    if dataset is not None:  # what the search would refuse or warn about (evaluation/learnable.py)
        from ggp_automl.evaluation.learnable import check_learnable
        from ggp_automl.search.run_data import RunData, check_task

        check_task(grammar, RunData(dataset, description={"name": args.data}), produced)
        for warning in check_learnable(dataset.labelled()):
            print(f"warning: {warning}", file=sys.stderr)
    print(f"{grammar.path}: OK")
    portfolio = args.portfolio or _shipped_portfolio(grammar.path)
    if portfolio:
        from ggp_automl.search.portfolio import verify

        print(verify(portfolio, grammar, meta))
    for key, value in summary.items():
        if key in ("algorithm combinations",) or key.startswith("configurations"):
            value = fmt_count(value)
        elif isinstance(value, list):
            value = ", ".join(value) if value else "none"
        elif isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
        print(f"  {key:38s} {value}")
    print(f"  {'dataset for bounds':38s} {meta_name} ({meta})")
    if args.rules:
        print("  configurations per rule:")
        for rule in grammar:
            if rule.name in analysis.reachable and not rule.synthetic:
                print(f"    <{rule.name}>  {fmt_count(analysis.configurations(meta, rule.name))}")
        from ggp_automl.gp.selection import describe_selection

        print("  P(outermost algorithm) at each level (the start rule, and wherever an algorithm holds another):")
        for level, text in describe_selection(grammar):
            print(f"    {level:36s} {text}")
    print(f"  {'check time':38s} {elapsed * 1000:.0f} ms")
    return EXIT_OK


def _shipped_portfolio(grammar_path: str) -> str | None:
    """The portfolio beside the grammar (``NAME.portfolio.json``), when there is one: checked with it."""
    from ggp_automl.search.portfolio import shipped_portfolio

    path = shipped_portfolio(grammar_path)
    return str(path) if path.is_file() else None


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "check", "validate a grammar and print its analysis"


def register(sub) -> None:
    """Add ``check`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("--rules", action="store_true",
                   help="also print the configuration count of every rule and the probability of each algorithm")
    p.add_argument("--portfolio", type=path_arg, metavar="FILE",
                   help="also verify a warm-start portfolio against the grammar (default: the one beside the grammar, "
                        "NAME.portfolio.json, when there is one)")
    add_dataset_arguments(p)
    add_plugin_argument(p)
    p.set_defaults(func=run)

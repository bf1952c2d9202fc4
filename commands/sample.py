"""``cli.py sample``: random derivation trees of a grammar that ``check`` accepts, bounded in number, output and time."""
from __future__ import annotations

import sys

from ..search.options import UsageError, add_plugin_argument, import_plugins, positive_int, seed_number
from ._common import EXIT_OK, add_dataset_arguments, dataset_meta, load_checked_grammar, print_warnings


#: what one tree may print: the lines of its drawing and the characters of its phenotype (``--phenotypes``
#: prints whole phenotypes, one a line), and the seconds the whole command may take; a grammar whose trees
#: double at every level reaches the generator's node limit (10,000) and would print for minutes
TREE_LINES, PHENOTYPE_CHARS, SECONDS = 60, 400, 30.0


def run(args) -> int:
    import time

    import numpy as np

    from ggp_automl.gp.generate import TreeGenerator

    most = 10_000  # about a millisecond a tree for the Large space; -n 10000000 would run for hours
    if args.n > most:
        raise UsageError(f"-n is at most {most:,} trees, got {args.n:,}")
    started = time.monotonic()
    import_plugins(args.plugin)
    grammar, mapper_warnings, _ = load_checked_grammar(args.grammar)  # the trees of a grammar `check` refuses: no
    meta, meta_name, _ = dataset_meta(args, grammar)
    print_warnings(grammar, mapper_warnings)
    generator = TreeGenerator(grammar.bind(meta))
    rng = np.random.default_rng(args.seed)
    min_depth = grammar.analysis.min_depth[grammar.start]
    if args.max_depth < min_depth:
        raise UsageError(f"--max-depth {args.max_depth} is below the grammar's minimum depth {min_depth}")
    if args.method == "rhh":
        trees = iter(generator.ramped_half_and_half(args.n, rng, max_depth=args.max_depth))
    else:
        make = generator.grow if args.method == "grow" else generator.full
        trees = (make(rng, args.max_depth) for _ in range(args.n))
    if not args.quiet:
        print(f"# {args.n} trees from {grammar.path} ({args.method}, seed {args.seed}, "
              f"dataset {meta_name}: {meta})")
    for i, tree in enumerate(trees, start=1):
        if args.phenotypes:
            print(tree.phenotype)
        else:
            print(f"\n[{i}] {_shortened(tree.phenotype)}")
            print(f"    depth {tree.depth}, {tree.size} nodes")
            lines = tree.render().splitlines()
            print("\n".join("    " + line for line in lines[:TREE_LINES]))
            if len(lines) > TREE_LINES:
                print(f"    … {len(lines) - TREE_LINES:,} more lines (--phenotypes prints whole trees)")
        if i < args.n and time.monotonic() - started > SECONDS:
            print(f"warning: stopped after {i} of {args.n} trees: sampling may take {SECONDS:.0f} s (this grammar's "
                  f"trees reach {tree.size:,} nodes; a lower --max-depth makes them smaller)", file=sys.stderr)
            break
    return EXIT_OK


def _shortened(phenotype: str) -> str:
    if len(phenotype) <= PHENOTYPE_CHARS:
        return phenotype
    return f"{phenotype[:PHENOTYPE_CHARS]}… ({len(phenotype):,} characters)"


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "sample", "generate random derivation trees from a grammar"


def register(sub) -> None:
    """Add ``sample`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("-n", type=positive_int, default=5, help="number of trees (default 5)")
    p.add_argument("--seed", type=seed_number, default=0, help="random seed (default 0)")
    p.add_argument("--method", choices=["grow", "full", "rhh"], default="grow",
                   help="grow, full, or ramped half-and-half (default grow)")
    p.add_argument("--max-depth", type=positive_int, default=100, help="maximum tree depth (default 100)")
    p.add_argument("--phenotypes", action="store_true", help="print only the phenotype strings")
    p.add_argument("--quiet", action="store_true", help="no header line")
    add_dataset_arguments(p)
    add_plugin_argument(p)
    p.set_defaults(func=run)

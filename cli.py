#!/usr/bin/env python3
"""ggp-automl command line.

    python cli.py check   --grammar FILE [--data FILE | --labels L --features M]
    python cli.py sample  --grammar FILE -n N --seed S [--data FILE | --labels L --features M]
    python cli.py species --grammar FILE [--out DIR]

Exit codes: 0 success; 1 a grammar, dataset or other input problem (the message says
where: ``file:line:col``); 2 bad command-line usage.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    pass


def _int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number ≥ {minimum}, got {value}")
        return value
    return parse


_positive_int = _int_at_least(1, "a whole number")
_seed = _int_at_least(0, "an integer seed")


def _add_dataset_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("dataset (for bounds such as floor(L/2); default: the embedded synthetic dataset)")
    g.add_argument("--data", metavar="FILE", help="ARFF dataset (MULAN with .xml, or MEKA with -C q)")
    g.add_argument("--labels", type=_positive_int, metavar="L", help="number of labels")
    g.add_argument("--features", type=_positive_int, metavar="M", help="number of features")
    g.add_argument("--instances", type=_positive_int, metavar="N", default=None, help="number of instances")


def _dataset_meta(args):
    from evaluation import default_data
    from evaluation.data import load_dataset
    from gp.binding import DatasetMeta

    if args.data and (args.labels or args.features):
        raise UsageError("give either --data or --labels/--features, not both")
    if args.data:
        return load_dataset(args.data).meta, args.data
    if args.labels or args.features:
        if not (args.labels and args.features):
            raise UsageError("--labels and --features go together")
        return DatasetMeta(args.labels, args.features, args.instances or 0), "command line"
    return default_data.META, default_data.NAME


def _load(path: str):
    from gp.bnf_parser import load_grammar

    return load_grammar(path)


def _print_warnings(grammar) -> None:
    for w in grammar.warnings:
        print(w.render(), file=sys.stderr)


def _fmt_count(value) -> str:
    if value == float("inf"):
        return "infinite (recursive grammar)"
    if isinstance(value, int) and value < 10**7:
        return f"{value:,}"
    return f"{float(value):.4g}"


def cmd_check(args) -> int:
    t0 = time.perf_counter()
    grammar = _load(args.grammar)
    meta, meta_name = _dataset_meta(args)
    analysis = grammar.analysis
    grammar.bind(meta)
    summary = analysis.summary(meta)
    elapsed = time.perf_counter() - t0
    _print_warnings(grammar)
    print(f"{grammar.path}: OK")
    for key, value in summary.items():
        if key in ("algorithm combinations",) or key.startswith("configurations"):
            value = _fmt_count(value)
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
                print(f"    <{rule.name}>  {_fmt_count(analysis.configurations(meta, rule.name))}")
    print(f"  {'check time':38s} {elapsed * 1000:.0f} ms")
    return EXIT_OK


def cmd_sample(args) -> int:
    import numpy as np

    from gp.generate import TreeGenerator

    grammar = _load(args.grammar)
    meta, meta_name = _dataset_meta(args)
    _print_warnings(grammar)
    generator = TreeGenerator(grammar.bind(meta))
    rng = np.random.default_rng(args.seed)
    min_depth = grammar.analysis.min_depth[grammar.start]
    if args.max_depth < min_depth:
        raise UsageError(f"--max-depth {args.max_depth} is below the grammar's minimum depth {min_depth}")
    if args.method == "rhh":
        trees = generator.ramped_half_and_half(args.n, rng, max_depth=args.max_depth)
    else:
        make = generator.grow if args.method == "grow" else generator.full
        trees = [make(rng, args.max_depth) for _ in range(args.n)]
    if not args.quiet:
        print(f"# {args.n} trees from {grammar.path} ({args.method}, seed {args.seed}, "
              f"dataset {meta_name}: {meta})")
    for i, tree in enumerate(trees, start=1):
        if args.phenotypes:
            print(tree.phenotype)
            continue
        print(f"\n[{i}] {tree.phenotype}")
        print(f"    depth {tree.depth}, {tree.size} nodes")
        print("\n".join("    " + line for line in tree.render().splitlines()))
    return EXIT_OK


def cmd_species(args) -> int:
    from gp.species import write_species

    grammar = _load(args.grammar)
    _print_warnings(grammar)
    out = Path(args.out) if args.out else Path(args.grammar).parent / "species"
    try:
        paths = write_species(grammar, out)
    except OSError as exc:
        raise UsageError(f"cannot write species grammars to {out}: {exc.strerror or exc}") from None
    for p in paths:
        print(p)
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cli.py", description="Grammar-guided AutoML.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("check", help="validate a grammar and print its analysis")
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("--rules", action="store_true", help="also print the configuration count of every rule")
    _add_dataset_args(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("sample", help="generate random derivation trees from a grammar")
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("-n", type=_positive_int, default=5, help="number of trees (default 5)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--method", choices=["grow", "full", "rhh"], default="grow",
                   help="grow, full, or ramped half-and-half (default grow)")
    p.add_argument("--max-depth", type=_positive_int, default=100, help="maximum tree depth (default 100)")
    p.add_argument("--phenotypes", action="store_true", help="print only the phenotype strings")
    p.add_argument("--quiet", action="store_true", help="no header line")
    _add_dataset_args(p)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("species", help="write the 8 species grammars of an annotated grammar")
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("--out", metavar="DIR", help="output folder (default: species/ beside the grammar)")
    p.set_defaults(func=cmd_species)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from gp.errors import DataError, GrammarError

    try:
        return args.func(args)
    except GrammarError as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        n = len(exc.diagnostics)
        print(f"{n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return EXIT_INPUT
    except DataError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as exc:
        print(f"cli.py: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())

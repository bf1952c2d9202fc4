"""``cli.py sample``: random derivation trees of a grammar, bounded in number."""
from __future__ import annotations


from ..search.options import UsageError, positive_int, seed_number
from ._common import EXIT_OK, add_dataset_arguments, dataset_meta, load_grammar_file, print_warnings


def run(args) -> int:
    import numpy as np

    from ggp_automl.gp.generate import TreeGenerator

    most = 10_000  # about a millisecond a tree for the Large space; -n 10000000 would run for hours
    if args.n > most:
        raise UsageError(f"-n is at most {most:,} trees, got {args.n:,}")
    grammar = load_grammar_file(args.grammar)
    meta, meta_name, _ = dataset_meta(args, grammar)
    print_warnings(grammar)
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
    p.set_defaults(func=run)

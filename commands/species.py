"""``cli.py species``: write the 8 species grammars of an annotated grammar."""
from __future__ import annotations

from pathlib import Path

from ..search.options import UsageError, add_plugin_argument, import_plugins
from ._common import EXIT_OK, load_checked_grammar, print_warnings


def run(args) -> int:
    from ggp_automl.gp.species import write_species

    import_plugins(args.plugin)
    grammar, mapper_warnings, _ = load_checked_grammar(args.grammar)  # species of a grammar `check` refuses: no
    print_warnings(grammar, mapper_warnings)
    out = Path(args.out) if args.out else Path(args.grammar).parent / "species"
    try:
        paths = write_species(grammar, out)
    except OSError as exc:
        raise UsageError(f"cannot write species grammars to {out}: {exc.strerror or exc}") from None
    for p in paths:
        print(p)
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "species", "write the 8 species grammars of an annotated grammar"


def register(sub) -> None:
    """Add ``species`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("--out", metavar="DIR", help="output folder (default: species/ beside the grammar)")
    add_plugin_argument(p)
    p.set_defaults(func=run)

"""``cli.py inspect``: print what a run directory says (results/render.py)."""
from __future__ import annotations

from pathlib import Path

from ..search.options import path_arg
from ._common import EXIT_OK


def run(args) -> int:
    from rich.console import Console

    from ggp_automl.results.predict import import_run_plugins
    from ggp_automl.results.render import render_inspect

    import_run_plugins(Path(args.run))
    render_inspect(args.run, Console())
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "inspect", "summarise a run directory"


def register(sub) -> None:
    """Add ``inspect`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP)
    p.add_argument("run", type=path_arg, metavar="DIR")
    p.set_defaults(func=run)

"""``cli.py portfolio``: build a warm-start portfolio from an experiment-style file, or show one."""
from __future__ import annotations

import sys

from ..search.options import path_arg, scheduler_address
from ._common import EXIT_OK


def run(args) -> int:
    if args.action == "show":
        return _show(args.file)
    from ggp_automl.experiments.live import GridProgress
    from ggp_automl.experiments.portfolio import build, read_spec

    spec = read_spec(args.file)  # a broken file fails before anything runs
    budget = spec.doc["experiment"]["budget"]
    from ggp_automl.search.options import duration

    def progress():
        return GridProgress(duration(budget), spec.doc["experiment"].get("parallel", 1),
                            live=False if args.quiet else None)
    command = " ".join(["python cli.py portfolio build", args.file] + (["--out", args.out] if args.out else []))
    written = build(args.file, args.out, args.scheduler, progress, command=command,
                    say=lambda line: print(line, file=sys.stderr, flush=True))
    for path in written:
        print(f"portfolio: {path}")
    print(f"use it:    python cli.py evolve --grammar {spec.grammar} --warm-start {written[0]} …", file=sys.stderr)
    return EXIT_OK


def _show(path: str) -> int:
    from ggp_automl.search.portfolio import Portfolio

    p = Portfolio.load(path)
    print(f"{path}: {len(p.members)} members for {p.grammar} (sha256 {p.grammar_sha256[:12]}…)")
    if p.datasets:
        print(f"  made from {len(p.datasets)} datasets: {', '.join(p.datasets)}"
              + (f" (without {p.held_out})" if p.held_out else ""))
    if p.machine_seconds is not None:
        print(f"  machine time {p.machine_seconds / 3600:.2f} h; made by: {p.command or 'unknown'}")
    for i, m in enumerate(p.members, 1):
        gain = "" if m.gain is None else f"gain {m.gain:.3f}  mean {m.mean:.3f}  "
        print(f"  {i:3d}. {gain}[{m.source}] {m.phenotype}")
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "portfolio", "build a warm-start portfolio across datasets, or show one"


def register(sub) -> None:
    """Add ``portfolio`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP, description="build: evaluate a pool of candidates on every dataset of an "
                       "experiment-style file and choose a portfolio greedily (experiments/portfolio.py); resumable "
                       "like bench. show: print a portfolio file.")
    p.add_argument("action", choices=["build", "show"])
    p.add_argument("file", type=path_arg, metavar="FILE", help="build: the portfolio's TOML file; show: a portfolio")
    p.add_argument("--out", type=path_arg, metavar="DIR", help="build: output directory (default "
                                                                 "runs/portfolio-<file name>)")
    p.add_argument("--scheduler", type=scheduler_address, metavar="ADDR", help="build: run on a Dask cluster")
    p.add_argument("--quiet", action="store_true", help="build: one line a run instead of the live table")
    p.set_defaults(func=run)

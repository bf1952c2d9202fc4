"""``cli.py bench``: run an experiment grid from a TOML file (experiments/), resumable."""
from __future__ import annotations

import sys
from pathlib import Path

from ..search.options import UsageError, path_arg, scheduler_address
from ._common import EXIT_INPUT, EXIT_OK


def run(args) -> int:
    from ggp_automl.experiments import Grid, load_experiment, prepare
    from ggp_automl.experiments.grid import RUNS, default_out, load_directory, state_of
    from ggp_automl.experiments.live import GridProgress

    source = Path(args.experiment)
    if source.is_dir():  # an experiment directory: resume the grid it holds
        experiment, out = load_directory(source), source
        if args.out and Path(args.out).resolve() != source.resolve():
            raise UsageError("--out goes with an experiment file; a directory is resumed where it is")
    else:
        experiment = load_experiment(source)
        out = Path(args.out) if args.out else default_out(experiment)
    if args.dry_run:
        for run in experiment.runs:
            print(f"{run.id}: python cli.py evolve {' '.join(run.args)}")
        print(f"{len(experiment.runs)} runs of {experiment.budget}, {experiment.parallel} at a time, into {out}")
        return EXIT_OK
    out = args.experiment_dir_made = prepare(experiment, out)
    progress = GridProgress(experiment.budget_seconds, experiment.parallel, live=False if args.quiet else None)
    Grid(experiment, out, args.scheduler, progress).run()
    left = [r.id for r in experiment.runs if state_of(out / RUNS / r.directory) != "done"]
    print(f"experiment directory: {out}")
    if left:
        print(f"{len(left)} run(s) did not finish (see {out / 'logs'}); run the same command again to retry them",
              file=sys.stderr)
        return EXIT_INPUT
    print(f"report:               python cli.py report {out}")
    return EXIT_OK


#: the sub-command, and its line in ``--help`` (the parser lists every command without importing them)
NAME, HELP = "bench", "run an experiment grid (methods x grammars x datasets x seeds) from a TOML file"


def register(sub) -> None:
    """Add ``bench`` to the command line's sub-commands."""
    p = sub.add_parser(NAME, help=HELP,
                       description="Run every run an experiment file names (each an ordinary evolve run directory "
                                   "under DIR/runs), PARALLEL at a time, here or on a Dask cluster. Run it again (with "
                                   "the file or the directory) to resume: finished runs are kept, interrupted ones "
                                   "resume. Format: benchmarks/README.md.")
    p.add_argument("experiment", type=path_arg, metavar="EXPERIMENT", help="experiment file (.toml) or directory")
    p.add_argument("--out", type=path_arg, metavar="DIR", help="experiment directory (default runs/<name>)")
    p.add_argument("--scheduler", type=scheduler_address, metavar="ADDR",
                   help="run whole runs on a Dask cluster (tcp://HOST:PORT); its workers need the project and the "
                        "data at the same paths")
    p.add_argument("--dry-run", action="store_true", help="list the runs and their evolve commands, run nothing")
    p.add_argument("--quiet", action="store_true", help="one line a run instead of the live table")
    p.set_defaults(func=run)

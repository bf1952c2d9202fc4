"""Experiments: grids of ordinary runs from a TOML file (``cli.py bench``) and their report (``cli.py report``).

From Python::

    from ggp_automl.experiments import run_experiment, make_report
    out = run_experiment("benchmarks/smoke.toml")            # runs/<name>; resumes when it exists
    make_report(out)                                         # out/report/report.md, report.tex, figures
"""
from __future__ import annotations

from pathlib import Path

from .grid import Grid, default_out, prepare
from .report import make_report
from .spec import Experiment, ExperimentError, load_experiment

__all__ = ["Experiment", "ExperimentError", "load_experiment", "make_report", "run_experiment"]


def run_experiment(path: str | Path, out: str | Path | None = None, scheduler: str | None = None,
                   observer=None) -> Path:
    """Run (or resume) the grid of an experiment file; returns the experiment directory.

    ``scheduler``: a Dask scheduler address (``tcp://HOST:PORT``) to spread whole runs over a
    cluster. ``observer(event, **info)`` hears "start", "started", "finished" and "tick"."""
    experiment = load_experiment(path)
    out = prepare(experiment, out if out is not None else default_out(experiment))
    Grid(experiment, out, scheduler, observer).run()
    return out

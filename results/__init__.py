"""Reading a run directory: what it says (``inspect``) and what its model predicts (``predict``).

Why a room of its own, above the search: the search writes a run directory (search/rundir.py owns the
files and their schema); reading one back, printing it and applying its model to new data need only the
files, never the live search, and must work on a run that is still going, was killed, or was made by
another machine. The command line and the experiment harness call these functions.
"""
from .predict import Predictions, predict_run
from .render import render_inspect
from .report import ReportError, summarise

__all__ = ["Predictions", "ReportError", "predict_run", "render_inspect", "summarise"]

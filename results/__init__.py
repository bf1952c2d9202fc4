"""Reading a run directory: what it says (``inspect``) and what its model predicts (``predict``).

Why a room of its own, above the search: the search writes a run directory (search/rundir.py owns the
files and their schema); reading one back, printing it and applying its model to new data need only the
files, never the live search, and must work on a run that is still going, was killed, or was made by
another machine. The command line and the experiment harness call these functions.
"""
from __future__ import annotations

import importlib

_EXPORTS = {"Predictions": ".predict", "predict_run": ".predict", "render_inspect": ".render",
            "ReportError": ".report", "summarise": ".report"}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):  # imported when first used: reading a run needs only part of the stack
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name], __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

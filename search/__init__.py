"""Search: one loop, several methods (GGP, speciated GGP, GA, random and beam search, PBIL, BO, TPE, EO, DivBO).

See :mod:`ggp_automl.search.methods.base` for the ask/tell seam that new methods and sampling
policies plug into, and ``search/README.md`` for the run directory's files. The names below are
imported when first used, so that the command line's light paths (``--help``, a usage error) and the
evolve options (:mod:`.options`) do not pay for the whole search stack.
"""
from __future__ import annotations

import importlib

_EXPORTS = {
    "METHOD_NAMES": (".config", "METHODS"), "RunConfig": (".config", "RunConfig"),
    "Individual": (".individual", "Individual"), "SearchMethod": (".methods.base", "SearchMethod"),
    "SteadyStateMethod": (".methods.base", "SteadyStateMethod"), "METHODS": (".methods", "METHODS"),
    "make_method": (".methods", "make_method"), "register_method": (".methods", "register_method"),
    "SearchObserver": (".observer", "SearchObserver"), "Parameter": (".parameters", "Parameter"),
    "RunData": (".run_data", "RunData"), "RunError": (".errors", "RunError"),
    "load_run_data": (".run_data", "load_run_data"),
    "resume": (".run", "resume"), "start": (".run", "start"),
}
__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        module, attr = _EXPORTS[name]
        return getattr(importlib.import_module(module, __name__), attr)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

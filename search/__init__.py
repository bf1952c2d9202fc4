"""Search: one loop, several methods (GGP, speciated GGP, random and beam search, PBIL).

See :mod:`ggp_automl.search.methods.base` for the ask/tell seam that new methods and sampling
policies plug into, and ``search/README.md`` for the run directory's files.
"""
from .config import METHODS as METHOD_NAMES
from .config import RunConfig
from .individual import Individual
from .methods.base import SearchMethod, SteadyStateMethod
from .methods import METHODS, make_method, register_method
from .observer import SearchObserver
from .parameters import Parameter
from .run import RunData, RunError, load_run_data, resume, start

__all__ = ["METHOD_NAMES", "METHODS", "Individual", "Parameter", "RunConfig", "RunData", "RunError", "SearchMethod",
           "SearchObserver", "SteadyStateMethod", "load_run_data", "make_method", "register_method", "resume", "start"]

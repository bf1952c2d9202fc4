"""ggp-automl: grammar-guided AutoML — the search space lives in editable BNF grammars.

``from ggp_automl import GrammarAutoML, GrammarAutoMLClassifier`` gives the two scikit-learn
estimators (multi-label and single-label); ``ggp-automl evolve …`` (or ``python cli.py evolve …`` in
the checkout) is the command line. The package is layered, each layer importing only those beneath
it (the contract in pyproject.toml, checked by ``lint-imports`` in the tests)::

    cli, commands        the command line, one module per command
    experiments          grids of runs from a TOML file, and their reports
    results              reading a run directory: inspect, predict
    search               methods, the loop, time-keeper, screening, the end of a run, the run directory
    evaluation           data, tasks, splits, measures, isolated evaluation, the engine
    spaces               the mapper: derivation tree -> scikit-learn estimator
    gp                   the grammar engine: .bnf -> Lark -> grammar model -> derivation trees
    grammars/            the shipped search spaces (data, not code)
"""
from __future__ import annotations

__all__ = ["GrammarAutoML", "GrammarAutoMLClassifier", "__version__"]
__version__ = "0.1.0"


def __getattr__(name: str):
    # the estimators import the whole stack: only when asked for, so ``import ggp_automl.gp`` stays light
    if name in ("GrammarAutoML", "GrammarAutoMLClassifier"):
        from .search import automl

        return getattr(automl, name)
    raise AttributeError(f"module 'ggp_automl' has no attribute {name!r}")

"""The Python API: grammar-guided AutoML as one scikit-learn estimator.

``GrammarAutoML(grammar="grammars/large.bnf", method="ggp", time_budget=600).fit(X, Y)``
runs the same search as ``cli.py evolve`` (same loop, engine, limits and defaults) and
keeps the refit winner, so ``predict``, ``predict_proba`` and ``score`` work as for any
classifier, and the estimator can be cloned and used in ``cross_val_score``. By
default nothing is written to disk; give ``output_dir`` to keep a full run directory
(then ``python cli.py inspect DIR`` works on it).
"""
from __future__ import annotations

import warnings

from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.utils.validation import check_is_fitted

DEFAULT_GRAMMAR = Path(__file__).resolve().parents[1] / "grammars" / "large.bnf"


class GrammarAutoML(MultiOutputMixin, ClassifierMixin, BaseEstimator):
    """Search a grammar's space of multi-label classifiers for the best one on ``(X, Y)``.

    Parameters mirror ``cli.py evolve``: ``method`` (ggp | spggp | random | beam),
    ``time_budget`` in seconds, ``eval_timeout`` the hard cap per candidate in seconds (None:
    a tenth of the budget), ``adaptive_timeout``, ``mode`` (None: async where the method has
    it; "generational"), ``screening`` (on: new candidates are fit on a third of the rows
    first), ``memory_limit`` in bytes per candidate (what it may add to its worker process's
    memory; at least 64 MB), ``n_jobs`` evaluation processes (None: every core), ``scheduler`` a
    Dask address, ``fitness`` the maximised measure, ``population`` (GGP population, 8 × species
    size for spGGP, batch size for random and beam search), ``fidelity`` a multi-fidelity
    scenario, ``max_generations`` an optional cap, ``categorical_features`` the indices of
    integer-coded nominal columns of ``X``.

    After ``fit``: ``best_model_`` (the fitted :class:`~spaces.model.MultiLabelModel`),
    ``best_phenotype_``, ``best_tree_``, ``best_validation_fitness_``, ``history_`` (one
    record per generation), ``final_`` (the run summary, as in ``final.json``),
    ``run_dir_`` (None unless ``output_dir`` was given).
    """

    def __init__(self, grammar: str | Path = DEFAULT_GRAMMAR, method: str = "ggp", time_budget: float = 600.0,
                 eval_timeout: float | None = None, adaptive_timeout: bool = True, mode: str | None = None,
                 screening: bool = True, memory_limit: int = 2 * 1024 ** 3, n_jobs: int | None = None,
                 scheduler: str | None = None, fitness: str = "fitness", population: int = 80,
                 fidelity: str = "NAS-NIS", max_generations: int | None = None, categorical_features=None,
                 random_state: int = 0, output_dir: str | Path | None = None, verbose: bool = False):
        self.grammar = grammar
        self.method = method
        self.time_budget = time_budget
        self.eval_timeout = eval_timeout
        self.adaptive_timeout = adaptive_timeout
        self.mode = mode
        self.screening = screening
        self.memory_limit = memory_limit
        self.n_jobs = n_jobs
        self.scheduler = scheduler
        self.fitness = fitness
        self.population = population
        self.fidelity = fidelity
        self.max_generations = max_generations
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.output_dir = output_dir
        self.verbose = verbose

    def _config(self):
        from gp.search.config import RunConfig

        species = {}
        if self.method == "spggp":
            if self.population % 8:
                raise ValueError(f"population for spggp must be a multiple of the 8 species, got {self.population}")
            species = {"species_size": self.population // 8}
        return RunConfig(method=self.method, budget_seconds=float(self.time_budget),
                         eval_timeout=None if self.eval_timeout is None else float(self.eval_timeout),
                         adaptive_timeout=bool(self.adaptive_timeout), mode=self.mode, screening=bool(self.screening),
                         memory_bytes=int(self.memory_limit),
                         workers=self.n_jobs, scheduler=self.scheduler, seed=int(self.random_state),
                         fitness=self.fitness, population=self.population, batch_size=self.population,
                         fidelity=self.fidelity, max_generations=self.max_generations, **species)

    def fit(self, X, Y) -> "GrammarAutoML":
        from evaluation.data import from_arrays
        from gp.search.progress import RichProgress
        from gp.search.run import RunData, describe_data, start

        config = self._config()
        train = from_arrays(X, Y, categorical_features=self.categorical_features, name="fit(X, Y)")
        data: RunData = describe_data(train, None, None, None, None, "arrays passed to fit")
        # a dataset the search cannot learn from raises DataError (a ValueError) before the search
        outcome = start(config, self.grammar, data, out=self.output_dir, write=self.output_dir is not None,
                        observers=[RichProgress()] if self.verbose else [], argv=["GrammarAutoML.fit"],
                        warn=lambda line: warnings.warn(line.removeprefix("warning: "), UserWarning, stacklevel=4))
        if outcome.model is None:
            raise RuntimeError(f"the search found no model that could be fitted ({outcome.final['status']}; "
                               f"{outcome.final.get('refit_failure') or 'every candidate failed'})")
        self.best_model_ = outcome.model
        self.best_tree_ = outcome.winner.tree
        self.best_phenotype_ = outcome.winner.phenotype
        self.best_validation_fitness_ = outcome.final["winner"]["valid_fitness"]
        self.history_ = outcome.history
        self.final_ = outcome.final
        self.run_dir_ = None if self.output_dir is None else Path(self.output_dir)
        self.n_features_in_ = train.n_features
        return self

    def predict_proba(self, X) -> np.ndarray:
        check_is_fitted(self, "best_model_")
        return self.best_model_.predict_proba(X)

    def predict(self, X) -> np.ndarray:
        check_is_fitted(self, "best_model_")
        return self.best_model_.predict(X)

    def score(self, X, Y, sample_weight=None) -> float:
        """The search's own measure (``fitness``; default Auto-MEKA's Eq. 5.1), greater is better."""
        from evaluation.metrics import get_fitness

        scores = self.predict_proba(X)
        predictions = (scores >= self.best_model_.thresholds_).astype(np.int8)
        return float(get_fitness(self.fitness)(np.asarray(Y), predictions, scores))

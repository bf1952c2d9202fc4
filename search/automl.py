"""The Python API: grammar-guided AutoML as scikit-learn estimators, one per task.

``GrammarAutoML(grammar="grammars/large.bnf", method="ggp", time_budget=600).fit(X, Y)``
searches a space of multi-label methods; ``GrammarAutoMLClassifier(grammar=
"grammars/ensembles.bnf", method="pbil").fit(X, y)`` a space of single-label classifiers
(PBIL-Auto-Ens by default). Both run the same search as ``cli.py evolve`` (same loop,
engine, limits and defaults) and keep the refit winner, so ``predict``, ``predict_proba``
and ``score`` work as for any classifier, and the estimators can be cloned and used in
``cross_val_score``. By default nothing is written to disk; give ``output_dir`` to keep a
full run directory (then ``python cli.py inspect DIR`` works on it).

A method's own parameters (PBIL's learning rate, say) go in ``method_params``: each method
declares them (:mod:`ggp_automl.search.parameters`), so a new method needs no edit here. ``plugins``
names modules of the user's own (algorithms, GGP/spGGP operators: :mod:`spaces.plugins`,
:mod:`ggp_automl.search.methods.toolbox`), ``species`` spGGP's species (numbers 1..8 and species files).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ..evaluation.data import FeatureSchema
from ..evaluation.task import MultiLabel, SingleLabel
from ..gp.shipped import SHIPPED_GRAMMARS as GRAMMARS  # noqa: E402
#: default grammars, each task's shipped one, as strings (scikit-learn's parameter checks accept plain values only)
DEFAULT_GRAMMAR = str(GRAMMARS / MultiLabel.shipped_grammar)
DEFAULT_SINGLE_LABEL_GRAMMAR = str(GRAMMARS / SingleLabel.shipped_grammar)


def _store(estimator, arguments: dict) -> None:
    """Keep every constructor argument unchanged as an attribute of its name (scikit-learn's rule)."""
    for name, value in arguments.items():
        if name not in ("self", "__class__"):
            setattr(estimator, name, value)


class _GrammarSearch(BaseEstimator):
    """What both estimators share: the run's configuration and the search itself."""

    def _config(self):
        from ggp_automl.search.config import RunConfig
        from ggp_automl.search.methods import METHODS
        from ggp_automl.spaces.plugins import load_plugins

        if self.plugins is not None:  # first: a plug-in may register the method
            if isinstance(self.plugins, (str, Path)):
                raise ValueError(f"plugins is a list of module names and .py files, got {self.plugins!r}")
            load_plugins(tuple(str(p) for p in self.plugins))
        if self.method not in METHODS:
            raise ValueError(f"unknown method {self.method!r}; known: {', '.join(sorted(METHODS))}")
        params = dict(self.method_params or {})
        sizes = {}
        if self.species is not None:
            if self.method != "spggp":
                raise ValueError(f"species go with method='spggp', not {self.method!r}")
            if isinstance(self.species, (str, Path)) or not hasattr(self.species, "__iter__"):
                raise ValueError(f"species is a list of species numbers 1..8 and species files, got {self.species!r}")
            # numpy integers as ints, paths as strings: RunConfig checks the rest
            params["species"] = tuple(int(s) if isinstance(s, np.integer) else s for s in self.species)
        if self.population is not None:
            if any(p.name == "population" for p in METHODS[self.method].parameters):
                params.setdefault("population", int(self.population))
            sizes.update(population=int(self.population), batch_size=int(self.population))
            if self.method == "spggp":
                k = len(params.get("species", METHODS["spggp"].declared("species").default))
                if self.population % k:
                    raise ValueError(f"population for spggp must be a multiple of the {k} species, "
                                     f"got {self.population}")
                params["species_size"] = self.population // k
        if self.plugins is not None:
            sizes["plugins"] = tuple(str(p) for p in self.plugins)
        return RunConfig(method=self.method, budget_seconds=float(self.time_budget),
                         eval_timeout=None if self.eval_timeout is None else float(self.eval_timeout),
                         adaptive_timeout=bool(self.adaptive_timeout), mode=self.mode, screening=bool(self.screening),
                         memory_bytes=int(self.memory_limit), workers=self.n_jobs, scheduler=self.scheduler,
                         seed=int(self.random_state), fitness=self.fitness, cv=self.cv, fidelity=self.fidelity,
                         max_generations=self.max_generations, method_params=params, ensemble=self.ensemble,
                         warm_start=str(self.warm_start_from), **sizes)

    def _search(self, train):
        from ggp_automl.search.progress import RichProgress
        from ggp_automl.search.run import start
        from ggp_automl.search.run_data import describe_data

        config = self._config()
        data = describe_data(train, None, None, None, None, "arrays passed to fit")
        # a dataset the search cannot learn from raises DataError (a ValueError) before the search
        outcome = start(config, self.grammar, data, out=self.output_dir, write=self.output_dir is not None,
                        observers=[RichProgress()] if self.verbose else [], argv=[f"{type(self).__name__}.fit"],
                        warn=lambda line: warnings.warn(line.removeprefix("warning: "), UserWarning, stacklevel=5))
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
        self.feature_schema_ = FeatureSchema.of(train)
        return self

    def _new_rows(self, X) -> np.ndarray:
        """New rows as the float matrix the model was fitted on: a DataFrame's columns by name (reordered
        to the training order; other names are refused, naming the missing and unexpected ones) when
        ``fit`` saw names, else by position; category values coded as in training
        (:meth:`FeatureSchema.align_arrays`). A DataError is a ValueError, as scikit-learn raises."""
        check_is_fitted(self, "best_model_")
        if getattr(self, "feature_names_in_", None) is None and hasattr(X, "columns"):
            X = X.to_numpy()  # fitted without names: by position, as scikit-learn does
        return self.feature_schema_.align_arrays(X, "X", "the data given to fit")


_PARAMETERS_DOC = """
    Parameters mirror ``cli.py evolve``: ``method`` (ggp | spggp | random | beam | pbil | bo | tpe | ga | any
    registered method), ``time_budget`` in seconds, ``eval_timeout`` the hard cap per candidate in
    seconds (None: a tenth of the budget), ``adaptive_timeout``, ``mode`` (None: async where the
    method has it; "generational"), ``screening`` (on: new candidates are fit on a third of the rows
    first), ``memory_limit`` in bytes per candidate (what it may add to its worker process's memory;
    at least 64 MB), ``n_jobs`` evaluation processes (None: every core), ``scheduler`` a Dask
    address, ``fitness`` the maximised measure (None: the task's), ``cv`` internal cross-validation
    folds per candidate (0: hold-out; None: the task's default), ``population`` (GGP population,
    species × species size for spGGP, batch size for random and beam search, PBIL's generation; None:
    the method's default), ``method_params`` the method's own parameters (a dict: see
    ``python cli.py evolve --help``), ``fidelity`` a multi-fidelity scenario, ``max_generations`` an
    optional cap, ``categorical_features`` the indices of integer-coded nominal columns of ``X``,
    ``ensemble`` "caruana" or "caruana:SIZE" to return an ensemble of the evaluated candidates
    (None: the single best), ``species`` spGGP's species (None: the eight generated ones; a list of
    numbers 1..8 and species grammar files, search/README.md "Writing a species"; the population
    is split evenly between them), ``plugins`` modules of your own imported before the run and in
    every worker (a module name or a .py file each: algorithms, spaces/README.md; GGP and spGGP
    operators, search/README.md "Swapping operators"), ``warm_start_from`` the candidates evaluated first
    (``evolve --warm-start``): "portfolio" (the portfolio that ships beside the grammar, if any), a portfolio
    file of the same grammar, or "none" (named apart from scikit-learn's ``warm_start``, which means reusing
    an earlier ``fit``; nothing of an earlier ``fit`` is reused here).

    After ``fit``: ``best_model_`` (the fitted model: the ensemble when one was built),
    ``best_phenotype_``, ``best_tree_``, ``best_validation_fitness_``, ``history_`` (one record per
    generation), ``final_`` (the run summary, as in ``final.json``), ``run_dir_`` (None unless
    ``output_dir`` was given).
"""


class GrammarAutoML(MultiOutputMixin, ClassifierMixin, _GrammarSearch):
    __doc__ = "Search a grammar's space of multi-label classifiers for the best one on ``(X, Y)``.\n" + _PARAMETERS_DOC

    def __init__(self, grammar: str | Path = DEFAULT_GRAMMAR, method: str = "ggp", time_budget: float = 600.0,
                 eval_timeout: float | None = None, adaptive_timeout: bool = True, mode: str | None = None,
                 screening: bool = True, memory_limit: int = 2 * 1024 ** 3, n_jobs: int | None = None,
                 scheduler: str | None = None, fitness: str | None = None, cv: int | None = None,
                 population: int | None = None, method_params: dict | None = None, fidelity: str = "NAS-NIS",
                 max_generations: int | None = None, categorical_features=None, random_state: int = 0,
                 output_dir: str | Path | None = None, verbose: bool = False, ensemble: str | None = None,
                 species=None, plugins=None,
                 warm_start_from: str = "portfolio"):
        _store(self, locals())

    def fit(self, X, Y) -> "GrammarAutoML":
        from ggp_automl.evaluation.data import from_arrays

        train = from_arrays(X, Y, categorical_features=self.categorical_features, name="fit(X, Y)")
        named = hasattr(X, "columns") and all(isinstance(c, str) for c in X.columns)
        self._search(train)
        if named:
            self.feature_names_in_ = np.asarray(train.feature_names, dtype=object)
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        return self

    def predict_proba(self, X) -> np.ndarray:
        return self.best_model_.predict_proba(self._new_rows(X))

    def predict(self, X) -> np.ndarray:
        return self.best_model_.predict(self._new_rows(X))

    def score(self, X, Y, sample_weight=None) -> float:
        """The search's own measure (default Auto-MEKA's Eq. 5.1 fitness), greater is better."""
        check_is_fitted(self, "best_model_")
        task = MultiLabel()
        predictions, scores = task.outputs(self.best_model_, self._new_rows(X))
        measures = task.measures(np.asarray(Y), predictions, scores)
        return float(measures[self.final_.get("fitness") or task.default_fitness])


class GrammarAutoMLClassifier(ClassifierMixin, _GrammarSearch):
    __doc__ = ("Search a grammar's space of single-label classifiers (default: PBIL over the PBIL-Auto-Ens "
               "ensemble space) for the best one on ``(X, y)``; ``y`` holds any class labels.\n" + _PARAMETERS_DOC)

    def __init__(self, grammar: str | Path = DEFAULT_SINGLE_LABEL_GRAMMAR, method: str = "pbil",
                 time_budget: float = 600.0, eval_timeout: float | None = None, adaptive_timeout: bool = True,
                 mode: str | None = None, screening: bool = True, memory_limit: int = 2 * 1024 ** 3,
                 n_jobs: int | None = None, scheduler: str | None = None, fitness: str | None = None,
                 cv: int | None = None, population: int | None = None, method_params: dict | None = None,
                 fidelity: str = "NAS-NIS", max_generations: int | None = None, categorical_features=None,
                 random_state: int = 0, output_dir: str | Path | None = None, verbose: bool = False,
                 ensemble: str | None = None, species=None, plugins=None,
                 warm_start_from: str = "portfolio"):
        _store(self, locals())

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # missing values are imputed inside every model
        return tags

    def fit(self, X, y) -> "GrammarAutoMLClassifier":
        from ggp_automl.evaluation.data import from_arrays

        X, y = validate_data(self, X, y, ensure_all_finite="allow-nan", ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_, codes = np.unique(y, return_inverse=True)
        train = from_arrays(X, codes, categorical_features=self.categorical_features, name="fit(X, y)",
                            classes=[str(c) for c in self.classes_])
        return self._search(train)

    def _outputs(self, X):
        check_is_fitted(self, "best_model_")
        names = getattr(self, "feature_names_in_", None)
        if names is not None and hasattr(X, "columns") and set(map(str, X.columns)) == set(names):
            X = X[list(names)]  # the training columns in another order: matched by name
        X = validate_data(self, X, reset=False, ensure_all_finite="allow-nan")
        return SingleLabel(tuple(str(c) for c in self.classes_)).outputs(self.best_model_, X)

    def predict_proba(self, X) -> np.ndarray:
        """(n, len(classes_)) class probabilities, columns in the order of ``classes_``."""
        return self._outputs(X)[1]

    def predict(self, X) -> np.ndarray:
        predictions = self._outputs(X)[0]
        return self.classes_[predictions]

"""What the ensemble-aware search methods share: a surrogate over the grammar's flat space that they
ask for configurations themselves, and the validation predictions of what they evaluated.

Why not SMAC's facade, as ``--method bo`` uses: ensemble optimisation relabels every observation at
every iteration (the loss of the current ensemble with it added; 001 Algorithm 4.1) and DivBO ranks
candidates by expected improvement *and* predicted diversity (002 Eq. 5); SMAC's run history holds
one fixed cost per configuration and its selector returns one configuration. So these methods use
SMAC's parts directly — the random forest or the conditional-kernel GP of :mod:`ggp_automl.search.methods.surrogates`,
EI, the local search of the acquisition — on the same flat space (:mod:`gp.flatten`) and decode every
configuration into a derivation tree like BO does.

The loop keeps every search evaluation's validation scores for them (``uses_predictions``;
:mod:`evaluation.predictions`) and hands them the store (:meth:`use_predictions`). Their *pool* is
every evaluated candidate with scores on the store's latest view. Observations are plain picklable
state (configuration values, phenotype, fitness); the store re-reads its own file on resume.
"""
from __future__ import annotations

import warnings
from abc import abstractmethod
from typing import ClassVar

import numpy as np

from ggp_automl.evaluation.selection import EnsembleObjective
from ggp_automl.evaluation.task import task_of

from .flat_method import FlatSpaceMethod
from ..individual import Individual
from .base import by_rank
from ..parameters import Parameter

#: the acquisition's local search (as BO's: ggp_automl.search.methods.bo)
LOCAL_SEARCHES, LOCAL_SEARCH_STEPS, LOCAL_SEARCH_PLATEAU = 5, 10, 2

SURROGATE = Parameter("surrogate", str, "rf", "the surrogate model: rf (SMAC's random forest) or gp (Gaussian process "
                      "with the conditional kernel of the BO thesis)", choices=("rf", "gp"))
INITIAL = Parameter("initial", int, 10, "random configurations before the first surrogate, besides the grammar's "
                    "default configuration", low=1, high=10_000)
CHALLENGERS = Parameter("challengers", int, 1000, "random configurations scored by the acquisition per ask, "
                        "besides the local search from the best ones", low=10, high=100_000)
POPULATION = Parameter("population", int, 10, "evaluations per generation record", low=1, high=100_000)


class PredictionSearch(FlatSpaceMethod):
    """A model-based method that sees the validation predictions of what it evaluated."""

    uses_predictions: ClassVar[bool] = True
    #: a fresh surrogate and an acquisition search per ask (DivBO: LightGBM models too): asked ahead in async
    ask_is_costly: ClassVar[bool] = True
    parameters: ClassVar = (SURROGATE, INITIAL, CHALLENGERS, POPULATION)

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.seed: int | None = None
        #: every told evaluation: (configuration values, phenotype, fitness or None when it failed)
        self.observations: list[tuple[dict, str, float | None]] = []
        #: configurations asked and not told yet, by phenotype
        self.pending: dict[str, list[dict]] = {}
        self.asked = 0
        self.predictions = None
        self._votes: dict[str, np.ndarray] = {}
        self._objective = None
        self._objective_view = None

    def use_predictions(self, store) -> None:
        """The loop's prediction store (at start and after a resume)."""
        self.predictions = store
        self._votes, self._objective = {}, None

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.update(predictions=None, _votes={}, _objective=None, _objective_view=None)
        return state

    # -- the pool ----------------------------------------------------------------------------------
    @property
    def view(self) -> str | None:
        return None if self.predictions is None else self.predictions.latest_view

    def objective(self) -> EnsembleObjective | None:
        """The run's fitness of scores on the view's rows (its task read off the view's targets)."""
        view = self.view
        if view is None:
            return None
        if self._objective is None or self._objective_view != view:
            Y = self.predictions.targets(view)
            self._objective = EnsembleObjective(task_of(Y), Y, self.config.fitness)
            self._objective_view = view
            self._votes = {}
        return self._objective

    def scores(self, phenotype: str) -> np.ndarray | None:
        view = self.view
        return None if view is None else self.predictions.get(view, phenotype)

    def votes(self, phenotype: str) -> np.ndarray | None:
        """A pool member's predictions on the view as votes (multi-label: its 0/1 cells with the cut
        re-chosen on its own scores; single-label: its class of highest probability)."""
        if phenotype not in self._votes:
            scores, objective = self.scores(phenotype), self.objective()
            if scores is None or objective is None:
                return None
            self._votes[phenotype] = np.asarray(objective.decide(scores)[0]).ravel().astype(np.int64)
        return self._votes[phenotype]

    def pool(self) -> list[str]:
        """Evaluated phenotypes with predictions on the latest view, in the order first evaluated."""
        seen, out = set(), []
        for _, ph, fit in self.observations:
            if fit is not None and ph not in seen and self.scores(ph) is not None:
                seen.add(ph)
                out.append(ph)
        return out

    def fitness_of(self, phenotype: str) -> float:
        return max((f for _, ph, f in self.observations if ph == phenotype and f is not None), default=0.0)

    def values_of(self, phenotype: str) -> dict:
        return next(v for v, ph, _ in reversed(self.observations) if ph == phenotype)

    # -- the surrogate -----------------------------------------------------------------------------
    def surrogate(self, values: list[dict], labels: np.ndarray):
        """``(model, acquisition)``: a fresh model fit on (configurations, labels to minimise) and EI on it."""
        from smac.acquisition.function import EI

        from .surrogates import ConditionalGP, GrammarForest

        cls = ConditionalGP if self.params["surrogate"] == "gp" else GrammarForest
        model = cls(self.flat.space, seed=self.seed)
        model.train(self.array(values), np.asarray(labels, dtype=float).reshape(-1, 1))
        acquisition = EI(xi=0.0, log=False)
        acquisition.update(model=model, eta=float(np.min(labels)), num_data=len(labels))
        return model, acquisition

    def array(self, values: list[dict]) -> np.ndarray:
        from ConfigSpace import Configuration
        from smac.utils.configspace import convert_configurations_to_array

        return convert_configurations_to_array([Configuration(self.flat.space, values=v) for v in values])

    def candidates(self, acquisition, previous: list[dict], rng: np.random.Generator) -> tuple[list, np.ndarray]:
        """``(configurations, EI)``: ``challengers`` random configurations plus SMAC's local search from the
        best of them and of ``previous``, best EI first."""
        from ConfigSpace import Configuration
        from smac.acquisition.maximizer import LocalAndSortedRandomSearch

        from .bo import _vector_equality

        _vector_equality()
        space, seed = self.flat.space, int(rng.integers(0, 2**31 - 1))
        maximizer = LocalAndSortedRandomSearch(space, acquisition_function=acquisition,
                                               challengers=self.params["challengers"], max_steps=LOCAL_SEARCH_STEPS,
                                               n_steps_plateau_walk=LOCAL_SEARCH_PLATEAU,
                                               local_search_iterations=LOCAL_SEARCHES, seed=seed)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", category=RuntimeWarning)
            local = [c for _, c in maximizer._maximize([Configuration(space, values=v) for v in previous],
                                                      self.params["challengers"])]
        space.seed(seed)
        configs = list(dict.fromkeys(local + list(space.sample_configuration(self.params["challengers"]))))
        ei = np.ravel(acquisition(configs))
        order = np.argsort(-ei, kind="stable")
        return [configs[i] for i in order], ei[order]

    # -- ask / tell ---------------------------------------------------------------------------------
    @property
    def initial_size(self) -> int:
        """Configurations of the initial design: the warm start's members (which take the place of as many
        random ones), the grammar's default, and ``initial`` random ones."""
        return len(self.warm) + 1 + max(self.params["initial"] - len(self.warm), 0)

    def initial_values(self) -> dict:
        """The initial design: the warm start's members, the grammar's default configuration, then weighted
        random ones (the members stay in ``warm``: the design is indexed by the number asked)."""
        space = self.flat.space
        if self.asked < len(self.warm):
            return dict(self.flat.encode(self.warm[self.asked]))
        if self.asked == len(self.warm):
            return dict(space.get_default_configuration())
        space.seed(self.seed + self.asked)
        return dict(space.sample_configuration())

    @abstractmethod
    def propose(self, rng: np.random.Generator) -> dict:
        """The next configuration once the initial design is done."""

    def ask_one(self, rng: np.random.Generator) -> Individual:
        if self.seed is None:
            self.seed = int(rng.integers(0, 2**31 - 1))
        if self.asked < self.initial_size or len(self.pool()) < 2:
            values = self.initial_values()
        else:
            values = self.propose(rng)
        self.asked += 1
        tree = self.flat.decode(values, self.config.max_depth)
        self.pending.setdefault(tree.phenotype, []).append(values)
        return Individual(tree)

    def tell_one(self, evaluated: Individual) -> None:
        from ggp_automl.gp.flatten import take_pending

        values = take_pending(self.pending, evaluated.tree, self.flat)
        ok = evaluated.fitness.valid and self.scores(evaluated.phenotype) is not None
        self.observations.append((values, evaluated.phenotype, evaluated.score if ok else None))
        self.told(evaluated.phenotype, ok)

    def told(self, phenotype: str, ok: bool) -> None:
        """After an observation is recorded (EO refills its slot here)."""

    def new_view(self):
        """The pool follows the store's latest view by itself."""
        self._objective = None

    def archive(self) -> list[Individual]:
        best: dict[str, float] = {}
        for _, ph, fit in self.observations:
            if fit is not None:
                best[ph] = max(fit, best.get(ph, 0.0))
        ranked = sorted(best.items(), key=lambda kv: -kv[1])[: self.config.archive_size]
        return by_rank([Individual(self.flat.decode(self.values_of(ph), self.config.max_depth), fitness=f)
                        for ph, f in ranked])

    def stats(self) -> dict:
        out = super().stats()
        out["method"] = {"observations": len(self.observations), "pool": len(self.pool())}
        return out

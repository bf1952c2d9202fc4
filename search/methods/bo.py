"""Bayesian optimisation over the grammar with SMAC3 (Auto-MEKA_BO, thesis §2.2, §5.3.2; notes methods.md §1.5).

Why SMAC3 and a flat space: Auto-MEKA_BO *is* SMAC (random-forest surrogate, expected
improvement, every second configuration drawn at random, one default configuration to start).
SMAC searches a conditional configuration space, so the bound grammar is unrolled into one
(:mod:`gp.flatten`: a categorical per choice site, numbers with their ranges and log flags,
conditions from the derivation), and every configuration SMAC asks for is decoded into a
derivation tree through the sampling-policy seam. The tree is evaluated like every other method's:
the mapper, the cache, the limits, the run directory are the ones all methods use, and the user
keeps editing one ``.bnf`` file.

* **ask/tell, all workers busy.** The method is steady-state: each free worker gets
  ``smac.ask()``; each result is ``smac.tell(...)`` as it arrives (cost = 1 − fitness; a failed
  candidate scores 0, cost 1, as in the thesis). The surrogate is refit after every tell
  (``retrain_after=1``), the acquisition maximised by SMAC's local search plus random challengers.
  The ask is costly (``ask_is_costly``): the asynchronous driver makes it ahead, in a background thread
  while the workers evaluate, from the tells known once the previous candidate was handed out.
* **Initial design:** the grammar's default configuration (each choice's ``#@ default``; the thesis
  starts from one default configuration per space) plus ``initial`` random configurations.
  **Interleaving:** every ``random_every``-th configuration is random (SMAC's ``ModulusRandomDesign``;
  the thesis: every second).
* **Surrogates** (``--surrogate``): ``rf``, SMAC's random forest (the thesis), or ``gp``, the BO
  thesis's Gaussian process with the conditional kernel (:mod:`ggp_automl.search.methods.surrogates`, 001 Eq. 5.9).
  **What the surrogate sees** is capped (``surrogate_cap``): past the cap, the best half and the
  most recent half of the observations, so the cost of an ask stays below an evaluation's
  (measured in ``benchmarks/bench_surrogate.py``).
* **Remedies for overfitting the validation data** (001 Ch. 3): ``--reshuffle`` draws a fresh
  learning/validation split for every generation (``population`` evaluations; the surrogate keeps its
  history and treats split noise as observation noise), and ``--final-choice posterior-mean``
  orders the final candidates by the surrogate's mean over the evaluated configurations instead of
  their observed fitness (the loop still re-evaluates them on a fresh split, but keeps this order).
* **Checkpoint and resume.** SMAC objects hold loggers and file handles, so the checkpoint keeps
  what they learned as plain state: every observation (configuration values, cost) and the
  configurations in flight. On resume a new SMAC is built from the same seed and told every
  observation again (its run history), so a resumed run loses no finished evaluation; the
  surrogate is then the same model of the same data, but SMAC's own random stream restarts, so
  the configurations asked after a resume differ from an uninterrupted run's.
"""
from __future__ import annotations

import logging
import tempfile
import warnings
from typing import ClassVar

import numpy as np

from .flat_method import FlatSpaceMethod
from ..individual import Individual
from .base import by_rank
from .registry import register_method
from ..parameters import RESHUFFLE, Parameter

#: the thesis's failed-candidate fitness: cost 1
FAILED_COST = 1.0
#: SMAC's local search of the acquisition (001 §4.5 leaves step sizes and restarts open): starts from
#: the best configurations, steps per start, steps on a plateau. SMAC's defaults (10, unbounded, 10)
#: cost seconds per ask in the Large space's ~1,900 dimensions; these keep an ask cheaper than an
#: evaluation (benchmarks/bench_surrogate.py).
LOCAL_SEARCHES = 5
LOCAL_SEARCH_STEPS = 10
LOCAL_SEARCH_PLATEAU = 2


def _vector_equality() -> None:
    """Make ``ConfigSpace.Configuration`` compare and hash by its vector (once per process).

    ConfigSpace compares two configurations key by key over the whole space and then compares the
    two spaces hyper-parameter by hyper-parameter; SMAC's intensifier and run history test list
    membership with it, so an ask costs O(observations × hyper-parameters) Python steps: a second
    per ask at 40 observations in the Large space's ~1,900 hyper-parameters, a minute at 300. Two
    configurations of one space are equal exactly when their vectors are (the values are a
    function of the vector), so this is the same relation, in microseconds.
    """
    from ConfigSpace import Configuration

    if getattr(Configuration, "_ggp_vector_equality", False):
        return

    def __eq__(self, other):
        if not isinstance(other, Configuration):
            return NotImplemented
        if self.config_space is not other.config_space and self.config_space != other.config_space:
            return False
        return bool(np.array_equal(self._vector, other._vector, equal_nan=True))

    def __hash__(self):
        v = np.where(np.isnan(self._vector), -1.0, self._vector) + 0.0  # one NaN, no -0.0
        return hash(v.tobytes())

    Configuration.__eq__, Configuration.__hash__ = __eq__, __hash__
    Configuration._ggp_vector_equality = True


def _dummy_target(config, seed: int = 0) -> float:  # SMAC wants one; ask/tell never calls it
    raise RuntimeError("the search loop evaluates candidates, not SMAC")


@register_method
class BO(FlatSpaceMethod):
    name = "bo"
    #: SMAC's ask refits the surrogate and searches the acquisition: asked ahead in the asynchronous mode
    ask_is_costly = True
    parameters: ClassVar = (
        Parameter("surrogate", str, "rf", "BO: the surrogate model: rf (SMAC's random forest, the thesis) or gp "
                  "(Gaussian process with the conditional kernel of the BO thesis)", choices=("rf", "gp")),
        Parameter("initial", int, 10, "BO: random configurations in the initial design, besides the grammar's "
                  "default configuration", low=0, high=10_000),
        Parameter("random_every", int, 2, "BO: every N-th configuration is drawn at random (thesis: every second; "
                  "0: never)", low=0, high=1_000_000),
        Parameter("challengers", int, 1000, "BO: random configurations scored by the acquisition per ask, besides "
                  "SMAC's local search from the best ones", low=10, high=100_000),
        Parameter("surrogate_cap", int, 1000, "BO: observations the surrogate is fitted on at most (the best half "
                  "and the most recent half past the cap)", low=10, high=1_000_000),
        Parameter("final_choice", str, "best", "BO: order of the final candidates: best (observed fitness) or "
                  "posterior-mean (the surrogate's mean, the BO thesis's remedy)", choices=("best", "posterior-mean")),
        Parameter("population", int, 10, "BO: evaluations per generation record (and per split with --reshuffle)",
                  low=1, high=100_000),
        RESHUFFLE,
    )

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.seed: int | None = None
        #: the seed SMAC's intensifier gives its trials (one: the scenario is deterministic)
        self.trial_seed: int | None = None
        #: every told evaluation: (configuration values, cost, phenotype, fitness level)
        self.observations: list[tuple[dict, float, str]] = []
        #: configurations asked and not told yet, by phenotype
        self.pending: dict[str, list[dict]] = {}
        #: the last screening-rung cost of candidates without a full-fidelity result yet, by phenotype
        self.provisional: dict[str, tuple[dict, float]] = {}
        self._smac = None
        self._tmp = None

    @property
    def keeps_final_order(self) -> bool:
        return self.params["final_choice"] == "posterior-mean"

    def attach(self, grammar, meta):
        super().attach(grammar, meta)
        self._smac = None  # built at the first ask (it needs the seed drawn from the run's Generator)
        return self

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state.update(_smac=None, _tmp=None)
        return state

    # -- SMAC --------------------------------------------------------------------------------------
    def _facade(self):
        """SMAC, built at the first ask (its seed comes from the run's Generator) or after a resume."""
        if self._smac is None:
            _vector_equality()
            with warnings.catch_warnings():  # SMAC's meta data calls a deprecated ConfigSpace method
                warnings.filterwarnings("ignore", category=DeprecationWarning)
                self._smac = self._build()
            for values, cost in list(self.provisional.values()) + [o[:2] for o in self.observations]:
                self._tell(values, cost)  # a resumed run: SMAC's run history again
        return self._smac

    def _build(self):
        from smac import HyperparameterOptimizationFacade as HPO
        from smac import Scenario
        from smac.acquisition.function import EI
        from smac.acquisition.maximizer import LocalAndSortedRandomSearch
        from smac.initial_design import RandomInitialDesign
        from smac.random_design import ModulusRandomDesign, ProbabilityRandomDesign
        from smac.runhistory.encoder import RunHistoryEncoder

        from .surrogates import BatchedConfigSelector, ConditionalGP, GrammarForest

        p, space = self.params, self.flat.space
        self._tmp = tempfile.TemporaryDirectory(prefix="ggp-smac-")  # SMAC wants a directory; nothing is saved
        scenario = Scenario(space, output_directory=self._tmp.name, deterministic=True, n_trials=2**31 - 1,
                            seed=self.seed)
        # The initial design is drawn here, from the grammar's weights (every algorithm as likely as in
        # a random derivation): SMAC's RandomInitialDesign would sample a uniform copy of the space,
        # whose construction alone takes a minute with the Large space's 1,917 conditions
        # The warm start's members come first and take the place of as many random configurations (the
        # portfolio is the initial design, auto-sklearn 2.0); they stay in self.warm, so a resumed run
        # rebuilds the same design and SMAC skips what its run history already holds
        space.seed(self.seed)
        first = list(dict.fromkeys([self.flat.configuration(t) for t in self.warm]
                                   + [space.get_default_configuration()]))
        random = max(p["initial"] - len(self.warm), 0)
        if random:
            first += list(space.sample_configuration(max(random, 2)))[:random]
        surrogate = ConditionalGP if p["surrogate"] == "gp" else GrammarForest
        return HPO(
            scenario, _dummy_target,
            model=surrogate(space, seed=self.seed, max_observations=p["surrogate_cap"]),
            initial_design=RandomInitialDesign(scenario, n_configs=0, additional_configs=first),
            random_design=(ModulusRandomDesign(modulus=p["random_every"], seed=self.seed) if p["random_every"]
                           else ProbabilityRandomDesign(0.0, seed=self.seed)),
            # costs are 1 - fitness, in [0, 1]: SMAC's log scaling (made for run times and losses over
            # decades) would stretch the best costs towards -inf and steer EI away from them
            acquisition_function=EI(xi=0.0, log=False), runhistory_encoder=RunHistoryEncoder(scenario),
            acquisition_maximizer=LocalAndSortedRandomSearch(
                space, challengers=p["challengers"], max_steps=LOCAL_SEARCH_STEPS,
                n_steps_plateau_walk=LOCAL_SEARCH_PLATEAU, local_search_iterations=LOCAL_SEARCHES, seed=self.seed),
            intensifier=HPO.get_intensifier(scenario, max_config_calls=1),
            config_selector=BatchedConfigSelector(scenario, retrain_after=1),
            overwrite=True, logging_level=logging.ERROR)

    def _tell(self, values: dict, cost: float) -> None:
        from ConfigSpace import Configuration
        from smac.runhistory import TrialInfo, TrialValue

        info = TrialInfo(config=Configuration(self.flat.space, values=values), seed=self.trial_seed)
        self._smac.tell(info, TrialValue(cost=cost), save=False)

    # -- ask / tell --------------------------------------------------------------------------------
    def ask_one(self, rng: np.random.Generator) -> Individual:
        if self.seed is None:
            self.seed = int(rng.integers(0, 2**31 - 1))
        with warnings.catch_warnings():  # SMAC's local search logs the mean of an empty list of step times
            warnings.filterwarnings("ignore", "Mean of empty slice", RuntimeWarning)
            warnings.filterwarnings("ignore", "invalid value encountered", RuntimeWarning)
            info = self._facade().ask()
        self.trial_seed = info.seed
        values = dict(info.config)
        tree = self.flat.decode(values, self.config.max_depth)
        self.pending.setdefault(tree.phenotype, []).append(values)
        return Individual(tree)

    def tell_one(self, evaluated: Individual) -> None:
        from ggp_automl.gp.flatten import take_pending

        values = take_pending(self.pending, evaluated.tree, self.flat)
        cost = 1.0 - evaluated.score if evaluated.fitness.valid else FAILED_COST
        self.observations.append((values, cost, evaluated.phenotype))
        self.provisional.pop(evaluated.phenotype, None)
        self._facade()
        self._tell(values, cost)

    def tell_screened(self, evaluated: Individual) -> None:
        """A screening rung's fitness is SMAC's provisional cost of the configuration (screened out,
        it stays; promoted, the full result overwrites it: SMAC's tell replaces a trial's cost). Without
        this the surrogate would learn from the promoted candidates only."""
        from ggp_automl.gp.flatten import take_pending

        values = take_pending(self.pending, evaluated.tree, self.flat, keep=True)
        cost = 1.0 - evaluated.score  # a failure scores 0: FAILED_COST
        self.provisional[evaluated.phenotype] = (values, cost)
        self._facade()
        self._tell(values, cost)

    def new_view(self):
        """Nothing to forget: with ``--reshuffle`` split noise is observation noise (001 §3.1)."""

    # -- the final choice ---------------------------------------------------------------------------
    def _best_observations(self) -> list[tuple[str, float]]:
        best: dict[str, float] = {}
        for _, cost, ph in self.observations:
            best[ph] = min(cost, best.get(ph, FAILED_COST))
        return sorted(best.items(), key=lambda kv: kv[1])

    def posterior_means(self) -> dict[str, float]:
        """The surrogate's mean cost of every evaluated configuration, by phenotype (its last configuration)."""
        if not self.observations:
            return {}
        from ConfigSpace import Configuration
        from smac.utils.configspace import convert_configurations_to_array

        smac = self._facade()
        selector = smac.intensifier.config_selector
        x, y = selector._runhistory_encoder.transform()
        model = selector._model
        model.train(x, y)
        last = {ph: values for values, _, ph in self.observations}
        configs = [Configuration(self.flat.space, values=v) for v in last.values()]
        mean, _ = model.predict_marginalized(convert_configurations_to_array(configs))
        return dict(zip(last, (float(m) for m in np.ravel(mean))))

    def archive(self) -> list[Individual]:
        ranked = self._best_observations()
        last = {ph: values for values, _, ph in self.observations}  # each phenotype's configuration
        if self.params["final_choice"] == "posterior-mean":
            means = self.posterior_means()
            ranked.sort(key=lambda kv: means.get(kv[0], np.inf))
        out = []
        for ph, cost in ranked[: self.config.archive_size]:
            out.append(Individual(self.flat.decode(last[ph], self.config.max_depth), fitness=1.0 - cost))
        return out if self.keeps_final_order else by_rank(out)

    def stats(self) -> dict:
        out = super().stats()
        out["method"] = {"observations": len(self.observations)}
        return out

    def report(self) -> dict | None:
        if not self.observations:
            return None
        rows = [[ph, f"{1.0 - cost:.4f}"] for ph, cost in self._best_observations()[:5]]
        return {"title": f"BO ({self.params['surrogate']} surrogate): {len(self.observations)} observations, "
                         f"{len(self.flat.space)} hyper-parameters in the flat space",
                "columns": ["configuration", "fitness"], "rows": rows}

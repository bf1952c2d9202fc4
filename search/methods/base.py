"""The one seam between the search loop and a search method: ask / tell.

The loop (:mod:`ggp_automl.search.loop`) is the same for every method. It asks the method
for a batch of individuals, evaluates them (cache, workers, limits, deadline — none
of which a method sees), tells the method their fitness, logs, checkpoints, and at
the end re-evaluates the method's :meth:`~SearchMethod.archive` on a fresh split.
Methods differ only in how they propose candidates:

* GGP and speciated GGP breed the told population with tournament selection and
  Whigham crossover and mutation (:mod:`ggp_automl.search.methods.ggp`, :mod:`ggp_automl.search.methods.spggp`), taken
  from a DEAP toolbox a user may re-register (:mod:`ggp_automl.search.methods.toolbox`);
* random search samples fresh derivations (:mod:`ggp_automl.search.methods.sampling`);
* beam search mutates the incumbent (:mod:`ggp_automl.search.methods.beam`).

Every new tree comes from a :class:`~gp.generate.TreeGenerator` driven by the
method's :class:`~gp.policy.SamplingPolicy`. A *learning* policy — PBIL's
probability vectors, a Bayesian-optimisation acquisition, a real-coded GA's genome
— is added by implementing :class:`~gp.policy.SamplingPolicy` (its ``update`` hook
receives every told batch) and registering a method that samples with it, as
random search does with the uniform policy: the loop, the evaluation engine and the
CLI do not change. Everything a method keeps between generations (populations,
counters, the policy's state) is plain picklable state, so the loop's checkpoint
is ``pickle(method)``; the grammar-derived generators are re-attached on resume.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

import numpy as np

from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.policy import SamplingPolicy, UniformPolicy

from ..config import RunConfig
from ..individual import Individual
from ..parameters import Parameter, resolve_params
from ..variation import Variation

class SearchMethod(ABC):
    #: the --method name
    name: ClassVar[str]
    #: whether the loop redraws the learning/validation split every ``resample_every`` generations (a
    #: parameter the method declares) for this method (the thesis resamples for GGP, spGGP and the GA)
    resamples: ClassVar[bool] = False
    #: the method's own parameters (ggp_automl.search.parameters): CLI options, config.json, the Python API
    parameters: ClassVar[tuple[Parameter, ...]] = ()
    #: the ``--ensemble`` a run of the method makes unless told otherwise (DivBO ends with selection)
    default_ensemble: ClassVar[str | None] = None
    #: whether the loop keeps every search evaluation's validation scores for the method
    #: (``loop.predictions``, :mod:`evaluation.predictions`): ensemble-aware methods learn from them
    uses_predictions: ClassVar[bool] = False
    #: the warm start's trees not handed out yet (a portfolio's members in order, :mod:`..portfolio`): set once
    #: when the run starts (:meth:`warm_start`), checkpointed with the method, so a resumed run goes on where
    #: it was; a checkpoint of a method from before warm starts has the empty default
    warm: list = ()

    def __init__(self, config: RunConfig, policy: SamplingPolicy | None = None):
        self.config = config
        self.policy = policy or UniformPolicy()
        self.variation: Variation | None = None

    @property
    def resample_period(self) -> int:
        """Generations between two redraws of the learning/validation split; 0: never.

        The thesis's methods that resample (GGP, spGGP, GA) redraw every
        ``resample_every`` generations (their declared parameter); a method that declares the ``reshuffle``
        parameter (:data:`ggp_automl.search.parameters.RESHUFFLE`) redraws for every generation
        (batch of evaluations) when it is on: the BO thesis's remedy (001 §3.1)."""
        params = self.params
        if params.get("reshuffle"):
            return 1
        return params.get("resample_every", 0) if self.resamples else 0

    @classmethod
    def declared(cls, name: str) -> Parameter:
        """The declared parameter ``name`` (KeyError when the method has none of that name)."""
        for p in cls.parameters:
            if p.name == name:
                return p
        raise KeyError(f"{cls.name} has no parameter {name!r}")

    @classmethod
    def problems_with(cls, config, params: dict) -> list[str]:
        """What is wrong with these parameters together, or with the run's settings (beyond each parameter's
        own range, which :mod:`..parameters` checks); RunConfig reports them."""
        return []

    @property
    def params(self) -> dict:
        """This run's values of :attr:`parameters` (declared defaults filled in)."""
        return resolve_params(self.parameters, self.config.method_params)

    def use_predictions(self, store) -> None:
        """The loop's :class:`~evaluation.predictions.PredictionStore` (``uses_predictions`` methods only;
        at start and after a resume)."""

    def attach(self, grammar: Grammar, meta: DatasetMeta) -> "SearchMethod":
        """Connect to the run's grammar (at start, and again after a checkpoint is loaded)."""
        self.variation = Variation(grammar, meta, self.config.max_depth, self.policy)
        return self

    def warm_start(self, trees: list) -> None:
        """Candidates to begin with, best first (a portfolio's members under the run's grammar and data).

        Called once, after :meth:`attach`, before the first ask. The built-in methods put them where
        their own representation starts: GGP's, spGGP's and the GA's initial population, random and
        beam search's first batch, BO's, TPE's, EO's and DivBO's initial design, PBIL's first
        generation and its probability vectors. A method that overrides nothing ignores them."""
        self.warm = list(trees)

    def take_warm(self, n: int | None = None, convert=None) -> list:
        """Up to ``n`` (None: all) of the warm start's trees not handed out yet, removed from it; with
        ``convert``, only those it maps to a tree (None: not this caller's, left for another), mapped."""
        taken, kept = [], []
        for tree in self.warm:
            full = n is not None and len(taken) >= n
            mapped = None if full else tree if convert is None else convert(tree)
            if mapped is None:
                kept.append(tree)
            else:
                taken.append(mapped)
        self.warm = kept
        return taken

    @abstractmethod
    def ask(self, rng: np.random.Generator) -> list[Individual]:
        """The next batch (generation) to evaluate."""

    @abstractmethod
    def tell(self, evaluated: list[Individual]) -> None:
        """The batch returned by :meth:`ask`, each individual with its fitness set."""

    @abstractmethod
    def archive(self) -> list[Individual]:
        """Candidates for the final choice (re-evaluated on a fresh split by the loop)."""

    def ensemble(self) -> list[tuple[Individual, float]] | None:
        """The method's own ensemble — (member, weight) pairs, combined by majority vote — that the run
        returns unless ``--ensemble`` asks for post-hoc selection (ensemble optimisation); None: none."""
        return None

    def ensemble_refits(self) -> int:
        """How many members of :meth:`ensemble` the end will refit (the time-keeper reserves time for them)."""
        return 1

    def ensemble_measures(self) -> dict | None:
        """The validation measures of :meth:`ensemble` on the search's data view, when known."""
        return None

    @property
    def keeps_final_order(self) -> bool:
        """Whether the final choice follows :meth:`archive`'s order (a surrogate's posterior mean,
        001 §2.3) instead of the search fitness and the fresh re-evaluation; the loop still
        re-evaluates the candidates and reports their fresh fitness."""
        return False

    def stats(self) -> dict:
        """Extra per-generation statistics: ``{"restarts": int, "species": {...} | None}``, and optionally
        ``"method": {...}`` (the method's own, written to ``generations.jsonl`` as they are)."""
        return {"restarts": 0, "species": None}

    def report(self) -> dict | None:
        """What ``final.json`` (``"method_report"``) and ``inspect`` show of the method's learned state:
        ``{"title", "columns", "rows", ...}`` (a table), or None."""
        return None

    def write_artefacts(self, path) -> list[str]:
        """Write the method's own files into the run directory ``path`` at the end; warnings."""
        return []

    @property
    def generation_size(self) -> int:
        """Evaluations that make one generation (in the asynchronous mode: tells between generation records)."""
        return self.config.population

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["variation"] = None  # rebuilt by attach(); grammars are not checkpointed
        return state


class SteadyStateMethod(SearchMethod):
    """A method that can also run asynchronously (``--mode async``): one candidate at a time.

    In that mode the loop never calls :meth:`ask`/:meth:`tell`: whenever a worker frees up it
    calls :meth:`ask_one` (ahead of time for a method that declares :attr:`ask_is_costly`), and it
    calls :meth:`tell_one` for every candidate that comes back with a full-fidelity fitness on the
    current data view, in the order they finish. No two calls overlap: an ask made ahead in a
    background thread is waited for before any other call on the method. When the
    loop changes the data view (a resample, a multi-fidelity period) it calls :meth:`new_view`
    first: fitness values told afterwards must not be compared with earlier ones. Everything
    is still plain picklable state: the checkpoint is the pickled method.
    """

    asynchronous: ClassVar[bool] = True
    #: whether :meth:`ask_one` costs enough (a surrogate's fit, an acquisition's optimisation) that the
    #: asynchronous driver asks it *ahead*: as soon as a candidate is handed to a worker, the next ask
    #: runs in a background thread while the workers evaluate, so a freed worker gets its candidate at
    #: once (:class:`ggp_automl.search.asynchronous.AskAhead`). The cost: the proposal for candidate k+1
    #: is made from the tells known once candidate k was handed out (never the ones that arrive while it
    #: is being made), a fixed rule, so one worker still gives one run per seed and a resume is exact.
    #: Cheap methods keep False: each ask sees every tell before it.
    ask_is_costly: ClassVar[bool] = False
    #: the candidate asked ahead and not handed out yet (the driver's; part of the method's state, so
    #: the checkpoint — the pickled method — keeps it and a resumed run hands out the same candidate)
    asked_ahead: Individual | None = None

    @abstractmethod
    def ask_one(self, rng: np.random.Generator) -> Individual:
        """The next candidate to evaluate."""

    @abstractmethod
    def tell_one(self, evaluated: Individual) -> None:
        """One candidate with its fitness set (0.0 for a failed candidate)."""

    def tell_screened(self, evaluated: Individual) -> None:
        """A candidate's result on a lower screening rung (``evaluated.level`` < 0), as it arrives.

        Most methods wait for the full-fidelity result (:meth:`tell_one`), which a promoted candidate
        gets later and a screened-out one never does; a model-based method can learn from it (BO
        tells its surrogate a provisional cost and overwrites it if the full result comes)."""

    @abstractmethod
    def new_view(self) -> None:
        """The data changed: fitness values told from now on are on the new view."""

    def ask(self, rng: np.random.Generator) -> list[Individual]:
        """A generation (the generational mode): ``generation_size`` candidates asked one at a time."""
        return [self.ask_one(rng) for _ in range(self.generation_size)]

    def tell(self, evaluated: list[Individual]) -> None:
        for ind in evaluated:
            self.tell_one(ind)


class BatchedMethod(SteadyStateMethod):
    """A steady-state method whose candidates come in batches that are told whole: :meth:`ask`
    makes a batch, which is handed out one candidate at a time, and :meth:`tell` receives a batch
    once ``generation_size`` candidates are back (random search, PBIL)."""

    def __init__(self, config: RunConfig, policy: SamplingPolicy | None = None):
        super().__init__(config, policy)
        self.queue: list[Individual] = []
        self.current: list[Individual] = []

    @abstractmethod
    def ask(self, rng: np.random.Generator) -> list[Individual]:
        """The next batch, made whole (handed out one candidate at a time by :meth:`ask_one`)."""

    @abstractmethod
    def tell(self, evaluated: list[Individual]) -> None:
        """A whole batch, once ``generation_size`` candidates are back."""

    def ask_one(self, rng):
        if not self.queue:
            self.queue = self.ask(rng)
        return self.queue.pop(0)

    def tell_one(self, evaluated):
        self.current.append(evaluated)
        if len(self.current) >= self.generation_size:
            self.tell(self.current)
            self.current = []


def tournament(pool: list[Individual], size: int, rng: np.random.Generator) -> Individual:
    """Tournament selection: ``size`` draws with replacement, the fittest wins (ties: first drawn).

    Written here rather than taken from ``deap.tools.selTournament`` because DEAP's
    selectors draw from Python's global ``random`` module, and a run must depend on
    its one explicit numpy Generator only. GGP and spGGP call it through their toolbox
    (:func:`ggp_automl.search.methods.toolbox.tournament_select`)."""
    picks = rng.integers(0, len(pool), size=size)
    best = pool[int(picks[0])]
    for i in picks[1:]:
        if pool[int(i)].rank > best.rank:
            best = pool[int(i)]
    return best


def best_of(pool: list[Individual]) -> Individual:
    """The fittest individual (by fidelity level, then fitness); ties go to the earlier one."""
    return max(pool, key=lambda ind: ind.rank)  # max keeps the first of equal keys


def by_rank(pool: list[Individual]) -> list[Individual]:
    """Best first (level, then fitness); a stable sort, so ties keep their order."""
    return sorted(pool, key=lambda ind: ind.rank, reverse=True)


def elites(pool: list[Individual], n: int) -> list[Individual]:
    return by_rank(pool)[:n]

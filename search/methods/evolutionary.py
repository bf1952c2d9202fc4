"""The population life cycle GGP, speciated GGP and the GA share.

Why one base: the three methods differ in what an individual is bred from (derivation trees through
Whigham's operators, a species' own grammar, a real-coded genome) but not in what happens around the
breeding, which the thesis fixes for all of them (§5.3.1): populations told whole (generational) or one
individual at a time (steady state, :mod:`.population`); elitism; a restart with a fresh population
when the best phenotype has been unchanged for ``restart_patience`` generations after at least
``restart_min_generations``; the best before each restart and a hall of fame kept for the final
choice; the learning/validation split redrawn every ``resample_every`` generations.

A method is a set of *groups* — one population for GGP and the GA, one per species for spGGP — each
with its own population, steady-state population, restart test and share of the evaluations. A
subclass says how a group starts (:meth:`EvolutionaryMethod.fresh`), how a generation of it is bred
(:meth:`~EvolutionaryMethod.breed`) and how one pair of children is bred for the asynchronous mode
(:meth:`~EvolutionaryMethod.breed_pair`). Every operator takes the run's numpy Generator explicitly;
the operators themselves come from the method's DEAP toolbox (:mod:`.toolbox`).
"""
from __future__ import annotations

from abc import abstractmethod
from typing import Hashable

import numpy as np
from deap import tools

from ..individual import Individual
from ..parameters import RESHUFFLE, Parameter
from .base import SteadyStateMethod, best_of, elites
from .population import SteadyPopulation


#: the GGP family's parameters (thesis §5.3.1.3 and §6.1: its defaults), declared by GGP, spGGP and the GA
TOURNAMENT_SIZE = Parameter("tournament_size", int, 2, "tournament size of parent selection", low=1, high=1000)
ELITISM = Parameter("elitism", int, 1, "best individuals copied into the next generation (of each species)",
                    low=0, high=10_000)
CROSSOVER_RATE = Parameter("crossover_rate", float, 0.8, "probability that a selected pair is crossed over",
                           low=0.0, high=1.0)
MUTATION_RATE = Parameter("mutation_rate", float, 0.2, "probability that both children of a pair are mutated",
                          low=0.0, high=1.0)
RESAMPLE_EVERY = Parameter("resample_every", int, 5, "generations between two redraws of the learning/validation "
                           "split (0: never)", low=0, high=10_000)
RESTART_PATIENCE = Parameter("restart_patience", int, 5, "restart when the best phenotype is unchanged for this "
                             "many generations ...", low=1, high=10_000)
RESTART_MIN_GENERATIONS = Parameter("restart_min_generations", int, 20, "... after at least this many generations "
                                    "since the last (re)start", low=0, high=10_000)
#: what every method of the family declares
FAMILY = (RESHUFFLE, TOURNAMENT_SIZE, ELITISM, CROSSOVER_RATE, MUTATION_RATE, RESAMPLE_EVERY, RESTART_PATIENCE,
          RESTART_MIN_GENERATIONS)


class Convergence:
    """The restart test of the thesis, for one population (or one species)."""

    def __init__(self, patience: int, min_generations: int):
        self.patience = patience
        self.min_generations = min_generations
        self.history: list[str] = []
        self.generations = 0  # generations bred since the last (re)start
        self.restarts = 0

    def record(self, best_phenotype: str) -> None:
        self.history = (self.history + [best_phenotype])[-self.patience:]

    def step(self) -> bool:
        """Count one generation; True when the population should restart now."""
        self.generations += 1
        converged = (self.generations >= self.min_generations and len(self.history) == self.patience
                     and len(set(self.history)) == 1)
        if converged:
            self.generations, self.history = 0, []
            self.restarts += 1
        return converged


def next_from(pop: SteadyPopulation, breed_pair, fresh_one) -> Individual:
    """The next asynchronous candidate of ``pop``: queued first, else a child of the selection pool
    (its sibling is queued), else — nothing evaluated yet to breed from — a fresh derivation."""
    if pop.queue:
        return pop.queue.pop(0)
    pool = pop.selection_pool()
    if not pool:
        return fresh_one()
    first, second = breed_pair(pool)
    pop.queue.append(second)
    return first


def distinct(candidates: list[Individual]) -> list[Individual]:
    """The candidates without repeated phenotypes, first occurrence kept."""
    seen: set[str] = set()
    out = []
    for c in candidates:
        if c.phenotype not in seen:
            seen.add(c.phenotype)
            out.append(c)
    return out


def breed_with_elites(pool: list[Individual], n: int, elitism: int, pair) -> list[Individual]:
    """``n`` offspring of ``pool``: its best ``elitism`` carried over fresh, then pairs of children
    (``pair()`` → two individuals), the second of the last pair dropped when ``n`` is odd."""
    new = [e.fresh() for e in elites(pool, min(elitism, n))]
    while len(new) < n:
        children = pair()
        new.append(children[0])
        if len(new) < n:
            new.append(children[1])
    return new


class EvolutionaryMethod(SteadyStateMethod):
    """Populations per group, elitism, restarts, the archive and resampling (see the module docstring)."""

    resamples = True
    parameters = FAMILY

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.groups: list[Hashable] = self.group_labels()
        self.populations: dict = {}  # generational: the told population of each group
        params = self.params
        self.convergence = {g: Convergence(params["restart_patience"], params["restart_min_generations"])
                            for g in self.groups}
        self.restart_archive: list[Individual] = []
        self.hall = tools.HallOfFame(config.archive_size)
        self.steady = {g: SteadyPopulation(self.group_size) for g in self.groups}
        self._restart_due = set(self.groups)  # the first asynchronous asks start the groups
        self._asks = 0

    # -- what a method says ------------------------------------------------------------------------
    def group_labels(self) -> list[Hashable]:
        """The groups (one population each); GGP and the GA: one, labelled None."""
        return [None]

    @property
    def group_size(self) -> int:
        return self.config.population

    @classmethod
    def problems_with(cls, config, params: dict) -> list[str]:
        """Elitism copies the best of a population (of each species) into the next generation: fewer than
        its size."""
        size, name = cls.group_size_of(config, params)
        if params["elitism"] >= size:
            return [f"{name} must be larger than elitism ({params['elitism']}) for {cls.name}: the best "
                    f"{params['elitism']} are copied into every generation, got {name} {size}"]
        return []

    @classmethod
    def group_size_of(cls, config, params: dict) -> tuple[int, str]:
        return config.population, "population"

    @property
    def generation_size(self) -> int:
        return len(self.groups) * self.group_size

    @abstractmethod
    def fresh(self, group, rng: np.random.Generator, n: int | None = None) -> list[Individual]:
        """``n`` (default: a group's size) new random individuals of ``group``."""

    @abstractmethod
    def breed(self, group, pool: list[Individual], pools: dict, rng: np.random.Generator) -> list[Individual]:
        """A generation of ``group`` bred from its told ``pool`` (``pools``: every group's)."""

    @abstractmethod
    def breed_pair(self, group, pool: list[Individual], pools: dict,
                   rng: np.random.Generator) -> tuple[Individual, Individual]:
        """Two children of ``pool`` (the asynchronous mode; ``pools``: every group's selection pool)."""

    # -- generational ------------------------------------------------------------------------------
    def ask(self, rng):
        if not self.populations:
            return [ind for g in self.groups for ind in self.fresh(g, rng)]
        batch: list[Individual] = []
        for g in self.groups:
            pool = self.populations[g]
            if self.convergence[g].step():
                self.restart_archive.append(best_of(pool))
                batch += self.fresh(g, rng)
            else:
                batch += self.breed(g, pool, self.populations, rng)
        return batch

    def tell(self, evaluated):
        self.populations = {g: [] for g in self.groups}
        for ind in evaluated:
            self.populations[self.group_of(ind)].append(ind)
        for g in self.groups:
            self.convergence[g].record(best_of(self.populations[g]).phenotype)
        self.hall.update(evaluated)

    def group_of(self, ind: Individual):
        return ind.species if len(self.groups) > 1 else self.groups[0]

    # -- asynchronous ------------------------------------------------------------------------------
    def ask_one(self, rng):
        g = self.groups[self._asks % len(self.groups)]  # the groups served in turn: each keeps its share
        self._asks += 1
        pop = self.steady[g]
        if g in self._restart_due:
            if pop.members:
                self.restart_archive.append(pop.best())
            self._restart_due.discard(g)
            pop.restart(self.fresh(g, rng))
        pools = {o: p.selection_pool() for o, p in self.steady.items()}
        return next_from(pop, lambda pool: self.breed_pair(g, pool, pools, rng), lambda: self.fresh(g, rng, 1)[0])

    def tell_one(self, evaluated):
        self.hall.update([evaluated])
        g = self.group_of(evaluated)
        if g in self.steady and self.steady[g].insert(evaluated):
            self.convergence[g].record(self.steady[g].best().phenotype)
            if self.convergence[g].step():
                self._restart_due.add(g)

    def new_view(self):
        for pop in self.steady.values():
            pop.new_view(self.params["elitism"])

    # -- both --------------------------------------------------------------------------------------
    def current(self) -> dict:
        """Each group's current members (the told population, or the steady-state one)."""
        if self.populations:
            return self.populations
        return {g: p.members for g, p in self.steady.items()}

    def archive(self):
        finals = [best_of(p) for p in self.current().values() if p]
        return distinct(self.restart_archive + finals + list(self.hall))

    @property
    def restarts(self) -> int:
        return sum(c.restarts for c in self.convergence.values())

    def stats(self):
        return {"restarts": self.restarts, "species": None}

"""Grammar-based genetic programming (Auto-MEKA_GGP, thesis §5.3.1.3, Alg. 5.1).

Generational (the thesis's, ``--mode generational``): ramped half-and-half
initialisation; tournament selection (size 2); elitism; Whigham crossover (P_c) and
mutation (P_m, one draw for both children), these three taken from the method's DEAP
toolbox (:mod:`gp.search.toolbox`: a user may swap them); a restart with a fresh population when the
best phenotype has not changed for ``restart_patience`` generations after at least
``restart_min_generations``. The best individual before each restart is archived for
the final choice. Elites and unchanged children are re-evaluated through the loop's
cache, which is free on the same split and gives them a fair score after a resample.

Asynchronous (``--mode async``): the same operators on a steady-state population
(:mod:`gp.search.population`): each free worker gets the next child of a pair bred
from the population as it is now, and each evaluated child is inserted at once.
"""
from __future__ import annotations

import numpy as np
from deap import tools

from .individual import Individual
from .method import SearchMethod, SteadyStateMethod, best_of, elites, register_method
from .parameters import RESHUFFLE
from .population import SteadyPopulation
from .toolbox import ToolboxMixin


class Breeder:
    """Selection and variation over one pool (a population, or one species), with the method's toolbox."""

    def __init__(self, method: SearchMethod):
        self.method = method
        self.config = method.config
        self.toolbox = method.toolbox

    def crossover(self, p1: Individual, p2: Individual, pool: list[Individual],
                  rng: np.random.Generator) -> tuple[Individual, Individual] | None:
        """``toolbox.mate``; when the parents cannot be crossed (Whigham: they share no rule), redraw the
        mate (authors' code)."""
        for _ in range(10):
            children = self.toolbox.mate(p1, p2, rng)
            if children is not None:
                return children
            p2 = self.toolbox.select(pool, 1, rng)[0]
        return None

    def breed(self, pool: list[Individual], n: int, rng: np.random.Generator, species: int | str | None = None,
              mate_for=None) -> list[Individual]:
        """``n`` offspring of ``pool``: elites first, then pairs of varied children.

        ``mate_for(parent, rng)``, when given, replaces the plain crossover (spGGP's
        inter-species crossover plugs in here).
        """
        new = [e.fresh() for e in elites(pool, min(self.config.elitism, n))]
        while len(new) < n:
            children = self.pair(pool, rng, species, mate_for)
            new.append(children[0])
            if len(new) < n:
                new.append(children[1])
        return new

    def pair(self, pool: list[Individual], rng: np.random.Generator, species: int | str | None = None,
             mate_for=None) -> tuple[Individual, Individual]:
        """Two children: two selected parents, crossover with P_c, mutation of both with P_m."""
        cfg = self.config
        p1, p2 = self.toolbox.select(pool, 2, rng)
        children = None
        if rng.random() < cfg.crossover_rate:
            children = mate_for(p1, p2, rng) if mate_for else self.crossover(p1, p2, pool, rng)
        if children is None:
            children = (p1.fresh(), p2.fresh())
        if species is not None:  # before mutation: a child mutates with its own species' grammar
            children = tuple(Individual(c.tree, species) for c in children)
        if rng.random() < cfg.mutation_rate:
            children = tuple(self.toolbox.mutate(c, rng) for c in children)
        # fresh and of the pool's species (GGP: none), whatever a user's operator handed back
        return tuple(Individual(c.tree, species) for c in children)


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


@register_method
class GGP(ToolboxMixin, SteadyStateMethod):
    name = "ggp"
    resamples = True
    parameters = (RESHUFFLE,)

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.population: list[Individual] = []
        self.convergence = Convergence(config.restart_patience, config.restart_min_generations)
        self.restart_archive: list[Individual] = []
        self.hall = tools.HallOfFame(config.archive_size)
        self.steady = SteadyPopulation(config.population)
        self._restart_due = True  # the first asynchronous ask starts the population

    def attach(self, grammar, meta):
        super().attach(grammar, meta)
        self.build_toolbox()
        return self

    def fresh(self, rng: np.random.Generator, species: int | None = None, n: int | None = None) -> list[Individual]:
        trees = self.variation.population(n or self.config.population, rng, species, self.config.min_init_depth)
        return [Individual(t, species) for t in trees]

    # -- generational ----------------------------------------------------------------------
    def ask(self, rng):
        if not self.population:
            return self.fresh(rng)
        if self.convergence.step():
            self.restart_archive.append(best_of(self.population))
            return self.fresh(rng)
        return Breeder(self).breed(self.population, self.config.population, rng)

    def tell(self, evaluated):
        self.population = list(evaluated)
        self.convergence.record(best_of(self.population).phenotype)
        self.hall.update(self.population)

    # -- asynchronous ----------------------------------------------------------------------
    def ask_one(self, rng):
        pop = self.steady
        if self._restart_due:
            if pop.members:
                self.restart_archive.append(pop.best())
            self._restart_due = False
            pop.restart(self.fresh(rng))
        return next_from(pop, lambda pool: Breeder(self).pair(pool, rng), lambda: self.fresh(rng, n=1)[0])

    def tell_one(self, evaluated):
        self.hall.update([evaluated])
        if self.steady.insert(evaluated):
            self.convergence.record(self.steady.best().phenotype)
            self._restart_due = self.convergence.step()

    def new_view(self):
        self.steady.new_view(self.config.elitism)

    # -- both -----------------------------------------------------------------------------------
    def _current(self) -> list[Individual]:
        return self.population or self.steady.members

    def archive(self):
        current = self._current()
        return _distinct(self.restart_archive + ([best_of(current)] if current else []) + list(self.hall))

    def stats(self):
        return {"restarts": self.convergence.restarts, "species": None}


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


def _distinct(candidates: list[Individual]) -> list[Individual]:
    seen: set[str] = set()
    out = []
    for c in candidates:
        if c.phenotype not in seen:
            seen.add(c.phenotype)
            out.append(c)
    return out

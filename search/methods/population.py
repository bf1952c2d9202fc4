"""A steady-state population: the asynchronous (``--mode async``) form of a GGP population.

Why: in the generational algorithm every worker waits at the end of a generation for its
slowest candidate. In the asynchronous mode (GAMA's asynchronous EA is the model) a worker
that frees up at once gets a new offspring bred from the population as it is now, and each
evaluated offspring is inserted as soon as it comes back, the worst member leaving when the
population is over its size. Elitism is implicit (the best never leaves), and tournament
selection, Whigham crossover and mutation are the generational ones (:mod:`ggp_automl.search.methods.ggp`).

Counting: a *generation* is ``size`` insertions, so restarts ("best unchanged for 5
generations after 20") and the loop's resampling every 5 generations keep their meaning.

New data (a resample, or the next multi-fidelity period): fitness values measured on the
old view must not be compared with new ones. The members are frozen as the *parents* of the
next ``size`` offspring, exactly what a generational step does, while the new population
fills with offspring measured on the new view; the best parent is re-evaluated on the new
view first (the elite). Once the new population is full, the parents are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..individual import Individual
from .base import best_of, by_rank


@dataclass
class SteadyPopulation:
    size: int
    members: list[Individual] = field(default_factory=list)
    #: the previous view's members, bred from until ``members`` is full again
    parents: list[Individual] | None = None
    #: individuals to hand out before breeding (the initial or restarted population, elites)
    queue: list[Individual] = field(default_factory=list)
    inserted: int = 0

    def selection_pool(self) -> list[Individual]:
        if self.parents and len(self.members) < self.size:
            return self.parents
        return self.members

    def insert(self, individual: Individual) -> bool:
        """Add an evaluated individual; True when this completes a generation (``size`` insertions)."""
        self.members.append(individual)
        if len(self.members) > self.size:
            worst = min(range(len(self.members)), key=lambda i: self.members[i].rank)  # the oldest of equals
            del self.members[worst]
        if self.parents is not None and len(self.members) >= self.size:
            self.parents = None
        self.inserted += 1
        return self.inserted % self.size == 0

    def best(self) -> Individual | None:
        return best_of(self.members) if self.members else None

    def new_view(self, elitism: int) -> None:
        """The next individuals are measured on new data: freeze the members as parents."""
        if not self.members:
            return
        self.parents = self.members
        self.members = []
        self.queue = [e.fresh() for e in by_rank(self.parents)[:elitism]] + self.queue

    def restart(self, fresh: list[Individual]) -> None:
        self.members, self.parents, self.queue = [], None, list(fresh)

"""Grammar-based genetic programming (Auto-MEKA_GGP, thesis §5.3.1.3, Alg. 5.1).

Generational (the thesis's, ``--mode generational``): ramped half-and-half
initialisation; tournament selection (size 2); elitism; Whigham crossover (P_c) and
mutation (P_m, one draw for both children), these three taken from the method's DEAP
toolbox (:mod:`ggp_automl.search.methods.toolbox`: a user may swap them); a restart with a fresh population when the
best phenotype has not changed for ``restart_patience`` generations after at least
``restart_min_generations``. The best individual before each restart is archived for
the final choice. Elites and unchanged children are re-evaluated through the loop's
cache, which is free on the same split and gives them a fair score after a resample.

Asynchronous (``--mode async``): the same operators on a steady-state population
(:mod:`ggp_automl.search.methods.population`): each free worker gets the next child of a pair bred
from the population as it is now, and each evaluated child is inserted at once.
"""
from __future__ import annotations

import numpy as np

from ..individual import Individual
from .evolutionary import EvolutionaryMethod, breed_with_elites
from .registry import register_method
from .toolbox import ToolboxMixin


class Breeder:
    """Selection and variation over one pool (a population, or one species), with the method's toolbox."""

    def __init__(self, method):
        self.method = method
        self.params = method.params
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
        return breed_with_elites(pool, n, self.params["elitism"], lambda: self.pair(pool, rng, species, mate_for))

    def pair(self, pool: list[Individual], rng: np.random.Generator, species: int | str | None = None,
             mate_for=None) -> tuple[Individual, Individual]:
        """Two children: two selected parents, crossover with P_c, mutation of both with P_m."""
        params = self.params
        p1, p2 = self.toolbox.select(pool, 2, rng)
        children = None
        if rng.random() < params["crossover_rate"]:
            children = mate_for(p1, p2, rng) if mate_for else self.crossover(p1, p2, pool, rng)
        if children is None:
            children = (p1.fresh(), p2.fresh())
        if species is not None:  # before mutation: a child mutates with its own species' grammar
            children = tuple(Individual(c.tree, species) for c in children)
        if rng.random() < params["mutation_rate"]:
            children = tuple(self.toolbox.mutate(c, rng) for c in children)
        # fresh and of the pool's species (GGP: none), whatever a user's operator handed back
        return tuple(Individual(c.tree, species) for c in children)


@register_method
class GGP(ToolboxMixin, EvolutionaryMethod):
    """One population of derivation trees bred with the toolbox's operators (the module docstring)."""

    name = "ggp"

    def attach(self, grammar, meta):
        super().attach(grammar, meta)
        self.build_toolbox()
        return self

    def fresh(self, group, rng, n=None):
        n = n or self.group_size
        trees = self.take_warm(n)  # the warm start's members first (the initial population), the rest as ever
        if len(trees) < n:
            trees += self.variation.population(n - len(trees), rng, None, self.config.min_init_depth)
        return [Individual(t) for t in trees]

    def breed(self, group, pool, pools, rng):
        return Breeder(self).breed(pool, self.group_size, rng)

    def breed_pair(self, group, pool, pools, rng):
        return Breeder(self).pair(pool, rng)

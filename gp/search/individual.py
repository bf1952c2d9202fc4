"""An individual: a derivation tree, the species it belongs to, and its fitness.

Individuals stay the project's own picklable trees (:class:`gp.tree.Node`); DEAP
only sees the ``fitness`` attribute (a :class:`deap.base.Fitness`), which is what
its statistics, hall of fame and logbook need. TPOT-style, an individual knows how
to vary and export itself; the variation itself lives in :mod:`gp.search.variation`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from deap import base

from gp.tree import Node

if TYPE_CHECKING:
    from gp.grammar import Grammar

    from .variation import Variation


class Fitness(base.Fitness):
    """One maximised objective (a module-level class, so individuals pickle)."""

    weights = (1.0,)


class Individual:
    __slots__ = ("tree", "species", "fitness")

    def __init__(self, tree: Node, species: int | None = None, fitness: float | None = None):
        self.tree = tree
        self.species = species
        self.fitness = Fitness()
        if fitness is not None:
            self.fitness.values = (float(fitness),)

    @property
    def phenotype(self) -> str:
        return self.tree.phenotype

    @property
    def score(self) -> float:
        """The fitness value, or 0.0 (the thesis's lowest fitness) when not evaluated."""
        return self.fitness.values[0] if self.fitness.valid else 0.0

    def with_fitness(self, value: float | None) -> "Individual":
        return Individual(self.tree, self.species, value)

    def mutate(self, variation: "Variation", rng: np.random.Generator) -> "Individual":
        return Individual(variation.mutate(self.tree, self.species, rng), self.species)

    def crossover(self, other: "Individual", variation: "Variation",
                  rng: np.random.Generator) -> tuple["Individual", "Individual"] | None:
        """Whigham crossover; the children keep their parents' species. None: no common rule."""
        children = variation.crossover(self.tree, other.tree, rng)
        if children is None:
            return None
        return Individual(children[0], self.species), Individual(children[1], other.species)

    def export(self, grammar: "Grammar", random_state: int = 0) -> str:
        """Python source that rebuilds this individual's (unfitted) estimator."""
        from spaces.compiler import compile_tree
        from spaces.export import to_python

        return to_python(compile_tree(self.tree, grammar, random_state=random_state))

    # DEAP's HallOfFame compares individuals with ==; two trees with the same phenotype
    # are the same configuration.
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Individual) and self.phenotype == other.phenotype

    def __hash__(self) -> int:
        return hash(self.phenotype)

    def __getstate__(self):
        return (self.tree, self.species, self.fitness.values if self.fitness.valid else None)

    def __setstate__(self, state) -> None:
        self.tree, self.species, values = state
        self.fitness = Fitness()
        if values is not None:
            self.fitness.values = values

    def __repr__(self) -> str:
        s = f", species {self.species}" if self.species is not None else ""
        f = f", fitness {self.score:.4f}" if self.fitness.valid else ""
        return f"Individual({self.phenotype!r}{s}{f})"

"""An individual: a derivation tree, the species it belongs to, and its fitness.

The species is spGGP's label (a generated species' number, a species file's stem; None in
GGP): it picks the grammar the individual mutates with and is what the run's records show.

Individuals stay the project's own picklable trees (:class:`gp.tree.Node`); DEAP
only sees the ``fitness`` attribute (a :class:`deap.base.Fitness`), which is what
its statistics, hall of fame and logbook need. TPOT-style, an individual knows how
to vary and export itself; the variation itself lives in :mod:`ggp_automl.search.variation`.

The fitness has two values compared lexicographically (DEAP compares ``wvalues`` as
tuples): the *fidelity level* at which the candidate was last measured (0: full
fidelity, -1, -2, …: lower screening rungs, :mod:`ggp_automl.search.screening`), then the
fitness value. So a search compares fitness values only between candidates measured
at the same fidelity; a screened-out candidate loses every comparison with one that
was promoted. Without screening every level is 0 and this is plain fitness.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from deap import base

from ggp_automl.gp.tree import Node

if TYPE_CHECKING:
    from ggp_automl.gp.grammar import Grammar

    from .variation import Variation


class Fitness(base.Fitness):
    """(fidelity level, fitness), both maximised, compared lexicographically (a module-level
    class, so individuals pickle)."""

    weights = (1.0, 1.0)


class Individual:
    __slots__ = ("tree", "species", "fitness")

    def __init__(self, tree: Node, species: int | str | None = None, fitness: float | None = None,
                 level: int = 0):
        self.tree = tree
        self.species = species
        self.fitness = Fitness()
        if fitness is not None:
            self.fitness.values = (float(level), float(fitness))

    @property
    def phenotype(self) -> str:
        return self.tree.phenotype

    @property
    def score(self) -> float:
        """The fitness value, or 0.0 (the thesis's lowest fitness) when not evaluated."""
        return self.fitness.values[1] if self.fitness.valid else 0.0

    @property
    def level(self) -> int:
        """The fidelity level of the score: 0 full fidelity, negative a lower screening rung."""
        return int(self.fitness.values[0]) if self.fitness.valid else 0

    @property
    def rank(self) -> tuple[float, float]:
        """The sort key of selection: (level, fitness); (0, 0.0) when not evaluated."""
        return (float(self.level), self.score)

    def with_fitness(self, value: float | None, level: int = 0) -> "Individual":
        return Individual(self.tree, self.species, value, level)

    def fresh(self) -> "Individual":
        """The same tree and species, not evaluated (an elite carried to new data)."""
        return Individual(self.tree, self.species)

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
        from ggp_automl.spaces.compiler import compile_tree
        from ggp_automl.spaces.export import to_python

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

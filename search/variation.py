"""Variation in one place: which generator regrows a subtree, and the depth limit.

Mutation of an individual of species ``s`` regrows with species ``s``'s grammar
(thesis §5.3.1.4); crossover matches nodes by rule name, so it works across
species. A species tree keeps its own grammar's alternative numbers: it cannot in
general be re-indexed into the full grammar, because a species may hold a
hyper-parameter at a *sentinel* default (WEKA's "automatic" value, e.g. RandomForest's
``-K 0``) that lies outside the full grammar's range. After inter-species crossover a
tree mixes subtrees of several species grammars; every node is a valid expansion of
its rule in one of them (:func:`gp.validity.tree_problems_in_any`), and the mapper
reads rule names and values only, so such trees compile like any other.

A hand-written species file (spGGP's ``--species …,FILE.bnf``) is one more species grammar, given
ready-made in ``species_grammars`` under its label (the file's stem) instead of derived from the
annotations; :mod:`ggp_automl.search.methods.spggp` checks it against the run's grammar before it gets here.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ggp_automl.gp.binding import BoundGrammar, DatasetMeta
from ggp_automl.gp.generate import DEFAULT_MAX_DEPTH, TreeGenerator
from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.operators import whigham_crossover, whigham_mutation
from ggp_automl.gp.policy import SamplingPolicy, UniformPolicy
from ggp_automl.gp.species import make_species
from ggp_automl.gp.tree import Node


@dataclass
class Variation:
    grammar: Grammar
    meta: DatasetMeta
    max_depth: int = DEFAULT_MAX_DEPTH
    policy: SamplingPolicy = field(default_factory=UniformPolicy)
    #: hand-written species grammars by label (a species file's stem); a number is a generated species
    species_grammars: dict[str, Grammar] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.bound: BoundGrammar = self.grammar.bind(self.meta)
        self._generators: dict[int | str | None, TreeGenerator] = {None: TreeGenerator(self.bound, self.policy)}

    def generator(self, species: int | str | None = None) -> TreeGenerator:
        """The tree generator of a species (None: the full grammar): a species file's grammar, or the
        generated species derived from the run's grammar on first use."""
        if species not in self._generators:
            sg = self.species_grammars.get(species) or make_species(self.grammar, species)
            self._generators[species] = TreeGenerator(sg.bind(self.meta), self.policy)
        return self._generators[species]

    def population(self, n: int, rng: np.random.Generator, species: int | str | None = None,
                   min_depth: int = 2) -> list[Node]:
        """Ramped half-and-half from the species' grammar, duplicates rejected."""
        return self.generator(species).ramped_half_and_half(n, rng, min_depth=min_depth, max_depth=self.max_depth)

    def mutate(self, tree: Node, species: int | str | None, rng: np.random.Generator) -> Node:
        return whigham_mutation(tree, self.generator(species), rng, self.max_depth)

    def crossover(self, t1: Node, t2: Node, rng: np.random.Generator) -> tuple[Node, Node] | None:
        return whigham_crossover(t1, t2, rng, self.max_depth)

    def __getstate__(self):  # generators are rebuilt, not pickled
        return {"grammar": self.grammar, "meta": self.meta, "max_depth": self.max_depth, "policy": self.policy,
                "species_grammars": self.species_grammars}

    def __setstate__(self, state) -> None:
        self.__dict__.update({"species_grammars": {}, **state})
        self.__post_init__()

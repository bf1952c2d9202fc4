"""Speciated GGP (Auto-MEKA_spGGP, thesis §5.3.1.4, §6.3; paper 004 §4.2).

Eight species of ten individuals, each initialised from its own species grammar
(which evolves some hyper-parameter kinds and holds the others at their defaults,
:mod:`gp.species`). its ``species`` parameter may name fewer of the eight and add
hand-written species files; a file is checked against the run's grammar before the
run starts (:func:`species_grammars`). Selection, elitism and restarts are per species. With
probability P_c a pair is crossed over, inter-species with probability
``inter_species_rate`` (each parent crosses with a tournament winner of a uniformly
chosen other species and one child of each cross is kept — the only way non-default
values enter a restricted species), intra-species otherwise. Mutation regrows with
the individual's own species grammar. Children stay in their parents' species.
Selection, crossover and mutation are the method's DEAP toolbox's (:mod:`ggp_automl.search.methods.toolbox`).

Asynchronous (``--mode async``): each species is a steady-state population
(:mod:`ggp_automl.search.methods.population`); free workers are served the species in turn, so every
species keeps its share of the evaluations, and per-species generations
(``species_size`` insertions) drive the per-species restarts.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.errors import GrammarError
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.species import shown_path, species_file_problems, species_label

from ..individual import Individual
from .base import best_of
from ..config import MAX_POPULATION
from ..parameters import Parameter
from .evolutionary import FAMILY, EvolutionaryMethod
from .ggp import Breeder
from .registry import register_method
from .toolbox import ToolboxMixin

Label = int | str  # a species: its number 1..8, or a species file's stem

#: spGGP's own parameters (thesis §5.3.1.4): its species — a number 1..8 names a species generated from the
#: grammar's annotations (gp.species), a string a hand-written species file (.bnf; recorded as an absolute
#: path) — the individuals per species, and the share of crossovers between species
SPECIES = Parameter("species", tuple, (1, 2, 3, 4, 5, 6, 7, 8),
                    "the species: numbers 1..8 (generated from the grammar's annotations) and species files")
SPECIES_SIZE = Parameter("species_size", int, 10, "individuals per species", low=1, high=10_000)
INTER_SPECIES_RATE = Parameter("inter_species_rate", float, 0.5, "share of crossovers made between species",
                               low=0.0, high=1.0)


@register_method
class SpeciatedGGP(ToolboxMixin, EvolutionaryMethod):
    """One population per species, bred with the toolbox's operators and inter-species crossover."""

    name = "spggp"
    parameters = FAMILY + (SPECIES, SPECIES_SIZE, INTER_SPECIES_RATE)

    def group_labels(self) -> list[Label]:
        return [species_label(s) for s in self.params["species"]]

    @property
    def species(self) -> list[Label]:
        return self.groups

    @property
    def group_size(self) -> int:
        return self.params["species_size"]

    @classmethod
    def group_size_of(cls, config, params: dict) -> tuple[int, str]:
        return params["species_size"], "species_size"

    @classmethod
    def problems_with(cls, config, params: dict) -> list[str]:
        species = params["species"]
        p = species_problems(species) + super().problems_with(config, params)
        if params["species_size"] * len(species) > MAX_POPULATION:
            p.append(f"species × species_size must be at most {MAX_POPULATION:,}, got "
                     f"{params['species_size'] * len(species):,}")
        if len(species) < 2 and params["inter_species_rate"] > 0:
            p.append("inter-species crossover needs at least two species: give two or more (--species), or set "
                     "inter_species_rate to 0")
        return p

    def attach(self, grammar, meta):
        files = species_grammars(self.params["species"], grammar, meta, self.config.max_depth)  # refused first
        super().attach(grammar, meta)
        self.variation.species_grammars.update(files)
        self.build_toolbox()
        return self

    def fresh(self, s: Label, rng: np.random.Generator, n: int | None = None) -> list[Individual]:
        n = n or self.group_size
        trees = self.take_warm(n, self._in_species(s))  # warm-start members this species derives, then its own
        if len(trees) < n:
            trees += self.variation.population(n - len(trees), rng, s, self.config.min_init_depth)
        return [Individual(t, s) for t in trees]

    def _in_species(self, s: Label):
        """A warm-start tree as species ``s``'s tree (its grammar's own alternative numbers), or None when the
        species cannot derive it: a member joins the first species whose grammar holds it."""
        from ggp_automl.gp.errors import PhenotypeError
        from ggp_automl.gp.phenotype import parse_phenotype

        bound = self.variation.generator(s).bound

        def convert(tree):
            try:
                return parse_phenotype(tree.phenotype, bound)
            except PhenotypeError:
                return None
        return convert

    def breed(self, s, pool, pools, rng):
        breeder = Breeder(self)
        return breeder.breed(pool, self.group_size, rng, species=s, mate_for=self._mate(breeder, s, pool, pools))

    def breed_pair(self, s, pool, pools, rng):
        breeder = Breeder(self)
        return breeder.pair(pool, rng, s, self._mate(breeder, s, pool, pools))

    def _mate(self, breeder: Breeder, s: Label, pool: list[Individual], pools: dict[Label, list[Individual]]):
        def mate(p1, p2, rng):
            if rng.random() < self.params["inter_species_rate"]:
                return self._inter(p1, p2, s, rng, pools)
            return breeder.crossover(p1, p2, pool, rng)
        return mate

    def _inter(self, p1: Individual, p2: Individual, s: Label, rng,
               pools: dict[Label, list[Individual]]) -> tuple[Individual, Individual] | None:
        """Each parent crosses with one selected in another species (by default a tournament's winner); one
        child of each kept."""
        others = [o for o in self.species if o != s and pools.get(o)]
        if not others:  # (asynchronous start) no other species has an evaluated member yet
            return None
        kept = []
        for parent in (p1, p2):
            other = others[int(rng.integers(len(others)))]
            mate = self.toolbox.select(pools[other], 1, rng)[0]
            children = self.toolbox.mate(parent, mate, rng)
            if children is None:  # no shared rule: the parent passes unchanged
                kept.append(Individual(parent.tree, s))
            else:
                kept.append(Individual(children[int(rng.integers(2))].tree, s))
        return kept[0], kept[1]

    def stats(self):
        species = {}
        current = self.current()
        for s in self.species:
            pool = current.get(s, [])
            scores = [i.score for i in pool]
            species[str(s)] = {
                "best_fitness": max(scores) if scores else 0.0,
                "mean_fitness": float(np.mean(scores)) if scores else 0.0,
                "best_phenotype": best_of(pool).phenotype if pool else "",
                "restarts": self.convergence[s].restarts,
            }
        return {"restarts": self.restarts, "species": species}


# -- species files ------------------------------------------------------------------------------------------

#: trees of a species file compiled before the run, and crossovers with the run's grammar's trees per rule
CHECKED_TREES = 12
CHECKED_SWAPS = 2


def species_grammars(specs, grammar: Grammar, meta: DatasetMeta, max_depth: int) -> dict[str, Grammar]:
    """The run's species files by label, each parsed and held to ``grammar``; :class:`GrammarError` with the
    offending rule's ``file:line:col`` otherwise.

    Beyond :func:`gp.species.species_file_problems` (start symbol, rule names, hyper-parameters): the mapper's
    own check (:func:`spaces.grammar_check.registry_check`: every terminal an algorithm or a value, the
    algorithms nested as the mapper builds them, the task of the run's grammar), then a sample: a few of its
    trees must compile, and so must its subtrees put into trees of the run's grammar at the same rule and the
    other way round, which is what inter-species crossover does. The sample draws from its own generator
    (seed 0), not the run's."""
    from ggp_automl.spaces.grammar_check import registry_check

    out = {}
    wanted = None
    for spec in specs:
        if isinstance(spec, int):
            continue
        species = load_grammar(shown_path(spec))
        problems = species_file_problems(species, grammar)
        if problems:
            raise GrammarError(problems)
        _, produced = registry_check(species)
        wanted = wanted or registry_check(grammar)[1]
        if produced != wanted:
            kinds = {"mlc": "multi-label methods", "slc": "single-label classifiers"}
            raise GrammarError([species.source.at(species[species.start].location, (
                f"this species builds {kinds[produced]}, but {Path(grammar.path).name} builds {kinds[wanted]}"))])
        _check_trees(species, grammar, meta, max_depth)
        out[species_label(spec)] = species
    return out


def _check_trees(species: Grammar, grammar: Grammar, meta: DatasetMeta, max_depth: int) -> None:
    from ggp_automl.spaces.compiler import compile_tree

    def fails(tree) -> str | None:
        try:
            compile_tree(tree, grammar)
        except Exception as exc:  # noqa: BLE001 - whatever the mapper refuses, said at the species' rule
            return f"{type(exc).__name__}: {exc}"
        return None

    rng = np.random.default_rng(0)
    start = species[species.start].location
    try:
        own = TreeGenerator(species.bind(meta)).ramped_half_and_half(CHECKED_TREES, rng, max_depth=max_depth)
    except ValueError as exc:  # deeper than the run's depth limit
        raise GrammarError([species.source.at(start, str(exc))]) from None
    theirs = TreeGenerator(grammar.bind(meta)).ramped_half_and_half(CHECKED_TREES, rng, max_depth=max_depth)
    for tree in own:
        problem = fails(tree)
        if problem:
            raise GrammarError([species.source.at(start, f"a tree of this species does not compile ({problem}): "
                                                         f"{tree.phenotype[:200]}")])
    name = Path(grammar.path).name
    for rule in species:  # crossover both ways at each rule both grammars' sampled trees hold
        mine = [(t, p) for t in own for p, n in t.nodes() if n.rule == rule.name][:CHECKED_SWAPS]
        other = [(t, p) for t in theirs for p, n in t.nodes() if n.rule == rule.name][:CHECKED_SWAPS]
        for (t1, p1) in mine:
            for (t2, p2) in other:
                for child, where in ((t2.replace(p2, t1[p1]), f"this species' subtree in a tree of {name}"),
                                     (t1.replace(p1, t2[p2]), f"{name}'s subtree in a tree of this species")):
                    problem = fails(child)
                    if problem:
                        raise GrammarError([species.source.at(rule.location, (
                            f"inter-species crossover at <{rule.name}> ({where}) makes a tree that "
                            f"does not compile ({problem}): {child.phenotype[:200]}"))])


def species_problems(species) -> list[str]:
    """spGGP's species: numbers 1..8 (generated) and species files, at least one, each label once (a file's
    label is its stem: two files of one name could not be told apart in the records)."""
    if not isinstance(species, tuple) or not species:
        return [f"species must be a non-empty list of species numbers 1..8 and species files, got {species!r:.60}"]
    p = []
    for s in species:
        if type(s) is int:
            if not 1 <= s <= 8:
                p.append(f"species numbers are 1..8 (the species generated from the grammar's annotations), got {s}")
        elif not isinstance(s, str) or not s.strip() or "\0" in s:
            p.append(f"a species is a number 1..8 or a species grammar file, got {s!r:.60}")
        elif not species_label(s) or species_label(s).isdigit():
            p.append(f"species file {s}: its name labels the species in the run's records, and a number there "
                     "would read as a generated species; rename the file")
    if not p:
        labels = [species_label(s) for s in species]
        twice = sorted({str(x) for x in labels if labels.count(x) > 1})
        if twice:
            p.append(f"each species may be given once (a species file is labelled by its name without .bnf), got "
                     f"{', '.join(twice)} more than once")
    return p

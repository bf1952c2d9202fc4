"""Whigham crossover and mutation, on full-grammar trees and on (unlifted) species trees."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from ggp_automl.gp.bnf_parser import parse_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.operators import nonterminal_paths, whigham_crossover, whigham_mutation
from ggp_automl.gp.species import SPECIES, make_species
from ggp_automl.gp.tree import Leaf, Node
from ggp_automl.gp.validity import tree_problems, tree_problems_in_any
from ggp_automl.spaces.compiler import compile_tree
from .conftest import SPACES, TINY, YEAST

N_PAIRS = 200
N_SPECIES = 40  # species trees per species test (each crossed three times)
LIMIT = 7  # depth limit of the species tests: binds for the medium and large grammars
RECURSIVE = parse_grammar("<e> ::= <e> + <e> | x\n", "rec.bnf")


@pytest.fixture(scope="session")
def species_grammars(grammars):
    return {(space, s): make_species(grammars[space], s) for space in SPACES for s in SPECIES}


@pytest.fixture(scope="session")
def species_bounds(species_grammars):
    """The eight species grammars of each space bound to yeast, species 1..8 in order."""
    return {space: [species_grammars[space, s].bind(YEAST) for s in sorted(SPECIES)] for space in SPACES}


def _rules(tree: Node) -> Counter:
    return Counter(node.rule for _, node in tree.nodes())


def _leaves(tree: Node) -> Counter:
    return Counter(leaf.text for leaf in tree.leaves())


def _sentinel_paths(tree: Node, full) -> list:
    """Nodes showing a ``sentinel`` default (outside the full grammar's range on purpose)."""
    out = []
    for path, node in tree.nodes():
        ann = full[node.rule].annotation
        if ann and ann.sentinel and tuple(c.text for c in node.children) == ann.default:
            out.append(path)
    return out


def _check_crossover(t1, t2, children, bound, max_depth):
    c1, c2 = children
    for child in children:
        assert tree_problems(child, bound, max_depth) == [], child.phenotype
    assert c1.size + c2.size == t1.size + t2.size
    assert _rules(c1) + _rules(c2) == _rules(t1) + _rules(t2)
    assert _leaves(c1) + _leaves(c2) == _leaves(t1) + _leaves(t2)


# -- paths -------------------------------------------------------------------------------------------
def test_nonterminal_paths_are_preorder_with_the_root():
    tree = Node("s", 0, (Node("a", 0, (Leaf("x"),)), Leaf("k"), Node("b", 0, (Node("c", 0, ()),))))
    assert nonterminal_paths(tree) == [(), (0,), (2,), (2, 0)]


# -- property tests over the shipped grammars ----------------------------------------------------------
@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("meta", [YEAST, TINY], ids=["yeast", "tiny"])
def test_crossover_and_mutation_children_are_valid(grammars, space, meta):
    bound = grammars[space].bind(meta)
    gen = TreeGenerator(bound)
    rng = np.random.default_rng(7)
    swapped = failed = 0
    for _ in range(N_PAIRS):
        t1, t2 = gen.grow(rng), gen.grow(rng)
        children = whigham_crossover(t1, t2, rng)
        if children is None:  # 10 picks in t1 found no rule of t2 (~3%): the caller takes another mate
            failed += 1
            children = (t1, t2)
        _check_crossover(t1, t2, children, bound, 100)
        swapped += children != (t1, t2) and children != (t2, t1)
        for child in children:
            mutant = whigham_mutation(child, gen, rng)
            assert tree_problems(mutant, bound, 100) == [], mutant.phenotype
    assert failed < N_PAIRS // 10
    assert swapped > N_PAIRS // 2  # not just root swaps


# -- speciated GGP: species trees are not lifted; children mix species grammars -------------------------
def _check_species_crossover(t1, t2, children, bounds, max_depth):
    c1, c2 = children
    for child in children:
        assert tree_problems_in_any(child, bounds, max_depth) == [], child.phenotype
    assert c1.size + c2.size == t1.size + t2.size
    assert _rules(c1) + _rules(c2) == _rules(t1) + _rules(t2)
    assert _leaves(c1) + _leaves(c2) == _leaves(t1) + _leaves(t2)


def _in_no_single_species(tree, bounds) -> bool:
    """A tree that only mixed species grammars derive (no single one does)."""
    return all(tree_problems(tree, b) for b in bounds)


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("species", sorted(SPECIES))
def test_species_operators_give_trees_valid_in_the_species_grammars(species_bounds, space, species):
    """Species trees crossed within the species, with species 8 and with a random other species;
    children mutated with their own species' generator. No lifting: every node must be a valid
    expansion in one of the eight species grammars."""
    bounds = species_bounds[space]
    gens = {s: TreeGenerator(b) for s, b in zip(sorted(SPECIES), bounds)}
    others = [s for s in SPECIES if s != species]
    rng = np.random.default_rng(100 + species)
    own = [gens[species].grow(rng, LIMIT) for _ in range(N_SPECIES)]
    crossed = mixed = 0
    for t1, t2 in zip(own, own[1:] + own[:1]):
        other = int(rng.choice(others))
        mates = ((species, t2), (8, gens[8].grow(rng, LIMIT)), (other, gens[other].grow(rng, LIMIT)))
        for s2, b in mates:
            children = whigham_crossover(t1, b, rng, LIMIT)
            if children is None:
                continue
            crossed += 1
            _check_species_crossover(t1, b, children, bounds, LIMIT)
            mixed += _in_no_single_species(children[0], bounds)
            for child, s in zip(children, (species, s2)):
                mutant = whigham_mutation(child, gens[s], rng, LIMIT)
                assert tree_problems_in_any(mutant, bounds, LIMIT) == [], mutant.phenotype
        mutant = whigham_mutation(t1, gens[species], rng, LIMIT)
        assert tree_problems(mutant, bounds[species - 1], LIMIT) == [], mutant.phenotype  # own grammar only
    assert crossed > 0.8 * 3 * N_SPECIES
    if species != 8:
        assert mixed > 0  # children that no single species grammar derives


@pytest.mark.parametrize("space", SPACES)
def test_mixed_species_trees_compile(grammars, species_bounds, space):
    """20 trees per space that only the mixture of species grammars derives compile with the full grammar."""
    bounds = species_bounds[space]
    gens = [TreeGenerator(b) for b in bounds]
    rng = np.random.default_rng(7)
    mixed = []
    for _ in range(2000):
        a, b = (int(i) for i in rng.choice(len(gens), 2, replace=False))
        children = whigham_crossover(gens[a].grow(rng, LIMIT), gens[b].grow(rng, LIMIT), rng, LIMIT)
        if children is None:
            continue
        child = whigham_mutation(children[0], gens[a], rng, LIMIT)
        if _in_no_single_species(child, bounds):
            assert tree_problems_in_any(child, bounds, LIMIT) == [], child.phenotype
            mixed.append(child)
            if len(mixed) == 20:
                break
    assert len(mixed) == 20
    for child in mixed:
        compile_tree(child, grammars[space])


def test_sentinel_defaults_survive_inter_species_crossover(grammars, species_bounds):
    """Species 1 holds RandomForest's <nf_rf> at the sentinel 0, outside the full grammar's range:
    crossed into species 8 trees, such subtrees are valid in the species mixture, not in the full
    grammar, and still compile (the reason species trees are not lifted)."""
    full_grammar = grammars["large"]
    full = full_grammar.bind(YEAST)
    bounds = species_bounds["large"]
    gen1, gen8 = TreeGenerator(bounds[0]), TreeGenerator(bounds[7])
    rng = np.random.default_rng(18)
    found = 0
    for _ in range(3000):
        children = whigham_crossover(gen8.grow(rng, LIMIT), gen1.grow(rng, LIMIT), rng, LIMIT)
        if children is None or not _sentinel_paths(children[0], full_grammar):
            continue
        child = children[0]
        assert tree_problems_in_any(child, bounds, LIMIT) == [], child.phenotype
        assert tree_problems(child, full) != []
        compile_tree(child, full_grammar)
        found += 1
        if found == 5:
            break
    assert found == 5


# -- crossover edge cases ------------------------------------------------------------------------------
TOY = parse_grammar("<s> ::= <a> | <b>\n<a> ::= x <c>\n<b> ::= y <d>\n<c> ::= 1 | 2\n<d> ::= 3 | 4\n", "toy.bnf")


def test_crossover_without_a_common_rule_returns_none():
    a = Node("a", 0, (Leaf("x"), Node("c", 0, (Leaf("1"),))))
    b = Node("b", 0, (Leaf("y"), Node("d", 1, (Leaf("4"),))))
    rng = np.random.default_rng(0)
    assert all(whigham_crossover(a, b, rng) is None for _ in range(50))


def test_crossover_when_only_the_root_is_common():
    """Only a root pick succeeds; with one try the result is either None or the swapped parents."""
    t1 = Node("s", 0, (Node("a", 0, (Leaf("x"), Node("c", 0, (Leaf("1"),)))),))
    t2 = Node("s", 1, (Node("b", 0, (Leaf("y"), Node("d", 1, (Leaf("4"),)))),))
    rng = np.random.default_rng(1)
    outcomes = Counter()
    for _ in range(300):
        result = whigham_crossover(t1, t2, rng, max_tries=1)
        assert result is None or result == (t2, t1)
        outcomes[result is None] += 1
    assert 50 < outcomes[False] < 110  # root chosen with probability 1/3
    assert whigham_crossover(t1, t2, rng, max_depth=2) is None  # parents deeper than the limit


def test_crossover_respects_a_small_max_depth():
    bound = RECURSIVE.bind()
    gen = TreeGenerator(bound)
    rng = np.random.default_rng(4)
    limit, reached, deeper_without_limit = 5, 0, 0
    for _ in range(300):
        t1, t2 = gen.grow(rng, limit), gen.grow(rng, limit)
        children = whigham_crossover(t1, t2, rng, max_depth=limit)
        if children is None:
            continue
        _check_crossover(t1, t2, children, bound, limit)
        reached += max(c.depth for c in children) == limit
        free = whigham_crossover(t1, t2, rng, max_depth=100)
        deeper_without_limit += free is not None and max(c.depth for c in free) > limit
    assert reached > 30 and deeper_without_limit > 10


def test_mutation_respects_a_small_max_depth():
    bound = RECURSIVE.bind()
    gen = TreeGenerator(bound)
    rng = np.random.default_rng(5)
    depths = Counter()
    for _ in range(300):
        mutant = whigham_mutation(gen.grow(rng, 4), gen, rng, max_depth=4)
        assert tree_problems(mutant, bound, 4) == []
        depths[mutant.depth] += 1
    assert depths[4] > 0 and depths[1] > 0


# -- mutation ------------------------------------------------------------------------------------------
class RecordingGenerator(TreeGenerator):
    def grow(self, rng, max_depth=100, symbol=None, path=()):
        self.calls.append((symbol, path, max_depth))
        return super().grow(rng, max_depth, symbol, path)


def test_mutation_picks_every_node_uniformly(grammars):
    bound = grammars["small"].bind(YEAST)
    gen = RecordingGenerator(bound)
    gen.calls = []
    tree = gen.grow(np.random.default_rng(2))
    gen.calls = []
    paths = nonterminal_paths(tree)
    rng = np.random.default_rng(3)
    draws = 200 * len(paths)
    for _ in range(draws):
        whigham_mutation(tree, gen, rng)
    counts = Counter(path for _, path, _ in gen.calls)
    assert set(counts) == set(paths)  # the root and the nodes just above the leaves alike
    assert all(0.7 < c / 200 < 1.3 for c in counts.values()), counts
    for symbol, path, max_depth in gen.calls:
        assert symbol == tree[path].rule and max_depth == 100 - len(path)


def test_mutation_leaves_the_tree_unchanged_when_nothing_can_be_regrown(grammars):
    tree = Node("s", 0, (Node("a", 0, (Leaf("x"), Node("c", 0, (Leaf("1"),)))),))
    other = TreeGenerator(grammars["small"].bind(YEAST))  # no rule in common
    rng = np.random.default_rng(0)
    assert whigham_mutation(tree, other, rng) is tree
    toy = TreeGenerator(TOY.bind())
    assert whigham_mutation(tree, toy, rng, max_depth=1) is tree  # no room: every rule needs depth >= 1
    mutants = {whigham_mutation(tree, toy, rng, max_depth=3).phenotype for _ in range(50)}
    assert mutants == {"x 1", "x 2", "y 3", "y 4"}


def test_mutation_of_a_fixed_rule_gives_the_same_tree(species_grammars):
    """Species 1 fixes <pred_tshd> to PCut1: regrowing it changes nothing (callers retry)."""
    sp = species_grammars["small", 1]
    gen = RecordingGenerator(sp.bind(YEAST))
    gen.calls = []
    tree = gen.grow(np.random.default_rng(0))
    gen.calls = []
    rng = np.random.default_rng(1)
    for _ in range(200):
        before = len(gen.calls)
        mutant = whigham_mutation(tree, gen, rng)
        symbol = gen.calls[before][0]
        if symbol == "pred_tshd":
            assert mutant == tree
            break
    else:
        pytest.fail("<pred_tshd> never chosen")


# -- determinism ---------------------------------------------------------------------------------------
def test_same_seed_same_children(grammars):
    gen = TreeGenerator(grammars["large"].bind(YEAST))
    parents = [gen.grow(np.random.default_rng(i)) for i in range(20)]

    def run(seed):
        rng = np.random.default_rng(seed)
        out = []
        for t1, t2 in zip(parents, parents[1:]):
            out.append(whigham_crossover(t1, t2, rng))
            out.append(whigham_mutation(t1, gen, rng))
        return out

    assert run(1) == run(1)
    assert run(1) != run(2)

"""Random derivations: validity, parse-back, depth limits, weights, determinism."""
from __future__ import annotations

import pickle
from collections import Counter

import numpy as np
import pytest
from scipy.stats import chisquare

from ggp_automl.gp.bnf_parser import parse_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.phenotype import all_parses, parse_phenotype
from ggp_automl.gp.species import SPECIES, make_species
from ggp_automl.gp.tree import Leaf, Node
from ggp_automl.gp.validity import tree_problems
from .conftest import SPACES, TINY, YEAST


def _check_many(grammar, meta, n, seed, max_depth=100):
    bound = grammar.bind(meta)
    gen = TreeGenerator(bound)
    rng = np.random.default_rng(seed)
    trees = gen.ramped_half_and_half(n // 2, rng, max_depth=max_depth, unique=False)
    trees += [gen.grow(rng, max_depth) for _ in range(n - len(trees))]
    for tree in trees:
        problems = tree_problems(tree, bound, max_depth)
        assert not problems, (tree.phenotype, problems)
        parses = all_parses(tree.phenotype, bound)
        assert parses == [tree], tree.phenotype  # parses back, and uniquely
    return trees


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("meta", [YEAST, TINY], ids=["yeast", "tiny"])
def test_1000_derivations_per_grammar_are_valid(grammars, space, meta):
    _check_many(grammars[space], meta, 1000, seed=11)


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("species", sorted(SPECIES))
def test_1000_derivations_per_species_are_valid(grammars, space, species):
    _check_many(make_species(grammars[space], species), YEAST, 1000, seed=species)


@pytest.mark.parametrize("space", SPACES)
def test_depth_limits_are_respected(grammars, space):
    g = grammars[space]
    a = g.analysis
    lo, hi = a.min_depth[g.start], int(a.max_depth[g.start])
    gen = TreeGenerator(g.bind(YEAST))
    rng = np.random.default_rng(5)
    for limit in range(lo, hi + 1):
        # full goes as deep as the grammar allows within the limit
        reachable = max(min(mx, limit) for mn, mx in zip(a.alt_min_depth[g.start], a.alt_max_depth[g.start])
                        if mn <= limit)
        for _ in range(30):
            assert gen.grow(rng, limit).depth <= limit
            assert gen.full(rng, limit).depth == reachable
    with pytest.raises(ValueError, match="below the grammar's minimum depth"):
        gen.ramped_half_and_half(4, rng, max_depth=lo - 1)


def test_ramped_half_and_half_ramps_and_rejects_duplicates(grammars):
    g = grammars["large"]
    gen = TreeGenerator(g.bind(YEAST))
    trees = gen.ramped_half_and_half(80, np.random.default_rng(1))
    assert len({t.phenotype for t in trees}) == 80
    depths = Counter(t.depth for t in trees)
    assert len(depths) >= 4  # a spread of depths, not all maximal


@pytest.mark.parametrize("space", SPACES)
def test_same_seed_same_trees(grammars, space):
    g = grammars[space]
    runs = []
    for _ in range(2):
        gen = TreeGenerator(g.bind(YEAST))
        runs.append([t.phenotype for t in gen.ramped_half_and_half(40, np.random.default_rng(42))])
    assert runs[0] == runs[1]
    other = TreeGenerator(g.bind(YEAST)).ramped_half_and_half(40, np.random.default_rng(43))
    assert [t.phenotype for t in other] != runs[0]


def _outermost_algorithms(tree: Node) -> tuple[str, str | None]:
    """(first MLC token, first token of the outermost <ALGS-SLC> or None)."""
    mlc = next(tree.leaves()).text
    for _, node in tree.nodes():
        if node.rule == "ALGS-SLC":
            return mlc, next(node.leaves()).text
    return mlc, None


@pytest.mark.parametrize("space, n_mlc, n_slc", [("small", 5, 5), ("medium", 15, 15), ("large", 26, 28)])
def test_weights_make_every_algorithm_equally_likely(grammars, space, n_mlc, n_slc):
    """Decision 6: a chi-square test over 10,000 draws, top-level MLC and SLC algorithm."""
    gen = TreeGenerator(grammars[space].bind(YEAST))
    rng = np.random.default_rng(2024)
    mlc, slc = Counter(), Counter()
    for _ in range(10_000):
        m, s = _outermost_algorithms(gen.grow(rng))
        mlc[m] += 1
        if s is not None:
            slc[s] += 1
    assert len(mlc) == n_mlc, sorted(mlc)
    assert len(slc) == n_slc, sorted(slc)
    assert chisquare(list(mlc.values())).pvalue > 1e-3, mlc
    assert chisquare(list(slc.values())).pvalue > 1e-3, slc


def test_uniform_weights_would_fail_the_chi_square():
    """The weight test has teeth: the unweighted Large grammar is far from uniform."""
    from .conftest import GRAMMARS

    text = GRAMMARS.joinpath("large.bnf").read_text()
    import re

    unweighted = parse_grammar(re.sub(r"@\s*(auto\b|[0-9.]+)", "", text), "unweighted.bnf")
    gen = TreeGenerator(unweighted.bind(YEAST))
    rng = np.random.default_rng(2024)
    counts = Counter(_outermost_algorithms(gen.grow(rng))[0] for _ in range(5000))
    assert chisquare(list(counts.values())).pvalue < 1e-6


def test_weights_are_honoured_in_proportion():
    g = parse_grammar("<s> ::= a @ 1 | b @ 2 | c @ 7\n", "w.bnf")
    gen = TreeGenerator(g.bind())
    rng = np.random.default_rng(0)
    counts = Counter(gen.grow(rng).phenotype for _ in range(10_000))
    observed = [counts["a"], counts["b"], counts["c"]]
    assert chisquare(observed, [1000, 2000, 7000]).pvalue > 1e-3


def test_sampled_numbers_respect_open_bounds_log_scale_and_expressions():
    text = ("<s> ::= RANDOM-REAL(>0, <1) RANDOM-REAL(0.001, 1000, log) RANDOM-INT(1, floor(sqrt(L)) + 1)"
            " RANDOM-INT(1, 100000, log)\n")
    g = parse_grammar(text, "n.bnf")
    bound = g.bind(YEAST)
    gen = TreeGenerator(bound)
    rng = np.random.default_rng(3)
    values = np.array([[leaf.value for leaf in gen.grow(rng).leaves()] for _ in range(4000)], dtype=float)
    assert ((0 < values[:, 0]) & (values[:, 0] < 1)).all()
    assert ((0.001 <= values[:, 1]) & (values[:, 1] <= 1000)).all()
    assert abs(np.median(np.log10(values[:, 1]))) < 0.2  # log-uniform: median near 10^0
    assert set(values[:, 2].astype(int)) == {1, 2, 3, 4}  # floor(sqrt(14)) + 1 = 4
    assert np.median(values[:, 3]) < 1000  # log-uniform integers favour small values


def test_trees_pickle_and_compare_by_value(grammars):
    gen = TreeGenerator(grammars["large"].bind(YEAST))
    tree = gen.grow(np.random.default_rng(9))
    clone = pickle.loads(pickle.dumps(tree))
    assert clone == tree and hash(clone) == hash(tree)
    assert clone.phenotype == tree.phenotype
    g2 = pickle.loads(pickle.dumps(grammars["small"]))
    assert g2.analysis.combinations == 21


def test_parse_phenotype_rejects_foreign_text(grammars):
    from ggp_automl.gp.errors import PhenotypeError

    bound = grammars["small"].bind(YEAST)
    with pytest.raises(PhenotypeError, match="not derivable"):
        parse_phenotype("BR NoSuchLearner PCut1", bound)
    with pytest.raises(PhenotypeError, match="not derivable"):
        parse_phenotype("", bound)


def test_ambiguous_phenotypes_are_reported():
    from ggp_automl.gp.errors import PhenotypeError

    g = parse_grammar("<s> ::= <a> <b>\n<a> ::= x | EMPTY\n<b> ::= x | EMPTY\n", "amb.bnf")
    with pytest.raises(PhenotypeError, match="ambiguous"):
        parse_phenotype("x", g.bind())


def test_numbers_out_of_range_do_not_parse(grammars):
    from ggp_automl.gp.errors import PhenotypeError

    g = parse_grammar("<s> ::= k RANDOM-INT(1, 5)\n", "r.bnf")
    assert parse_phenotype("k 5", g.bind()) == Node("s", 0, (Leaf("k"), Leaf(5)))
    with pytest.raises(PhenotypeError):
        parse_phenotype("k 6", g.bind())


def test_the_generator_draws_as_it_always_did(grammars):
    """Expansion keeps its own stack now; the draws (and the README's examples) are unchanged."""
    from ggp_automl.evaluation import default_data

    gen = TreeGenerator(grammars["small"].bind(default_data.META))
    rng = np.random.default_rng(1)
    assert [gen.grow(rng).phenotype for _ in range(2)] == [
        "RAkEL 2 1 4 5 JRip 2.6933057958903026 up 4 PCut1", "LC JRip 4.153714813713617 cer up 3 PCut1"]


@pytest.mark.parametrize("mode", ["grow", "full"])
def test_an_exploding_recursive_grammar_stays_within_the_node_limit(mode):
    from ggp_automl.gp.generate import MAX_TREE_NODES

    g = parse_grammar("<e> ::= <e> <e> <e> | x RANDOM-INT(1, 3)\n", "boom.bnf")  # full at depth 100: 3^100 nodes
    bound = g.bind()
    rng = np.random.default_rng(0)
    for _ in range(5):
        tree = getattr(TreeGenerator(bound), mode)(rng, 100)
        assert tree.size <= MAX_TREE_NODES
        assert not tree_problems(tree, bound, 100)
    assert mode == "grow" or tree.size > MAX_TREE_NODES - 10  # full fills the limit


def test_deep_trees_need_no_recursion():
    g = parse_grammar("<s> ::= <e>\n<e> ::= a <e> | b\n", "deep.bnf")
    tree = TreeGenerator(g.bind()).full(np.random.default_rng(0), 5000)
    assert tree.depth == 5000 and tree.size == 1 + 4999 + 4999  # <s>, the <e> nodes, their leaves
    assert tree.phenotype == "a " * 4998 + "b"
    deepest = (0,) + (1,) * 4998
    assert tree[deepest] == Node("e", 1, (Leaf("b"),))
    assert tree.replace(deepest, Node("e", 1, (Leaf("c"),))).phenotype.endswith("a c")
    assert len(tree.render().splitlines()) == 1 + 2 * 4998 + 1 and not tree_problems(tree, g.bind(), 5000)

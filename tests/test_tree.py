"""Derivation-tree structure: addressing, replacement, renderings and exports."""
from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from ggp_automl.gp.bnf_parser import parse_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.tree import Leaf, Node

TOY = parse_grammar("<s> ::= <a> [ <b> ] k\n<a> ::= x RANDOM-INT(1, 9)\n<b> ::= y | z\n", "toy.bnf")


@pytest.fixture()
def tree() -> Node:
    return Node("s", 0, (Node("a", 0, (Leaf("x"), Leaf(3))), Node("s~1", 0, (Node("b", 1, (Leaf("z"),)),)),
                         Leaf("k")))


def test_depth_size_and_phenotype(tree):
    assert tree.depth == 3
    assert tree.size == 8
    assert tree.phenotype == "x 3 z k"
    assert str(tree) == tree.phenotype


def test_walk_is_preorder_with_stable_paths(tree):
    paths = [p for p, _ in tree.walk()]
    assert paths == [(), (0,), (0, 0), (0, 1), (1,), (1, 0), (1, 0, 0), (2,)]
    for path, node in tree.walk():
        assert tree[path] is node
    assert [p for p, _ in tree.nodes()] == [(), (0,), (1,), (1, 0)]


def test_replace_returns_a_new_tree_and_shares_the_rest(tree):
    new = tree.replace((1, 0), Node("b", 0, (Leaf("y"),)))
    assert new.phenotype == "x 3 y k"
    assert tree.phenotype == "x 3 z k"  # unchanged
    assert new.children[0] is tree.children[0]
    with pytest.raises(ValueError):
        tree.replace((), Leaf("q"))
    with pytest.raises(KeyError):
        _ = tree[(2, 0)]


def test_render_folds_synthetic_nodes(tree):
    text = tree.render()
    assert text.splitlines() == ["<s>", "  <a> x 3", "  <b> z", "  k"]
    assert "<s~1>" in tree.render(show_synthetic=True)


def test_networkx_export(tree):
    g = tree.to_networkx()
    assert isinstance(g, nx.DiGraph)
    assert g.number_of_nodes() == tree.size
    assert nx.is_arborescence(g)
    assert g.nodes["root"]["label"] == "<s>"
    assert g.nodes["0.1"]["value"] == 3


def test_dot_export(tree):
    dot = tree.to_dot()
    assert dot.startswith('digraph "derivation" {')
    assert dot.count("->") == tree.size - 1
    assert 'label="<s>"' in dot and 'label="3"' in dot


def test_real_leaves_round_trip_through_text():
    for value in (0.1, 1e-12, 2.5e10, 0.30000000000000004):
        assert float(Leaf(value).text) == value


def test_generated_tree_exports(grammars):
    from .conftest import YEAST

    tree = TreeGenerator(grammars["large"].bind(YEAST)).grow(np.random.default_rng(0))
    assert tree.to_networkx().number_of_nodes() == tree.size
    assert tree.to_dot().count("->") == tree.size - 1

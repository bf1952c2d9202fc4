"""Grammar-based GP operators: Whigham crossover and mutation.

Why a module of its own: the operators are the only place where trees are cut and
re-joined, so the rules that keep a child a valid derivation live here and nowhere
else: swap only subtrees expanded from the same rule, regrow only from a rule with
the generator's grammar, and never exceed the depth limit (methods notes §1.2).

Speciated GGP (§1.3) does not lift species trees into the full grammar: a species
grammar may fix a hyper-parameter at a *sentinel* default (e.g. RandomForest's
``<nf_rf>`` = 0) that lies outside the full grammar's range, so no full-grammar tree
can hold it. A species tree keeps its own grammar's alternative numbers; crossover
matches nodes by rule name only, so after inter-species crossover a tree mixes
subtrees of several species grammars and is valid when every node is a valid
expansion of its rule in one of them (:func:`gp.validity.tree_problems_in_any`).

All randomness comes from the ``numpy.random.Generator`` passed in; uniform picks
use ``rng.integers``. GGP and spGGP reach these through their DEAP toolbox, where they are
the default ``mate`` and ``mutate`` a user may replace (:mod:`ggp_automl.search.methods.toolbox`).
"""
from __future__ import annotations

import numpy as np

from .generate import DEFAULT_MAX_DEPTH, TreeGenerator
from .tree import Node, Path

__all__ = ["nonterminal_paths", "whigham_crossover", "whigham_mutation"]


def nonterminal_paths(tree: Node) -> list[Path]:
    """Every non-terminal's path, the root ``()`` included, in pre-order."""
    return [path for path, _ in tree.nodes()]


def _indexed(tree: Node) -> list[tuple[Path, Node, int]]:
    """``(path, node, depth)`` of every non-terminal in pre-order (depths computed once)."""
    out: list[tuple[Path, Node, int]] = []

    def visit(node: Node, path: Path) -> int:
        slot = len(out)
        out.append((path, node, 0))
        depth = 1
        for i, child in enumerate(node.children):
            if isinstance(child, Node):
                depth = max(depth, 1 + visit(child, path + (i,)))
        out[slot] = (path, node, depth)
        return depth

    visit(tree, ())
    return out


def whigham_crossover(t1: Node, t2: Node, rng: np.random.Generator, max_depth: int = DEFAULT_MAX_DEPTH,
                      max_tries: int = 10) -> tuple[Node, Node] | None:
    """Swap a random subtree of ``t1`` with a subtree of ``t2`` expanded from the same rule.

    A node of ``t1`` is chosen uniformly (root included); the nodes of ``t2`` with the
    same rule whose swap keeps both children within ``max_depth`` are the candidates,
    one of which is chosen uniformly. Without candidates a fresh node of ``t1`` is
    drawn, up to ``max_tries`` times. Returns both children, or None when no swap point
    was found (the caller then retries with another mate).
    """
    nodes1, nodes2 = _indexed(t1), _indexed(t2)
    by_rule: dict[str, list[tuple[Path, Node, int]]] = {}
    for entry in nodes2:
        by_rule.setdefault(entry[1].rule, []).append(entry)
    for _ in range(max_tries):
        p1, s1, d1 = nodes1[int(rng.integers(len(nodes1)))]
        matches = [(p2, s2) for p2, s2, d2 in by_rule.get(s1.rule, ())
                   if len(p1) + d2 <= max_depth and len(p2) + d1 <= max_depth]
        if matches:
            p2, s2 = matches[int(rng.integers(len(matches)))]
            return t1.replace(p1, s2), t2.replace(p2, s1)
    return None


def whigham_mutation(tree: Node, generator: TreeGenerator, rng: np.random.Generator,
                     max_depth: int = DEFAULT_MAX_DEPTH) -> Node:
    """Regrow (with *grow*) the subtree of a random non-terminal from its own rule.

    The node is chosen uniformly among those (root included) whose rule exists in the
    generator's grammar and can be derived in the depth left at the node; the regrown
    subtree keeps the generator's alternative numbers. Returns ``tree`` itself when
    no node can be regrown. A rule with a single fixed alternative regrows the same
    subtree; callers that need a different tree retry.
    """
    grammar = generator.bound.grammar
    min_depth = grammar.analysis.min_depth
    candidates = [(path, node) for path, node in tree.nodes()
                  if node.rule in grammar and len(path) + min_depth[node.rule] <= max_depth]
    if not candidates:
        return tree
    path, node = candidates[int(rng.integers(len(candidates)))]
    subtree = generator.grow(rng, max_depth - len(path), symbol=node.rule, path=path)
    return tree.replace(path, subtree)

"""Is a tree a valid derivation of a (bound) grammar?

Used by tests, by operators' sanity checks and when trees come from outside
(a checkpoint, a phenotype typed by a user). Returns readable problems, never raises.
A sampled number must be one its sampler can produce (:meth:`gp.binding.BoundGrammar.contains`):
within the bounds and, for a ``RANDOM-REAL`` with a ``step``, on the grid (within 10^-9 of a step).
"""
from __future__ import annotations

from .binding import BoundGrammar
from .grammar import NonTerminal, Sampler, Terminal
from .tree import Leaf, Node


def tree_problems(tree: Node, grammar: BoundGrammar, max_depth: int | None = None,
                  root: str | None = None) -> list[str]:
    problems: list[str] = []
    g = grammar.grammar
    expected_root = root or g.start
    if not isinstance(tree, Node) or tree.rule != expected_root:
        return [f"root is {getattr(tree, 'rule', tree)!r}, expected <{expected_root}>"]
    if max_depth is not None and tree.depth > max_depth:
        problems.append(f"depth {tree.depth} exceeds the limit {max_depth}")
    for path, node in tree.nodes():
        problems += _node_problems(path, node, grammar)
    return problems


def is_valid(tree: Node, grammar: BoundGrammar, max_depth: int | None = None) -> bool:
    return not tree_problems(tree, grammar, max_depth)


def _node_problems(path, node: Node, grammar: BoundGrammar) -> list[str]:
    """Problems of one node's own expansion (its children's expansions are checked separately)."""
    problems: list[str] = []
    g = grammar.grammar
    where = ".".join(map(str, path)) or "root"
    if node.rule not in g:
        problems.append(f"{where}: unknown rule <{node.rule}>")
        return problems
    alts = g[node.rule].alternatives
    if not 0 <= node.alt < len(alts):
        problems.append(f"{where}: <{node.rule}> has no alternative {node.alt}")
        return problems
    items = alts[node.alt].items
    if len(items) != len(node.children):
        problems.append(f"{where}: <{node.rule}> alternative {node.alt} has {len(items)} items, "
                        f"the node has {len(node.children)} children")
        return problems
    for i, (item, child) in enumerate(zip(items, node.children)):
        if isinstance(item, NonTerminal):
            if not isinstance(child, Node) or child.rule != item.name:
                problems.append(f"{where}.{i}: expected <{item.name}>, found {child}")
        elif isinstance(item, Terminal):
            if not isinstance(child, Leaf) or child.value != item.text:
                problems.append(f"{where}.{i}: expected terminal {item.text!r}, found {child}")
        elif isinstance(item, Sampler):
            ok_type = isinstance(child, Leaf) and isinstance(child.value, (int, float)) \
                and not isinstance(child.value, bool)
            if not ok_type or not grammar.contains((node.rule, node.alt, i), child.value):
                lo, hi = grammar.range_of((node.rule, node.alt, i))
                grid = f" in steps of {item.step!r}" if item.step is not None else ""
                problems.append(f"{where}.{i}: {child} is not a value of {item} (= [{lo}, {hi}]{grid})")
    return problems


def tree_problems_in_any(tree: Node, grammars: list[BoundGrammar], max_depth: int | None = None) -> list[str]:
    """Like :func:`tree_problems`, but each node may be an expansion of its rule in any of ``grammars``.

    Speciated GGP's trees after inter-species crossover mix subtrees derived from
    different species grammars (the same rule names, different fixed defaults).
    """
    if not grammars:
        raise ValueError("no grammar given")
    problems: list[str] = []
    start = grammars[0].grammar.start
    if not isinstance(tree, Node) or tree.rule != start:
        return [f"root is {getattr(tree, 'rule', tree)!r}, expected <{start}>"]
    if max_depth is not None and tree.depth > max_depth:
        problems.append(f"depth {tree.depth} exceeds the limit {max_depth}")
    for path, node in tree.nodes():
        found = [_node_problems(path, node, g) for g in grammars]
        if all(found):
            problems += found[-1]
    return problems

"""Grammar analysis, computed once per grammar and memoised.

Reachability, recursion, minimum and maximum derivation depth per rule and per
alternative (the generator needs them at every node), the number of algorithm
combinations and an estimate of the configuration count. Each is a single pass or
a small fixpoint over the rules (PonyGE2's analyser needed hours on large grammars
until it was memoised); ``check`` on the Large grammar runs in well under a second.

*Algorithm combinations* are the distinct trees left when every annotated
hyper-parameter is held at its default, i.e. when only structural (``alg``) choices
vary: exactly the trees of species 1. *Configurations* count every choice, with an
integer range counting each of its values and a real range counting
:data:`REAL_LEVELS` values, as the thesis does for Tables 5.3/5.4.
"""
from __future__ import annotations

import math
from functools import cached_property

import networkx as nx

from .binding import DatasetMeta
from .grammar import Grammar, NonTerminal, Rule, Sampler

REAL_LEVELS = 100
INF = math.inf


def default_alternative(rule: Rule) -> int | None:
    """The alternative a fixed hyper-parameter keeps, or None when its default is a new literal."""
    ann = rule.annotation
    if ann is None or ann.default is None:
        return None
    if isinstance(ann.default, int):
        return ann.default
    text = " ".join(ann.default) if ann.default else "EMPTY"
    for i, alt in enumerate(rule.alternatives):
        if alt.text == text:
            return i
    return None


class GrammarAnalysis:
    def __init__(self, grammar: Grammar):
        self.grammar = grammar
        self._config_counts: dict[DatasetMeta | None, dict[str, float]] = {}

    # -- structure -------------------------------------------------------------
    @cached_property
    def graph(self) -> nx.DiGraph:
        g = nx.DiGraph()
        for rule in self.grammar:
            g.add_node(rule.name)
            for alt in rule.alternatives:
                for n in alt.nonterminals():
                    g.add_edge(rule.name, n)
        return g

    @cached_property
    def reachable(self) -> frozenset[str]:
        return frozenset(nx.descendants(self.graph, self.grammar.start) | {self.grammar.start})

    @cached_property
    def unreachable(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.grammar if r.name not in self.reachable)

    @cached_property
    def recursive(self) -> frozenset[str]:
        """Rules that can derive themselves."""
        out: set[str] = set()
        for comp in nx.strongly_connected_components(self.graph):
            if len(comp) > 1 or any(self.graph.has_edge(n, n) for n in comp):
                out |= comp
        return frozenset(out)

    @cached_property
    def is_recursive(self) -> bool:
        return bool(self.recursive & self.reachable)

    # -- depth -----------------------------------------------------------------
    @cached_property
    def min_depth(self) -> dict[str, int]:
        """Smallest depth of a complete derivation tree rooted at each rule."""
        depth: dict[str, float] = {r.name: INF for r in self.grammar}
        changed = True
        while changed:
            changed = False
            for rule in self.grammar:
                best = min(self._alt_depth(alt, depth) for alt in rule.alternatives)
                if best < depth[rule.name]:
                    depth[rule.name] = best
                    changed = True
        return {k: int(v) for k, v in depth.items()}

    @cached_property
    def max_depth(self) -> dict[str, float]:
        """Largest depth of a derivation tree rooted at each rule (inf when recursive)."""
        depth: dict[str, float] = {}
        can_reach_recursion = {n for n in self.graph if any(
            d in self.recursive for d in nx.descendants(self.graph, n) | {n})}
        for name in reversed(list(nx.topological_sort(self.graph.subgraph(
                set(self.graph) - can_reach_recursion)))):
            rule = self.grammar[name]
            depth[name] = max(self._alt_depth(alt, depth) for alt in rule.alternatives)
        for name in can_reach_recursion:
            depth[name] = INF
        return depth

    @staticmethod
    def _alt_depth(alt, table) -> float:
        inner = [table[n] for n in alt.nonterminals()]
        return 1 + (max(inner) if inner else 0)

    @cached_property
    def alt_min_depth(self) -> dict[str, tuple[int, ...]]:
        md = self.min_depth
        return {r.name: tuple(int(self._alt_depth(a, md)) for a in r.alternatives) for r in self.grammar}

    @cached_property
    def alt_max_depth(self) -> dict[str, tuple[float, ...]]:
        md = self.max_depth
        return {r.name: tuple(self._alt_depth(a, md) for a in r.alternatives) for r in self.grammar}

    # -- counts ----------------------------------------------------------------
    def _count_trees(self, alternatives_of, sampler_values) -> dict[str, float]:
        """Trees per reachable rule: sum over ``alternatives_of(rule)`` of the product of the items.

        ``alternatives_of`` returns the alternative indices to count, or None for a rule
        replaced by a literal (one tree). ``sampler_values(rule, alt, item, sampler)`` is how many values a sampled terminal
        contributes. Recursive rules have infinitely many trees.
        """
        memo: dict[str, float] = {}

        def count(name: str) -> float:
            if name not in memo:
                if name in self.recursive:
                    memo[name] = INF
                else:
                    rule = self.grammar[name]
                    alternatives = alternatives_of(rule)
                    total = 1 if alternatives is None else 0  # None: replaced by a literal, one tree
                    for a in alternatives or ():
                        product = 1
                        for i, item in enumerate(rule.alternatives[a].items):
                            if isinstance(item, NonTerminal):
                                product *= count(item.name)
                            elif isinstance(item, Sampler):
                                product *= sampler_values(name, a, i, item)
                        total += product
                    memo[name] = total
            return memo[name]

        for name in self.reachable:
            count(name)
        return memo

    @cached_property
    def combinations(self) -> float:
        """Number of algorithm combinations (trees with every hyper-parameter at its default)."""
        def alternatives_of(rule: Rule) -> list[int] | None:
            if rule.kind == "alg":
                return list(range(len(rule.alternatives)))
            k = default_alternative(rule)
            return None if k is None else [k]

        return self._count_trees(alternatives_of, lambda *_: 1)[self.grammar.start]

    def configurations(self, meta: DatasetMeta | None = None, rule: str | None = None) -> float:
        """Configuration count (reals as :data:`REAL_LEVELS` values) of the grammar or one rule."""
        if meta not in self._config_counts:
            bound = self.grammar.bind(meta)

            def values(name: str, a: int, i: int, s: Sampler) -> float:
                lo, hi = bound.range_of((name, a, i))
                return int(hi - lo + 1) if s.kind == "int" else REAL_LEVELS

            self._config_counts[meta] = self._count_trees(lambda r: range(len(r.alternatives)), values)
        return self._config_counts[meta][rule or self.grammar.start]

    # -- hyper-parameters ------------------------------------------------------
    @cached_property
    def hyperparameters(self) -> dict[str, tuple[str, ...]]:
        """Annotated rules reachable from the start, grouped by kind."""
        out: dict[str, list[str]] = {}
        for rule in self.grammar:
            if rule.annotation and rule.kind != "alg" and rule.name in self.reachable:
                out.setdefault(rule.kind, []).append(rule.name)
        return {k: tuple(v) for k, v in out.items()}

    def summary(self, meta: DatasetMeta | None = None) -> dict[str, object]:
        g = self.grammar
        n_terminals = len({str(i) for r in g for a in r.alternatives for i in a.items
                           if not isinstance(i, NonTerminal)})
        info: dict[str, object] = {
            "rules": sum(1 for r in g if not r.synthetic),
            "synthetic rules (groups/optionals)": sum(1 for r in g if r.synthetic),
            "distinct terminals": n_terminals,
            "start": f"<{g.start}>",
            "unreachable": [f"<{n}>" for n in self.unreachable],
            "recursive": sorted(f"<{n}>" for n in self.recursive),
            "min depth": self.min_depth[g.start],
            "max depth": self.max_depth[g.start],
            "algorithm combinations": self.combinations,
            "hyper-parameters": {k: len(v) for k, v in sorted(self.hyperparameters.items())},
        }
        if meta is not None or not g.dataset_variables:
            info["configurations (reals = 100 values)"] = self.configurations(meta)
        return info

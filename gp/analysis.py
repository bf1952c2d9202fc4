"""Grammar analysis, computed once per grammar and memoised.

Reachability, recursion, minimum and maximum derivation depth per rule and per
alternative (the generator needs them at every node), the number of algorithm
combinations and an estimate of the configuration count. Each is a single pass over
the rules in a suitable order (PonyGE2's analyser needed hours on large grammars
until it was memoised); ``check`` on the Large grammar runs in well under a second.

Grammar files are untrusted, so nothing here recurses along the grammar (a chain of
20,000 rules would exhaust Python's stack) or iterates to a fixpoint rule by rule
(quadratic on such a chain), and counts saturate at :data:`COUNT_CAP`: a 30-line
grammar whose count squares at every rule has a count with a billion digits.

*Algorithm combinations* are the distinct trees left when every annotated
hyper-parameter is held at its default, i.e. when only structural (``alg``) choices
vary: exactly the trees of species 1. *Configurations* count every choice, with an
integer range counting each of its values and a real range counting
:data:`REAL_LEVELS` values, as the thesis does for Tables 5.3/5.4, unless it has a
``step``: a grid counts its values (``RANDOM-REAL(0.05, 5.0, step=0.05)`` counts 100).
"""
from __future__ import annotations

import math
from functools import cached_property
from typing import TYPE_CHECKING

from .binding import DatasetMeta
from .grammar import Grammar, NonTerminal, Rule, Sampler, minimum_trees

if TYPE_CHECKING:  # pragma: no cover
    import networkx as nx

REAL_LEVELS = 100
INF = math.inf
#: Counts at or above this are shown as "more than 1e+300" (below the largest float, so they print).
COUNT_CAP = 10 ** 300


def _capped(value: float) -> float:
    return value if value == INF or value < COUNT_CAP else COUNT_CAP


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
        # networkx (0.2 s to import) is imported when a grammar is first analysed, not with the
        # package ``gp``, which imports this module so that Grammar.analysis works (grammar.py)
        import networkx as nx

        g = nx.DiGraph()
        for rule in self.grammar:
            g.add_node(rule.name)
            for alt in rule.alternatives:
                for n in alt.nonterminals():
                    g.add_edge(rule.name, n)
        return g

    @cached_property
    def reachable(self) -> frozenset[str]:
        import networkx as nx

        return frozenset(nx.descendants(self.graph, self.grammar.start) | {self.grammar.start})

    @cached_property
    def unreachable(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.grammar if r.name not in self.reachable)

    @cached_property
    def recursive(self) -> frozenset[str]:
        """Rules that can derive themselves."""
        import networkx as nx

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
    def _minimum_trees(self) -> tuple[dict[str, int], dict[str, int]]:
        return minimum_trees(self.grammar)

    @cached_property
    def min_depth(self) -> dict[str, int]:
        """Smallest depth of a complete derivation tree rooted at each rule."""
        return self._minimum_trees[0]

    @cached_property
    def min_tree_size(self) -> dict[str, int]:
        """Nodes and leaves of the shallowest (then smallest) tree of each rule: what the generator reserves."""
        return self._minimum_trees[1]

    @cached_property
    def alt_min_tree_size(self) -> dict[str, tuple[int, ...]]:
        size = self.min_tree_size
        return {r.name: tuple(1 + sum(size[i.name] if isinstance(i, NonTerminal) else 1 for i in a.items)
                              for a in r.alternatives) for r in self.grammar}

    @cached_property
    def max_depth(self) -> dict[str, float]:
        """Largest depth of a derivation tree rooted at each rule (inf when it can reach recursion)."""
        import networkx as nx

        depth: dict[str, float] = dict.fromkeys(self._reaches_recursion, INF)
        rest = self.graph.subgraph(set(self.graph) - self._reaches_recursion)
        for name in reversed(list(nx.topological_sort(rest))):
            depth[name] = max(self._alt_depth(alt, depth) for alt in self.grammar[name].alternatives)
        return depth

    @cached_property
    def _reaches_recursion(self) -> frozenset[str]:
        """Rules from which a recursive rule is derivable (one backward search from all of them)."""
        out = set(self.recursive)
        stack = list(self.recursive)
        while stack:
            for parent in self.graph.predecessors(stack.pop()):
                if parent not in out:
                    out.add(parent)
                    stack.append(parent)
        return frozenset(out)

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
        replaced by a literal (one tree). ``sampler_values(rule, alt, item, sampler)`` is how
        many values a sampled terminal contributes. Recursive rules have infinitely many
        trees; finite counts saturate at :data:`COUNT_CAP`. Rules are counted after the
        rules they use (an explicit stack: no recursion along the grammar).
        """
        memo: dict[str, float] = {}

        def uses(name: str) -> list[str]:
            rule = self.grammar[name]
            return [n for a in alternatives_of(rule) or () for n in rule.alternatives[a].nonterminals()]

        for root in self.reachable:
            stack = [(root, False)]
            while stack:
                name, ready = stack.pop()
                if name in memo:
                    continue
                if name in self.recursive:
                    memo[name] = INF
                elif not ready:
                    stack.append((name, True))
                    stack.extend((n, False) for n in uses(name) if n not in memo)
                else:
                    memo[name] = self._count_rule(name, alternatives_of, sampler_values, memo)
        return memo

    def _count_rule(self, name: str, alternatives_of, sampler_values, memo: dict[str, float]) -> float:
        rule = self.grammar[name]
        alternatives = alternatives_of(rule)
        total = 1 if alternatives is None else 0  # None: replaced by a literal, one tree
        for a in alternatives or ():
            product = 1
            for i, item in enumerate(rule.alternatives[a].items):
                if isinstance(item, NonTerminal):
                    product = _capped(product * memo[item.name])
                elif isinstance(item, Sampler):
                    product = _capped(product * sampler_values(name, a, i, item))
            total = _capped(total + product)
        return total

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
        """Configuration count (reals as :data:`REAL_LEVELS` values, grids as their own) of the grammar or a rule."""
        if meta not in self._config_counts:
            bound = self.grammar.bind(meta)

            def values(name: str, a: int, i: int, s: Sampler) -> float:
                lo, hi = bound.range_of((name, a, i))
                if s.kind == "int":
                    return int(hi - lo + 1)
                grid = bound.grid_of((name, a, i))
                return REAL_LEVELS if grid is None else len(grid)

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


Grammar.analysis_type = GrammarAnalysis  # what Grammar.analysis builds (grammar.py cannot import this module)

"""Tree generation: grow, full and ramped half-and-half, within depth limits.

All randomness goes through a :class:`~gp.policy.SamplingPolicy` and one explicit
``numpy.random.Generator``: same grammar, policy state and seed, same trees.
Depth follows :attr:`gp.tree.Node.depth` (a node whose children are all terminals
has depth 1). An alternative is allowed at a node only if a complete subtree can be
finished within the remaining depth (precomputed minimum depths), and the whole tree
within :data:`MAX_TREE_NODES`, so generation never backtracks.

The size limit is what keeps a recursive grammar finite in practice: ``full`` on
``<e> ::= <e> <e> | x`` at depth 100 would otherwise build 2^100 nodes. Every
unexpanded non-terminal reserves the size of its shallowest tree
(:func:`gp.grammar.minimum_trees`); an alternative is allowed only if the reserved
total stays within the limit, and the shallowest alternative never increases it, so a
choice always exists (the parser refuses a grammar whose shallowest tree is already
too large). Trees of the shipped grammars are far below the limit, where it changes
nothing. Expansion keeps its own stack instead of recursing, in the same pre-order
(so the same random draws) as the recursive definition.

A ``RANDOM-REAL`` with a ``step`` passes it to the policy, and the number the policy
returns is stored as the grid value nearest to it (:meth:`gp.binding.Grid.nearest`): trees
hold grid values exactly as the grammar computes them, whichever policy drew them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from .binding import BoundGrammar
from .grammar import NonTerminal, Sampler, Terminal
from .policy import ChoiceContext, SamplingPolicy, UniformPolicy
from .tree import Leaf, Node, Path

#: Defaults from the methods notes (thesis §2.1.2; value 100 from the authors' code).
DEFAULT_MIN_DEPTH = 2
DEFAULT_MAX_DEPTH = 100
#: Nodes and leaves of one generated tree (the Large space's trees have under 100).
MAX_TREE_NODES = 10_000

Mode = Literal["grow", "full"]


@dataclass
class TreeGenerator:
    bound: BoundGrammar
    policy: SamplingPolicy = field(default_factory=UniformPolicy)

    def __post_init__(self):
        self._analysis = self.bound.grammar.analysis
        self._reserve = self._analysis.min_tree_size

    # -- public ----------------------------------------------------------------
    def grow(self, rng: np.random.Generator, max_depth: int = DEFAULT_MAX_DEPTH,
             symbol: str | None = None, path: Path = ()) -> Node:
        """Any tree (alternatives chosen by the policy) that fits in ``max_depth``."""
        return self._expand(symbol or self.bound.grammar.start, max_depth, "grow", path, rng)

    def full(self, rng: np.random.Generator, max_depth: int = DEFAULT_MAX_DEPTH,
             symbol: str | None = None, path: Path = ()) -> Node:
        """A tree that reaches ``max_depth`` wherever the grammar allows it to.

        Where no alternative can reach the limit, any alternative that fits is taken (grow).
        """
        return self._expand(symbol or self.bound.grammar.start, max_depth, "full", path, rng)

    def ramped_half_and_half(self, n: int, rng: np.random.Generator, min_depth: int = DEFAULT_MIN_DEPTH,
                             max_depth: int = DEFAULT_MAX_DEPTH, unique: bool = True,
                             max_tries: int = 50) -> list[Node]:
        """``n`` trees, half grow and half full, over depth limits ramped from min to max.

        As in EpochX (the authors' code): tree ``i`` gets the limit
        ``floor(i / per_depth + start)`` with ``per_depth = n / (max - start + 1)`` and
        ``start`` the larger of ``min_depth`` and the grammar's minimum depth. With the
        default maximum of 100 and a non-recursive grammar only the first few trees are
        depth-limited and the rest are unconstrained derivations, so the grammar's
        weights (every algorithm equally likely) hold for the population; clipping the
        ramp to the grammar's own depth range would instead crowd the population with the
        shallowest algorithms. Duplicates (by phenotype) are rejected when ``unique``, up
        to ``max_tries`` redraws per tree (a tiny space may not have ``n`` distinct trees).
        """
        start = self.bound.grammar.start
        if max_depth < self._analysis.min_depth[start]:
            raise ValueError(f"max depth {max_depth} is below the grammar's minimum depth "
                             f"{self._analysis.min_depth[start]}")
        lo = max(min_depth, self._analysis.min_depth[start])
        hi = max(max_depth, lo)
        per_depth = n / (hi - lo + 1)
        trees: list[Node] = []
        seen: set[str] = set()
        for i in range(n):
            depth = min(int(i / per_depth + lo), hi)
            mode: Mode = "grow" if i % 2 == 0 else "full"
            for _ in range(max_tries):
                tree = self._expand(start, depth, mode, (), rng)
                if not unique or tree.phenotype not in seen:
                    break
            seen.add(tree.phenotype)
            trees.append(tree)
        return trees

    # -- internals -------------------------------------------------------------
    def _expand(self, name: str, remaining: int, mode: Mode, path: Path, rng: np.random.Generator) -> Node:
        if self._analysis.min_depth[name] > remaining:
            raise ValueError(f"<{name}> cannot be derived within depth {remaining} "
                             f"(needs {self._analysis.min_depth[name]})")
        # One frame per open node: [rule, alternative, items, next item, children, remaining depth, path, site].
        reserved = [self._reserve[name]]  # nodes and leaves so far plus the reservations of open items
        root = self._open(name, remaining, mode, path, rng, reserved, ())
        stack = [root]
        while True:
            frame = stack[-1]
            rule, alt, items, i, children, depth_left, at, site = frame
            if i == len(items):
                stack.pop()
                node = Node(rule, alt, tuple(children))
                if not stack:
                    return node
                stack[-1][4].append(node)
                continue
            frame[3] = i + 1
            item = items[i]
            if isinstance(item, NonTerminal):
                stack.append(self._open(item.name, depth_left - 1, mode, at + (i,), rng, reserved,
                                        site + ((rule, alt, i),)))
            elif isinstance(item, Terminal):
                children.append(Leaf(item.text))
            else:
                children.append(Leaf(self._sample(rule, alt, i, item, at + (i,), rng, site)))

    def _open(self, name: str, remaining: int, mode: Mode, path: Path, rng: np.random.Generator,
              reserved: list[int], site: tuple) -> list:
        """Choose the alternative of a new node (the reservation of ``name`` becomes that of the alternative)."""
        rule = self.bound.grammar[name]
        mins = self._analysis.alt_min_depth[name]
        sizes = self._analysis.alt_min_tree_size[name]
        own = self._reserve[name]
        slack = MAX_TREE_NODES - reserved[0] + own  # an alternative no larger than the reservation always fits
        allowed = [a for a, d in enumerate(mins) if d <= remaining and sizes[a] <= max(slack, own)]
        if mode == "full" and len(allowed) > 1:
            maxes = self._analysis.alt_max_depth[name]
            deep = [a for a in allowed if maxes[a] >= remaining]
            # When no alternative can reach the limit (a non-recursive grammar under a high
            # limit), full behaves like grow, as in EpochX; preferring the deepest
            # alternatives instead would bias populations towards the most nested algorithms.
            if deep:
                allowed = deep
        ctx = ChoiceContext(name, path, site=site)
        weights = [rule.alternatives[a].weight for a in allowed]
        alt_index = self.policy.choose(ctx, allowed, weights, rng) if len(allowed) > 1 else allowed[0]
        reserved[0] += sizes[alt_index] - own
        return [name, alt_index, rule.alternatives[alt_index].items, 0, [], remaining, path, site]

    def _sample(self, name: str, alt: int, i: int, s: Sampler, path: Path, rng, site: tuple = ()) -> int | float:
        lo, hi = self.bound.range_of((name, alt, i))
        ctx = ChoiceContext(name, path, alt, i, site)
        if s.kind == "int":
            return self.policy.sample_int(ctx, int(lo), int(hi), s.log, rng)
        value = self.policy.sample_real(ctx, lo, hi, s.lo_open, s.hi_open, s.log, rng, step=s.step)
        grid = self.bound.grid_of((name, alt, i))
        # On a grid, the policy's number becomes the grid value it is nearest to: the tree
        # then shows the value as the grammar computes it (0.15, not 0.15000000000000002),
        # and a policy that draws inside bins of a large grid still yields grid values.
        return value if grid is None else grid.nearest(value)

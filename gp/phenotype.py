"""Parse a phenotype string back into its derivation tree.

A phenotype is the space-separated sequence of a tree's terminals, e.g.
``BR RandomForest 100 0 0 PCut1``. It is the cache key of an evaluation, and a user
can write one by hand; this module recovers the (unique) tree that derives it.
The parser is a memoised top-down parser over the token list that returns *all*
parses, so an ambiguous phenotype is reported instead of silently picking one.
A number matches a sampled terminal only if the sampler could have drawn it
(:meth:`gp.binding.BoundGrammar.contains`): a ``RANDOM-REAL`` with a ``step`` takes the
values of its grid (``0.15``, or ``0.15000000000000002`` within 10^-9 of a step), not ``0.17``.
"""
from __future__ import annotations

import re

from .binding import BoundGrammar
from .errors import PhenotypeError
from .grammar import NonTerminal, Sampler, Terminal
from .tree import Leaf, Node

_INT = re.compile(r"[+-]?[0-9]+")  # ASCII digits: \d also takes other scripts
_REAL = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_MAX_PARTIAL = 10_000


def parse_phenotype(text: str, grammar: BoundGrammar, symbol: str | None = None) -> Node:
    """The tree of ``text`` under ``grammar``. Raises :class:`PhenotypeError` if none or several."""
    trees = all_parses(text, grammar, symbol)
    if not trees:
        raise PhenotypeError(f"{text!r} is not derivable from {grammar.grammar.path}")
    if len(trees) > 1:
        raise PhenotypeError(f"{text!r} is ambiguous under {grammar.grammar.path}: {len(trees)} trees")
    return trees[0]


def all_parses(text: str, grammar: BoundGrammar, symbol: str | None = None) -> list[Node]:
    tokens = text.split()
    g = grammar.grammar
    memo: dict[tuple[str, int], list[tuple[Node, int]]] = {}
    active: set[tuple[str, int]] = set()

    def match_item(rule: str, a: int, i: int, item, pos: int) -> list[tuple[object, int]]:
        if isinstance(item, NonTerminal):
            return parse_rule(item.name, pos)  # type: ignore[return-value]
        if pos >= len(tokens):
            return []
        tok = tokens[pos]
        if isinstance(item, Terminal):
            return [(Leaf(item.text), pos + 1)] if tok == item.text else []
        assert isinstance(item, Sampler)
        if item.kind == "int":
            if not _INT.fullmatch(tok):
                return []
            value: int | float = int(tok)
        else:
            if not _REAL.fullmatch(tok):
                return []
            value = float(tok)
        return [(Leaf(value), pos + 1)] if grammar.contains((rule, a, i), value) else []

    def parse_rule(name: str, pos: int) -> list[tuple[Node, int]]:
        key = (name, pos)
        if key in memo:
            return memo[key]
        if key in active:  # left recursion: this branch cannot make progress
            return []
        active.add(key)
        results: list[tuple[Node, int]] = []
        for a, alt in enumerate(g[name].alternatives):
            partial: list[tuple[tuple, int]] = [((), pos)]
            for i, item in enumerate(alt.items):
                nxt = []
                for children, p in partial:
                    for child, q in match_item(name, a, i, item, p):
                        nxt.append((children + (child,), q))
                if len(nxt) > _MAX_PARTIAL:
                    raise PhenotypeError(f"{text!r}: too many partial parses at <{name}>; "
                                         "the grammar is highly ambiguous")
                partial = nxt
                if not partial:
                    break
            results.extend((Node(name, a, children), p) for children, p in partial)
        active.discard(key)
        memo[key] = results
        return results

    start = symbol or g.start
    return [tree for tree, end in parse_rule(start, 0) if end == len(tokens)]

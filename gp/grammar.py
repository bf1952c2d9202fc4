"""The typed grammar model: rules, alternatives, symbols and annotations.

A :class:`Grammar` is what the ``.bnf`` parser returns and what every other part of
the engine (generation, analysis, species, phenotype parsing) reads. It is plain,
immutable data: the grammar file stays the single source of truth, and nothing here
knows about any particular search space.

Groups ``( … )`` and optionals ``[ … ]`` are desugared by the parser into synthetic
rules (``<Parent~1>``), so a derivation tree is always "node = rule + chosen
alternative + children", and every decision lives at a named grammar location.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar, Iterable, Iterator, Union

from .errors import SourceLocation, SourceText
from .expressions import Expr

#: Hyper-parameter kinds an annotation may give (``alg`` = structural choice).
KINDS = ("alg", "cat", "bool", "int", "real")
#: Tree sizes beyond this are all "too large" (exact values would need unbounded integers).
SIZE_CAP = 10 ** 18


@dataclass(frozen=True)
class NonTerminal:
    name: str
    location: SourceLocation | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return f"<{self.name}>"


@dataclass(frozen=True)
class Terminal:
    text: str
    location: SourceLocation | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return _quote_terminal(self.text)


@dataclass(frozen=True)
class Sampler:
    """``RANDOM-INT(lo, hi)`` or ``RANDOM-REAL(lo, hi)``: a number drawn at generation.

    ``step`` (``RANDOM-REAL`` only, never with ``log``) makes the range a grid of the
    values ``lo + k·step`` (:class:`gp.binding.Grid`). It comes last so that positional
    construction without it keeps working.
    """

    kind: str  # "int" | "real"
    lo: Expr
    hi: Expr
    lo_open: bool = False
    hi_open: bool = False
    log: bool = False
    location: SourceLocation | None = field(default=None, compare=False)
    step: float | None = None

    def __post_init__(self):
        # The parser reports these at the option and never builds such a sampler.
        if self.step is not None and (self.kind != "real" or self.log or not 0 < self.step < math.inf):
            raise ValueError(f"invalid step {self.step!r} for a {self.kind} sampler (log={self.log})")

    @property
    def is_constant(self) -> bool:
        return not (self.lo.variables() or self.hi.variables())

    def __str__(self) -> str:
        lo = (">" if self.lo_open else "") + str(self.lo)
        hi = ("<" if self.hi_open else "") + str(self.hi)
        name = "RANDOM-INT" if self.kind == "int" else "RANDOM-REAL"
        option = ", log" if self.log else f", step={self.step!r}" if self.step is not None else ""
        return f"{name}({lo}, {hi}{option})"


Symbol = Union[NonTerminal, Terminal, Sampler]


@dataclass(frozen=True)
class Alternative:
    items: tuple[Symbol, ...]
    weight: float = 1.0
    location: SourceLocation | None = field(default=None, compare=False)
    #: Written ``@auto``: ``weight`` is the parser's count of its algorithms (gp/auto_weights.py),
    #: and a written grammar says ``@auto`` again rather than the count.
    auto: bool = field(default=False, compare=False)

    @property
    def text(self) -> str:
        """The alternative as written (without weight); ``EMPTY`` for epsilon."""
        return " ".join(str(i) for i in self.items) if self.items else "EMPTY"

    @property
    def is_literal(self) -> bool:
        return all(isinstance(i, Terminal) for i in self.items)

    def nonterminals(self) -> Iterator[str]:
        for item in self.items:
            if isinstance(item, NonTerminal):
                yield item.name


@dataclass(frozen=True)
class Annotation:
    """``#@ type=int default=2 [sentinel]``: what a hyper-parameter is and its default.

    ``default`` is either a tuple of terminal tokens (``()`` for ``EMPTY``) or an
    int alternative index (0-based) when written ``#k``.
    """

    kind: str
    default: tuple[str, ...] | int | None = None
    sentinel: bool = False
    location: SourceLocation | None = field(default=None, compare=False)

    def __str__(self) -> str:
        parts = [f"type={self.kind}"]
        if isinstance(self.default, int):
            parts.append(f"default=#{self.default + 1}")
        elif self.default is not None:
            parts.append("default=" + _format_default(self.default))
        if self.sentinel:
            parts.append("sentinel")
        return "#@ " + " ".join(parts)


@dataclass(frozen=True)
class Rule:
    name: str
    alternatives: tuple[Alternative, ...]
    annotation: Annotation | None = None
    location: SourceLocation | None = field(default=None, compare=False)
    #: "group" / "optional" for rules the parser made from ``( … )`` / ``[ … ]``.
    synthetic: str | None = None

    @property
    def kind(self) -> str:
        return self.annotation.kind if self.annotation else "alg"


class Grammar:
    """An immutable, validated grammar. The first rule is the start symbol.

    :attr:`analysis` and :meth:`bind` build a :class:`gp.analysis.GrammarAnalysis` and a
    :class:`gp.binding.BoundGrammar`. Those modules build on this one, so it does not import
    them: each sets its class here when it is imported (:attr:`analysis_type`,
    :attr:`binding_type`), and the package ``gp`` imports both, before any of its modules is used.
    """

    #: ``GrammarAnalysis``, set by :mod:`gp.analysis`
    analysis_type: ClassVar[Callable[[Grammar], Any]]
    #: ``BoundGrammar``, set by :mod:`gp.binding`
    binding_type: ClassVar[Callable[[Grammar, Any], Any]]

    def __init__(self, rules: dict[str, Rule], start: str, source: SourceText,
                 warnings: list | None = None, header: str = ""):
        self.rules = rules
        self.start = start
        self.source = source
        self.warnings = list(warnings or [])
        self.header = header

    @property
    def path(self) -> str:
        return self.source.filename

    def __getitem__(self, name: str) -> Rule:
        return self.rules[name]

    def __contains__(self, name: str) -> bool:
        return name in self.rules

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules.values())

    def __len__(self) -> int:
        return len(self.rules)

    def __repr__(self) -> str:
        return f"Grammar({self.path!r}, {len(self.rules)} rules, start=<{self.start}>)"

    def __getstate__(self) -> dict:
        # Analysis and bindings are memoised caches: rebuild them after unpickling.
        state = dict(self.__dict__)
        state.pop("analysis", None)
        state.pop("_bindings", None)
        return state

    @cached_property
    def analysis(self) -> Any:
        """This grammar's :class:`gp.analysis.GrammarAnalysis` (memoised)."""
        return self.analysis_type(self)

    @property
    def dataset_variables(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for rule in self:
            for alt in rule.alternatives:
                for item in alt.items:
                    if isinstance(item, Sampler):
                        out |= item.lo.variables() | item.hi.variables()
        return out

    def bind(self, meta: Any = None) -> Any:
        """Evaluate every bound for a dataset (a :class:`gp.binding.DatasetMeta`, or None): the
        :class:`gp.binding.BoundGrammar`, memoised per meta-data."""
        cache = self.__dict__.setdefault("_bindings", {})
        if meta not in cache:
            cache[meta] = self.binding_type(self, meta)
        return cache[meta]


def reachable_from(rules: "dict[str, Rule]", start: str) -> set[str]:
    """Names of the rules derivable from ``start`` (references to missing rules are skipped)."""
    seen, stack = {start}, [start]
    while stack:
        rule = rules.get(stack.pop())
        for alt in rule.alternatives if rule else ():
            for n in alt.nonterminals():
                if n not in seen:
                    seen.add(n)
                    stack.append(n)
    return seen


def minimum_trees(rules: "Iterable[Rule]") -> tuple[dict[str, int], dict[str, int]]:
    """Per rule, the depth of its shallowest derivation tree and that tree's size (nodes and leaves).

    A rule missing from the result has no finite derivation. Knuth's generalisation of
    Dijkstra's algorithm: rules are settled in order of depth, and an alternative is
    ready when its last non-terminal is settled, so each alternative is looked at a
    bounded number of times (sweeping all rules until nothing changes needs a sweep per
    rule of a long chain: minutes for 20,000 rules). The size is that of the tree that takes,
    at every node, a shallowest alternative and, among those, the smallest; it is what
    the generator reserves for an unexpanded rule. Sizes saturate at :data:`SIZE_CAP`
    (a 30-rule grammar can double its size per rule).
    """
    by_name = {rule.name: rule for rule in rules}
    waiting: dict[tuple[str, int], int] = {}
    users: dict[str, list[tuple[str, int]]] = {}
    heap: list[tuple[int, str]] = []
    for rule in by_name.values():
        for a, alt in enumerate(rule.alternatives):
            children = list(alt.nonterminals())
            waiting[(rule.name, a)] = len(children)
            for child in children:
                users.setdefault(child, []).append((rule.name, a))
            if not children:
                heap.append((1, rule.name))
    heapq.heapify(heap)
    depth: dict[str, int] = {}
    size: dict[str, int] = {}
    while heap:
        d, name = heapq.heappop(heap)
        if name in depth:
            continue
        depth[name] = d
        sizes = []
        for alt in by_name[name].alternatives:
            children = list(alt.nonterminals())
            if all(c in depth for c in children) and 1 + max((depth[c] for c in children), default=0) == d:
                sizes.append(1 + sum(size[c] for c in children) + len(alt.items) - len(children))
        size[name] = min(min(sizes), SIZE_CAP)
        for user, a in users.get(name, ()):
            waiting[(user, a)] -= 1
            if waiting[(user, a)] == 0 and user not in depth:
                heapq.heappush(heap, (d + 1, user))
    return depth, size


def _quote_terminal(text: str) -> str:
    specials = set('<>|()[]#@"') | {" ", "\t"}
    if text in ("EMPTY", "RANDOM-INT", "RANDOM-REAL") or any(c in specials for c in text) or not text:
        return '"' + text + '"'
    return text


def _format_default(tokens: tuple[str, ...]) -> str:
    if not tokens:
        return "EMPTY"
    if len(tokens) == 1 and _quote_terminal(tokens[0]) == tokens[0]:
        return tokens[0]
    return '"' + " ".join(tokens) + '"'

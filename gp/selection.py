"""How likely each algorithm is, from a grammar's weights (``check --rules``, decision 6).

Weights are set so that algorithms are equally likely (by hand, or by ``@auto``:
``gp/auto_weights.py``); this module says what they actually give, so a user sees the
effect of an edit without sampling thousands of trees. The probability reported is
that of an algorithm being the **outermost** one a rule derives, read as the mapper
reads a tree (the same reading as ``@auto``'s count): the first terminal, or the first
algorithm of a structural rule, skipping hyper-parameters; an optional wrapper such as
``<asc>`` is itself the outermost algorithm when present, and otherwise what it wraps
is. Depth limits of the generator are ignored: they only matter for recursive grammars.

It is reported at every *level* of the grammar: the start rule (for the shipped spaces
the MLC algorithm of a tree), and every place where an algorithm holds another one (the
SLC under a problem transformation, the base learner of a meta-algorithm, …). The
computation shares the explicit-stack driver of ``gp/auto_weights.py``, so a chain of
20,000 rules neither recurses nor loops, and it stops after :data:`MAX_WORK` steps (a
hostile grammar with thousands of algorithms per rule is not worth a minute of
``check``).
"""
from __future__ import annotations

from fractions import Fraction

from .auto_weights import AlgorithmCount, Computation, Cycle, describe_cycle, evaluate
from .grammar import Grammar, NonTerminal, Terminal

#: Probabilities merged before the computation gives up (the Large space needs about 700).
MAX_WORK = 200_000
#: The key of the probability that no algorithm is derived (an optional wrapper left empty).
NONE = None


class TooMuchWork(Exception):
    """More than :data:`MAX_WORK` steps: the levels are not listed."""


class Selection:
    """Per rule, or per level, the probability of each algorithm being the outermost one."""

    def __init__(self, grammar: Grammar):
        self.grammar = grammar
        count = AlgorithmCount(grammar.rules, grammar.start)
        self.structural, self.optional, self.universe = count.structural, count.optional, count.universe
        self.memo: dict = {}
        self.work = 0

    def _merge(self, into: dict, share: float, dist: dict, with_none: bool = True) -> None:
        self.work += len(dist)
        if self.work > MAX_WORK:
            raise TooMuchWork
        for name, p in dist.items():
            if with_none or name is not NONE:
                into[name] = into.get(name, 0.0) + share * p

    def _compute(self, key) -> Computation:
        if key[0] == "rule":
            alts = self.grammar[key[1]].alternatives
            total = sum(alt.weight for alt in alts)
            out: dict = {}
            for a, alt in enumerate(alts):
                self._merge(out, alt.weight / total, (yield ("from", key[1], a, 0)))
            return out
        _, name, a, j = key
        items = self.grammar[name].alternatives[a].items
        left, out = 1.0, {}
        for item in items[j:]:
            if isinstance(item, Terminal):
                out[item.text] = out.get(item.text, 0.0) + left
                return out
            if isinstance(item, NonTerminal) and item.name in self.structural:
                dist = yield ("rule", item.name)
                self._merge(out, left, dist, with_none=False)  # nothing here: what follows is read
                left *= dist.get(NONE, 0.0)
                if left == 0:
                    return out
        out[NONE] = out.get(NONE, 0.0) + left
        return out

    def rule(self, name: str) -> dict:
        """Algorithm name (or :data:`NONE`) -> probability, for the outermost algorithm of ``<name>``."""
        return evaluate(("rule", name), self._compute, self.memo)

    def reading(self, name: str, a: int, j: int) -> dict:
        """The same for the symbols of an alternative read from its item ``j``."""
        return evaluate(("from", name, a, j), self._compute, self.memo)

    def levels(self) -> dict[str, tuple[str, int, int]]:
        """Label -> where it is read: the start rule, then each place where an algorithm holds another.

        In an alternative, the first reading belongs to the rule itself; every structural rule after
        where a reading stops starts a new one (``<META1> <ALG-WEIGHTED-TYPE>``: the base learners).
        Equal labels are one level (``<ALGS-SLC>`` under every problem transformation).
        """
        found: dict[str, tuple[str, int, int]] = {}
        if self.grammar.start in self.structural:
            found[f"<{self.grammar.start}>"] = ("", -1, -1)
        for name in self.universe:
            for a, alt in enumerate(self.grammar[name].alternatives):
                reading, start, label = True, None, []  # the rule's own reading first
                for j, item in enumerate(alt.items):
                    holds = isinstance(item, NonTerminal) and item.name in self.structural
                    if not (holds or isinstance(item, Terminal)):
                        continue  # a hyper-parameter or a number
                    if not reading:
                        if not holds:
                            continue  # a terminal inside an algorithm is one of its values
                        reading, start, label = True, (name, a, j), []
                    if start is not None:
                        label.append(str(item))
                    if not holds or item.name not in self.optional:  # the reading stops here
                        if start is not None:
                            found.setdefault(" ".join(label), start)
                        reading, start = False, None
                if start is not None:  # an optional wrapper ends the alternative
                    found.setdefault(" ".join(label), start)
        return found


def describe_selection(grammar: Grammar) -> list[tuple[str, str]]:
    """``(level, what its algorithms get)`` lines for ``check --rules``, e.g. ``26 algorithms, each 1/26``."""
    selection = Selection(grammar)
    rows = []
    try:
        for label, (name, a, j) in selection.levels().items():
            try:
                dist = selection.rule(grammar.start) if a < 0 else selection.reading(name, a, j)
            except Cycle as cycle:
                rows.append((label, f"not computed: the grammar is recursive ({describe_cycle(cycle.path)})"))
                continue
            if any(k is not NONE for k in dist):
                rows.append((label, _describe(dist)))
    except TooMuchWork:
        rows.append(("…", f"stopped: more than {MAX_WORK:,} steps (too many algorithms to list)"))
    return rows


def _describe(dist: dict) -> str:
    groups: dict[float, list[str]] = {}
    for name, p in dist.items():
        if name is not NONE:
            groups.setdefault(round(p, 12), []).append(name)
    n = sum(len(names) for names in groups.values())
    if len(groups) == 1:
        text = f"{n} algorithm{'s' if n > 1 else ''}, each {_fraction(next(iter(groups)))}"
    else:
        parts = [f"{_fraction(p)} each {', '.join(sorted(names))}" if len(names) > 1 else f"{_fraction(p)} {names[0]}"
                 for p, names in sorted(groups.items(), reverse=True)]
        text = f"{n} algorithms: " + "; ".join(parts)
    if dist.get(NONE, 0) > 0:
        text += f"; no algorithm {_fraction(dist[NONE])}"
    return text


def _fraction(p: float) -> str:
    """``1/26`` when a small fraction is within 1e-12 of ``p``, else four significant digits."""
    f = Fraction(p).limit_denominator(100_000)
    return f"{f.numerator}/{f.denominator}" if abs(float(f) - p) <= 1e-12 else f"{p:.4g}"

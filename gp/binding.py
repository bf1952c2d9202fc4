"""Binding a grammar to a dataset: evaluating every bound expression once.

``RANDOM-INT(1, floor(L/2))`` only has a range once the number of labels is known.
:class:`BoundGrammar` evaluates all bounds for one :class:`DatasetMeta`, reports
every empty range (lo > hi) with its ``file:line:col``, and is what the generator,
the validator and the phenotype parser read numbers' ranges from.
"""
from __future__ import annotations

from dataclasses import dataclass

from .errors import BindingError, Diagnostic
from .expressions import as_number
from .grammar import Grammar, Sampler


@dataclass(frozen=True)
class DatasetMeta:
    """What grammar bounds may depend on: labels (L), features (M), instances (N)."""

    n_labels: int
    n_features: int
    n_instances: int = 0

    def env(self) -> dict[str, float]:
        return {"L": self.n_labels, "M": self.n_features, "N": self.n_instances}

    def __str__(self) -> str:
        return f"L={self.n_labels}, M={self.n_features}, N={self.n_instances}"


#: (rule name, alternative index, item index): where a sampled number is drawn.
Site = tuple[str, int, int]


class BoundGrammar:
    """A grammar plus the evaluated ``(lo, hi)`` of every sampled terminal."""

    def __init__(self, grammar: Grammar, meta: DatasetMeta | None):
        self.grammar = grammar
        self.meta = meta
        self.bounds: dict[Site, tuple[float, float]] = {}
        errors: list[Diagnostic] = []
        env = meta.env() if meta else None
        for rule in grammar:
            for a, alt in enumerate(rule.alternatives):
                for i, item in enumerate(alt.items):
                    if not isinstance(item, Sampler):
                        continue
                    needed = item.lo.variables() | item.hi.variables()
                    if needed and env is None:
                        errors.append(grammar.source.at(
                            item.location,
                            f"the bounds of <{rule.name}> use {', '.join(sorted(needed))}; "
                            "give a dataset (--data, or --labels/--features)"))
                        continue
                    try:
                        lo = as_number(item.lo.evaluate(env or {}))
                        hi = as_number(item.hi.evaluate(env or {}))
                    except (ValueError, ZeroDivisionError, OverflowError) as exc:
                        errors.append(grammar.source.at(item.location, f"cannot evaluate the bounds of "
                                                                       f"<{rule.name}> on {meta}: {exc}"))
                        continue
                    problem = _range_problem(item, lo, hi)
                    if problem:
                        errors.append(grammar.source.at(item.location, f"<{rule.name}>: {problem} "
                                                                       f"(on dataset {meta})"))
                        continue
                    self.bounds[(rule.name, a, i)] = (lo, hi)
        if errors:
            raise BindingError(errors)

    def range_of(self, site: Site) -> tuple[float, float]:
        return self.bounds[site]

    def contains(self, site: Site, value: float) -> bool:
        """Is ``value`` a number this sampled terminal could have produced?"""
        sampler: Sampler = self.grammar[site[0]].alternatives[site[1]].items[site[2]]
        lo, hi = self.bounds[site]
        if sampler.kind == "int" and (isinstance(value, bool) or not float(value).is_integer()):
            return False
        above = value > lo if sampler.lo_open else value >= lo
        below = value < hi if sampler.hi_open else value <= hi
        return above and below


def _range_problem(s: Sampler, lo: float, hi: float) -> str | None:
    if s.kind == "int":
        if not (float(lo).is_integer() and float(hi).is_integer()):
            return (f"RANDOM-INT bounds evaluate to {lo} and {hi}, which are not integers; "
                    "wrap them in floor(), ceil() or round()")
        if lo > hi:
            return f"empty range: lower bound {lo} > upper bound {hi}"
    else:
        if lo > hi or (lo == hi and (s.lo_open or s.hi_open)):
            return f"empty range: lower bound {lo} > upper bound {hi}"
    if s.log and lo <= 0:
        return f"a log-scale range needs a positive lower bound, got {lo}"
    return None

"""Binding a grammar to a dataset: evaluating every bound expression once.

``RANDOM-INT(1, floor(L/2))`` only has a range once the number of labels is known.
:class:`BoundGrammar` evaluates all bounds for one :class:`DatasetMeta`, reports
every empty range (lo > hi) with its ``file:line:col``, and is what the generator,
the validator and the phenotype parser read numbers' ranges from.

:func:`sampler_range` is the one rule for what a usable range is; the parser applies
it to constant bounds at load time, binding to the others. Besides lo <= hi it asks
for what sampling needs: finite numbers, integers within 64 bits (numpy draws int64),
a real range whose width is a finite float, and a number strictly inside open bounds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping

from .errors import BindingError, Diagnostic
from .expressions import BoundError, evaluate_bound
from .grammar import Grammar, Sampler

#: Largest magnitude of a RANDOM-INT bound or an int default (numpy samples int64).
INT_LIMIT = 2 ** 63 - 1


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
                        lo, hi = sampler_range(item, env or {})
                    except BoundError as exc:
                        errors.append(grammar.source.at(item.location, f"<{rule.name}>: {exc} (on dataset {meta})"))
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


def number_problem(kind: str, value: float) -> str | None:
    """Why ``value`` cannot be a number of a ``kind`` ("int" or "real") hyper-parameter, or None."""
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a finite number"
    if kind == "int" and abs(value) > INT_LIMIT:
        return f"{value:.4g} is beyond the 64-bit integers (±{INT_LIMIT:.3g})"
    return None


def sampler_range(s: Sampler, env: Mapping[str, float]) -> tuple[float, float]:
    """The evaluated ``(lo, hi)`` of a sampled terminal; :class:`BoundError` says why it is unusable."""
    lo, hi = evaluate_bound(s.lo, env), evaluate_bound(s.hi, env)
    for which, value in (("lower", lo), ("upper", hi)):
        problem = number_problem(s.kind, value)
        if problem:
            raise BoundError(f"the {which} bound {problem}")
    if s.kind == "int":
        if not (float(lo).is_integer() and float(hi).is_integer()):
            raise BoundError(f"RANDOM-INT bounds evaluate to {lo} and {hi}, which are not integers; "
                             "wrap them in floor(), ceil() or round()")
        if lo > hi:
            raise BoundError(f"empty range: lower bound {lo} > upper bound {hi}")
    else:
        if lo > hi:
            raise BoundError(f"empty range: lower bound {lo} > upper bound {hi}")
        if not math.isfinite(float(hi) - float(lo)):
            raise BoundError(f"the range from {lo:g} to {hi:g} is wider than the largest float (1.8e308); "
                             "narrow it or use a log scale")
        first = math.nextafter(float(lo), math.inf) if s.lo_open else float(lo)
        last = math.nextafter(float(hi), -math.inf) if s.hi_open else float(hi)
        if first > last:
            raise BoundError(f"empty range: no number lies strictly between {lo} and {hi}")
    if s.log and lo <= 0:
        raise BoundError(f"a log-scale range needs a positive lower bound, got {lo}")
    return lo, hi

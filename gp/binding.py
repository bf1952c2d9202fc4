"""Binding a grammar to a dataset: evaluating every bound expression once.

``RANDOM-INT(1, floor(L/2))`` only has a range once the number of labels is known.
:class:`BoundGrammar` evaluates all bounds for one :class:`DatasetMeta`, reports
every empty range (lo > hi) with its ``file:line:col``, and is what the generator,
the validator and the phenotype parser read numbers' ranges from.

:func:`sampler_range` is the one rule for what a usable range is; the parser applies
it to constant bounds at load time, binding to the others. Besides lo <= hi it asks
for what sampling needs: finite numbers, integers within 64 bits (numpy draws int64),
a real range whose width is a finite float, and a number strictly inside open bounds.

A ``RANDOM-REAL`` with ``step`` is a grid (:class:`Grid`, made by :func:`real_grid`):
the values ``lo + k·step`` for ``k = 0, 1, …`` up to ``hi``, where a point within
:data:`GRID_TOLERANCE` of a step above ``hi`` still counts (so 0.1 to 1.0 in steps of
0.1 has 10 values, although ``(1.0 - 0.1) / 0.1`` is 8.999… in floats) and open bounds
drop the end points. Value ``k`` is computed in decimal from the shortest ``repr`` of
``lo`` and ``step`` and then rounded to the nearest float (clamped into ``[lo, hi]``), so
phenotypes print ``0.15``, not ``0.15000000000000002``. A grid must have a value, and its
step must be at least :data:`GRID_RESOLUTION` times the bounds' magnitude, so that its
values are distinct floats (and there are at most about 2·10^12 of them). The generator,
the analysis, the validator and the phenotype parser all read grids from here.
"""
from __future__ import annotations

import decimal
import math
import numbers
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Mapping

from .errors import BindingError, Diagnostic
from .expressions import BoundError, evaluate_bound
from .grammar import Grammar, Sampler

#: Largest magnitude of a RANDOM-INT bound or an int default (numpy samples int64).
INT_LIMIT = 2 ** 63 - 1
#: A grid point this fraction of a step beyond ``hi`` is still in the grid (and is ``hi``).
GRID_TOLERANCE = 1e-9
#: The finest step, relative to the larger magnitude of a grid's bounds.
GRID_RESOLUTION = 1e-12
#: Exact enough for ``lo + k·step`` with 17-digit numbers and k up to 10^13.
_DECIMAL = decimal.Context(prec=60, Emin=-999_999, Emax=999_999)
_TOLERANCE = Decimal(repr(GRID_TOLERANCE))


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
        self.grids: dict[Site, Grid] = {}  # the sites of RANDOM-REAL with a step
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
                    if item.step is not None:  # sampler_range has checked the grid
                        self.grids[(rule.name, a, i)] = real_grid(lo, hi, item.lo_open, item.hi_open, item.step)
        if errors:
            raise BindingError(errors)

    def range_of(self, site: Site) -> tuple[float, float]:
        return self.bounds[site]

    def grid_of(self, site: Site) -> "Grid | None":
        """The grid of a ``RANDOM-REAL`` with a step, None for any other sampled terminal."""
        return self.grids.get(site)

    def contains(self, site: Site, value: float) -> bool:
        """Is ``value`` a number this sampled terminal could have produced?

        For a grid: a number within the bounds and within :data:`GRID_TOLERANCE` of a step
        of a grid value (so ``lo + k*step`` computed in floats is accepted too).
        """
        sampler: Sampler = self.grammar[site[0]].alternatives[site[1]].items[site[2]]
        lo, hi = self.bounds[site]
        if sampler.kind == "int" and (isinstance(value, bool) or not float(value).is_integer()):
            return False
        above = value > lo if sampler.lo_open else value >= lo
        below = value < hi if sampler.hi_open else value <= hi
        grid = self.grids.get(site)
        return above and below and (grid is None or grid.index(value) is not None)


Grammar.binding_type = BoundGrammar  # what Grammar.bind builds (grammar.py cannot import this module)


@dataclass(frozen=True)
class Grid:
    """The values of a ``RANDOM-REAL(lo, hi, step=…)``: :meth:`value` of ``k = first … last``."""

    lo: float
    hi: float
    step: float
    first: int
    last: int

    def __len__(self) -> int:
        return self.last - self.first + 1

    def value(self, k: int) -> float:
        """``lo + k·step``, computed in decimal and rounded to the nearest float (within ``[lo, hi]``)."""
        exact = _DECIMAL.add(_decimal(self.lo), _DECIMAL.multiply(Decimal(int(k)), _decimal(self.step)))
        return min(max(float(exact), self.lo), self.hi)

    def values(self) -> list[float]:
        """Every value, in order (a grid may have up to about 2·10^12: mind its length)."""
        return [self.value(k) for k in range(self.first, self.last + 1)]

    def index(self, value: float) -> int | None:
        """The ``k`` of the grid value within :data:`GRID_TOLERANCE` of a step of ``value``, if any."""
        k = self._closest(value)
        if k is None or not self.first <= k <= self.last:
            return None
        return k if abs(float(value) - self.value(k)) <= GRID_TOLERANCE * self.step else None

    def nearest(self, value: float) -> float:
        """The grid value nearest to ``value`` (``value`` itself if it is not a finite number)."""
        k = self._closest(value)
        return value if k is None else self.value(min(max(k, self.first), self.last))

    def _closest(self, value: float) -> int | None:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
            return None
        offset = _DECIMAL.divide(_DECIMAL.subtract(_decimal(float(value)), _decimal(self.lo)), _decimal(self.step))
        return int(offset.to_integral_value(rounding=decimal.ROUND_HALF_EVEN, context=_DECIMAL))


def _decimal(x: float) -> Decimal:
    """The shortest decimal that reads back as ``x`` (what the grammar file, or a phenotype, shows)."""
    return Decimal(repr(float(x)))


def real_grid(lo: float, hi: float, lo_open: bool, hi_open: bool, step: float) -> Grid:
    """The grid of ``RANDOM-REAL(lo, hi, step=step)`` (``>lo``/``<hi`` when open); :class:`BoundError` if none.

    ``lo`` and ``hi`` are evaluated bounds that :func:`sampler_range` accepts without the step.
    Memoised: the uniform policy asks for it at every draw.
    """
    # + 0.0 turns -0.0 into 0.0, which the memo would not tell apart.
    return _grid(float(lo) + 0.0, float(hi) + 0.0, bool(lo_open), bool(hi_open), float(step))


@lru_cache(maxsize=4096)
def _grid(lo: float, hi: float, lo_open: bool, hi_open: bool, step: float) -> Grid:
    if not 0 < step < math.inf:
        raise BoundError(f"a step must be a positive finite number, got {step}")
    magnitude = max(abs(lo), abs(hi))
    if step < GRID_RESOLUTION * magnitude:
        raise BoundError(f"the step {step:g} is too fine for bounds of magnitude {magnitude:g}: a step must be at "
                         f"least {GRID_RESOLUTION:g} times the larger bound, so that the grid's values are "
                         "distinct numbers")
    steps = _DECIMAL.divide(_DECIMAL.subtract(_decimal(hi), _decimal(lo)), _decimal(step))
    last = int(_DECIMAL.add(steps, _TOLERANCE).to_integral_value(rounding=decimal.ROUND_FLOOR, context=_DECIMAL))
    first = 1 if lo_open else 0
    if hi_open and _DECIMAL.abs(_DECIMAL.subtract(steps, Decimal(last))) <= _TOLERANCE:
        last -= 1  # the last point is hi itself
    if first > last:
        interval = f"{'(' if lo_open else '['}{lo!r}, {hi!r}{')' if hi_open else ']'}"
        raise BoundError(f"empty grid: no value {lo!r} + k·{step!r} lies in {interval}")
    return Grid(lo, hi, step, first, last)


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
    if s.step is not None:
        real_grid(lo, hi, s.lo_open, s.hi_open, s.step)  # a grid with values
    return lo, hi

"""The sampling-policy seam: every random decision of tree generation goes here.

Which alternative a rule takes (optional parts are synthetic two-alternative rules,
so "is it present?" is the same kind of decision) and which number a sampled
terminal gets are asked of a :class:`SamplingPolicy`, together with a
:class:`ChoiceContext` that names the grammar location. A PBIL policy can keep a
probability vector per location, and a Bayesian-optimisation policy can encode trees
by the same locations, without any change to the generator.

A ``RANDOM-REAL`` with a ``step`` passes it to :meth:`SamplingPolicy.sample_real`; the
values of its grid are :func:`grid_values` (or, by index, :func:`gp.binding.real_grid`) of
the same arguments, computed in decimal so that they print cleanly. A policy should return
one of them; the generator replaces any other number by the grid value nearest to it, so
trees always hold grid values exactly as the grammar computes them.
"""
from __future__ import annotations

import math
from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from .binding import real_grid
from .tree import Node, Path

#: Draws of a real before an open range falls back to its first inner float.
_REDRAWS = 100


@lru_cache(maxsize=256)
def grid_values(lo: float, hi: float, step: float, lo_open: bool = False, hi_open: bool = False) -> tuple[float, ...]:
    """The values of ``RANDOM-REAL(lo, hi, step=step)`` in order, as ``sample_real`` receives its arguments.

    Memoised. A grid may have up to about 2·10^12 values: ask ``len(real_grid(…))`` before
    listing a grid the grammar did not bound.
    """
    return tuple(real_grid(lo, hi, lo_open, hi_open, step).values())


@dataclass(frozen=True)
class ChoiceContext:
    """Where a decision is made.

    ``rule`` is the non-terminal being expanded; for a sampled number, ``alternative``
    and ``item`` locate the ``RANDOM-INT``/``RANDOM-REAL`` inside that rule. ``path``
    is the address of the node in the tree being built (its length is the depth).

    ``site`` is the derivation that led here: one ``(rule, alternative, item)`` step per
    ancestor, from the root of the tree being generated. :attr:`location` names a grammar
    location shared by every occurrence of a rule (PBIL shares a base classifier's vectors
    between the ensembles above it); :attr:`unrolled` also tells apart two occurrences of a
    rule in one tree (the base learners of two meta-learners), which is what a flat
    configuration space needs: one hyper-parameter per unrolled site (:mod:`gp.flatten`).
    """

    rule: str
    path: Path = ()
    alternative: int | None = None
    item: int | None = None
    site: tuple[tuple[str, int, int], ...] = ()

    @property
    def location(self) -> str:
        """A stable key for the grammar location (same for every tree)."""
        if self.alternative is None:
            return f"<{self.rule}>"
        return f"<{self.rule}>/{self.alternative}/{self.item}"

    @property
    def unrolled(self) -> str:
        """The location under its derivation: ``Start.0.1/MLC.3.0/<SLC>`` (stable across trees).

        A number's key ends in ``/alternative/item`` as :attr:`location` does."""
        return unrolled_key(self.site, self.rule, self.alternative, self.item)


def unrolled_key(site, rule: str, alternative: int | None = None, item: int | None = None) -> str:
    """The key :attr:`ChoiceContext.unrolled` gives a decision at ``site`` (shared with :mod:`gp.flatten`)."""
    head = "/".join(f"{r}.{a}.{i}" for r, a, i in site)
    own = f"<{rule}>" if alternative is None else f"<{rule}>/{alternative}/{item}"
    return f"{head}/{own}" if head else own


class SamplingPolicy(ABC):
    """Decides alternatives and numbers. Implementations must use only ``rng`` for randomness."""

    @abstractmethod
    def choose(self, ctx: ChoiceContext, candidates: Sequence[int], weights: Sequence[float],
               rng: np.random.Generator) -> int:
        """Pick one of ``candidates`` (alternative indices allowed by the depth limits).

        ``weights`` are the grammar's weights of those candidates, aligned with them.
        """

    @abstractmethod
    def sample_int(self, ctx: ChoiceContext, lo: int, hi: int, log: bool, rng: np.random.Generator) -> int:
        """An integer in ``[lo, hi]``."""

    @abstractmethod
    def sample_real(self, ctx: ChoiceContext, lo: float, hi: float, lo_open: bool, hi_open: bool,
                    log: bool, rng: np.random.Generator, step: float | None = None) -> float:
        """A real in the range (open ends excluded).

        With ``step`` (never together with ``log``), one of the values of
        ``real_grid(lo, hi, lo_open, hi_open, step)`` (:mod:`gp.binding`).
        """

    def update(self, trees: Sequence[Node], fitnesses: Sequence[float]) -> None:
        """Learn from an evaluated batch (PBIL's probability vectors, a BO surrogate).

        Called by search methods that sample with the policy, after every batch; the
        trees' decisions are recoverable from the trees themselves (each node's rule
        and alternative, each sampled leaf's value). The uniform policy does not learn.
        """


class UniformPolicy(SamplingPolicy):
    """Alternatives in proportion to the grammar's weights; numbers uniform (or log-uniform); grid values uniform."""

    def choose(self, ctx, candidates, weights, rng):
        if len(candidates) == 1:
            return candidates[0]
        w = np.asarray(weights, dtype=float)
        with np.errstate(over="ignore"):  # finite weights near 1e308 can overflow their sum
            if not np.isfinite(w.sum()):
                w = w / w.max()
        return int(candidates[int(rng.choice(len(candidates), p=w / w.sum()))])

    def sample_int(self, ctx, lo, hi, log, rng):
        lo, hi = int(lo), int(hi)
        if lo == hi:
            return lo
        if log:
            # log-uniform over [lo, hi+1) then floored: each decade equally likely.
            value = int(math.floor(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))))
            return min(max(value, lo), hi)
        return int(rng.integers(lo, hi, endpoint=True))

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        if step is not None:  # every value of the grid equally likely
            grid = real_grid(lo, hi, lo_open, hi_open, step)
            k = grid.first if len(grid) == 1 else int(rng.integers(grid.first, grid.last, endpoint=True))
            return grid.value(k)
        lo, hi = float(lo), float(hi)
        if lo == hi:
            return lo
        for _ in range(_REDRAWS):
            if log:
                value = float(math.exp(rng.uniform(math.log(lo), math.log(hi))))
            else:
                value = float(rng.uniform(lo, hi))
            value = min(max(value, lo), hi)
            if (lo_open and value <= lo) or (hi_open and value >= hi):
                continue
            return value
        # A range only a few floats wide, e.g. (>1, <1.0000000000000004): draws keep
        # landing on the open ends. Binding guarantees a float strictly inside.
        return math.nextafter(lo, math.inf) if lo_open else lo

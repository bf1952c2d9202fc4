"""Plumbing shared by the rule learners (JRip, PART, DecisionTable, OneR, ZeroR).

All of them need the same two things, so they live here once (input checks and class coding
are every SLC's, in :mod:`spaces.slc._validation`):

* per-column ascending row orders of the training matrix, so that a *subset* of rows can be
  put in sorted order for every column in O(n·M) (filtering the global order) instead of
  re-sorting at every rule antecedent or tree node;
* WEKA's numerical conventions (``Utils.SMALL`` tolerance, ``x·ln x`` with 0·ln 0 = 0) and a
  stratified fold assignment for hold-out pruning and internal cross-validation.
"""
from __future__ import annotations

import numpy as np
from sklearn.utils import check_random_state

from ..encoding import per_view_columns

#: weka.core.Utils.SMALL: the tolerance of Utils.gr / sm / eq.
SMALL = 1e-6
LN2 = float(np.log(2.0))


def make_rng(random_state) -> np.random.Generator:
    """A numpy Generator from an int / None / RandomState / Generator (never the global state)."""
    if random_state is None or isinstance(random_state, (int, np.integer)):
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(check_random_state(random_state).randint(2**31 - 1))


def xlogx(a, floor: float = 0.0):
    """Element-wise ``a·ln a`` with 0 for ``a <= floor`` (WEKA's lnFunc)."""
    a = np.asarray(a, dtype=float)
    safe = np.where(a > floor, a, 1.0)
    return np.where(a > floor, a * np.log(safe), 0.0)


def stratified_folds(codes, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    """Fold id per row: shuffle, group by class, deal rows round-robin (WEKA's stratify)."""
    n = codes.shape[0]
    perm = rng.permutation(n)
    perm = perm[np.argsort(codes[perm], kind="stable")]
    folds = np.empty(n, dtype=np.intp)
    folds[perm] = np.arange(n) % n_folds
    return folds


class ColumnOrder:
    """Ascending order of the training rows in every column, reusable for any row subset."""

    def __init__(self, X: np.ndarray):
        self.XT = np.ascontiguousarray(X.T)                      # (M, n)
        self.order = np.argsort(self.XT, axis=1, kind="stable")  # (M, n)
        self.n = X.shape[0]
        self._offsets = (np.arange(X.shape[1]) * X.shape[0])[:, None]

    def sorted_rows(self, rows: np.ndarray) -> np.ndarray:
        """(M, len(rows)) row indices, each line sorted by that column (ties by row index)."""
        rows = np.asarray(rows, dtype=np.intp)
        c = rows.shape[0]
        m = self.XT.shape[0]
        if c == 0:
            return np.empty((m, 0), dtype=np.intp)
        if c * 8 < self.n:  # small subsets: sorting them directly is cheaper than filtering
            srt = np.sort(rows)
            sub = self.XT[:, srt]
            return srt[np.argsort(sub, axis=1, kind="stable")]
        mask = np.zeros(self.n, dtype=bool)
        mask[rows] = True
        return self.order[mask[self.order]].reshape(m, c)

    def values(self, sorted_rows: np.ndarray) -> np.ndarray:
        """Column values at ``sorted_rows`` (same shape)."""
        return np.take(self.XT, sorted_rows + self._offsets)

    @classmethod
    def appended(cls, base: "ColumnOrder", more: "ColumnOrder") -> "ColumnOrder":
        """The order of [``base``'s columns, ``more``'s columns] over the same rows."""
        out = cls.__new__(cls)
        out.XT, out.order, out.n = np.vstack([base.XT, more.XT]), np.vstack([base.order, more.order]), base.n
        out._offsets = (np.arange(out.XT.shape[0]) * out.n)[:, None]
        return out


def column_order(X: np.ndarray) -> ColumnOrder:
    """``ColumnOrder(X)``, once per data view; for a label network's node matrix [view, parent labels] only
    the parents' columns are sorted (every column is sorted on its own: the same order)."""
    return per_view_columns(X, "column-order", ColumnOrder, ColumnOrder.appended)


def normalise_rows(counts: np.ndarray, fallback: np.ndarray) -> np.ndarray:
    """Rows of ``counts`` scaled to sum 1; all-zero rows get ``fallback``."""
    counts = np.asarray(counts, dtype=float)
    tot = counts.sum(axis=-1, keepdims=True)
    out = np.where(tot > 0, counts / np.where(tot > 0, tot, 1.0), fallback)
    return out

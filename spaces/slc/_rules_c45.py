"""C4.5 split selection and error estimates, as WEKA's j48 package computes them (for PART).

PART grows partial C4.5 trees, so it needs exactly C4.5's choice of split: for every numeric
attribute the binary cut of maximum information gain among cuts leaving at least ``minSplit``
weight on each side, less the MDL penalty log2(#cuts)/N; then, among the attributes whose gain
is at least the average, the one of maximum gain ratio (``C45ModelSelection``/``C45Split``).
scikit-learn's trees pick by impurity decrease only, so the split search is written here,
vectorised over all attributes and all cut positions of a node. The class entropy of both sides
at every cut is obtained without a (rows × classes) count table: moving the cut past one row
changes the count of that row's class only, so Σ_k n_k·ln n_k is a cumulative sum of per-row
changes. The cost is O(M·n) per node whatever the number of classes (label-powerset targets).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import norm

from ggp_automl.spaces.slc._rules_base import LN2, SMALL, ColumnOrder, xlogx


@dataclass(frozen=True)
class Split:
    attribute: int
    threshold: float  # left branch: x <= threshold


@lru_cache(maxsize=16)
def _z(cf: float) -> float:
    return float(norm.ppf(1 - cf))


def add_errs(n: float, e: float, cf: float) -> float:
    """weka.classifiers.trees.j48.Stats.addErrs: extra errors at confidence ``cf``."""
    cf = float(np.float32(cf))  # WEKA passes CF as a float
    if cf > 0.5:
        return 0.0
    if e < 1:
        base = n * (1 - cf ** (1.0 / n))
        if e == 0:
            return base
        return base + e * (add_errs(n, 1.0, cf) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    z = _z(cf)
    f = (e + 0.5) / n
    r = (f + z * z / (2 * n) + z * np.sqrt(f / n - f * f / n + z * z / (4 * n * n))) / (1 + z * z / n)
    return r * n - e


def _lnf(a):
    """EntropyBasedSplitCrit.lnFunc: x·ln x, 0 below 1e-6."""
    return xlogx(a, floor=1e-6)


class C45SplitSelector:
    """``C45ModelSelection.selectModel`` for all-numeric data (MDL correction on, as PART's default).

    ``actual_values``: move the cut to the largest training value below it
    (``setSplitPoint``, which PART does since it keeps the full data in its model selection).
    """

    def __init__(self, X, codes, w, n_classes: int, min_no_obj: int, order: ColumnOrder,
                 use_mdl: bool = True, actual_values: bool = True):
        self.X, self.codes, self.w = X, codes, w
        self.n_classes = n_classes
        self.min_no_obj = min_no_obj
        self.order = order
        self.use_mdl = use_mdl
        self.uniques = [np.unique(X[:, j]) for j in range(X.shape[1])] if actual_values else None
        # Integer weights (unweighted data, bootstrap counts): every class count is an integer,
        # so n·ln n comes from a table instead of a logarithm per cell.
        total = float(w.sum())
        if np.all(w == np.floor(w)) and total < 1e7:
            self.table = _lnf(np.arange(int(total) + 2, dtype=float))
            self.step = np.diff(self.table, prepend=0.0)   # lnF(i) - lnF(i-1)
        else:
            self.table = self.step = None
        self.unit = bool(np.all(w == 1.0))

    def _lnf_counts(self, x):
        if self.table is not None:
            return self.table[x.astype(np.intp)]
        return _lnf(x)

    @staticmethod
    def _own_class_weight(ys, ws, nl, dist):
        """Weight of each row's own class among the rows up to it (inclusive), per line."""
        present = np.flatnonzero(dist > 0)
        if present.size <= 2:  # one cumulative sum suffices
            is_b = ys == present[-1]
            cb = np.cumsum(ws * is_b, axis=1)
            return np.where(is_b, cb, nl - cb)
        # regroup every line by class (stable), cumulate, subtract the weight of earlier classes
        m, n = ys.shape
        key = ys.astype(np.uint16) if ys.max() < 65536 else ys
        flat = np.argsort(key, axis=1, kind="stable") + (np.arange(m) * n)[:, None]
        cum = np.cumsum(np.take(ws, flat), axis=1)
        base = np.concatenate([[0.0], np.cumsum(dist)[:-1]])
        own = np.empty(m * n)
        own[flat] = cum - base[np.take(ys, flat)]
        return own.reshape(m, n)

    def select(self, rows: np.ndarray) -> Split | None:
        codes, w = self.codes[rows], self.w[rows]
        dist = np.bincount(codes, weights=w, minlength=self.n_classes)
        total = float(dist.sum())
        if total < 2 * self.min_no_obj - SMALL or abs(total - dist.max()) < SMALL:
            return None
        n = rows.size
        min_split = 0.1 * total / self.n_classes
        if min_split <= self.min_no_obj + SMALL:
            min_split = float(self.min_no_obj)
        elif min_split > 25 + SMALL:
            min_split = 25.0
        if n < 2 * min_split - SMALL:
            return None
        old_ent = (_lnf(total) - _lnf(dist).sum()) / LN2
        srt = self.order.sorted_rows(rows)                       # (M, n)
        m = srt.shape[0]
        v = self.order.values(srt)
        ys = self.codes[srt]
        # Σ_k lnF(left_k) and Σ_k lnF(right_k) change in one class per row: cumulate the changes.
        if self.unit:  # unit weights: counts are ranks, each change is one table step
            ws = np.ones((m, n))
            nl = np.broadcast_to(np.arange(1.0, n + 1.0), (m, n))
            own = self._own_class_weight(ys, ws, nl, dist).astype(np.intp)
            rest = dist.astype(np.intp)[ys] - own
            s_left = np.cumsum(np.take(self.step, own), axis=1)
            s_right = _lnf(dist).sum() - np.cumsum(np.take(self.step, rest + 1), axis=1)
            lnf_nl = self.table[1:n]
            lnf_nr = self.table[n - 1:0:-1]
            nl = nl[:, :-1]
            nr = total - nl
        else:
            ws = self.w[srt]
            nl = np.cumsum(ws, axis=1)
            own = self._own_class_weight(ys, ws, nl, dist)
            lnf = self._lnf_counts
            rest = dist[ys] - own
            s_left = np.cumsum(lnf(own) - lnf(own - ws), axis=1)
            s_right = _lnf(dist).sum() + np.cumsum(lnf(rest) - lnf(rest + ws), axis=1)
            nl = nl[:, :-1]
            nr = total - nl
            lnf_nl, lnf_nr = lnf(nl), lnf(nr)
        s_left, s_right = s_left[:, :-1], s_right[:, :-1]
        gap = v[:, :-1] + 1e-5 < v[:, 1:]                      # cut between positions p and p+1
        valid = gap & (nl >= min_split - SMALL) & (nr >= min_split - SMALL)
        new_ent = (lnf_nl - s_left + lnf_nr - s_right) / LN2
        num = old_ent - new_ent
        gain = np.where(np.abs(num) < SMALL, 0.0, num / total)
        gain = np.where(valid, gain, -np.inf)
        n_index = valid.sum(axis=1)
        cut_at = np.argmax(gain, axis=1)
        lines = np.arange(m)
        best = gain[lines, cut_at]
        ok = (n_index > 0) & (best > SMALL)
        g = best - (np.log2(np.maximum(n_index, 1)) / total if self.use_mdl else 0.0)
        ok &= g > SMALL
        bl, br = nl[lines, cut_at], nr[lines, cut_at]
        split_ent = (_lnf(total) - _lnf(bl) - _lnf(br)) / LN2
        ratio = np.where(np.abs(split_ent) < SMALL, 0.0,
                         g / np.where(split_ent == 0, 1.0, split_ent / total))
        gains = np.where(ok, g, -np.inf)
        ratios = np.where(ok, ratio, 0.0)
        valid_attr = np.isfinite(gains)
        if not valid_attr.any():
            return None
        average = gains[valid_attr].mean()
        eligible = valid_attr & (gains >= average - 1e-3) & (ratios > SMALL)
        if not eligible.any():
            return None
        a = int(np.argmax(np.where(eligible, ratios, -np.inf)))
        s = srt[a]
        p = int(cut_at[a])
        lo_v, hi_v = self.X[s[p], a], self.X[s[p + 1], a]
        thr = (lo_v + hi_v) / 2.0
        if thr == hi_v:
            thr = lo_v
        if self.uniques is not None:
            u = self.uniques[a]
            thr = float(u[np.searchsorted(u, thr + SMALL, side="right") - 1])
        return Split(a, float(thr))

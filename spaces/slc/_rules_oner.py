"""WEKA OneR (Holte's 1R): one attribute, bucketed, each bucket predicting its majority class.

WEKA's numeric bucketing is a sequential scan over the rows sorted by the attribute (fill a
bucket until some class has ``min_bucket_size`` rows, extend it over a run of that class and
over ties of the value, merge it into the previous bucket when the majority agrees). A Python
loop over rows × attributes would be far too slow inside a multi-label method, so the scan runs
for **all attributes in lockstep**: one step builds the next bucket of every attribute with
vectorised look-ups (k-th occurrence of each class, end of the current class run, end of the
current value tie), so the number of Python iterations is the number of buckets (≤ n / mbs).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.encoding import per_view
from ggp_automl.spaces.slc._validation import fit_inputs, predict_inputs

#: cap on (attributes × rows × classes) cells held at once; larger problems run in chunks
_CHUNK_CELLS = 4_000_000


def _run_ends(a: np.ndarray) -> np.ndarray:
    """(M, n): exclusive end of the run of equal values containing each position (per line)."""
    m, n = a.shape
    brk = np.ones((m, n), dtype=bool)
    brk[:, :-1] = a[:, 1:] != a[:, :-1]  # position p ends its run
    pos = np.where(brk, np.arange(1, n + 1), n + 1)
    return np.minimum.accumulate(pos[:, ::-1], axis=1)[:, ::-1]


def _buckets(vs: np.ndarray, ys: np.ndarray, n_classes: int, mbs: int):
    """WEKA's newNumericRule for every line of the sorted values ``vs`` / classes ``ys``.

    Returns (correct, n_buckets, classifications, breakpoints), one entry per attribute.
    """
    m, n = ys.shape
    rows = np.arange(m)
    onehot = np.zeros((m, n + 1, n_classes), dtype=np.int32)
    onehot[rows[:, None], np.arange(1, n + 1)[None, :], ys] = 1
    cum = np.cumsum(onehot, axis=1)          # cum[a, i, k] = #class k among the first i rows
    del onehot
    totals = cum[:, n, :]                    # (m, K)
    starts = np.zeros((m, n_classes), dtype=np.intp)
    starts[:, 1:] = np.cumsum(totals, axis=1)[:, :-1]
    by_class = np.argsort(ys, axis=1, kind="stable")  # positions grouped by class, ascending
    class_run_end = _run_ends(ys)
    value_run_end = _run_ends(vs)

    i = np.zeros(m, dtype=np.intp)
    cl = np.zeros(m, dtype=np.intp)
    correct = np.zeros(m, dtype=np.int64)
    classif = np.zeros((m, n), dtype=np.intp)
    breaks = np.zeros((m, n), dtype=float)
    active = np.flatnonzero(i < n)
    while active.size:
        check_deadline()
        a = active
        ia = i[a]
        before = cum[a, ia, :]                                   # counts before the bucket
        need = before + mbs - 1                                  # 0-based occurrence index
        ok = need < totals[a]
        idx = np.minimum(starts[a] + need, n - 1)
        pos = np.where(ok, by_class[a[:, None], idx], n)         # row where class k reaches mbs
        j = pos.min(axis=1)
        j = np.where(j >= n, n - 1, j)                           # no class reaches it: fill to end
        it = ys[a, j]
        new_i = class_run_end[a, j]                              # keep filling while class == it
        new_i = value_run_end[a, new_i - 1]                      # ... and while the value is tied
        counts = cum[a, new_i, :] - before
        best = counts.max(axis=1)
        first = counts.argmax(axis=1)
        it = np.where(counts[np.arange(a.size), it] == best, it, first)
        prev = classif[a, np.maximum(cl[a] - 1, 0)]
        has_prev = cl[a] > 0
        same = has_prev & (counts[np.arange(a.size), prev] == counts[np.arange(a.size), it])
        it = np.where(same, prev, it)
        merge = has_prev & (it == prev)
        cl[a] -= merge
        correct[a] += counts[np.arange(a.size), it]
        classif[a, cl[a]] = it
        inside = new_i < n
        bi = np.where(inside, new_i, n - 1)
        mid = (vs[a, bi - 1] + vs[a, bi]) / 2.0
        breaks[a[inside], cl[a][inside]] = mid[inside]
        cl[a] += 1
        i[a] = new_i
        active = a[new_i < n]
    return correct, cl, classif, breaks



def _sorted_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every column's ascending row order (ties by row) and its values in that order, (M, n) each."""
    order = np.argsort(X, axis=0, kind="stable").T
    return order, np.take_along_axis(X.T, order, axis=1)

class WekaOneR(ClassifierMixin, BaseEstimator):
    """WEKA OneR on numeric attributes with minimum bucket size ``min_bucket_size`` (-B).

    A hard learner, as in WEKA (its distribution is a one-hot of the prediction), so it has no
    ``predict_proba``. WEKA OneR ignores instance weights (not a WeightedInstancesHandler), so
    ``fit`` takes none; ``fit_slc`` emulates weights by resampling. ``random_state`` is unused.
    """

    def __init__(self, min_bucket_size=6, random_state=None):
        self.min_bucket_size = min_bucket_size
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # a rule on one attribute cannot fit a concept that needs two (Holte's baseline)
        tags.classifier_tags.poor_score = True
        return tags

    def fit(self, X, y):
        X, codes, _ = fit_inputs(self, X, y)
        n, m = X.shape
        k = self.classes_.size
        mbs = max(int(self.min_bucket_size), 1)
        if m == 0:
            self.attribute_ = -1
            self.breakpoints_ = np.empty(0)
            self.classifications_ = np.array([int(np.bincount(codes, minlength=k).argmax())])
            return self
        order, vs = per_view(X, "oner-sorted-columns", _sorted_columns)  # (M, n) each; once per data view
        ys = codes[order]
        chunk = max(1, _CHUNK_CELLS // max(1, (n + 1) * k))
        best = None
        for lo in range(0, m, chunk):
            hi = min(m, lo + chunk)
            correct, ncl, classif, breaks = _buckets(vs[lo:hi], ys[lo:hi], k, mbs)
            a = int(np.argmax(correct))  # first attribute with the most correct rows
            if best is None or correct[a] > best[0]:
                best = (int(correct[a]), lo + a, classif[a, : ncl[a]], breaks[a, : ncl[a] - 1])
        _, self.attribute_, self.classifications_, self.breakpoints_ = best
        self.correct_ = best[0]
        return self

    def predict(self, X):
        X = predict_inputs(self, X)
        if self.attribute_ < 0:
            return np.full(X.shape[0], self.classes_[self.classifications_[0]])
        v = np.searchsorted(self.breakpoints_, X[:, self.attribute_], side="right")
        return self.classes_[self.classifications_[v]]

"""Supervised MDL discretisation (Fayyad & Irani), as WEKA's supervised ``Discretize``.

Used by BayesNet and NaiveBayes (``usd``), DecisionTable and the CFS attribute
selection of ASC. Per attribute: sort once, then split a segment at the boundary of
minimum class entropy while the split passes the MDL test; every candidate boundary
of a segment is scored at once from cumulative class counts, and segments come from
an explicit stack (no recursion). ``better_encoding`` is WEKA's ``useBetterEncoding``
(the MDL cost of a cut counts the candidate cut points instead of N − 1), which
DecisionTable and CfsSubsetEval switch on and plain ``Discretize`` leaves off.
"""
from __future__ import annotations

import numpy as np

from ._rules_base import LN2, column_order, xlogx


def _entropy_bits(counts: np.ndarray) -> np.ndarray:
    """ContingencyTables.entropy along the last axis (bits; 0 for an empty row)."""
    tot = counts.sum(axis=-1)
    num = xlogx(tot) - xlogx(counts).sum(axis=-1)
    return np.where(tot > 0, num / np.where(tot > 0, tot, 1.0) / LN2, 0.0)


def _accepts(prior, left, right, n_inst, n_cuts, gain) -> bool:
    """Fayyad & Irani's MDL criterion (FayyadAndIranisMDL)."""
    k = int((prior > 0).sum())
    k1 = int((left > 0).sum())
    k2 = int((right > 0).sum())
    e, e1, e2 = _entropy_bits(prior), _entropy_bits(left), _entropy_bits(right)
    with np.errstate(over="ignore"):  # Java's Math.pow overflows to +inf for k > 646 as well
        delta = np.log2(np.power(3.0, k) - 2) - (k * e - k2 * e2 - k1 * e1)
    return bool(gain > (np.log2(n_cuts) + delta) / n_inst)


def all_cut_points(X: np.ndarray, codes: np.ndarray, n_classes: int, weights: np.ndarray | None = None,
                   better_encoding: bool = True) -> list[np.ndarray]:
    """:func:`mdl_cut_points` of every column of ``X``. The columns' sorted orders depend on ``X`` alone:
    for a NaN-free ``X`` they are computed once per data view (:func:`spaces.encoding.per_view`) and
    shared by the q labels of a binary relevance and every candidate on that view."""
    X = np.asarray(X, dtype=np.float64)
    if np.isnan(X).any():
        return [mdl_cut_points(X[:, j], codes, n_classes, weights, better_encoding) for j in range(X.shape[1])]
    columns = column_order(X)
    return [mdl_cut_points(columns.XT[j], codes, n_classes, weights, better_encoding, order=columns.order[j])
            for j in range(X.shape[1])]


def mdl_cut_points(x: np.ndarray, codes: np.ndarray, n_classes: int, weights: np.ndarray | None = None,
                   better_encoding: bool = True, order: np.ndarray | None = None) -> np.ndarray:
    """Ascending cut points of one attribute (NaN rows ignored, as WEKA's missing values).

    ``codes`` are class codes 0..n_classes-1; a value v falls in bin ``searchsorted(cuts, v)``.
    ``order``: ``x``'s stable ascending order, when known (then ``x`` holds no NaN).
    """
    x = np.asarray(x, dtype=np.float64)
    w = np.ones(x.size) if weights is None else np.asarray(weights, dtype=np.float64)
    codes = np.asarray(codes)
    if order is None:
        keep = ~np.isnan(x)
        x, codes, w = x[keep], codes[keep], w[keep]
        order = np.argsort(x, kind="stable")
    xs = x[order]
    onehot = np.zeros((xs.size, n_classes))
    onehot[np.arange(xs.size), codes[order]] = w[order]
    cuts: list[float] = []
    stack = [(0, xs.size)]
    while stack:
        first, last = stack.pop()
        if last - first < 2:
            continue
        cum = np.cumsum(onehot[first:last], axis=0)
        prior = cum[-1]
        n_inst = prior.sum()
        if n_inst <= 0:
            continue
        prior_ent = float(_entropy_bits(prior))
        cand = np.flatnonzero(xs[first:last - 1] < xs[first + 1:last])  # boundary after row c
        if cand.size == 0:
            continue
        left = cum[cand]
        right = np.maximum(prior - left, 0.0)
        ent = (left.sum(axis=1) * _entropy_bits(left) + right.sum(axis=1) * _entropy_bits(right)) / n_inst
        b = int(np.argmin(ent))  # first minimum, as WEKA's strict '<' scan
        if not ent[b] < prior_ent:
            continue
        n_cuts = cand.size if better_encoding else (last - first) - 1
        gain = prior_ent - float(ent[b])
        if gain <= 0 or not _accepts(prior, left[b], right[b], n_inst, n_cuts, gain):
            continue
        c = first + int(cand[b])
        cuts.append((xs[c] + xs[c + 1]) / 2.0)
        stack.append((first, c + 1))
        stack.append((c + 1, last))
    return np.sort(np.asarray(cuts, dtype=float))


def discretise(X: np.ndarray, cuts: list[np.ndarray]) -> np.ndarray:
    """(n, M) integer bin codes: bin j holds values in (cut[j-1], cut[j]]; NaN → -1."""
    out = np.empty(X.shape, dtype=np.int64)
    for j, c in enumerate(cuts):
        out[:, j] = np.searchsorted(c, X[:, j], side="left")
        out[np.isnan(X[:, j]), j] = -1
    return out

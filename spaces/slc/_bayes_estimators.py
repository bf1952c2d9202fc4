"""WEKA's numeric estimators for NaiveBayes: ``NormalEstimator`` and ``KernelEstimator``.

Both work at a *precision*: WEKA's NaiveBayes sets it per attribute to the mean gap between
the distinct sorted training values (0.01 when there is a single value), rounds every value
to a multiple of it, and returns the probability mass of the interval ``x ± precision/2``
divided by the precision (a density at that resolution). The standard deviation is floored at
``precision / 6`` ("at most 3 sd's within one interval"):

* Normal: weighted mean and standard deviation of the rounded values of one class
  (the floor also applies when the standard deviation is ~0);
* Kernel: one Gaussian per distinct rounded value (weighted), common bandwidth
  ``max(range / sqrt(sum of weights), precision / 6)`` per class.

Because training and test values are rounded to the same grid, every kernel offset is an
integer number of precisions, so the kernel density is a table look-up of interval masses
(exact, vectorised) instead of two normal-CDF evaluations per (test value, kernel) pair.
WEKA's kernel sum stops early once the remaining kernels add less than 1 %; here the sum is
exact (a deviation of at most that 1 %).
"""
from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from ..encoding import per_view

DEFAULT_PRECISION = 0.01
_TAIL_Z = 40.0  # |z| beyond which a normal interval mass underflows to 0 in double precision


def attribute_precision(x: np.ndarray) -> float:
    """WEKA NaiveBayes: mean gap between distinct sorted values (0.01 if < 2 distinct)."""
    u = np.unique(x[~np.isnan(x)])
    if u.size < 2:
        return DEFAULT_PRECISION
    return float((u[-1] - u[0]) / (u.size - 1))


def round_to(x: np.ndarray, precision: float) -> np.ndarray:
    """WEKA ``round``: ``Math.rint(x / precision) * precision`` (rint = round half to even)."""
    return np.rint(x / precision) * precision


def interval_mass(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Φ(hi) − Φ(lo) for lo <= hi, evaluated in the far tail where both are near 1 (as Φ(−lo) − Φ(−hi)
    when lo > 0): two CDF evaluations per element, whichever side."""
    upper = lo > 0
    return ndtr(np.where(upper, -lo, hi)) - ndtr(np.where(upper, -hi, lo))


def normal_density(x: np.ndarray, mean: np.ndarray, sd: np.ndarray, precision: float) -> np.ndarray:
    """(n, C) WEKA NormalEstimator densities of rounded ``x`` (n,) under per-class normals."""
    xr = round_to(x, precision)[:, None]
    lo = (xr - mean[None, :] - precision / 2) / sd[None, :]
    hi = (xr - mean[None, :] + precision / 2) / sd[None, :]
    return interval_mass(lo, hi) / precision


def normal_parameters(x: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, precision: float):
    """Per-class (mean, sd) of the rounded values, as WEKA's incremental NormalEstimator."""
    xr = round_to(x, precision)
    sw = np.bincount(y, weights=w, minlength=n_classes)
    sx = np.bincount(y, weights=w * xr, minlength=n_classes)
    sxx = np.bincount(y, weights=w * xr * xr, minlength=n_classes)
    mean = np.divide(sx, sw, out=np.zeros(n_classes), where=sw > 0)
    var = np.divide(np.abs(sxx - mean * sx), sw, out=np.zeros(n_classes), where=sw > 0)
    std = np.sqrt(var)
    floor = precision / 6.0
    sd = np.where((sw > 0) & (std > 1e-10), np.maximum(floor, std), floor)
    return mean, sd


def attribute_precisions(X: np.ndarray) -> np.ndarray:
    """:func:`attribute_precision` of every column of a NaN-free ``X`` at once (one sort, no loop)."""
    if X.shape[0] == 0:
        return np.full(X.shape[1], DEFAULT_PRECISION)
    S = np.sort(X, axis=0)
    distinct = 1 + (np.diff(S, axis=0) != 0).sum(axis=0)
    spread = S[-1] - S[0]
    return np.where(distinct >= 2, spread / np.maximum(distinct - 1, 1), DEFAULT_PRECISION)


def rounded_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(precisions, rounded X, its squares)``: what NaiveBayes's normal estimators need of a NaN-free
    ``X`` alone, the same for every class vector it is fitted to (:func:`spaces.encoding.per_view`)."""
    precision = attribute_precisions(X)
    Xr = np.rint(X / precision) * precision
    return precision, Xr, Xr * Xr


def normal_parameters_all(Xr: np.ndarray, Xr2: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int,
                          precision: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(M, C) means and standard deviations of every column at once: :func:`normal_parameters` of each
    column of the rounded ``Xr`` (``Xr2`` its squares), as sums over rows by matrix products."""
    onehot = np.zeros((len(y), n_classes))
    onehot[np.arange(len(y)), y] = w
    sw = onehot.sum(axis=0)                                  # (C,)
    sx = Xr.T @ onehot                                       # (M, C)
    sxx = Xr2.T @ onehot
    mean = np.divide(sx, sw, out=np.zeros_like(sx), where=sw > 0)
    var = np.divide(np.abs(sxx - mean * sx), sw, out=np.zeros_like(sx), where=sw > 0)
    std = np.sqrt(var)
    floor = (precision / 6.0)[:, None]
    sd = np.where((sw > 0) & (std > 1e-10), np.maximum(floor, std), floor)
    return mean, sd


def normal_log_densities(X: np.ndarray, mean: np.ndarray, sd: np.ndarray, precision: np.ndarray,
                         log_floor: float, rows: int = 2048) -> np.ndarray:
    """(n, C) sums over the columns of max(log :func:`normal_density`, ``log_floor``), every column at once
    (in blocks of ``rows`` rows)."""
    n, C = X.shape[0], mean.shape[1]
    out = np.zeros((n, C))
    half = precision / 2.0

    def log_density(Xr, cols, c):
        lo = (Xr - mean[cols, c] - half[cols]) / sd[cols, c]
        hi = (Xr - mean[cols, c] + half[cols]) / sd[cols, c]
        with np.errstate(divide="ignore"):
            return np.maximum(np.log(interval_mass(lo, hi) / precision[cols]), log_floor)

    for r0 in range(0, n, rows):
        # A 0/1 column (a one-hot encoded nominal value, a word's presence) has two densities per class:
        # its sum over such columns is a matrix product, not an erf per cell (bibtex: 1,836 such columns).
        # Which columns those are depends on X alone: shared across labels (spaces.encoding.per_view).
        binary, X_binary, X_rest = per_view(X, "binary-columns", _binary_columns) if n <= rows \
            else _binary_columns(X[r0:r0 + rows])
        rest = ~binary
        if binary.any():
            values = np.rint(np.array([[0.0], [1.0]]) / precision[binary]) * precision[binary]   # (2, Mb)
            for c in range(C):
                at0, at1 = log_density(values[:1], binary, c)[0], log_density(values[1:], binary, c)[0]
                out[r0:r0 + rows, c] += at0.sum() + X_binary @ (at1 - at0)
        if rest.any():
            Xr = np.rint(X_rest / precision[rest]) * precision[rest]                     # (b, M - Mb)
            for c in range(C):
                out[r0:r0 + rows, c] += log_density(Xr, rest, c).sum(axis=1)
    return out


def _binary_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Which columns of ``X`` hold only 0 and 1, those columns and the others (contiguous copies)."""
    binary = np.all((X == 0) | (X == 1), axis=0)
    return binary, np.ascontiguousarray(X[:, binary]), np.ascontiguousarray(X[:, ~binary])


def _symmetric_masses(h: float, half: int) -> np.ndarray:
    """Masses of N(0, 1) on [(o - 1/2)·h, (o + 1/2)·h] for o = 0..half, then a trailing 0.

    The kernel is symmetric, so one lower-tail CDF per offset suffices (and stays accurate
    far out in the tail): mass(o) = Φ(-(o - 1/2)h) - Φ(-(o + 1/2)h), mass(0) = 1 - 2Φ(-h/2).
    """
    lower = ndtr(-(np.arange(half + 1) + 0.5) * h)
    masses = np.empty(half + 2)
    masses[0] = 1.0 - 2.0 * lower[0]
    masses[1:half + 1] = lower[:-1] - lower[1:]
    masses[half + 1] = 0.0
    return masses


class KernelTable:
    """WEKA KernelEstimator of one attribute for every class, evaluated by table look-up."""

    def __init__(self, x: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, precision: float):
        self.precision = max(precision, 1e-6)  # WEKA: precision cannot be below Utils.SMALL
        p = self.precision
        keep = w != 0                           # WEKA skips zero-weight values
        grid = np.rint(x[keep] / p).astype(np.int64)
        yk, wk = y[keep], w[keep]
        self.kernels = []   # per class: (grid indices, weights, total, sd, masses by |offset|, half)
        for c in range(n_classes):
            sel = yk == c
            idx, inv = np.unique(grid[sel], return_inverse=True)
            weights = np.bincount(inv, weights=wk[sel], minlength=idx.size)
            total = float(weights.sum())
            floor = p / 6.0
            if idx.size and idx[-1] > idx[0]:
                sd = max((idx[-1] - idx[0]) * p / np.sqrt(total), floor)
            else:
                sd = floor
            half = int(np.ceil(_TAIL_Z * sd / p)) + 1
            self.kernels.append((idx, weights, total, sd, _symmetric_masses(p / sd, half), half))

    def density(self, x: np.ndarray, chunk: int = 512) -> np.ndarray:
        """(n, C) kernel densities of the values ``x`` (rounded to the precision first)."""
        p = self.precision
        m = np.rint(x / p).astype(np.int64)
        out = np.zeros((x.size, len(self.kernels)))
        for c, (idx, weights, total, sd, table, half) in enumerate(self.kernels):
            if idx.size == 0:   # no (weighted) value for this class: WEKA's empty estimator
                xr = m * p
                out[:, c] = interval_mass((xr - p / 2) / sd, (xr + p / 2) / sd) / p
                continue
            for start in range(0, x.size, chunk):
                off = np.abs(idx[None, :] - m[start:start + chunk, None])
                np.minimum(off, half + 1, out=off)          # beyond the tail: the 0 entry
                out[start:start + chunk, c] = table.take(off) @ weights / (total * p)
        return out

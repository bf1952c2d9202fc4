"""WEKA's implicit preprocessing, shared by the function learners (VotedPerceptron,
MultilayerPerceptron, SGD, Logistic, SMO).

WEKA's function learners quietly transform their input before learning: missing values are
replaced by training means (ReplaceMissingValues), attributes are mapped onto a range
(Normalize) or standardised (Standardize). Each estimator carries its own filters, fitted in
``fit`` and applied in every prediction method; the pieces live here once. Input validation
(and the NaN these learners accept because they replace it) is :mod:`spaces.slc._validation`'s.
"""
from __future__ import annotations

import warnings

import numpy as np


def fill_missing(X: np.ndarray, values: np.ndarray) -> np.ndarray:
    """WEKA ReplaceMissingValues for numeric attributes: NaN → the training mean."""
    if not np.isnan(X).any():
        return X
    return np.where(np.isnan(X), values[None, :], X)


def column_means(X: np.ndarray) -> np.ndarray:
    """Column means ignoring NaN (0 for an all-NaN column)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        return np.nan_to_num(np.nanmean(X, axis=0))


def range_scaling(X: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """WEKA Normalize onto ``[lo, hi]`` with the training min/max (``(X - mn) * mult + add``).

    Columns constant in training map to 0, as in WEKA's Normalize.
    """
    mn, mx = X.min(axis=0), X.max(axis=0)
    span = mx - mn
    const = span == 0
    mult = np.where(const, 0.0, (hi - lo) / np.where(const, 1.0, span))
    add = np.where(const, 0.0, lo)
    return mn, mult, add


def standardisation(X: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Weighted) mean and standard deviation (denominator W − 1); constant columns get sd 1."""
    w = np.ones(X.shape[0]) if w is None else w
    total = w.sum()
    mean = w @ X / total
    var = w @ (X - mean) ** 2 / max(total - 1.0, 1e-12)
    sd = np.sqrt(np.maximum(var, 0.0))
    return mean, np.where(sd > 0, sd, 1.0)


def one_hot(idx: np.ndarray, k: int) -> np.ndarray:
    """(len(idx), k) 0/1 matrix with a 1 at column ``idx[p]`` of row p."""
    idx = np.asarray(idx)
    out = np.zeros((idx.shape[0], k))
    out[np.arange(idx.shape[0]), idx] = 1.0
    return out

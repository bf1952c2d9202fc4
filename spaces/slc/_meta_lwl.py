"""Locally weighted learning (WEKA lazy.LWL): one kernel-weighted base fit per test row.

Why custom: nothing in scikit-learn trains a fresh model per query on kernel-weighted
neighbours. Following weka.classifiers.lazy.LWL (search-space notes §1.1.26), for each test row:

1. Euclidean distances to the training rows, attributes scaled to [0, 1] by the training
   min/max (WEKA's EuclideanDistance; constant attributes contribute nothing);
2. the k nearest rows (k = −1 or k ≥ N: all), ties with the k-th distance included;
   bandwidth = the k-th smallest distance; distances are divided by it (all 1 if it is 0);
3. kernel weights: 0 linear 1.0001−d, 1 Epanechnikov ¾(1.0001−d²), 2 tricube (1.0001−d³)³,
   3 inverse 1/(1+d), 4 Gaussian exp(−d²) — multiplied by the instance weights and rescaled to
   keep their sum;
4. a clone of the base fitted on those rows and weights (:func:`fit_slc`: weighted resample
   for learners without ``sample_weight``), and its class distribution for the row.

Distances and kernel weights are computed for blocks of test rows at once; only the fits loop
in Python, checking the evaluation deadline every row. Deviation: WEKA widens the attribute
ranges with every test row it sees (so predictions depend on the order of queries); here the
ranges are the training ones, so a fitted model gives the same answer for a row in any batch.
"""
from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline

from .base import fit_slc, slc_scores
from ._meta_common import fit_inputs, generator, member_seeds, predict_inputs, training_weights

KERNELS = {0: "linear", 1: "epanechnikov", 2: "tricube", 3: "inverse", 4: "gaussian"}
#: test rows × training rows held in one block of distances
_BLOCK_CELLS = 1 << 21


def kernel_weights(scaled: np.ndarray, kernel: int) -> np.ndarray:
    """WEKA LWL weighting kernels on distances already divided by the bandwidth."""
    d = np.asarray(scaled, dtype=np.float64)
    if kernel == 0:
        return 1.0001 - d
    if kernel == 1:
        return 0.75 * (1.0001 - d * d)
    if kernel == 2:
        return (1.0001 - d ** 3) ** 3
    if kernel == 3:
        return 1.0 / (1.0 + d)
    if kernel == 4:
        return np.exp(-d * d)
    raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {kernel!r}")


def neighbourhood_weights(dist: np.ndarray, n_neighbors: int, kernel: int) -> np.ndarray:
    """(rows, N) kernel weights for a block of distances; 0 outside each row's k nearest
    (ties with the k-th distance are inside). ``n_neighbors`` ≤ 0 means all rows."""
    n = dist.shape[1]
    k = n if n_neighbors <= 0 or n_neighbors >= n else int(n_neighbors)
    if k == n:
        bandwidth = dist.max(axis=1)
    else:
        bandwidth = np.partition(dist, k - 1, axis=1)[:, k - 1]
    inside = dist <= bandwidth[:, None]
    positive = bandwidth > 0
    scaled = np.ones_like(dist)
    scaled[positive] = dist[positive] / bandwidth[positive, None]
    weights = kernel_weights(scaled, kernel)
    weights[~inside] = 0.0
    return weights


class LocallyWeightedLearning(ClassifierMixin, BaseEstimator):
    """WEKA LWL: ``n_neighbors`` (``-K``, −1 = all) sets the kernel bandwidth, ``kernel``
    (``-U``: 0 linear, 1 Epanechnikov, 2 tricube, 3 inverse, 4 Gaussian) the weighting.

    ``fit`` only stores the training data; every ``predict_proba`` row costs one base fit.
    Deviation: rows of weight 0 are dropped at ``fit`` (WEKA keeps them as weightless
    neighbours, which still widen the attribute ranges and may set the bandwidth), so that a
    zero weight means an absent row.
    """

    def __init__(self, estimator, n_neighbors: int = -1, kernel: int = 0, random_state=None):
        self.estimator = estimator
        self.n_neighbors = n_neighbors
        self.kernel = kernel
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if int(self.kernel) not in KERNELS:
            raise ValueError(f"kernel must be one of {sorted(KERNELS)}, got {self.kernel!r}")
        X, self.classes_, self.y_ = fit_inputs(self, X, y)
        self.sample_weight_ = training_weights(sample_weight, X.shape[0])
        keep = self.sample_weight_ > 0          # a row of weight 0 is an absent row
        if not keep.all():
            X, self.y_, self.sample_weight_ = X[keep], self.y_[keep], self.sample_weight_[keep]
        lo, hi = X.min(axis=0), X.max(axis=0)
        span = hi - lo
        self.min_ = lo
        self.scale_ = np.where(span > 0, 1.0 / np.where(span > 0, span, 1.0), 0.0)
        self.X_ = X
        self.X_scaled_ = (X - lo) * self.scale_
        self.fit_seed_ = member_seeds(generator(self.random_state), 1)[0]
        return self

    def local_weights(self, X) -> np.ndarray:
        """(rows, N) training-row weights LWL would use for each row of ``X`` (before the
        instance weights)."""
        Xs = (predict_inputs(self, X, "X_") - self.min_) * self.scale_
        return neighbourhood_weights(cdist(Xs, self.X_scaled_), int(self.n_neighbors), int(self.kernel))

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "X_")
        Xs = (X - self.min_) * self.scale_
        n_train, k = self.X_.shape[0], self.classes_.size
        classes = np.arange(k)
        out = np.zeros((X.shape[0], k))
        block = max(1, _BLOCK_CELLS // max(n_train, 1))
        for start in range(0, X.shape[0], block):
            stop = min(start + block, X.shape[0])
            weights = neighbourhood_weights(cdist(Xs[start:stop], self.X_scaled_),
                                            int(self.n_neighbors), int(self.kernel))
            for r in range(stop - start):
                check_deadline()
                rows = np.flatnonzero(weights[r] > 0)
                base_w = self.sample_weight_[rows]
                w = weights[r, rows] * base_w
                if w.sum() > 0:
                    w *= base_w.sum() / w.sum()
                est = fit_slc(self.estimator, self.X_[rows], self.y_[rows], w, self.fit_seed_)
                out[start + r] = slc_scores(est, X[start + r:start + r + 1], classes)[0]
        return out

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

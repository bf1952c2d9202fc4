"""The contract every multi-label method in ``spaces/mlc`` follows (decision 1).

* ``fit(X, Y, sample_weight=None)`` with ``Y`` an (n, L) 0/1 array; returns self.
* ``predict_scores(X)`` → (n, L) soft per-label scores in [0, 1] (probabilities,
  vote fractions or normalised sums; each class documents its definition).
* ``predict_proba`` is the same array; ``predict`` cuts it at 0.5. The compiled model
  replaces that cut by the tree's threshold strategy (fixed, PCut1 or PCutL).

Single-label bases are passed unfitted as ``base`` and cloned per sub-problem with
:func:`spaces.slc.base.fit_slc`, which copes with constant targets and weights.
"""
from __future__ import annotations

from abc import ABCMeta, abstractmethod

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin


class MLCEstimator(MultiOutputMixin, ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class: subclasses implement ``fit`` and ``predict_scores``."""

    @abstractmethod
    def fit(self, X, Y, sample_weight=None) -> "MLCEstimator":
        """Fit on features ``X`` and an (n, L) 0/1 label matrix ``Y``."""

    @abstractmethod
    def predict_scores(self, X) -> np.ndarray:
        """(n, L) per-label scores in [0, 1]."""

    def predict_proba(self, X) -> np.ndarray:
        return np.clip(self.predict_scores(X), 0.0, 1.0)

    def predict(self, X) -> np.ndarray:
        return (self.predict_proba(X) >= 0.5).astype(np.int8)

    def score(self, X, Y, sample_weight=None) -> float:
        """Exact match (subset accuracy), like scikit-learn's multi-label classifiers."""
        return float(np.mean(np.all(self.predict(X) == np.asarray(Y), axis=1)))

    def _validate_Y(self, Y) -> np.ndarray:
        Y = np.asarray(Y)
        if Y.ndim != 2:
            raise ValueError(f"Y must be an (n, L) 0/1 matrix, got shape {Y.shape}")
        self.n_labels_ = Y.shape[1]
        return (Y > 0).astype(np.int8)

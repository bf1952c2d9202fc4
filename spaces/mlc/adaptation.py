"""ML-BPNN: the one algorithm-adaptation method of the spaces (notes §1.2.1).

A one-hidden-layer sigmoid network with one sigmoid output per label, trained by
back-propagation with momentum. Deviations from MEKA, both for cost (decision 10):
mini-batches of 32 instead of online updates (≈20× faster at the same epochs), and
scikit-learn's cross-entropy loss and Glorot initialisation instead of squared error
and N(0, 0.1²). Scores: the output sigmoids, per label in (0, 1).
Inputs are normalised to [-1, 1] with the training range, as Mulan's BPMLL does by default.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.neural_network import MLPClassifier

from ..params import Params
from ..registry import register
from ..slc.functions import _range_scaling
from .base import MLCEstimator


class BPNN(MLCEstimator):
    """ML-BPNN (Mulan BPMLL as used by MEKA): see the module docstring for the deviations.

    Scaling: ``normalize`` (default True, Mulan's ``normalizeAttributes``) maps every input to
    [-1, 1] with the training min/max (columns constant in training → 0), because unscaled
    features saturate the sigmoids (on emotions every row then gets nearly the same scores).
    """

    def __init__(self, epochs=100, hidden_units=10, learning_rate=0.1, momentum=0.1, batch_size=32,
                 normalize=True, random_state=0):
        self.epochs = epochs
        self.hidden_units = hidden_units
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.batch_size = batch_size
        self.normalize = normalize
        self.random_state = random_state

    def _scale(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        scaling = getattr(self, "scaling_", None)  # None also for models pickled before scaling existed
        return X if scaling is None else (X - scaling[0]) * scaling[1] + scaling[2]

    def fit(self, X, Y, sample_weight=None):
        Y = self._validate_Y(Y)
        X = np.asarray(X, dtype=float)
        self.scaling_ = _range_scaling(X, -1.0, 1.0) if self.normalize else None
        X = self._scale(X)
        self.net_ = MLPClassifier(
            hidden_layer_sizes=(max(1, int(self.hidden_units)),), activation="logistic", solver="sgd",
            learning_rate="constant", learning_rate_init=self.learning_rate, momentum=self.momentum,
            nesterovs_momentum=False, alpha=0.0, batch_size=self.batch_size, max_iter=int(self.epochs),
            tol=0.0, n_iter_no_change=int(self.epochs), early_stopping=False, shuffle=True,
            random_state=self.random_state)
        # A label that never (or always) occurs would make sklearn treat Y as fewer classes;
        # such columns are predicted from their constant value instead.
        self.constant_ = np.where(Y.min(axis=0) == Y.max(axis=0), Y[0], -1)
        self.varying_ = np.flatnonzero(self.constant_ < 0)
        if self.varying_.size:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                target = Y[:, self.varying_]
                if self.varying_.size == 1:
                    target = np.column_stack([target, 1 - target])  # keep the multi-label code path
                self.net_.fit(X, target, sample_weight=sample_weight)
        return self

    def predict_scores(self, X):
        X = self._scale(X)
        out = np.tile(self.constant_.astype(float), (X.shape[0], 1))
        if self.varying_.size:
            proba = self.net_.predict_proba(X)
            out[:, self.varying_] = proba[:, : self.varying_.size]
        return out


@register("BPNN", kind="mlc-aa")
def ml_bpnn(p: Params) -> BPNN:
    """ML-BPNN: ne epochs, nhu_bpnn hidden units, learning rate lr_bpnn, momentum m_bpnn."""
    return BPNN(epochs=p.int("ne"), hidden_units=p.int("nhu_bpnn"),
                learning_rate=p.real("lr_bpnn"), momentum=p.real("m_bpnn"),
                random_state=p.random_state)

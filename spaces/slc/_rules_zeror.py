"""WEKA ZeroR: the class prior, with WEKA's +1 (Laplace) start on every class count.

scikit-learn's ``DummyClassifier(strategy="prior")`` has no +1, so the probabilities differ
on small or skewed targets; this few-line estimator is exact.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.slc._validation import fit_inputs, predict_inputs


class WekaZeroR(ClassifierMixin, BaseEstimator):
    """Predicts the majority class; ``predict_proba`` = (1 + weighted class count) normalised.

    ``random_state`` is accepted for a uniform builder interface and is unused (ZeroR is
    deterministic). Instance weights are honoured, as in WEKA.
    """

    def __init__(self, random_state=None):
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.poor_score = True    # the majority class, as DummyClassifier
        return tags

    def fit(self, X, y, sample_weight=None):
        _, codes, w = fit_inputs(self, X, y, sample_weight)
        counts = 1.0 + np.bincount(codes, weights=w, minlength=self.classes_.size)
        self.class_prior_ = counts / counts.sum()
        self.majority_ = int(np.argmax(counts))
        return self

    def predict_proba(self, X):
        X = predict_inputs(self, X)
        return np.tile(self.class_prior_, (X.shape[0], 1))

    def predict(self, X):
        X = predict_inputs(self, X)
        return np.full(X.shape[0], self.classes_[self.majority_])

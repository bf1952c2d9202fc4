"""What every multi-label method needs from a single-label classifier.

Problem transformations hand SLCs targets that WEKA copes with and scikit-learn does
not: a single class after a split or a bag, classes missing from a subsample,
instance weights for learners without ``sample_weight``. :func:`fit_slc` and
:func:`slc_scores` absorb all of that (search-space notes §0.4), so the multi-label
code can treat every SLC alike:

* a constant target gives a constant predictor;
* instance weights are passed to ``fit`` when it accepts them, else emulated by a
  weighted resample drawn from the given seed;
* scores are returned for an explicit list of classes (zeros for unseen ones);
  learners without ``predict_proba`` give a one-hot of their prediction.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils.validation import has_fit_parameter


class ConstantClassifier(ClassifierMixin, BaseEstimator):
    """Predicts the single class seen in training (WEKA never fails on this)."""

    def fit(self, X, y, sample_weight=None):
        self.classes_ = np.unique(np.asarray(y))
        return self

    def predict_proba(self, X):
        n = np.asarray(X).shape[0] if hasattr(X, "shape") else len(X)
        return np.ones((n, len(self.classes_)))

    def predict(self, X):
        n = np.asarray(X).shape[0] if hasattr(X, "shape") else len(X)
        return np.full(n, self.classes_[0])


def _accepts_weights(estimator) -> bool:
    try:
        return has_fit_parameter(estimator, "sample_weight")
    except (TypeError, ValueError):
        return False


def fit_slc(template, X, y, sample_weight=None, random_state: int | None = 0):
    """A fitted clone of ``template`` on ``(X, y)``; never fails on a constant target."""
    y = np.asarray(y)
    if np.unique(y).size < 2:
        return ConstantClassifier().fit(X, y)
    est = clone(template)
    if sample_weight is None:
        return est.fit(X, y)
    w = np.asarray(sample_weight, dtype=float)
    if _accepts_weights(est):
        return est.fit(X, y, sample_weight=w)
    # WEKA's resampleWithWeights: draw N rows with probability proportional to weight.
    rng = np.random.default_rng(random_state)
    p = w / w.sum() if w.sum() > 0 else None
    idx = rng.choice(len(y), size=len(y), replace=True, p=p)
    if np.unique(y[idx]).size < 2:
        return ConstantClassifier().fit(X, y[idx])
    return est.fit(X[idx], y[idx])


def slc_scores(est, X, classes) -> np.ndarray:
    """(n, len(classes)) scores of a fitted SLC, columns aligned with ``classes`` (sorted)."""
    classes = np.asarray(classes)
    out = np.zeros((X.shape[0], classes.size))
    own = np.asarray(est.classes_)
    if hasattr(est, "predict_proba"):
        try:
            proba = np.asarray(est.predict_proba(X), dtype=float)
        except (AttributeError, NotImplementedError):
            proba = None
    else:
        proba = None
    if proba is None:
        pred = np.asarray(est.predict(X))
        proba = (pred[:, None] == own[None, :]).astype(float)
    if not np.isfinite(proba).all():
        proba = np.nan_to_num(proba, nan=0.0, posinf=1.0, neginf=0.0)
    pos = np.searchsorted(classes, own)
    valid = (pos < classes.size) & (classes[np.minimum(pos, classes.size - 1)] == own)
    out[:, pos[valid]] = proba[:, valid]
    return out


def positive_scores(est, X) -> np.ndarray:
    """P(class 1) of a fitted binary SLC trained on a 0/1 target (0 if 1 never seen)."""
    return slc_scores(est, X, np.array([0, 1]))[:, 1]

"""An ensemble of compiled models: the weighted mean of their scores, one estimator.

What a run returns when it builds an ensemble from what it evaluated (``--ensemble``,
:mod:`ggp_automl.search.ensemble`). Members are the project's own models (:mod:`spaces.model`), all of
one task: multi-label members' per-label scores are averaged and cut by the ensemble's own
``thresholds`` (chosen on the validation rows; a strategy name or per-label values), single-label
members' class probabilities are averaged over the union of the classes they saw and the class of
highest mean probability is predicted (the first on ties). ``weights`` are the selection's
(counts / size). It is an ordinary scikit-learn estimator — ``get_params``, ``clone``, ``fit``
returns self — so ``model.py`` exports it like a single model, and ``fit`` refits every member.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import get_tags
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._feature_names import by_name
from .thresholds import calibrate


class EnsembleModel(ClassifierMixin, BaseEstimator):
    """``members``: unfitted models of one task; ``weights``: one non-negative weight per member
    (None: equal); ``thresholds``: multi-label only — PCut1, PCutL, a real or one real per label;
    ``voting``: ``soft`` (the weighted mean of the members' scores) or ``hard`` (the weighted share of
    the members' predictions — per label for multi-label data — and the majority: a label needs more
    than half the votes, a class the most, the first on ties; ensemble optimisation's vote)."""

    def __init__(self, members=None, weights=None, thresholds="PCut1", voting="soft"):
        self.members = members
        self.weights = weights
        self.thresholds = thresholds
        self.voting = voting

    def _weights(self) -> np.ndarray:
        if self.voting not in ("soft", "hard"):
            raise ValueError(f"voting must be soft or hard, got {self.voting!r}")
        n = len(self.members or ())
        if n == 0:
            raise ValueError("an ensemble needs at least one member")
        w = np.ones(n) if self.weights is None else np.asarray(self.weights, dtype=float)
        if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError(f"weights must be {n} non-negative numbers, not all 0; got {self.weights!r}")
        return w / w.sum()

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True  # every member imputes missing values
        # multi-label members make a multi-label ensemble
        tags.target_tags.multi_output = bool(self.members) and all(
            get_tags(m).target_tags.multi_output for m in self.members)
        return tags

    def fit(self, X, y, sample_weight=None):
        """Fit every member on ``(X, y)``: ``y`` a class vector or an (n, labels) 0/1 matrix."""
        weights = self._weights()  # the members and weights first: they decide what y may be
        multi = get_tags(self).target_tags.multi_output
        X, Y = validate_data(self, X, y, multi_output=multi, ensure_all_finite="allow-nan", ensure_min_samples=2)
        if not multi:
            check_classification_targets(Y)
        self.weights_ = weights
        fitted = []
        for member in self.members:
            model = clone(member)
            fitted.append(model.fit(X, Y) if sample_weight is None else model.fit(X, Y, sample_weight=sample_weight))
        return self._fitted(fitted, np.asarray(Y), X)

    @classmethod
    def from_fitted(cls, models: list, weights, thresholds="PCut1", voting: str = "soft", X=None,
                    Y=None) -> "EnsembleModel":
        """An ensemble of already fitted models (a run's refit members), without refitting them; a
        threshold strategy is calibrated on the members' scores of ``(X, Y)``, the data they were fit
        on, as :meth:`fit` does."""
        ensemble = cls([clone(m) for m in models], [float(w) for w in weights],
                       thresholds if isinstance(thresholds, str) else [float(t) for t in np.ravel(thresholds)],
                       voting)
        ensemble.weights_ = ensemble._weights()
        return ensemble._fitted(list(models), None if Y is None else np.asarray(Y), X)

    def _fitted(self, models: list, Y, X) -> "EnsembleModel":
        self.members_ = models
        first = models[0]
        self.n_features_in_ = first.n_features_in_
        if hasattr(first, "n_labels_"):
            self.n_labels_ = first.n_labels_
            if self.voting == "hard":  # a majority of the votes: more than half
                self.thresholds_ = np.full(self.n_labels_, np.nextafter(0.5, 1.0))
            elif isinstance(self.thresholds, str) or np.ndim(self.thresholds) == 0:
                if Y is None:
                    raise ValueError("a strategy threshold is calibrated on training data: fit the ensemble")
                self.thresholds_ = calibrate(self.thresholds, self._mean(np.asarray(X, dtype=float)), Y)
            else:
                self.thresholds_ = np.asarray(self.thresholds, dtype=float)
                if self.thresholds_.shape != (self.n_labels_,):
                    raise ValueError(f"thresholds must hold one value per label ({self.n_labels_}), "
                                     f"got {self.thresholds_.shape[0]}")
        else:
            self.classes_ = np.unique(np.concatenate([m.classes_ for m in models]))
        return self

    def _mean(self, X) -> np.ndarray:
        total = None
        for w, model in zip(self.weights_, self.members_):
            if self.voting == "hard":
                votes = model.predict(X)
                if hasattr(self, "classes_"):
                    scores = (np.asarray(votes)[:, None] == self.classes_[None, :]).astype(float)
                else:
                    scores = np.asarray(votes, dtype=float)
            else:
                scores = np.asarray(model.predict_proba(X), dtype=float)
                if hasattr(self, "classes_"):  # one column per class of the ensemble
                    full = np.zeros((scores.shape[0], len(self.classes_)))
                    full[:, np.searchsorted(self.classes_, model.classes_)] = scores
                    scores = full
            total = w * scores if total is None else total + w * scores
        return total

    def predict_proba(self, X) -> np.ndarray:
        """The weighted mean of the members' scores (soft) or votes (hard): (n, labels) or (n, len(classes_))."""
        check_is_fitted(self, "members_")
        X = validate_data(self, by_name(self, X), reset=False, ensure_all_finite="allow-nan")
        return self._mean(np.asarray(X, dtype=float))

    def decide(self, scores: np.ndarray) -> np.ndarray:
        """Multi-label: score >= the label's threshold; single-label: the class of highest mean probability."""
        if hasattr(self, "thresholds_"):
            return (np.asarray(scores) >= self.thresholds_).astype(np.int8)
        return self.classes_[np.argmax(np.asarray(scores), axis=1)]

    def predict(self, X) -> np.ndarray:
        return self.decide(self.predict_proba(X))

"""The compiled model: preprocessing + the tree's estimator (+ threshold), one estimator.

A derivation tree compiles to a :class:`MultiLabelModel` (a multi-label method whose per-label
scores the stored threshold(s) turn into a 0/1 indicator matrix) or a :class:`SingleLabelModel`
(a single-label classifier; the class of highest probability, as WEKA's ``classifyInstance``),
whichever the run's task (:mod:`evaluation.task`) wraps. Both are ordinary scikit-learn
estimators (``get_params``/``clone``, ``fit`` returns self): raw features with nominal
columns (integer codes) and missing values (NaN) are imputed and one-hot encoded inside them
(:mod:`spaces.encoding`: once per data view while a search evaluates candidates).
Both have ``decide(scores)``, the one place where scores become predictions.

:func:`load_model` reads one back from a ``model.joblib`` and checks that it is a fitted
model, so that a damaged or foreign file is reported as such, not as a traceback.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, clone

from ._feature_names import by_name, remember_names
from .encoding import encoded, fit_encoded
from .thresholds import calibrate

if TYPE_CHECKING:
    from .ensemble import EnsembleModel


class MultiLabelModel(MultiOutputMixin, ClassifierMixin, BaseEstimator):
    """``estimator``: a multi-label method (``spaces/mlc``); ``threshold``: PCut1, PCutL or a real."""

    def __init__(self, estimator=None, threshold="PCut1", categorical_features=None):
        self.estimator = estimator
        self.threshold = threshold
        self.categorical_features = categorical_features

    def fit(self, X, Y, sample_weight=None):
        remember_names(self, X)
        X = np.asarray(X, dtype=float)
        Y = (np.asarray(Y) > 0).astype(np.int8)
        if Y.ndim != 2:
            raise ValueError(f"Y must be an (n, L) 0/1 matrix, got shape {Y.shape}")
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        self.preprocessor_, Xt = fit_encoded(X, self.categorical_features)
        self.estimator_ = clone(self.estimator)
        if sample_weight is None:
            self.estimator_.fit(Xt, Y)
        else:
            self.estimator_.fit(Xt, Y, sample_weight=sample_weight)
        self.thresholds_ = calibrate(self.threshold, self._scores(Xt), Y)
        return self

    def _scores(self, Xt) -> np.ndarray:
        scores = np.asarray(self.estimator_.predict_proba(Xt), dtype=float)
        return np.clip(np.nan_to_num(scores, nan=0.0), 0.0, 1.0)

    def predict_proba(self, X) -> np.ndarray:
        """(n, L) per-label scores in [0, 1]."""
        return self._scores(encoded(self.preprocessor_, np.asarray(by_name(self, X), dtype=float)))

    def decide(self, scores: np.ndarray) -> np.ndarray:
        """The thresholds' cut: a label is predicted when its score reaches its stored threshold."""
        return (np.asarray(scores) >= self.thresholds_).astype(np.int8)

    def predict(self, X) -> np.ndarray:
        """(n, L) 0/1 indicator matrix: score >= the label's stored threshold."""
        return self.decide(self.predict_proba(X))

    def score(self, X, Y, sample_weight=None) -> float:
        """Exact match (subset accuracy)."""
        return float(np.mean(np.all(self.predict(X) == (np.asarray(Y) > 0), axis=1)))


class SingleLabelModel(ClassifierMixin, BaseEstimator):
    """``estimator``: a single-label classifier (``spaces/slc``), fit on the preprocessed features.

    ``classes_`` are the classes seen in training (class codes, as the run's data hold them);
    ``predict_proba`` has one column per class of ``classes_``. A training set with a single
    class gives a constant model (:func:`spaces.slc.base.fit_slc`), as WEKA never fails there.
    """

    def __init__(self, estimator=None, categorical_features=None):
        self.estimator = estimator
        self.categorical_features = categorical_features

    def fit(self, X, y, sample_weight=None):
        from .slc.base import fit_slc

        remember_names(self, X)
        X = np.asarray(X, dtype=float)
        y = np.asarray(y)
        if y.ndim != 1:
            raise ValueError(f"y must be a vector of classes, got shape {y.shape}")
        self.n_features_in_ = X.shape[1]
        self.classes_ = np.unique(y)
        self.preprocessor_, Xt = fit_encoded(X, self.categorical_features)
        self.estimator_ = fit_slc(self.estimator, Xt, y, sample_weight)
        return self

    def predict_proba(self, X) -> np.ndarray:
        """(n, len(classes_)) class probabilities (rows sum to 1; NaN counts as 0)."""
        from .slc.base import slc_scores

        Xt = encoded(self.preprocessor_, np.asarray(by_name(self, X), dtype=float))
        scores = slc_scores(self.estimator_, Xt, self.classes_)
        scores = np.clip(np.nan_to_num(scores, nan=0.0, posinf=1.0, neginf=0.0), 0.0, None)
        total = scores.sum(axis=1, keepdims=True)
        uniform = np.full_like(scores, 1.0 / max(scores.shape[1], 1))
        return np.where(total > 0, scores / np.where(total > 0, total, 1.0), uniform)

    def decide(self, proba: np.ndarray) -> np.ndarray:
        """The class of highest probability (the first on ties, as WEKA's ``Utils.maxIndex``)."""
        return self.classes_[np.argmax(np.asarray(proba), axis=1)]

    def predict(self, X) -> np.ndarray:
        return self.decide(self.predict_proba(X))


class ModelFileError(ValueError):
    """A file that does not hold a fitted model; ``reason`` says why, in a few words."""

    def __init__(self, path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def _cut_pickle(path) -> bool:
    """Whether ``path`` is an uncompressed pickle (joblib's default) whose stream stops before its STOP
    opcode: a cut stream fails in unpickling with whatever the last whole opcode leaves behind
    (IndexError, UnpicklingError, ...), so the bytes, not the exception, say "truncated"."""
    with open(path, "rb") as f:
        head = f.read(1)
        f.seek(-1, 2)
        return head == b"\x80" and f.read(1) != b"."


def model_file_problem(path) -> str | None:
    """Why ``path`` cannot hold a whole model, from its size and last byte alone (nothing is unpickled):
    "empty", "truncated"; None when it may."""
    import os

    if os.path.getsize(path) == 0:
        return "empty"
    return "truncated" if _cut_pickle(path) else None


def load_model(path) -> MultiLabelModel | SingleLabelModel | EnsembleModel:
    """The fitted model saved in ``path`` (``joblib.dump``); :class:`ModelFileError` if it is not one.

    A damaged file fails inside unpickling in many ways (truncated streams, bad opcodes, broken
    compression), so every exception from loading means "cannot be read"; an empty or cut file is said
    so before loading (:func:`model_file_problem`)."""
    import joblib

    problem = model_file_problem(path)
    if problem:
        raise ModelFileError(path, problem)
    try:
        model = joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        if isinstance(exc, EOFError) or any(word in str(exc) for word in ("truncated", "exhausted")):
            raise ModelFileError(path, "truncated") from None
        raise ModelFileError(path, f"unreadable: {type(exc).__name__}: {str(exc)[:160]}") from None
    from .ensemble import EnsembleModel

    if not isinstance(model, (MultiLabelModel, SingleLabelModel, EnsembleModel)):
        raise ModelFileError(path, f"it holds a {type(model).__name__}, not a model")
    if not hasattr(model, "estimator_" if not isinstance(model, EnsembleModel) else "members_"):
        raise ModelFileError(path, "the model in it was never fitted")
    return model


def wrap_model(estimator, produced: str, global_values: dict, categorical_features=None):
    """The unfitted model of a tree whose outermost algorithm produces ``produced`` ("mlc" or "slc"):
    preprocessing + ``estimator`` (+ the threshold of the tree's global values for multi-label)."""
    if produced == "mlc":
        from .thresholds import threshold_of

        return MultiLabelModel(estimator, threshold_of(global_values), categorical_features)
    return SingleLabelModel(estimator, categorical_features)

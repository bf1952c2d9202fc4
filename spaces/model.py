"""The compiled model: preprocessing + multi-label method + threshold, one estimator.

A derivation tree compiles to a :class:`MultiLabelModel`. It is an ordinary
scikit-learn estimator (``get_params``/``clone``, ``fit`` returns self): raw
features with nominal columns (integer codes) and missing values (NaN) are imputed
and one-hot encoded inside it, the multi-label method produces per-label scores,
and the stored threshold(s) turn them into a 0/1 indicator matrix.

:func:`load_model` reads one back from a ``model.joblib`` and checks that it is a fitted
model, so that a damaged or foreign file is reported as such, not as a traceback.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, MultiOutputMixin, clone
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder

from .thresholds import calibrate


def make_preprocessor(n_features: int, categorical_features) -> ColumnTransformer:
    """Impute (mean / most frequent) and one-hot encode nominal columns."""
    cat = sorted(set(int(i) for i in (categorical_features or [])))
    num = [i for i in range(n_features) if i not in set(cat)]
    parts = []
    if num:
        parts.append(("numeric", SimpleImputer(strategy="mean", keep_empty_features=True), num))
    if cat:
        parts.append(("nominal", make_pipeline(
            SimpleImputer(strategy="most_frequent", keep_empty_features=True),
            OneHotEncoder(handle_unknown="ignore", drop="if_binary", sparse_output=False)), cat))
    return ColumnTransformer(parts, remainder="drop", sparse_threshold=0.0)


class MultiLabelModel(MultiOutputMixin, ClassifierMixin, BaseEstimator):
    """``estimator``: a multi-label method (``spaces/mlc``); ``threshold``: PCut1, PCutL or a real."""

    def __init__(self, estimator=None, threshold="PCut1", categorical_features=None):
        self.estimator = estimator
        self.threshold = threshold
        self.categorical_features = categorical_features

    def fit(self, X, Y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        Y = (np.asarray(Y) > 0).astype(np.int8)
        if Y.ndim != 2:
            raise ValueError(f"Y must be an (n, L) 0/1 matrix, got shape {Y.shape}")
        self.n_features_in_ = X.shape[1]
        self.n_labels_ = Y.shape[1]
        self.preprocessor_ = make_preprocessor(X.shape[1], self.categorical_features).fit(X)
        Xt = self.preprocessor_.transform(X)
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
        return self._scores(self.preprocessor_.transform(np.asarray(X, dtype=float)))

    def predict(self, X) -> np.ndarray:
        """(n, L) 0/1 indicator matrix: score >= the label's stored threshold."""
        return (self.predict_proba(X) >= self.thresholds_).astype(np.int8)

    def score(self, X, Y, sample_weight=None) -> float:
        """Exact match (subset accuracy)."""
        return float(np.mean(np.all(self.predict(X) == (np.asarray(Y) > 0), axis=1)))


class ModelFileError(ValueError):
    """A file that does not hold a fitted :class:`MultiLabelModel`; ``reason`` says why, in a few words."""

    def __init__(self, path, reason: str):
        self.path, self.reason = path, reason
        super().__init__(f"{path}: {reason}")


def load_model(path) -> MultiLabelModel:
    """The fitted model saved in ``path`` (``joblib.dump``); :class:`ModelFileError` if it is not one.

    A damaged file fails inside unpickling in many ways (truncated streams, bad opcodes, broken
    compression), so every exception from loading means "cannot be read"."""
    import joblib

    import os

    if os.path.getsize(path) == 0:
        raise ModelFileError(path, "empty")
    try:
        model = joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - see the docstring
        if isinstance(exc, EOFError) or any(word in str(exc) for word in ("truncated", "exhausted")):
            raise ModelFileError(path, "truncated") from None
        raise ModelFileError(path, f"unreadable: {type(exc).__name__}: {str(exc)[:160]}") from None
    if not isinstance(model, MultiLabelModel):
        raise ModelFileError(path, f"it holds a {type(model).__name__}, not a model")
    if not hasattr(model, "thresholds_"):
        raise ModelFileError(path, "the model in it was never fitted")
    return model

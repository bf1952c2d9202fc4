"""The input contract every single-label classifier of the registry keeps.

Why one place: the SLCs are fed by our own model (imputed, one-hot encoded float matrices
and integer targets), but also by the meta-learners, by scikit-learn's tools and by
``tests/test_slc_estimator_checks.py``, which runs scikit-learn's estimator checks on every
registered ``slc`` and ``meta-slc``. They must all refuse and accept the same inputs:

* ``X``: 2-d and numeric; finite, except that learners replacing missing values themselves
  (WEKA's ReplaceMissingValues inside Logistic, SMO, SGD, …) accept NaN and say so with the
  ``allow_nan`` tag (:class:`ReplacesMissingValues`); the width is recorded in
  ``n_features_in_`` and checked at prediction;
* ``y``: 1-d class labels of any type (strings, non-contiguous integers), never a continuous
  target; ``classes_`` holds them sorted, the learners work on codes ``0..K-1`` and
  ``predict`` maps back to the labels;
* ``sample_weight``: one finite, non-negative weight per row, not all zero;
* every prediction method raises ``NotFittedError`` before ``fit``.

The search's shared encoding of a data view (:mod:`spaces.encoding`) is checked once, where it is
made; the checks below are not repeated for it at every base fit (issue 25).
"""
from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ..encoding import is_validated


def _finite(allow_nan: bool):
    return "allow-nan" if allow_nan else True


def sample_weights(sample_weight, X) -> np.ndarray:
    """Validated float weights (ones when None): one per row, finite, >= 0, not all zero."""
    return _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)


def _trusted(X, dtype) -> bool:
    """``X`` is the search's shared encoding of a data view (:func:`spaces.encoding.is_validated`): already
    checked once for the candidate, so a base fit inside an ensemble or a binary relevance need not
    check it again (the same checks, the same errors, just not repeated)."""
    return type(X) is np.ndarray and X.dtype == dtype and is_validated(X)


def fit_inputs(est, X, y, sample_weight=None, *, dtype=np.float64, allow_nan: bool = False):
    """``(X, codes, w)`` for ``est.fit``: validated features, class codes ``0..K-1`` and
    weights; sets ``est.classes_`` and ``est.n_features_in_``."""
    if _trusted(X, dtype):
        y = np.asarray(y)
        if y.ndim == 1 and len(y) == len(X) and y.dtype.kind in "iub":  # integer classes: nothing to check
            est.n_features_in_ = X.shape[1]
            if hasattr(est, "feature_names_in_"):
                del est.feature_names_in_
            est.classes_, codes = np.unique(y, return_inverse=True)
            w = np.ones(len(X)) if sample_weight is None else sample_weights(sample_weight, X)
            return X, codes.astype(np.intp), w
    X, y = validate_data(est, X, y, dtype=dtype, ensure_all_finite=_finite(allow_nan))
    check_classification_targets(y)
    est.classes_, codes = np.unique(y, return_inverse=True)
    return X, codes.astype(np.intp), sample_weights(sample_weight, X)


def predict_inputs(est, X, *, dtype=np.float64, allow_nan: bool = False,
                   fitted: str = "classes_") -> np.ndarray:
    """Validated features for a prediction by the fitted ``est`` (same width as in fit)."""
    check_is_fitted(est, fitted)
    if _trusted(X, dtype) and X.shape[1] == getattr(est, "n_features_in_", None) \
            and not hasattr(est, "feature_names_in_"):
        return X
    return validate_data(est, X, dtype=dtype, reset=False, ensure_all_finite=_finite(allow_nan))


def labels(est, proba: np.ndarray) -> np.ndarray:
    """The class label of the largest score in every row (first one on ties)."""
    return est.classes_[np.argmax(proba, axis=1)]


class ReplacesMissingValues:
    """Mixin tag of a learner that replaces NaN itself (WEKA ReplaceMissingValues): it accepts
    NaN in ``X`` — infinities are still refused."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

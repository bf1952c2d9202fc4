"""Small helpers shared by the single-label meta-classifiers (ASC, AdaBoostM1, Bagging, LWL, …).

Every meta-classifier in ``spaces/slc/meta.py`` does the same few things around its base
learner: encode the target to ``0..K-1`` (so member scores line up by
:func:`spaces.slc.base.slc_scores`), derive member seeds from its own ``random_state``
(never the global one), give each member its seed, and turn summed scores into rows that sum
to one. Keeping those steps here keeps the algorithm modules about the algorithm.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import clone
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, has_fit_parameter, validate_data

#: upper bound (exclusive) of the member seeds; fits every library's ``random_state``
SEED_BOUND = 2**31 - 1


def fit_inputs(estimator, X, y) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validated ``(X, classes, codes)`` for ``estimator.fit``; records ``n_features_in_``."""
    X, y = validate_data(estimator, X, y, dtype=np.float64)
    check_classification_targets(y)
    classes, codes = encode_target(y)
    return X, classes, codes


def predict_inputs(estimator, X, attribute: str) -> np.ndarray:
    """Validated features for prediction by a fitted ``estimator`` (same width as in fit)."""
    check_is_fitted(estimator, attribute)
    return validate_data(estimator, X, dtype=np.float64, reset=False)


def encode_target(y) -> tuple[np.ndarray, np.ndarray]:
    """``(classes, codes)``: the sorted distinct classes and ``y`` as indices into them."""
    y = np.asarray(y)
    if y.ndim != 1:
        y = y.ravel()
    classes, codes = np.unique(y, return_inverse=True)
    return classes, codes.astype(np.intp)


def training_weights(sample_weight, n: int) -> np.ndarray:
    """Instance weights as a float array (ones when none are given)."""
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64).ravel()
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} entries for {n} rows")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError("sample_weight must be finite and non-negative")
    if n and w.sum() <= 0:
        raise ValueError("sample_weight sums to zero")
    return w


def generator(random_state) -> np.random.Generator:
    """A private generator: ``random_state`` is an int (or None for fresh entropy)."""
    if isinstance(random_state, np.random.Generator):
        return random_state
    return np.random.default_rng(random_state)


def member_seeds(rng: np.random.Generator, n: int) -> list[int]:
    """``n`` member seeds drawn from ``rng``."""
    return [int(s) for s in rng.integers(0, SEED_BOUND, size=n)]


def seeded(estimator, seed: int):
    """An unfitted clone of ``estimator`` whose ``random_state`` parameters (nested ones
    included, e.g. an ASC's inner learner) are all set to ``seed``; learners without one are
    returned as a plain clone."""
    est = clone(estimator)
    keys = [k for k in est.get_params(deep=True)
            if k == "random_state" or k.endswith("__random_state")]
    if keys:
        est.set_params(**{k: int(seed) for k in keys})
    return est


def accepts_sample_weight(estimator) -> bool:
    try:
        return has_fit_parameter(estimator, "sample_weight")
    except (TypeError, ValueError):
        return False


def normalise_rows(scores: np.ndarray) -> np.ndarray:
    """Rows scaled to sum to one (WEKA's ``Utils.normalize``); an all-zero row becomes uniform."""
    scores = np.asarray(scores, dtype=np.float64)
    sums = scores.sum(axis=1, keepdims=True)
    out = np.empty_like(scores)
    ok = sums[:, 0] > 0
    out[ok] = scores[ok] / sums[ok]
    out[~ok] = 1.0 / scores.shape[1]
    return out

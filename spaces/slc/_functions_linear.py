"""WEKA's linear function learners: SGD and Logistic (grammar ``LogisticRegression``).

Both are scikit-learn's own solvers (``SGDClassifier``, ``LogisticRegression``) wrapped in the
preprocessing WEKA applies implicitly (ReplaceMissingValues, Normalize / Standardize, the
once-shuffled row order of SGD) and with WEKA's parameterisation translated (search-space notes
§1.1.3, §1.1.14). Logistic also serves SMO's calibration (``-M``), so it lives apart from SMO.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from scipy.special import expit, softmax
from sklearn.utils.validation import check_is_fitted

from ..encoding import is_validated
from ._functions_common import column_means, fill_missing, one_hot, range_scaling, standardisation
from ._validation import ReplacesMissingValues, fit_inputs, labels, predict_inputs

_SGD_LOSS = {0: "hinge", 1: "log_loss", 2: "squared_error"}


class WekaSGD(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
    """WEKA SGD: linear model, constant learning rate, 500 epochs over a once-shuffled order.

    Maps to ``SGDClassifier(learning_rate="constant", eta0=lr, alpha=ridge/N, max_iter=500,
    tol=None, shuffle=False)`` on rows permuted once, which reproduces WEKA's per-row update
    (weight decay ``1 − lr·λ/N``, unpenalised bias). Attributes normalised to [0, 1] unless
    ``normalize=False`` (``nn``); missing values → means unless ``replace_missing=False``
    (``nrmv``: then a missing value contributes nothing, as in WEKA). ``loss``: 0 hinge,
    1 log, 2 squared. Log loss gives probabilities; hinge and squared loss are hard
    (one-hot of the prediction), as WEKA's distribution.
    Deviations: one-vs-rest on multi-class targets (decision 3; WEKA is binary-only);
    squared loss regresses the ±1 class code (WEKA accepts squared loss only for a numeric
    class). No ``sample_weight``: WEKA's SGD ignores instance weights.
    """

    def __init__(self, loss=0, learning_rate=0.01, ridge=1e-4, normalize=True,
                 replace_missing=True, epochs=500, random_state=0):
        self.loss = loss
        self.learning_rate = learning_rate
        self.ridge = ridge
        self.normalize = normalize
        self.replace_missing = replace_missing
        self.epochs = epochs
        self.random_state = random_state

    def _prepare(self, X: np.ndarray) -> np.ndarray:
        if self.replace_missing:
            X = fill_missing(X, self.means_)
        if self.normalize:
            X = (X - self.offset_) * self.mult_ + self.add_
        return np.nan_to_num(X, nan=0.0)

    def fit(self, X, y):
        X, yi, _ = fit_inputs(self, X, y, allow_nan=True)
        loss = int(self.loss)
        if loss not in _SGD_LOSS:
            raise ValueError(f"loss must be 0 (hinge), 1 (log) or 2 (squared), got {self.loss!r}")
        self.means_ = column_means(X)
        filled = fill_missing(X, self.means_)
        self.offset_, self.mult_, self.add_ = range_scaling(filled, 0.0, 1.0)
        Xs = self._prepare(X)
        if self.classes_.size < 2:  # a constant target: WEKA predicts the one class
            self.model_ = None
            return self
        order = np.random.default_rng(int(self.random_state)).permutation(X.shape[0])
        self.model_ = SGDClassifier(
            loss=_SGD_LOSS[loss], penalty="l2", alpha=float(self.ridge) / X.shape[0],
            learning_rate="constant", eta0=float(self.learning_rate), max_iter=int(self.epochs),
            tol=None, shuffle=False, random_state=int(self.random_state), n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit(Xs[order], yi[order])
        return self

    def _inputs(self, X) -> np.ndarray:
        return self._prepare(predict_inputs(self, X, allow_nan=True, fitted="model_"))

    def appended_scorer(self, X_fixed: np.ndarray):
        """``score(extra, rows=None)``: :meth:`predict_proba` of ``[X_fixed[rows], extra]`` for a binary
        model, the finite ``X_fixed``'s part of the decision computed once (a Gibbs sweep or a chain
        search changes only the appended label columns). None otherwise."""
        if self.model_ is None or self.classes_.size != 2:
            return None
        m = X_fixed.shape[1]
        coef, intercept = self.model_.coef_[0], float(self.model_.intercept_[0])
        if self.normalize:                   # (x − offset)·mult + add, folded into the weights
            intercept += float((self.add_ - self.offset_ * self.mult_) @ coef)
            coef = coef * self.mult_
        fixed, tail = X_fixed @ coef[:m] + intercept, coef[m:]
        soft = int(self.loss) == 1

        def score(extra: np.ndarray, rows=None) -> np.ndarray:
            d = (fixed if rows is None else fixed[rows]) + extra @ tail
            p = expit(d) if soft else (d > 0).astype(float)
            return np.column_stack([1.0 - p, p])
        return score

    def decision_function(self, X):
        Xs = self._inputs(X)
        return np.zeros(Xs.shape[0]) if self.model_ is None else self.model_.decision_function(Xs)

    def _predicted_index(self, Xs: np.ndarray) -> np.ndarray:
        return np.zeros(Xs.shape[0], dtype=int) if self.model_ is None else self.model_.predict(Xs)

    def predict_proba(self, X):
        Xs = self._inputs(X)
        if int(self.loss) == 1 and self.model_ is not None:
            return self.model_.predict_proba(Xs)
        return one_hot(self._predicted_index(Xs), self.classes_.size)

    def predict(self, X):
        index = self._predicted_index(self._inputs(X))
        return self.classes_[index]


class WekaLogistic(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
    """WEKA Logistic: ridge logistic regression on standardised attributes.

    WEKA minimises ``NLL + ridge·‖β‖²`` (intercept free) on attributes standardised with the
    (weighted) training mean and sd; divided by 2·ridge this is scikit-learn's
    ``½‖β‖² + C·NLL`` with ``C = 1/(2·ridge)`` (notes §1.1.3). Missing values → means.
    Exact for binary targets; for multi-class, scikit-learn's symmetric softmax replaces
    WEKA's K−1 vectors against a reference class, which differ under the ridge (close).
    """

    def __init__(self, ridge=1e-8, max_iter=1000, random_state=0):
        self.ridge = ridge
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, yi, w = fit_inputs(self, X, y, sample_weight, allow_nan=True)
        self.means_ = column_means(X)
        X = fill_missing(X, self.means_)
        self.center_, self.scale_ = standardisation(X, w)
        if self.classes_.size < 2:  # a constant target: WEKA predicts the one class
            self.model_ = None
            self.n_iter_ = np.zeros(1, dtype=np.int32)
            return self
        ridge = float(self.ridge)
        self.model_ = LogisticRegression(C=1.0 / (2.0 * ridge) if ridge > 0 else np.inf, l1_ratio=0.0,
                                         solver="lbfgs", max_iter=int(self.max_iter),
                                         random_state=int(self.random_state))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit((X - self.center_) / self.scale_, yi, sample_weight=w)
        self.n_iter_ = self.model_.n_iter_
        self.folded_ = self._fold()
        return self

    def _z(self, X):
        X = predict_inputs(self, X, allow_nan=True, fitted="model_")
        return (fill_missing(X, self.means_) - self.center_) / self.scale_

    def _decision(self, X) -> np.ndarray:
        """(n, 1) binary or (n, K) decision values: scikit-learn's, on the folded weights."""
        X = predict_inputs(self, X, allow_nan=True, fitted="model_")
        if not is_validated(X):             # a checked array has no NaN to replace
            X = fill_missing(X, self.means_)
        coef, intercept = self._folded_weights()
        return X @ coef + intercept

    def _folded_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """(M, 1 or K) weights and intercepts on the raw attributes (a model pickled before they were kept
        computes them)."""
        return self.__dict__.get("folded_") or self._fold()

    def _fold(self) -> tuple[np.ndarray, np.ndarray]:
        """The standardisation folded into the weights: one matrix product per prediction (a Gibbs sweep
        or a chain search predicts thousands of times)."""
        coef = (self.model_.coef_ / self.scale_).T
        return coef, self.model_.intercept_ - self.center_ @ coef

    @property
    def coef_(self) -> np.ndarray:
        """Coefficients on the standardised attributes."""
        check_is_fitted(self, "model_")
        return np.zeros((1, self.center_.size)) if self.model_ is None else self.model_.coef_

    def appended_scorer(self, X_fixed: np.ndarray):
        """``score(extra, rows=None)``: :meth:`predict_proba` of ``[X_fixed[rows], extra]``, with the part
        that depends on the finite ``X_fixed`` computed once here (a Gibbs sweep or a chain search
        changes only the appended label columns, thousands of times). None when fitted on a
        constant target."""
        if self.model_ is None:
            return None
        coef, intercept = self._folded_weights()
        m = X_fixed.shape[1]
        fixed, tail = X_fixed @ coef[:m] + intercept, coef[m:]

        def score(extra: np.ndarray, rows=None) -> np.ndarray:
            d = (fixed if rows is None else fixed[rows]) + extra @ tail
            if d.shape[1] == 1:
                p = expit(d[:, 0])
                return np.column_stack([1.0 - p, p])
            return softmax(d, axis=1)
        return score

    def decision_function(self, X):
        check_is_fitted(self, "model_")
        if self.model_ is None:
            return np.zeros(self._z(X).shape[0])
        d = self._decision(X)
        return d.ravel() if d.shape[1] == 1 else d

    def predict_proba(self, X):
        check_is_fitted(self, "model_")
        if self.model_ is None:
            return np.ones((self._z(X).shape[0], 1))
        d = self._decision(X)
        if d.shape[1] == 1:                 # scikit-learn's binary case: [1 − σ(d), σ(d)]
            p = expit(d[:, 0])
            return np.column_stack([1.0 - p, p])
        return softmax(d, axis=1)

    def predict(self, X):
        return labels(self, self.predict_proba(X))

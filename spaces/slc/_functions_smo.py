"""WEKA's SMO as a scikit-learn estimator (search-space notes §1.1.21).

Why custom around libsvm: WEKA's kernels (real exponents, NormalizedPolyKernel, Puk) are not
scikit-learn's, WEKA's multi-class SMO is pairwise with normalised votes, and its calibration
(``-M``) fits a logistic model per pair and couples the pairs (Hastie & Tibshirani). libsvm
solves the same dual on a Gram matrix from :mod:`spaces.slc._kernels`; the rest is here.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from . import _kernels
from ._functions_common import column_means, fill_missing, one_hot, range_scaling, standardisation
from ._functions_linear import WekaLogistic
from ..encoding import per_view
from ._validation import ReplacesMissingValues, fit_inputs, labels, predict_inputs


def _pairwise_coupling(r: np.ndarray, n_pair: np.ndarray, pairs: np.ndarray, k: int) -> np.ndarray:
    """Hastie & Tibshirani's pairwise coupling, as WEKA's ``MultiClassClassifier.pairwiseCoupling``.

    ``r[:, p]`` = P(first class of pair p | one of the pair), ``n_pair`` = training weight
    of each pair. Every row iterates until no probability moves by more than 1e-3.
    """
    n = r.shape[0]
    first_ind, second_ind = one_hot(pairs[:, 0], k), one_hot(pairs[:, 1], k)
    first_sum = (r * n_pair) @ first_ind + ((1.0 - r) * n_pair) @ second_ind
    p = np.full((n, k), 1.0 / k)
    u = np.full_like(r, 0.5)
    active = np.arange(n)
    for _ in range(10_000):
        if active.size == 0:
            break
        pa, ua, fa = p[active], u[active], first_sum[active]
        second = (ua * n_pair) @ first_ind + ((1.0 - ua) * n_pair) @ second_ind
        zero = (fa == 0) | (second == 0)
        new = np.where(zero, 0.0, pa * fa / np.where(zero, 1.0, second))
        changed = (zero & (pa > 0)) | (~zero & (np.abs(new - pa) > 1e-3))
        total = new.sum(axis=1, keepdims=True)
        new = np.where(total > 0, new / np.where(total > 0, total, 1.0), 1.0 / k)
        denom = new[:, pairs[:, 0]] + new[:, pairs[:, 1]]
        u[active] = np.where(denom > 0, new[:, pairs[:, 0]] / np.where(denom > 0, denom, 1.0), 0.5)
        p[active] = new
        active = active[changed.any(axis=1)]
    return p


class WekaSMO(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
    """WEKA SMO: a support vector classifier, pairwise (1-vs-1) for multi-class targets.

    libsvm (``SVC(kernel="precomputed")``) solves the same box-constrained dual as WEKA's
    SMO with per-row cost ``C·weight`` and tolerance 1e-3; the Gram matrix comes from WEKA's
    kernels (:mod:`spaces.slc._kernels`). ``filter_type``: 0 normalise to [0, 1],
    1 standardise, 2 none; missing values → means.
    Without ``build_calibration`` the confidences are WEKA's normalised pairwise votes
    (one-hot for two classes); with it, a ridge-1e-8 logistic model is fitted to each pair's
    SVM outputs on the training rows (WEKA ``-M -V -1``) and the pairwise probabilities are
    coupled with Hastie & Tibshirani's method, as WEKA does.
    As WEKA, NormalizedPolyKernel ignores an exponent of 1.0 (its setter rejects it) and
    keeps its own default 2.0. Deviation: a fractional exponent on a negative base uses the
    odd extension instead of WEKA's NaN (see :mod:`spaces.slc._kernels`).
    """

    def __init__(self, C=1.0, filter_type=0, build_calibration=False, kernel="PolyKernel",
                 exponent=1.0, lower_order=True, omega=1.0, sigma=1.0, gamma=0.01,
                 tol=1e-3, random_state=0):
        self.C = C
        self.filter_type = filter_type
        self.build_calibration = build_calibration
        self.kernel = kernel
        self.exponent = exponent
        self.lower_order = lower_order
        self.omega = omega
        self.sigma = sigma
        self.gamma = gamma
        self.tol = tol
        self.random_state = random_state

    def _kernel_params(self) -> dict:
        exponent = float(self.exponent)
        if self.kernel == _kernels.NORMALIZED_POLY and exponent == 1.0:
            exponent = 2.0
        return dict(exponent=exponent, lower_order=bool(self.lower_order), omega=float(self.omega),
                    sigma=float(self.sigma), gamma=float(self.gamma))

    def _filter(self, X: np.ndarray) -> np.ndarray:
        X = fill_missing(X, self.means_)
        return X if self.filter_ is None else (X - self.filter_[0]) * self.filter_[1] + self.filter_[2]

    def fit(self, X, y, sample_weight=None):
        if self.kernel not in _kernels.KERNELS:
            raise ValueError(f"unknown kernel {self.kernel!r}; expected one of {_kernels.KERNELS}")
        X, yi, w = fit_inputs(self, X, y, sample_weight, allow_nan=True)
        keep = w > 0  # WEKA drops rows of weight 0 (and so never sees their classes)
        if not keep.all():
            X, w = X[keep], w[keep]
            present, yi = np.unique(yi[keep], return_inverse=True)
            self.classes_ = self.classes_[present]
        if int(self.filter_type) not in (0, 1, 2):
            raise ValueError(f"filter_type must be 0, 1 or 2, got {self.filter_type!r}")
        k = self.classes_.size
        # the filter, the filtered rows and their kernel matrix depend on X alone: once per data view
        # for the q labels of a binary relevance and every candidate with the same kernel (issue 25)
        name = f"smo:{int(self.filter_type)}:{self.kernel}:{sorted(self._kernel_params().items())}:{k >= 2}"
        self.means_, self.filter_, self.train_, gram = per_view(X, name, self._filtered_gram)
        if k < 2:
            self.svc_ = None
            return self
        self.svc_ = SVC(C=float(self.C), kernel="precomputed", tol=float(self.tol),
                        decision_function_shape="ovo", random_state=int(self.random_state))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.svc_.fit(gram, yi, sample_weight=w)
        self.pairs_ = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
        if self.build_calibration:
            outputs = self._weka_outputs(gram)
            self.calibrators_ = []
            self.pair_weights_ = np.zeros(len(self.pairs_))
            for p, (i, j) in enumerate(self.pairs_):
                rows = (yi == i) | (yi == j)
                self.pair_weights_[p] = w[rows].sum()
                self.calibrators_.append(
                    WekaLogistic(ridge=1e-8).fit(outputs[rows, p:p + 1], (yi[rows] == j).astype(int),
                                                 sample_weight=w[rows]))
        return self

    def _filtered_gram(self, X: np.ndarray) -> tuple:
        """(column means, filter, filtered rows, their kernel matrix or None for a constant target)."""
        means = column_means(X)
        filled = fill_missing(X, means)
        ft = int(self.filter_type)
        if ft == 0:
            filt = range_scaling(filled, 0.0, 1.0)
        elif ft == 1:
            mean, sd = standardisation(filled)
            filt = (mean, 1.0 / sd, np.zeros_like(mean))
        else:
            filt = None
        train = filled if filt is None else (filled - filt[0]) * filt[1] + filt[2]
        gram = _kernels.kernel_matrix(self.kernel, train, train, **self._kernel_params()) \
            if self.classes_.size >= 2 else None
        return means, filt, train, gram

    def _weka_outputs(self, gram: np.ndarray) -> np.ndarray:
        """WEKA's SVM output per pair (i, j): positive means the second class j."""
        d = self.svc_.decision_function(gram)
        return d[:, None] if d.ndim == 1 else -d  # binary: >0 → class 1; ovo: >0 → class i

    def _test_gram(self, X: np.ndarray) -> np.ndarray:
        """Kernel values of the (validated) rows ``X`` against the support vectors."""
        Xf = self._filter(X)
        gram = np.zeros((Xf.shape[0], self.train_.shape[0]))
        sv = self.svc_.support_
        gram[:, sv] = _kernels.kernel_matrix(self.kernel, Xf, self.train_[sv], **self._kernel_params())
        return gram

    def predict_proba(self, X):
        X = predict_inputs(self, X, allow_nan=True, fitted="svc_")
        k = self.classes_.size
        if self.svc_ is None:
            return np.ones((X.shape[0], 1))
        out = self._weka_outputs(self._test_gram(X))
        if not self.build_calibration:
            second_wins = (out > 0).astype(float)
            votes = (second_wins @ one_hot(self.pairs_[:, 1], k)
                     + (1.0 - second_wins) @ one_hot(self.pairs_[:, 0], k))
            return votes / len(self.pairs_)
        r = np.column_stack([cal.predict_proba(out[:, p:p + 1])[:, 0]
                             for p, cal in enumerate(self.calibrators_)])
        if k == 2:
            return np.column_stack([r[:, 0], 1.0 - r[:, 0]])
        return _pairwise_coupling(r, self.pair_weights_, self.pairs_, k)

    def predict(self, X):
        return labels(self, self.predict_proba(X))

"""Supervised MDL discretisation (Fayyad & Irani 1993), as WEKA's ``supervised.attribute.Discretize``.

WEKA's NaiveBayes ``-D`` and BayesNet (always, for numeric attributes) discretise with this
filter before estimating anything, so both Bayesian learners share it. It follows WEKA's
defaults exactly: recursive binary splits at the midpoint between distinct sorted values that
minimise the class entropy, each accepted only when the information gain passes Fayyad &
Irani's MDL test with the *worse* encoding (``log2(n_instances_in_subset - 1)`` candidate cuts,
``useBetterEncoding=false``), class counts weighted by instance weight. An attribute with no
accepted cut becomes a single bin (WEKA's ``'All'``). A value ``v`` goes to bin ``j`` when it
is ``<=`` the ``j``-th cut point, as in WEKA.

The scan over candidate cuts of one subset is vectorised (cumulative class counts), so the
cost per attribute is O(n · classes · depth).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from . import _mdl



def mdl_cut_points(x: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int) -> np.ndarray:
    """Sorted MDL cut points of one attribute, WEKA ``Discretize`` defaults (no better encoding)."""
    return _mdl.mdl_cut_points(x, y, n_classes, w, better_encoding=False)


class MDLDiscretizer(TransformerMixin, BaseEstimator):
    """Supervised Fayyad–Irani MDL discretisation of every column (WEKA ``Discretize`` defaults).

    ``transform`` returns integer bin codes; ``n_bins_[j] = len(cut_points_[j]) + 1``.
    """

    def fit(self, X, y, sample_weight=None):
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan")
        y = np.asarray(y)
        classes, y_enc = np.unique(y, return_inverse=True)
        w = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        self.cut_points_ = _mdl.all_cut_points(X, y_enc, classes.size, w, better_encoding=False)
        self.n_bins_ = np.array([c.size + 1 for c in self.cut_points_], dtype=np.int64)
        return self

    def transform(self, X):
        check_is_fitted(self, "cut_points_")
        X = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        return _mdl.discretise(X, self.cut_points_)

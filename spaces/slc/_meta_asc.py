"""AttributeSelectedClassifier (ASC): CFS feature selection, then the base learner on the kept columns.

Why: the Large grammar can wrap any base SLC in ``ASC <sm>`` — WEKA's
meta.AttributeSelectedClassifier with its fixed evaluator CfsSubsetEval and the search ``<sm>``
(BestFirst or GreedyStepwise). Selection is learnt on the training data only and applied to
every later input (search-space notes §1.1.23). The selector lives in :mod:`._cfs`.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from .base import fit_slc, slc_scores
from ._cfs import CFSSubsetSelector
from ._meta_common import fit_inputs, predict_inputs


class AttributeSelectedClassifier(ClassifierMixin, BaseEstimator):
    """WEKA AttributeSelectedClassifier with CfsSubsetEval and ``search`` (BestFirst | GreedyStepwise).

    Fitted: ``selector_`` (a :class:`CFSSubsetSelector`), ``selected_`` (kept column indices),
    ``estimator_`` (the base fitted by :func:`fit_slc` on the kept columns), ``classes_``.
    Instance weights go to the MDL discretisation and to the base (by weighted resampling for
    learners without ``sample_weight``). Deviation: if no attribute were kept (WEKA would train
    the base on the class alone) the base gets a single constant column, giving the same
    prior-only model; with CFS's locally-predictive step this cannot happen when M ≥ 1.
    """

    def __init__(self, estimator, search: str = "BestFirst", random_state=None):
        self.estimator = estimator
        self.search = search
        self.random_state = random_state

    def _reduce(self, X: np.ndarray) -> np.ndarray:
        if self.selected_.size == 0:
            return np.zeros((X.shape[0], 1))
        return X[:, self.selected_]

    def fit(self, X, y, sample_weight=None):
        X, self.classes_, codes = fit_inputs(self, X, y)
        self.selector_ = CFSSubsetSelector(search=self.search).fit(X, codes, sample_weight)
        self.selected_ = np.flatnonzero(self.selector_.support_)
        self.estimator_ = fit_slc(self.estimator, self._reduce(X), codes, sample_weight, self.random_state)
        return self

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "estimator_")
        return slc_scores(self.estimator_, self._reduce(X), np.arange(self.classes_.size))

    def predict(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "estimator_")
        codes = np.asarray(self.estimator_.predict(self._reduce(X))).astype(np.intp)
        return self.classes_[codes]

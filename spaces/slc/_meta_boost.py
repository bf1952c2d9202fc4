"""AdaBoostM1 as WEKA runs it: weight trimming, reweighting or resampling, SAMME for K > 2.

Why custom: scikit-learn's AdaBoostClassifier (SAMME only since 1.6) has neither WEKA's weight
threshold (``-P``: train each round only on the heaviest rows carrying wt% of the weight mass)
nor its resampling mode (``-Q``, also the fallback for learners without instance weights), and
it stops and combines differently. This follows weka.classifiers.meta.AdaBoostM1
(search-space notes §1.1.24):

* round m: select the weight quantile (if wt < 100), fit the base on it with the weights, or
  on a weighted resample of it (up to 10 redraws while the training error is 0);
* ε = weighted error on the whole training set; stop when ε ≥ 1 − 1/K or ε = 0 (a first model
  is kept alone, and then predicts on its own);
* α = ln((1−ε)/ε) + ln(K−1); misclassified weights × e^α, renormalised to the old total;
* prediction: P = softmax over classes of the α-weighted hard votes (WEKA's logs2probs).

For K = 2 this is exactly AdaBoost.M1; for K > 2 it is SAMME (deviation: WEKA's M1 keeps
ln((1−ε)/ε) and stops at ε ≥ 0.5, which ends multi-class boosting after a round or two on hard
label-powerset targets; SAMME is the multi-class generalisation the project chose, §0.2).
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline

from .base import fit_slc, slc_scores
from ._meta_common import (accepts_sample_weight, fit_inputs, generator, member_seeds,
                           predict_inputs, seeded, training_weights)

#: WEKA's AdaBoostM1.MAX_NUM_RESAMPLING_ITERATIONS
MAX_RESAMPLING_ITERATIONS = 10
#: WEKA's Utils.SMALL (tolerance of Utils.eq / Utils.grOrEq)
SMALL = 1e-6


def weight_quantile(weights: np.ndarray, quantile: float) -> np.ndarray:
    """Indices of the heaviest rows whose weights first exceed ``quantile`` of the total mass;
    rows tied with the last one taken are all kept (WEKA ``selectWeightQuantile``)."""
    order = np.argsort(-weights, kind="stable")
    ws = weights[order]
    cum = np.cumsum(ws)
    stop = (cum[:-1] > weights.sum() * quantile) & (ws[:-1] != ws[1:])
    if not stop.any():
        return np.sort(order)
    return np.sort(order[: int(np.argmax(stop)) + 1])


class AdaBoostM1(ClassifierMixin, BaseEstimator):
    """WEKA AdaBoostM1 (SAMME for K > 2).

    Parameters
    ----------
    estimator : unfitted single-label classifier.
    n_estimators : int, ``-I`` (at most this many rounds; fewer if ε reaches 0 or 1 − 1/K).
    weight_threshold : int, ``-P`` percent of weight mass used per round (100 = no trimming).
    use_resampling : bool, ``-Q``; forced on for bases whose ``fit`` has no ``sample_weight``.
    random_state : int; member seeds and resampling draws derive from it.

    Fitted: ``estimators_``, ``estimator_weights_`` (α per member), ``estimator_errors_`` (ε),
    ``train_sizes_`` (rows each member was trained on), ``classes_``.
    """

    def __init__(self, estimator, n_estimators: int = 10, weight_threshold: int = 100,
                 use_resampling: bool = False, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.weight_threshold = weight_threshold
        self.use_resampling = use_resampling
        self.random_state = random_state

    def _member_codes(self, est, X: np.ndarray) -> np.ndarray:
        return np.asarray(est.predict(X)).astype(np.intp)

    def fit(self, X, y, sample_weight=None):
        X, self.classes_, codes = fit_inputs(self, X, y)
        n, k = X.shape[0], self.classes_.size
        w = training_weights(sample_weight, n).copy()
        resample = bool(self.use_resampling) or not accepts_sample_weight(self.estimator)
        rng = generator(self.random_state)
        seeds = member_seeds(rng, int(self.n_estimators))
        quantile = self.weight_threshold / 100.0
        bound = 1.0 - 1.0 / max(k, 2)
        estimators, alphas, errors, sizes = [], [], [], []
        for m, seed in enumerate(seeds):
            check_deadline()
            rows = weight_quantile(w, quantile) if self.weight_threshold < 100 else np.arange(n)
            template = seeded(self.estimator, seed)
            if resample:
                p = w[rows] / w[rows].sum()
                for _ in range(MAX_RESAMPLING_ITERATIONS):
                    check_deadline()
                    sample = rows[rng.choice(rows.size, size=rows.size, replace=True, p=p)]
                    est = fit_slc(template, X[sample], codes[sample], None, seed)
                    miss = self._member_codes(est, X) != codes
                    eps = float(w[miss].sum() / w.sum())
                    if abs(eps) >= SMALL:
                        break
            else:
                est = fit_slc(template, X[rows], codes[rows], w[rows], seed)
                miss = self._member_codes(est, X) != codes
                eps = float(w[miss].sum() / w.sum())
            if eps - bound > -SMALL or abs(eps) < SMALL:
                if m == 0:   # WEKA keeps the first model alone, whatever its error
                    estimators, alphas, errors, sizes = [est], [1.0], [eps], [rows.size]
                break
            alpha = math.log((1.0 - eps) / eps) + math.log(k - 1)
            estimators.append(est)
            alphas.append(alpha)
            errors.append(eps)
            sizes.append(rows.size)
            old_total = w.sum()
            w[miss] *= math.exp(alpha)
            w *= old_total / w.sum()
        self.estimators_ = estimators
        self.estimator_weights_ = np.asarray(alphas)
        self.estimator_errors_ = np.asarray(errors)
        self.train_sizes_ = np.asarray(sizes, dtype=np.intp)
        return self

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "estimators_")
        k = self.classes_.size
        if len(self.estimators_) == 1:
            return slc_scores(self.estimators_[0], X, np.arange(k))
        sums = np.zeros((X.shape[0], k))
        rows = np.arange(X.shape[0])
        for est, alpha in zip(self.estimators_, self.estimator_weights_):
            check_deadline()
            sums[rows, self._member_codes(est, X)] += alpha
        sums -= sums.max(axis=1, keepdims=True)
        proba = np.exp(sums)
        return proba / proba.sum(axis=1, keepdims=True)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

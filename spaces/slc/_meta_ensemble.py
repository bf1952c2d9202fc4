"""Averaging ensembles of one base learner: Bagging, RandomCommittee, RandomSubSpace (WEKA meta).

Why custom rather than ``sklearn.ensemble.BaggingClassifier``: members here are trained through
:func:`spaces.slc.base.fit_slc`, so a bag or subsample that holds a single class gives a
constant member instead of an exception (LogisticRegression, SVC and SGD raise; with 10% bags
on a rare BR label that happens almost surely over 128 members), and learners without
``sample_weight`` still honour the instance weights an outer method passes. BaggingClassifier
would also turn bootstrap counts into sample weights for weight-aware bases, which is not the
duplicated-rows bag WEKA builds. The three algorithms differ only in what each member sees:

* Bagging: a bootstrap bag of int(N·bsp/100) rows drawn with probability ∝ instance weight;
* RandomCommittee: all rows; members differ only by their seed;
* RandomSubSpace: all rows, a random subset of round(M·sss) attributes (Java's Math.round).

Prediction averages the members' class distributions and normalises (WEKA ``Utils.normalize``
of the summed ``distributionForInstance``); hard members contribute one-hot votes.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline

from .base import fit_slc, slc_scores
from ._meta_common import (fit_inputs, generator, member_seeds, normalise_rows, predict_inputs,
                           seeded, training_weights)


class _AveragingEnsemble(ClassifierMixin, BaseEstimator):
    """Shared prediction: the normalised sum of member class distributions."""

    def _member_scores(self, i: int, X: np.ndarray) -> np.ndarray:
        cols = self.estimators_features_[i]
        Xi = X if cols is None else X[:, cols]
        return slc_scores(self.estimators_[i], Xi, np.arange(self.classes_.size))

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "estimators_")
        total = np.zeros((X.shape[0], self.classes_.size))
        for i in range(len(self.estimators_)):
            check_deadline()
            total += self._member_scores(i, X)
        return normalise_rows(total)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]

    def _prepare(self, X, y, sample_weight):
        X, self.classes_, codes = fit_inputs(self, X, y)
        return X, codes, training_weights(sample_weight, X.shape[0]), sample_weight is not None


class Bagging(_AveragingEnsemble):
    """WEKA Bagging: ``n_estimators`` (``-I``) members, each on a bootstrap bag of
    int(N·bag_size_percent/100) rows (``-P``), drawn with probability ∝ instance weight.

    ``oob_score=True`` (``-O``) also computes the out-of-bag error; it never changes
    predictions. Fitted: ``estimators_``, ``estimators_samples_`` (bag row indices),
    ``estimators_features_`` (all None), ``classes_``; with ``oob_score`` also
    ``oob_decision_function_`` (NaN for rows in every bag), ``oob_score_`` (weighted accuracy
    over rows with an out-of-bag vote) and ``oob_error_`` = 1 − ``oob_score_``.
    Deviation: WEKA refuses ``-O`` unless the bag size is 100%; here it is computed for any
    bag size (the grammar only pairs ``coob`` with 100 anyway).
    """

    def __init__(self, estimator, n_estimators: int = 10, bag_size_percent: int = 100,
                 oob_score: bool = False, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.bag_size_percent = bag_size_percent
        self.oob_score = oob_score
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, codes, w, _ = self._prepare(X, y, sample_weight)
        n = X.shape[0]
        if not 0 < self.bag_size_percent <= 100:
            raise ValueError(f"bag_size_percent must be in (0, 100], got {self.bag_size_percent}")
        bag_size = max(1, int(n * (self.bag_size_percent / 100.0)))
        p = w / w.sum() if w.sum() > 0 else None
        rng = generator(self.random_state)
        seeds = member_seeds(rng, int(self.n_estimators))
        self.estimators_, self.estimators_samples_ = [], []
        for seed in seeds:
            check_deadline()
            bag = rng.choice(n, size=bag_size, replace=True, p=p)
            self.estimators_.append(fit_slc(seeded(self.estimator, seed), X[bag], codes[bag], None, seed))
            self.estimators_samples_.append(bag)
        self.estimators_features_ = [None] * len(self.estimators_)
        if self.oob_score:
            self._compute_oob(X, codes, w)
        return self

    def _compute_oob(self, X, codes, w) -> None:
        n, k = X.shape[0], self.classes_.size
        total = np.zeros((n, k))
        votes = np.zeros(n, dtype=np.intp)
        for i, bag in enumerate(self.estimators_samples_):
            check_deadline()
            out = np.ones(n, dtype=bool)
            out[bag] = False
            if out.any():
                total[out] += self._member_scores(i, X[out])
                votes[out] += 1
        has = votes > 0
        decision = np.full((n, k), np.nan)
        decision[has] = normalise_rows(total[has])
        self.oob_decision_function_ = decision
        if has.any() and w[has].sum() > 0:
            right = np.argmax(decision[has], axis=1) == codes[has]
            self.oob_score_ = float(w[has][right].sum() / w[has].sum())
        else:
            self.oob_score_ = float("nan")
        self.oob_error_ = 1.0 - self.oob_score_


class RandomCommittee(_AveragingEnsemble):
    """WEKA RandomCommittee: ``n_estimators`` (``-I``) copies of a randomizable base, each with
    its own seed, all trained on every row; class distributions averaged."""

    def __init__(self, estimator, n_estimators: int = 10, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, codes, w, weighted = self._prepare(X, y, sample_weight)
        seeds = member_seeds(generator(self.random_state), int(self.n_estimators))
        self.estimators_ = []
        for seed in seeds:
            check_deadline()
            self.estimators_.append(fit_slc(seeded(self.estimator, seed), X, codes,
                                            w if weighted else None, seed))
        self.estimators_features_ = [None] * len(self.estimators_)
        return self


def n_subspace_features(n_features: int, fraction: float) -> int:
    """WEKA RandomSubSpace.numberOfAttributes: Math.round(M·fraction), clipped to [1, M]; a
    value above 1 is a count. Deviation: WEKA reads exactly 1.0 as "one attribute"; here it is
    100% of them, the meaning of the grammar's range RANDOM-REAL(0.1, 1.0) (Appendix A.2.2)."""
    k = math.floor((n_features * fraction if fraction <= 1.0 else fraction) + 0.5)
    return int(min(max(k, 1), n_features))


class RandomSubSpace(_AveragingEnsemble):
    """WEKA RandomSubSpace: ``n_estimators`` (``-I``) members, each on all rows and a random
    subset of round(M·subspace_size) attributes (``-P``, a fraction; see
    :func:`n_subspace_features` for 1.0); distributions averaged.
    Fitted: ``estimators_``, ``estimators_features_`` (sorted column indices per member)."""

    def __init__(self, estimator, n_estimators: int = 10, subspace_size: float = 0.5, random_state=None):
        self.estimator = estimator
        self.n_estimators = n_estimators
        self.subspace_size = subspace_size
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, codes, w, weighted = self._prepare(X, y, sample_weight)
        if not self.subspace_size > 0:
            raise ValueError(f"subspace_size must be positive, got {self.subspace_size}")
        m = X.shape[1]
        size = n_subspace_features(m, float(self.subspace_size))
        rng = generator(self.random_state)
        seeds = member_seeds(rng, int(self.n_estimators))
        self.estimators_, self.estimators_features_ = [], []
        for seed in seeds:
            check_deadline()
            cols = np.sort(rng.choice(m, size=size, replace=False))
            self.estimators_.append(fit_slc(seeded(self.estimator, seed), X[:, cols], codes,
                                            w if weighted else None, seed))
            self.estimators_features_.append(cols)
        return self

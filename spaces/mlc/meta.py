"""Meta multi-label methods: ensembles and wrappers around a multi-label base (notes §1.2.20–26).

* ``BaggingML``: bootstrap bags as distinct rows weighted by multiplicity; mean output.
* ``BaggingMLDup``: bags of bsp % of N rows drawn with replacement, duplicates kept; mean.
* ``EnsembleML``: each member trains on bsp % of the rows drawn without replacement; mean.
* ``RSML``: each member sees bsp % of the rows and ap % of the attributes; MEKA sums the
  outputs, here they are averaged (decision 1: scores in [0, 1]; PCut is unaffected).
* ``EMax``: i rounds of re-weighting each training row by the confidence of its predicted
  labelset, Π_j max(p_j, 1 − p_j), and refitting; output of the last base.
* ``CMax``: i rounds of relabelling the training rows with the base's 0/1 predictions and
  refitting. EMax and CMax are inductive only (decision 5): MEKA also feeds the unlabelled
  evaluation rows; for EMax this changes nothing, for CMax it is a documented deviation.
* ``SM`` (subset mapper): maps each predicted labelset to the nearest labelset seen in
  training (Hamming distance; ties by a fixed shuffled order, seed 1 as in MEKA). Hard 0/1.
"""
from __future__ import annotations

from abc import abstractmethod

import numpy as np
from sklearn.base import clone

from ..deadline import check_deadline
from ..params import Params
from ..registry import register
from .base import MLCEstimator


def _member(base, seed: int):
    est = clone(base)
    if "random_state" in est.get_params(deep=False):
        est.set_params(random_state=seed)
    return est


class _Ensemble(MLCEstimator):
    """Members fitted on resampled rows (and columns); output = mean of member scores."""

    @abstractmethod
    def _samples(self, n: int, m: int, rng: np.random.Generator):
        """(row indices, row weights or None, column indices) for one member."""

    def fit(self, X, Y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        Y = self._validate_Y(Y)
        rng = np.random.default_rng(self.random_state)
        self.members_, self.columns_ = [], []
        for i in range(int(self.iterations)):
            check_deadline()
            rows, weights, cols = self._samples(X.shape[0], X.shape[1], rng)
            if sample_weight is not None:
                w = np.asarray(sample_weight, dtype=float)[rows]
                weights = w if weights is None else weights * w
            est = _member(self.base, int(rng.integers(2**31 - 1)))
            if weights is None:
                est.fit(X[np.ix_(rows, cols)], Y[rows])
            else:
                est.fit(X[np.ix_(rows, cols)], Y[rows], sample_weight=weights)
            self.members_.append(est)
            self.columns_.append(cols)
        return self

    def predict_scores(self, X):
        X = np.asarray(X, dtype=float)
        total = np.zeros((X.shape[0], self.n_labels_))
        for est, cols in zip(self.members_, self.columns_):
            check_deadline()
            total += np.clip(est.predict_proba(X[:, cols]), 0.0, 1.0)
        return total / max(len(self.members_), 1)


class BaggingML(_Ensemble):
    def __init__(self, base=None, iterations=10, random_state=0):
        self.base = base
        self.iterations = iterations
        self.random_state = random_state

    def _samples(self, n, m, rng):
        counts = np.bincount(rng.integers(0, n, size=n), minlength=n)
        rows = np.flatnonzero(counts)
        return rows, counts[rows].astype(float), np.arange(m)


class _PercentEnsemble(_Ensemble):
    """Members trained on ``bag_percent`` % of the rows."""

    def __init__(self, base=None, bag_percent=67, iterations=10, random_state=0):
        self.base = base
        self.bag_percent = bag_percent
        self.iterations = iterations
        self.random_state = random_state

    def _size(self, n: int) -> int:
        return max(1, int(n * self.bag_percent / 100))


class BaggingMLDup(_PercentEnsemble):
    def _samples(self, n, m, rng):
        return rng.integers(0, n, size=self._size(n)), None, np.arange(m)  # with replacement


class EnsembleML(_PercentEnsemble):
    def _samples(self, n, m, rng):
        return np.sort(rng.permutation(n)[:self._size(n)]), None, np.arange(m)  # without


class RSML(_Ensemble):
    def __init__(self, base=None, bag_percent=67, iterations=10, attribute_percent=50, random_state=0):
        self.base = base
        self.bag_percent = bag_percent
        self.iterations = iterations
        self.attribute_percent = attribute_percent
        self.random_state = random_state

    def _samples(self, n, m, rng):
        rows = np.sort(rng.permutation(n)[:max(1, int(n * self.bag_percent / 100))])
        cols = np.sort(rng.permutation(m)[:max(1, int(m * self.attribute_percent / 100))])
        return rows, None, cols


class _Refitting(MLCEstimator):
    """Fit the base, then ``iterations`` times refit it on data derived from its own output."""

    def __init__(self, base=None, iterations=10, random_state=0):
        self.base = base
        self.iterations = iterations
        self.random_state = random_state

    @abstractmethod
    def _next_round(self, scores: np.ndarray, Y: np.ndarray, weights: np.ndarray | None):
        """(labels, sample weights) for the next refit, from the current model's scores."""

    def fit(self, X, Y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        Y = self._validate_Y(Y)
        self.model_ = _member(self.base, self.random_state).fit(X, Y, sample_weight=sample_weight)
        for _ in range(int(self.iterations)):
            check_deadline()
            scores = np.clip(self.model_.predict_proba(X), 0.0, 1.0)
            labels, weights = self._next_round(scores, Y, sample_weight)
            self.model_ = _member(self.base, self.random_state).fit(X, labels, sample_weight=weights)
        return self

    def predict_scores(self, X):
        return self.model_.predict_proba(X)


class EMax(_Refitting):
    def _next_round(self, scores, Y, weights):
        confidence = np.prod(np.where(scores >= 0.5, scores, 1.0 - scores), axis=1)
        return Y, confidence if weights is None else np.asarray(weights, dtype=float) * confidence


class CMax(_Refitting):
    def _next_round(self, scores, Y, weights):
        return (scores >= 0.5).astype(np.int8), weights


class SubsetMapper(MLCEstimator):
    def __init__(self, base=None, random_state=0):
        self.base = base
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        Y = self._validate_Y(Y)
        self.model_ = _member(self.base, self.random_state).fit(X, Y, sample_weight=sample_weight)
        labelsets = np.unique(Y, axis=0)
        order = np.random.default_rng(1).permutation(len(labelsets))  # MEKA shuffles with seed 1
        self.labelsets_ = labelsets[order]
        return self

    def predict_scores(self, X):
        rounded = (np.asarray(self.model_.predict_proba(X)) >= 0.5).astype(np.int8)
        out = np.empty_like(rounded)
        for start in range(0, len(rounded), 512):  # bound the (rows × labelsets × L) temporary
            block = rounded[start:start + 512]
            distance = np.abs(block[:, None, :] - self.labelsets_[None, :, :]).sum(axis=2)
            out[start:start + 512] = self.labelsets_[np.argmin(distance, axis=1)]  # first minimum wins
        return out.astype(float)


@register("BaggingML", kind="meta-mlc")
def bagging_ml(p: Params, base) -> BaggingML:
    return BaggingML(base, iterations=p.int("i_metamlc"), random_state=p.random_state)


@register("BaggingMLDup", kind="meta-mlc")
def bagging_ml_dup(p: Params, base) -> BaggingMLDup:
    return BaggingMLDup(base, bag_percent=p.int("bsp_bagdup"), iterations=p.int("i_metamlc"),
                        random_state=p.random_state)


@register("EnsembleML", kind="meta-mlc")
def ensemble_ml(p: Params, base) -> EnsembleML:
    return EnsembleML(base, bag_percent=p.int("bsp_ensembleML"), iterations=p.int("i_metamlc"),
                      random_state=p.random_state)


@register("RSML", kind="meta-mlc")
def rsml(p: Params, base) -> RSML:
    return RSML(base, bag_percent=p.int("bsp_rsml"), iterations=p.int("i_metamlc"),
                attribute_percent=p.int("ap"), random_state=p.random_state)


@register("EMax", kind="meta-mlc")
def emax(p: Params, base) -> EMax:
    return EMax(base, iterations=p.int("i_metamlc"), random_state=p.random_state)


@register("CMax", kind="meta-mlc")
def cmax(p: Params, base) -> CMax:
    return CMax(base, iterations=p.int("i_metamlc"), random_state=p.random_state)


@register("SM", kind="meta-mlc")
def subset_mapper(p: Params, base) -> SubsetMapper:
    return SubsetMapper(base, random_state=p.random_state)

"""ML-BPNN and the meta multi-label methods."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification
from sklearn.linear_model import LogisticRegression

from ggp_automl.spaces.mlc.adaptation import ml_bpnn
from ggp_automl.spaces.mlc.base import MLCEstimator
from ggp_automl.spaces.mlc.meta import (
    BaggingML, CMax, EMax, bagging_ml, bagging_ml_dup, cmax, emax, ensemble_ml, rsml, subset_mapper,
)
from ggp_automl.spaces.params import Params


class PerLabelLR(MLCEstimator):
    """A minimal binary-relevance base for these tests (records the weights it saw)."""

    def __init__(self, random_state=0):
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        Y = self._validate_Y(Y)
        self.seen_weight_ = None if sample_weight is None else np.asarray(sample_weight)
        self.models_ = []
        for j in range(Y.shape[1]):
            if Y[:, j].min() == Y[:, j].max():
                self.models_.append(float(Y[0, j]))
            else:
                self.models_.append(LogisticRegression(max_iter=200).fit(X, Y[:, j], sample_weight=sample_weight))
        return self

    def predict_scores(self, X):
        return np.column_stack([np.full(len(X), m) if isinstance(m, float) else m.predict_proba(X)[:, 1]
                                for m in self.models_])


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=150, n_features=8, n_classes=4, random_state=3)
    Y[:, 3] = 0  # a label never present in training
    return X.astype(float), Y


BUILDERS = [bagging_ml, bagging_ml_dup, ensemble_ml, rsml, emax, cmax, subset_mapper]


@pytest.mark.parametrize("build", BUILDERS)
def test_meta_methods_fit_and_score(data, build):
    X, Y = data
    p = Params(build.__name__, {"i_metamlc": (3,)}, random_state=5)
    est = build(p, PerLabelLR())
    scores = clone(est).fit(X, Y).predict_scores(X)
    assert scores.shape == Y.shape
    assert ((scores >= 0) & (scores <= 1)).all()
    again = clone(est).fit(X, Y).predict_scores(X)
    assert np.array_equal(scores, again)  # deterministic for a fixed random_state
    assert (scores[:, 3] == 0).all()  # the never-present label is never predicted
    assert np.mean((scores >= 0.5) == Y) > 0.7


def test_defaults_follow_appendix_a():
    est = rsml(Params("RSML"), PerLabelLR())
    assert (est.bag_percent, est.iterations, est.attribute_percent) == (67, 10, 50)
    assert bagging_ml_dup(Params("BaggingMLDup"), PerLabelLR()).bag_percent == 67


def test_bagging_ml_passes_multiplicities_as_weights(data):
    X, Y = data
    est = BaggingML(PerLabelLR(), iterations=2, random_state=0).fit(X, Y)
    w = est.members_[0].seen_weight_
    assert w is not None and w.sum() == len(X) and w.max() > 1


def test_emax_reweights_and_cmax_relabels(data):
    X, Y = data
    em = EMax(PerLabelLR(), iterations=2).fit(X, Y)
    assert em.model_.seen_weight_ is not None and em.model_.seen_weight_.max() <= 1.0
    cm = CMax(PerLabelLR(), iterations=1).fit(X, Y)
    assert cm.predict_scores(X).shape == Y.shape


def test_subset_mapper_outputs_training_labelsets(data):
    X, Y = data
    sm = subset_mapper(Params("SM"), PerLabelLR()).fit(X, Y)
    out = sm.predict_scores(X)
    seen = {tuple(r) for r in Y}
    assert all(tuple(r.astype(int)) in seen for r in out)


def test_bpnn(data):
    X, Y = data
    est = ml_bpnn(Params("BPNN", {"ne": (50,), "nhu_bpnn": (5,), "lr_bpnn": (0.05,), "m_bpnn": (0.3,)}))
    assert (est.epochs, est.hidden_units, est.learning_rate, est.momentum) == (50, 5, 0.05, 0.3)
    scores = est.fit(X, Y).predict_scores(X)
    assert scores.shape == Y.shape and (scores[:, 3] == 0).all()
    assert ((scores > 0) & (scores < 1)).all(axis=0)[:3].all()
    assert np.array_equal(scores, clone(est).fit(X, Y).predict_scores(X))
    single = ml_bpnn(Params("BPNN", {"ne": (20,)})).fit(X, Y[:, :1])  # one label only
    assert single.predict_scores(X).shape == (len(X), 1)

"""The label networks' fast path (issue 25): a base learner's score of ``[X, parent labels]`` with the
features' part computed once must equal its ordinary ``predict_proba``, and the reusable buffer of
``[X, parents]`` must never serve stale per-view results."""
from __future__ import annotations

import numpy as np
import pytest

from ggp_automl.spaces.encoding import mark_validated, per_view, is_validated
from ggp_automl.spaces.mlc.label_network import LabelNetwork, as_features
from ggp_automl.spaces.mlc.trellis import CDN
from ggp_automl.spaces.slc._functions_linear import WekaLogistic, WekaSGD
from ggp_automl.spaces.slc.bayes import WekaNaiveBayes
from ggp_automl.spaces.slc.trees import J48Classifier


def _data(seed=0, n=120, m=6, labels=4):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m))
    Y = (X[:, :labels] + rng.normal(scale=0.8, size=(n, labels)) > 0).astype(int)
    return X, Y


@pytest.mark.parametrize("make", [WekaLogistic, WekaNaiveBayes, lambda: WekaSGD(loss=0), lambda: WekaSGD(loss=1),
                                  lambda: WekaSGD(loss=1, normalize=False)],
                         ids=["Logistic", "NaiveBayes", "SGD-hinge", "SGD-log", "SGD-log-raw"])
@pytest.mark.parametrize("classes", [2, 3])
def test_appended_scorer_equals_predict_proba(make, classes):
    X, Y = _data()
    rng = np.random.default_rng(1)
    extra = rng.integers(0, 2, size=(len(X), 3)).astype(np.int8)
    y = Y[:, 0] + (Y[:, 1] if classes == 3 else 0)
    model = make().fit(np.hstack([X, rng.integers(0, 2, size=(len(X), 3))]), y)
    score = model.appended_scorer(X)
    if score is None:                # SGD: binary only
        assert classes == 3 and isinstance(model, WekaSGD)
        return
    full = model.predict_proba(np.hstack([X, extra]))
    np.testing.assert_allclose(score(extra), full, rtol=1e-10, atol=1e-12)
    rows = np.array([5, 0, 5, 17])
    np.testing.assert_allclose(score(extra[rows], rows), full[rows], rtol=1e-10, atol=1e-12)


def test_network_proba_same_with_and_without_scorer():
    X, Y = _data()
    X = as_features(X)
    L = Y.shape[1]
    parents = [np.delete(np.arange(L), j) for j in range(L)]
    for base in (WekaLogistic(), WekaNaiveBayes(), J48Classifier(random_state=0)):
        net = LabelNetwork(parents).fit(base, X, Y)
        rows = net.rows_of(X)
        state = np.random.default_rng(2).integers(0, 2, size=Y.shape).astype(np.int8)
        for j in range(L):
            fast = net.proba(j, rows, state[:, net.parents[j]])
            plain = net.proba(j, X, state[:, net.parents[j]])      # no AugmentedRows: no scorer
            np.testing.assert_allclose(fast, plain, rtol=1e-10, atol=1e-12)


def test_mutable_checked_buffer_is_not_cached_per_view():
    """A writable array registered as checked may change under its id: per_view must recompute."""
    buffer = mark_validated(np.zeros((4, 2)))
    assert is_validated(buffer)
    assert per_view(buffer, "sum", lambda a: a.sum()) == 0.0
    buffer[:, 1] = 1.0
    assert per_view(buffer, "sum", lambda a: a.sum()) == 4.0


def test_cdn_with_naive_bayes_uses_the_whole_buffer_correctly():
    """Gibbs sampling with NaiveBayes over the reusable buffer gives what the plain path gives."""
    X, Y = _data(n=80, labels=3)
    fitted = CDN(WekaNaiveBayes(), iterations=30, collection_iterations=10, random_state=0).fit(X, Y)
    a = fitted.predict_scores(X)
    net = fitted.network_
    X = as_features(X)
    rng = np.random.default_rng(5)
    state = rng.integers(0, 2, size=Y.shape).astype(np.int8)
    rows = net.rows_of(X)
    for j in range(Y.shape[1]):      # the buffer path (no scorer) after the parents changed
        rows.scorers = {id(m): (m, None) for m in net.models}
        np.testing.assert_allclose(net.proba(j, rows, state[:, net.parents[j]]),
                                   net.proba(j, X, state[:, net.parents[j]]), rtol=1e-10)
    assert a.shape == Y.shape and np.all((a >= 0) & (a <= 1))


class _Forgetful:
    """A NodeCache that remembers nothing: every proposal fitted and rated from scratch."""

    def __init__(self, *args, **kwargs):
        self.hits = 0

    def get(self, j, parents):
        return None

    def put(self, j, parents, model):
        pass

    def rating(self, order):
        return None

    def rate(self, order, value):
        pass


@pytest.mark.parametrize("name", ["MCC", "PMCC", "PMCC-temperature"])
def test_chain_search_memo_changes_nothing(monkeypatch, name):
    """MCC/PMCC keep fitted nodes by parent set and ratings by order: the same model as without."""
    from ggp_automl.spaces.mlc import chains
    X, Y = _data(n=90, labels=5)
    if name == "MCC":
        make = lambda: chains.MCC(WekaLogistic(), chain_iterations=60, random_state=3)
    else:
        make = lambda: chains.PMCC(WekaNaiveBayes(), population_size=4, chain_iterations=60,
                                   temperature=name.endswith("temperature"), random_state=3)
    kept = make().fit(X, Y)
    monkeypatch.setattr(chains, "NodeCache", _Forgetful)
    plain = make().fit(X, Y)
    np.testing.assert_array_equal(kept.predict_scores(X), plain.predict_scores(X))
    if name == "MCC":
        np.testing.assert_array_equal(kept.order_, plain.order_)
        np.testing.assert_array_equal(kept.search_payoffs_, plain.search_payoffs_)
    else:
        for a, b in zip(kept.orders_, plain.orders_):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(kept.weights_, plain.weights_)

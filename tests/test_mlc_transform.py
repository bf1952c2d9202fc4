"""Binary-relevance, pairwise/ranking and label-powerset methods (spaces/mlc/transform.py, labelsets.py)."""
from __future__ import annotations

import signal
from contextlib import contextmanager
from math import comb

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.datasets import make_multilabel_classification
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import ClassifierChain
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from ggp_automl.spaces.mlc import labelsets as ls
from ggp_automl.spaces.mlc import transform as tf
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import REGISTRY

NAMES = ("BR", "CC", "BRq", "CCq", "FW", "RT", "LC", "PS", "PSt", "RAkEL", "RAkELd")

#: explicit grammar values per algorithm, and the constructor attributes they must land in
EXPLICIT = {
    "BR": ({}, {}),
    "CC": ({}, {}),
    "BRq": ({"dsr": (0.3,)}, {"downsample_ratio": 0.3}),
    "CCq": ({"dsr": (0.6,)}, {"downsample_ratio": 0.6}),
    "FW": ({}, {}),
    "RT": ({}, {}),
    "LC": ({}, {}),
    "PS": ({"sv": (2,), "pv": (1,)}, {"subsampling": 2, "pruning": 1}),
    "PSt": ({"sv": (1,), "pv": (2,)}, {"subsampling": 1, "pruning": 2}),
    "RAkEL": ({"sre": (7,), "les": (2,), "sv": (1,), "pv": (1,)},
              {"n_models": 7, "k": 2, "subsampling": 1, "pruning": 1}),
    "RAkELd": ({"les": (2,), "sv": (3,), "pv": (2,)}, {"k": 2, "subsampling": 3, "pruning": 2}),
}
DEFAULTS = {
    "BRq": {"downsample_ratio": 0.75}, "CCq": {"downsample_ratio": 0.75},
    "PS": {"pruning": 0, "subsampling": 0}, "PSt": {"pruning": 0, "subsampling": 0},
    "RAkEL": {"n_models": 10, "k": 3, "pruning": 0, "subsampling": 0},
    "RAkELd": {"k": 3, "pruning": 0, "subsampling": 0},
}


@pytest.fixture(scope="module", autouse=True)
def single_thread():
    """BLAS/OpenMP threads fight over a loaded machine; the evaluations run with n_jobs=1 too."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(n_samples=200, n_features=10, n_classes=5, n_labels=2,
                                          random_state=0)
    return StandardScaler().fit_transform(X), Y


def lr():
    return LogisticRegression(max_iter=1000, tol=1e-8)


def build(name, base=None, values=None, random_state=0):
    values = {} if values is None else values
    tokens = (name,) + tuple(v for vals in values.values() for v in vals)
    return REGISTRY[name].build(Params(name, values=values, tokens=tokens, random_state=random_state),
                                lr() if base is None else base)


@contextmanager
def time_limit(seconds: int):
    def fail(signum, frame):
        raise TimeoutError(f"took longer than {seconds} s")
    old = signal.signal(signal.SIGALRM, fail)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


class WeightSpy(ClassifierMixin, BaseEstimator):
    """GaussianNB that records (first feature column, sample_weight) of every fit."""

    calls: list = []

    def fit(self, X, y, sample_weight=None):
        WeightSpy.calls.append((np.asarray(X)[:, 0].copy(), None if sample_weight is None
                                else np.asarray(sample_weight).copy()))
        self.model_ = GaussianNB().fit(X, y, sample_weight=sample_weight)
        self.classes_ = self.model_.classes_
        return self

    def predict_proba(self, X):
        return self.model_.predict_proba(X)

    def predict(self, X):
        return self.model_.predict(X)


# --------------------------------------------------------------------------- generic contract


@pytest.mark.parametrize("name", NAMES)
def test_registered_as_mlc(name):
    assert REGISTRY[name].kind == "mlc"


@pytest.mark.parametrize("name", NAMES)
def test_builder_reads_explicit_and_default_values(name):
    values, expected = EXPLICIT[name]
    est = build(name, values=values, random_state=7)
    for attr, value in expected.items():
        assert getattr(est, attr) == value
    assert est.random_state == 7
    default = build(name)
    for attr, value in DEFAULTS.get(name, {}).items():
        assert getattr(default, attr) == value
    assert isinstance(default.base, LogisticRegression)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("explicit", [False, True])
def test_clone_fit_scores_determinism(name, explicit, data):
    X, Y = data
    values = EXPLICIT[name][0] if explicit else None
    est = build(name, values=values)
    twin = clone(est)
    assert twin.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert not hasattr(twin.base, "coef_")
    S = est.fit(X, Y).predict_scores(X)
    assert S.shape == Y.shape
    assert np.all(np.isfinite(S)) and S.min() >= 0.0 and S.max() <= 1.0
    assert np.array_equal(twin.fit(X, Y).predict_scores(X), S)
    assert not hasattr(est.base, "coef_")  # the template itself is never fitted
    assert est.predict(X).shape == Y.shape
    assert np.array_equal(est.predict_proba(X), S)


@pytest.mark.parametrize("name", NAMES)
def test_constant_labels(name, data):
    X, Y = data
    Y = Y.copy()
    Y[:, 1] = 0
    Y[:, 3] = 1
    S = build(name).fit(X, Y).predict_scores(X)
    assert S.shape == Y.shape
    assert np.all(S[:, 1] == 0.0)
    if name == "RT":  # a posterior over labels: the always-present label gets a share, not 1
        assert np.all(S[:, 3] > 0) and np.all(S.sum(axis=1) <= 1 + 1e-9)
    else:
        assert np.allclose(S[:, 3], 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_sample_weight_reaches_every_fit_aligned(name, data):
    """Every SLC fit gets the weights of exactly the rows it is trained on (ids in column 0)."""
    X, Y = data
    X = X.copy()
    X[:, 0] = np.arange(1, X.shape[0] + 1)
    w = X[:, 0] / 10.0
    WeightSpy.calls = []
    values = EXPLICIT[name][0]
    build(name, base=WeightSpy(), values=values).fit(X, Y, sample_weight=w)
    assert WeightSpy.calls
    for ids, got in WeightSpy.calls:
        assert got is not None
        assert np.allclose(got, ids / 10.0)


@pytest.mark.parametrize("name", ["BR", "CC", "FW", "RT", "LC", "PSt", "RAkEL", "RAkELd"])
def test_integer_weights_equal_duplicated_rows(name, data):
    X, Y = data
    w = np.where(np.arange(X.shape[0]) % 3 == 0, 2.0, 1.0)
    rep = np.repeat(np.arange(X.shape[0]), w.astype(int))
    base = DecisionTreeClassifier(random_state=0, max_depth=4)
    weighted = build(name, base=base).fit(X, Y, sample_weight=w).predict_scores(X)
    duplicated = build(name, base=base).fit(X[rep], Y[rep]).predict_scores(X)
    unweighted = build(name, base=base).fit(X, Y).predict_scores(X)
    assert np.allclose(weighted, duplicated)
    assert not np.allclose(weighted, unweighted)


# --------------------------------------------------------------------------- BR, CC, BRq, CCq


def test_br_equals_per_label_logistic_regression(data):
    X, Y = data
    S = build("BR").fit(X, Y).predict_scores(X)
    expected = np.column_stack([lr().fit(X, Y[:, j]).predict_proba(X)[:, 1] for j in range(Y.shape[1])])
    assert np.allclose(S, expected, atol=1e-8)


def test_cc_identity_order_true_parents_hard_feed(data):
    X, Y = data
    cc = build("CC").fit(X, Y)
    assert list(cc.order_) == list(range(Y.shape[1]))
    assert [e.n_features_in_ for e in cc.estimators_] == [X.shape[1] + i for i in range(Y.shape[1])]
    oracle = ClassifierChain(lr(), order=None, chain_method="predict").fit(X, Y)
    assert np.allclose(cc.predict_scores(X), oracle.predict_proba(X), atol=1e-6)
    # link 2 was trained on the true labels 0 and 1
    link = lr().fit(np.hstack([X, Y[:, :2]]), Y[:, 2])
    assert np.allclose(cc.estimators_[2].coef_, link.coef_)


def test_downsample_negatives_removes_only_negatives():
    rng = np.random.default_rng(0)
    y = (np.arange(100) < 30).astype(int)  # 30 positives, 70 negatives
    kept = tf.downsample_negatives(y, 0.75, rng)
    assert len(set(kept)) == len(kept)
    assert set(np.flatnonzero(y == 1)) <= set(kept)
    assert len(kept) == 100 - 25  # 100 - round(75) negatives removed
    kept = tf.downsample_negatives(y, 0.2, rng)  # wants 80 removed, only 70 negatives exist
    assert sorted(kept) == list(range(30))


def test_brq_and_ccq_train_on_downsampled_rows(data):
    X, Y = data
    X = X.copy()
    X[:, 0] = np.arange(1, X.shape[0] + 1)
    for name in ("BRq", "CCq"):
        WeightSpy.calls = []
        est = build(name, base=WeightSpy(), values={"dsr": (0.6,)}).fit(X, Y)
        assert len(WeightSpy.calls) == Y.shape[1]
        order = est.order_ if name == "CCq" else range(Y.shape[1])
        for (ids, _), j in zip(WeightSpy.calls, order):
            rows = ids.astype(int) - 1
            n_neg = int((Y[:, j] == 0).sum())
            assert len(rows) == X.shape[0] - min(n_neg, X.shape[0] - 120)
            assert set(np.flatnonzero(Y[:, j] == 1)) <= set(rows)


def test_ccq_order_is_a_seeded_permutation(data):
    X, Y = data
    orders = {tuple(build("CCq", random_state=s).fit(X, Y).order_) for s in range(6)}
    assert all(sorted(o) == list(range(Y.shape[1])) for o in orders)
    assert len(orders) > 1
    assert tuple(build("CCq", random_state=3).fit(X, Y).order_) == tuple(
        build("CCq", random_state=3).fit(X, Y).order_)


# --------------------------------------------------------------------------- FW, RT


def test_fw_trains_all_pairs_and_scores_vote_fractions(data):
    X, Y = data
    L = Y.shape[1]
    fw = build("FW").fit(X, Y)
    assert len(fw.estimators_) == L * (L - 1) // 2
    assert fw.pairs_ == [(j, k) for j in range(L) for k in range(j + 1, L)]
    S = fw.predict_scores(X)
    votes = S * (L - 1)
    assert np.allclose(votes, np.round(votes))
    # the votes are exactly those of the hard four-class predictions
    expected = np.zeros_like(S)
    for (j, k), est in zip(fw.pairs_, fw.estimators_):
        c = est.predict(X)
        expected[:, j] += np.isin(c, (1, 3))
        expected[:, k] += np.isin(c, (2, 3))
    assert np.allclose(votes, expected)


def test_rt_is_the_copy_transformation_posterior(data):
    X, Y = data
    Y = Y.copy()
    Y[:, 4] = 0
    S = build("RT").fit(X, Y).predict_scores(X)
    rows, labels = np.nonzero(Y)
    model = lr().fit(X[rows], labels)
    assert np.allclose(S[:, :4], model.predict_proba(X), atol=1e-8)
    assert np.all(S[:, 4] == 0)
    assert np.allclose(S.sum(axis=1), 1.0)


# --------------------------------------------------------------------------- LC, PS, PSt


def test_lc_equals_skmultilearn_label_powerset(data):
    from skmultilearn.problem_transform import LabelPowerset

    X, Y = data
    lc = build("LC").fit(X, Y)
    oracle = LabelPowerset(classifier=lr(), require_dense=[True, True]).fit(X, Y)
    assert np.allclose(lc.predict_scores(X), oracle.predict_proba(X).toarray(), atol=1e-4)
    assert np.array_equal(lc.predict_labelsets(X), oracle.predict(X).toarray())


def _labelset_rows(counts: dict[tuple[int, ...], int], L: int) -> np.ndarray:
    rows = []
    for s, c in counts.items():
        y = np.zeros(L, dtype=int)
        y[list(s)] = 1
        rows += [y] * c
    return np.array(rows)


def _examples(Y, pruning, subsampling):
    rows, classes, sets = ls.ps_transform(Y, pruning, subsampling)
    return sorted((int(r), tuple(np.flatnonzero(sets[c]))) for r, c in zip(rows, classes)), sets


def test_ps_prunes_count_at_most_p_and_drops_without_subsampling():
    Y = _labelset_rows({(0,): 5, (1,): 4, (2,): 3, (): 2, (0, 1): 2, (0, 1, 2): 1}, 4)
    ex, sets = _examples(Y, pruning=2, subsampling=0)
    kept = {tuple(np.flatnonzero(s)) for s in sets}
    assert kept == {(0,), (1,), (2,)}  # count 2 is pruned too (≤ p, not < p)
    assert len(ex) == 12 and {s for _, s in ex} == kept
    ex0, sets0 = _examples(Y, pruning=0, subsampling=3)  # 0 = plain LC
    assert len(sets0) == 6 and len(ex0) == len(Y)


def test_ps_subsampling_keeps_largest_then_most_frequent_subsets():
    Y = _labelset_rows({(0,): 5, (1,): 4, (2,): 3, (0, 1): 1, (0, 1, 2): 1}, 3)
    i01, i012 = 12, 13  # rows of the pruned labelsets
    ex, _ = _examples(Y, pruning=1, subsampling=1)
    assert [s for r, s in ex if r == i01] == [(0,)]  # most frequent of {0}:5, {1}:4
    assert [s for r, s in ex if r == i012] == [(0,)]
    ex, _ = _examples(Y, pruning=1, subsampling=2)
    assert sorted(s for r, s in ex if r == i012) == [(0,), (1,)]  # one extra copy of the row
    ex, _ = _examples(Y, pruning=1, subsampling=5)
    assert sorted(s for r, s in ex if r == i012) == [(0,), (1,), (2,)]
    assert len(ex) == 12 + 2 + 3


def test_ps_subsets_prefer_size_collapse_ties_and_skip_empty_set():
    Y = _labelset_rows({(0, 1): 2, (0,): 9, (2,): 4, (3,): 4, (): 6, (0, 1, 2): 1, (2, 3): 1, (4,): 1}, 5)
    ex, sets = _examples(Y, pruning=1, subsampling=1)
    by_row = {}
    for r, s in ex:
        by_row.setdefault(r, []).append(s)
    r012 = 2 + 9 + 4 + 4 + 6
    assert by_row[r012] == [(0, 1)]  # size beats count (9 > 2)
    r23 = r012 + 1
    ex2, _ = _examples(Y, pruning=1, subsampling=2)
    got = [s for r, s in ex2 if r == r23]
    assert len(got) == 1 and got[0] in {(2,), (3,)}  # {2}:4 and {3}:4 collapse into one
    r4 = r23 + 1
    assert r4 not in by_row  # only the empty set is a subset of {4}: the row is dropped


def test_ps_retries_with_smaller_p_when_at_most_one_labelset_survives():
    Y = _labelset_rows({(0,): 10, (1,): 1, (0, 1): 1}, 2)
    _, sets = _examples(Y, pruning=1, subsampling=0)
    assert len(sets) == 3
    Y = _labelset_rows({(0,): 10, (1,): 2, (0, 1): 1}, 2)
    _, sets = _examples(Y, pruning=2, subsampling=0)  # p=2 leaves 1, p=1 leaves 2
    assert {tuple(np.flatnonzero(s)) for s in sets} == {(0,), (1,)}


def test_ps_fits_on_the_transformed_rows(data):
    X, Y = data
    rows, classes, sets = ls.ps_transform(Y, 2, 2)
    ps = build("PS", values={"pv": (2,), "sv": (2,)}).fit(X, Y)
    assert np.array_equal(ps.labelsets_, sets)
    expected = lr().fit(X[rows], classes).predict_proba(X)
    assert np.allclose(ps.labelset_proba(X), expected, atol=1e-8)


def test_ps_and_pst_scores(data):
    X, Y = data
    values = {"pv": (1,), "sv": (1,)}
    ps = build("PS", values=values).fit(X, Y)
    pst = build("PSt", values=values).fit(X, Y)
    P = ps.labelset_proba(X)
    assert np.allclose(pst.predict_scores(X), P @ ps.labelsets_)
    # PS cut at 0.5 is MEKA's hard argmax labelset
    assert np.array_equal(ps.predict(X), ps.predict_labelsets(X))
    assert not np.allclose(ps.predict_scores(X), pst.predict_scores(X))


# --------------------------------------------------------------------------- RAkEL, RAkELd


@pytest.mark.parametrize("k,n_models", [(1, 20), (2, 25), (1, 3), (2, 10)])
def test_rakel_subsets_terminate_and_are_distinct_when_possible(data, k, n_models):
    X, Y = data
    L = Y.shape[1]
    with time_limit(30):
        est = build("RAkEL", values={"sre": (n_models,), "les": (k,)}).fit(X, Y)
        S = est.predict_scores(X)
    assert len(est.subsets_) == len(est.estimators_) == n_models
    assert all(len(s) == k and list(s) == sorted(set(s)) for s in est.subsets_)
    distinct = {tuple(s) for s in est.subsets_}
    assert len(distinct) == min(n_models, comb(L, k))
    assert len({id(e) for e in est.estimators_}) == len(distinct)
    assert S.shape == Y.shape


def test_rakel_scores_are_vote_fractions(data):
    X, Y = data
    est = build("RAkEL", values={"sre": (6,), "les": (2,)}).fit(X, Y)
    votes = np.zeros(Y.shape)
    covered = np.zeros(Y.shape[1])
    for s, m in zip(est.subsets_, est.estimators_):
        votes[:, s] += m.predict_labelsets(X)
        covered[s] += 1
    expected = np.divide(votes, covered, out=np.zeros_like(votes), where=covered > 0)
    assert np.allclose(est.predict_scores(X), expected)


@pytest.mark.parametrize("L,k,expected", [(4, 3, 3), (3, 3, 2), (2, 3, 1), (14, 3, 3), (1, 3, 1)])
def test_subset_size_clamped(L, k, expected):
    assert ls._subset_size(k, L) == expected


@pytest.mark.parametrize("k,sizes", [(5, [7, 7]), (4, [5, 5, 4]), (3, [4, 4, 3, 3]), (1, [1] * 14)])
def test_rakeld_partition_sizes_as_meka(k, sizes):
    groups = ls.balanced_partition(14, k, np.random.default_rng(0))
    assert [len(g) for g in groups] == sizes
    assert sorted(np.concatenate(groups).tolist()) == list(range(14))


def test_rakeld_disjoint_ps_models(data):
    X, Y = data
    est = build("RAkELd", values={"les": (2,), "pv": (1,), "sv": (1,)}).fit(X, Y)
    assert [len(g) for g in est.groups_] == [3, 2]
    S = est.predict_scores(X)
    for g, m in zip(est.groups_, est.estimators_):
        assert m.pruning == 1 and m.subsampling == 1
        assert np.allclose(S[:, g], m.predict_scores(X))
        assert np.array_equal((S[:, g] >= 0.5).astype(int), m.predict_labelsets(X))

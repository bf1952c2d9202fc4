"""Single-label meta-classifiers (spaces/slc/meta.py): ASC, AdaBoostM1, Bagging, LWL,
RandomCommittee, RandomSubSpace — builders, the estimator contract and each algorithm's own
behaviour, on small synthetic data with simple scikit-learn bases."""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.tree import DecisionTreeClassifier

from ggp_automl.spaces import deadline
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import REGISTRY
from ggp_automl.spaces.slc import meta
from ggp_automl.spaces.slc._cfs import CFSSubsetSelector, _BoundedList, mdl_cut_points
from ggp_automl.spaces.slc._meta_boost import weight_quantile
from ggp_automl.spaces.slc._meta_ensemble import n_subspace_features
from ggp_automl.spaces.slc._meta_lwl import kernel_weights, neighbourhood_weights
from ggp_automl.spaces.slc.base import ConstantClassifier

NAMES = ("ASC", "AdaBoostM1", "Bagging", "LWL", "RandomCommittee", "RandomSubSpace")

#: explicit hyper-parameters per algorithm: (values, the algorithm's own terminals)
EXPLICIT = {
    "ASC": ({"sm": ("GreedyStepwise",)}, ("ASC", "GreedyStepwise")),
    "AdaBoostM1": ({"wt": (80,), "ur": ("ur",), "ni_ada": (5,)}, ("AdaBoostM1", 80, "ur", 5)),
    "Bagging": ({"coob": (60,), "bsp_bagging": (60,), "ni_bagging": (4,)}, ("Bagging", 60, 4)),
    "LWL": ({"k_lwl": (30,), "wk": (4,)}, ("LWL", 30, 4)),
    "RandomCommittee": ({"ni_rc": (4,)}, ("RandomCommittee", 4)),
    "RandomSubSpace": ({"sss": (0.3,), "ni_rss": (4,)}, ("RandomSubSpace", 0.3, 4)),
}


pytestmark = pytest.mark.usefixtures("one_thread", "no_deadline")


def data(n_classes: int, n: int = 160, m: int = 8, seed: int = 0):
    X, y = make_classification(n_samples=n, n_features=m, n_informative=5, n_redundant=1,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=seed)
    return X, y


def build(name: str, base, explicit: bool = False, random_state: int = 0):
    values, tokens = EXPLICIT[name] if explicit else ({}, (name,))
    return REGISTRY[name].build(Params(name, values=values, tokens=tokens, random_state=random_state), base)


class RowSpyTree(DecisionTreeClassifier):
    """A tree that remembers how many rows (and which weights) it was trained on."""

    def fit(self, X, y, sample_weight=None, check_input=True):
        self.rows_seen_ = X.shape[0]
        self.weights_seen_ = None if sample_weight is None else np.asarray(sample_weight).copy()
        return super().fit(X, y, sample_weight=sample_weight, check_input=check_input)


SPY_FITS: list = []


class SpyNB(GaussianNB):
    """GaussianNB logging every fit (LWL does not keep its per-row models)."""

    def fit(self, X, y, sample_weight=None):
        SPY_FITS.append((X.shape[0], None if sample_weight is None else np.asarray(sample_weight).copy()))
        return super().fit(X, y, sample_weight=sample_weight)


# --------------------------------------------------------------------------- registry and builders

def test_registered_names_and_kinds():
    mine = {n for n, spec in REGISTRY.items() if spec.build.__module__ == "ggp_automl.spaces.slc.meta"}
    assert mine == set(NAMES)
    for name in NAMES:
        assert REGISTRY[name].kind == "meta-slc"
        assert REGISTRY[name].description


def test_builders_defaults():
    base = GaussianNB()
    asc = build("ASC", base)
    assert isinstance(asc, meta.AttributeSelectedClassifier) and asc.search == "BestFirst"
    assert asc.estimator is base
    ada = build("AdaBoostM1", base)
    assert (ada.n_estimators, ada.weight_threshold, ada.use_resampling) == (10, 100, False)
    bag = build("Bagging", base)
    assert (bag.n_estimators, bag.bag_size_percent, bag.oob_score) == (10, 100, False)
    lwl = build("LWL", base)
    assert (lwl.n_neighbors, lwl.kernel) == (-1, 0)
    assert build("RandomCommittee", base).n_estimators == 10
    rss = build("RandomSubSpace", base)
    assert (rss.n_estimators, rss.subspace_size) == (10, 0.5)


def test_builders_explicit_values():
    base = GaussianNB()
    assert build("ASC", base, True).search == "GreedyStepwise"
    ada = build("AdaBoostM1", base, True)
    assert (ada.n_estimators, ada.weight_threshold, ada.use_resampling) == (5, 80, True)
    bag = build("Bagging", base, True)
    assert (bag.n_estimators, bag.bag_size_percent, bag.oob_score) == (4, 60, False)
    coob = REGISTRY["Bagging"].build(Params("Bagging", values={"coob": (100, "coob"), "ni_bagging": (7,)},
                                            tokens=("Bagging", 100, "coob", 7), random_state=3), base)
    assert (coob.n_estimators, coob.bag_size_percent, coob.oob_score, coob.random_state) == (7, 100, True, 3)
    lwl = build("LWL", base, True)
    assert (lwl.n_neighbors, lwl.kernel) == (30, 4)
    empty_wk = REGISTRY["LWL"].build(Params("LWL", values={"k_lwl": (10,), "wk": ()}, tokens=("LWL", 10)), base)
    assert empty_wk.kernel == 0
    assert build("RandomCommittee", base, True).n_estimators == 4
    rss = build("RandomSubSpace", base, True)
    assert (rss.n_estimators, rss.subspace_size) == (4, 0.3)


# --------------------------------------------------------------------------- the estimator contract

@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("explicit", [False, True])
@pytest.mark.parametrize("name", NAMES)
def test_contract(name, explicit, n_classes):
    X, y = data(n_classes)
    Xtr, ytr, Xte = X[:120], y[:120], X[120:]
    est = build(name, DecisionTreeClassifier(random_state=0, max_features=0.7), explicit, random_state=5)
    twin = clone(est)
    assert twin.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert twin.random_state == 5 and twin.estimator is not est.estimator
    assert not hasattr(est, "classes_")
    assert est.fit(Xtr, ytr) is est
    proba = est.predict_proba(Xte)
    assert proba.shape == (Xte.shape[0], n_classes)
    assert np.all(proba >= 0) and np.all(proba <= 1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    np.testing.assert_array_equal(est.classes_, np.arange(n_classes))
    pred = est.predict(Xte)
    assert set(np.unique(pred)) <= set(range(n_classes))
    assert np.mean(est.predict(Xtr[:40]) == ytr[:40]) > 1.0 / n_classes   # learns something
    # deterministic for a fixed random_state
    np.testing.assert_array_equal(twin.fit(Xtr, ytr).predict_proba(Xte), proba)


@pytest.mark.parametrize("name", NAMES)
def test_string_labels_and_sample_weight(name):
    X, y = data(3, n=90)
    labels = np.array(["a", "b", "c"])[y]
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=y.size)
    est = build(name, LogisticRegression(max_iter=300), explicit=True).fit(X[:70], labels[:70], sample_weight=w[:70])
    assert set(est.predict(X[70:])) <= {"a", "b", "c"}
    np.testing.assert_allclose(est.predict_proba(X[70:]).sum(axis=1), 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_base_without_sample_weight(name):
    """KNN has no sample_weight: instance weights must be emulated by resampling."""
    X, y = data(2, n=100)
    w = np.where(np.arange(100) % 2 == 0, 3.0, 0.2)
    est = build(name, KNeighborsClassifier(n_neighbors=3), explicit=True, random_state=1)
    p1 = est.fit(X[:80], y[:80], sample_weight=w[:80]).predict_proba(X[80:])
    p2 = clone(est).fit(X[:80], y[:80], sample_weight=w[:80]).predict_proba(X[80:])
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_allclose(p1.sum(axis=1), 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_constant_training_target(name):
    X, _ = data(2, n=60)
    y = np.full(60, 7)
    est = build(name, LogisticRegression(), explicit=True).fit(X[:40], y[:40])
    np.testing.assert_array_equal(est.predict(X[40:]), 7)
    np.testing.assert_allclose(est.predict_proba(X[40:]), 1.0)


def test_bags_with_a_single_class_do_not_fail():
    """10% bags of a target with 3 positives in 100 rows: many bags hold only negatives."""
    X, _ = data(2, n=100)
    y = np.zeros(100, dtype=int)
    y[[5, 50, 95]] = 1
    est = meta.Bagging(LogisticRegression(), n_estimators=30, bag_size_percent=10, random_state=0).fit(X, y)
    assert any(isinstance(m, ConstantClassifier) for m in est.estimators_)
    assert not all(isinstance(m, ConstantClassifier) for m in est.estimators_)
    proba = est.predict_proba(X)
    assert proba.shape == (100, 2)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_random_subspace_and_lwl_with_locally_single_class():
    X, _ = data(2, n=80)
    y = (X[:, 0] > np.quantile(X[:, 0], 0.9)).astype(int)    # rare positive, far from most rows
    lwl = meta.LocallyWeightedLearning(LogisticRegression(), n_neighbors=10, kernel=1).fit(X, y)
    proba = lwl.predict_proba(X[:20])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    ada = meta.AdaBoostM1(LogisticRegression(), n_estimators=5, weight_threshold=50, random_state=0).fit(X, y)
    np.testing.assert_allclose(ada.predict_proba(X).sum(axis=1), 1.0)


# --------------------------------------------------------------------------- AdaBoostM1

def test_weight_quantile_selection():
    np.testing.assert_array_equal(weight_quantile(np.array([4.0, 3.0, 2.0, 1.0]), 0.5), [0, 1])
    np.testing.assert_array_equal(weight_quantile(np.array([1.0, 2.0, 4.0, 3.0]), 0.5), [2, 3])
    # ties with the last row taken are all kept
    np.testing.assert_array_equal(weight_quantile(np.array([5.0, 1, 1, 1, 1, 1]), 0.5), np.arange(6))
    np.testing.assert_array_equal(weight_quantile(np.array([2.0, 2.0, 2.0, 1.0, 1.0]), 0.5), [0, 1, 2])


def test_adaboost_weight_trimming():
    X, y = data(2, n=200, seed=3)
    base = RowSpyTree(max_depth=1, random_state=0)
    full = meta.AdaBoostM1(base, n_estimators=6, weight_threshold=100, random_state=0).fit(X, y)
    assert len(full.estimators_) > 2
    assert all(m.rows_seen_ == 200 for m in full.estimators_)
    trimmed = meta.AdaBoostM1(base, n_estimators=6, weight_threshold=60, random_state=0).fit(X, y)
    sizes = [m.rows_seen_ for m in trimmed.estimators_]
    # equal weights in round 1, and two weight levels (wrong = right = half the mass) in
    # round 2: the whole tie at the quantile is kept; afterwards the mass is trimmed
    assert sizes[:2] == [200, 200]
    assert len(sizes) > 2 and all(s < 200 for s in sizes[2:])
    np.testing.assert_array_equal(trimmed.train_sizes_, sizes)
    # reweighting path passes the boosted weights to the base
    second = trimmed.estimators_[1].weights_seen_
    assert second is not None and second.std() > 0


def test_adaboost_samme_weights_and_combination():
    X, y = data(3, n=240, seed=4)
    ada = meta.AdaBoostM1(DecisionTreeClassifier(max_depth=2, random_state=0), n_estimators=5, random_state=0).fit(X, y)
    assert len(ada.estimators_) >= 2
    eps = ada.estimator_errors_
    np.testing.assert_allclose(ada.estimator_weights_, np.log((1 - eps) / eps) + math.log(2))
    votes = np.zeros((X.shape[0], 3))
    for est, alpha in zip(ada.estimators_, ada.estimator_weights_):
        votes[np.arange(X.shape[0]), est.predict(X)] += alpha
    expected = np.exp(votes - votes.max(axis=1, keepdims=True))
    np.testing.assert_allclose(ada.predict_proba(X), expected / expected.sum(axis=1, keepdims=True))


def test_adaboost_stops_on_perfect_first_model():
    X, y = data(2, n=100)
    ada = meta.AdaBoostM1(DecisionTreeClassifier(random_state=0), n_estimators=10, random_state=0).fit(X, y)
    assert len(ada.estimators_) == 1
    np.testing.assert_array_equal(ada.predict_proba(X), ada.estimators_[0].predict_proba(X))


def test_adaboost_resampling():
    X, y = data(2, n=150, seed=2)
    # a base without sample_weight is boosted by resampling even when ur is off
    knn = meta.AdaBoostM1(KNeighborsClassifier(n_neighbors=15), n_estimators=4, random_state=0).fit(X, y)
    assert len(knn.estimators_) >= 2
    assert any(np.unique(m._fit_X, axis=0).shape[0] < 150 for m in knn.estimators_)   # duplicated rows
    # ur on: the tree sees unweighted resamples
    ur = meta.AdaBoostM1(RowSpyTree(max_depth=1), n_estimators=4, use_resampling=True, random_state=0).fit(X, y)
    assert all(m.weights_seen_ is None for m in ur.estimators_)
    rw = meta.AdaBoostM1(RowSpyTree(max_depth=1), n_estimators=4, use_resampling=False, random_state=0).fit(X, y)
    assert all(m.weights_seen_ is not None for m in rw.estimators_)


# --------------------------------------------------------------------------- Bagging, RC, RSS

def test_bagging_bag_size_and_oob():
    X, y = data(2, n=150)
    bag = meta.Bagging(RowSpyTree(random_state=0), n_estimators=5, bag_size_percent=30, random_state=0).fit(X, y)
    assert [m.rows_seen_ for m in bag.estimators_] == [45] * 5
    assert all(s.size == 45 for s in bag.estimators_samples_)
    assert not hasattr(bag, "oob_score_")
    full = meta.Bagging(RowSpyTree(random_state=0), n_estimators=8, oob_score=True, random_state=0).fit(X, y)
    assert [m.rows_seen_ for m in full.estimators_] == [150] * 8
    assert all(np.unique(s).size < 150 for s in full.estimators_samples_)    # with replacement
    assert 0.5 < full.oob_score_ <= 1.0
    assert full.oob_error_ == pytest.approx(1 - full.oob_score_)
    # predictions do not depend on coob
    plain = meta.Bagging(RowSpyTree(random_state=0), n_estimators=8, random_state=0).fit(X, y)
    np.testing.assert_array_equal(plain.predict_proba(X), full.predict_proba(X))


def test_bagging_draws_by_instance_weight():
    X, y = data(2, n=100)
    w = np.zeros(100)
    w[:50] = 1.0
    bag = meta.Bagging(GaussianNB(), n_estimators=5, random_state=0).fit(X, y, sample_weight=w)
    assert all(s.max() < 50 for s in bag.estimators_samples_)


def test_random_committee_members_differ_only_by_seed():
    X, y = data(2, n=120)
    rc = meta.RandomCommittee(RowSpyTree(max_features=0.5, random_state=0), n_estimators=5,
                              random_state=0).fit(X[:90], y[:90])
    assert all(m.rows_seen_ == 90 and m.weights_seen_ is None for m in rc.estimators_)
    assert len({m.random_state for m in rc.estimators_}) == 5
    assert all(m.max_features == 0.5 for m in rc.estimators_)
    preds = np.array([m.predict_proba(X[90:])[:, 1] for m in rc.estimators_])
    assert np.unique(preds, axis=0).shape[0] > 1
    np.testing.assert_allclose(rc.predict_proba(X[90:])[:, 1], preds.mean(axis=0))


def test_random_subspace_feature_fraction():
    assert n_subspace_features(10, 0.5) == 5
    assert n_subspace_features(10, 0.25) == 3       # Java Math.round: half up
    assert n_subspace_features(10, 0.01) == 1
    assert n_subspace_features(7, 1.0) == 7        # the grammar's 1.0 = all attributes
    assert n_subspace_features(7, 3.0) == 3        # WEKA: a value above 1 is a count
    X, y = data(2, n=100, m=10)
    rss = meta.RandomSubSpace(DecisionTreeClassifier(random_state=0), n_estimators=6, subspace_size=0.3,
                              random_state=0).fit(X, y)
    assert all(cols.size == 3 for cols in rss.estimators_features_)
    assert all(m.n_features_in_ == 3 for m in rss.estimators_)
    assert len({tuple(c) for c in rss.estimators_features_}) > 1
    manual = np.mean([m.predict_proba(X[:, c]) for m, c in zip(rss.estimators_, rss.estimators_features_)], axis=0)
    np.testing.assert_allclose(rss.predict_proba(X), manual)


# --------------------------------------------------------------------------- LWL

def test_lwl_kernels():
    d = np.array([0.0, 0.5, 1.0])
    np.testing.assert_allclose(kernel_weights(d, 0), 1.0001 - d)
    np.testing.assert_allclose(kernel_weights(d, 1), 0.75 * (1.0001 - d ** 2))
    np.testing.assert_allclose(kernel_weights(d, 2), (1.0001 - d ** 3) ** 3)
    np.testing.assert_allclose(kernel_weights(d, 3), 1 / (1 + d))
    np.testing.assert_allclose(kernel_weights(d, 4), np.exp(-d ** 2))
    with pytest.raises(ValueError):
        kernel_weights(d, 5)


def test_lwl_neighbourhood():
    dist = np.array([[0.1, 0.2, 0.2, 0.3, 0.5]])
    w = neighbourhood_weights(dist, 2, 0)                 # bandwidth 0.2, the tie is kept
    np.testing.assert_allclose(w, [[1.0001 - 0.5, 0.0001, 0.0001, 0, 0]], atol=1e-12)
    w_all = neighbourhood_weights(dist, -1, 0)            # all rows, bandwidth = farthest
    np.testing.assert_allclose(w_all, 1.0001 - dist / 0.5)
    np.testing.assert_allclose(neighbourhood_weights(dist, 99, 0), w_all)
    zero = neighbourhood_weights(np.zeros((1, 4)), 2, 0)  # zero bandwidth: equal weights
    np.testing.assert_allclose(zero, 0.0001)


def test_lwl_fits_one_weighted_model_per_row():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(100, 5)), rng.integers(0, 2, size=100)   # mixed neighbourhoods
    SPY_FITS.clear()
    lwl = meta.LocallyWeightedLearning(SpyNB(), n_neighbors=10, kernel=2).fit(X[:80], y[:80])
    assert SPY_FITS == []                                  # lazy
    lwl.predict_proba(X[80:])
    assert len(SPY_FITS) == 20
    assert all(rows == 10 for rows, _ in SPY_FITS)
    assert all(w is not None and w.std() > 0 for _, w in SPY_FITS)
    np.testing.assert_allclose([w.sum() for _, w in SPY_FITS], 10.0)   # rescaled to the instance-weight sum
    SPY_FITS.clear()
    meta.LocallyWeightedLearning(SpyNB(), n_neighbors=-1).fit(X[:80], y[:80]).predict_proba(X[80:85])
    assert [rows for rows, _ in SPY_FITS] == [80] * 5


def test_lwl_weights_follow_distance():
    X, y = data(2, n=60)
    lwl = meta.LocallyWeightedLearning(GaussianNB(), n_neighbors=-1, kernel=0).fit(X, y)
    w = lwl.local_weights(X[:1])[0]
    assert np.argmax(w) == 0 and w[0] == pytest.approx(1.0001)
    scaled = (X - X.min(axis=0)) / (X.max(axis=0) - X.min(axis=0))
    d = np.linalg.norm(scaled - scaled[0], axis=1)
    np.testing.assert_allclose(w, 1.0001 - d / d.max())


def test_lwl_kernel_changes_predictions():
    X, y = data(2, n=120, seed=7)
    p = [meta.LocallyWeightedLearning(GaussianNB(), n_neighbors=30, kernel=k).fit(X[:90], y[:90]).predict_proba(X[90:])
         for k in (0, 4)]
    assert not np.allclose(p[0], p[1])


def test_lwl_checks_the_deadline():
    X, y = data(2, n=60)
    lwl = meta.LocallyWeightedLearning(GaussianNB()).fit(X, y)
    deadline.set_deadline(-1.0)
    with pytest.raises(deadline.BudgetExceeded):
        lwl.predict_proba(X[:5])
    with pytest.raises(deadline.BudgetExceeded):
        meta.AdaBoostM1(GaussianNB()).fit(X, y)


# --------------------------------------------------------------------------- ASC and CFS

def additive_problem(seed: int):
    """y depends on three independent attributes (0, 1, 2); nine noise attributes."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(600, 12))
    y = (X[:, 0] + X[:, 1] + X[:, 2] + 0.3 * rng.normal(size=600) > 0).astype(int)
    return X, y


@pytest.mark.parametrize("search", ["BestFirst", "GreedyStepwise"])
def test_cfs_selects_the_informative_attributes(search):
    X, y = additive_problem(0)
    sel = CFSSubsetSelector(search=search).fit(X, y)
    np.testing.assert_array_equal(np.flatnonzero(sel.get_support()), [0, 1, 2])
    assert sel.transform(X).shape == (600, 3)
    asc = meta.AttributeSelectedClassifier(GaussianNB(), search=search).fit(X, y)
    np.testing.assert_array_equal(asc.selected_, [0, 1, 2])
    assert asc.estimator_.n_features_in_ == 3


def test_cfs_drops_redundant_copies():
    X, y = additive_problem(1)
    X = np.column_stack([X, X[:, 0] + 1e-3 * np.random.default_rng(0).normal(size=600)])   # near-copy of 0
    sel = CFSSubsetSelector().fit(X, y)
    support = np.flatnonzero(sel.support_)
    assert {1, 2} <= set(support) and len({0, 12} & set(support)) == 1


def test_cfs_on_make_classification_keeps_few_attributes():
    X, y = make_classification(n_samples=400, n_features=20, n_informative=3, n_redundant=0,
                               n_clusters_per_class=1, shuffle=False, random_state=2)
    sel = CFSSubsetSelector().fit(X, y)
    support = np.flatnonzero(sel.support_)
    assert 1 <= support.size <= 5 and set(support) & {0, 1, 2}
    assert sel.merit_ >= CFSSubsetSelector(search="GreedyStepwise").fit(X, y).merit_ - 1e-5


def test_mdl_cut_points():
    x = np.r_[np.zeros(50), np.ones(50)]
    yy = np.r_[np.zeros(50, int), np.ones(50, int)]
    np.testing.assert_allclose(mdl_cut_points(x, yy, 2), [0.5])
    rng = np.random.default_rng(0)
    assert mdl_cut_points(rng.normal(size=200), rng.integers(0, 2, 200), 2).size == 0
    three = np.r_[np.zeros(40), np.ones(40), 2 * np.ones(40)]
    np.testing.assert_allclose(mdl_cut_points(three, np.repeat([0, 1, 2], 40), 3), [0.5, 1.5])


def test_best_first_open_list_is_bounded_and_stable():
    lst = _BoundedList(3)
    for subset, merit in [((1,), 0.5), ((2,), 0.7), ((3,), 0.5), ((4,), 0.6), ((5,), 0.4)]:
        lst.add(subset, merit)
    assert [s for _, s in lst.items] == [(2,), (4,), (1,)]
    lst.add((6,), 0.6)
    assert [s for _, s in lst.items] == [(2,), (4,), (6,)]   # ties go after existing entries
    assert lst.pop() == (2,) and len(lst) == 2


def test_asc_predicts_with_the_selected_columns_only():
    X, y = additive_problem(2)
    asc = meta.AttributeSelectedClassifier(DecisionTreeClassifier(random_state=0)).fit(X, y)
    X_noise = X.copy()
    X_noise[:, 3:] = np.random.default_rng(5).normal(size=(600, 9))   # unselected columns change
    np.testing.assert_array_equal(asc.predict_proba(X), asc.predict_proba(X_noise))

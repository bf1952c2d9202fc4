"""Tree learners of the SLC level: J48, DecisionStump, RandomForest, RandomTree, REPTree.

Besides the estimator contract (clone, fit, probabilities, determinism, weights,
binary and multi-class targets), the WEKA procedures are checked against small,
literal re-implementations of WEKA's recursive Java code (collapse, C4.5 pruning with
subtree raising, C45Split's split test, reduced-error pruning).
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.tree import DecisionTreeClassifier

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import REGISTRY
from ggp_automl.spaces.slc import trees  # noqa: F401  (registers the algorithms)
from ggp_automl.spaces.slc._tree_c45 import add_errs, collapse, estimated_errors, node_is_splittable, prune
from ggp_automl.spaces.slc._tree_flat import FlatTree
from ggp_automl.spaces.slc._tree_holdout import reduced_error_prune, stratified_folds
from ggp_automl.spaces.slc.base import fit_slc
from ggp_automl.spaces.slc.trees import (J48Classifier, RandomTreeClassifier, REPTreeClassifier,
                              WekaRandomForest, weka_k_features)

ROOT = Path(__file__).resolve().parents[1]
NAMES = ("J48", "DecisionStump", "RandomForest", "RandomTree", "REPTree")


# ---------------------------------------------------------------------- data and builders
def data(n=300, m=12, classes=2, seed=0, flip=0.05):
    X, y = make_classification(n_samples=n, n_features=m, n_informative=min(m, 6), n_redundant=0,
                               n_classes=classes, n_clusters_per_class=1, flip_y=flip,
                               random_state=seed)
    return X, y


BINARY = data(classes=2, seed=0)
MULTI = data(n=400, m=15, classes=4, seed=1)
NOISY = data(n=400, m=8, classes=2, seed=3, flip=0.35)


def build(name, values=None, tokens=(), random_state=0):
    return REGISTRY[name].build(Params(name, values=values or {}, tokens=(name,) + tuple(tokens),
                                       random_state=random_state))


EXPLICIT = {
    "J48": ({"mno_c45": (5,), "ct": ("ct",), "bs": ("bs",), "umc": ("umc",), "ul": ("ul",),
             "c45_prune": (0.1, "sr"), "cf_c45": (0.1,), "sr": ("sr",)},
            (5, "ct", "bs", "umc", "ul", 0.1, "sr")),
    "DecisionStump": ({}, ()),
    "RandomForest": ({"nt": (7,), "nf_rf": (3,), "md_rf": (4,)}, (7, 3, 4)),
    "RandomTree": ({"mw_rtree": (3,), "nfbgt": (3,), "nf_rtree": (4,), "md_rtree": (6,)}, (3, 3, 4, 6)),
    "REPTree": ({"mw_rep": (4,), "up": ("up",), "md_rep": (5,)}, (4, "up", 5)),
}
CASES = [(name, "explicit") for name in NAMES] + [(name, "defaults") for name in NAMES]


def case_estimator(name, kind, random_state=0):
    values, tokens = EXPLICIT[name] if kind == "explicit" else ({}, ())
    return build(name, values, tokens, random_state)


# ---------------------------------------------------------------------- registry and mapping
def test_registered_as_slc():
    for name in NAMES:
        assert name in REGISTRY and REGISTRY[name].kind == "slc"


def test_rules_read_by_builders_exist_in_the_grammar():
    text = (ROOT / "grammars" / "large.bnf").read_text()
    defined = set(re.findall(r"^<([^>]+)>\s*::=", text, flags=re.M))
    for values, _ in EXPLICIT.values():
        assert set(values) <= defined


def test_defaults_follow_appendix_a():
    assert build("J48").get_params() == {
        "min_num_obj": 2, "confidence_factor": 0.25, "unpruned": False, "collapse_tree": True,
        "subtree_raising": True, "use_mdl_correction": True, "use_laplace": False, "random_state": 0}
    assert build("RandomForest").get_params() == {
        "n_estimators": 100, "n_features": 0, "max_depth": 0, "random_state": 0}
    assert build("RandomTree").get_params() == {
        "min_num": 1, "n_features": 0, "max_depth": 0, "num_folds": 0, "allow_unclassified": False,
        "random_state": 0}
    assert build("REPTree").get_params() == {
        "min_num": 2, "max_depth": -1, "no_pruning": False, "num_folds": 3, "random_state": 0}
    stump = build("DecisionStump")
    assert stump.max_depth == 1 and stump.criterion == "entropy"


def test_explicit_values_and_switch_semantics():
    j48 = case_estimator("J48", "explicit").get_params()
    # ct = do NOT collapse, sr = NO subtree raising, umc = NO MDL correction, ul = Laplace
    assert j48["min_num_obj"] == 5 and j48["confidence_factor"] == 0.1
    assert not j48["collapse_tree"] and not j48["subtree_raising"] and not j48["use_mdl_correction"]
    assert j48["use_laplace"] and not j48["unpruned"]
    unpruned = build("J48", {"c45_prune": ("u",)}, (2, "u")).get_params()
    assert unpruned["unpruned"] and unpruned["collapse_tree"]
    assert case_estimator("RandomForest", "explicit").get_params()["n_features"] == 3
    rt = case_estimator("RandomTree", "explicit").get_params()
    assert (rt["min_num"], rt["num_folds"], rt["n_features"], rt["max_depth"]) == (3, 3, 4, 6)
    rep = case_estimator("REPTree", "explicit").get_params()
    assert (rep["min_num"], rep["no_pruning"], rep["max_depth"]) == (4, True, 5)


# ---------------------------------------------------------------------- estimator contract
@pytest.mark.parametrize("name,kind", CASES)
@pytest.mark.parametrize("target", ["binary", "multi"])
def test_contract(name, kind, target):
    X, y = BINARY if target == "binary" else MULTI
    est = case_estimator(name, kind)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    assert twin.fit(X[:250], y[:250]) is twin
    proba = twin.predict_proba(X[250:])
    assert proba.shape == (X.shape[0] - 250, np.unique(y).size)
    assert np.all((proba >= 0) & (proba <= 1)) and np.allclose(proba.sum(axis=1), 1.0)
    pred = twin.predict(X[250:])
    np.testing.assert_array_equal(pred, twin.classes_[proba.argmax(axis=1)])
    chance = np.bincount(y).max() / y.size
    assert np.mean(pred == y[250:]) > chance + 0.1
    again = clone(est).fit(X[:250], y[:250]).predict_proba(X[250:])
    np.testing.assert_array_equal(proba, again)                  # deterministic
    assert est.get_params() == twin.get_params()                  # fit leaves params alone


@pytest.mark.parametrize("name", NAMES)
def test_sample_weight_is_used(name):
    X, y = NOISY
    est = build(name)
    w = np.where(y[:300] == 1, 20.0, 1.0)
    plain = clone(est).fit(X[:300], y[:300])
    weighted = clone(est).fit(X[:300], y[:300], sample_weight=w)
    if name == "RandomTree":   # fully grown: weights show in the class weights of the nodes
        np.testing.assert_allclose(weighted.node_weights_[0], np.bincount(y[:300], weights=w) * 300 / w.sum())
        assert plain.node_weights_[0][1] < plain.node_weights_[0][0] * 1.5
    else:
        gain = weighted.predict_proba(X[300:])[:, 1].mean() - plain.predict_proba(X[300:])[:, 1].mean()
        assert gain > 0.2


@pytest.mark.parametrize("name", ["J48", "RandomTree", "REPTree"])
def test_weights_are_scale_free(name):
    X, y = NOISY
    w = np.random.default_rng(0).uniform(0.2, 3.0, size=y.size)
    a = build(name).fit(X, y, sample_weight=w).predict_proba(X)
    b = build(name).fit(X, y, sample_weight=w / 1024).predict_proba(X)   # exact in floating point
    np.testing.assert_allclose(a, b)


def test_j48_integer_weights_match_duplicated_rows():
    # With M = 1 C45Split's row-count check (firstMiss < 2 minSplit) cannot tell a weight-k
    # row from k copies, so the trees must agree exactly; rows of weight 0 are dropped.
    X, y = NOISY
    counts = np.random.default_rng(1).multinomial(y.size, np.full(y.size, 1 / y.size))
    weighted = J48Classifier(min_num_obj=1, random_state=0).fit(X, y, sample_weight=counts)
    idx = np.repeat(np.arange(y.size), counts)
    duplicated = J48Classifier(min_num_obj=1, random_state=0).fit(X[idx], y[idx])
    assert weighted.get_n_leaves() == duplicated.get_n_leaves()
    np.testing.assert_allclose(weighted.predict_proba(X), duplicated.predict_proba(X))


@pytest.mark.parametrize("name", NAMES)
def test_fit_slc_and_non_contiguous_labels(name):
    X, y = MULTI
    labels = np.array([3, 7, 9, 20])[y]
    est = fit_slc(build(name), X, labels, sample_weight=np.ones(y.size))
    np.testing.assert_array_equal(est.classes_, [3, 7, 9, 20])
    assert set(est.predict(X)) <= {3, 7, 9, 20}


# ---------------------------------------------------------------------- J48
def test_add_errs_matches_weka_stats():
    # Stats.addErrs: exact base case, interpolation, normal approximation, high end, cf > 0.5
    assert add_errs(6, 0, 0.25) == pytest.approx(6 * (1 - 0.25 ** (1 / 6)))
    assert add_errs(1, 0, 0.25) == pytest.approx(0.75)
    z = 0.6744897501960817
    f = 1.5 / 16
    r = (f + z * z / 32 + z * math.sqrt(f / 16 - f * f / 16 + z * z / 1024)) / (1 + z * z / 16)
    assert add_errs(16, 1, 0.25) == pytest.approx(16 * r - 1)
    base = 10 * (1 - 0.25 ** 0.1)
    assert add_errs(10, 0.5, 0.25) == pytest.approx(base + 0.5 * (add_errs(10, 1, 0.25) - base))
    assert add_errs(4, 3.6, 0.25) == pytest.approx(0.4)
    assert add_errs(10, 3, 0.6) == 0.0
    assert add_errs(10, 3, 0.1) > add_errs(10, 3, 0.25)             # lower cf, more pessimistic


def test_unpruned_tree_is_larger_and_cf_controls_pruning():
    X, y = data(n=400, m=8, classes=3, seed=3, flip=0.1)
    unpruned = build("J48", {"c45_prune": ("u",)}, (2, "u")).fit(X, y)
    pruned = build("J48").fit(X, y)
    harsh = build("J48", {"c45_prune": (0.01,), "cf_c45": (0.01,)}, (2, 0.01)).fit(X, y)
    assert unpruned.get_n_leaves() > pruned.get_n_leaves() > harsh.get_n_leaves()


def test_collapse_switch():
    X, y = NOISY
    u = {"c45_prune": ("u",)}
    collapsed = build("J48", u, (2, "u")).fit(X, y)
    kept = build("J48", {**u, "ct": ("ct",)}, (2, "ct", "u")).fit(X, y)
    assert kept.get_n_leaves() > collapsed.get_n_leaves()
    # a collapsed tree has no subtree whose leaves make as many training errors as its root
    tree, counts = collapsed.tree_, collapsed.node_weights_
    errs = (counts.sum(axis=1) - counts.max(axis=1))[:, None].copy()
    own = errs[:, 0].copy()
    tree.accumulate(errs)
    inner = np.flatnonzero(tree.left != -1)
    assert np.all(errs[inner, 0] < own[inner] - 1e-3)


def test_mdl_correction_switch():
    X, y = data(n=400, m=10, classes=2, seed=5, flip=0.3)
    u = {"c45_prune": ("u",), "ct": ("ct",)}
    with_mdl = build("J48", u, (2, "ct", "u")).fit(X, y)
    without = build("J48", {**u, "umc": ("umc",)}, (2, "ct", "umc", "u")).fit(X, y)
    assert without.get_n_leaves() > with_mdl.get_n_leaves()


def test_min_num_obj():
    X, y = NOISY
    for mno in (1, 4, 16):
        est = build("J48", {"mno_c45": (mno,), "c45_prune": ("u",), "ct": ("ct",)}, (mno, "ct", "u")).fit(X, y)
        leaves = est.tree_.left == -1
        assert est.node_weights_[leaves].sum(axis=1).min() >= mno - 1e-9


def test_laplace_leaves():
    X, y = MULTI
    est = build("J48", {"ul": ("ul",)}, (2, "ul")).fit(X, y)
    counts, proba = est.node_weights_, est.node_proba_
    leaves = np.flatnonzero((est.tree_.left == -1) & (counts.sum(axis=1) > 0))
    expected = (counts[leaves] + 1) / (counts[leaves].sum(axis=1, keepdims=True) + 4)
    np.testing.assert_allclose(proba[leaves], expected)
    p = est.predict_proba(X)
    assert np.all((p > 0) & (p < 1))
    plain = build("J48").fit(X, y)
    np.testing.assert_array_equal(plain.predict(X), est.predict(X))  # same tree, same argmax
    assert np.any(plain.predict_proba(X) == 1.0)


# --- literal re-implementation of WEKA's C45PruneableClassifierTree (collapse, prune)
class _Ref:
    """One node of a J48 tree, with the Java code's recursion and its m_train rows."""

    def __init__(self, flat, node, X, y, w, k, rows):
        self.X, self.y, self.w, self.k = X, y, w, k
        self.feature, self.threshold = flat.feature[node], flat.threshold[node]
        self.leaf = flat.is_leaf(node)
        self.rows = rows
        self.sons = None
        if not self.leaf:
            go = X[rows, self.feature] <= self.threshold
            self.sons = [_Ref(flat, flat.left[node], X, y, w, k, rows[go]),
                         _Ref(flat, flat.right[node], X, y, w, k, rows[~go])]

    def dist(self, rows=None):
        rows = self.rows if rows is None else rows
        return np.bincount(self.y[rows], weights=self.w[rows], minlength=self.k)

    def split(self, rows):
        go = self.X[rows, self.feature] <= self.threshold
        return [rows[go], rows[~go]]

    def training_errors(self):
        if self.leaf:
            d = self.dist()
            return d.sum() - d.max()
        return sum(s.training_errors() for s in self.sons)

    def collapse(self):
        if not self.leaf:
            d = self.dist()
            if self.training_errors() >= d.sum() - d.max() - 1e-3:
                self.leaf, self.sons = True, None
            else:
                for s in self.sons:
                    s.collapse()

    def est(self, d, cf):
        return 0.0 if d.sum() == 0 else float(estimated_errors(d, cf)[0])

    def estimated_errors(self, cf):
        if self.leaf:
            return self.est(self.dist(), cf)
        return sum(s.estimated_errors(cf) for s in self.sons)

    def branch_errors(self, rows, cf):
        if self.leaf:
            return self.est(self.dist(rows), cf)
        return sum(s.branch_errors(r, cf) for s, r in zip(self.sons, self.split(rows)))

    def new_distribution(self, rows):
        self.rows = rows
        if not self.leaf:
            for s, r in zip(self.sons, self.split(rows)):
                s.new_distribution(r)

    def prune(self, cf, raising):
        if self.leaf:
            return
        for s in self.sons:
            s.prune(cf, raising)
        bags = [self.w[r].sum() for r in self.split(self.rows)]
        largest = 1 if bags[1] - bags[0] > 1e-6 else 0
        branch = self.sons[largest].branch_errors(self.rows, cf) if raising else np.inf
        leaf = self.est(self.dist(), cf)
        tree = self.estimated_errors(cf)
        if leaf <= tree + 0.1 + 1e-6 and leaf <= branch + 0.1 + 1e-6:
            self.leaf, self.sons = True, None
            return
        if branch <= tree + 0.1 + 1e-6:
            big = self.sons[largest]
            self.feature, self.threshold, self.leaf, self.sons = big.feature, big.threshold, big.leaf, big.sons
            self.new_distribution(self.rows)
            self.prune(cf, raising)

    def proba(self, x, parent=None):
        d = self.dist()
        own = d / d.sum() if d.sum() > 0 else parent
        if self.leaf:
            return own
        return self.sons[0 if x[self.feature] <= self.threshold else 1].proba(x, own)

    def n_leaves(self):
        return 1 if self.leaf else sum(s.n_leaves() for s in self.sons)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raising", [True, False])
def test_collapse_and_prune_match_weka_recursion(seed, raising):
    X, y = data(n=250, m=6, classes=3, seed=seed, flip=0.3)
    X = X.astype(np.float32)
    w = np.random.default_rng(seed).uniform(0.5, 1.5, size=y.size)
    cf = (0.25, 0.05, 0.6)[seed % 3]
    grown = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=seed).fit(X, y, w)
    flat = FlatTree.from_sklearn(grown.tree_)
    counts = flat.class_weights(X, y, w, 3)
    collapse(flat, counts)
    prune(flat, counts, X, y, w, 3, cf, raising)
    ref = _Ref(FlatTree.from_sklearn(grown.tree_), 0, X, y, w, 3, np.arange(y.size))
    ref.collapse()
    ref.prune(cf, raising)
    assert flat.n_leaves == ref.n_leaves()
    dist = flat.node_distributions(counts)
    Xt = data(n=120, m=6, classes=3, seed=seed + 100)[0].astype(np.float32)
    ours = dist[flat.route(Xt)]
    theirs = np.array([ref.proba(x) for x in Xt])
    np.testing.assert_allclose(ours, theirs)


def test_subtree_raising_changes_some_trees():
    differs = 0
    for seed in range(6):
        X, y = data(n=300, m=6, classes=3, seed=seed, flip=0.3)
        a = J48Classifier(confidence_factor=0.05, random_state=0).fit(X, y)
        b = J48Classifier(confidence_factor=0.05, subtree_raising=False, random_state=0).fit(X, y)
        differs += not np.array_equal(a.predict_proba(X), b.predict_proba(X))
    assert differs >= 1


# --- literal re-implementation of WEKA's C45Split acceptance for numeric attributes
def _c45split_valid(x, y, w, k, min_obj, mdl):
    order = np.argsort(x, kind="stable")
    x, y, w = x[order], y[order], w[order]
    total_dist = np.bincount(y, weights=w, minlength=k)
    total = total_dist.sum()
    min_split = 0.1 * total / k
    min_split = min_obj if min_split <= min_obj else min(min_split, 25.0)
    if x.size < 2 * min_split:
        return False

    def log_func(v):
        return 0.0 if v < 1e-6 else v * math.log(v) / math.log(2)

    old_ent = log_func(total) - sum(log_func(v) for v in total_dist)
    left = np.zeros(k)
    best, index, last = 0.0, 0, 0
    for nxt in range(1, x.size):
        if x[nxt - 1] + 1e-5 < x[nxt]:
            for i in range(last, nxt):
                left[y[i]] += w[i]
            right = total_dist - left
            if left.sum() - min_split > -1e-6 and right.sum() - min_split > -1e-6:
                new_ent = -sum(log_func(v) for v in np.concatenate([left, right])) \
                    + log_func(left.sum()) + log_func(right.sum())
                numerator = old_ent - new_ent
                gain = 0.0 if abs(numerator) < 1e-6 else numerator / total
                if gain - best > 1e-6:
                    best = gain
                index += 1
            last = nxt
    if index == 0:
        return False
    if mdl:
        best -= math.log2(index) / total
    return not (best - 0 < 1e-6)


@pytest.mark.parametrize("mdl", [True, False])
def test_split_test_matches_c45split(mdl):
    rng = np.random.default_rng(7)
    agree = []
    for trial in range(60):
        n = int(rng.integers(4, 40))
        k = int(rng.integers(2, 4))
        X = np.round(rng.normal(size=(n, 3)), int(rng.integers(0, 3))).astype(np.float32)
        y = rng.integers(0, k, size=n)
        if trial % 3 == 0:
            y = (X[:, 0] > 0).astype(int)
        w = np.ones(n) if trial % 2 else rng.uniform(0.5, 2.0, size=n)
        min_obj = float(rng.integers(1, 4))
        counts = np.bincount(y, weights=w, minlength=k)
        expected = (counts.sum() >= 2 * min_obj - 1e-6 and abs(counts.max() - counts.sum()) >= 1e-6
                    and any(_c45split_valid(X[:, j].astype(float), y, w, k, min_obj, mdl) for j in range(3)))
        got = node_is_splittable(X, y, w, k, min_obj, mdl, first=int(trial % 3))
        agree.append(got == expected)
    assert all(agree)
    assert True in agree


# ---------------------------------------------------------------------- REPTree
def test_stratified_folds_are_balanced_and_seeded():
    y = np.array([0] * 30 + [1] * 12 + [2] * 6)
    fold = stratified_folds(y, 3, np.random.RandomState(0))
    for f in range(3):
        np.testing.assert_array_equal(np.bincount(y[fold == f]), [10, 4, 2])
    np.testing.assert_array_equal(fold, stratified_folds(y, 3, np.random.RandomState(0)))
    assert not np.array_equal(fold, stratified_folds(y, 3, np.random.RandomState(1)))


def _ref_rep(flat, node, train, hold):
    """REPTree.Tree.reducedErrorPrune on nested calls; returns (hold-out errors, n leaves)."""
    pred = int(np.argmax(train[node]))
    own = hold[node].sum() - hold[node][pred]
    if flat.is_leaf(node):
        return own, 1
    (el, nl), (er, nr) = _ref_rep(flat, flat.left[node], train, hold), _ref_rep(flat, flat.right[node], train, hold)
    if el + er >= own:
        return own, 1
    return el + er, nl + nr


@pytest.mark.parametrize("seed", range(4))
def test_reduced_error_pruning_matches_weka_recursion(seed):
    X, y = data(n=300, m=6, classes=3, seed=seed, flip=0.3)
    X = X.astype(np.float32)
    w = np.ones(y.size)
    fold = stratified_folds(y, 3, np.random.RandomState(seed))
    grow, hold = np.flatnonzero(fold != 0), np.flatnonzero(fold == 0)
    grown = DecisionTreeClassifier(criterion="entropy", random_state=seed).fit(X[grow], y[grow])
    flat = FlatTree.from_sklearn(grown.tree_)
    train = flat.class_weights(X, y, w, 3, rows=grow)
    held = flat.class_weights(X, y, w, 3, rows=hold)
    _, expected_leaves = _ref_rep(flat, 0, train, held)
    reduced_error_prune(flat, train, held)
    assert flat.n_leaves == expected_leaves < grown.get_n_leaves()


def test_reptree_pruning_switch_and_backfitting():
    X, y = NOISY
    pruned = build("REPTree").fit(X, y)
    unpruned = build("REPTree", {"up": ("up",)}, ("up",)).fit(X, y)
    assert unpruned.get_n_leaves() > pruned.get_n_leaves()
    # back-fitting: the leaves' counts include the pruning fold, i.e. all rows
    assert pruned.node_weights_[0].sum() == pytest.approx(y.size)
    leaves = pruned.tree_.left == -1
    assert pruned.node_weights_[leaves].sum() == pytest.approx(y.size)


def test_reptree_min_weight_and_depth():
    X, y = MULTI
    est = build("REPTree", {"mw_rep": (6,), "up": ("up",), "md_rep": (3,)}, (6, "up", 3)).fit(X, y)
    assert est.get_depth() <= 3
    leaves = est.tree_.left == -1
    assert est.node_weights_[leaves].sum(axis=1).min() >= 6
    deep = build("REPTree", {"mw_rep": (6,), "up": ("up",)}, (6, "up")).fit(X, y)
    assert deep.get_depth() > 3


# ---------------------------------------------------------------------- RandomTree / RandomForest
def test_k_features_default():
    assert weka_k_features(103, 0) == 7                 # yeast
    assert weka_k_features(1500, 0) == 11
    assert weka_k_features(10, 32) == 10                # at most M
    assert weka_k_features(100, 5) == 5


def test_random_tree_unpruned_depth_and_min_weight():
    X, y = MULTI
    full = build("RandomTree").fit(X, y)
    assert np.mean(full.predict(X) == y) == 1.0          # unpruned, mw = 1: fits the training set
    shallow = build("RandomTree", {"md_rtree": (4,)}, (4,)).fit(X, y)
    assert shallow.get_depth() <= 4 < full.get_depth()
    heavy = build("RandomTree", {"mw_rtree": (10,)}, (10,)).fit(X, y)
    inner = heavy.tree_.left != -1
    assert heavy.node_weights_[inner].sum(axis=1).min() >= 20   # WEKA: split only if weight >= 2 M
    assert heavy.get_n_leaves() < full.get_n_leaves()


def test_random_tree_backfitting():
    X, y = MULTI
    est = build("RandomTree", {"nfbgt": (4,)}, (4,)).fit(X, y)
    fold = stratified_folds(y, 4, np.random.RandomState(0))
    # the distributions come from the held-out fold only (fold 1, a quarter of the rows)
    assert est.node_weights_[0].sum() == pytest.approx(np.sum(fold == 1))
    assert est.node_weights_[0].sum() == pytest.approx(y.size / 4, abs=4)
    with pytest.raises(ValueError):
        RandomTreeClassifier(num_folds=1).fit(X, y)


def test_random_forest_parameters():
    X, y = MULTI
    forest = build("RandomForest", {"nt": (9,), "md_rf": (3,)}, (9, 3)).fit(X, y)
    assert len(forest.forest_.estimators_) == 9
    assert forest.forest_.max_features == int(math.log2(15) + 1)
    assert max(t.get_depth() for t in forest.forest_.estimators_) <= 3
    assert forest.forest_.criterion == "entropy"
    assert WekaRandomForest(n_estimators=5, n_features=40, random_state=0).fit(X, y).forest_.max_features == 15


def test_decision_stump_is_one_split():
    X, y = MULTI
    stump = build("DecisionStump").fit(X, y)
    assert stump.get_depth() == 1 and stump.get_n_leaves() == 2


def test_constant_features_give_a_single_leaf():
    X = np.ones((40, 3))
    y = np.array([0, 1] * 20)
    for name in ("J48", "RandomTree", "REPTree"):
        est = build(name).fit(X, y)
        assert est.get_n_leaves() == 1
        np.testing.assert_allclose(est.predict_proba(X[:2]), 0.5)


# ---------------------------------------------------------------------- contract details and grammar
def test_unfitted_and_invalid_parameters():
    from sklearn.exceptions import NotFittedError
    X, y = BINARY
    for est in (J48Classifier(), REPTreeClassifier(), RandomTreeClassifier(), WekaRandomForest()):
        with pytest.raises(NotFittedError):
            est.predict(X)
    with pytest.raises(ValueError):
        J48Classifier(confidence_factor=0.0).fit(X, y)
    with pytest.raises(ValueError):
        J48Classifier().fit(X, y, sample_weight=-np.ones(y.size))


def test_trees_derived_from_the_large_grammar_build_and_fit():
    from ggp_automl.gp.binding import BoundGrammar, DatasetMeta
    from ggp_automl.gp.bnf_parser import load_grammar
    from ggp_automl.gp.generate import TreeGenerator
    from ggp_automl.spaces.compiler import algorithm_chain

    grammar = load_grammar(ROOT / "grammars" / "large.bnf")
    generator = TreeGenerator(BoundGrammar(grammar, DatasetMeta(14, 103, 2417)))
    rng = np.random.default_rng(0)
    X, y = data(n=120, m=8, classes=3, seed=2)
    seen = set()
    for i in range(40):
        steps, _ = algorithm_chain(generator.grow(rng, symbol="TREES"), grammar, random_state=i)
        (step,) = steps
        est = step.spec.build(step.params)
        if step.spec.name == "J48":
            assert est.unpruned == step.params.has("u")
            assert est.confidence_factor == (0.25 if est.unpruned else step.params.values["cf_c45"][0])
        if isinstance(est, WekaRandomForest):
            est.set_params(n_estimators=3)                  # the mapping is checked; keep it quick
        est.fit(X, y)
        assert np.allclose(est.predict_proba(X).sum(axis=1), 1.0)
        seen.add(step.spec.name)
    assert seen == set(NAMES)


def test_long_loops_honour_the_deadline():
    from ggp_automl.spaces.deadline import BudgetExceeded, set_deadline

    X, y = NOISY
    set_deadline(-1.0)
    try:
        with pytest.raises(BudgetExceeded):
            J48Classifier().fit(X, y)
    finally:
        set_deadline(None)
    J48Classifier().fit(X, y)

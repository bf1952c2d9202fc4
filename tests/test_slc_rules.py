"""Rule learners of the SLC level (spaces/slc/rules.py): JRip, PART, DecisionTable, OneR, ZeroR.

Every vectorised core is checked against a plain, loop-by-loop port of the WEKA code it
replaces (OneR buckets, C4.5 split choice, RIPPER antecedent choice, DecisionTable
leave-one-out merit), on small data with ties so that tie handling is exercised.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_classification

from ggp_automl.spaces.deadline import BudgetExceeded, set_deadline
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import REGISTRY
from ggp_automl.spaces.slc import rules  # noqa: F401  (registers the algorithms)
from ggp_automl.spaces.slc._rules_base import ColumnOrder
from ggp_automl.spaces.slc._rules_c45 import C45SplitSelector
from ggp_automl.spaces.slc._rules_oner import WekaOneR
from ggp_automl.spaces.slc._rules_part import WekaPART
from ggp_automl.spaces.slc._rules_ripper import WekaJRip, _best_antecedent, _Context
from ggp_automl.spaces.slc._rules_table import WekaDecisionTable, _SubsetScorer, weighted_auc
from ggp_automl.spaces.slc._rules_zeror import WekaZeroR

NAMES = ("JRip", "PART", "DecisionTable", "OneR", "ZeroR")

EXPLICIT = {
    "JRip": Params("JRip", values={"mtw": (3.0,), "cer": ("cer",), "up": ("up",), "o": (1,)},
                   tokens=("JRip", 3.0, "cer", "up", 1), random_state=0),
    "PART": Params("PART", values={"mno_part": (5,), "bs": ("bs",), "part_prune": ("rep", 4), "nr": (4,)},
                   tokens=("PART", 5, "bs", "rep", 4), random_state=0),
    "DecisionTable": Params(
        "DecisionTable", values={"em": ("rmse",), "uibk": ("uibk",), "sm": ("GreedyStepwise",), "crv": (3,)},
        tokens=("DecisionTable", "rmse", "uibk", "GreedyStepwise", 3), random_state=0),
    "OneR": Params("OneR", values={"mbs": (3,)}, tokens=("OneR", 3), random_state=0),
    "ZeroR": Params("ZeroR", tokens=("ZeroR",), random_state=0),
}


def defaults(name):
    return Params(name, tokens=(name,), random_state=0)


def build(p):
    return REGISTRY[p.name].build(p)


def data(n_classes, n=240, m=8, seed=0, ties=True):
    X, y = make_classification(n, m, n_informative=4, n_redundant=1, n_classes=n_classes,
                               n_clusters_per_class=1, class_sep=1.2, random_state=seed)
    if ties:  # rounded and binary columns, like one-hot encoded nominal features
        X[:, 0] = np.round(X[:, 0], 1)
        X[:, 1] = (X[:, 1] > 0).astype(float)
    return X, np.array(["a", "b", "c", "d"])[y]


# ---------------------------------------------------------------------------------------------
# registry and builders

def test_registered_as_slc():
    for name in NAMES:
        assert REGISTRY[name].kind == "slc"


def test_builder_mapping_explicit_and_defaults():
    j = build(EXPLICIT["JRip"])
    assert (j.min_weight, j.check_error_rate, j.use_pruning, j.optimizations) == (3.0, False, False, 1)
    j = build(defaults("JRip"))
    assert (j.min_weight, j.check_error_rate, j.use_pruning, j.optimizations) == (2.0, True, True, 2)
    p = build(EXPLICIT["PART"])
    assert (p.min_no_obj, p.binary_splits, p.reduced_error_pruning, p.num_folds) == (5, True, True, 4)
    p = build(defaults("PART"))
    assert (p.min_no_obj, p.binary_splits, p.reduced_error_pruning) == (2, False, False)
    d = build(EXPLICIT["DecisionTable"])
    assert (d.evaluation_measure, d.use_ibk, d.search, d.cv_folds) == ("rmse", True, "GreedyStepwise", 3)
    d = build(defaults("DecisionTable"))
    assert (d.evaluation_measure, d.use_ibk, d.search, d.cv_folds) == ("acc", False, "BestFirst", 1)
    assert build(EXPLICIT["OneR"]).min_bucket_size == 3
    assert build(defaults("OneR")).min_bucket_size == 6


# ---------------------------------------------------------------------------------------------
# the estimator contract, for every algorithm × {explicit, default} × {2, 3 classes}

CASES = [(name, kind) for name in NAMES for kind in ("explicit", "default")]


@pytest.mark.parametrize("name,kind", CASES)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_contract(name, kind, n_classes):
    p = EXPLICIT[name] if kind == "explicit" else defaults(name)
    est = build(p)
    X, y = data(n_classes, seed=n_classes)
    Xtr, ytr, Xte, yte = X[:180], y[:180], X[180:], y[180:]
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    est.fit(Xtr, ytr)
    assert list(est.classes_) == sorted(set(ytr))
    pred = est.predict(Xte)
    assert pred.shape == (60,) and set(pred) <= set(ytr)
    if name != "ZeroR":
        assert np.mean(pred == yte) > 1.0 / n_classes + 0.1
    if name == "OneR":
        assert not hasattr(est, "predict_proba")  # hard learner, as WEKA
    else:
        proba = est.predict_proba(Xte)
        assert proba.shape == (60, n_classes)
        assert np.all(proba >= 0) and np.all(proba <= 1)
        np.testing.assert_allclose(proba.sum(axis=1), 1.0)
        np.testing.assert_array_equal(est.classes_[proba.argmax(axis=1)], pred)
        again = clone(twin).fit(Xtr, ytr).predict_proba(Xte)  # deterministic for a fixed seed
        np.testing.assert_array_equal(proba, again)
    np.testing.assert_array_equal(clone(twin).fit(Xtr, ytr).predict(Xte), pred)


@pytest.mark.parametrize("name", ["JRip", "PART", "DecisionTable"])
def test_sample_weight_is_used(name):
    X, y = data(2, seed=5)
    est = build(defaults(name))
    base = est.fit(X, y).predict_proba(X)[:, 0].mean()
    w = np.where(y == "a", 20.0, 1.0)
    heavy = clone(est).fit(X, y, sample_weight=w).predict_proba(X)[:, 0].mean()
    assert heavy > base + 0.05  # up-weighting class "a" makes the model lean towards it


@pytest.mark.parametrize("name", NAMES)
def test_degenerate_inputs(name):
    X, y = data(2, n=40, seed=2)
    est = build(defaults(name))
    one = clone(est).fit(X, np.full(40, "z"))  # a single class (fit_slc normally intercepts this)
    assert set(one.predict(X)) == {"z"}
    narrow = clone(est).fit(X[:, :1], y)  # a single attribute
    assert narrow.predict(X[:, :1]).shape == (40,)
    rs = clone(est).set_params(random_state=np.random.RandomState(0)).fit(X, y)  # RandomState seeds
    assert rs.predict(X).shape == (40,)


def test_zeror_laplace_priors_with_weights():
    y = np.array([0, 0, 0, 1, 2, 2])
    w = np.array([1, 1, 1, 3, 0.5, 0.5])
    est = WekaZeroR().fit(np.zeros((6, 1)), y, sample_weight=w)
    np.testing.assert_allclose(est.class_prior_, np.array([4.0, 4.0, 2.0]) / 10.0)
    assert est.predict(np.zeros((2, 1))).tolist() == [0, 0]  # first of the tied maxima
    np.testing.assert_allclose(est.predict_proba(np.zeros((2, 1))), [[0.4, 0.4, 0.2]] * 2)


@pytest.mark.parametrize("name", ["JRip", "PART", "DecisionTable", "OneR"])
def test_deadline_is_checked(name):
    X, y = data(3, seed=1)
    set_deadline(-1.0)
    try:
        with pytest.raises(BudgetExceeded):
            build(defaults(name)).fit(X, y)
    finally:
        set_deadline(None)


# ---------------------------------------------------------------------------------------------
# OneR: the lockstep bucketing equals WEKA's row-by-row scan

def oner_reference(X, y, mbs):
    """weka.classifiers.rules.OneR.newNumericRule, line by line; best attribute first."""
    best = None
    for a in range(X.shape[1]):
        order = np.argsort(X[:, a], kind="stable")
        xs, ys = X[order, a], y[order]
        n, k = len(ys), int(y.max()) + 1
        classif, breaks, correct, i, cl = [0] * n, [0.0] * n, 0, 0, 0
        while i < n:
            counts = [0] * k
            while True:
                it = ys[i]
                i += 1
                counts[it] += 1
                if not (counts[it] < mbs and i < n):
                    break
            while i < n and ys[i] == it:
                counts[it] += 1
                i += 1
            while i < n and xs[i - 1] == xs[i]:
                counts[ys[i]] += 1
                i += 1
            for j in range(k):
                if counts[j] > counts[it]:
                    it = j
            if cl > 0:
                if counts[classif[cl - 1]] == counts[it]:
                    it = classif[cl - 1]
                if it == classif[cl - 1]:
                    cl -= 1
            correct += counts[it]
            classif[cl] = it
            if i < n:
                breaks[cl] = (xs[i - 1] + xs[i]) / 2
            cl += 1
        if best is None or correct > best[0]:
            best = (correct, a, classif[:cl], breaks[:cl - 1])
    return best


@pytest.mark.parametrize("mbs", [1, 3, 6, 20])
@pytest.mark.parametrize("n_classes", [2, 4])
def test_oner_matches_reference(mbs, n_classes):
    X, y = data(n_classes, n=150, seed=mbs)
    X = np.round(X, 1)  # many ties
    codes = np.unique(y, return_inverse=True)[1]
    correct, att, classif, breaks = oner_reference(X, codes, mbs)
    est = WekaOneR(min_bucket_size=mbs).fit(X, y)
    assert (est.correct_, est.attribute_) == (correct, att)
    assert est.classifications_.tolist() == classif
    np.testing.assert_allclose(est.breakpoints_, breaks)
    # prediction: bucket v = number of breakpoints <= x
    v = np.array([sum(x >= b for b in breaks) for x in X[:, att]])
    np.testing.assert_array_equal(est.predict(X), est.classes_[np.asarray(classif)[v]])


def test_oner_bucket_size_controls_granularity():
    X, y = data(2, n=300, seed=3, ties=False)
    fine = WekaOneR(min_bucket_size=1).fit(X, y)
    coarse = WekaOneR(min_bucket_size=30).fit(X, y)
    assert len(fine.breakpoints_) > len(coarse.breakpoints_)
    assert fine.correct_ >= coarse.correct_


# ---------------------------------------------------------------------------------------------
# PART: C4.5 split choice, decision-list semantics, pruning

def _lnf(x):
    return x * math.log(x) if x >= 1e-6 else 0.0


def c45_reference(X, codes, w, rows, k, mno, average_filter=True):
    """C45ModelSelection.selectModel + C45Split (numeric, MDL on), one attribute at a time."""
    dist = np.bincount(codes[rows], weights=w[rows], minlength=k)
    total = dist.sum()
    if total < 2 * mno or abs(total - dist.max()) < 1e-6:
        return None
    models = []
    for a in range(X.shape[1]):
        order = rows[np.argsort(X[rows, a], kind="stable")]
        xs = X[order, a]
        min_split = 0.1 * total / k
        min_split = mno if min_split <= mno else min(min_split, 25)
        if len(order) < 2 * min_split:
            models.append(None)
            continue
        old = (_lnf(total) - sum(_lnf(d) for d in dist)) / math.log(2)
        best_gain, best_p, n_index = 0.0, -1, 0
        for p in range(len(order) - 1):
            if not xs[p] + 1e-5 < xs[p + 1]:
                continue
            left = np.bincount(codes[order[:p + 1]], weights=w[order[:p + 1]], minlength=k)
            right = dist - left
            if left.sum() >= min_split - 1e-6 and right.sum() >= min_split - 1e-6:
                new = sum(_lnf(s.sum()) - sum(_lnf(c) for c in s) for s in (left, right)) / math.log(2)
                num = old - new
                gain = 0.0 if abs(num) < 1e-6 else num / total
                if gain - best_gain > 1e-6:
                    best_gain, best_p = gain, p
                n_index += 1
        if n_index == 0 or best_p < 0:
            models.append(None)
            continue
        gain = best_gain - math.log2(n_index) / total
        if gain <= 1e-6:
            models.append(None)
            continue
        nl = w[order[:best_p + 1]].sum()
        split_ent = (_lnf(total) - _lnf(nl) - _lnf(total - nl)) / math.log(2)
        ratio = 0.0 if abs(split_ent) < 1e-6 else gain / (split_ent / total)
        thr = (xs[best_p] + xs[best_p + 1]) / 2
        models.append((gain, ratio, thr))
    valid = [m for m in models if m is not None]
    if not valid:
        return None
    avg = sum(m[0] for m in valid) / len(valid)
    best, best_ratio = None, 0.0
    for a, m in enumerate(models):
        if m is not None and (m[0] >= avg - 1e-3 or not average_filter) and m[1] - best_ratio > 1e-6:
            best, best_ratio = a, m[1]
    if best is None:
        return None
    u = np.unique(X[:, best])
    return best, float(u[u <= models[best][2] + 1e-6].max())


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("weighted", [False, True])
def test_c45_split_matches_reference(n_classes, weighted):
    found = 0
    for seed in range(8):
        X, y = data(n_classes, n=120, seed=seed)
        rng = np.random.default_rng(seed)
        X[:, 2] = np.round(X[:, 2], 1) + rng.uniform(0, 1e-6, len(y))  # gaps below C4.5's 1e-5
        codes = np.unique(y, return_inverse=True)[1]
        w = rng.uniform(0.5, 2.0, size=len(y)) if weighted else np.ones(len(y))
        sel = C45SplitSelector(X, codes, w, n_classes, 2, ColumnOrder(X))
        for rows in (np.arange(120), np.sort(rng.choice(120, 60, replace=False)),
                     np.sort(rng.choice(120, 30, replace=False))):
            got = sel.select(rows)
            want = c45_reference(X, codes, w, rows, n_classes, 2)
            if want is None:
                assert got is None
            else:
                found += 1
                assert (got.attribute, got.threshold) == pytest.approx(want)
    assert found > 12


def test_c45_average_gain_filter():
    """A pure tail has the best gain ratio but a below-average gain: C4.5 must not pick it."""
    filtered = 0
    for seed in range(20):
        rng = np.random.default_rng(seed)
        y = rng.integers(0, 2, 120)
        X = rng.normal(size=(120, 4))
        X[:, :2] += y[:, None] * rng.uniform(0.8, 1.6, 2)
        tail = rng.choice(np.flatnonzero(y == 0), rng.integers(12, 28), replace=False)
        X[tail, 2] = 5 + rng.random(tail.size)
        w = np.ones(120)
        got = C45SplitSelector(X, y, w, 2, 2, ColumnOrder(X)).select(np.arange(120))
        want = c45_reference(X, y, w, np.arange(120), 2, 2)
        assert (got.attribute, got.threshold) == pytest.approx(want)
        filtered += want != c45_reference(X, y, w, np.arange(120), 2, 2, average_filter=False)
    assert filtered > 0


def _first_cover_distributions(est_rules, covers, X, codes, k):
    """Class counts of the training rows, grouped by the first rule that covers them."""
    free = np.ones(len(codes), dtype=bool)
    out = []
    for rule in est_rules:
        hit = free & covers(rule, X)
        out.append(np.bincount(codes[hit], minlength=k))
        free &= ~hit
    return out


def test_part_distributions_are_first_covering_rule_counts():
    X, y = data(3, n=200, seed=4)
    codes = np.unique(y, return_inverse=True)[1]
    est = WekaPART().fit(X, y)  # ebp: every row is grow data
    assert len(est.rules_[-1]) == 0  # the list ends with a default rule

    def covers(conds, X):
        m = np.ones(len(X), dtype=bool)
        for a, t, right in conds:
            m &= (X[:, a] > t) if right else (X[:, a] <= t)
        return m

    counts = _first_cover_distributions(est.rules_, covers, X, codes, 3)
    for c, dist in zip(counts, est.rule_distributions_):
        np.testing.assert_allclose(dist, c / c.sum())


def test_part_pruning_options_change_the_list():
    X, y = data(3, n=300, seed=6)
    y = y.copy()
    y[::7] = "a"  # label noise, so that pruning matters
    ebp = WekaPART().fit(X, y)
    rep = WekaPART(reduced_error_pruning=True, num_folds=3, random_state=0).fit(X, y)
    big = WekaPART(min_no_obj=25).fit(X, y)
    assert len(big.rules_) < len(ebp.rules_)
    assert [r for r in rep.rules_] != [r for r in ebp.rules_]


# ---------------------------------------------------------------------------------------------
# JRip: antecedent choice, distributions, switches

def antecedent_reference(X, codes, w, rows, cls, def_ac_rt):
    """NumericAntd.splitData over each attribute in turn; the first strictly best wins."""
    best = (0.0, None)
    for a in range(X.shape[1]):
        att_best = (0.0, None)
        for v in np.unique(X[rows, a]):
            out = []
            for ge in (False, True):
                cov = rows[(X[rows, a] >= v) if ge else (X[rows, a] <= v)]
                t, p = w[cov].sum(), w[cov][codes[cov] == cls].sum()
                out.append((p * (math.log2((p + 1) / (t + 1)) - math.log2(def_ac_rt)), ge, p, t))
            g = out[0] if out[0][0] > out[1][0] else out[1]
            if g[0] > att_best[0]:
                att_best = (g[0], (a, float(v), g[1], g[2], g[3]))
        if att_best[0] > best[0]:
            best = att_best
    return best[1]


@pytest.mark.parametrize("weights", ["unit", "integer", "real"])
def test_jrip_antecedent_matches_reference(weights):
    X, y = data(2, n=90, m=5, seed=7)
    X = np.round(X)  # ties everywhere: both bags of a value include the whole tied group
    codes = np.unique(y, return_inverse=True)[1]
    rng = np.random.default_rng(1)
    w = {"unit": np.ones(len(y)), "integer": rng.integers(1, 4, len(y)).astype(float),
         "real": rng.uniform(0.2, 3.0, len(y))}[weights]
    ctx = _Context(X, codes, w, 2, ColumnOrder(X), 100.0, 2.0, np.random.default_rng(0))
    rows = np.arange(len(y))
    for cls in (0, 1):
        for rt in (0.3, 0.5):
            got = _best_antecedent(ctx, rows, cls, rt)
            want = antecedent_reference(X, codes, w, rows, cls, rt)
            assert got[:3] == want[:3]
            assert got[3:] == pytest.approx(want[3:])


def _rule_covers(rule, X):
    att, thr, ge = rule
    m = np.ones(len(X), dtype=bool)
    for a, t, g in zip(att, thr, ge):
        m &= (X[:, a] >= t) if g else (X[:, a] <= t)
    return m


@pytest.mark.parametrize("pruning", [True, False])
def test_jrip_distributions_are_first_covering_rule_counts(pruning):
    X, y = data(3, n=240, seed=8)
    codes = np.unique(y, return_inverse=True)[1]
    est = WekaJRip(use_pruning=pruning, random_state=0).fit(X, y)
    assert len(est.rules_[-1][0]) == 0  # default rule last, for the most frequent class
    counts = _first_cover_distributions(est.rules_, _rule_covers, X, codes, 3)
    for c, dist in zip(counts, est.rule_distributions_):
        if c.sum() > 0:
            np.testing.assert_allclose(dist, c / c.sum())
    # classes are handled from the least to the most frequent
    freq = np.bincount(codes)
    rank = np.argsort(np.argsort(freq, kind="stable"))
    ranks = [rank[list(est.classes_).index(c)] for c in est.rule_classes_]
    assert ranks == sorted(ranks)


def test_jrip_switches():
    X, y = data(2, n=400, seed=9, ties=False)
    y = y.copy()
    flip = np.random.default_rng(0).random(len(y)) < 0.15
    y[flip] = np.where(y[flip] == "a", "b", "a")  # label noise
    pruned = WekaJRip(random_state=0).fit(X, y)
    unpruned = WekaJRip(use_pruning=False, random_state=0).fit(X, y)

    def n_conditions(est):
        return sum(len(r[0]) for r in est.rules_)

    assert n_conditions(unpruned) > n_conditions(pruned)  # -P: no pruning gives longer rules
    loose = WekaJRip(use_pruning=False, min_weight=1.0, random_state=0).fit(X, y)
    strict = WekaJRip(use_pruning=False, min_weight=5.0, random_state=0).fit(X, y)
    assert n_conditions(loose) > n_conditions(strict)  # -N: min. positive weight per condition
    runs = [WekaJRip(optimizations=o, random_state=0).fit(X, y).rules_ for o in (1, 3)]
    assert len(runs[0]) != len(runs[1]) or any(
        not np.array_equal(a[1], b[1]) for a, b in zip(*runs))  # -O: optimisation runs matter


# ---------------------------------------------------------------------------------------------
# DecisionTable: merit from counts equals a row-by-row leave-one-out; table lookup; IB1

def loo_reference(cells, codes, w, k, measure):
    prior_counts = 1.0 + np.bincount(codes, weights=w, minlength=k)
    n = len(codes)
    dists = []
    for i in range(n):
        same = cells == cells[i]
        d = np.bincount(codes[same], weights=w[same], minlength=k)
        d[codes[i]] -= w[i]
        pri = prior_counts.copy()
        pri[codes[i]] -= w[i]
        dists.append(d / d.sum() if np.any(d > 1 + 1e-6) else pri / pri.sum())
    D = np.array(dists)
    T = np.eye(k)[codes]
    if measure == "acc":
        return 100 * np.sum(w * (D.argmax(1) == codes)) / w.sum()
    if measure == "rmse":
        return -math.sqrt(np.sum(w * ((D - T) ** 2).sum(1) / k) / w.sum())
    if measure == "mae":
        return -np.sum(w * np.abs(D - T).sum(1) / k) / w.sum()
    merit = 0.0
    for j in range(k):
        pos = codes == j
        sp, sn = D[pos, j], D[~pos, j]
        pairs = (sp[:, None] > sn[None, :]) + 0.5 * (sp[:, None] == sn[None, :])
        merit += prior_counts[j] / prior_counts.sum() * (
            (w[pos][:, None] * w[~pos][None, :] * pairs).sum() / (w[pos].sum() * w[~pos].sum()))
    return merit


@pytest.mark.parametrize("measure", ["acc", "rmse", "mae", "auc"])
@pytest.mark.parametrize("weighted", [False, True])
def test_table_loo_merit_matches_reference(measure, weighted):
    rng = np.random.default_rng(3)
    n, k = 80, 3
    codes = rng.integers(0, k, n)
    w = rng.uniform(0.5, 2.0, n) if weighted else np.ones(n)
    keys = np.stack([rng.integers(0, c, n) for c in (1, 3, 6, 20)], axis=1)
    scorer = _SubsetScorer(codes, w, k, measure, None, 1)
    got = scorer.merits(keys)
    want = [loo_reference(keys[:, j], codes, w, k, measure) for j in range(keys.shape[1])]
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_weighted_auc_ties():
    s = np.array([[0.1], [0.4], [0.4], [0.8]])
    pos = np.array([False, True, False, True])
    assert weighted_auc(s, pos, np.ones(4))[0] == pytest.approx((1 + 0.5 + 1 + 1) / 4)  # tie = 1/2


def test_table_unmatched_rows_priors_or_ib1():
    X, y = data(3, n=240, seed=10)
    plain = WekaDecisionTable().fit(X, y)
    ibk = WekaDecisionTable(use_ibk=True).fit(X, y)
    assert plain.selected_.size > 0
    np.testing.assert_array_equal(plain.selected_, ibk.selected_)
    # rows far outside the training range fall in unseen cells (first/last bin combinations)
    probe = np.tile(X.min(axis=0) - 5, (2, 1))
    probe[1, plain.selected_[0]] = X[:, plain.selected_[0]].max() + 5
    from ggp_automl.spaces.slc._mdl import discretise
    keys = discretise(probe, plain.cut_points_)[:, plain.selected_]
    unseen = ~(keys[:, None, :] == plain.cells_[None]).all(axis=2).any(axis=1)
    assert unseen.any()
    np.testing.assert_allclose(plain.predict_proba(probe)[unseen],
                               np.tile(plain.class_prior_, (unseen.sum(), 1)))
    # IB1: all cells at the minimum Hamming distance vote, plus 1/N per class
    d = (keys[unseen][:, None, :] != ibk.cells_[None]).sum(axis=2)
    votes = (d == d.min(axis=1, keepdims=True)) @ ibk.cell_counts_ + 1.0 / len(y)
    np.testing.assert_allclose(ibk.predict_proba(probe)[unseen], votes / votes.sum(axis=1, keepdims=True))
    # matched rows: the normalised counts of their cell
    inside = plain.predict_proba(X[:5])
    cell = [np.flatnonzero((plain.cells_ == r).all(axis=1))[0]
            for r in discretise(X[:5], plain.cut_points_)[:, plain.selected_]]
    counts = plain.cell_counts_[cell]
    np.testing.assert_allclose(inside, counts / counts.sum(axis=1, keepdims=True))


def test_table_search_and_folds_options():
    X, y = data(3, n=240, seed=11)
    for kw in ({"search": "GreedyStepwise"}, {"cv_folds": 2}, {"cv_folds": 4}, {"evaluation_measure": "auc"}):
        est = WekaDecisionTable(random_state=0, **kw).fit(X, y)
        assert est.selected_.size >= 1
        assert np.mean(est.predict(X) == y) > 0.6
    with pytest.raises(ValueError):
        WekaDecisionTable(evaluation_measure="f1").fit(X, y)


def test_jrip_mdl_keeps_signal_and_rejects_noise():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 10))
    y = (X[:, 3] > 0.2).astype(int)
    est = WekaJRip(random_state=0).fit(X, y)
    assert len(est.rules_) == 2
    assert est.rules_[0][0].tolist() == [3] and est.rules_[0][2].tolist() == [True]
    assert 0.2 < est.rules_[0][1][0] == X[X[:, 3] > 0.2, 3].min()  # "x >= v" at a training value
    noise = rng.integers(0, 2, 300)
    pruned = WekaJRip(random_state=0).fit(X, noise)
    unpruned = WekaJRip(use_pruning=False, random_state=0).fit(X, noise)
    assert len(pruned.rules_) <= 4 < len(unpruned.rules_)


def test_jrip_error_rate_check_changes_rules():
    differs = 0
    for seed in range(4):
        X, y = data(3, n=300, seed=seed)
        rng = np.random.default_rng(seed)
        flip = rng.random(300) < 0.3
        y = y.copy()
        y[flip] = rng.choice(["a", "b", "c"], flip.sum())
        a = WekaJRip(random_state=0).fit(X, y).rules_
        b = WekaJRip(check_error_rate=False, random_state=0).fit(X, y).rules_
        differs += len(a) != len(b) or any(not np.array_equal(r[1], s[1]) for r, s in zip(a, b))
    assert differs > 0


def test_mdl_discretisation():
    from ggp_automl.spaces.slc._mdl import discretise, mdl_cut_points
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 10, 400)
    y = (x > 6.3).astype(int)
    cuts = mdl_cut_points(x, y, 2, np.ones(400))
    assert cuts.size == 1 and x[x <= 6.3].max() < cuts[0] < x[x > 6.3].min()
    np.testing.assert_array_equal(discretise(x[:, None], [cuts])[:, 0], y)
    assert mdl_cut_points(x, rng.integers(0, 2, 400), 2, np.ones(400)).size == 0  # noise: no cut
    y3 = np.digitize(x, [3.0, 6.0])  # two boundaries, found by the recursion
    assert mdl_cut_points(x, y3, 3, np.ones(400)).size == 2

"""scikit-learn's estimator checks on every single-label algorithm of the registry, and the
hyper-parameter ranges the PBIL-Auto-Ens grammar gives them.

Part 1 runs ``parametrize_with_checks`` on every ``slc`` and ``meta-slc`` of the registry,
enumerated at import, so an algorithm registered later is checked too. Each estimator is
built by its registry builder from an empty tree, i.e. with the defaults the search uses;
:data:`FEWER_MEMBERS` only shortens the run. Meta-SLCs wrap :data:`META_BASE`, NaiveBayes:
cheap, deterministic, probabilistic, weight-aware and itself passing every check, so a
failure is the meta-learner's own. :data:`EXPECTED_FAILURES` lists the checks an algorithm
cannot pass without giving up its WEKA semantics, each with its reason; the marks are
strict, so an entry that starts passing fails here and must be removed.

Part 2 checks the configurations the PBIL-Auto-Ens grammar reaches: J48's confidence above
0.5, RandomTree's ``-U`` and its ranges, the searched seeds, RandomForest's ranges, and a
MultilayerPerceptron at momentum and learning rate 1.0.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.utils.estimator_checks import parametrize_with_checks

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import load_all
from ggp_automl.spaces.slc._tree_c45 import add_errs
from ggp_automl.spaces.slc.functions import NetworkDiverged, WekaMultilayerPerceptron

REGISTRY = load_all()
KINDS = ("slc", "meta-slc")
#: the base classifier every meta-SLC wraps here
META_BASE = "NaiveBayes"
#: smaller ensembles where the default size only makes the checks slower
FEWER_MEMBERS = {"RandomForest": {"nt": (10,)}}

_WEIGHTS = "check_sample_weight_equivalence_on_dense_data"
_BOOTSTRAP = ("bootstrap bags are drawn over rows with probability ∝ weight: a weight-k row and k "
              "copies of it give different bags, equal only in distribution (scikit-learn marks its "
              "own RandomForest and Bagging the same way)")

#: algorithm → {check: why it cannot pass without giving up WEKA's semantics}
EXPECTED_FAILURES = {
    "DecisionStump": {
        "check_classifiers_train": "one split cannot separate the check's three blobs (training "
        "accuracy at most 2/3 < 0.83): WEKA's DecisionStump is a single split by design, and the "
        "estimator is scikit-learn's own DecisionTreeClassifier, so no poor_score tag of ours"},
    "RandomSubSpace": {
        "check_classifiers_train": "the check's data have 2 attributes and the default subspace "
        "(sss = 0.5) gives every member one of them: an average of one-attribute models stays "
        "below 0.83 training accuracy on the three blobs"},
    "J48": {_WEIGHTS: "weights are rescaled to sum to the number of rows, so that -M and C4.5's "
            "error counts do not depend on their scale (tests/test_slc_trees.py::"
            "test_weights_are_scale_free) — scale-free weights cannot equal repeated rows — and "
            "C45Split's minimum split counts rows, as in WEKA"},
    "REPTree": {_WEIGHTS: "the pruning fold is dealt over rows (WEKA's stratified folds): a weight-k "
                "row lands in one fold, its k copies in several; weights are also rescaled as J48's"},
    "RandomForest": {_WEIGHTS: _BOOTSTRAP},
    "Bagging": {_WEIGHTS: _BOOTSTRAP},
    "JRip": {_WEIGHTS: "RIPPER grows and prunes each rule on a random stratified split of the rows "
             "(WEKA -F 3): a weight-k row lands in one part, its k copies in both"},
    "DecisionTable": {_WEIGHTS: "attribute subsets are scored by leave-one-out over rows (WEKA -X 1): "
                      "holding out a weight-k row removes all its weight, holding out one of k "
                      "copies removes one"},
    "MultilayerPerceptron": {_WEIGHTS: "training visits the rows once per epoch in a shuffled order "
                             "and in mini-batches: k copies are k updates at different times, a "
                             "weight-k row one update scaled by k"},
    "KNN": {_WEIGHTS: "WEKA IBk adds 1/(number of training rows) to every class before the weighted "
            "votes (tests/test_slc_lazy_bayes.py::test_ibk_distribution_matches_weka_formula), and "
            "a zero-weight row still takes a neighbour's place"},
    "BayesNet": {_WEIGHTS: "WEKA scores network structures on unweighted counts "
                 "(calcNodeScorePlain) and its MDL discretisation counts rows"},
    "ASC": {_WEIGHTS: "CfsSubsetEval's symmetric uncertainties come from unweighted contingency "
            "tables (WEKA), so the selected attributes depend on row counts"},
    "Stacking": {_WEIGHTS: "the level-1 data come from cross-validation folds dealt over rows "
                 "(WEKA -X): a weight-k row sits in one fold, its k copies in several"},
}


def build(name: str, values: dict | None = None, random_state: int = 0):
    """The estimator the registry builds for ``name`` (a meta-SLC around ``META_BASE``)."""
    spec = REGISTRY[name]
    p = Params(name, values=values or {}, random_state=random_state)
    if spec.kind == "slc":
        return spec.build(p)
    return spec.build(p, REGISTRY[META_BASE].build(Params(META_BASE, random_state=random_state)))


ALGORITHMS = sorted(name for name, spec in REGISTRY.items() if spec.kind in KINDS)
ESTIMATORS = {name: build(name, FEWER_MEMBERS.get(name)) for name in ALGORITHMS}
_NAME_OF = {id(est): name for name, est in ESTIMATORS.items()}


def _expected_failures(estimator) -> dict[str, str]:
    return EXPECTED_FAILURES.get(_NAME_OF[id(estimator)], {})


pytestmark = pytest.mark.usefixtures("one_thread", "no_deadline")


# ------------------------------------------------------------ part 1: scikit-learn's checks
@parametrize_with_checks(list(ESTIMATORS.values()), expected_failed_checks=_expected_failures,
                         xfail_strict=True)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def test_every_algorithm_is_checked_and_every_expectation_is_one():
    kinds = [REGISTRY[name].kind for name in ALGORITHMS]
    assert kinds.count("slc") >= 22 and kinds.count("meta-slc") >= 6   # the thesis's 22 + 6
    assert set(EXPECTED_FAILURES) <= set(ALGORITHMS)


# ------------------------------------------------- part 2: ranges of the PBIL-Auto-Ens grammar
def _data(n: int = 120, m: int = 8, k: int = 3, seed: int = 0):
    return make_classification(n_samples=n, n_features=m, n_informative=5, n_redundant=1,
                               n_classes=k, n_clusters_per_class=1, flip_y=0.1, random_state=seed)


def _assert_distributions(proba: np.ndarray, n: int, k: int) -> None:
    assert proba.shape == (n, k) and np.all(np.isfinite(proba)) and np.all(proba >= 0)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)


def test_j48_confidence_above_half_adds_no_errors():
    X, y = _data(seed=1)
    assert np.all(add_errs(np.array([10.0, 3.0]), np.array([2.0, 0.0]), 0.6) == 0.0)
    fitted = {cf: build("J48", {"cf_c45": (cf,)}).fit(X, y) for cf in (0.05, 0.25, 0.5, 0.51, 1.0, 5.0)}
    for est in fitted.values():
        _assert_distributions(est.predict_proba(X), len(y), 3)
    # above 0.5 the estimates are the training errors, whatever the value (WEKA's Stats.addErrs)
    for cf in (1.0, 5.0):
        np.testing.assert_array_equal(fitted[cf].predict_proba(X), fitted[0.51].predict_proba(X))
    assert fitted[0.51].get_n_leaves() >= fitted[0.25].get_n_leaves() >= fitted[0.05].get_n_leaves()


@pytest.mark.parametrize("n_features, max_depth, folds",
                         list(itertools.product((0, 1, 5, 32), (0, 1, 20), (0, 2, 5))))
def test_random_tree_ranges(n_features, max_depth, folds):
    X, y = _data()
    est = build("RandomTree", {"nf_rtree": (n_features,), "md_rtree": (max_depth,), "nfbgt": (folds,)})
    est.fit(X, y)
    _assert_distributions(est.predict_proba(X), len(y), 3)
    assert max_depth == 0 or est.get_depth() <= max_depth


def test_random_tree_allows_unclassified_instances():
    X, y = _data(n=300, m=10, seed=2)
    values = {"nfbgt": (3,), "md_rtree": (0,)}
    plain = build("RandomTree", values).fit(X, y)
    unclassified = build("RandomTree", {**values, "ua_rtree": ("ua",)}).fit(X, y)
    assert not plain.allow_unclassified and unclassified.allow_unclassified
    Xt, _ = _data(n=300, m=10, seed=3)
    p, u = plain.predict_proba(Xt), unclassified.predict_proba(Xt)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    empty = u.sum(axis=1) == 0          # rows reaching a leaf without back-fitted weight
    assert empty.any() and not empty.all()
    np.testing.assert_allclose(u[~empty], p[~empty])   # the same tree elsewhere
    assert set(unclassified.predict(Xt[empty])) == {unclassified.classes_[0]}


@pytest.mark.parametrize("name, rule", [("RandomCommittee", "s_rc"), ("AdaBoostM1", "s_ada"),
                                        ("Bagging", "s_bagging"), ("MultilayerPerceptron", "s_mlp")])
def test_seeds_are_searched_hyper_parameters(name, rule):
    assert build(name, random_state=4).random_state == 4                  # no seed rule: the run's
    assert build(name, {rule: (17,)}, random_state=4).random_state == 17


@pytest.mark.parametrize("n_features, max_depth", [(1, 1), (32, 20), (1, 20), (32, 1)])
def test_random_forest_ranges(n_features, max_depth):
    X, y = _data()
    est = build("RandomForest", {"nt": (5,), "nf_rf": (n_features,), "md_rf": (max_depth,)}).fit(X, y)
    _assert_distributions(est.predict_proba(X), len(y), 3)
    assert max(tree.get_depth() for tree in est.forest_.estimators_) <= max_depth


@pytest.mark.parametrize("learning_rate, momentum", [(0.1, 1.0), (1.0, 1.0), (1.0, 0.1)])
def test_mlp_extreme_rates_give_distributions_or_fail_loudly(learning_rate, momentum):
    X, y = _data(n=200, m=20, k=4, seed=5)
    X = X * 100.0                       # wide inputs drive momentum 1.0 into saturation fast
    est = build("MultilayerPerceptron", {"lr": (learning_rate,), "m": (momentum,)})
    try:
        est.fit(X, y)
    except NetworkDiverged:             # a ValueError: the search records a failed candidate
        return
    _assert_distributions(est.predict_proba(X), len(y), 4)


def test_mlp_saturated_outputs_fall_back_to_zero_r():
    X, y = _data(n=200, m=20, k=4, seed=5)
    est = build("MultilayerPerceptron", {"lr": (1.0,), "m": (1.0,)}).fit(X * 100.0, y)
    est.layers_[-1][:] = -100.0         # every output below WEKA's sigmoid clamp
    counts = np.bincount(y, minlength=4) + 1.0
    np.testing.assert_allclose(est.predict_proba(X), np.tile(counts / counts.sum(), (len(y), 1)))


def test_mlp_divergence_is_a_value_error():
    X, y = _data(n=40, seed=6)
    with pytest.raises(ValueError, match="diverge"):
        WekaMultilayerPerceptron(learning_rate=1e40, epochs=1, reset=False).fit(X, y)

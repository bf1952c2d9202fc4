"""grammars/ensembles.bnf (the PBIL-Auto-Ens-v2 space): check, sample, species, every algorithm, every
search method, and GrammarAutoMLClassifier as a scikit-learn estimator."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from ggp_automl.evaluation.candidate import Split
from ggp_automl.evaluation.engine import evaluate_all
from ggp_automl.search.run import search
from ggp_automl.evaluation.default_data import load_default
from ggp_automl.evaluation.isolation import Limits
from ggp_automl.evaluation.task import SingleLabel
from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.search.automl import GrammarAutoMLClassifier
from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.search import RunConfig
from ggp_automl.search.run import grammar_task, load_run_data
from ggp_automl.gp.species import make_species
from ggp_automl.spaces.compiler import compile_tree
from ggp_automl.spaces.grammar_check import check_against_registry

from .conftest import GRAMMARS, run_config
from .test_search import FakeEngine, _loop

ENSEMBLES = GRAMMARS / "ensembles.bnf"
META = DatasetMeta(3, 8, 120)
ENSEMBLE_TYPES = ("RandomCommittee", "AdaBoostM1", "Bagging", "RandomForest", "Stacking", "Vote")
BASES = ("BayesNet", "NaiveBayes", "MultilayerPerceptron", "SMO", "KNN", "KStar", "J48", "DecisionTable",
         "RandomTree")


@pytest.fixture(scope="module")
def ensembles():
    return load_grammar(ENSEMBLES)


@pytest.fixture(scope="module")
def small_data():
    X, y = load_default("singlelabel")
    task = SingleLabel(("c0", "c1", "c2"))
    rows = np.random.default_rng(0).permutation(len(y))
    learn, valid = rows[:120], rows[120:180]
    return Split(X[learn][:, :8], y[learn], X[valid][:, :8], y[valid], (), task)


def test_the_space_is_the_papers(ensembles):
    assert check_against_registry(ensembles) == [] and grammar_task(ensembles) == "singlelabel"
    # 6 ensemble types x 9 base classifiers + RandomForest (no base): the paper's levels 1 and 3
    assert ensembles.analysis.combinations == 6 * 9 + 1
    level3 = [r for r in ensembles if r.name.startswith("base_")]
    assert len(level3) == 6 and all(len(r.alternatives) == 9 for r in level3)
    assert len(ensembles["Start"].alternatives) == 7
    grids = {r.name: r.alternatives[0].items[0] for r in ensembles if r.name in ("cf_c45", "g", "exp", "sig")}
    assert {n: (s.lo.value, s.hi.value, s.step) for n, s in grids.items()} == {
        "cf_c45": (0.05, 5.0, 0.05), "g": (0.001, 1.0, 0.001), "exp": (0.2, 5.0, 0.1), "sig": (0.1, 10.0, 0.1)}


def test_every_algorithm_combination_at_its_defaults_fits(ensembles, small_data):
    """Species 1's trees are the 55 algorithm combinations with every hyper-parameter at its default."""
    species1 = make_species(ensembles, 1)
    generator = TreeGenerator(species1.bind(META))
    rng = np.random.default_rng(0)
    seen = {}
    for _ in range(3000):
        tree = generator.grow(rng)
        seen.setdefault(tree.phenotype, tree)
        if len(seen) == 55:
            break
    assert len(seen) == 55
    names = {w for p in seen for w in p.split()}
    assert set(ENSEMBLE_TYPES) | set(BASES) <= names
    results = evaluate_all(list(seen.values()), species1, small_data, Limits(timeout=60), fitness="accuracy",
                           workers=2)
    failed = [(r.phenotype, r.status, r.reason[:100]) for r in results if not r.ok]
    assert not failed
    assert np.mean([r.fitness for r in results]) > 0.5  # three classes: 0.33 by chance


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_random_configurations_of_the_full_space_work(ensembles, small_data):
    generator = TreeGenerator(ensembles.bind(META))
    trees = [generator.grow(np.random.default_rng(seed)) for seed in range(24)]
    results = evaluate_all(trees, ensembles, small_data, Limits(timeout=20), fitness="accuracy", workers=2)
    errors = [(r.phenotype, r.reason[:160]) for r in results if r.status not in ("ok", "timeout")]
    assert not errors


@pytest.mark.parametrize("method", ["ggp", "spggp", "random", "beam", "pbil"])
def test_every_search_method_searches_the_space(ensembles, method):
    data = load_run_data(None, task="singlelabel")
    config = run_config(method=method, population=16, species_size=2, batch_size=16, max_generations=3,
                       budget_seconds=3600, seed=1, method_params={"population": 16} if method == "pbil" else {})
    trees = []

    class Recording(FakeEngine):
        def _run(self, tree, split_key, timeout):
            trees.append(tree)
            return super()._run(tree, split_key, timeout)

    loop = _loop(config, ensembles, data, Recording())
    search(loop)
    assert len(loop.history) == 3 and len(trees) >= 16
    for tree in trees:  # every candidate (species trees included) compiles to a single-label model
        compile_tree(tree, ensembles, task=data.train.task)


# -- the estimator -----------------------------------------------------------------------------------

TINY = GRAMMARS.parent / "tests" / "data" / "tiny-singlelabel.bnf"


@parametrize_with_checks([GrammarAutoMLClassifier(grammar=str(TINY), method="random", time_budget=20, population=2,
                                                  max_generations=1, n_jobs=1, cv=2, screening=False, eval_timeout=10)])
def test_grammar_automl_classifier_is_a_scikit_learn_classifier(estimator, check):
    check(estimator)


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_the_classifier_searches_the_ensemble_space_with_pbil():
    X, y = load_default("singlelabel")
    labels = np.array(["low", "mid", "high"])[y]
    est = GrammarAutoMLClassifier(time_budget=25, population=4, max_generations=2, n_jobs=2, random_state=1,
                                  cv=3, method_params={"learning_rate": 0.4}).fit(X[:200], labels[:200])
    assert est.final_["fitness"] == "accuracy" and est.best_phenotype_.split()[0] in ENSEMBLE_TYPES + BASES
    assert set(est.predict(X[200:])) <= set(labels) and est.predict_proba(X[200:]).shape == (100, 3)
    assert est.score(X[200:], labels[200:]) > 0.4
    assert est.final_["method_report"]["rows"]

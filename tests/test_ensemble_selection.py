"""Post-hoc ensemble selection: the greedy arithmetic on hand-made examples, the multi-label
objective's re-chosen cut, the bounded prediction store, and the ensemble estimator (scikit-learn's
checks, both tasks, export, a reload)."""
from __future__ import annotations

import joblib
import numpy as np
import pytest
from sklearn.base import clone
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from ggp_automl.evaluation.predictions import PredictionStore
from ggp_automl.evaluation.selection import EnsembleObjective, caruana, mean_scores
from ggp_automl.evaluation.task import MultiLabel, SingleLabel
from ggp_automl.search.ensemble import parse_ensemble
from ggp_automl.spaces.ensemble import EnsembleModel
from ggp_automl.spaces.export import to_python
from ggp_automl.spaces.model import MultiLabelModel, SingleLabelModel, load_model


def _one_hot(classes, k=2):
    return np.eye(k)[np.asarray(classes)]


SLC = SingleLabel(("a", "b"))
Y5 = np.array([0, 0, 0, 1, 1])


def test_caruana_combines_two_complementary_models_over_the_single_best():
    # three models right on 4 of 5 rows each, wrong on different rows, and less confident
    # where they are wrong: averaging the best with the runner-up is right everywhere
    a = np.array([[.9, .1], [.9, .1], [.4, .6], [.45, .55], [.2, .8]])   # wrong on row 2
    b = np.array([[.6, .4], [.45, .55], [.9, .1], [.1, .9], [.3, .7]])   # wrong on row 1
    best = np.array([[.8, .2], [.8, .2], [.8, .2], [.3, .7], [.6, .4]])  # wrong on row 4
    objective = EnsembleObjective(SLC, Y5, "accuracy")
    assert [objective(s) for s in (a, b, best)] == [0.8, 0.8, 0.8]
    selection = caruana([best, a, b], objective, size=4, warm_start=1)
    assert selection.value == 1.0
    assert selection.single_value == 0.8 and selection.single_best == 0
    assert objective(mean_scores([best, a, b], selection.counts)) == 1.0
    assert list(selection.counts) == [1, 1, 0]  # the smallest perfect ensemble: the best and a
    assert selection.trace[:2] == (0.8, 1.0)


def test_caruana_never_returns_less_than_the_single_best_on_validation():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 3, 40)
    task = SingleLabel(("a", "b", "c"))
    objective = EnsembleObjective(task, y, "accuracy")
    for trial in range(20):
        pool = [rng.dirichlet(np.ones(3), size=40) for _ in range(6)]
        pool[0] = 0.6 * _one_hot(y, 3) + 0.4 * pool[0]  # one good model among noise
        selection = caruana(pool, objective, size=10, warm_start=3)
        assert selection.value >= selection.single_value
        assert selection.value == pytest.approx(objective(mean_scores(pool, selection.counts)))


def test_caruana_ties_go_to_the_individually_better_candidate():
    same = np.array([[.9, .1], [.9, .1], [.9, .1], [.1, .9], [.1, .9]])
    selection = caruana([same * 0.5 + 0.25, same], EnsembleObjective(SLC, Y5, "accuracy"), size=3, warm_start=1)
    assert selection.single_best == 0  # equal accuracy: the earlier (better searched) one
    assert list(selection.members) == [0]  # adding anything only ties: the smallest ensemble is kept


def test_caruana_rejects_an_empty_pool_and_a_zero_size():
    objective = EnsembleObjective(SLC, Y5, "accuracy")
    with pytest.raises(ValueError, match="at least one candidate"):
        caruana([], objective)
    with pytest.raises(ValueError, match="at least 1"):
        caruana([np.ones((5, 2)) / 2], objective, size=0)


def test_multilabel_objective_rechooses_the_cut_for_the_averaged_scores():
    Y = np.array([[1, 0], [0, 1], [1, 1], [0, 0]])
    # scores squeezed towards 0.3: a fixed 0.5 predicts nothing, a cut at the data's cardinality works
    scores = np.array([[.35, .25], [.25, .35], [.36, .34], [.2, .2]])
    objective = EnsembleObjective(MultiLabel(("x", "y")), Y, "fitness")
    predictions, thresholds = objective.decide(scores)
    assert thresholds.shape == (2,)
    np.testing.assert_array_equal(predictions, Y)
    assert objective(scores) == pytest.approx(1.0)
    assert objective.measures(scores)["exact_match"] == 1.0


def test_prediction_store_bounds_its_bytes_and_drops_the_worst(tmp_path):
    one = np.zeros((10, 4), dtype=np.float32)  # 160 bytes
    store = PredictionStore(max_bytes=3 * one.nbytes, path=tmp_path / "p.pkl")
    store.set_targets("v", np.arange(10))
    for k, fitness in enumerate([0.5, 0.7, 0.6, 0.4, 0.9]):
        store.put("v", f"p{k}", fitness, one + k)
    assert store.phenotypes("v") == ["p4", "p1", "p2"]
    assert store.bytes <= store.max_bytes and store.dropped == 2
    assert not store.put("v", "p4", 0.99, one)  # a candidate is kept once
    again = PredictionStore(max_bytes=3 * one.nbytes, path=tmp_path / "p.pkl").load()
    assert again.phenotypes("v") == ["p4", "p1", "p2"]
    np.testing.assert_array_equal(again.get("v", "p2"), one + 2)
    np.testing.assert_array_equal(again.targets("v"), np.arange(10))


def test_prediction_store_reads_past_a_frame_cut_off_by_a_kill(tmp_path):
    path = tmp_path / "p.pkl"
    store = PredictionStore(path=path)
    store.put("v", "a", 0.5, np.ones((3, 2)))
    store.put("v", "b", 0.6, np.ones((3, 2)))
    data = path.read_bytes()
    path.write_bytes(data[:-7])
    again = PredictionStore(path=path).load()
    assert again.phenotypes("v") == ["a"]


@pytest.mark.parametrize("spec, expected", [("caruana", ("caruana", 25)), ("caruana:7", ("caruana", 7)),
                                            (" caruana:1 ", ("caruana", 1))])
def test_parse_ensemble(spec, expected):
    assert parse_ensemble(spec) == expected


@pytest.mark.parametrize("spec", ["bagging", "caruana:", "caruana:0", "caruana:x", "caruana:2.5", "caruana:99999"])
def test_parse_ensemble_refuses_with_what_is_expected(spec):
    with pytest.raises(ValueError, match="caruana"):
        parse_ensemble(spec)


# -- the estimator -------------------------------------------------------------------------------

def _slc_members():
    return [SingleLabelModel(GaussianNB()), SingleLabelModel(DecisionTreeClassifier(max_depth=2, random_state=0))]


@parametrize_with_checks([EnsembleModel(_slc_members(), [2, 1])])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


def _mlc_data(n=60, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] + X[:, 2] > 0, X[:, 3] > 0.5]).astype(int)
    return X, Y


def _mlc_member(depth):
    from ggp_automl.spaces.mlc.transform import BR

    return MultiLabelModel(BR(DecisionTreeClassifier(max_depth=depth, random_state=0)))


def test_multilabel_ensemble_fits_predicts_exports_and_reloads(tmp_path):
    X, Y = _mlc_data()
    model = EnsembleModel([_mlc_member(1), _mlc_member(3)], [1, 3], thresholds=[0.5, 0.4, 0.5]).fit(X, Y)
    scores = model.predict_proba(X)
    assert scores.shape == Y.shape
    expected = 0.25 * model.members_[0].predict_proba(X) + 0.75 * model.members_[1].predict_proba(X)
    np.testing.assert_allclose(scores, expected)
    np.testing.assert_array_equal(model.predict(X), (expected >= [0.5, 0.4, 0.5]).astype(int))
    joblib.dump(model, tmp_path / "model.joblib")
    again = load_model(tmp_path / "model.joblib")
    np.testing.assert_array_equal(again.predict(X), model.predict(X))
    namespace: dict = {}
    exec(to_python(clone(model)), namespace)  # noqa: S102 - the exported code rebuilds the unfitted ensemble
    rebuilt = namespace["model"].fit(X, Y)
    np.testing.assert_array_equal(rebuilt.predict(X), model.predict(X))


def test_a_saved_model_cut_anywhere_is_called_truncated(tmp_path):
    """A cut stream fails in unpickling with whatever exception the last whole opcode leaves behind
    (EOFError, IndexError, UnpicklingError ...); the message must say "truncated" for every cut."""
    from ggp_automl.spaces.model import ModelFileError

    X, Y = _mlc_data()
    model = EnsembleModel([_mlc_member(1), _mlc_member(3)], [1, 3]).fit(X, Y)
    whole = tmp_path / "whole.joblib"
    joblib.dump(model, whole)
    data = whole.read_bytes()
    cut = tmp_path / "cut.joblib"
    for end in sorted({1, 2, 10, 100, 300, len(data) // 3, len(data) // 2, len(data) - 2, len(data) - 1}):
        cut.write_bytes(data[:end])
        with pytest.raises(ModelFileError) as info:
            load_model(cut)
        assert info.value.reason == "truncated", (end, info.value.reason)


def test_from_fitted_keeps_the_fitted_members_and_aligns_classes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 3))
    y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 1).astype(int)  # classes 0, 1, 2
    few = SingleLabelModel(GaussianNB()).fit(X[y < 2], y[y < 2])  # saw classes 0 and 1 only
    all_ = SingleLabelModel(GaussianNB()).fit(X, y)
    model = EnsembleModel.from_fitted([few, all_], [0.5, 0.5], "PCut1")
    assert model.members_[0] is few
    np.testing.assert_array_equal(model.classes_, [0, 1, 2])
    proba = model.predict_proba(X)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    np.testing.assert_allclose(proba[:, 2], 0.5 * all_.predict_proba(X)[:, 2])


def test_from_fitted_calibrates_a_threshold_strategy_on_the_members_training_scores():
    """A returned multi-label ensemble keeps the cut's strategy, calibrated on its refit members' scores
    of their own training data (as fit does), not values chosen on other members' validation scores."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(60, 4))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 0] + X[:, 2] > 0]).astype(int)
    members = [_mlc_member(1).fit(X, Y), _mlc_member(3).fit(X, Y)]
    made = EnsembleModel.from_fitted(members, [1, 3], "PCutL", X=X, Y=Y)
    fitted = EnsembleModel([_mlc_member(1), _mlc_member(3)], [1, 3], thresholds="PCutL").fit(X, Y)
    np.testing.assert_allclose(made.thresholds_, fitted.thresholds_)
    np.testing.assert_array_equal(made.predict(X), fitted.predict(X))
    with pytest.raises(ValueError, match="calibrated on training data"):
        EnsembleModel.from_fitted(members, [1, 3], "PCutL")


def test_ensemble_refuses_bad_weights_and_thresholds():
    X, Y = _mlc_data()
    with pytest.raises(ValueError, match="non-negative"):
        EnsembleModel([_mlc_member(1)], [-1]).fit(X, Y)
    with pytest.raises(ValueError, match="at least one member"):
        EnsembleModel([]).fit(X, Y)
    with pytest.raises(ValueError, match="one value per label"):
        EnsembleModel([_mlc_member(1)], thresholds=[0.5]).fit(X, Y)

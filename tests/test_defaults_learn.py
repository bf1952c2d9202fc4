"""Every registered algorithm learns at its defaults on badly scaled features (issue 8, item 4a).

WEKA normalises or standardises the inputs of the learners that need it (SMO,
MultilayerPerceptron, SGD, Logistic, IBk, LWL; Mulan's BPMLL for ML-BPNN), and our estimators
carry that preprocessing inside themselves. This test guards it: each algorithm, in the
smallest multi-label model around it (``spaces.showcase.minimal_chain``, default
hyper-parameters), is fitted on a synthetic problem whose columns live on wildly different
scales (factors 1e-3 … 1e3, offsets −99 … 237, as on emotions, plus a constant column) and
must rank held-out rows clearly better than chance.

The measure is the mean per-label ROC AUC of the scores: any constant predictor — the failure
mode of an unscaled network, which gives every row (nearly) the same scores — gets exactly 0.5,
so the margin cannot be met by predicting label frequencies.
"""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.metrics import roc_auc_score

from ggp_automl.spaces.export import same_estimator, to_python
from ggp_automl.spaces.model import MultiLabelModel
from ggp_automl.spaces.registry import load_all
from ggp_automl.spaces.showcase import minimal_chain

REGISTRY = load_all()

#: Algorithms that are constant by definition, so no ranking is possible. Only ZeroR: it
#: predicts the training class priors for every row, whatever the features.
CONSTANT_BY_DESIGN = {"ZeroR"}

#: Known failures, reported rather than hidden (strict: the test fails once they learn).
KNOWN_SCALE_DEPENDENT = {
    # A multinomial model of word counts: a column's magnitude *is* its evidence, so the
    # widest (noise) columns dominate. WEKA does not rescale it either, and rescaling would
    # change what the model is (and hide the negative-value failures the thesis recorded).
    "NaiveBayesMultinomial": "multinomial count model: column magnitude is evidence by design",
}

#: the learners that scale their inputs themselves (WEKA/Mulan defaults, or our deviation)
#: the slowest learner here (LWL: a model per test row), in the slow suite only (pytest -m slow): CI's 20 minutes
SLOW = {"LWL"}
SELF_SCALING = ("BPNN", "VotedPerceptron", "MultilayerPerceptron", "SGD", "SMO",
                "LogisticRegression", "KNN", "LWL")

N_TRAIN, N_TEST = 200, 100
#: mean per-label AUC every algorithm must reach (a constant predictor gets exactly 0.5)
MIN_AUC = 0.70


def badly_scaled_problem(seed: int = 20240808):
    """A learnable 4-label problem on 11 features (6 informative, 4 noise, 1 constant), 300 rows.

    Each label is a noisy linear threshold of three informative latent features, one of them
    dominant (so single-attribute learners such as OneR and DecisionStump can learn it too).
    Every column is then multiplied by a factor between 1e-3 and 1e3 and shifted by an offset
    between −99 and 237; the noise columns get the largest factors, so an unscaled distance,
    kernel, count or network input is dominated by noise. The last column is constant (42), so
    every scaler meets a zero range.
    """
    rng = np.random.default_rng(seed)
    n, n_informative, n_noise = N_TRAIN + N_TEST, 6, 4
    Z = rng.standard_normal((n, n_informative + n_noise))
    drivers = [(0, 1, 2), (3, 4, 5), (1, 5, 0), (2, 3, 4)]
    Y = np.empty((n, len(drivers)), dtype=np.int8)
    for j, (a, b, c) in enumerate(drivers):
        signal = 3.0 * Z[:, a] + Z[:, b] - 0.7 * Z[:, c] + 0.3 * rng.standard_normal(n)
        Y[:, j] = signal > np.quantile(signal, 0.55 if j % 2 else 0.4)
    informative_scale = np.array([1e-3, 1e2, 3e-3, 1e-2, 30.0, 1e-3])
    noise_scale = np.array([1e3, 500.0, 1e3, 200.0])
    scale = np.concatenate([informative_scale, noise_scale])
    offset = np.linspace(-99.0, 237.0, scale.size)[rng.permutation(scale.size)]
    X = np.column_stack([Z * scale + offset, np.full(n, 42.0)])
    return X, Y


@pytest.fixture(scope="module")
def problem():
    return badly_scaled_problem()


def inputs_for(name: str, X: np.ndarray) -> np.ndarray:
    if name == "NaiveBayesMultinomial":
        return X - X[:N_TRAIN].min(axis=0)  # it rejects negative values (word counts), as in WEKA
    return X


def mean_label_auc(Y: np.ndarray, scores: np.ndarray) -> float:
    """Mean over labels of the ROC AUC of the scores; 0.5 for any scores constant over rows."""
    return float(np.mean([roc_auc_score(Y[:, j], scores[:, j]) for j in range(Y.shape[1])]))


def test_a_constant_predictor_scores_exactly_chance(problem):
    _, Y = problem
    priors = np.tile(Y[:N_TRAIN].mean(axis=0), (N_TEST, 1))
    assert mean_label_auc(Y[N_TRAIN:], priors) == 0.5


def test_the_problem_is_badly_scaled(problem):
    X, Y = problem
    sd = X[:, :-1].std(axis=0)
    assert sd.max() / sd.min() > 1e5 and X.min() < -90 and X.max() > 230
    assert np.ptp(X[:, -1]) == 0
    assert 0.3 < Y.mean() < 0.7 and (Y[:N_TRAIN].min(axis=0) == 0).all() and (Y[:N_TRAIN].max(axis=0) == 1).all()


def _cases():
    for name in sorted(set(REGISTRY) - CONSTANT_BY_DESIGN):
        if name in KNOWN_SCALE_DEPENDENT:
            yield pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=KNOWN_SCALE_DEPENDENT[name]))
        elif name in SLOW:
            yield pytest.param(name, marks=pytest.mark.slow)
        else:
            yield name


@pytest.mark.parametrize("name", list(_cases()))
def test_default_configuration_learns_on_badly_scaled_features(problem, name):
    X, Y = problem
    X = inputs_for(name, X)
    model = MultiLabelModel(minimal_chain(name), "PCut1").fit(X[:N_TRAIN], Y[:N_TRAIN])
    raw = model.estimator_.predict_proba(model.preprocessor_.transform(X[N_TRAIN:]))
    assert np.isfinite(raw).all(), f"{name}: non-finite scores (a constant column divided by zero?)"
    scores = model.predict_proba(X[N_TRAIN:])
    auc = mean_label_auc(Y[N_TRAIN:], scores)
    assert auc >= MIN_AUC, (
        f"{name} at its defaults ranks held-out rows no better than chance on badly scaled "
        f"features: mean per-label AUC {auc:.3f} < {MIN_AUC} (a constant predictor gets 0.5); "
        f"score spread over rows per label: {np.ptp(scores, axis=0).round(4).tolist()}")


# --------------------------------------------------------- the scaling contract of the learners
@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in SELF_SCALING])
def test_scaling_is_learnt_from_training_rows_only_and_is_deterministic(problem, name):
    """Scores of a row do not depend on the other rows predicted with it (the scaling is
    fixed at fit time), refits give the same scores, and a clone (get_params) behaves the same."""
    X, Y = problem
    chain = minimal_chain(name)
    model = MultiLabelModel(chain, "PCut1").fit(X[:N_TRAIN], Y[:N_TRAIN])
    test = X[N_TRAIN:N_TRAIN + 20] * np.r_[np.ones(10), 3.0 * np.ones(10)][:, None]  # some outside the range
    scores = model.predict_proba(test)
    assert np.allclose(model.predict_proba(test[::-1])[::-1], scores)
    assert np.allclose(model.predict_proba(test[:1]), scores[:1])
    again = MultiLabelModel(clone(chain), "PCut1").fit(X[:N_TRAIN], Y[:N_TRAIN])
    assert np.array_equal(again.predict_proba(test), scores)
    assert same_estimator(clone(chain), chain)


@pytest.mark.parametrize("name", ["BPNN", "VotedPerceptron"])
def test_scaled_learners_export_and_rebuild(problem, name):
    X, Y = problem
    chain = minimal_chain(name)
    source = to_python(chain)
    assert "normalize=True" in source
    namespace: dict = {}
    exec(compile(source, "<export>", "exec"), namespace)  # noqa: S102 - the point of the test
    rebuilt = namespace["model"]
    assert same_estimator(rebuilt, chain)
    a = MultiLabelModel(chain, "PCut1").fit(X[:N_TRAIN], Y[:N_TRAIN]).predict_proba(X[N_TRAIN:])
    b = MultiLabelModel(rebuilt, "PCut1").fit(X[:N_TRAIN], Y[:N_TRAIN]).predict_proba(X[N_TRAIN:])
    assert np.array_equal(a, b)


def test_bpnn_normalises_to_minus_one_one_with_the_training_range(problem):
    """Mulan BPMLL's default: inputs mapped to [-1, 1]; constant columns to 0."""
    X, Y = problem
    est = minimal_chain("BPNN").fit(X[:N_TRAIN], Y[:N_TRAIN])
    Xs = est._scale(X[:N_TRAIN])
    assert np.allclose(Xs[:, :-1].min(axis=0), -1.0) and np.allclose(Xs[:, :-1].max(axis=0), 1.0)
    assert (Xs[:, -1] == 0).all()
    unscaled = clone(est).set_params(normalize=False).fit(X[:N_TRAIN], Y[:N_TRAIN])
    assert unscaled.scaling_ is None


def test_voted_perceptron_ignores_a_constant_column(problem):
    """A column constant in training maps to 0, so it changes no kernel value."""
    X, Y = problem
    with_const = minimal_chain("VotedPerceptron").fit(X[:N_TRAIN], Y[:N_TRAIN])
    without = minimal_chain("VotedPerceptron").fit(X[:N_TRAIN, :-1], Y[:N_TRAIN])
    assert np.allclose(with_const.predict_scores(X[N_TRAIN:]), without.predict_scores(X[N_TRAIN:, :-1]))

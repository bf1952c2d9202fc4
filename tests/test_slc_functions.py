"""Function learners at the SLC level (spaces/slc/functions.py, spaces/slc/logistic.py,
spaces/slc/_kernels.py): VotedPerceptron, MultilayerPerceptron, SGD, LogisticRegression, SMO,
SimpleLogistic and LMT — builders, the estimator contract, and each algorithm's WEKA semantics,
several against direct transliterations of WEKA's loops, on small synthetic data."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.metrics.pairwise import rbf_kernel as sk_rbf

from ggp_automl.spaces import deadline
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import REGISTRY
from ggp_automl.spaces.slc import _kernels, functions, logistic
from ggp_automl.spaces.slc.base import fit_slc, slc_scores
from ggp_automl.spaces.slc.functions import (NetworkDiverged, WekaLogistic, WekaMultilayerPerceptron, WekaSGD,
                                  WekaSMO, WekaVotedPerceptron)
from ggp_automl.spaces.slc.logistic import WekaLMT, WekaSimpleLogistic

NAMES = ("VotedPerceptron", "MultilayerPerceptron", "SGD", "LogisticRegression", "SMO",
         "SimpleLogistic", "LMT")

#: explicit hyper-parameters per algorithm: (values, the algorithm's own terminals, expected params)
EXPLICIT = {
    "VotedPerceptron": ({"i": (3,), "mk": (6000,), "e": (2.0,)}, ("VotedPerceptron", 3, 6000, 2.0),
                        dict(n_iter=3, max_k=6000, exponent=2.0)),
    "MultilayerPerceptron": ({"lr": (0.5,), "m": (0.1,), "nhn": ("t",), "n2b": ("n2b",),
                              "reset": ("reset",), "decay": ()},
                             ("MultilayerPerceptron", 0.5, 0.1, "t", "n2b", "reset"),
                             dict(learning_rate=0.5, momentum=0.1, hidden_layers="t",
                                  nominal_to_binary=False, reset=False, decay=False)),
    "SGD": ({"lf": (1,), "lr_sgd": (0.05,), "nn": ("nn",), "nrmv": ("nrmv",), "r_sgd": (0.01,)},
            ("SGD", 1, 0.05, "nn", "nrmv", 0.01),
            dict(loss=1, learning_rate=0.05, normalize=False, replace_missing=False, ridge=0.01)),
    "LogisticRegression": ({"r_lr": (0.5,)}, ("LogisticRegression", 0.5), dict(ridge=0.5)),
    "SMO": ({"c": (1.2,), "ft": (1,), "bcm": ("bcm",), "kernel": ("Puk", 0.5, 2.0), "om": (0.5,),
             "sig": (2.0,)}, ("SMO", 1.2, 1, "bcm", "Puk", 0.5, 2.0),
            dict(C=1.2, filter_type=1, build_calibration=True, kernel="Puk", omega=0.5, sigma=2.0)),
    "SimpleLogistic": ({"ucv": ("ucv",), "uaic": (), "wtb_opt": (0.2,), "wtb": (0.2,)},
                       ("SimpleLogistic", "ucv", 0.2),
                       dict(use_cross_validation=False, use_aic=False, weight_trim_beta=0.2)),
    "LMT": ({"mno_lmt": (30,), "cn": ("cn",), "sor": ("sor",), "fr": (), "eop": ("eop",),
             "uaic": ("uaic",), "wtb_opt": ()}, ("LMT", 30, "cn", "sor", "eop", "uaic"),
            dict(min_num_instances=30, convert_nominal=True, split_on_residuals=True,
                 fast_regression=True, error_on_probabilities=True, use_aic=True, weight_trim_beta=0.0)),
}

#: WEKA / Appendix-A defaults each builder must produce from an empty tree
DEFAULTS = {
    "VotedPerceptron": dict(n_iter=1, max_k=10000, exponent=1.0),
    "MultilayerPerceptron": dict(learning_rate=0.3, momentum=0.2, hidden_layers="a",
                                 nominal_to_binary=True, reset=True, decay=False, epochs=500),
    "SGD": dict(loss=0, learning_rate=0.01, ridge=1e-4, normalize=True, replace_missing=True, epochs=500),
    "LogisticRegression": dict(ridge=1e-8),
    "SMO": dict(C=1.0, filter_type=0, build_calibration=False, kernel="PolyKernel", exponent=1.0,
                lower_order=True),
    "SimpleLogistic": dict(use_cross_validation=True, use_aic=False, weight_trim_beta=0.0),
    "LMT": dict(min_num_instances=15, split_on_residuals=False, fast_regression=True,
                error_on_probabilities=False, use_aic=False, weight_trim_beta=0.0),
}

#: learners that take instance weights in fit (WEKA WeightedInstancesHandler)
WEIGHTED = {"MultilayerPerceptron", "LogisticRegression", "SMO", "SimpleLogistic"}
#: learners whose confidences are soft at defaults
SOFT = {"VotedPerceptron", "MultilayerPerceptron", "LogisticRegression", "SimpleLogistic", "LMT"}


pytestmark = pytest.mark.usefixtures("one_thread", "no_deadline")


def data(n_classes: int, n: int = 150, m: int = 6, seed: int = 0):
    X, y = make_classification(n_samples=n, n_features=m, n_informative=4, n_redundant=1,
                               n_classes=n_classes, n_clusters_per_class=1, random_state=seed)
    return X, y


def build(name: str, explicit: bool, random_state: int = 0, **overrides):
    values, tokens, _ = EXPLICIT[name] if explicit else ({}, (name,), None)
    est = REGISTRY[name].build(Params(name, values=values, tokens=tokens, random_state=random_state))
    # keep the tests fast: fewer epochs for the 500-epoch learners
    fast = {"epochs": 40} if name in ("MultilayerPerceptron", "SGD") else {}
    return est.set_params(**{**fast, **overrides})


# ---------------------------------------------------------------------------- registry/builders
def test_all_registered_as_slc():
    for name in NAMES:
        assert name in REGISTRY and REGISTRY[name].kind == "slc", name


@pytest.mark.parametrize("name", NAMES)
def test_builders_map_explicit_values_and_defaults(name):
    explicit = build(name, True).get_params()
    for key, value in EXPLICIT[name][2].items():
        assert explicit[key] == value, (name, key)
    default = REGISTRY[name].build(Params(name, tokens=(name,), random_state=7)).get_params()
    for key, value in DEFAULTS[name].items():
        assert default[key] == value, (name, key)
    assert default["random_state"] == 7


def test_mlp_decay_switch_turns_decay_on():
    p = Params("MultilayerPerceptron", values={"decay": ("decay",)}, tokens=("MultilayerPerceptron", "decay"))
    assert REGISTRY["MultilayerPerceptron"].build(p).decay is True


def test_smo_kernel_gate_reads_terminals():
    def kernel(values, tokens):
        return REGISTRY["SMO"].build(Params("SMO", values=values, tokens=("SMO",) + tokens)).get_params()
    rbf = kernel({"kernel": ("RBFKernel", 0.5), "g": (0.5,)}, ("RBFKernel", 0.5))
    assert rbf["kernel"] == "RBFKernel" and rbf["gamma"] == 0.5
    norm = kernel({"kernel": ("NormalizedPolyKernel", 3.0), "poly_kernel": ("NormalizedPolyKernel",),
                   "exp": (3.0,), "ulo": ()}, ("NormalizedPolyKernel", 3.0))
    assert norm["kernel"] == "NormalizedPolyKernel" and norm["exponent"] == 3.0
    assert norm["lower_order"] is False  # <ulo> present in the tree but EMPTY


# ------------------------------------------------------------------------ estimator contract
@pytest.mark.parametrize("explicit", [False, True], ids=["defaults", "explicit"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", NAMES)
def test_contract(name, n_classes, explicit):
    X, y = data(n_classes)
    y = np.array(["c0", "c1", "c2"])[y]  # string labels must come back unchanged
    est = build(name, explicit)
    twin = clone(est)
    assert twin.get_params() == est.get_params()
    est.fit(X, y)
    assert list(est.classes_) == sorted(set(y))
    P = est.predict_proba(X)
    assert P.shape == (len(y), n_classes)
    assert np.all((P >= 0) & (P <= 1)) and np.allclose(P.sum(axis=1), 1.0)
    pred = est.predict(X)
    assert set(pred) <= set(y)
    assert np.array_equal(pred, est.classes_[np.argmax(P, axis=1)])
    assert np.mean(pred == y) > 1.0 / n_classes + 0.1, "no better than chance on easy data"
    again = clone(twin).fit(X, y).predict_proba(X)
    assert np.array_equal(P, again), "not deterministic for a fixed random_state"


@pytest.mark.parametrize("name", NAMES)
def test_constant_target_predicts_the_one_class(name):
    X, _ = data(2, n=30)
    est = build(name, False).fit(X, np.full(30, 4))
    assert np.array_equal(est.predict(X), np.full(30, 4))
    assert np.allclose(est.predict_proba(X), 1.0)


@pytest.mark.parametrize("name", NAMES)
def test_sample_weight_support_matches_weka(name):
    X, y = data(2)
    est = build(name, False)
    fitted = fit_slc(est, X, y, sample_weight=np.linspace(0.5, 2.0, len(y)), random_state=3)
    scores = slc_scores(fitted, X, np.array([0, 1]))
    assert scores.shape == (len(y), 2)
    import inspect
    takes = "sample_weight" in inspect.signature(type(est).fit).parameters
    assert takes == (name in WEIGHTED)


@pytest.mark.parametrize("name", sorted(WEIGHTED))
def test_zero_weights_equal_dropping_rows(name):
    X, y = data(2, seed=4)
    w = np.ones(len(y))
    w[::3] = 0.0
    keep = w > 0
    params = {"use_cross_validation": False} if name == "SimpleLogistic" else {}
    if name == "MultilayerPerceptron":  # the shuffled order and batches differ, so compare fit quality
        a = build(name, False).fit(X, y, sample_weight=w)
        assert np.mean(a.predict(X[keep]) == y[keep]) > 0.8
        return
    a = build(name, False, **params).fit(X, y, sample_weight=w)
    b = build(name, False, **params).fit(X[keep], y[keep])
    assert np.allclose(a.predict_proba(X), b.predict_proba(X), atol=1e-6)


@pytest.mark.parametrize("name", ["SGD", "LogisticRegression", "SimpleLogistic", "LMT"])
def test_binary_decision_function_follows_sklearn_convention(name):
    X, y = data(2, seed=26)
    est = build(name, False).fit(X, y)
    d = est.decision_function(X)
    assert d.shape == (len(y),)
    assert np.array_equal(d > 0, est.predict(X) == est.classes_[1])


@pytest.mark.parametrize("name", ["VotedPerceptron", "MultilayerPerceptron", "SGD"])
def test_random_state_matters_for_randomised_learners(name):
    X, y = data(2, seed=5)
    a = build(name, False, random_state=0).fit(X, y).predict_proba(X)
    b = build(name, False, random_state=1).fit(X, y).predict_proba(X)
    assert not np.array_equal(a, b)


def test_deadline_stops_long_loops():
    X, y = data(2)
    deadline.set_deadline(-1.0)
    for est in (WekaVotedPerceptron(), WekaMultilayerPerceptron(epochs=5), WekaSimpleLogistic()):
        with pytest.raises(deadline.BudgetExceeded):
            est.fit(X, y)


# ------------------------------------------------------------------------------------ kernels
def test_kernels_match_weka_formulas():
    rng = np.random.default_rng(0)
    A, B = rng.normal(size=(5, 3)), rng.normal(size=(4, 3))
    assert np.allclose(_kernels.poly_kernel(A, B, 2.0, True), (A @ B.T + 1) ** 2)
    assert np.allclose(_kernels.poly_kernel(A, B, 3.0, False), (A @ B.T) ** 3)
    norm = _kernels.normalized_poly_kernel(A, A, 2.0, True)
    assert np.allclose(np.diag(norm), 1.0)
    direct = (A @ B.T + 1) ** 2 / np.sqrt(np.outer((np.sum(A * A, 1) + 1) ** 2, (np.sum(B * B, 1) + 1) ** 2))
    assert np.allclose(_kernels.normalized_poly_kernel(A, B, 2.0, True), direct)
    om, sig = 0.7, 1.5
    d = np.sqrt(((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))
    puk = 1.0 / (1.0 + (2 * d * np.sqrt(2 ** (1 / om) - 1) / sig) ** 2) ** om
    assert np.allclose(_kernels.puk_kernel(A, B, om, sig), puk)
    assert np.allclose(np.diag(_kernels.puk_kernel(A, A, om, sig)), 1.0)
    assert np.allclose(_kernels.rbf_kernel(A, B, 0.3), sk_rbf(A, B, gamma=0.3))


def test_real_power_is_finite_and_exact_for_integers():
    base = np.array([-2.0, -0.5, 0.0, 1.5])
    assert np.allclose(_kernels.real_power(base, 2.0), base ** 2)  # even integer: ordinary power
    frac = _kernels.real_power(base, 1.5)
    assert np.all(np.isfinite(frac))
    assert np.allclose(frac, np.sign(base) * np.abs(base) ** 1.5)
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.power(-2.0, 1.5))  # what Java's Math.pow would give


# ---------------------------------------------------------------------------- VotedPerceptron
def _weka_voted_perceptron(X, y01, order, n_iter, max_k, e):
    """Direct transliteration of WEKA VotedPerceptron.buildClassifier/distributionForInstance."""
    X, y = X[order], y01[order]

    def inner(a, b):
        r = a @ b + 1.0
        return r if e == 1 else r ** e

    additions, is_add, weights, k = [0] * (max_k + 1), [False] * (max_k + 1), [0] * (max_k + 1), 0

    def prediction(kk, x):
        r = sum(inner(X[additions[i]], x) * (1 if is_add[i] else -1) for i in range(kk))
        return 0 if r < 0 else 1

    done = False
    for _ in range(n_iter):
        for i in range(len(y)):
            if prediction(k, X[i]) == y[i]:
                weights[k] += 1
            else:
                is_add[k], additions[k] = y[i] == 1, i
                k += 1
                weights[k] += 1
            if k == max_k:
                done = True
                break
        if done:
            break

    def proba(x):
        out, so_far = 0.0, 0.0
        for i in range(k + 1):
            out += -weights[i] if so_far < 0 else weights[i]
            if i < k:  # WEKA also reads slot k, which holds no addition yet
                so_far += inner(X[additions[i]], x) * (1 if is_add[i] else -1)
        return expit(out)

    return proba


@pytest.mark.parametrize("n_iter,max_k,e", [(1, 10000, 1.0), (3, 10000, 2.0), (4, 7, 1.0)])
def test_voted_perceptron_matches_weka_loop(n_iter, max_k, e):
    X, y = data(2, n=40, m=5, seed=1)
    est = WekaVotedPerceptron(n_iter=n_iter, max_k=max_k, exponent=e, random_state=11).fit(X, y)
    order = np.random.default_rng([11, 0]).permutation(len(y))
    reference = _weka_voted_perceptron(X, y, order, n_iter, max_k, e)
    expected = np.array([reference(x) for x in X])
    assert np.allclose(est.predict_proba(X)[:, 1], expected)
    assert len(est.perceptrons_[0][2]) <= max_k


def test_voted_perceptron_confidence_is_a_sigmoid_of_the_vote():
    X, y = data(2, n=120, seed=2)
    P = WekaVotedPerceptron(n_iter=1).fit(X, y).predict_proba(X)[:, 1]
    assert np.all(np.isin(P, [0.0, 1.0]) | ((P > 0) & (P < 1)))
    X3, y3 = data(3, n=120, seed=2)
    est = WekaVotedPerceptron(n_iter=2).fit(X3, y3)
    assert len(est.perceptrons_) == 3  # one-vs-rest
    assert np.allclose(est.predict_proba(X3).sum(axis=1), 1.0)


def test_voted_perceptron_fractional_exponent_on_negative_bases():
    X, y = data(2, n=60, seed=3)
    X = X * 3.0  # many negative dot products
    P = WekaVotedPerceptron(n_iter=2, exponent=1.5).fit(X, y).predict_proba(X)
    assert np.all(np.isfinite(P))


# ------------------------------------------------------------------------ MultilayerPerceptron
def test_mlp_hidden_layer_wildcards():
    X, y = data(3, m=6)
    sizes = {"a": (6 + 3) // 2, "i": 6, "o": 3, "t": 9, "4": 4}
    for spec, units in sizes.items():
        est = WekaMultilayerPerceptron(hidden_layers=spec, epochs=2).fit(X, y)
        assert est.n_hidden_ == units
        assert est.layers_[0].shape == (6 + 1, units) and est.layers_[1].shape == (units + 1, 3)
    flat = WekaMultilayerPerceptron(hidden_layers="0", epochs=2).fit(X, y)
    assert len(flat.layers_) == 1 and flat.layers_[0].shape == (7, 3)


def test_mlp_normalises_to_minus_one_one_and_learns():
    X, y = data(2, n=200, seed=6)
    est = WekaMultilayerPerceptron(epochs=60).fit(X * 100 + 50, y)  # scale must not matter
    scaled = est._scale(X * 100 + 50)
    assert np.allclose(scaled.min(axis=0), -1.0) and np.allclose(scaled.max(axis=0), 1.0)
    assert np.mean(est.predict(X * 100 + 50) == y) > 0.9


def test_mlp_decay_and_momentum_change_the_model():
    X, y = data(2, seed=7)
    base = WekaMultilayerPerceptron(epochs=20).fit(X, y).predict_proba(X)
    decayed = WekaMultilayerPerceptron(epochs=20, decay=True).fit(X, y).predict_proba(X)
    no_momentum = WekaMultilayerPerceptron(epochs=20, momentum=0.0).fit(X, y).predict_proba(X)
    assert not np.allclose(base, decayed) and not np.allclose(base, no_momentum)


def test_mlp_reset_halves_the_rate_and_no_reset_raises():
    X, y = data(2, n=40, seed=8)
    est = WekaMultilayerPerceptron(learning_rate=1e40, epochs=1).fit(X, y)
    assert est.learning_rate_ < 1e40 and np.all(np.isfinite(est.predict_proba(X)))
    with pytest.raises(NetworkDiverged):
        WekaMultilayerPerceptron(learning_rate=1e40, epochs=1, reset=False).fit(X, y)


def test_mlp_sample_weight_changes_the_fit():
    X, y = data(2, seed=9)
    w = np.where(y == 1, 5.0, 0.2)
    plain = WekaMultilayerPerceptron(epochs=20).fit(X, y).predict_proba(X)[:, 1]
    weighted = WekaMultilayerPerceptron(epochs=20).fit(X, y, sample_weight=w).predict_proba(X)[:, 1]
    assert weighted.mean() > plain.mean()


# ---------------------------------------------------------------------------------------- SGD
def _weka_sgd(X, y01, order, loss, lr, lam, epochs):
    """Direct transliteration of WEKA SGD.train/updateClassifier (nominal class, normalised X)."""
    w, b, n = np.zeros(X.shape[1]), 0.0, len(y01)
    for _ in range(epochs):
        for i in order:
            x, y = X[i], (-1.0 if y01[i] == 0 else 1.0)
            z = y * (x @ w + b)
            w *= 1.0 - lr * lam / n
            if loss != 0 or z < 1:
                dloss = 1.0 if loss == 0 else 1.0 / (np.exp(z) + 1.0)
                w += lr * y * dloss * x
                b += lr * y * dloss
    return w, b


@pytest.mark.parametrize("loss", [0, 1])
def test_sgd_matches_weka_update_rule(loss):
    X, y = data(2, n=60, seed=10)
    est = WekaSGD(loss=loss, learning_rate=0.05, ridge=0.5, epochs=5, random_state=3).fit(X, y)
    Xn = (X - X.min(0)) / (X.max(0) - X.min(0))
    order = np.random.default_rng(3).permutation(len(y))
    w, b = _weka_sgd(Xn, y, order, loss, 0.05, 0.5, 5)
    assert np.allclose(est.decision_function(X), Xn @ w + b, rtol=1e-6, atol=1e-9)


def test_sgd_outputs_hard_for_hinge_and_squared_soft_for_log():
    X, y = data(3, seed=11)
    for loss in (0, 2):
        P = WekaSGD(loss=loss, epochs=30).fit(X, y).predict_proba(X)
        assert set(np.unique(P)) <= {0.0, 1.0}
    P = WekaSGD(loss=1, epochs=30).fit(X, y).predict_proba(X)
    assert np.mean((P > 0.01) & (P < 0.99)) > 0.2
    assert len(WekaSGD(loss=1, epochs=5).fit(X, y).model_.coef_) == 3  # one-vs-rest


def test_sgd_normalisation_switch():
    X, y = data(2, seed=12)
    X = X * 20.0
    a = WekaSGD(epochs=20).fit(X, y).decision_function(X)
    b = WekaSGD(epochs=20, normalize=False).fit(X, y).decision_function(X)
    assert not np.allclose(a, b)


def test_sgd_missing_values_replaced_or_ignored():
    X, y = data(2, seed=13)
    Xm = X.copy()
    Xm[::7, 0] = np.nan
    for replace in (True, False):
        P = WekaSGD(epochs=10, replace_missing=replace).fit(Xm, y).predict_proba(Xm)
        assert np.all(np.isfinite(P))


# ------------------------------------------------------------------------ LogisticRegression
def test_logistic_minimises_weka_ridge_objective():
    X, y = data(2, n=80, seed=14)
    ridge = 0.3
    est = WekaLogistic(ridge=ridge).fit(X, y)
    Z = (X - X.mean(0)) / X.std(0, ddof=1)

    def objective(theta):
        f = Z @ theta[1:] + theta[0]
        return np.sum(np.logaddexp(0, f) - y * f) + ridge * np.sum(theta[1:] ** 2)

    ref = minimize(objective, np.zeros(Z.shape[1] + 1), method="BFGS", options={"gtol": 1e-8}).x
    assert np.allclose(est.coef_[0], ref[1:], atol=1e-3)


def test_logistic_ridge_changes_the_coefficients():
    X, y = data(3, seed=15)
    small = WekaLogistic(ridge=1e-8).fit(X, y).coef_
    large = WekaLogistic(ridge=10.0).fit(X, y).coef_
    assert np.linalg.norm(large) < 0.5 * np.linalg.norm(small)


# ---------------------------------------------------------------------------------------- SMO
KERNEL_SETTINGS = [
    dict(kernel="PolyKernel", exponent=1.0, lower_order=True),
    dict(kernel="PolyKernel", exponent=2.5, lower_order=False),
    dict(kernel="NormalizedPolyKernel", exponent=3.0, lower_order=True),
    dict(kernel="Puk", omega=0.5, sigma=2.0),
    dict(kernel="RBFKernel", gamma=0.5),
]


@pytest.mark.parametrize("ft", [0, 1, 2])
@pytest.mark.parametrize("settings", KERNEL_SETTINGS, ids=lambda s: s["kernel"] + str(s.get("exponent", "")))
def test_smo_every_kernel_and_filter(settings, ft):
    X, y = data(3, seed=16)
    est = WekaSMO(filter_type=ft, **settings).fit(X, y)
    P = est.predict_proba(X)
    pairs = 3
    assert np.allclose(P * pairs, np.round(P * pairs))  # normalised pairwise votes
    assert np.allclose(P.sum(axis=1), 1.0)
    assert np.mean(est.predict(X) == y) > 0.6


def test_smo_kernels_give_different_models():
    X, y = data(2, n=120, seed=17)
    outputs = [WekaSMO(**s).fit(X, y)._weka_outputs(WekaSMO(**s).fit(X, y)._test_gram(X))
               for s in KERNEL_SETTINGS]
    for i in range(len(outputs)):
        for j in range(i + 1, len(outputs)):
            assert not np.allclose(outputs[i], outputs[j]), (i, j)


def test_smo_votes_are_one_hot_for_two_classes_and_calibration_is_soft():
    X, y = data(2, seed=18)
    P = WekaSMO().fit(X, y).predict_proba(X)
    assert set(np.unique(P)) <= {0.0, 1.0}
    C = WekaSMO(build_calibration=True).fit(X, y).predict_proba(X)
    assert np.mean((C > 0.01) & (C < 0.99)) > 0.1
    assert np.array_equal(np.argmax(C, 1) == 1, C[:, 1] > 0.5)


def test_smo_calibration_couples_pairwise_probabilities():
    X, y = data(4, n=200, seed=19)
    est = WekaSMO(build_calibration=True, kernel="RBFKernel", gamma=0.5).fit(X, y)
    P = est.predict_proba(X)
    assert np.allclose(P.sum(axis=1), 1.0) and len(est.calibrators_) == 6
    assert np.mean(np.argmax(P, axis=1) == y) > 0.7


def test_pairwise_coupling_recovers_consistent_probabilities():
    rng = np.random.default_rng(0)
    p = rng.dirichlet(np.ones(4), size=20)
    pairs = np.array([(i, j) for i in range(4) for j in range(i + 1, 4)])
    r = p[:, pairs[:, 0]] / (p[:, pairs[:, 0]] + p[:, pairs[:, 1]])
    coupled = functions._pairwise_coupling(r, np.ones(len(pairs)), pairs, 4)
    assert np.allclose(coupled, p, atol=0.01)


def test_normalized_poly_kernel_ignores_exponent_one_like_weka():
    X, y = data(2, seed=20)
    one = WekaSMO(kernel="NormalizedPolyKernel", exponent=1.0).fit(X, y)
    two = WekaSMO(kernel="NormalizedPolyKernel", exponent=2.0).fit(X, y)
    three = WekaSMO(kernel="NormalizedPolyKernel", exponent=3.0).fit(X, y)
    out = lambda e: e._weka_outputs(e._test_gram(X))  # noqa: E731
    assert np.allclose(out(one), out(two)) and not np.allclose(out(two), out(three))


def test_smo_weights_scale_the_cost_like_duplicated_rows():
    X, y = data(2, n=80, seed=21)
    w = np.ones(len(y))
    w[:20] = 2.0
    weighted = WekaSMO(tol=1e-6).fit(X, y, sample_weight=w)
    dup = WekaSMO(tol=1e-6).fit(np.vstack([X, X[:20]]), np.concatenate([y, y[:20]]))
    a = weighted._weka_outputs(weighted._test_gram(X))
    b = dup._weka_outputs(dup._test_gram(X))
    assert np.allclose(a, b, atol=1e-3)


# ----------------------------------------------------------------------------- SimpleLogistic
def test_simple_regression_is_the_best_single_attribute_fit():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(50, 4))
    X[:, 2] = 1.0  # constant: must be skipped
    Z, W = rng.normal(size=(50, 2)), rng.uniform(0.1, 1.0, size=(50, 2))
    attr, slope, intercept = logistic._simple_regressions(np.hstack([X, X * X]), 4, W, W * Z)
    for c in range(2):
        best = None
        for a in (0, 1, 3):
            s, i = np.polyfit(X[:, a], Z[:, c], 1, w=np.sqrt(W[:, c]))
            sse = np.sum(W[:, c] * (Z[:, c] - s * X[:, a] - i) ** 2)
            if best is None or sse < best[0]:
                best = (sse, a, s, i)
        assert attr[c] == best[1] and np.isclose(slope[c], best[2]) and np.isclose(intercept[c], best[3])


def test_logitboost_coefficients_reproduce_the_boosted_scores():
    X, y = data(3, seed=22)
    Xc = X - X.mean(0)
    lb = logistic._LogitBoost(Xc, y, 3, np.ones(len(y)), np.zeros((len(y), 3)), 0.0)
    for _ in range(15):
        assert lb.step()
    B, b = logistic._coefficients(lb.history, X.shape[1], 3)
    assert np.allclose(Xc @ B + b, lb.F)
    assert np.allclose(lb.F.sum(axis=1), 0.0)  # centred over the classes, as WEKA's F


def test_simple_logistic_iteration_rules_differ():
    X, y = data(3, n=200, seed=23)
    n = {mode: WekaSimpleLogistic(**kw).fit(X, y).n_iterations_ for mode, kw in
         {"cv": {}, "train": {"use_cross_validation": False}, "aic": {"use_aic": True}}.items()}
    assert n["train"] > n["cv"] and len(set(n.values())) >= 2
    capped = WekaSimpleLogistic(use_cross_validation=False, max_iterations=4).fit(X, y)
    assert capped.n_iterations_ <= 4


def test_simple_logistic_weight_trimming_changes_the_model():
    X, y = data(2, seed=24)
    a = WekaSimpleLogistic(use_cross_validation=False).fit(X, y).coef_
    b = WekaSimpleLogistic(use_cross_validation=False, weight_trim_beta=0.5).fit(X, y).coef_
    assert not np.allclose(a, b)
    keep = logistic._trim_mask(np.array([[5.0], [1.0], [3.0], [1.0]]), 0.2)
    assert keep[:, 0].tolist() == [True, False, True, False]  # 5 + 3 carry 80 %
    none = WekaSimpleLogistic(use_cross_validation=False, weight_trim_beta=1.0).fit(X, y)
    assert none.n_iterations_ == 0  # nothing left to fit: WEKA stops boosting


# ---------------------------------------------------------------------------------------- LMT
def _two_regimes(n=240, seed=0):
    """The class rises with x1 where x0 <= 0 and falls with it where x0 > 0: a tree helps."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, size=(n, 3))
    y = np.where(X[:, 0] <= 0, X[:, 1] > -0.5, X[:, 1] < -0.5).astype(int)
    return X, y


def test_c45_split_finds_the_separating_attribute():
    X, y = _two_regimes()
    yb = (X[:, 2] > 0.3).astype(int)
    attr, mid = logistic._c45_split(X, yb, 2)
    assert attr == 2 and abs(mid - 0.3) < 0.05
    assert logistic._c45_split(X, np.zeros(len(y), dtype=int), 2) is None  # pure node


def test_lmt_grows_a_tree_where_one_logistic_model_fails():
    X, y = _two_regimes()
    lmt = WekaLMT().fit(X, y)
    flat = WekaSimpleLogistic().fit(X, y)
    assert lmt.n_leaves_ >= 2
    assert np.mean(lmt.predict(X) == y) > np.mean(flat.predict(X) == y) + 0.15


def test_lmt_pruning_cuts_back_the_grown_tree_on_linear_logistic_data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (rng.uniform(size=200) < expit(X @ np.array([2.0, -1.0, 1.0, 0.0]))).astype(int)
    est = WekaLMT().fit(X, y)
    assert est.n_leaves_unpruned_ >= 4 and est.n_leaves_ == 1
    # the root model is SimpleLogistic's: same folds, same cross-validated iteration count
    ref = WekaSimpleLogistic().fit(X, y)
    assert est.fixed_iterations_ == ref.n_iterations_
    assert np.allclose(est.predict_proba(X), ref.predict_proba(X))


@pytest.mark.parametrize("options", [dict(split_on_residuals=True), dict(fast_regression=False),
                                     dict(use_aic=True, error_on_probabilities=True),
                                     dict(weight_trim_beta=0.3, min_num_instances=40)])
def test_lmt_options(options):
    X, y = _two_regimes(n=160, seed=1)
    est = WekaLMT(**options).fit(X, y)
    assert np.mean(est.predict(X) == y) > 0.75
    if options.get("fast_regression") is False:
        assert est.fixed_iterations_ == -1


def test_lmt_min_num_instances_limits_the_tree():
    X, y = _two_regimes()
    big = WekaLMT(min_num_instances=300).fit(X, y)
    assert big.n_leaves_ == 1  # no node has more rows than the threshold

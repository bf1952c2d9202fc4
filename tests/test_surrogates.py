"""ConditionalGP (search/methods/surrogates.py): the conditional kernel, the fit, and SMAC's facade."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from ConfigSpace import Categorical, ConfigurationSpace, EqualsCondition, Float, Integer
from scipy.optimize import approx_fprime

from ggp_automl.search.methods.surrogates import ConditionalGP, _Block, make_gp_facade_model, matern52


def small_space(seed: int = 0) -> ConfigurationSpace:
    """Three algorithms with their own numerics; SVM has a nested kernel choice, RF a leaf choice."""
    cs = ConfigurationSpace(seed=seed)
    algo = Categorical("algo", [0, 1, 2], weights=[2, 1, 1])
    C, kern = Float("svm_C", (1e-3, 1e3), log=True), Categorical("svm_kernel", [0, 1])
    gamma, deg = Float("svm_gamma", (1e-4, 1e1), log=True), Integer("svm_degree", (2, 5))
    ne, md = Integer("rf_n", (10, 200), log=True), Integer("rf_depth", (1, 20))
    crit, k = Categorical("rf_crit", [0, 1]), Integer("knn_k", (1, 30))
    cs.add([algo, C, kern, gamma, deg, ne, md, crit, k])
    cs.add([EqualsCondition(C, algo, 0), EqualsCondition(kern, algo, 0), EqualsCondition(gamma, kern, 0),
            EqualsCondition(deg, kern, 1), EqualsCondition(ne, algo, 1), EqualsCondition(md, algo, 1),
            EqualsCondition(crit, algo, 1), EqualsCondition(k, algo, 2)])
    return cs


def toy(config) -> float:
    """Best: SVM, RBF kernel, C = 10, gamma = 1e-2 (cost 0.1); RF ≈ 0.4; kNN ≈ 0.6."""
    d = dict(config)
    if d["algo"] == 0:
        c = (math.log10(d["svm_C"]) - 1) ** 2 / 9
        if d["svm_kernel"] == 0:
            return 0.1 + c + (math.log10(d["svm_gamma"]) + 2) ** 2 / 9
        return 0.6 + c + (d["svm_degree"] - 3) ** 2 / 9
    if d["algo"] == 1:
        return 0.4 + ((d["rf_depth"] - 8) / 20) ** 2 + 0.1 * d["rf_crit"]
    return 0.6 + ((d["knn_k"] - 10) / 30) ** 2


def signature(config) -> tuple:
    d = dict(config)
    return d["algo"], d.get("svm_kernel", -1), d.get("rf_crit", -1)


def data(n: int, seed: int = 0):
    cs = small_space(seed)
    configs = cs.sample_configuration(n)
    return cs, configs, np.array([c.get_array() for c in configs]), np.array([toy(c) for c in configs])


def test_inactive_entries_arrive_as_nan():
    cs, configs, X, _ = data(50)
    assert np.isnan(X).any() and np.nanmin(X) >= 0  # ConfigSpace 1.x: no sentinel, NaN for inactive
    model = ConditionalGP(cs)
    assert len({signature(c) for c in configs}) == len(set(model._keys(X)))


def test_kernel_is_zero_across_signatures_and_positive_definite_within():
    for n in (100, 300):
        cs, configs, X, y = data(n)
        sigs = [signature(c) for c in configs]
        same = np.array([[a == b for b in sigs] for a in sigs])
        for model in (ConditionalGP(cs), ConditionalGP(cs, seed=3).train(X, y[:, None])):
            K = model.kernel(X, X)
            assert np.all(K[~same] == 0.0) and np.all(K[same] > 0.0)
            nu = model.hyperparameters["noise"]
            np.linalg.cholesky(K + nu * np.eye(n))  # what the GP factorises, duplicates included
            if n > 100:
                continue  # distinct points crowd a block: PD in exact arithmetic, not in floating point
            for s in set(sigs):
                rows = np.array([i for i, t in enumerate(sigs) if t == s])
                _, first = np.unique(np.nan_to_num(X[rows], nan=-9.0), axis=0, return_index=True)
                Kb = K[np.ix_(rows[first], rows[first])]  # distinct points of one structure
                np.linalg.cholesky(Kb)
                assert np.linalg.eigvalsh(Kb).min() > 0


def test_kernel_is_matern_on_the_active_numerics_with_imputation():
    cs = small_space()
    model = ConditionalGP(cs)  # untrained: σ² = 1 and every length-scale 1
    a = cs.get_default_configuration().get_array()
    a[:] = np.nan
    idx = cs.index_of
    a[idx["algo"]], a[idx["svm_kernel"]] = 0, 0
    b = a.copy()
    a[idx["svm_C"]], a[idx["svm_gamma"]] = 0.2, 0.9
    b[idx["svm_C"]], b[idx["svm_gamma"]] = 0.5, 0.5
    r2 = 0.3**2 + 0.4**2
    assert model.kernel(a[None], b[None])[0, 0] == pytest.approx(matern52(np.array(r2)))
    c = b.copy()
    c[idx["svm_degree"]] = c[idx["knn_k"]] = -1.0  # SMAC's GP's sentinel for inactive: same as NaN
    assert model.kernel(b[None], c[None])[0, 0] == pytest.approx(1.0)
    d = a.copy()
    d[idx["svm_kernel"]] = 1  # another kernel: another structure
    assert model.kernel(a[None], d[None])[0, 0] == 0.0


def test_likelihood_gradient_matches_finite_differences():
    cs, _, X, y = data(80, seed=1)
    model = ConditionalGP(cs, max_ard=2, ard_min_obs=5, n_restarts=1, maxiter=5).train(X, y[:, None])
    assert len(model._ard) == 2
    Xf = np.asarray(X, dtype=float)
    keys, Z = model._keys(Xf), model._numerics(Xf)
    groups: dict[bytes, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    blocks = [_Block(np.array(r), model._active(Xf[r[0]])) for r in groups.values()]
    stacked = model._stack(blocks, Z, (y - y.mean()) / y.std(), model._ard)
    theta = np.array([0.3, -3.0, -0.5, 0.2, -0.4])
    _, g = model._objective(theta, stacked)
    numeric = approx_fprime(theta, lambda t: model._objective(t, stacked)[0], 1e-6)
    np.testing.assert_allclose(g, numeric, rtol=1e-4, atol=1e-3)


def test_interpolates_observations_and_gives_the_prior_to_unseen_structures():
    cs, configs, X, y = data(200, seed=2)
    seen = np.array([signature(c)[0] != 2 for c in configs])  # no kNN in the training data
    model = ConditionalGP(cs, seed=0, noise_bounds=(1e-6, 1e-4)).train(X[seen], y[seen, None])
    mean, var = model.predict(X[seen])
    assert mean.shape == var.shape == (seen.sum(), 1)
    assert np.max(np.abs(mean[:, 0] - y[seen])) < 0.02 * y[seen].std()
    hp = model.hyperparameters
    prior_var = (hp["amplitude"] + hp["noise"]) * y[seen].std() ** 2
    assert np.all(var < 0.05 * prior_var)
    m_knn, v_knn = model.predict(X[~seen])
    np.testing.assert_allclose(m_knn, y[seen].mean(), rtol=1e-12)
    np.testing.assert_allclose(v_knn, prior_var, rtol=1e-10)
    assert model.predict(X[:5], covariance_type=None)[1] is None
    np.testing.assert_allclose(model.predict(X[:5], "std")[1] ** 2, model.predict(X[:5])[1])
    full = model.predict(X[:40], "full")[1]
    assert full.shape == (40, 40)
    np.testing.assert_allclose(np.diag(full), model.predict(X[:40])[1][:, 0], rtol=1e-6, atol=1e-12)
    sigs = [signature(c) for c in configs[:40]]
    assert all(full[i, j] == 0 for i in range(40) for j in range(40) if sigs[i] != sigs[j])


def test_caps_keep_the_best_and_the_most_recent():
    cs, _, X, y = data(120, seed=4)
    model = ConditionalGP(cs, max_observations=40, max_per_block=8, n_restarts=1).train(X, y[:, None])
    assert model.n_fit <= 40
    assert max(len(b.rows) for b in model._blocks) <= 8
    kept = np.concatenate([b.rows for b in model._blocks])
    assert np.argmin(y) in kept and len(y) - 1 in kept
    unc = ConditionalGP(cs, max_observations=None, max_per_block=1000, n_restarts=1).train(X, y[:, None])
    assert unc.n_fit == 120


def test_same_seed_same_fit():
    cs, _, X, y = data(100, seed=5)
    a = make_gp_facade_model(cs, seed=7).train(X, y[:, None])
    b = make_gp_facade_model(cs, seed=7).train(X, y[:, None])
    assert a.hyperparameters == b.hyperparameters


def _smac_run(seed: int, n: int, tmp_path, seen: list | None = None):
    from smac import HyperparameterOptimizationFacade as HPO
    from smac import Scenario
    from smac.main.config_selector import ConfigSelector
    from smac.runhistory import TrialValue

    class Spy(ConditionalGP):
        def _train(self, X, Y):
            if seen is not None:
                seen.append((X.copy(), Y.copy()))
            return super()._train(X, Y)

    cs = small_space(seed)
    scenario = Scenario(cs, output_directory=tmp_path / f"smac{seed}", deterministic=True, n_trials=n, seed=seed)
    smac = HPO(scenario, lambda config, seed=0: 0.0, model=Spy(cs, seed=seed), overwrite=True, logging_level=40,
               initial_design=HPO.get_initial_design(scenario, n_configs=5),
               config_selector=ConfigSelector(scenario, retrain_after=1))
    asked = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SMAC's local search logs np.mean([]) on some steps
        for _ in range(n):
            info = smac.ask()
            info.config.check_valid_configuration()
            asked.append(info.config)
            smac.tell(info, TrialValue(cost=toy(info.config)))
    return asked


@pytest.mark.slow  # end to end, 8-16 s: with the slow suite (the developer suite's 15 minutes)
def test_plugs_into_smac_facade(tmp_path):
    seen: list = []
    asked = _smac_run(0, 30, tmp_path, seen)
    assert len(asked) == 30 and len({tuple(sorted(dict(c).items())) for c in asked}) == 30
    assert any("Acquisition" in (c.origin or "") for c in asked)
    assert len(seen) >= 20  # refit after every tell once the initial design is in
    X, Y = seen[-1]
    assert X.shape == (29, len(small_space())) and Y.shape == (29, 1)
    assert np.isnan(X).any() and np.nanmin(X) >= 0  # what SMAC 2.4 hands over: NaN for inactive


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_beats_random_sampling_on_the_toy_objective(tmp_path):
    n, seeds = 25, (0, 1, 2)
    gp = [min(toy(c) for c in _smac_run(s, n, tmp_path)) for s in seeds]
    rs = [min(toy(c) for c in small_space(s).sample_configuration(n)) for s in seeds]
    assert np.mean(gp) < np.mean(rs)

"""Lazy and Bayesian SLCs: KNN (IBk), KStar, NaiveBayes, NaiveBayesMultinomial, BayesNet."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.special import gammaln, ndtr
from sklearn.base import clone
from sklearn.datasets import make_classification

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import load_all
from ggp_automl.spaces.slc import _lazy_kstar as kstar_mod
from ggp_automl.spaces.slc._bayes_discretize import MDLDiscretizer, mdl_cut_points
from ggp_automl.spaces.slc._bayes_net_search import (Network, ScoreData, _LocalSearch, bd_score,
                                          search_structure)
from ggp_automl.spaces.slc.bayes import WekaBayesNet, WekaNaiveBayes, WekaNaiveBayesMultinomial
from ggp_automl.spaces.slc.lazy import WekaIBk, WekaKStar

SEARCHES = ("TAN", "K2", "HillClimber", "LAGDHillClimber", "SimulatedAnnealing", "TabuSearch")


def _data(n_classes=2, n=160, m=6, seed=0):
    informative = min(4, m)
    X, y = make_classification(n_samples=n, n_features=m, n_informative=informative,
                               n_redundant=int(m > informative),
                               n_classes=n_classes, n_clusters_per_class=1, random_state=seed)
    return X[: n // 2 + 40], y[: n // 2 + 40], X[n // 2 + 40:], y[n // 2 + 40:]


def _params(name, values=None, tokens=()):
    return Params(name, values=values or {}, tokens=(name,) + tuple(tokens), random_state=0)


# Every algorithm, built from Params with explicit values and with defaults.
CASES = [
    ("KNN", {}, WekaIBk, dict(n_neighbors=1, loo=False, distance_weighting="none")),
    ("KNN", {"k_nn": (7,), "loo": ("loo",), "dw": ("F",)}, WekaIBk,
     dict(n_neighbors=7, loo=True, distance_weighting="similarity")),
    ("KNN", {"k_nn": (3,), "loo": (), "dw": ("I",)}, WekaIBk,
     dict(n_neighbors=3, loo=False, distance_weighting="inverse")),
    ("KStar", {}, WekaKStar, dict(global_blend=20, entropic_auto_blend=False, missing_mode="a")),
    ("KStar", {"gb": (55,), "eab": ("eab",), "mm": ("m",)}, WekaKStar,
     dict(global_blend=55, entropic_auto_blend=True, missing_mode="m")),
    ("NaiveBayes", {}, WekaNaiveBayes, dict(estimator="normal")),
    ("NaiveBayes", {"NB-Parameters": ("uke",)}, WekaNaiveBayes, dict(estimator="kernel")),
    ("NaiveBayes", {"NB-Parameters": ("usd",)}, WekaNaiveBayes, dict(estimator="discretize")),
    ("NaiveBayesMultinomial", {}, WekaNaiveBayesMultinomial, {}),
    ("BayesNet", {}, WekaBayesNet, dict(search="K2", max_parents=2)),
] + [("BayesNet", {"bnc_search": (s,)}, WekaBayesNet, dict(search=s, max_parents=2)) for s in SEARCHES]


def _ids():
    return [f"{name}-{'-'.join(str(v[0]) if v else 'E' for v in vals.values()) or 'defaults'}"
            for name, vals, _, _ in CASES]


@pytest.mark.parametrize("name,values,cls,expected", CASES, ids=_ids())
def test_builders_map_params(name, values, cls, expected):
    registry = load_all()
    assert registry[name].kind == "slc"
    est = registry[name].build(_params(name, values, [v for vs in values.values() for v in vs]))
    assert type(est) is cls
    params = est.get_params()
    for key, value in expected.items():
        assert params[key] == value, (key, params[key])
    twin = clone(est)
    assert twin.get_params() == params and twin is not est


@pytest.mark.parametrize("name,values,cls,expected", CASES, ids=_ids())
@pytest.mark.parametrize("n_classes", [2, 3])
def test_fit_predict_contract(name, values, cls, expected, n_classes):
    Xtr, ytr, Xte, yte = _data(n_classes)
    if name == "NaiveBayesMultinomial":               # needs non-negative counts
        shift = min(Xtr.min(), Xte.min())
        Xtr, Xte = Xtr - shift, Xte - shift
    est = load_all()[name].build(_params(name, values))
    fitted = clone(est).fit(Xtr, ytr)
    assert list(fitted.classes_) == list(range(n_classes))
    proba = fitted.predict_proba(Xte)
    assert proba.shape == (Xte.shape[0], n_classes)
    assert np.all(proba >= 0) and np.all(proba <= 1)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-9)
    pred = fitted.predict(Xte)
    np.testing.assert_array_equal(pred, fitted.classes_[proba.argmax(axis=1)])
    # the learners actually learn these separable-ish problems
    assert (pred == yte).mean() > (0.55 if n_classes == 2 else 0.45)
    again = clone(est).fit(Xtr, ytr).predict_proba(Xte)
    np.testing.assert_array_equal(proba, again)          # deterministic for a fixed seed


def test_string_labels_and_single_class():
    Xtr, ytr, Xte, _ = _data(2)
    labels = np.array(["neg", "pos"])[ytr]
    for est in (WekaIBk(3), WekaKStar(), WekaNaiveBayes(), WekaBayesNet("TAN")):
        assert set(clone(est).fit(Xtr, labels).predict(Xte)) <= {"neg", "pos"}
        one = clone(est).fit(Xtr, np.zeros(len(ytr), dtype=int))
        np.testing.assert_allclose(one.predict_proba(Xte), 1.0)


# --------------------------------------------------------------------------- KNN (IBk)

def test_ibk_distribution_matches_weka_formula():
    """Normalised distance, 1/N correction, 1-d / 1/(d+0.001) weights, instance weights."""
    X = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [1.0, 2.0]])
    y = np.array([0, 1, 1, 0])
    w = np.array([1.0, 2.0, 1.0, 3.0])
    x = np.array([[0.2, 0.5]])
    norm = x / np.array([1.0, 2.0])
    Xn = X / np.array([1.0, 2.0])
    d = np.sqrt(((Xn - norm) ** 2).sum(axis=1) / 2)
    order = np.argsort(d)[:2]
    for dw, f in (("none", lambda d: np.ones_like(d)), ("similarity", lambda d: 1 - d),
                  ("inverse", lambda d: 1 / (d + 0.001))):
        dist = np.full(2, 1 / 4)
        for i in order:
            dist[y[i]] += f(d[i:i + 1])[0] * w[i]
        got = WekaIBk(2, distance_weighting=dw).fit(X, y, sample_weight=w).predict_proba(x)
        np.testing.assert_allclose(got[0], dist / dist.sum())


def test_ibk_includes_all_ties_at_kth_distance():
    X = np.array([[0.0], [1.0], [-1.0], [5.0]])
    y = np.array([0, 1, 1, 0])
    proba = WekaIBk(2).fit(X, y).predict_proba([[0.0]])   # k=2, but ±1 tie → 3 neighbours
    expected = np.array([1 + 0.25, 2 + 0.25])
    np.testing.assert_allclose(proba[0], expected / expected.sum())


def test_ibk_normalises_with_training_ranges():
    # attribute 1 has a huge range; unnormalised it would dominate the distance
    X = np.array([[0.0, 0.0], [1.0, 1000.0], [0.1, 1000.0], [0.9, 0.0]])
    y = np.array([0, 1, 0, 1])
    assert WekaIBk(1).fit(X, y).predict([[0.05, 600.0]])[0] == 0
    const = WekaIBk(1).fit(np.c_[X, np.ones(4)], y)       # a constant column adds nothing
    assert const.predict([[0.05, 600.0, 50.0]])[0] == 0


def test_ibk_sample_weight_shifts_the_vote():
    Xtr, ytr, Xte, _ = _data(2, seed=3)
    w = np.where(ytr == 1, 20.0, 1.0)
    plain = WekaIBk(9).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    heavy = WekaIBk(9).fit(Xtr, ytr, sample_weight=w).predict_proba(Xte)[:, 1]
    assert np.all(heavy >= plain - 1e-12) and heavy.mean() > plain.mean() + 0.05


def _loo_errors_brute(X, y, w, k_max, dw):
    mn, rg = X.min(0), X.max(0) - X.min(0)
    Xn = (X - mn) / np.where(rg > 0, rg, 1) * (rg > 0)
    errors = np.zeros(k_max)
    for i in range(len(y)):
        d2 = ((Xn - Xn[i]) ** 2).sum(1)
        d2[i] = np.inf
        srt = np.sort(d2)
        for k in range(1, k_max + 1):
            sel = d2 <= srt[k - 1]
            d = np.sqrt(d2[sel] / X.shape[1])
            f = {"none": np.ones_like(d), "similarity": np.maximum(0, 1 - d), "inverse": 1 / (d + 0.001)}[dw]
            votes = np.bincount(y[sel], weights=f * w[sel], minlength=y.max() + 1)
            errors[k - 1] += np.argmax(votes) != y[i]
    return errors


@pytest.mark.parametrize("dw", ["none", "similarity"])
def test_ibk_loo_picks_the_best_k(dw):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(160, 2))
    y = (X[:, 0] > 0).astype(int)
    y[rng.random(160) < 0.25] ^= 1                                 # label noise: k=1 is poor
    w = rng.uniform(0.5, 2.0, size=160)
    est = WekaIBk(25, loo=True, distance_weighting=dw).fit(X, y, sample_weight=w)
    brute = _loo_errors_brute(X, y, w, 25, dw)
    assert brute[0] > brute.min() + 5
    np.testing.assert_array_equal(est.loo_errors_, brute)
    assert est.k_ == int(np.argmin(brute)) + 1 and est.k_ > 1
    assert WekaIBk(25, loo=False).fit(X, y).k_ == 25


# --------------------------------------------------------------------------- KStar

def _sphere(d, s):
    p = s * np.exp(-2 * d * s)
    return p.sum() ** 2 / (p ** 2).sum()


@pytest.mark.parametrize("blend", [1, 20, 90])
def test_kstar_scale_solves_the_sphere_equation(blend):
    rng = np.random.default_rng(2)
    Xtr = np.c_[rng.normal(size=200), 30 * rng.normal(size=200), np.round(rng.normal(size=200), 1)]
    Xte = np.c_[rng.normal(size=25), 30 * rng.normal(size=25), np.round(rng.normal(size=25), 1)]
    kstar_mod.clear_memo()
    scale, _ = kstar_mod.kstar_scales(Xtr, Xte, blend)
    for j in range(3):
        u = Xtr[:, j]
        for i in range(25):
            d = np.abs(u - Xte[i, j])
            lowest, n0 = d.min(), int((d < d.min() + 1e-5).sum())
            nxt = d[d >= lowest + 1e-5].min()
            aim = (200 - n0) * blend / 100 + n0
            s = scale[i, j]
            if s == kstar_mod.BOT:
                assert _sphere(d, s) < aim
            elif np.isclose(s, 16 / (nxt - lowest)):
                assert _sphere(d, s) > aim
            else:
                assert abs(_sphere(d, s) - aim) <= 0.011, (j, i, _sphere(d, s), aim)


def _weka_entropic_root(u, v, cols, n_classes):
    def ent(s):
        p = s * np.exp(-2 * np.abs(u - v) * s) / u.size
        out = []
        for c in cols.T:
            with np.errstate(invalid="ignore"):    # WEKA: underflowed probabilities are skipped
                cp = np.bincount(c, weights=p, minlength=n_classes) / p.sum()
            cp = cp[cp > 0]
            out.append(-(cp * np.log2(cp)).sum())
        return out[0], np.mean(out[1:])
    d = np.sort(np.abs(u - v))
    root0 = 1 / (d[d >= d[0] + 1e-5][0] - d[0])
    bot, up = 0.005, 8 * root0
    a_up, r_up = ent(up)
    scale = ent(bot)[1] - r_up
    root = best = bot
    bestdiff = cur = 0.1
    step = (up - bot) / 20
    for it in range(1, 42):
        last = cur
        root += np.log(root + 1) * step
        if root <= bot or root >= up:
            root, cur, delta = min(max(root, bot), up), 0.0, -1.0
        else:
            a, r = ent(root)
            cur = (r - r_up) / scale - (a - a_up) / scale
            if cur < 0.1:
                cur = 0.1
                if step < 0:
                    return bot
            delta = cur - last
        if cur > bestdiff:
            bestdiff, best = cur, root
        if delta < 0:
            if abs(step) < 0.01:
                break
            step /= -4
        if it > 40:
            break
    return best


def test_kstar_entropic_blend_follows_wekas_step_search():
    rng = np.random.default_rng(3)
    Xtr = np.c_[rng.normal(size=150), 4 * rng.normal(size=150)]
    y = (Xtr[:, 0] + 0.5 * rng.normal(size=150) > 0).astype(int)
    Xte = np.c_[rng.normal(size=20), 4 * rng.normal(size=20)]
    cols = np.column_stack([y] + [rng.permutation(y) for _ in range(5)])
    kstar_mod.clear_memo()
    scale, _ = kstar_mod.kstar_scales(Xtr, Xte, 20, True, "a", cols)
    ref = np.array([[_weka_entropic_root(Xtr[:, j], Xte[i, j], cols, 2) for j in range(2)]
                    for i in range(20)])
    np.testing.assert_allclose(scale, ref, rtol=0.02)


def test_kstar_probabilities_are_the_normalised_similarity_sums():
    Xtr, ytr, Xte, _ = _data(3, n=90, m=3)
    est = WekaKStar(global_blend=35).fit(Xtr, ytr)
    scale, _ = kstar_mod.kstar_scales(Xtr, Xte, 35)
    sim = np.prod(scale[:, None, :] * np.exp(-2 * scale[:, None, :]
                                             * np.abs(Xte[:, None, :] - Xtr[None, :, :])), axis=2)
    expected = np.stack([sim[:, ytr == c].sum(1) for c in range(3)], axis=1)
    np.testing.assert_allclose(est.predict_proba(Xte), expected / expected.sum(1, keepdims=True),
                               rtol=1e-9, atol=1e-12)


def test_kstar_blend_controls_locality():
    Xtr, ytr, _, _ = _data(2, seed=4)
    local = WekaKStar(global_blend=1).fit(Xtr, ytr)
    glob = WekaKStar(global_blend=100).fit(Xtr, ytr)
    assert (local.predict(Xtr) == ytr).mean() > 0.97          # ~ nearest neighbour on its own rows
    prior = np.bincount(ytr) / len(ytr)
    np.testing.assert_allclose(glob.predict_proba(Xtr), np.tile(prior, (len(ytr), 1)), atol=0.05)


def test_kstar_missing_modes():
    X = np.array([[0.0, 0.0], [0.1, np.nan], [5.0, 5.0], [5.1, 5.2], [0.2, 0.1]])
    y = np.array([0, 1, 1, 1, 0])
    q = np.array([[0.1, 0.05]])
    probs = {m: WekaKStar(missing_mode=m).fit(X, y).predict_proba(q)[0, 1] for m in "admn"}
    # d: a missing value never matches, so row 1 adds nothing; n: it matches with probability 1
    assert probs["d"] < probs["m"] <= probs["a"] < probs["n"]
    p_test_missing = WekaKStar().fit(X, y).predict_proba([[0.1, np.nan]])
    np.testing.assert_allclose(p_test_missing.sum(), 1.0)


def test_kstar_memo_is_transparent():
    Xtr, ytr, Xte, _ = _data(2, n=100, m=3)
    kstar_mod.clear_memo()
    first = WekaKStar().fit(Xtr, ytr).predict_proba(Xte)
    cached = WekaKStar().fit(Xtr, 1 - ytr).predict_proba(Xte)       # other label, same scales
    kstar_mod.clear_memo()
    fresh = WekaKStar().fit(Xtr, 1 - ytr).predict_proba(Xte)
    np.testing.assert_array_equal(cached, fresh)
    np.testing.assert_allclose(first, fresh[:, ::-1])


# --------------------------------------------------------------------------- NaiveBayes

def _interval(x, mean, sd, prec):
    return (ndtr((x - mean + prec / 2) / sd) - ndtr((x - mean - prec / 2) / sd)) / prec


def test_naive_bayes_normal_matches_weka_estimator():
    X = np.array([[1.0], [1.5], [1.5], [3.0], [4.0], [4.5]])
    y = np.array([0, 0, 0, 1, 1, 1])
    w = np.array([1.0, 2.0, 1.0, 1.0, 1.0, 3.0])
    est = WekaNaiveBayes().fit(X, y, sample_weight=w)
    prec = (4.5 - 1.0) / 4                                   # mean gap of the distinct values
    assert est.precision_[0] == pytest.approx(prec)
    x = 2.2
    post = []
    for c, idx in ((0, [0, 1, 2]), (1, [3, 4, 5])):
        v = np.rint(X[idx, 0] / prec) * prec
        ww = w[idx]
        mean = (ww * v).sum() / ww.sum()
        sd = max(prec / 6, np.sqrt(abs((ww * v * v).sum() - mean * (ww * v).sum()) / ww.sum()))
        prior = (ww.sum() + 1) / (w.sum() + 2)
        post.append(prior * _interval(np.rint(x / prec) * prec, mean, sd, prec))
    np.testing.assert_allclose(est.predict_proba([[x]])[0], np.array(post) / sum(post))


def test_naive_bayes_kernel_matches_direct_sum():
    rng = np.random.default_rng(5)
    x = np.round(rng.normal(size=60), 2)
    y = (x + rng.normal(size=60) > 0).astype(int)
    w = rng.uniform(0.5, 2, size=60)
    est = WekaNaiveBayes("kernel").fit(x[:, None], y, sample_weight=w)
    prec = est.precision_[0]
    q = np.array([-1.234, 0.1, 2.5, 9.0])
    got = est.kernels_[0].density(q)
    for c in (0, 1):
        v = np.rint(x[y == c] / prec) * prec
        ww = w[y == c]
        sd = max((v.max() - v.min()) / np.sqrt(ww.sum()), prec / 6)
        qr = np.rint(q / prec) * prec
        direct = np.array([(ww * _interval(v, t, sd, prec)).sum() / ww.sum() for t in qr])
        np.testing.assert_allclose(got[:, c], direct, rtol=1e-9, atol=1e-300)


def test_naive_bayes_kernel_differs_from_normal_on_bimodal_data():
    rng = np.random.default_rng(6)
    x = np.r_[rng.normal(-3, 0.3, 80), rng.normal(3, 0.3, 80), rng.normal(0, 4, 80)]
    y = np.r_[np.zeros(160, int), np.ones(80, int)]
    normal = WekaNaiveBayes().fit(x[:, None], y)
    kernel = WekaNaiveBayes("kernel").fit(x[:, None], y)
    q = np.array([[0.0], [3.0]])
    np.testing.assert_array_equal(normal.predict(q), [0, 0])   # one Gaussian centred on 0
    np.testing.assert_array_equal(kernel.predict(q), [1, 0])   # class 0 has no mass at 0


def test_naive_bayes_discretize_uses_laplace_counts():
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, size=200)
    y = (x > 0.25).astype(int)
    est = WekaNaiveBayes("discretize").fit(x[:, None], y)
    cuts = est.discretizer_.cut_points_[0]
    assert cuts.size == 1 and abs(cuts[0] - 0.25) < 0.05
    left0 = ((x <= cuts[0]) & (y == 0)).sum()
    p_bin_given0 = (left0 + 1) / ((y == 0).sum() + 2)
    np.testing.assert_allclose(np.exp(est.feature_log_prob_[0][0, 0]), p_bin_given0)


def test_naive_bayes_sample_weight_shifts_posterior():
    Xtr, ytr, Xte, _ = _data(2, seed=8)
    w = np.where(ytr == 1, 5.0, 1.0)
    for option in ("normal", "kernel", "discretize"):
        plain = WekaNaiveBayes(option).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
        heavy = WekaNaiveBayes(option).fit(Xtr, ytr, sample_weight=w).predict_proba(Xte)[:, 1]
        assert heavy.mean() > plain.mean() + 0.02, option


# --------------------------------------------------------------------------- MDL discretisation

def test_mdl_cut_points_follow_fayyad_irani():
    x = np.r_[np.linspace(0, 1, 30), np.linspace(2, 3, 30), np.linspace(4, 5, 30)]
    y = np.r_[np.zeros(30, int), np.ones(30, int), np.zeros(30, int)]
    np.testing.assert_allclose(mdl_cut_points(x, y, np.ones(90), 2), [1.5, 3.5])
    rng = np.random.default_rng(9)
    noise = rng.normal(size=300)
    assert mdl_cut_points(noise, rng.integers(0, 2, 300), np.ones(300), 2).size == 0
    # a pure split of one odd row out of 8: gain 0.544 bits < (log2 7 + log2 7 - 2·0.544) / 8,
    # so MDL rejects it; with weight 10 per row the threshold divides by 80 and it passes
    xs = np.arange(8.0)
    ys = np.array([0, 0, 0, 0, 0, 0, 0, 1])
    assert mdl_cut_points(xs, ys, np.ones(8), 2).size == 0
    np.testing.assert_allclose(mdl_cut_points(xs, ys, np.full(8, 10.0), 2), [6.5])
    disc = MDLDiscretizer().fit(x[:, None], y)
    np.testing.assert_array_equal(disc.transform(np.array([[1.5], [1.6], [9.0]]))[:, 0], [0, 1, 2])


# --------------------------------------------------------------------------- NaiveBayesMultinomial

def test_multinomial_rejects_negative_values_and_matches_formula():
    X = np.array([[2.0, 0.0, 1.0], [3.0, 1.0, 0.0], [0.0, 4.0, 1.0]])
    y = np.array([0, 0, 1])
    with pytest.raises(ValueError, match="Negative values in data"):
        WekaNaiveBayesMultinomial().fit(X - 1.0, y)
    w = np.array([1.0, 2.0, 1.0])
    est = WekaNaiveBayesMultinomial().fit(X, y, sample_weight=w)
    words0 = 1 + X[0] + 2 * X[1]
    words1 = 1 + X[2]
    prior = np.array([(3 + 1) / (4 + 2), (1 + 1) / (4 + 2)])
    q = np.array([1.0, 2.0, 0.0])
    logp = np.log(prior) + np.array([q @ np.log(words0 / words0.sum()), q @ np.log(words1 / words1.sum())])
    expected = np.exp(logp - logp.max())
    np.testing.assert_allclose(est.predict_proba(q[None])[0], expected / expected.sum())
    plain = WekaNaiveBayesMultinomial().fit(X, y).predict_proba(q[None])[0, 0]
    assert est.predict_proba(q[None])[0, 0] > plain        # weight 2 on a class-0 row


# --------------------------------------------------------------------------- BayesNet

def _bd_brute(Z, cards, node, parents, alpha=0.5):
    score = 0.0
    configs = {}
    for row in Z:
        key = tuple(row[list(parents)])
        configs.setdefault(key, np.zeros(cards[node]))[row[node]] += 1
    r = cards[node]
    for counts in configs.values():
        score += gammaln(r * alpha) - gammaln(r * alpha + counts.sum())
        score += (gammaln(alpha + counts) - gammaln(alpha)).sum()
    return score


def test_bayes_score_matches_brute_force():
    rng = np.random.default_rng(10)
    Z = np.column_stack([rng.integers(0, 3, 80), rng.integers(0, 2, 80), rng.integers(0, 4, 80),
                         rng.integers(0, 2, 80)])
    cards = np.array([3, 2, 4, 2])
    data = ScoreData(Z, cards)
    for node, parents in ((0, ()), (0, (3,)), (2, (1, 3)), (3, (0, 1, 2))):
        assert data.node_score(node, parents) == pytest.approx(_bd_brute(Z, cards, node, parents))
    row = data.scores_with_extra_parent(2, (3,))
    for j in (0, 1):
        assert row[j] == pytest.approx(_bd_brute(Z, cards, 2, (3, j)))
    assert np.isneginf(row[2]) and np.isneginf(row[3])
    counts = np.array([[3, 0], [1, 1]])
    assert bd_score(counts, 0.5) == pytest.approx(
        sum(gammaln(1) - gammaln(1 + c.sum()) + (gammaln(0.5 + c) - gammaln(0.5)).sum() for c in counts))


def _is_dag(parents):
    net = Network(len(parents), len(parents) - 1, naive_bayes=False)
    for h, ps in enumerate(parents):
        for t in ps:
            net.add(t, h)
    return net.is_dag()


@pytest.fixture(scope="module")
def bn_data():
    X, y = make_classification(n_samples=240, n_features=7, n_informative=4, n_redundant=2,
                               n_classes=3, n_clusters_per_class=1, random_state=11)
    return X, y


@pytest.mark.parametrize("search", SEARCHES)
def test_bayes_net_structures_are_valid(bn_data, search):
    X, y = bn_data
    est = WekaBayesNet(search, random_state=0).fit(X, y)
    parents = est.parents_
    cls = est.class_node_
    assert len(parents) == X.shape[1] + 1 and _is_dag(parents)
    if search != "SimulatedAnnealing":
        assert max(len(p) for p in parents) <= 2
    if search == "TAN":
        assert all(cls in parents[i] for i in range(cls))
        tree_arcs = sum(len(p) - 1 for p in parents[:cls])
        assert tree_arcs == cls - 1 and parents[cls] == ()
    if search == "K2":
        assert parents[cls] == ()
        assert all(p < i for i in range(cls) for p in parents[i] if p != cls)   # data order
    assert np.isfinite(est.predict_proba(X)).all()


def test_bayes_net_local_searches_end_in_local_optima(bn_data):
    X, y = bn_data
    est = WekaBayesNet("HillClimber").fit(X, y)
    Z = np.column_stack([est.discretizer_.transform(X), np.unique(y, return_inverse=True)[1]])
    data = ScoreData(Z, est.cards_)
    ls = _LocalSearch(data, est.class_node_, 2)
    for h, ps in enumerate(est.parents_):
        for t in set(ls.net.parents[h]) - set(ps):
            ls.perform((0.0, 1, t, h))
        for t in set(ps) - set(ls.net.parents[h]):
            ls.perform((0.0, 0, t, h))
    best = ls.best_operation()
    assert best is None or best[0] <= 1e-9
    naive = sum(data.node_score(i, (est.class_node_,) if i != est.class_node_ else ())
                for i in range(Z.shape[1]))
    for search in ("HillClimber", "LAGDHillClimber", "TabuSearch", "K2"):
        ps = search_structure(search, data, est.class_node_)
        total = sum(data.node_score(i, p) for i, p in enumerate(ps))
        assert total >= naive - 1e-9, search       # never worse than the naive-Bayes start


def test_bayes_net_simulated_annealing_depends_on_seed_only(bn_data):
    X, y = bn_data
    a = WekaBayesNet("SimulatedAnnealing", random_state=1).fit(X, y).parents_
    b = WekaBayesNet("SimulatedAnnealing", random_state=1).fit(X, y).parents_
    assert a == b


def test_bayes_net_cpts_are_weighted_counts():
    # with a single attribute every search keeps the naive-Bayes graph: P(c|x) ∝ P(c) P(x|c)
    rng = np.random.default_rng(12)
    x = rng.uniform(-1, 1, size=200)
    y = (x > 0).astype(int)
    w = rng.uniform(0.5, 3.0, size=200)
    est = WekaBayesNet("K2").fit(x[:, None], y, sample_weight=w)
    assert est.parents_ == [(1,), ()]
    b = est.discretizer_.transform(x[:, None])[:, 0]
    q = 0.5
    qb = est.discretizer_.transform(np.array([[q]]))[0, 0]
    prior = np.array([(w[y == c].sum() + 0.5) / (w.sum() + 1.0) for c in (0, 1)])
    r = est.cards_[0]
    lik = np.array([(w[(y == c) & (b == qb)].sum() + 0.5) / (w[y == c].sum() + 0.5 * r) for c in (0, 1)])
    np.testing.assert_allclose(est.predict_proba([[q]])[0], prior * lik / (prior * lik).sum())
    heavy = WekaBayesNet("K2").fit(x[:, None], y, sample_weight=np.where(y == 0, 50.0, 1.0))
    assert heavy.predict_proba([[q]])[0, 0] > est.predict_proba([[q]])[0, 0]


def test_unknown_options_fail_loudly():
    X, y = np.zeros((4, 1)), np.array([0, 1, 0, 1])
    with pytest.raises(ValueError):
        WekaBayesNet("Bogus").fit(X, y)
    with pytest.raises(ValueError):
        WekaNaiveBayes("bogus").fit(X, y)
    with pytest.raises(ValueError):
        WekaIBk(distance_weighting="x").fit(X, y)
    with pytest.raises(ValueError):
        WekaKStar(missing_mode="z").fit(X, y)

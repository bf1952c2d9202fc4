"""Chain and trellis methods: PCC, MCC, PMCC, BCC (chains.py), CT, CDN, CDT (trellis.py), payoffs."""
from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.datasets import make_multilabel_classification
from sklearn.linear_model import LogisticRegression
from sklearn.multioutput import ClassifierChain
from sklearn.naive_bayes import GaussianNB
from sklearn.tree import DecisionTreeClassifier
from threadpoolctl import threadpool_limits

from ggp_automl.spaces import deadline
from ggp_automl.spaces.mlc import _payoff
from ggp_automl.spaces.mlc.chains import (BCC, MCC, PCC, PMCC, first_difference, fit_chain, greedy_paths, path_scores,
                               pcc_beam_width, pcc_search)
from ggp_automl.spaces.mlc.trellis import (CDN, CDT, CT, dependency_matrix, gibbs_marginals, order_trellis,
                                trellis_width)
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import REGISTRY

from .conftest import GRAMMARS


@pytest.fixture(autouse=True)
def _one_thread():
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def data():
    X, Y = make_multilabel_classification(200, 10, n_classes=5, random_state=0)
    return X.astype(float), Y


def lr():
    return LogisticRegression(max_iter=200)


def tree():
    return DecisionTreeClassifier(max_depth=3, random_state=0)


# ----------------------------------------------------------------------------- builders

# (terminal, explicit values, tokens, expected attributes, base)
EXPLICIT = [
    ("PCC", {}, ("PCC",), {}, lr),
    ("MCC", {"chi_mcc": (3,), "ii": (5,), "pof": ("Hamming_loss",)}, ("MCC", 3, 5, "Hamming_loss"),
     {"chain_iterations": 3, "inference_iterations": 5, "payoff": "Hamming_loss"}, lr),
    ("PMCC", {"B": (0.5,), "ts": ("1",), "ii": (4,), "chi_PMCC": (6,), "ps": (3,), "pof": ("F1_micro",)},
     ("PMCC", 0.5, "1", 4, 6, 3, "F1_micro"),
     {"beta": 0.5, "temperature": True, "inference_iterations": 4, "chain_iterations": 6,
      "population_size": 3, "payoff": "F1_micro"}, lr),
    ("BCC", {"dp_bcc": ("LEAD",)}, ("BCC", "LEAD"), {"dependency": "LEAD"}, lr),
    ("BCC", {"dp_bcc": ("X",)}, ("BCC", "X"), {"dependency": "X"}, lr),
    ("CT", {"chi_ct": (5,), "w": ("0", "1"), "dp_ct": ("I",), "ii": (3,), "pof": ("Rank_loss",)},
     ("CT", 5, "0", "1", "I", 3, "Rank_loss"),
     {"chain_iterations": 5, "width": 0, "density": 1, "dependency": "I", "inference_iterations": 3}, lr),
    ("CT", {"chi_ct": (2,), "w": ("-1", 2), "d": (2,), "dp_ct": ("C",), "ii": (2,), "pof": ("Accuracy",)},
     ("CT", 2, "-1", 2, "C", 2, "Accuracy"), {"width": -1, "density": 2, "dependency": "C"}, lr),
    ("CDN", {"i_cdn_cdt": (150,), "ci": (20,)}, ("CDN", 150, 20),
     {"iterations": 150, "collection_iterations": 20}, lr),
    ("CDT", {"w": ("-1", 2), "d": (2,), "dp_cdt": ("C",), "i_cdn_cdt": (120,), "ci": (10,)},
     ("CDT", "-1", 2, "C", 120, 10),
     {"width": -1, "density": 2, "dependency": "C", "iterations": 120, "collection_iterations": 10}, lr),
]

DEFAULTS = {
    "PCC": {},
    "MCC": {"chain_iterations": 0, "inference_iterations": 10, "payoff": "Exact_match"},
    "PMCC": {"population_size": 10, "chain_iterations": 50, "inference_iterations": 10, "beta": 0.03,
             "temperature": False, "payoff": "Exact_match"},
    "BCC": {"dependency": "Ibf"},
    "CT": {"chain_iterations": 0, "width": -1, "density": 1, "dependency": "Ibf", "inference_iterations": 10},
    "CDN": {"iterations": 1000, "collection_iterations": 100},
    "CDT": {"width": -1, "density": 1, "dependency": "None", "iterations": 1000, "collection_iterations": 100},
}


def build(name, values=None, tokens=None, base=None):
    p = Params(name, values=values or {}, tokens=tokens or (name,), random_state=0)
    return REGISTRY[name].build(p, base if base is not None else GaussianNB())


def test_registered_as_mlc():
    import ggp_automl.spaces.mlc.chains  # noqa: F401
    import ggp_automl.spaces.mlc.trellis  # noqa: F401
    for name in DEFAULTS:
        assert REGISTRY[name].kind == "mlc"


@pytest.mark.parametrize("name,values,tokens,expected,base", EXPLICIT,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(EXPLICIT)])
def test_builder_explicit(data, name, values, tokens, expected, base):
    X, Y = data
    est = build(name, values, tokens, base())
    for attr, value in expected.items():
        assert getattr(est, attr) == value, attr
    assert est.random_state == 0 and isinstance(est.base, LogisticRegression)
    S = est.fit(X, Y).predict_scores(X)
    assert S.shape == Y.shape and np.all((S >= 0) & (S <= 1))


@pytest.mark.parametrize("name", sorted(DEFAULTS))
def test_builder_defaults(data, name):
    X, Y = data
    est = build(name)
    for attr, value in DEFAULTS[name].items():
        assert getattr(est, attr) == value, attr
    if name == "CDT":   # 1000 Gibbs sweeps are run once, by CDN; keep the test fast
        est.set_params(iterations=150, collection_iterations=50)
    S = est.fit(X, Y).predict_scores(X[:60])
    assert S.shape == (60, Y.shape[1]) and np.all((S >= 0) & (S <= 1))


# ----------------------------------------------------------------------------- estimator contract

SMALL = {
    "PCC": lambda b: PCC(b, random_state=3),
    "MCC": lambda b: MCC(b, chain_iterations=3, inference_iterations=5, random_state=3),
    "PMCC": lambda b: PMCC(b, population_size=3, chain_iterations=5, inference_iterations=5,
                           temperature=True, random_state=3),
    "BCC": lambda b: BCC(b, dependency="I", random_state=3),
    "BCC-LEAD": lambda b: BCC(b, dependency="LEAD", random_state=3),
    "CT": lambda b: CT(b, chain_iterations=2, width=-1, density=2, inference_iterations=5, random_state=3),
    "CDN": lambda b: CDN(b, iterations=60, collection_iterations=20, random_state=3),
    "CDT": lambda b: CDT(b, width=-1, density=1, dependency="X", iterations=60, collection_iterations=20,
                         random_state=3),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_clone_fit_deterministic(data, name):
    X, Y = data
    est = SMALL[name](lr())
    twin = clone(est)
    assert twin.get_params(deep=False).keys() == est.get_params(deep=False).keys()
    assert isinstance(twin.base, LogisticRegression) and twin.base is not est.base
    assert not hasattr(twin, "network_") and not hasattr(twin, "networks_")
    a = est.fit(X, Y).predict_scores(X)
    b = twin.fit(X, Y).predict_scores(X)
    assert a.shape == Y.shape and np.all((a >= 0) & (a <= 1))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, est.predict_scores(X))           # predict is repeatable
    assert set(np.unique(est.predict(X))) <= {0, 1}
    other = clone(est).set_params(random_state=4).fit(X, Y).predict_scores(X)
    assert other.shape == a.shape


@pytest.mark.parametrize("name", sorted(SMALL))
def test_constant_label(data, name):
    X, Y = data
    Y = Y.copy()
    Y[:, 1] = 0
    Y[:, 3] = 1
    S = SMALL[name](lr()).fit(X, Y).predict_scores(X)
    np.testing.assert_allclose(S[:, 1], 0.0)
    np.testing.assert_allclose(S[:, 3], 1.0)


@pytest.mark.parametrize("name", ["PCC", "MCC0", "CT0", "BCC"])
def test_zero_weights_equal_subset(data, name):
    """Zero weights drop rows: the same chain as a fit on the remaining rows."""
    X, Y = data
    make = {"PCC": lambda: PCC(lr()),
            "MCC0": lambda: MCC(lr(), chain_iterations=0, inference_iterations=0),
            "CT0": lambda: CT(lr(), width=-1, density=2, inference_iterations=0),
            "BCC": lambda: BCC(lr(), dependency="None")}[name]
    w = np.r_[np.ones(120), np.zeros(80)]
    weighted = make().fit(X, Y, sample_weight=w).predict_scores(X)
    subset = make().fit(X[:120], Y[:120]).predict_scores(X)
    plain = make().fit(X, Y).predict_scores(X)
    np.testing.assert_allclose(weighted, subset, atol=2e-3)
    assert np.abs(weighted - plain).max() > 1e-2


@pytest.mark.parametrize("name", ["PMCC", "CDN", "CDT", "BCC-LEAD"])
def test_sample_weight_used(data, name):
    X, Y = data
    w = np.r_[np.ones(120), np.zeros(80)]
    weighted = SMALL[name](lr()).fit(X, Y, sample_weight=w).predict_scores(X)
    plain = SMALL[name](lr()).fit(X, Y).predict_scores(X)
    assert np.all((weighted >= 0) & (weighted <= 1))
    assert np.abs(weighted - plain).max() > 1e-2


# ----------------------------------------------------------------------------- PCC

def test_pcc_exhaustive_equals_brute_force():
    X, Y = make_multilabel_classification(200, 10, n_classes=4, random_state=2)
    pcc = PCC(lr()).fit(X, Y)
    paths, scores, logp = pcc._search(X)
    candidates = np.array(list(itertools.product([0, 1], repeat=4)), dtype=np.int8)
    every = np.stack([path_scores(pcc.network_, X, np.tile(v, (len(X), 1)))[1] for v in candidates], axis=1)
    best = candidates[every.argmax(axis=1)]
    np.testing.assert_array_equal(paths, best)
    np.testing.assert_allclose(logp, every.max(axis=1), atol=1e-12)
    np.testing.assert_allclose(scores, path_scores(pcc.network_, X, best)[0])
    greedy = greedy_paths(pcc.network_, X)[0]
    assert np.any(greedy != paths)                    # the search matters on this data


def test_pcc_beam_cut_off():
    assert pcc_beam_width(14) == 2 ** 13             # exhaustive up to L = 14
    assert pcc_beam_width(15) < 2 ** 14 and pcc_beam_width(174) >= 1
    X, Y = make_multilabel_classification(150, 8, n_classes=6, random_state=2)
    pcc = PCC(tree()).fit(X, Y)
    greedy_p, _, greedy_lp = greedy_paths(pcc.network_, X)
    beam1, _, lp1 = pcc_search(pcc.network_, X, 1)     # width 1 is the greedy path
    np.testing.assert_array_equal(beam1, greedy_p)
    _, _, lp4 = pcc_search(pcc.network_, X, 4)
    _, _, exact = pcc_search(pcc.network_, X, 2 ** 5)
    assert np.all(lp4 >= greedy_lp - 1e-12) and np.all(exact >= lp4 - 1e-12)
    assert np.any(exact > greedy_lp + 1e-9)


# ----------------------------------------------------------------------------- MCC / PMCC

def test_mcc_without_search_is_cc(data):
    X, Y = data
    mcc = MCC(lr(), chain_iterations=0, inference_iterations=0).fit(X, Y)
    cc = ClassifierChain(lr(), order=None).fit(X, Y)
    np.testing.assert_allclose(mcc.predict_scores(X), cc.predict_proba(X), atol=1e-8)
    np.testing.assert_array_equal(mcc.predict(X), cc.predict(X))
    np.testing.assert_array_equal(mcc.order_, np.arange(Y.shape[1]))
    # sampling only ever replaces the greedy path by a more probable one
    sampled = MCC(lr(), chain_iterations=0, inference_iterations=20).fit(X, Y)
    _, _, lp = sampled._search(X)
    _, _, greedy_lp = greedy_paths(sampled.network_, X)
    assert np.all(lp >= greedy_lp) and np.any(lp > greedy_lp)


def test_chain_proposal_reuses_nodes_and_predictions(data):
    X, Y = data
    order = np.arange(5)
    net = fit_chain(tree(), X, Y, order)
    cand = np.array([0, 1, 3, 2, 4])
    cand_net = fit_chain(tree(), X, Y, cand, reuse=net)
    assert cand_net.models[0] is net.models[0] and cand_net.models[4] is net.models[4]
    assert cand_net.models[2] is not net.models[2]
    full = greedy_paths(cand_net, X)
    state = greedy_paths(net, X)[:2]
    resumed = greedy_paths(cand_net, X, resume=(*state, first_difference(order, cand)))
    for a, b in zip(full, resumed):
        np.testing.assert_array_equal(a, b)
    fresh = fit_chain(tree(), X, Y, cand)
    np.testing.assert_array_equal(greedy_paths(fresh, X)[1], full[1])


@pytest.mark.parametrize("payoff,best", [("Hamming_loss", min), ("ZeroOne_loss", min),
                                         ("Hamming_score", max), ("Exact_match", max)])
def test_mcc_payoff_orientation(data, payoff, best):
    """Decision 4: losses are minimised, gains maximised."""
    X, Y = data
    mcc = MCC(tree(), chain_iterations=10, inference_iterations=2, payoff=payoff, random_state=1).fit(X, Y)
    rated = mcc.search_payoffs_
    assert len(rated) == 11 and len(set(rated)) > 1
    assert mcc.payoff_ == best(rated)


def test_pmcc_population_and_weights(data):
    X, Y = data
    pm = PMCC(tree(), population_size=4, chain_iterations=12, payoff="Hamming_loss", random_state=2).fit(X, Y)
    assert len(pm.networks_) == 4 and np.isclose(pm.weights_.sum(), 1.0)
    assert all(sorted(o) == list(range(Y.shape[1])) for o in pm.orders_)
    # lower loss, higher weight
    assert pm.payoffs_[np.argmax(pm.weights_)] == pm.payoffs_.min()
    assert np.all(np.diff(pm.weights_[np.argsort(pm.payoffs_)]) <= 1e-12)
    _, _, lp = pm._search(X)
    _, _, start = greedy_paths(pm.networks_[int(np.argmax(pm.weights_))], X)
    assert np.all(lp >= start)


def test_payoff_utilities_prefer_perfect_predictions():
    X, Y = make_multilabel_classification(80, 5, n_classes=6, allow_unlabeled=False, random_state=5)
    rng = np.random.default_rng(0)
    S_bad = rng.random(Y.shape)
    P_bad = (S_bad > 0.5).astype(int)
    names = re.search(r"<pof>\s*::=(.*?)\n\s*\n", (GRAMMARS / "large.bnf").read_text(), re.S).group(1)
    grammar_names = [t for t in re.sub(r"#.*", "", names).replace("|", " ").split()]
    assert len(grammar_names) == 23 and set(grammar_names) == set(_payoff.PAYOFFS)
    for name in grammar_names:
        good = _payoff.utility(name, Y, Y, Y.astype(float))
        bad = _payoff.utility(name, Y, P_bad, S_bad)
        assert good > bad, name
        raw_good = _payoff.raw_payoff(name, Y, Y, Y.astype(float))
        raw_bad = _payoff.raw_payoff(name, Y, P_bad, S_bad)
        assert (raw_good < raw_bad) if _payoff.get_payoff(name).loss else (raw_good > raw_bad), name
    assert _payoff.get_payoff("Exact match") is _payoff.PAYOFFS["Exact_match"]
    with pytest.raises(ValueError):
        _payoff.get_payoff("Accuracy2")


def test_levenshtein_matches_reference():
    def reference(a, b):
        d = list(range(len(b) + 1))
        for i, x in enumerate(a, 1):
            prev, d[0] = d[0], i
            for j, y in enumerate(b, 1):
                prev, d[j] = d[j], min(d[j] + 1, d[j - 1] + 1, prev + (x != y))
        return d[-1]
    rng = np.random.default_rng(1)
    for L in (1, 2, 7):
        Y, P = rng.integers(0, 2, (30, L)), rng.integers(0, 2, (30, L))
        want = np.mean([reference(list(y), list(p)) for y, p in zip(Y, P)]) / L
        assert _payoff.levenshtein_distance(Y, P, None) == pytest.approx(want)


# ----------------------------------------------------------------------------- BCC and dependency matrices

def test_dependency_matrices():
    rng = np.random.default_rng(0)
    a = rng.integers(0, 2, 300)
    Y = np.column_stack([a, a, rng.integers(0, 2, 300), 1 - a])
    for kind in ("C", "I", "Ib", "Ibf", "H", "X", "F"):
        W = dependency_matrix(Y, kind)
        assert W.shape == (4, 4) and np.allclose(W, W.T) and np.allclose(np.diag(W), 0), kind
        assert np.all(np.isfinite(W)), kind
    for kind in ("I", "X"):        # identical or complementary labels depend more than independent ones
        W = dependency_matrix(Y, kind)
        assert W[0, 1] > W[0, 2] and W[0, 3] > W[0, 2], kind
    assert dependency_matrix(Y, "C")[0, 1] == pytest.approx(a.mean())
    assert dependency_matrix(Y, "C")[0, 3] == pytest.approx(0.0001)
    np.testing.assert_array_equal(dependency_matrix(Y, "Hbf"), np.zeros((4, 4)))   # MEKA I-23
    np.testing.assert_array_equal(dependency_matrix(Y, "None"), np.zeros((4, 4)))
    with pytest.raises(ValueError):
        dependency_matrix(Y, "LEAD")


def test_bcc_tree(data):
    X, Y = data
    Y = Y.copy()
    Y[:, 4] = Y[:, 2]                    # labels 2 and 4 are the most dependent pair
    bcc = BCC(lr(), dependency="I").fit(X, Y)
    order, parent = bcc.order_, bcc.parent_
    assert order[0] == 0 and parent[0] == -1 and sorted(order) == list(range(5))
    position = {j: i for i, j in enumerate(order)}
    for j in range(1, 5):
        assert parent[j] >= 0 and position[parent[j]] < position[j]
        np.testing.assert_array_equal(bcc.network_.parents[j], [parent[j]])
    assert parent[4] == 2 or parent[2] == 4


# ----------------------------------------------------------------------------- CT / CDT geometry

def test_ct_width_zero_is_a_chain(data):
    X, Y = data
    for chi in (0, 3):
        ct = CT(lr(), chain_iterations=chi, width=0, dependency="I", inference_iterations=2).fit(X, Y)
        order = ct.order_
        assert ct.width_ == Y.shape[1]
        assert ct.network_.parents[order[0]].size == 0
        for prev, j in zip(order[:-1], order[1:]):
            np.testing.assert_array_equal(ct.network_.parents[j], [prev])


def test_trellis_layouts(data):
    X, Y = data
    assert trellis_width(-1, 14) == 3 and trellis_width(0, 14) == 14 and trellis_width(-1, 2) == 1
    ct = CT(lr(), width=-1, density=2, inference_iterations=0).fit(X, Y)   # 5 labels, width 2
    pa = [sorted(p.tolist()) for p in ct.network_.parents]
    assert pa == [[], [0], [0], [0, 1, 2], [2]]
    cdt = CDT(lr(), width=-1, density=1, dependency="None", iterations=5, collection_iterations=2).fit(X, Y)
    o = cdt.order_
    nb = {j: sorted(cdt.network_.parents[j].tolist()) for j in range(5)}
    assert nb[o[0]] == sorted([o[1], o[2]]) and nb[o[3]] == sorted([o[1], o[2]])
    assert nb[o[4]] == [o[2]]
    assert all(a in nb[b] for a in range(5) for b in nb[a])          # undirected


def test_order_trellis_follows_dependencies():
    W = np.zeros((4, 4))
    W[0, 3] = W[3, 0] = 5.0
    W[3, 1] = W[1, 3] = 4.0
    W[1, 2] = W[2, 1] = 3.0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        order = order_trellis(np.arange(4), lambda q: [q - 1] if q else [], W, rng)
        for a, b in zip(order[:-1], order[1:]):      # greedy: always the strongest free link
            free = [c for c in range(4) if c not in order[:list(order).index(b)]]
            assert W[a, b] == max(W[a, c] for c in free)


# ----------------------------------------------------------------------------- CDN

def _exact_gibbs_expectation(net, x):
    """E[our estimator] at stationarity: random-order sweeps, Rao-Blackwellised, one row x."""
    L = net.n_labels
    states = np.array(list(itertools.product([0, 1], repeat=L)), dtype=np.int8)
    S = len(states)
    Xr = np.repeat(x[None, :], S, axis=0)
    p = np.column_stack([net.proba(j, Xr, states[:, net.parents[j]]) for j in range(L)])
    index = {tuple(s): i for i, s in enumerate(states)}
    K = []
    for j in range(L):
        Kj = np.zeros((S, S))
        for i, s in enumerate(states):
            on, off = s.copy(), s.copy()
            on[j], off[j] = 1, 0
            Kj[i, index[tuple(on)]] += p[i, j]
            Kj[i, index[tuple(off)]] += 1 - p[i, j]
        K.append(Kj)
    perms = list(itertools.permutations(range(L)))
    sweep = sum(np.linalg.multi_dot([np.eye(S)] + [K[j] for j in s]) for s in perms) / len(perms)
    vals, vecs = np.linalg.eig(sweep.T)
    pi = np.real(vecs[:, np.argmin(np.abs(vals - 1))])
    pi /= pi.sum()
    expect = np.zeros(L)
    for s in perms:
        dist = pi.copy()
        for j in s:
            expect[j] += dist @ p[:, j]
            dist = dist @ K[j]
    return expect / len(perms)


def test_cdn_marginals_converge():
    X, Y = make_multilabel_classification(300, 6, n_classes=3, allow_unlabeled=False, random_state=3)
    cdn = CDN(lr(), iterations=800, collection_iterations=700, random_state=0).fit(X, Y)
    rows = X[:2]
    got = cdn.predict_scores(rows)
    for r in range(2):
        want = _exact_gibbs_expectation(cdn.network_, rows[r])
        np.testing.assert_allclose(got[r], want, atol=0.03)
        # the test discriminates: one sweep from the all-zero start is far from stationarity
        first = gibbs_marginals(cdn.network_, rows[r:r + 1], 1, 1, np.random.default_rng(0))[0]
        assert np.abs(first - want).max() > 0.2
    one = gibbs_marginals(cdn.network_, rows, 3, 1, np.random.default_rng(0))
    assert np.all((one > 0) & (one < 1))         # soft even with a single collected sweep


# ----------------------------------------------------------------------------- deadlines

def test_deadline_stops_search(data):
    X, Y = data
    cdn = CDN(GaussianNB(), iterations=200, collection_iterations=10).fit(X, Y)
    deadline.set_deadline(-1.0)
    try:
        with pytest.raises(deadline.BudgetExceeded):
            cdn.predict_scores(X)
        with pytest.raises(deadline.BudgetExceeded):
            MCC(GaussianNB(), chain_iterations=5).fit(X, Y)
    finally:
        deadline.set_deadline(None)

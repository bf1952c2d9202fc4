"""The fast implementations of LMT / SimpleLogistic (spaces/slc/_logitboost.py, _lmt_tree.py) and
of MultilayerPerceptron (spaces/slc/_functions_mlp.py) against plain transliterations of the
computations they replace (issue 25): the folds boosting side by side against one fold after
the other, the trees grown level by level against depth first, the two-class mirror against
fitting both classes, the presorted C4.5 split against sorting per node, and the MLP's
buffered batch loop against the straightforward one. Behaviour and equality only, no timing."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification

from ggp_automl.spaces.slc import _functions_mlp, _lmt_tree, _logitboost, logistic
from ggp_automl.spaces.slc._functions_mlp import WekaMultilayerPerceptron, _sigmoid_inplace
from ggp_automl.spaces.slc.logistic import WekaLMT, WekaSimpleLogistic


def data(n_classes=2, n=160, m=6, seed=0):
    X, y = make_classification(n_samples=n, n_features=m, n_informative=4, n_redundant=1,
                               n_classes=n_classes, n_clusters_per_class=1, flip_y=0.1, random_state=seed)
    X[:, 0] = np.round(X[:, 0], 1)  # ties
    return X - X.mean(axis=0), y


# ------------------------------------------------------------------------------ LogitBoost
def _reference_step(X, Y, F, beta):
    """One LogitBoost iteration on all K classes (the computation before the two-class mirror)."""
    P = _logitboost._softmax(F)
    R = Y - P
    A = np.abs(R)
    W = A * np.maximum(1.0 - A, 1.0 / _logitboost.Z_MAX)
    WZ = R.copy()
    if beta > 0:
        keep = _logitboost._trim_mask(W, beta)
        W, WZ = W * keep, WZ * keep
    fit = logistic._simple_regressions(np.hstack([X, X * X]), X.shape[1], W, WZ)
    if fit is None:
        return None
    attr, slope, intercept = fit
    f = X[:, attr] * slope + intercept
    k = F.shape[1]
    return fit, (f - f.mean(axis=1, keepdims=True)) * ((k - 1) / k)


@pytest.mark.parametrize("k,beta", [(2, 0.0), (2, 0.3), (3, 0.0)])
def test_boosting_matches_fitting_every_class(k, beta):
    X, y = data(k, seed=k)
    lb = _logitboost._LogitBoost(X, y, k, np.ones(len(y)), np.zeros((len(y), k)), beta)
    F, Y = np.zeros((len(y), k)), np.eye(k)[y]
    for _ in range(25):
        ref = _reference_step(X, Y, F, beta)
        assert lb.step() == (ref is not None)
        if ref is None:
            break
        (attr, slope, intercept), inc = ref
        F += inc
        assert np.array_equal(lb.history[-1][0], attr)
        assert np.allclose(lb.history[-1][1], slope) and np.allclose(lb.history[-1][2], intercept)
        assert np.allclose(lb.F, F, atol=1e-12)


def test_blocks_boost_as_separate_boosters():
    X, y = data(2, n=200, seed=3)
    parts = [np.arange(0, 7), np.arange(7, 150), np.arange(150, 200)]  # a small and two larger blocks
    F0 = np.random.default_rng(0).normal(size=(200, 2))
    ends = np.cumsum([p.size for p in parts])
    batch = _logitboost._Boost(X, y, 2, None, F0, 0.0, list(zip(ends - [p.size for p in parts], ends)))
    alone = [_logitboost._LogitBoost(X[p], y[p], 2, np.ones(p.size), F0[p], 0.0) for p in parts]
    for _ in range(12):
        batch.step()
        for lb in alone:
            lb.step()
    B, b = _logitboost._block_coefficients(batch.steps, len(parts), X.shape[1], 2)
    for j, (p, lb) in enumerate(zip(parts, alone)):
        B1, b1 = _logitboost._coefficients(lb.history, X.shape[1], 2)
        assert np.allclose(B[j], B1) and np.allclose(b[j], b1)
        assert np.allclose(batch.F[p], lb.F)


def _reference_cv(X, yi, k, sw, F0, max_iter, on_probabilities, beta, rng) -> int:
    """WEKA performBoostingCV transliterated: one fold after the other."""
    splits = _logitboost._folds(yi, rng)
    if not splits:
        return 0
    errors = np.zeros(max_iter + 1)
    completed = max_iter
    for train, test in splits:
        lb = _logitboost._LogitBoost(X[train], yi[train], k, sw[train], F0[train], beta)
        F_test = F0[test].copy()
        errors[0] += _logitboost._error(F_test, yi[test], sw[test], on_probabilities)
        no_min, last_min = 0, np.inf
        while len(lb.history) < completed:
            if not lb.step():
                break
            lb.advance(X[test], F_test)
            it = len(lb.history)
            errors[it] += _logitboost._error(F_test, yi[test], sw[test], on_probabilities)
            if no_min > _logitboost.HEURISTIC_STOP:
                break
            if errors[it] < last_min:
                last_min, no_min = errors[it], 0
            else:
                no_min += 1
        completed = min(completed, len(lb.history))
    return _logitboost._best_iteration(list(errors), completed)


@pytest.mark.parametrize("batch_bytes", [2**27, 1, 30_000])  # all folds, one, or two per batch
@pytest.mark.parametrize("stop", [0, 2, 6, 50])
@pytest.mark.parametrize("k,n,max_iter,eop,beta", [(2, 150, 200, False, 0.0), (3, 120, 40, True, 0.0),
                                                   (2, 12, 30, False, 0.0), (2, 90, 60, False, 0.8),
                                                   (2, 60, 30, False, 0.95), (3, 60, 30, False, 0.9)])
def test_side_by_side_folds_stop_where_sequential_folds_do(monkeypatch, batch_bytes, stop, k, n, max_iter,
                                                           eop, beta):
    monkeypatch.setattr(_logitboost, "HEURISTIC_STOP", stop)
    monkeypatch.setattr(_logitboost, "BATCH_BYTES", batch_bytes)
    for seed in range(3):
        X, y = data(k, n=n, seed=seed)
        sw = np.random.default_rng(seed).uniform(0.5, 2.0, n)
        args = (X, y, k, sw, np.zeros((n, k)), max_iter, eop, beta)
        assert _logitboost._select_by_cv(*args, np.random.default_rng(seed)) == \
            _reference_cv(*args, np.random.default_rng(seed))


# ------------------------------------------------------------------------------------ trees
def _reference_c45(Xn, yn, k, min_obj=2):
    """The C4.5 split as first written: argsort per node, gains over all positions."""
    n, m = Xn.shape
    counts = np.bincount(yn, minlength=k)
    if n < 2 * min_obj or counts.max() == n:
        return None
    xlogx = np.zeros(n + 1)
    xlogx[1:] = np.arange(1, n + 1) * np.log2(np.arange(1, n + 1))
    min_split = min(max(0.1 * n / k, min_obj), 25.0)
    n_left = np.arange(1, n)[:, None]
    order = np.argsort(Xn, axis=0, kind="stable")
    xs, sorted_y = np.take_along_axis(Xn, order, axis=0), yn[order]
    class_terms = np.zeros((n - 1, m))
    for c in np.flatnonzero(counts):
        left = np.cumsum(sorted_y == c, axis=0)[:-1]
        class_terms += xlogx[left] + xlogx[counts[c] - left]
    base = xlogx[n] - xlogx[counts].sum()
    gain = (base - (xlogx[n_left] + xlogx[n - n_left] - class_terms)) / n
    ok = (xs[1:] > xs[:-1] + 1e-5) & (n_left >= min_split) & (n - n_left >= min_split)
    n_cand = ok.sum(axis=0)
    gain = np.where(ok, gain, -np.inf)
    best = np.argmax(gain, axis=0)
    g = gain[best, np.arange(m)] - np.log2(np.maximum(n_cand, 1)) / n
    usable = (n_cand > 0) & (g > _logitboost.SMALL)
    if not usable.any():
        return None
    nl = best + 1
    split_ent = (xlogx[n] - xlogx[nl] - xlogx[n - nl]) / n
    ok_ent = split_ent > _logitboost.SMALL
    ratio = np.where(usable & ok_ent, g / np.where(ok_ent, split_ent, 1.0), 0.0)
    score = np.where(usable & (g >= g[usable].mean() - 1e-3), ratio, 0.0)
    attr = int(np.argmax(score))
    if score[attr] <= _logitboost.SMALL:
        return None
    return attr, (xs[best[attr], attr] + xs[best[attr] + 1, attr]) / 2.0


@pytest.mark.parametrize("k", [2, 3, 4])
def test_presorted_c45_split_matches_sorting_per_node(k):
    for seed in range(6):
        for n in (4, 9, 30, 140):
            X, y = data(k, n=max(n, 40), seed=seed)
            X, y = X[:n], y[:n]
            assert _lmt_tree._c45_split(X, y, k) == _reference_c45(X, y, k)


class _DepthFirstFixed(_lmt_tree._LMTGrower):
    """The tree grown node by node, each node boosted ``fixed`` times on its own."""

    def _node_model(self, rows, B, b, higher):
        Xn, yn = self.X[rows], self.yi[rows]
        history = []
        if rows.size >= _logitboost.N_FOLDS:
            lb = _logitboost._LogitBoost(Xn, yn, self.k, np.ones(rows.size), Xn @ B + b,
                                         float(self.est.weight_trim_beta))
            history = _logitboost._boost_fixed(lb, self.fixed).history
        dB, db = _logitboost._coefficients(history, Xn.shape[1], self.k)
        return self._new_node(rows, B + dB, b + db, higher, len(history))

    def grow_all(self, row_sets):
        m, k = self.X.shape[1], self.k
        return [self._grow_depth_first(rows, self._subset_order(rows), np.zeros((m, k)), np.zeros(k))
                for rows in row_sets]


def _shape(node):
    if node.is_leaf:
        return ("leaf", node.own_iterations, node.errors_model)
    return (node.attr, node.threshold, node.own_iterations, node.errors_model,
            _shape(node.children[0]), _shape(node.children[1]))


def _node_scores(node, X, rows):
    """Each node model's scores on the rows that reach the node (a node with only a few
    rows, trimmed to fewer, has an ill-conditioned model: compare it where it is used)."""
    out = [X[rows] @ node.coef + node.intercept]
    if not node.is_leaf:
        left = X[rows, node.attr] <= node.threshold
        out += _node_scores(node.children[0], X, rows[left]) + _node_scores(node.children[1], X, rows[~left])
    return out


@pytest.mark.parametrize("k,options", [(2, {}), (3, {}), (2, {"split_on_residuals": True}),
                                       (2, {"weight_trim_beta": 0.2, "min_num_instances": 8})])
@pytest.mark.parametrize("batch_bytes", [2**27, 1])  # a level in one batch, or one node per batch
def test_trees_grown_by_levels_match_depth_first(monkeypatch, batch_bytes, k, options):
    monkeypatch.setattr(_logitboost, "BATCH_BYTES", batch_bytes)
    monkeypatch.setattr(_lmt_tree, "BATCH_BYTES", batch_bytes)
    X, y = data(k, n=240, seed=11)
    est = WekaLMT(**options)
    row_sets = [np.sort(np.random.default_rng(s).choice(240, 190, replace=False)) for s in range(3)]
    row_sets.append(np.arange(240))
    sorted_all = [np.unique(X[:, a]) for a in range(X.shape[1])]
    fast = _lmt_tree._LMTGrower(est, X, y, k, sorted_all, 6, None).grow_all(row_sets)
    slow = _DepthFirstFixed(est, X, y, k, sorted_all, 6, None).grow_all(row_sets)
    n_nodes = 0
    for a, b, rows in zip(fast, slow, row_sets):
        assert _shape(a) == _shape(b)
        scores_a, scores_b = _node_scores(a, X, rows), _node_scores(b, X, rows)
        # trimming leaves a tiny node two or three weighted rows, which every attribute fits
        # exactly: rounding picks among these tied regressions, so compare the larger nodes
        small = 10 if options.get("weight_trim_beta") else 0
        assert all(np.allclose(sa, sb, rtol=1e-7, atol=1e-9) for sa, sb in zip(scores_a, scores_b)
                   if len(sa) >= small)
        n_nodes += len(scores_a)
    assert n_nodes > 8  # the data do grow trees


def test_lmt_and_simple_logistic_unchanged_on_a_grown_tree():
    X, y = data(3, n=300, seed=5)
    lmt = WekaLMT(min_num_instances=10).fit(X, y)
    assert lmt.n_leaves_unpruned_ > 3 and lmt.fixed_iterations_ > 0
    proba = lmt.predict_proba(X)
    assert np.allclose(proba.sum(axis=1), 1.0)
    ref = WekaSimpleLogistic().fit(X, y)
    assert lmt.fixed_iterations_ == ref.n_iterations_  # the same cross-validation


# -------------------------------------------------------------------------- MultilayerPerceptron
def _reference_train(est, X, T, w, rate):
    """The MLP batch loop written plainly (per-layer arrays, bias column appended per batch)."""
    rng = np.random.default_rng(int(est.random_state))
    order = rng.permutation(X.shape[0])
    m, k, h = X.shape[1], T.shape[1], est.n_hidden_
    dt = np.float32
    shapes = [(m + 1, h), (h + 1, k)] if h > 0 else [(m + 1, k)]
    layers = [rng.uniform(-0.05, 0.05, size=s).astype(dt) for s in shapes]
    velocity = [np.zeros(s, dtype=dt) for s in shapes]
    bs = max(1, int(est.batch_size))
    Xa = np.hstack([X, np.ones((X.shape[0], 1))]).astype(dt)
    with np.errstate(over="ignore", invalid="ignore"):
        for epoch in range(1, int(est.epochs) + 1):
            step = dt((rate / epoch if est.decay else rate) / np.sqrt(bs))
            for s in range(0, X.shape[0], bs):
                rows = order[s:s + bs]
                xa, tb, wb = Xa[rows], T[rows].astype(dt), w[rows, None].astype(dt)
                if h > 0:
                    hid = _sigmoid_inplace(xa @ layers[0])
                    ha = np.hstack([hid, np.ones((rows.size, 1), dtype=dt)])
                    out = _sigmoid_inplace(ha @ layers[1])
                else:
                    out = _sigmoid_inplace(xa @ layers[0])
                d_out = (tb - out) * out * (1.0 - out) * wb * step
                if h > 0:
                    d_hid = (d_out @ layers[1][:h].T) * hid * (1.0 - hid)
                    grads = (xa.T @ d_hid, ha.T @ d_out)
                else:
                    grads = (xa.T @ d_out,)
                for p, v, g in zip(layers, velocity, grads):
                    v *= dt(est.momentum)
                    v += g
                    p += v
            if not all(np.isfinite(p).all() for p in layers):
                return None
    return [p.astype(float) for p in layers]


@pytest.mark.parametrize("options,weighted", [({}, False), ({"hidden_layers": "0"}, False),
                                              ({"decay": True, "batch_size": 7}, True),
                                              ({"hidden_layers": "t", "batch_size": 1}, False),
                                              ({"learning_rate": 1e40}, False)])
def test_mlp_batch_loop_matches_the_plain_loop(options, weighted):
    X, y = data(3, n=101, seed=4)
    w = np.random.default_rng(1).uniform(0.5, 2.0, len(y)) if weighted else np.ones(len(y))
    est = WekaMultilayerPerceptron(epochs=15, **options)
    est.fit(X, y, sample_weight=w)  # sets the scaling and n_hidden_
    Xs, T = est._scale(X), np.eye(3)[y]
    fast, plain = est._train(Xs, T, w, est.learning_rate), _reference_train(est, Xs, T, w, est.learning_rate)
    if plain is None:
        assert fast is None
        return
    assert all(np.allclose(a, b, rtol=1e-4, atol=1e-6) for a, b in zip(fast, plain))
    assert [a.shape for a in fast] == [b.shape for b in plain]


def test_mlp_hidden_bias_unit_is_exactly_one():
    a = np.full(4, _functions_mlp.BIAS_NET, dtype=np.float32)
    assert np.all(_sigmoid_inplace(a) == 1.0)


def test_lmt_in_small_batches_equals_one_batch(monkeypatch):
    """The memory bound (BATCH_BYTES: trees, nodes and folds split over several batches)
    changes nothing but the grouping."""
    X, y = data(2, n=260, seed=8)
    ref = WekaLMT(min_num_instances=10).fit(X, y)
    for name in ("_logitboost", "_lmt_tree"):
        monkeypatch.setattr(globals()[name], "BATCH_BYTES", 20_000)
    small = WekaLMT(min_num_instances=10).fit(X, y)
    assert small.n_leaves_unpruned_ == ref.n_leaves_unpruned_ > 3
    assert small.fixed_iterations_ == ref.fixed_iterations_
    assert np.allclose(small.predict_proba(X), ref.predict_proba(X), atol=1e-9)

"""The compiled J48 grower (issue 25) grows scikit-learn's entropy tree: every split is one of largest
gain under the leaf limits, every leaf is pure, too small or without an allowed split, and on the
big nodes (no exact ties of gain) it picks scikit-learn's very split."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.tree import DecisionTreeClassifier

from ggp_automl.spaces.slc._tree_flat import FlatTree
from ggp_automl.spaces.slc._tree_grow import grow
from ggp_automl.spaces.slc.trees import J48Classifier, REPTreeClassifier

pytest.importorskip("numba")


def _xlogx(a):
    a = np.asarray(a, dtype=float)
    return np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)


def _best_splits(X, y, w, rows, K, min_rows, min_weight):
    """Brute force: the best proxy over all allowed splits of ``rows`` (or -inf)."""
    best = -np.inf
    total = np.bincount(y[rows], weights=w[rows], minlength=K)
    for f in range(X.shape[1]):
        values = np.unique(X[rows, f])
        for lo, hi in zip(values[:-1], values[1:]):
            if hi <= lo + 1e-7:
                continue
            left = rows[X[rows, f] <= lo]
            right = rows[X[rows, f] > lo]
            wl, wr = w[left].sum(), w[right].sum()
            if len(left) < min_rows or len(right) < min_rows or wl < min_weight or wr < min_weight:
                continue
            lc = np.bincount(y[left], weights=w[left], minlength=K)
            v = _xlogx(lc).sum() + _xlogx(total - lc).sum() - _xlogx(wl) - _xlogx(wr)
            best = max(best, float(v))
    return best


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_split_has_the_largest_gain_and_every_leaf_a_reason(weighted, seed):
    rng = np.random.default_rng(seed)
    n, K = 70, 3
    X = rng.normal(size=(n, 4)).round(1).astype(np.float32)        # rounded: ties of values and gains
    y = rng.integers(0, K, size=n)
    w = rng.uniform(0.2, 2.0, size=n) if weighted else np.ones(n)
    min_rows, min_weight = (1, 1.5) if weighted else (2, 0.0)
    tree = FlatTree(*grow(X, y, w, K, min_rows, min_weight, not weighted))
    stack = [(0, np.arange(n))]
    while stack:
        node, rows = stack.pop()
        best = _best_splits(X, y, w, rows, K, min_rows, min_weight)
        counts = np.bincount(y[rows], weights=w[rows], minlength=K)
        if tree.is_leaf(node):
            pure = counts.max() >= counts.sum() * (1 - 1e-12)
            assert pure or best == -np.inf or len(rows) < 2 * min_rows or counts.sum() < 2 * min_weight
            continue
        f, t = tree.feature[node], tree.threshold[node]
        left, right = rows[X[rows, f] <= t], rows[X[rows, f] > t]
        lc = np.bincount(y[left], weights=w[left], minlength=K)
        v = _xlogx(lc).sum() + _xlogx(counts - lc).sum() - _xlogx(w[left].sum()) - _xlogx(w[right].sum())
        assert v == pytest.approx(best, rel=1e-9, abs=1e-9)
        stack += [(int(tree.left[node]), left), (int(tree.right[node]), right)]


def test_big_nodes_split_as_scikit_learn_does():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(600, 8)).astype(np.float32)
    y = (X[:, 0] + X[:, 3] * X[:, 5] + rng.normal(scale=0.7, size=600) > 0).astype(int)
    sk = DecisionTreeClassifier(criterion="entropy", min_samples_leaf=2, random_state=0).fit(X, y).tree_
    feature, threshold, left, right = grow(X, y, np.ones(600), 2, 2, 0.0, True)
    def proxy(rows, f, t):
        lo, hi = rows[X[rows, f] <= t], rows[X[rows, f] > t]
        return sum(_xlogx(np.bincount(y[part], minlength=2)).sum() - _xlogx(len(part)) for part in (lo, hi))

    queue, same = [(0, 0, np.arange(600))], 0
    while queue:
        a, b, rows = queue.pop()
        if sk.n_node_samples[a] < 100 or sk.children_left[a] < 0:
            continue
        # the same gain always; the same split unless another one ties exactly (then stop descending)
        assert proxy(rows, feature[b], threshold[b]) == pytest.approx(proxy(rows, sk.feature[a], sk.threshold[a]))
        if feature[b] != sk.feature[a]:
            continue
        assert threshold[b] == pytest.approx(sk.threshold[a])
        same += 1
        f, t = sk.feature[a], sk.threshold[a]
        queue += [(sk.children_left[a], left[b], rows[X[rows, f] <= t]),
                  (sk.children_right[a], right[b], rows[X[rows, f] > t])]
    assert same >= 5


@pytest.mark.parametrize("make", [lambda: J48Classifier(random_state=0), lambda: REPTreeClassifier(random_state=0),
                                  lambda: REPTreeClassifier(max_depth=3, random_state=0)],
                         ids=["J48", "REPTree", "REPTree-depth3"])
def test_trees_are_as_accurate_as_with_the_scikit_learn_grower(monkeypatch, make):
    """The whole J48 / REPTree (split test, pruning) on the compiled tree against the one grown by
    scikit-learn: the same held-out accuracy within noise."""
    import ggp_automl.spaces.slc.trees as trees
    rng = np.random.default_rng(4)
    X = rng.normal(size=(900, 10))
    y = (X[:, 0] - X[:, 1] + X[:, 2] * X[:, 3] + rng.normal(scale=0.8, size=900) > 0).astype(int)
    fast = make().fit(X[:600], y[:600])
    monkeypatch.setattr(trees, "grow_tree", lambda *args, **kwargs: None)
    plain = make().fit(X[:600], y[:600])
    assert abs(fast.score(X[600:], y[600:]) - plain.score(X[600:], y[600:])) <= 0.03
    assert fast.get_depth() <= (3 if "max_depth=3" in repr(fast) else 100)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("mdl", [True, False])
def test_the_split_test_while_growing_equals_the_split_test_after(weighted, mdl):
    """C4.5's split test inside the grower leaves the tree apply_split_test leaves of the full tree."""
    from ggp_automl.spaces.slc._tree_c45 import apply_split_test
    rng = np.random.default_rng(5)
    n, K, mno = 300, 3, 2.0
    X = rng.normal(size=(n, 6)).round(2).astype(np.float32)
    y = ((X[:, 0] > 0).astype(int) + (X[:, 1] * X[:, 2] > 0.3) + (rng.random(n) < 0.2)) % K
    w = rng.uniform(0.3, 2.0, size=n) if weighted else np.ones(n)
    w = w * (n / w.sum())
    limits = (1, mno - 1e-9) if weighted else (2, 0.0)
    during = FlatTree(*grow(X, y, w, K, *limits, not weighted, mno, mdl))
    after = FlatTree(*grow(X, y, w, K, *limits, not weighted))
    apply_split_test(after, X, y, w, K, mno, mdl)
    a, b = during.compact()[0], after.compact()[0]
    assert a.node_count <= FlatTree(*grow(X, y, w, K, *limits, not weighted)).node_count
    np.testing.assert_array_equal(a.feature[a.left >= 0], b.feature[b.left >= 0])
    np.testing.assert_array_equal(a.left, b.left)
    np.testing.assert_allclose(a.threshold[a.left >= 0], b.threshold[b.left >= 0])

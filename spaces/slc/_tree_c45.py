"""C4.5's tree post-processing, as WEKA's J48 does it, on a :class:`FlatTree`.

scikit-learn grows the tree (information gain, ``min_samples_leaf = M``); this module
adds what makes it a C4.5 tree (``weka.classifiers.trees.j48``):

* :func:`apply_split_test` — C4.5's test of whether a node may be split at all: some
  attribute must have a split point leaving at least ``minSplit = clamp(0.1 W / K,
  M, 25)`` weight on each side, with a positive information gain, reduced by the MDL
  penalty ``log2(#valid split points) / W`` unless it is switched off (``-J``).
  Nodes that fail become leaves (``C45ModelSelection`` / ``C45Split``).
* :func:`collapse` — replace a subtree by a leaf when that does not increase the
  training error (``-O`` switches it off).
* :func:`prune` — error-based pruning with the pessimistic upper bound
  ``U_CF(e, N)`` of :func:`add_errs`, including subtree raising (``-S`` switches
  raising off) (``C45PruneableClassifierTree.prune``).

Which split scikit-learn chose is kept: C4.5 would pick by gain ratio among the
attributes with at least average gain, which the scikit-learn splitter cannot do.
"""
from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np

from ggp_automl.spaces.deadline import check_deadline

from ._tree_flat import LEAF, FlatTree

#: WEKA's ``Utils.SMALL``: the tolerance of its comparisons ``gr``, ``smOrEq``, ``eq``
SMALL = 1e-6
#: cap on the elements of one vectorised block in :func:`_best_gain`
_BLOCK = 1_000_000


# ---------------------------------------------------------------------- error estimate
def _z(cf: float) -> float:
    """The z-score of WEKA's ``Statistics.normalInverse(1 - cf)``."""
    return NormalDist().inv_cdf(1.0 - cf)


def add_errs(n, e, cf: float) -> np.ndarray:
    """Pessimistic extra errors of a leaf with weight ``n`` and ``e`` training errors.

    WEKA's ``Stats.addErrs``: the upper limit of the binomial confidence interval at
    confidence ``cf`` (normal approximation with continuity correction), minus ``e``;
    interpolated for ``e < 1`` and near ``e = n``. Like WEKA, ``cf > 0.5`` adds nothing.
    Vectorised over ``n`` and ``e``; 0 where ``n <= 0``.
    """
    n = np.asarray(n, dtype=float)
    e = np.asarray(e, dtype=float)
    if cf > 0.5:
        return np.zeros(np.broadcast(n, e).shape)
    z = _z(cf)
    safe_n = np.where(n > 0, n, 1.0)

    def upper(e_):
        f = (e_ + 0.5) / safe_n
        root = np.sqrt(np.maximum(f / safe_n - f * f / safe_n + z * z / (4 * safe_n * safe_n), 0.0))
        r = (f + z * z / (2 * safe_n) + z * root) / (1 + z * z / safe_n)
        return r * safe_n - e_

    general = np.where(e + 0.5 >= n, np.maximum(safe_n - e, 0.0), upper(e))
    base = safe_n * (1 - cf ** (1.0 / safe_n))
    one = np.where(1.5 >= n, np.maximum(safe_n - 1.0, 0.0), upper(1.0))
    low = base + e * (one - base)
    return np.where(n > 0, np.where(e < 1, low, general), 0.0)


def _add_errs_scalar(n: float, e: float, cf: float, z: float) -> float:
    """:func:`add_errs` for one leaf, in plain floats (it runs once per node in :func:`prune`)."""
    if cf > 0.5:
        return 0.0
    if e < 1:
        base = n * (1 - cf ** (1 / n))
        if e == 0:
            return base
        return base + e * (_add_errs_scalar(n, 1.0, cf, z) - base)
    if e + 0.5 >= n:
        return max(n - e, 0.0)
    f = (e + 0.5) / n
    r = (f + z * z / (2 * n) + z * math.sqrt(max(f / n - f * f / n + z * z / (4 * n * n), 0.0))) \
        / (1 + z * z / n)
    return r * n - e


def estimated_errors(counts: np.ndarray, cf: float) -> np.ndarray:
    """C4.5's estimated errors of each row of class weights treated as a leaf."""
    counts = np.atleast_2d(counts)
    total = counts.sum(axis=1)
    e = total - counts.max(axis=1)
    return np.where(total > 0, e + add_errs(total, e, cf), 0.0)


def _leaf_errors(counts_row: np.ndarray, cf: float, z: float) -> float:
    """:func:`estimated_errors` of one row of class weights, in plain floats."""
    total = float(counts_row.sum())
    if total <= 0:
        return 0.0
    e = total - float(counts_row.max())
    return e + _add_errs_scalar(total, e, cf, z)


# ---------------------------------------------------------------------- split test
def _xlogx(a: np.ndarray) -> np.ndarray:
    return np.where(a > 0, a * np.log2(np.where(a > 0, a, 1.0)), 0.0)


def _best_gain(xs: np.ndarray, yw: np.ndarray, total_w: float, min_split: float, mdl: bool) -> np.ndarray:
    """C4.5's (MDL-corrected) information gain of the best split of each column.

    ``xs`` (n, m): one column per attribute, rows sorted by it; ``yw`` (n, m, K): the
    class weights of the rows in the same order. ``-inf`` where no valid split exists.
    """
    cum = np.cumsum(yw, axis=0)[:-1]                        # left class weights, (n-1, m, K)
    tot = yw.sum(axis=0)                                    # (m, K)
    wl = cum.sum(axis=2)
    wr = total_w - wl
    distinct = xs[:-1] + 1e-5 < xs[1:]
    valid = distinct & (wl > min_split - SMALL) & (wr > min_split - SMALL)
    old = total_w * np.log2(total_w) - _xlogx(tot).sum(axis=1)          # (m,)
    right = tot[None] - cum
    new = (_xlogx(wl) - _xlogx(cum).sum(axis=2)) + (_xlogx(wr) - _xlogx(right).sum(axis=2))
    gain = np.where(valid, (old[None] - new) / total_w, -np.inf)
    n_valid = valid.sum(axis=0)
    best = np.maximum(gain.max(axis=0, initial=-np.inf), 0.0)  # C45Split starts its search at 0
    if mdl:
        best = best - np.log2(np.maximum(n_valid, 1)) / total_w
    return np.where(n_valid > 0, best, -np.inf)


def node_is_splittable(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int,
                       min_obj: float, mdl: bool, first: int | None = None,
                       rows: np.ndarray | None = None) -> bool:
    """Would C4.5 split a node holding ``rows`` (some attribute passes ``C45Split``)?

    ``first``: an attribute tried before all others (the one actually chosen), which
    settles the common case with a single sort. Columns are read block by block, so
    the node's rows are never copied across all attributes at once.
    """
    rows = np.arange(X.shape[0]) if rows is None else rows
    yn, wn = y[rows], w[rows]
    counts = np.bincount(yn, weights=wn, minlength=n_classes)
    total = counts.sum()
    # C45ModelSelection: too light or pure -> no split
    if total < 2 * min_obj - SMALL or abs(counts.max() - total) < SMALL:
        return False
    min_split = 0.1 * total / n_classes
    min_split = min_obj if min_split <= min_obj else min(min_split, 25.0)
    if rows.shape[0] < 2 * min_split:                   # C45Split counts rows here, not weight
        return False
    onehot = np.zeros((rows.shape[0], n_classes))
    onehot[np.arange(rows.shape[0]), yn] = wn

    def any_valid(cols: np.ndarray) -> bool:
        step = max(1, _BLOCK // max(1, rows.shape[0] * n_classes))
        for s in range(0, cols.size, step):
            block = X[np.ix_(rows, cols[s:s + step])].astype(np.float64)
            order = np.argsort(block, axis=0, kind="stable")
            xs = np.take_along_axis(block, order, axis=0)
            gains = _best_gain(xs, onehot[order], total, min_split, mdl)
            if np.any(gains >= SMALL):
                return True
        return False

    m = X.shape[1]
    if first is not None and any_valid(np.array([first])):
        return True
    rest = np.arange(m) if first is None else np.delete(np.arange(m), first)
    return any_valid(rest)


def apply_split_test(tree: FlatTree, X, y, w, n_classes: int, min_obj: float, mdl: bool) -> None:
    """Make a leaf of every node C4.5 would not split (top-down, in place)."""
    stack = [(0, np.arange(X.shape[0]))]
    while stack:
        check_deadline()
        node, rows = stack.pop()
        if tree.is_leaf(node):
            continue
        if not node_is_splittable(X, y, w, n_classes, min_obj, mdl,
                                  first=int(tree.feature[node]), rows=rows):
            tree.make_leaf(node)
            continue
        left_rows, right_rows = tree.split_rows(node, X, rows)
        stack.append((int(tree.right[node]), right_rows))
        stack.append((int(tree.left[node]), left_rows))


# ---------------------------------------------------------------------- collapse
def collapse(tree: FlatTree, counts: np.ndarray) -> None:
    """Cut every subtree whose leaves make no fewer training errors than its root.

    ``C45PruneableClassifierTree.collapse``: a node becomes a leaf when
    ``errors(subtree) >= errors(node as leaf) - 1e-3``.
    """
    node_err = counts.sum(axis=1) - counts.max(axis=1)
    subtree_err = node_err.copy()[:, None]
    tree.accumulate(subtree_err)          # internal nodes: the sum over their leaves
    subtree_err = subtree_err[:, 0]
    nodes = tree.reachable()
    inner = nodes[tree.left[nodes] != LEAF]
    tree.make_leaf(inner[subtree_err[inner] >= node_err[inner] - 1e-3])


# ---------------------------------------------------------------------- pruning
def _branch_errors(tree: FlatTree, start: int, X, y, w, rows, n_classes: int, cf: float) -> float:
    """Estimated errors of the subtree at ``start`` if ``rows`` were routed through it.

    ``getEstimatedErrorsForBranch``: every leaf's class weights are recounted from the
    rows that reach it.
    """
    if rows.size == 0:
        return 0.0
    leaves = tree.route(X, rows, start)
    uniq, inv = np.unique(leaves, return_inverse=True)
    counts = np.bincount(inv * n_classes + y[rows], weights=w[rows],
                         minlength=uniq.size * n_classes).reshape(-1, n_classes)
    return float(estimated_errors(counts, cf).sum())


def prune(tree: FlatTree, counts: np.ndarray, X, y, w, n_classes: int, cf: float,
          subtree_raising: bool) -> None:
    """C4.5 error-based pruning, bottom-up, in place (``counts`` is kept up to date).

    At each node, after its children are pruned: become a leaf if the leaf's estimated
    errors are within 0.1 of both the subtree's and the largest branch's; otherwise,
    with subtree raising, replace the node by its largest branch (re-distributing all
    of the node's training rows through it) if that branch's estimated errors are
    within 0.1 of the subtree's, and prune the node again.
    """
    z = _z(cf) if cf <= 0.5 else 0.0
    est = np.zeros(tree.node_count)
    stack = [(0, np.arange(X.shape[0]), False)]
    while stack:
        check_deadline()
        node, rows, children_done = stack.pop()
        if tree.is_leaf(node):
            est[node] = _leaf_errors(counts[node], cf, z)
            continue
        left, right = int(tree.left[node]), int(tree.right[node])
        if not children_done:
            stack.append((node, rows, True))
            left_rows, right_rows = tree.split_rows(node, X, rows)
            stack.append((right, right_rows, False))
            stack.append((left, left_rows, False))
            continue
        errors_tree = est[left] + est[right]
        errors_leaf = _leaf_errors(counts[node], cf, z)
        # Distribution.maxBag: the first bag wins ties (WEKA's Utils.gr)
        largest = right if counts[right].sum() - counts[left].sum() > SMALL else left
        if subtree_raising:
            errors_branch = _branch_errors(tree, largest, X, y, w, rows, n_classes, cf)
        else:
            errors_branch = np.inf
        if errors_leaf <= errors_tree + 0.1 + SMALL and errors_leaf <= errors_branch + 0.1 + SMALL:
            tree.make_leaf(node)
            est[node] = errors_leaf
        elif errors_branch <= errors_tree + 0.1 + SMALL:
            tree.raise_child(node, largest)
            tree.class_weights(X, y, w, n_classes, rows=rows, start=node, out=counts)
            stack.append((node, rows, False))
        else:
            est[node] = errors_tree

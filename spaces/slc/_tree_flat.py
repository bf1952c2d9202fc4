"""An editable copy of a scikit-learn tree, for WEKA-style post-processing.

WEKA's tree learners (J48, REPTree, RandomTree) differ from scikit-learn's mostly
*after* the tree is grown: C4.5 collapsing, error-based pruning and subtree raising,
reduced-error pruning, hold-out back-fitting, and Laplace leaves. scikit-learn's
``tree_`` can be pruned by cutting child pointers, but it cannot be restructured:
subtree raising moves a child's split up into its parent, possibly at the root.
:class:`FlatTree` therefore copies the split structure into plain numpy arrays that
the pruning code edits freely.

Everything here is vectorised: rows are routed level by level (one numpy step per
tree level, never a Python loop over rows), and per-node quantities are accumulated
bottom-up one level at a time. Routing uses scikit-learn's convention exactly
(float32 inputs, ``x <= threshold`` goes left), so a copied tree makes the same
decisions as the fitted scikit-learn tree it came from.
"""
from __future__ import annotations

import numpy as np

#: child index of a leaf (scikit-learn's ``TREE_LEAF``)
LEAF = -1
#: tolerance of weight comparisons (weights are rescaled to sum to the number of rows)
_WEIGHT_TOL = 1e-9


def entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Shannon entropy (bits) of each row of non-negative class weights; 0 for empty rows."""
    counts = np.asarray(counts, dtype=float)
    total = counts.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = counts / total[..., None]
        terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return np.where(total > 0, -terms.sum(axis=-1), 0.0)


class FlatTree:
    """A binary tree of axis-parallel splits held in arrays.

    Node ``i`` sends a row left when ``x[feature[i]] <= threshold[i]``; a leaf has
    ``left[i] == right[i] == LEAF``. Node 0 is the root. Children always have larger
    ids than their parent (true of scikit-learn trees and kept by every edit here).
    Nodes cut off by pruning stay in the arrays, unreachable, until :meth:`compact`.
    """

    def __init__(self, feature, threshold, left, right):
        self.feature = np.asarray(feature, dtype=np.intp).copy()
        self.threshold = np.asarray(threshold, dtype=np.float64).copy()
        self.left = np.asarray(left, dtype=np.intp).copy()
        self.right = np.asarray(right, dtype=np.intp).copy()

    @classmethod
    def from_sklearn(cls, tree) -> "FlatTree":
        """Copy a fitted ``sklearn.tree._tree.Tree`` (``estimator.tree_``)."""
        return cls(tree.feature, tree.threshold, tree.children_left, tree.children_right)

    # ------------------------------------------------------------------ structure
    @property
    def node_count(self) -> int:
        return int(self.left.shape[0])

    def is_leaf(self, node: int) -> bool:
        return bool(self.left[node] == LEAF)

    def make_leaf(self, nodes) -> None:
        """Cut the subtrees below ``nodes`` (an int or an index array)."""
        self.left[nodes] = LEAF
        self.right[nodes] = LEAF

    def raise_child(self, node: int, child: int) -> None:
        """Replace ``node``'s split and subtrees by those of its child ``child``.

        The other child's subtree and ``child`` itself become unreachable. Grandchildren
        have larger ids than ``node``, so the id ordering is kept.
        """
        self.feature[node] = self.feature[child]
        self.threshold[node] = self.threshold[child]
        self.left[node] = self.left[child]
        self.right[node] = self.right[child]

    def levels(self, start: int = 0) -> list[np.ndarray]:
        """Reachable nodes below ``start`` (inclusive), grouped by depth (breadth first)."""
        out = []
        frontier = np.array([start], dtype=np.intp)
        while frontier.size:
            out.append(frontier)
            inner = frontier[self.left[frontier] != LEAF]
            frontier = np.concatenate([self.left[inner], self.right[inner]])
        return out

    def reachable(self, start: int = 0) -> np.ndarray:
        return np.concatenate(self.levels(start))

    @property
    def n_leaves(self) -> int:
        nodes = self.reachable()
        return int(np.count_nonzero(self.left[nodes] == LEAF))

    @property
    def depth(self) -> int:
        """Length of the longest root-to-leaf path (0 for a single leaf)."""
        return len(self.levels()) - 1

    def compact(self) -> tuple["FlatTree", np.ndarray]:
        """A copy holding only reachable nodes (breadth-first ids), and their old ids."""
        old = self.reachable()
        new_id = np.full(self.node_count, LEAF, dtype=np.intp)
        new_id[old] = np.arange(old.size)
        inner = self.left[old] != LEAF
        left = np.where(inner, new_id[np.where(inner, self.left[old], 0)], LEAF)
        right = np.where(inner, new_id[np.where(inner, self.right[old], 0)], LEAF)
        return FlatTree(self.feature[old], self.threshold[old], left, right), old

    # ------------------------------------------------------------------ routing
    def route(self, X: np.ndarray, rows: np.ndarray | None = None, start: int = 0) -> np.ndarray:
        """The leaf reached by each row of ``X[rows]`` when entering the tree at ``start``.

        ``X`` must be float32 (as scikit-learn trees see it).
        """
        n = X.shape[0] if rows is None else rows.shape[0]
        node = np.full(n, start, dtype=np.intp)
        active = np.arange(n) if self.left[start] != LEAF else np.empty(0, dtype=np.intp)
        while active.size:
            nd = node[active]
            r = active if rows is None else rows[active]
            go_left = X[r, self.feature[nd]] <= self.threshold[nd]
            node[active] = np.where(go_left, self.left[nd], self.right[nd])
            active = active[self.left[node[active]] != LEAF]
        return node

    def split_rows(self, node: int, X: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``rows`` (indices into ``X``) divided by ``node``'s split: (left rows, right rows)."""
        go_left = X[rows, self.feature[node]] <= self.threshold[node]
        return rows[go_left], rows[~go_left]

    def class_weights(self, X, y, w, n_classes: int, rows=None, start: int = 0,
                      out: np.ndarray | None = None) -> np.ndarray:
        """Total weight of each class at every node below ``start``.

        ``y`` holds class indices in ``[0, n_classes)``. Returns a ``(node_count,
        n_classes)`` array; when ``out`` is given, only the rows of nodes below
        ``start`` are overwritten.
        """
        if out is None:
            out = np.zeros((self.node_count, n_classes))
        levels = self.levels(start)
        nodes = np.concatenate(levels)
        out[nodes] = 0.0
        rows_ = np.arange(X.shape[0]) if rows is None else rows
        if rows_.size:
            leaves = self.route(X, rows_, start)
            flat = leaves * n_classes + y[rows_]
            out += np.bincount(flat, weights=w[rows_],
                               minlength=self.node_count * n_classes).reshape(-1, n_classes)
        self.accumulate(out, levels)
        return out

    def accumulate(self, values: np.ndarray, levels: list[np.ndarray] | None = None) -> None:
        """Set every internal node's row of ``values`` to the sum of its children's (in place)."""
        for level in reversed(levels if levels is not None else self.levels()):
            inner = level[self.left[level] != LEAF]
            if inner.size:
                values[inner] = values[self.left[inner]] + values[self.right[inner]]

    def split_gains(self, counts: np.ndarray) -> np.ndarray:
        """Information gain (bits per unit weight) of every node's split; 0 at leaves."""
        inner = self.left != LEAF
        gain = np.zeros(self.node_count)
        idx = np.flatnonzero(inner)
        if idx.size:
            cl, cr = counts[self.left[idx]], counts[self.right[idx]]
            wl, wr = cl.sum(axis=1), cr.sum(axis=1)
            total = wl + wr
            with np.errstate(divide="ignore", invalid="ignore"):
                after = (wl * entropy_bits(cl) + wr * entropy_bits(cr)) / total
            gain[idx] = np.where(total > 0, entropy_bits(counts[idx]) - after, 0.0)
        return gain

    def cut_weak_splits(self, counts: np.ndarray, min_split_weight: float = 0.0,
                        min_child_weight: float = 0.0, min_gain: float | None = None) -> None:
        """Make a leaf of every node whose split WEKA's growth rules would not make.

        A node is not split when it weighs less than ``min_split_weight``, when a child
        would weigh less than ``min_child_weight``, or (``min_gain`` given) when the
        split's information gain is not above ``min_gain``. The decision at a node
        depends only on the rows reaching it, so cutting all offenders at once is the
        same as growing top-down with these rules.
        """
        nodes = self.reachable()
        inner = nodes[self.left[nodes] != LEAF]
        if not inner.size:
            return
        weight = counts.sum(axis=1)
        bad = weight[inner] < min_split_weight - _WEIGHT_TOL
        bad |= np.minimum(weight[self.left[inner]], weight[self.right[inner]]) < min_child_weight - _WEIGHT_TOL
        if min_gain is not None:
            bad |= self.split_gains(counts)[inner] <= min_gain
        self.make_leaf(inner[bad])

    def node_distributions(self, counts: np.ndarray, laplace: bool = False) -> np.ndarray:
        """Class probabilities at every reachable node.

        A node with weight is normalised (Laplace: ``(n_c + 1) / (n + K)``); a node
        without weight takes its parent's distribution, as WEKA does for empty leaves.
        A weightless root gets the uniform distribution.
        """
        k = counts.shape[1]
        total = counts.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            if laplace:
                dist = (counts + 1.0) / (total[:, None] + k)
            else:
                dist = counts / total[:, None]
        empty = total <= 0
        levels = self.levels()
        root = levels[0]
        dist[root[empty[root]]] = 1.0 / k
        for level in levels:
            inner = level[self.left[level] != LEAF]
            for child in (self.left[inner], self.right[inner]):
                hole = empty[child]
                dist[child[hole]] = dist[inner[hole]]
        return dist

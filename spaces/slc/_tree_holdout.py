"""Hold-out sets for WEKA's REPTree and RandomTree: folds, reduced-error pruning.

REPTree grows its tree on all folds but one and uses the remaining fold to prune it
(reduced-error pruning) and then to back-fit the leaf distributions; RandomTree
(``-N``) grows on all folds but one and re-estimates its class distributions from the
remaining fold only. Both draw the folds the WEKA way: shuffle, group by class,
deal the rows round-robin into folds (``Instances.randomize``/``stratify``/``testCV``),
so every fold has the class proportions of the whole set.
"""
from __future__ import annotations

import numpy as np

from ._tree_flat import LEAF, FlatTree


def stratified_folds(y: np.ndarray, n_folds: int, rng: np.random.RandomState) -> np.ndarray:
    """The fold (``0 .. n_folds-1``) of every row, stratified by the class ``y``."""
    n = y.shape[0]
    perm = rng.permutation(n)
    ys = y[perm]
    classes, first = np.unique(ys, return_index=True)
    rank = np.empty(classes.size, dtype=np.intp)
    rank[np.argsort(first)] = np.arange(classes.size)     # classes in order of first appearance
    grouped = perm[np.argsort(rank[np.searchsorted(classes, ys)], kind="stable")]
    fold = np.empty(n, dtype=np.intp)
    fold[grouped] = np.arange(n) % n_folds
    return fold


def reduced_error_prune(tree: FlatTree, train_counts: np.ndarray, hold_counts: np.ndarray) -> None:
    """REPTree's reduced-error pruning, bottom-up, in place.

    Each node predicts the majority class of its training rows; a subtree is replaced
    by a leaf when its hold-out errors are not smaller than the node's own hold-out
    errors (``REPTree.Tree.reducedErrorPrune``).
    """
    predicted = tree.node_distributions(train_counts).argmax(axis=1)
    hold_err = hold_counts.sum(axis=1) - hold_counts[np.arange(hold_counts.shape[0]), predicted]
    errors = hold_err.copy()
    for level in reversed(tree.levels()):
        inner = level[tree.left[level] != LEAF]
        if inner.size:
            subtree = errors[tree.left[inner]] + errors[tree.right[inner]]
            cut = subtree >= hold_err[inner]
            errors[inner] = np.where(cut, hold_err[inner], subtree)
            tree.make_leaf(inner[cut])

"""WEKA PART: a decision list read off partial C4.5 trees (Frank & Witten 1998).

Separate-and-conquer: grow a *partial* pruned C4.5 tree on the rows not yet covered, turn its
leaf of largest coverage into a rule, drop the rows that rule covers, repeat until no row is
left. A partial tree expands the children of a node in order of increasing class entropy and
stops at the first child that does not collapse into a leaf; a node whose expanded children are
all leaves is pruned back to a leaf when C4.5's pessimistic error (``ebp``, confidence 0.25) or
the hold-out error (``rep``: one of ``num_folds`` stratified folds held out) says so. This follows
``weka.classifiers.rules.part`` (MakeDecList, C45PruneableDecList, PruneableDecList,
ClassifierDecList) step by step; split selection is :mod:`spaces.slc._rules_c45`.

The recursion of WEKA's buildDecList is run as a trampoline over generators, so deep partial
trees never hit Python's recursion limit, and the deadline is checked at every node.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.slc._rules_base import LN2, SMALL, column_order, make_rng, stratified_folds
from ggp_automl.spaces.slc._rules_c45 import C45SplitSelector, add_errs, _lnf
from ggp_automl.spaces.slc._validation import fit_inputs, labels, predict_inputs


class _Node:
    __slots__ = ("rows", "prows", "dist", "tdist", "split", "sons", "son_rows", "son_prows",
                 "son_dist", "son_tdist", "is_leaf", "index")

    def __init__(self, rows, prows):
        self.rows, self.prows = rows, prows
        self.split = None
        self.sons = None
        self.is_leaf = False
        self.index = 0


class _PartialTreeBuilder:
    """Builds one partial tree (``buildDecList``) and reads its rule off."""

    def __init__(self, X, codes, w, n_classes, selector, min_no_obj, cf, rep):
        self.X, self.codes, self.w, self.k = X, codes, w, n_classes
        self.selector, self.min_no_obj, self.cf, self.rep = selector, min_no_obj, cf, rep

    def _dist(self, rows):
        return np.bincount(self.codes[rows], weights=self.w[rows], minlength=self.k)

    def _init(self, node):
        node.dist = self._dist(node.rows)
        node.tdist = self._dist(node.prows) if self.rep else None

    def _leaf(self, rows, prows):
        node = _Node(rows, prows)
        self._init(node)
        node.is_leaf = True
        return node

    def _choose_index(self, node):
        best, low = -1, math.inf
        for i in range(2):
            if node.sons[i] is not None:
                continue
            d = node.son_dist[i]
            nb = float(d.sum())
            if nb < self.min_no_obj - SMALL:
                est = math.inf
            else:
                est = float((_lnf(nb) - _lnf(d).sum()) / (nb * LN2))
            if est <= SMALL:
                return i
            if est < low - SMALL:
                best, low = i, est
        return best

    def _choose_last_index(self, node):
        best, low = 0, math.inf
        if node.is_leaf:
            return best
        for i, son in enumerate(node.sons):
            if son is not None and node.son_dist[i].sum() >= self.min_no_obj - SMALL:
                leaf = son
                while not leaf.is_leaf:
                    leaf = leaf.sons[leaf.index]
                est = -float(leaf.dist.sum())
                if est < low - SMALL:
                    best, low = i, est
        return best

    def _leaf_errors(self, node):
        tot = float(node.dist.sum())
        wrong = tot - float(node.dist.max())
        return wrong + add_errs(tot, wrong, self.cf)

    def _prune_end(self, node):
        if self.rep:  # PruneableDecList: errors on the hold-out rows, no correction
            mc = int(np.argmax(node.dist))
            tree = 0.0
            for i, son in enumerate(node.sons):
                if abs(son.dist.sum()) < SMALL:
                    tree += node.son_tdist[i].sum() - node.son_tdist[i][mc]
                else:
                    tree += son.tdist.sum() - son.tdist[int(np.argmax(son.dist))]
            leaf = node.tdist.sum() - node.tdist[mc]
            collapse = leaf <= tree + SMALL
        else:  # C45PruneableDecList: pessimistic errors, +0.1 as in C4.5
            tree = sum(self._leaf_errors(s) for s in node.sons if abs(s.dist.sum()) >= SMALL)
            collapse = self._leaf_errors(node) <= tree + 0.1 + SMALL
        if collapse:
            node.is_leaf, node.sons, node.split = True, None, None

    def _grow(self, node, leaf):
        """Generator version of buildDecList: yields each child to be grown before resuming."""
        self._init(node)
        split = None if leaf else self.selector.select(node.rows)
        if split is None:
            node.is_leaf = True
            return
        node.split = split
        go_left = self.X[node.rows, split.attribute] <= split.threshold
        node.son_rows = (node.rows[go_left], node.rows[~go_left])
        node.son_dist = tuple(self._dist(r) for r in node.son_rows)
        if self.rep:
            p_left = self.X[node.prows, split.attribute] <= split.threshold
            node.son_prows = (node.prows[p_left], node.prows[~p_left])
            node.son_tdist = tuple(self._dist(r) for r in node.son_prows)
        else:
            node.son_prows = (None, None)
        node.sons = [None, None]
        i = 0
        while True:
            i += 1
            ind = self._choose_index(node)
            if ind == -1:
                for j in range(2):
                    if node.sons[j] is None:
                        node.sons[j] = self._leaf(node.son_rows[j], node.son_prows[j])
                if i < 2:
                    node.is_leaf, node.sons, node.split = True, None, None
                    return
                ind = 0
                break
            child = _Node(node.son_rows[ind], node.son_prows[ind])
            node.sons[ind] = child
            yield child
            if not (i < 2 and child.is_leaf):
                break
        if all(s is not None and s.is_leaf for s in node.sons):
            self._prune_end(node)
            if not node.is_leaf:
                node.index = self._choose_last_index(node)
        else:
            node.index = self._choose_last_index(node)

    def build_rule(self, rows, prows):
        """(conditions, class counts): the path to the chosen leaf of a new partial tree."""
        root = _Node(rows, prows)
        stack = [self._grow(root, False)]
        while stack:
            check_deadline()
            try:
                child = next(stack[-1])
            except StopIteration:
                stack.pop()
                continue
            stack.append(self._grow(child, False))
        conds, node = [], root
        while not node.is_leaf:
            conds.append((node.split.attribute, node.split.threshold, node.index))
            node = node.sons[node.index]
        return conds, node.dist


def _covers(X, conds):
    m = np.ones(X.shape[0], dtype=bool)
    for att, thr, right in conds:
        m &= (X[:, att] > thr) if right else (X[:, att] <= thr)
    return m


class WekaPART(ClassifierMixin, BaseEstimator):
    """WEKA PART decision list.

    Parameters follow WEKA: ``min_no_obj`` (-M), ``binary_splits`` (-B), ``reduced_error_pruning``
    (-R) with ``num_folds`` (-N), ``confidence_factor`` (-C, for ``ebp``). MDL correction on and
    split points moved to actual training values, as in WEKA's defaults.

    Confidence: the class distribution of the leaf behind the first rule that covers the row
    (WEKA's distributionForInstance). Instance weights are honoured.

    Deviations: ``binary_splits`` only concerns nominal attributes and every attribute reaching
    an SLC here is numeric, so it has no effect (as in WEKA on numeric data). A rule whose leaf
    holds zero weight predicts the training class distribution instead of WEKA's all-zero vector.
    """

    def __init__(self, min_no_obj=2, binary_splits=False, reduced_error_pruning=False,
                 num_folds=3, confidence_factor=0.25, random_state=None):
        self.min_no_obj = min_no_obj
        self.binary_splits = binary_splits
        self.reduced_error_pruning = reduced_error_pruning
        self.num_folds = num_folds
        self.confidence_factor = confidence_factor
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, codes, w = fit_inputs(self, X, y, sample_weight)
        k = self.classes_.size
        prior = np.bincount(codes, weights=w, minlength=k)
        self.class_prior_ = prior / prior.sum() if prior.sum() > 0 else np.full(k, 1.0 / k)
        mno = max(int(self.min_no_obj), 1)
        rep = bool(self.reduced_error_pruning)
        rows = np.arange(X.shape[0])
        if rep:
            folds = stratified_folds(codes, int(self.num_folds), make_rng(self.random_state))
            grow, prune = rows[folds != self.num_folds - 1], rows[folds == self.num_folds - 1]
        else:
            grow, prune = rows, None
        selector = C45SplitSelector(X, codes, w, k, mno, column_order(X))
        builder = _PartialTreeBuilder(X, codes, w, k, selector, mno, float(self.confidence_factor), rep)
        rules, dists = [], []
        while grow.size > 0:
            check_deadline()
            conds, dist = builder.build_rule(grow, prune)
            covered = _covers(X[grow], conds)
            if not covered.any():  # guard: always make progress (cannot happen with positive weights)
                conds, dist, covered = [], builder._dist(grow), np.ones(grow.size, dtype=bool)
            rules.append(conds)
            tot = dist.sum()
            dists.append(dist / tot if tot > 0 else self.class_prior_)
            grow = grow[~covered]
            if rep:
                prune = prune[~_covers(X[prune], conds)]
        self.rules_ = rules
        self.rule_distributions_ = np.array(dists).reshape(len(dists), k)
        return self

    def predict_proba(self, X):
        X = predict_inputs(self, X)
        out = np.tile(self.class_prior_, (X.shape[0], 1))
        free = np.ones(X.shape[0], dtype=bool)
        for conds, dist in zip(self.rules_, self.rule_distributions_):
            hit = free & _covers(X, conds)
            out[hit] = dist
            free &= ~hit
            if not free.any():
                break
        return out

    def predict(self, X):
        return labels(self, self.predict_proba(X))

"""The tree of WEKA's LMT: C4.5 / residual splits and growth with a LogitBoost model per node
(WEKA ``LMTNode``; Landwehr, Hall & Frank 2005).

Every node continues its parent's LogitBoost model on its own rows
(:mod:`spaces.slc._logitboost`; with a fixed number of iterations the nodes of a level, over
all the trees being grown, boost together); the grown tree is then pruned back along the
weakest-link sequence by :class:`spaces.slc.logistic.WekaLMT`, which chooses the pruning level
by cross-validation; this module grows the trees.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ggp_automl.spaces.deadline import check_deadline

from ._logitboost import (BATCH_BYTES, N_FOLDS, SMALL, Z_MAX, _batches, _block_coefficients, _Boost,
                          _boost_fixed, _coefficients, _design, _LogitBoost, _select_by_aic, _select_by_cv,
                          _softmax)


def _sorted_columns(Xn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(Xn, axis=0, kind="stable")
    return order, np.take_along_axis(Xn, order, axis=0)


_XLOGX = np.zeros(1)  # c·log2(c) for c = 0, 1, …, grown on demand


def _xlogx(n: int) -> np.ndarray:
    global _XLOGX
    if _XLOGX.size <= n:
        c = np.arange(1, 2 * n + 2)
        _XLOGX = np.concatenate([[0.0], c * np.log2(c)])
    return _XLOGX[:n + 1]


def _c45_split(Xn: np.ndarray, yn: np.ndarray, k: int, min_obj: int = 2):
    """:func:`_c45_sorted` of the node's rows ``Xn`` with classes ``yn``."""
    order, xs = _sorted_columns(Xn)
    return _c45_sorted(xs.T, yn[order].T, k, min_obj)


def _c45_sorted(xs: np.ndarray, sy: np.ndarray, k: int, min_obj: int = 2):
    """C4.5's numeric split selection (WEKA ``C45ModelSelection`` with ``C45Split``).

    Per attribute: the best information-gain threshold among those leaving at least
    ``clamp(0.1·n/K, min_obj, 25)`` rows on each side, its gain reduced by the MDL term
    log2(#candidate thresholds)/n; then, among attributes with at least average gain, the
    best gain ratio. Rows are unweighted (LMT), so entropies come from a table of c·log2(c).
    ``xs`` (m, n) holds each attribute's values sorted, ``sy`` the classes in that order.
    Returns (attribute, midpoint) or None.
    """
    m, n = xs.shape
    counts = np.bincount(sy[0], minlength=k)
    if n < 2 * min_obj or counts.max() == n:
        return None
    xlogx = _xlogx(n)
    min_split = min(max(0.1 * n / k, min_obj), 25.0)
    n_left = np.arange(1, n)
    present = np.flatnonzero(counts)
    if k == 2:  # the classes are 0/1: the running sum of the labels counts class 1
        lefts = [np.cumsum(sy[:, :-1], axis=1)]
        lefts.insert(0, n_left - lefts[0])
    else:
        lefts = [np.cumsum(sy[:, :-1] == c, axis=1) for c in present[:-1]]
        lefts.append(n_left - sum(lefts))  # the last class: the rest of the left branch
    terms = None  # Σ_classes of the branches' c·log2(c), from a per-class table over the left count
    for c, left in zip(present, lefts):
        table = xlogx[:counts[c] + 1] + xlogx[counts[c] - np.arange(counts[c] + 1)]
        t = table[left]
        terms = t if terms is None else np.add(terms, t, out=terms)
    # information gain in bits per row: H(parent) − Σ_branches (n_b/n)·H(branch) = (base − d)/n
    base = xlogx[n] - xlogx[counts].sum()
    d = np.subtract(xlogx[n_left] + xlogx[n - n_left], terms, out=terms)
    ok = xs[:, 1:] > xs[:, :-1] + 1e-5
    ok &= (n_left >= min_split) & (n - n_left >= min_split)
    n_cand = ok.sum(axis=1)
    best = np.argmin(np.where(ok, d, np.inf), axis=1)  # the largest gain
    g = (base - d[np.arange(m), best]) / n - np.log2(np.maximum(n_cand, 1)) / n
    usable = (n_cand > 0) & (g > SMALL)
    if not usable.any():
        return None
    nl = best + 1
    split_ent = (xlogx[n] - xlogx[nl] - xlogx[n - nl]) / n
    ratio = np.where(usable & (split_ent > SMALL), g / np.where(split_ent > SMALL, split_ent, 1.0), 0.0)
    average = g[usable].mean()
    score = np.where(usable & (g >= average - 1e-3), ratio, 0.0)
    attr = int(np.argmax(score))
    if score[attr] <= SMALL:
        return None
    return attr, (xs[attr, best[attr]] + xs[attr, best[attr] + 1]) / 2.0


def _residual_split(Xn: np.ndarray, Z: np.ndarray, W: np.ndarray, min_obj: int = 2, presorted=None):
    """WEKA ``ResidualModelSelection``: the split that most reduces Σ_classes Σ w·(z − z̄)².

    Every attribute's best midpoint is found without size constraints; attributes whose
    best split leaves fewer than ``min_obj`` rows on a side are skipped, and the best split
    must reduce the residual spread by at least 1e-4.
    """
    n, m = Xn.shape
    if n < min_obj:
        return None
    order, xs = _sorted_columns(Xn) if presorted is None else presorted
    reduction = np.zeros((n - 1, m))
    for c in range(Z.shape[1]):
        w, wz = W[:, c], W[:, c] * Z[:, c]
        tw, twz = w.sum(), wz.sum()
        lw = np.cumsum(w[order], axis=0)[:-1]
        lwz = np.cumsum(wz[order], axis=0)[:-1]
        rw, rwz = tw - lw, twz - lwz
        with np.errstate(divide="ignore", invalid="ignore"):
            # SSE(parent) − SSE(left) − SSE(right); the Σwz² terms cancel
            reduction += (np.where(lw > 0, lwz * lwz / lw, 0.0) + np.where(rw > 0, rwz * rwz / rw, 0.0)
                          - (twz * twz / tw if tw > 0 else 0.0))
    distinct = xs[1:] > xs[:-1] + SMALL
    reduction = np.where(distinct, reduction, -np.inf)
    best = np.argmax(reduction, axis=0)
    cols = np.arange(m)
    g = reduction[best, cols]
    g = np.where((best + 1 >= min_obj) & (n - best - 1 >= min_obj) & np.isfinite(g), g, -np.inf)
    attr = int(np.argmax(g))
    if not g[attr] >= 1e-4:
        return None
    return attr, (xs[best[attr], attr] + xs[best[attr] + 1, attr]) / 2.0


@dataclass(eq=False)
class _Node:
    """A node of a logistic model tree: its cumulative linear model and split."""

    coef: np.ndarray
    intercept: np.ndarray
    n_parameters: float  # LogitBoost iterations including the ancestors'
    own_iterations: int  # iterations fitted at this node ("has models" when > 0)
    errors_model: float  # training rows the node's model misclassifies
    node_id: int = 0
    attr: int = -1
    threshold: float = 0.0
    children: list | None = None
    is_leaf: bool = True
    errors_tree: float = 0.0
    alpha: float = np.inf
    n_leaves: int = 1


class _LMTGrower:
    """Grows unpruned logistic model trees on subsets of the rows of (X, yi) (WEKA
    ``LMTNode.buildTree``): the cross-validation folds' trees and the final one.

    With a fixed number of LogitBoost iterations (fast regression) the trees grow together,
    level by level, and all nodes of a level boost at once (:class:`_Boost`, one block per
    node): a node's model depends only on its rows and its parent's model, so the order in
    which the nodes are built changes nothing. Otherwise every node selects its own number
    of iterations with the shared random generator, tree after tree and depth first, in
    WEKA's order. A node holds its rows' indices sorted by every attribute, filtered stably
    from its parent's, so no node sorts. Node ids are unique over the grower's trees.
    """

    def __init__(self, est: "WekaLMT", X, yi, k, sorted_all, fixed_iterations, rng):
        self.est, self.X, self.yi, self.k = est, X, yi, k
        self.XT = np.ascontiguousarray(X.T)
        self.sorted_all = sorted_all  # per attribute, all training values (split points)
        self.fixed = fixed_iterations
        self.rng = rng
        self.n_nodes = 0
        self._pos = np.zeros(X.shape[0], dtype=np.intp)  # scratch: a row's position in its node
        self._left = np.zeros(X.shape[0], dtype=bool)  # scratch: a row goes left
        self._order = np.argsort(self.XT, axis=1, kind="stable")  # (m, n): rows by each attribute
        self._xt_base = np.arange(X.shape[1])[:, None] * X.shape[0]  # flat index of XT's rows
        # [1, X, X²]ᵀ of all rows, gathered for the boosting batches (if it is not too large)
        self._design = _design(X) if X.size * 2 * 8 <= BATCH_BYTES else None

    def _new_node(self, rows, B, b, higher, iterations) -> tuple[_Node, np.ndarray]:
        F = self.X[rows] @ B + b
        node = _Node(B, b, higher + iterations, iterations,
                     float((np.argmax(F, axis=1) != self.yi[rows]).sum()), node_id=self.n_nodes)
        self.n_nodes += 1
        return node, F

    def _node_model(self, rows, B, b, higher):
        """One node's model, its number of iterations chosen on its own rows (AIC or CV)."""
        Xn, yn = self.X[rows], self.yi[rows]
        est, k = self.est, self.k
        sw = np.ones(rows.size)
        F0 = Xn @ B + b
        beta, eop = float(est.weight_trim_beta), bool(est.error_on_probabilities)
        history = []
        if rows.size >= N_FOLDS:
            if est.use_aic:
                lb = _LogitBoost(Xn, yn, k, sw, F0, beta)
                history = lb.history[:_select_by_aic(lb, 200, higher)]
            else:
                n_iter = _select_by_cv(Xn, yn, k, sw, F0, 200, eop, beta, self.rng)
                history = _boost_fixed(_LogitBoost(Xn, yn, k, sw, F0, beta), n_iter).history
        dB, db = _coefficients(history, Xn.shape[1], k)
        return self._new_node(rows, B + dB, b + db, higher, len(history))

    def _level_models(self, entries) -> list[tuple[_Node, np.ndarray]]:
        """The models of one level's nodes, each boosted ``fixed`` times from its parent's
        model on its rows (nodes under 5 rows keep the parent's), together in one
        :class:`_Boost` (or a few, see :func:`_batches`)."""
        X, yi, k, m = self.X, self.yi, self.k, self.X.shape[1]
        boosted = [i for i, (rows, *_) in enumerate(entries) if rows.size >= N_FOLDS]
        fitted = {}  # entry -> (ΔB, Δb, iterations)
        for batch in _batches([entries[i][0].size for i in boosted], (2 * m + 1) * 8):  # [1, X, X²]
            batch = [boosted[j] for j in batch]
            sizes = np.array([entries[i][0].size for i in batch])
            ends = np.cumsum(sizes)
            bounds = list(zip((ends - sizes).tolist(), ends.tolist()))
            cat = np.concatenate([entries[i][0] for i in batch])
            Xc = X[cat]
            F0 = np.vstack([Xc[s:e] @ entries[i][1] + entries[i][2] for i, (s, e) in zip(batch, bounds)])
            lb = _Boost(Xc, yi[cat], k, None, F0, float(self.est.weight_trim_beta), bounds,
                        XXT=None if self._design is None else self._design[:, cat])
            for _ in range(self.fixed):
                check_deadline()
                if not lb.step():
                    break
            dB, db = _block_coefficients(lb.steps, len(batch), m, k)
            iterations = np.sum([s[3] for s in lb.steps], axis=0, dtype=int) if lb.steps else \
                np.zeros(len(batch), dtype=int)
            fitted.update({i: (dB[j], db[j], int(iterations[j])) for j, i in enumerate(batch)})
        out = []
        for i, (rows, B, b, higher) in enumerate(entries):
            if i in fitted:
                dB, db, iterations = fitted[i]
                out.append(self._new_node(rows, B + dB, b + db, higher, iterations))
            else:
                out.append(self._new_node(rows, B, b, higher, 0))
        return out

    def _split(self, rows, F, order):
        xs = np.take(self.XT, order + self._xt_base)  # (m, n): every attribute's values, sorted
        if self.est.split_on_residuals:
            yn = self.yi[rows]
            P = _softmax(F)
            Y = np.eye(self.k)[yn]
            with np.errstate(divide="ignore", over="ignore"):
                Z = np.where(Y == 1.0, np.minimum(1.0 / P, Z_MAX), np.maximum(-1.0 / (1.0 - P), -Z_MAX))
            self._pos[rows] = np.arange(rows.size)
            return _residual_split(self.X[rows], Z, (Y - P) / Z, presorted=(self._pos[order].T, xs.T))
        split = _c45_sorted(xs, self.yi[order], self.k)
        if split is None:
            return None
        attr, mid = split
        values = self.sorted_all[attr]  # WEKA moves the split point to an actual training value
        return attr, values[np.searchsorted(values, mid, side="right") - 1]

    def _children(self, node, rows, F, order) -> list[tuple[np.ndarray, np.ndarray]]:
        """Split ``node`` if it may and can be: its two children's (rows, sorted orders)."""
        if rows.size <= int(self.est.min_num_instances):
            return []
        split = self._split(rows, F, order)
        if split is None:
            return []
        node.attr, node.threshold = split
        go_left = self.X[rows, node.attr] <= node.threshold
        node.children, node.is_leaf = [], False
        self._left[rows] = go_left
        left = self._left[order]
        m, may_split = order.shape[0], int(self.est.min_num_instances)
        return [(part, order[side].reshape(m, -1) if part.size > may_split else None)  # no order: a leaf
                for part, side in ((rows[go_left], left), (rows[~go_left], ~left))]

    def _subset_order(self, rows) -> np.ndarray:
        """(m, rows.size): ``rows`` sorted by every attribute (ties in row order)."""
        self._left[:] = False
        self._left[rows] = True
        return self._order[self._left[self._order]].reshape(self._order.shape[0], -1)

    def grow(self, rows) -> _Node:
        return self.grow_all([rows])[0]

    def grow_all(self, row_sets) -> list[_Node]:
        """One tree on each set of (ascending) row indices; with a fixed number of iterations,
        as many trees together as keep their nodes' sorted orders (8 bytes per row and
        attribute) within BATCH_BYTES."""
        m, k = self.X.shape[1], self.k

        def start(rows):
            return rows, self._subset_order(rows), np.zeros((m, k)), np.zeros(k)
        if self.fixed <= 0:
            return [self._grow_depth_first(*start(rows)) for rows in row_sets]
        groups = _batches([rows.size for rows in row_sets], m * 8)
        return [root for group in groups for root in self._grow_by_levels([start(row_sets[i]) for i in group])]

    def _grow_depth_first(self, rows, order, B, b) -> _Node:
        root, F = self._node_model(rows, B, b, 0.0)
        stack = [(root, rows, F, order)]
        while stack:
            check_deadline()
            node, rows, F, order = stack.pop()
            pending = []
            for part, part_order in self._children(node, rows, F, order):
                child, Fc = self._node_model(part, node.coef, node.intercept, node.n_parameters)
                node.children.append(child)
                pending.append((child, part, Fc, part_order))
            stack.extend(reversed(pending))
        return root

    def _grow_by_levels(self, starts) -> list[_Node]:
        roots, level = [], [(rows, order, B, b, 0.0, None) for rows, order, B, b in starts]
        while level:
            check_deadline()
            models = self._level_models([(e[0], e[2], e[3], e[4]) for e in level])
            following = []
            for (rows, order, _, _, _, parent), (node, F) in zip(level, models):
                if parent is None:
                    roots.append(node)
                else:
                    parent.children.append(node)
                for part, part_order in self._children(node, rows, F, order):
                    following.append((part, part_order, node.coef, node.intercept, node.n_parameters, node))
            level = following
        return roots

"""WEKA's LogitBoost learners: SimpleLogistic and LMT (logistic model trees).

SimpleLogistic is WEKA's ``LogisticBase`` on all the data: an additive logistic model fitted
by LogitBoost with simple (one-attribute) linear regressions, the number of iterations chosen
by cross-validation, training error or AIC (:mod:`spaces.slc._logitboost`). LMT grows a
C4.5-style tree with a LogitBoost model at every node, each continuing the boosting of its
parent on the node's rows, then CART-prunes the tree with the cost-complexity parameter
chosen by 5-fold cross-validation (Landwehr, Hall & Frank 2005; WEKA ``LMT``/``LMTNode``;
the trees grow in :mod:`spaces.slc._lmt_tree`, the pruning is below). Both replace missing values by the training means
(WEKA ReplaceMissingValues), so they accept NaN in ``X``.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from ._functions_common import column_means, fill_missing
from ._lmt_tree import _LMTGrower, _Node
from ._logitboost import (HEURISTIC_STOP, _best_iteration, _boost_fixed, _coefficients, _error, _folds,
                          _LogitBoost, _regressions, _select_by_aic, _select_by_cv, _softmax)
from ._validation import ReplacesMissingValues, fit_inputs, labels, predict_inputs

# the tests reach these helpers through this module
from ._lmt_tree import _c45_split  # noqa: E402,F401
from ._logitboost import _trim_mask  # noqa: E402,F401


def _decision(F: np.ndarray) -> np.ndarray:
    """scikit-learn's convention: the log-odds of classes_[1] for two classes, else F."""
    return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F


def _simple_regressions(XX: np.ndarray, m: int, W: np.ndarray, WZ: np.ndarray):
    """:func:`_regressions` of one block with ``XX`` = [X, X²], weights ``W`` and ``WZ`` = w·z;
    (attribute, slope, intercept) K-vectors, or None if some class has no usable attribute."""
    Sw = np.hstack([W.sum(axis=0)[:, None], W.T @ XX])
    Swz = np.hstack([WZ.sum(axis=0)[:, None], WZ.T @ XX[:, :m]])
    attr, slope, intercept, ok = _regressions(Sw[None], Swz[None], m)
    return (attr[0], slope[0], intercept[0]) if ok[0] else None


def _select_by_training_error(lb: _LogitBoost, max_iter: int, on_probabilities: bool) -> int:
    errors = [_error(lb.F, lb.yi, lb.sw, on_probabilities)]
    no_min, last_min = 0, np.inf
    while len(lb.history) < max_iter:
        check_deadline()
        if not lb.step():
            break
        errors.append(_error(lb.F, lb.yi, lb.sw, on_probabilities))
        if no_min > HEURISTIC_STOP:
            break
        if errors[-1] < last_min:
            last_min, no_min = errors[-1], 0
        else:
            no_min += 1
    return _best_iteration(errors, len(lb.history))


class WekaSimpleLogistic(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
    """WEKA SimpleLogistic: a linear logistic model fitted by LogitBoost with simple regressions.

    The number of iterations (at most ``max_iterations``) is chosen by AIC if ``use_aic``,
    else by 5-fold cross-validation if ``use_cross_validation``, else by training error —
    WEKA's precedence — with the 50-iteration heuristic stop; the model is then refitted on
    all rows. ``weight_trim_beta`` > 0 fits each regression only to the heaviest rows
    carrying 1 − beta of the weight. Missing values → means (WEKA ReplaceMissingValues).
    Deviation: the cross-validation folds are stratified and shuffled with ``random_state``
    (WEKA stratifies without shuffling).
    """

    def __init__(self, use_cross_validation=True, use_aic=False, weight_trim_beta=0.0,
                 max_iterations=500, error_on_probabilities=False, random_state=0):
        self.use_cross_validation = use_cross_validation
        self.use_aic = use_aic
        self.weight_trim_beta = weight_trim_beta
        self.max_iterations = max_iterations
        self.error_on_probabilities = error_on_probabilities
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, yi, sw = fit_inputs(self, X, y, sample_weight, allow_nan=True)
        self.means_ = column_means(X)
        Xc = fill_missing(X, self.means_) - self.means_  # centring keeps the regressions well conditioned
        k, max_iter = self.classes_.size, int(self.max_iterations)
        F0 = np.zeros((X.shape[0], k))
        beta, eop = float(self.weight_trim_beta), bool(self.error_on_probabilities)
        lb = _LogitBoost(Xc, yi, k, sw, F0, beta)
        if self.use_aic:
            n_iter = _select_by_aic(lb, max_iter, 0.0)
        elif self.use_cross_validation:
            rng = np.random.default_rng(int(self.random_state))
            n_iter = _select_by_cv(Xc, yi, k, sw, F0, max_iter, eop, beta, rng)
            lb = _boost_fixed(_LogitBoost(Xc, yi, k, sw, F0, beta), n_iter)
        else:
            n_iter = _select_by_training_error(lb, max_iter, eop)
        # boosting is deterministic, so a prefix of a longer run is the refit WEKA performs
        self.n_iterations_ = min(n_iter, len(lb.history))
        self.coef_, self.intercept_ = _coefficients(lb.history[:self.n_iterations_], X.shape[1], k)
        return self

    def _scores(self, X) -> np.ndarray:
        """The class scores F (n, K) of the additive logistic model."""
        X = predict_inputs(self, X, allow_nan=True, fitted="coef_")
        return (fill_missing(X, self.means_) - self.means_) @ self.coef_ + self.intercept_

    def decision_function(self, X):
        return _decision(self._scores(X))

    def predict_proba(self, X):
        return _softmax(self._scores(X))

    def predict(self, X):
        return labels(self, self._scores(X))


class WekaLMT(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
    """WEKA LMT: a logistic model tree (Landwehr, Hall & Frank 2005).

    As WEKA: with ``fast_regression`` the number of LogitBoost iterations is chosen once, by
    cross-validating (or AIC, ``use_aic``) a stand-alone model on all rows (at most 200
    iterations), and every node then continues its parent's model for that many iterations
    on its own rows; without it every node cross-validates (or uses AIC) on its own rows.
    Nodes with fewer than 5 rows keep the parent's model. A node with more than
    ``min_num_instances`` rows is split with C4.5's criterion (gain ratio among attributes
    of at least average MDL-corrected gain, ≥ 2 rows per branch), or, with
    ``split_on_residuals``, on the purity of the LogitBoost residuals of its own model. The
    tree is then CART-pruned on the models' training errors with the cost-complexity alpha
    that minimises the 5-fold cross-validated error. ``error_on_probabilities`` and
    ``weight_trim_beta`` act on LogitBoost as in SimpleLogistic.
    Simplified: numeric (binary) splits only — nominal attributes arrive one-hot encoded, so
    ``convert_nominal`` has no effect; folds are stratified and shuffled with
    ``random_state`` (WEKA stratifies without shuffling); no instance weights (WEKA's LMT
    does not handle them either).
    """

    def __init__(self, min_num_instances=15, convert_nominal=False, split_on_residuals=False,
                 fast_regression=True, error_on_probabilities=False, use_aic=False,
                 weight_trim_beta=0.0, random_state=0):
        self.min_num_instances = min_num_instances
        self.convert_nominal = convert_nominal
        self.split_on_residuals = split_on_residuals
        self.fast_regression = fast_regression
        self.error_on_probabilities = error_on_probabilities
        self.use_aic = use_aic
        self.weight_trim_beta = weight_trim_beta
        self.random_state = random_state

    def fit(self, X, y):
        X, yi, _ = fit_inputs(self, X, y, allow_nan=True)
        self.means_ = column_means(X)
        Xc = fill_missing(X, self.means_) - self.means_
        n, k = X.shape[0], self.classes_.size
        rng = np.random.default_rng(int(self.random_state))
        fixed = -1
        if self.fast_regression:  # WEKA tryLogistic: one stand-alone model picks the count
            lb = _LogitBoost(Xc, yi, k, np.ones(n), np.zeros((n, k)), float(self.weight_trim_beta))
            if self.use_aic:
                fixed = _select_by_aic(lb, 200, 0.0)
            else:
                fixed = _select_by_cv(Xc, yi, k, np.ones(n), np.zeros((n, k)), 200,
                                      bool(self.error_on_probabilities), float(self.weight_trim_beta), rng)
        self.fixed_iterations_ = fixed
        sorted_all = [np.unique(Xc[:, a]) for a in range(Xc.shape[1])]

        # cross-validate the cost-complexity parameter: the folds' trees and the final one
        # grow together (with fast regression, level by level; else one after the other)
        folds = _folds(yi, rng)
        grower = _LMTGrower(self, Xc, yi, k, sorted_all, fixed, rng)
        *fold_roots, root = grower.grow_all([train for train, _ in folds] + [np.arange(n)])
        fold_curves = []
        for (train, test), fold_root in zip(folds, fold_roots):
            paths = _PathPredictions(fold_root, Xc[test], grower.n_nodes)
            fold_curves.append(_pruning_sequence(fold_root, float(train.size), paths, yi[test]))

        self.n_leaves_unpruned_ = sum(1 for node in _postorder(root) if node.is_leaf)
        tree_alphas, _ = _pruning_sequence(root, float(n), None, None)
        best_alpha = 0.0
        if fold_curves:
            best, best_error = 0, np.inf
            for i in range(len(tree_alphas) - 2, -1, -1):  # ties favour the smaller tree
                alpha = np.sqrt(tree_alphas[i] * tree_alphas[i + 1])
                error = 0.0
                for alphas_k, errors_k in fold_curves:
                    above = np.asarray(alphas_k) > alpha  # first alpha above: WEKA's linear scan
                    pos = int(np.argmax(above)) if above.any() else len(alphas_k) - 1
                    error += errors_k[min(pos, len(errors_k)) - 1]
                if error < best_error:
                    best, best_error = i, error
            best_alpha = np.sqrt(tree_alphas[best] * tree_alphas[best + 1])
        _unprune(root)
        _prune_to(root, best_alpha, float(n))
        self._flatten(root)
        return self

    def _flatten(self, root: _Node) -> None:
        """Array form of the pruned tree: split attribute/threshold, children, leaf model."""
        nodes, index = [], {}
        stack = [root]
        while stack:
            node = stack.pop()
            index[id(node)] = len(nodes)
            nodes.append(node)
            if not node.is_leaf:
                stack.extend(node.children)
        self.tree_attr_ = np.array([nd.attr if not nd.is_leaf else -1 for nd in nodes])
        self.tree_threshold_ = np.array([nd.threshold for nd in nodes])
        self.tree_children_ = np.array([[index[id(nd.children[0])], index[id(nd.children[1])]]
                                        if not nd.is_leaf else [-1, -1] for nd in nodes]).reshape(-1, 2)
        leaves = [i for i, nd in enumerate(nodes) if nd.is_leaf]
        self.leaf_index_ = np.full(len(nodes), -1)
        self.leaf_index_[leaves] = np.arange(len(leaves))
        self.leaf_coef_ = np.stack([nodes[i].coef for i in leaves])
        self.leaf_intercept_ = np.stack([nodes[i].intercept for i in leaves])
        self.n_leaves_ = len(leaves)

    def _scores(self, X) -> np.ndarray:
        """The class scores F (n, K) of each row's leaf model."""
        X = predict_inputs(self, X, allow_nan=True, fitted="leaf_coef_")
        Xc = fill_missing(X, self.means_) - self.means_
        node = np.zeros(Xc.shape[0], dtype=int)
        while True:
            inner = self.tree_attr_[node] >= 0
            if not inner.any():
                break
            rows = np.flatnonzero(inner)
            at = node[rows]
            right = Xc[rows, self.tree_attr_[at]] > self.tree_threshold_[at]
            node[rows] = self.tree_children_[at, right.astype(int)]
        leaf = self.leaf_index_[node]
        F = np.empty((Xc.shape[0], self.classes_.size))
        for j in np.unique(leaf):
            rows = leaf == j
            F[rows] = Xc[rows] @ self.leaf_coef_[j] + self.leaf_intercept_[j]
        return F

    def decision_function(self, X):
        return _decision(self._scores(X))

    def predict_proba(self, X):
        return _softmax(self._scores(X))

    def predict(self, X):
        return labels(self, self._scores(X))


# --- CART pruning (WEKA LMTNode.prune / treeErrors / calculateAlphas) ------------------------
def _inner_nodes(root: _Node) -> list[_Node]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        if not node.is_leaf:
            out.append(node)
            stack.extend(reversed(node.children))
    return out


def _postorder(root: _Node) -> list[_Node]:
    out, stack = [], [root]
    while stack:
        node = stack.pop()
        out.append(node)
        if not node.is_leaf:
            stack.extend(node.children)
    return out[::-1]


def _update_alphas(root: _Node, total: float) -> None:
    """treeErrors() then calculateAlphas(); a split that does not reduce training error is cut."""
    for node in _postorder(root):
        if node.is_leaf:
            node.errors_tree, node.n_leaves = node.errors_model, 1
        else:
            node.errors_tree = sum(c.errors_tree for c in node.children)
            leaves = sum(c.n_leaves for c in node.children)
            empty = sum(1 for c in node.children if c.is_leaf and c.own_iterations == 0)
            node.n_leaves = leaves - (empty - 1) if empty > 1 else leaves
    stack = [root]
    while stack:
        node = stack.pop()
        node.alpha = np.inf
        if node.is_leaf:
            continue
        diff = node.errors_model - node.errors_tree
        if diff <= 0:
            node.is_leaf, node.children = True, None
            continue
        node.alpha = diff / total / max(node.n_leaves - 1, 1)
        stack.extend(reversed(node.children))


def _weakest_link(nodes: list[_Node]) -> _Node:
    return min(nodes, key=lambda nd: nd.alpha)  # first minimum in pre-order, as Collections.min


class _PathPredictions:
    """Each test row's nodes from the root down and every node model's prediction there."""

    def __init__(self, root: _Node, X: np.ndarray, n_nodes: int):
        n = X.shape[0]
        visits = []  # (depth, rows, node id, the node model's predictions on the rows)
        stack = [(root, np.arange(n), 0)]
        while stack:
            node, rows, depth = stack.pop()
            if rows.size == 0:
                continue
            visits.append((depth, rows, node.node_id, np.argmax(X[rows] @ node.coef + node.intercept, axis=1)))
            if node.children:
                left = X[rows, node.attr] <= node.threshold
                stack.append((node.children[0], rows[left], depth + 1))
                stack.append((node.children[1], rows[~left], depth + 1))
        depth = max(v[0] for v in visits) + 1
        self.node_ids = np.full((n, depth), -1)
        self.preds = np.zeros((n, depth), dtype=int)
        for d, rows, node_id, pred in visits:
            self.node_ids[rows, d] = node_id
            self.preds[rows, d] = pred
        self.n_nodes = n_nodes

    def error_rate(self, root: _Node, y: np.ndarray) -> float:
        leaf = np.ones(self.n_nodes + 1, dtype=bool)  # index -1 (padding) counts as a leaf
        stack = [root]
        while stack:
            node = stack.pop()
            if not node.is_leaf:
                leaf[node.node_id] = False
                stack.extend(node.children)
        first = np.argmax(leaf[self.node_ids], axis=1)
        return float(np.mean(self.preds[np.arange(len(y)), first] != y))


def _pruning_sequence(root: _Node, total: float, paths: _PathPredictions | None, y_test):
    """Prune weakest links until only the root is left; the alphas and test errors on the way."""
    _update_alphas(root, total)
    alphas, errors = [0.0], []
    if paths is not None:
        errors.append(paths.error_rate(root, y_test))
    nodes = _inner_nodes(root)
    while nodes:
        check_deadline()
        node = _weakest_link(nodes)
        node.is_leaf = True  # children kept, so the tree can be "unpruned"
        alphas.append(node.alpha)
        if paths is not None:
            errors.append(paths.error_rate(root, y_test))
        _update_alphas(root, total)
        nodes = _inner_nodes(root)
    alphas.append(1.0)  # end marker
    return alphas, errors


def _unprune(root: _Node) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.children:
            node.is_leaf = False
            stack.extend(node.children)


def _prune_to(root: _Node, alpha: float, total: float) -> None:
    _update_alphas(root, total)
    nodes = _inner_nodes(root)
    while nodes:
        node = _weakest_link(nodes)
        if node.alpha > alpha:
            break
        node.is_leaf, node.children = True, None
        _update_alphas(root, total)
        nodes = _inner_nodes(root)


# ---------------------------------------------------------------------------------- builders
def _weight_trim_beta(p: Params) -> float:
    """The optional <wtb> behind its gate <wtb_opt> (absent = 0, no trimming)."""
    return p.real("wtb") if p.flag("wtb_opt") else 0.0


@register("SimpleLogistic", kind="slc")
def simple_logistic(p: Params):
    """SimpleLogistic: ucv = do NOT cross-validate the iterations, uaic = use AIC, wtb weight trimming."""
    return WekaSimpleLogistic(use_cross_validation=not p.flag("ucv"), use_aic=p.flag("uaic"),
                              weight_trim_beta=_weight_trim_beta(p), random_state=p.random_state)


@register("LMT", kind="slc")
def lmt(p: Params):
    """LMT: mno_lmt rows to split, cn, sor (residual splits), fr = DISABLE fast regression, eop, uaic, wtb."""
    return WekaLMT(min_num_instances=p.int("mno_lmt"), convert_nominal=p.flag("cn"),
                   split_on_residuals=p.flag("sor"), fast_regression=not p.flag("fr"),
                   error_on_probabilities=p.flag("eop"), use_aic=p.flag("uaic"),
                   weight_trim_beta=_weight_trim_beta(p), random_state=p.random_state)

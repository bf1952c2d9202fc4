"""LogitBoost with simple linear regression functions, and the two WEKA learners built on
it: SimpleLogistic and LMT (logistic model trees).

WEKA's ``weka.classifiers.trees.lmt.LogisticBase`` fits an additive logistic model by
LogitBoost (Friedman et al.): each iteration fits, for every class, the single-attribute
weighted least-squares regression with the smallest squared error to the working
responses, and adds it (centred over the classes, times (K−1)/K) to the class scores F.
The number of iterations is chosen by 5-fold cross-validation, by training error, or by
AIC, with early stopping after 50 iterations without a new minimum (notes §1.1.10,
§1.1.20). Here one iteration is a handful of matrix products over all attributes and
classes at once, and the fitted model is kept as one coefficient matrix (F = X·B + b).

SimpleLogistic is that model on all the data. LMT grows a C4.5-style tree with a
LogitBoost model at every node, each continuing the boosting of its parent on the node's
rows, then CART-prunes the tree with the cost-complexity parameter chosen by 5-fold
cross-validation (Landwehr, Hall & Frank 2005; WEKA ``LMT``/``LMTNode``).
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.utils.validation import check_array, check_is_fitted

from spaces.deadline import check_deadline
from spaces.params import Params
from spaces.registry import register

#: LogitBoost's cap on the working response (WEKA ``LogisticBase.Z_MAX``)
Z_MAX = 3.0
#: WEKA's boosting folds (``m_numFoldsBoosting``) and CART-pruning folds (``m_numFoldsPruning``)
N_FOLDS = 5
#: iterations without a new minimum before LogitBoost stops (``m_heuristicStop``)
HEURISTIC_STOP = 50
#: WEKA's comparison tolerance (``Utils.SMALL``)
SMALL = 1e-6


# ------------------------------------------------------------------------------ the booster
class _LogitBoost:
    """LogitBoost on one training set, warm-started from scores ``F0``.

    ``history`` holds one (attribute, slope, intercept) triple of K-vectors per iteration;
    :func:`_coefficients` turns any prefix of it into the linear model ``F = X·B + b``.
    """

    def __init__(self, X: np.ndarray, yi: np.ndarray, k: int, sw: np.ndarray, F0: np.ndarray,
                 weight_trim_beta: float):
        self.X = X
        self.XX = np.hstack([X, X * X])  # one product gives Σwx, Σwzx and Σwx² for every attribute
        self.m = X.shape[1]
        self.yi, self.k, self.sw = yi, k, sw
        self._sw_col = sw[:, None]
        self.Y = np.zeros((X.shape[0], k))
        self.Y[np.arange(X.shape[0]), yi] = 1.0
        self.F = F0.copy()
        self.P = _softmax(self.F)
        self.beta = float(weight_trim_beta)
        self.history: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def _responses(self) -> tuple[np.ndarray, np.ndarray]:
        """LogitBoost weights w = (y − p)/z and products w·z = y − p (times the row weights).

        With the working response z = 1/p (y = 1) or −1/(1 − p) (y = 0), capped at ±Z_MAX,
        w = |y − p|·max(1 − |y − p|, 1/Z_MAX).
        """
        R = self.Y - self.P
        A = np.abs(R)
        W = A * np.maximum(1.0 - A, 1.0 / Z_MAX) * self._sw_col
        WZ = R * self._sw_col
        if self.beta > 0:
            keep = _trim_mask(W, self.beta)
            W, WZ = W * keep, WZ * keep
        return W, WZ

    def step(self) -> bool:
        """One iteration; False (and no change) when no useful attribute is left."""
        fit = _simple_regressions(self.XX, self.m, *self._responses())
        if fit is None:
            return False
        self.history.append(fit)
        self.F += _increment(self.X, fit, self.k)
        self.P = _softmax(self.F)
        return True

    def advance(self, X: np.ndarray, F: np.ndarray) -> None:
        """Apply the last iteration to other rows' scores (a test fold)."""
        F += _increment(X, self.history[-1], self.k)


def _softmax(F: np.ndarray) -> np.ndarray:
    E = np.exp(F - F.max(axis=1, keepdims=True))
    E /= E.sum(axis=1, keepdims=True)
    return E


def _trim_mask(W: np.ndarray, beta: float) -> np.ndarray:
    """WEKA weight trimming: per class keep the heaviest rows carrying (1 − beta) of the weight."""
    order = np.argsort(-W, axis=0, kind="stable")
    sorted_w = np.take_along_axis(W, order, axis=0)
    total = sorted_w.sum(axis=0)
    before = (np.cumsum(sorted_w, axis=0) - sorted_w) / np.where(total > 0, total, 1.0)
    keep_sorted = (before < 1.0 - beta) | (total <= 0)
    keep = np.zeros_like(keep_sorted)
    np.put_along_axis(keep, order, keep_sorted, axis=0)
    return keep


def _simple_regressions(XX: np.ndarray, m: int, W: np.ndarray, WZ: np.ndarray):
    """Per class, the one-attribute weighted regression of z with the least squared error.

    WEKA ``SimpleLinearRegression``: attributes with zero weighted variance are skipped;
    ties go to the first attribute. ``XX`` = [X, X²]; ``W`` the weights and ``WZ`` = w·z.
    Returns (attribute, slope, intercept) K-vectors, or None if some class has no usable
    attribute.
    """
    k = W.shape[1]
    w_sum = W.sum(axis=0)
    if np.any(w_sum <= 0):
        return None
    sums = XX.T @ np.hstack([W, WZ])
    xw, xwz, x2w = sums[:m, :k], sums[:m, k:], sums[m:, :k]
    x_mean = xw / w_sum
    z_mean = WZ.sum(axis=0) / w_sum
    sxx = x2w - w_sum * x_mean * x_mean
    sxz = xwz - xw * z_mean
    usable = sxx > 1e-10 * x2w
    if not usable.any(axis=0).all():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        gain = np.where(usable, sxz * sxz / sxx, -np.inf)  # SSE = Szz − gain
    attr = np.argmax(gain, axis=0)
    cols = np.arange(k)
    slope = sxz[attr, cols] / sxx[attr, cols]
    intercept = z_mean - slope * x_mean[attr, cols]
    return attr, slope, intercept


def _increment(X: np.ndarray, fit, k: int) -> np.ndarray:
    """(f − mean over classes)·(K−1)/K for the regressions of one iteration."""
    attr, slope, intercept = fit
    f = X[:, attr] * slope
    f += intercept
    f -= f.sum(axis=1, keepdims=True) / k
    f *= (k - 1) / k
    return f


def _coefficients(history, m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The linear model ``F = X·B + b`` of a list of iterations."""
    B, b = np.zeros((m, k)), np.zeros(k)
    if not history:
        return B, b
    D = (np.eye(k) - 1.0 / k) * ((k - 1) / k)  # centring and (K−1)/K shrinkage
    attrs = np.concatenate([h[0] for h in history])
    slopes = np.concatenate([h[1] for h in history])
    classes = np.tile(np.arange(k), len(history))
    np.add.at(B, attrs, slopes[:, None] * D[classes])
    b += np.sum([h[2] for h in history], axis=0) @ D
    return B, b


def _error(F: np.ndarray, yi: np.ndarray, sw: np.ndarray, on_probabilities: bool) -> float:
    """Weighted misclassification rate, or WEKA's mean absolute error of the probabilities."""
    if on_probabilities:
        P = _softmax(F)
        Y = np.zeros_like(P)
        Y[np.arange(len(yi)), yi] = 1.0
        per_row = np.abs(Y - P).sum(axis=1) / P.shape[1]
    else:
        per_row = (np.argmax(F, axis=1) != yi).astype(float)
    return float(sw @ per_row / sw.sum())


# ----------------------------------------------------------- choosing the number of iterations
def _boost_fixed(lb: _LogitBoost, n: int) -> _LogitBoost:
    for _ in range(n):
        check_deadline()
        if not lb.step():
            break
    return lb


def _best_iteration(errors: list[float], last: int) -> int:
    """First iteration in 0..last with the smallest error (WEKA ``getBestIteration``)."""
    return int(np.argmin(np.asarray(errors[:last + 1])))


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


def _select_by_aic(lb: _LogitBoost, max_iter: int, n_parameters: float) -> int:
    """AIC = 2·NLL + 2·(parameters of the parent models + iterations)."""
    best, best_it, no_min = np.inf, 0, 0
    rows = np.arange(len(lb.yi))
    while len(lb.history) < max_iter:
        check_deadline()
        if not lb.step():
            break
        it = len(lb.history)
        nll = -np.log(np.maximum(lb.P[rows, lb.yi], 1e-300)).sum()
        aic = 2.0 * nll + 2.0 * (n_parameters + it)
        if no_min > HEURISTIC_STOP:
            break
        if aic < best:
            best, best_it, no_min = aic, it, 0
        else:
            no_min += 1
    return best_it


def _folds(yi: np.ndarray, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """5 (or n, if fewer rows) stratified folds, shuffled by ``rng`` (WEKA: stratified only)."""
    n_splits = min(N_FOLDS, len(yi))
    if n_splits < 2:
        return []
    seed = int(rng.integers(2**31 - 1))
    if np.bincount(yi).max() >= n_splits:
        splitter = StratifiedKFold(n_splits=n_splits, shuffle=True, random_state=seed)
    else:  # no class fills every fold: scikit-learn refuses to stratify
        splitter = KFold(n_splits=n_splits, shuffle=True, random_state=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # classes with fewer rows than folds
        return list(splitter.split(np.zeros((len(yi), 1)), yi))


def _select_by_cv(X, yi, k, sw, F0, max_iter, on_probabilities, beta, rng) -> int:
    """WEKA ``performBoostingCV``: summed test-fold errors per iteration over 5 folds."""
    splits = _folds(yi, rng)
    if not splits:
        return 0
    errors = np.zeros(max_iter + 1)
    completed = max_iter
    for train, test in splits:
        lb = _LogitBoost(X[train], yi[train], k, sw[train], F0[train], beta)
        F_test = F0[test].copy()
        errors[0] += _error(F_test, yi[test], sw[test], on_probabilities)
        no_min, last_min = 0, np.inf
        while len(lb.history) < completed:
            check_deadline()
            if not lb.step():
                break
            lb.advance(X[test], F_test)
            it = len(lb.history)
            errors[it] += _error(F_test, yi[test], sw[test], on_probabilities)
            if no_min > HEURISTIC_STOP:
                break
            if errors[it] < last_min:
                last_min, no_min = errors[it], 0
            else:
                no_min += 1
        completed = min(completed, len(lb.history))
    return _best_iteration(list(errors), completed)


def _decision(F: np.ndarray) -> np.ndarray:
    """scikit-learn's convention: the log-odds of classes_[1] for two classes, else F."""
    return F[:, 1] - F[:, 0] if F.shape[1] == 2 else F


def _prepare(X) -> np.ndarray:
    return check_array(X, dtype=float, ensure_all_finite="allow-nan")


def _fill(X: np.ndarray, means: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(X), means[None, :], X) if np.isnan(X).any() else X


def _nan_means(X: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nan_to_num(np.nanmean(X, axis=0))


# ------------------------------------------------------------------------------ SimpleLogistic
class WekaSimpleLogistic(ClassifierMixin, BaseEstimator):
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
        X = _prepare(X)
        self.classes_, yi = np.unique(np.asarray(y), return_inverse=True)
        sw = np.ones(X.shape[0]) if sample_weight is None else np.asarray(sample_weight, dtype=float)
        if sw.shape != (X.shape[0],):
            raise ValueError(f"sample_weight must have shape ({X.shape[0]},), got {sw.shape}")
        self.means_ = _nan_means(X)
        Xc = _fill(X, self.means_) - self.means_  # centring keeps the regressions well conditioned
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
        check_is_fitted(self, "coef_")
        return (_fill(_prepare(X), self.means_) - self.means_) @ self.coef_ + self.intercept_

    def decision_function(self, X):
        return _decision(self._scores(X))

    def predict_proba(self, X):
        return _softmax(self._scores(X))

    def predict(self, X):
        return self.classes_[np.argmax(self._scores(X), axis=1)]


# ------------------------------------------------------------------------------------- LMT
def _sorted_columns(Xn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(Xn, axis=0, kind="stable")
    return order, np.take_along_axis(Xn, order, axis=0)


def _c45_split(Xn: np.ndarray, yn: np.ndarray, k: int, min_obj: int = 2):
    """C4.5's numeric split selection (WEKA ``C45ModelSelection`` with ``C45Split``).

    Per attribute: the best information-gain threshold among those leaving at least
    ``clamp(0.1·n/K, min_obj, 25)`` rows on each side, its gain reduced by the MDL term
    log2(#candidate thresholds)/n; then, among attributes with at least average gain, the
    best gain ratio. Rows are unweighted (LMT), so entropies come from a table of c·log2(c).
    Returns (attribute, midpoint) or None.
    """
    n, m = Xn.shape
    counts = np.bincount(yn, minlength=k)
    if n < 2 * min_obj or counts.max() == n:
        return None
    xlogx = np.zeros(n + 1)
    xlogx[1:] = np.arange(1, n + 1) * np.log2(np.arange(1, n + 1))
    min_split = min(max(0.1 * n / k, min_obj), 25.0)
    n_left = np.arange(1, n)[:, None]
    order, xs = _sorted_columns(Xn)
    sorted_y = yn[order]
    class_terms = np.zeros((n - 1, m))
    for c in np.flatnonzero(counts):
        left = np.cumsum(sorted_y == c, axis=0)[:-1]
        class_terms += xlogx[left] + xlogx[counts[c] - left]
    # information gain in bits per row: H(parent) − Σ_branches (n_b/n)·H(branch)
    base = xlogx[n] - xlogx[counts].sum()
    gain = (base - (xlogx[n_left] + xlogx[n - n_left] - class_terms)) / n
    ok = (xs[1:] > xs[:-1] + 1e-5) & (n_left >= min_split) & (n - n_left >= min_split)
    n_cand = ok.sum(axis=0)
    gain = np.where(ok, gain, -np.inf)
    best = np.argmax(gain, axis=0)
    cols = np.arange(m)
    g = gain[best, cols] - np.log2(np.maximum(n_cand, 1)) / n
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
    return attr, (xs[best[attr], attr] + xs[best[attr] + 1, attr]) / 2.0


def _residual_split(Xn: np.ndarray, Z: np.ndarray, W: np.ndarray, min_obj: int = 2):
    """WEKA ``ResidualModelSelection``: the split that most reduces Σ_classes Σ w·(z − z̄)².

    Every attribute's best midpoint is found without size constraints; attributes whose
    best split leaves fewer than ``min_obj`` rows on a side are skipped, and the best split
    must reduce the residual spread by at least 1e-4.
    """
    n, m = Xn.shape
    if n < min_obj:
        return None
    order, xs = _sorted_columns(Xn)
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
    """Grows one unpruned logistic model tree on (X, yi) (WEKA ``LMTNode.buildTree``)."""

    def __init__(self, est: "WekaLMT", X, yi, k, sorted_all, fixed_iterations, rng):
        self.est, self.X, self.yi, self.k = est, X, yi, k
        self.sorted_all = sorted_all  # per attribute, all training values (split points)
        self.fixed = fixed_iterations
        self.rng = rng
        self.n_nodes = 0

    def _node_model(self, rows, B, b, higher):
        Xn, yn = self.X[rows], self.yi[rows]
        est, k = self.est, self.k
        sw = np.ones(rows.size)
        F0 = Xn @ B + b
        beta, eop = float(est.weight_trim_beta), bool(est.error_on_probabilities)
        history = []
        if rows.size >= N_FOLDS:
            if self.fixed > 0:
                history = _boost_fixed(_LogitBoost(Xn, yn, k, sw, F0, beta), self.fixed).history
            elif est.use_aic:
                lb = _LogitBoost(Xn, yn, k, sw, F0, beta)
                history = lb.history[:_select_by_aic(lb, 200, higher)]
            else:
                n_iter = _select_by_cv(Xn, yn, k, sw, F0, 200, eop, beta, self.rng)
                history = _boost_fixed(_LogitBoost(Xn, yn, k, sw, F0, beta), n_iter).history
        dB, db = _coefficients(history, Xn.shape[1], k)
        B, b = B + dB, b + db
        F = Xn @ B + b
        node = _Node(B, b, higher + len(history), len(history),
                     float((np.argmax(F, axis=1) != yn).sum()), node_id=self.n_nodes)
        self.n_nodes += 1
        return node, F

    def _split(self, rows, F):
        Xn, yn = self.X[rows], self.yi[rows]
        if self.est.split_on_residuals:
            P = _softmax(F)
            Y = np.eye(self.k)[yn]
            with np.errstate(divide="ignore", over="ignore"):
                Z = np.where(Y == 1.0, np.minimum(1.0 / P, Z_MAX), np.maximum(-1.0 / (1.0 - P), -Z_MAX))
            return _residual_split(Xn, Z, (Y - P) / Z)
        split = _c45_split(Xn, yn, self.k)
        if split is None:
            return None
        attr, mid = split
        values = self.sorted_all[attr]  # WEKA moves the split point to an actual training value
        return attr, values[np.searchsorted(values, mid, side="right") - 1]

    def grow(self, rows) -> _Node:
        m = self.X.shape[1]
        root, F = self._node_model(rows, np.zeros((m, self.k)), np.zeros(self.k), 0.0)
        stack = [(root, rows, F)]
        while stack:
            check_deadline()
            node, rows, F = stack.pop()
            if rows.size <= int(self.est.min_num_instances):
                continue
            split = self._split(rows, F)
            if split is None:
                continue
            node.attr, node.threshold = split
            go_left = self.X[rows, node.attr] <= node.threshold
            node.children, node.is_leaf = [], False
            pending = []
            for part in (rows[go_left], rows[~go_left]):
                child, Fc = self._node_model(part, node.coef, node.intercept, node.n_parameters)
                node.children.append(child)
                pending.append((child, part, Fc))
            stack.extend(reversed(pending))
        return root


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
        nodes, preds = [[] for _ in range(n)], [[] for _ in range(n)]
        stack = [(root, np.arange(n))]
        while stack:
            node, rows = stack.pop()
            if rows.size == 0:
                continue
            pred = np.argmax(X[rows] @ node.coef + node.intercept, axis=1)
            for r, p in zip(rows, pred):
                nodes[r].append(node.node_id)
                preds[r].append(p)
            if node.children:
                left = X[rows, node.attr] <= node.threshold
                stack.append((node.children[0], rows[left]))
                stack.append((node.children[1], rows[~left]))
        depth = max(len(p) for p in nodes)
        self.node_ids = np.full((n, depth), -1)
        self.preds = np.zeros((n, depth), dtype=int)
        for r in range(n):
            self.node_ids[r, :len(nodes[r])] = nodes[r]
            self.preds[r, :len(preds[r])] = preds[r]
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


class WekaLMT(ClassifierMixin, BaseEstimator):
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
        X = _prepare(X)
        self.classes_, yi = np.unique(np.asarray(y), return_inverse=True)
        self.means_ = _nan_means(X)
        Xc = _fill(X, self.means_) - self.means_
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

        # cross-validate the cost-complexity parameter
        fold_curves = []
        for train, test in _folds(yi, rng):
            grower = _LMTGrower(self, Xc[train], yi[train], k, sorted_all, fixed, rng)
            root = grower.grow(np.arange(train.size))
            paths = _PathPredictions(root, Xc[test], grower.n_nodes)
            fold_curves.append(_pruning_sequence(root, float(train.size), paths, yi[test]))

        grower = _LMTGrower(self, Xc, yi, k, sorted_all, fixed, rng)
        root = grower.grow(np.arange(n))
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
        check_is_fitted(self, "leaf_coef_")
        Xc = _fill(_prepare(X), self.means_) - self.means_
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
        return self.classes_[np.argmax(self._scores(X), axis=1)]


# ---------------------------------------------------------------------------------- builders
def _weight_trim_beta(p: Params) -> float:
    """The optional <wtb> behind its gate <wtb_opt> (absent = 0, no trimming)."""
    return p.real("wtb", 0.0) if p.flag("wtb_opt") else 0.0


@register("SimpleLogistic", kind="slc")
def simple_logistic(p: Params):
    """SimpleLogistic: ucv = do NOT cross-validate the iterations, uaic = use AIC, wtb weight trimming."""
    return WekaSimpleLogistic(use_cross_validation=not p.flag("ucv"), use_aic=p.flag("uaic"),
                              weight_trim_beta=_weight_trim_beta(p), random_state=p.random_state)


@register("LMT", kind="slc")
def lmt(p: Params):
    """LMT: mno_lmt rows to split, cn, sor (residual splits), fr = DISABLE fast regression, eop, uaic, wtb."""
    return WekaLMT(min_num_instances=p.int("mno_lmt", 15), convert_nominal=p.flag("cn"),
                   split_on_residuals=p.flag("sor"), fast_regression=not p.flag("fr"),
                   error_on_probabilities=p.flag("eop"), use_aic=p.flag("uaic"),
                   weight_trim_beta=_weight_trim_beta(p), random_state=p.random_state)

"""LogitBoost with simple linear regression functions (WEKA ``trees.lmt.LogisticBase``), the
engine of SimpleLogistic and LMT (:mod:`spaces.slc.logistic`).

Each iteration fits, for every class, the single-attribute weighted least-squares regression
with the smallest squared error to the working responses, and adds it (centred over the
classes, times (K−1)/K) to the class scores F. The number of iterations is chosen by 5-fold
cross-validation, by training error, or by AIC, with early stopping after 50 iterations
without a new minimum (notes §1.1.10, §1.1.20). One iteration is a handful of matrix products
over all attributes and classes at once, and a fitted model is one coefficient matrix
(F = X·B + b). Kept apart from the estimators so that the LMT tree code can share it.
"""
from __future__ import annotations

import warnings

import numpy as np
from sklearn.model_selection import KFold, StratifiedKFold

from ggp_automl.spaces.deadline import check_deadline

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

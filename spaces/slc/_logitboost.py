"""LogitBoost with simple linear regression functions (WEKA ``trees.lmt.LogisticBase``), the
engine of SimpleLogistic and LMT (:mod:`spaces.slc.logistic`).

Each iteration fits, for every class, the single-attribute weighted least-squares regression
with the smallest squared error to the working responses, and adds it (centred over the
classes, times (K−1)/K) to the class scores F. The number of iterations is chosen by 5-fold
cross-validation, by training error, or by AIC, with early stopping after 50 iterations
without a new minimum (notes §1.1.10, §1.1.20). Independent boosting runs share one booster
as blocks of rows (the nodes of an LMT tree level, the cross-validation folds): an iteration
is a few array operations over all their rows and attributes plus two matrix-vector products
per block, and a fitted model is one coefficient matrix (F = X·B + b). Kept apart from the
estimators so that the LMT tree code can share it.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.sparse import csr_matrix
from scipy.special import expit
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
#: blocks of fewer rows get their sums from one sparse product, not a matrix product each
SMALL_BLOCK = 100
#: the most memory one boosting batch's copy of [1, X, X²] may take (more blocks: several batches)
BATCH_BYTES = 2**27


# ------------------------------------------------------------------------------ the booster
class _Boost:
    """LogitBoost on G disjoint blocks of rows at once, each warm-started from its rows of ``F0``.

    The blocks are e.g. the nodes of one LMT tree level: every elementwise step runs once over
    all the rows, and only the per-block sums Σw, Σwz, Σwx, Σwzx and Σwx² are two matrix-vector
    products per block ([1, X, X²]ᵀ·w and [1, X]ᵀ·wz), or, for all the small blocks together,
    two sparse products. With two classes only class 1's regressions are fitted: class 0's working response is exactly the
    negation of class 1's with the same weights, so its regression is the mirror image (same
    attribute, negated slope and intercept) — what WEKA computes, up to rounding.
    ``steps`` holds one (attribute, slope, intercept) triple of (G, C) arrays per iteration
    (C = 1 fitted class for K = 2, else K) and the (G,) mask of the blocks it advanced; a block
    whose iteration finds no usable attribute stops there for good (WEKA ends its boosting).
    """

    def __init__(self, X: np.ndarray, yi: np.ndarray, k: int, sw, F0: np.ndarray,
                 weight_trim_beta: float, bounds: list[tuple[int, int]] | None = None, XXT=None):
        n, m = X.shape
        self.X, self.yi, self.k, self.m = np.ascontiguousarray(X), yi, k, m
        self.sw = np.ones(n) if sw is None else sw
        self._sw_row = None if sw is None or np.all(sw == 1.0) else sw
        self.beta = float(weight_trim_beta)
        self.bounds = [(0, n)] if bounds is None else bounds
        self.XXT = _design(X) if XXT is None else XXT  # [1, X, X²]ᵀ: a block's columns stream fastest
        self.C = 1 if k == 2 else k
        self._cls = slice(k - self.C, k)
        self._Yc = (yi[None, :] == np.arange(k)[self._cls, None]).astype(float)  # (C, n)
        self.F = np.array(F0, dtype=float)
        self._p = np.empty((self.C, n))  # the fitted classes' probabilities
        self._update_probabilities()
        self._wwz = np.empty((2 * self.C, n))
        self._w, self._wz = self._wwz[:self.C], self._wwz[self.C:]
        self._sw_sums = np.zeros((len(self.bounds), self.C, 2 * m + 1))  # Σw·[1, x, x²]
        self._wz_sums = np.zeros((len(self.bounds), self.C, m + 1))  # Σwz·[1, x]
        self.active = np.ones(len(self.bounds), dtype=bool)
        self._block = None if len(self.bounds) == 1 else \
            np.repeat(np.arange(len(self.bounds)), [e - s for s, e in self.bounds])
        self._row_base = np.arange(n)[:, None] * m  # flat index of each row's first entry in X
        self._big = np.ones(len(self.bounds), dtype=bool)
        self._small = self._small_blocks() if self.C == 1 else None
        self.steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []

    def _responses(self) -> None:
        """LogitBoost weights w = (y − p)/z and products w·z = y − p (times the row weights)
        into the (C, n) buffers ``_w`` and ``_wz``.

        With the working response z = 1/p (y = 1) or −1/(1 − p) (y = 0), capped at ±Z_MAX,
        w = |y − p|·max(1 − |y − p|, 1/Z_MAX).
        """
        W, WZ = self._w, self._wz  # (C, n): one row per fitted class
        np.subtract(self._Yc, self._p, out=WZ)
        np.abs(WZ, out=W)
        t = 1.0 - W
        np.maximum(t, 1.0 / Z_MAX, out=t)
        W *= t
        if self._sw_row is not None:
            W *= self._sw_row
            WZ *= self._sw_row
        if self.beta > 0:
            for s, e in self.bounds:
                keep = _trim_mask(W[:, s:e].T, self.beta).T
                W[:, s:e] *= keep
                WZ[:, s:e] *= keep

    def step(self) -> bool:
        """One iteration of every active block; False (and no change) when none is left."""
        self._responses()
        XXT, W, WZ, Sw, Swz, m1 = self.XXT, self._w, self._wz, self._sw_sums, self._wz_sums, self.m + 1
        if self._small is not None:  # the small blocks' sums in one sparse product each
            blocks, rows, Mw, Mwz, XXs, XXs1 = self._small
            Mw.data[:] = W[0, rows]
            Mwz.data[:] = WZ[0, rows]
            Sw[blocks, 0] = Mw @ XXs
            Swz[blocks, 0] = Mwz @ XXs1
        for g in np.flatnonzero(self._big & self.active):
            s, e = self.bounds[g]
            if self.C == 1:  # two matrix-vector products, faster than one gemm of two columns
                np.matmul(XXT[:, s:e], W[0, s:e], out=Sw[g, 0])
                np.matmul(XXT[:m1, s:e], WZ[0, s:e], out=Swz[g, 0])
            else:  # one matrix product for all classes' sums
                sums = XXT[:, s:e] @ self._wwz[:, s:e].T
                Sw[g] = sums[:, :self.C].T
                Swz[g] = sums[:m1, self.C:].T
        attr, slope, intercept, ok = _regressions(Sw, Swz, self.m)
        ok &= self.active
        self.active = ok
        if not ok.any():
            return False
        if not ok.all():  # stopped blocks: a zero increment
            attr[~ok], slope[~ok], intercept[~ok] = 0, 0.0, 0.0
        self.steps.append((attr, slope, intercept, ok))
        if self._block is None:
            _add_increment(self.F, self.X, attr, slope, intercept)
        else:  # each row's own block's regression
            b = self._block
            f = np.take(self.X, attr[b] + self._row_base) * slope[b]
            f += intercept[b]
            _add_scores(self.F, f)
        self._update_probabilities()
        return True

    def _small_blocks(self):
        """Blocks under SMALL_BLOCK rows: their indices, their rows, block-by-row sparse
        matrices for W and WZ (data set per step), and their rows of XX and [1, X]."""
        sizes = np.array([e - s for s, e in self.bounds])
        self._big = sizes >= SMALL_BLOCK
        blocks = np.flatnonzero(~self._big)
        if blocks.size == 0:
            return None
        rows = np.concatenate([np.arange(*self.bounds[g]) for g in blocks])
        shape = (blocks.size, rows.size)
        indptr = np.concatenate([[0], np.cumsum(sizes[blocks])])
        Mw = csr_matrix((np.zeros(rows.size), np.arange(rows.size), indptr), shape=shape)
        Mwz = csr_matrix((np.zeros(rows.size), np.arange(rows.size), indptr), shape=shape)
        XXs = self.XXT[:, rows].T.copy()
        return blocks, rows, Mw, Mwz, XXs, np.ascontiguousarray(XXs[:, :self.m + 1])

    def _update_probabilities(self) -> None:
        if self.k == 2:  # softmax of two scores: the sigmoid of their difference
            expit(self.F[:, 1] - self.F[:, 0], out=self._p[0])
        else:
            self._p[...] = _softmax(self.F).T

    @property
    def P(self) -> np.ndarray:
        """The class probabilities (n, K)."""
        return _softmax(self.F)


class _LogitBoost(_Boost):
    """LogitBoost on one training set, warm-started from scores ``F0``.

    ``history`` holds one (attribute, slope, intercept) triple of K-vectors per iteration;
    :func:`_coefficients` turns any prefix of it into the linear model ``F = X·B + b``.
    """

    def __init__(self, X: np.ndarray, yi: np.ndarray, k: int, sw: np.ndarray, F0: np.ndarray,
                 weight_trim_beta: float):
        super().__init__(X, yi, k, sw, F0, weight_trim_beta)
        self.history: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def step(self) -> bool:
        """One iteration; False (and no change) when no useful attribute is left."""
        if not super().step():
            return False
        self.history.append(tuple(a[0] for a in _all_classes(*self.steps[-1][:3])))
        return True

    def advance(self, X: np.ndarray, F: np.ndarray) -> None:
        """Apply the last iteration to other rows' scores (a test fold)."""
        _add_increment(F, X, *self.steps[-1][:3])


def _design(X: np.ndarray) -> np.ndarray:
    """[1, X, X²]ᵀ (2m+1, n), the rows the weighted sums are taken of."""
    m = X.shape[1]
    XXT = np.empty((2 * m + 1, X.shape[0]))
    XXT[0] = 1.0
    XXT[1:m + 1] = X.T
    np.multiply(XXT[1:m + 1], XXT[1:m + 1], out=XXT[m + 1:])
    return XXT


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


def _regressions(Sw: np.ndarray, Swz: np.ndarray, m: int):
    """Per block and class, the one-attribute weighted regression of z with the least squared error.

    WEKA ``SimpleLinearRegression``: attributes with zero weighted variance are skipped;
    ties go to the first attribute. ``Sw`` (G, C, 2m+1) holds per block and class
    Σw·[1, x, x²], ``Swz`` (G, C, m+1) Σwz·[1, x]. Returns (attribute, slope, intercept)
    (G, C) arrays and the (G,) mask of the blocks where every class has a usable attribute
    and positive weight.
    """
    G, C = Sw.shape[:2]
    Sw, Swz = Sw.reshape(G * C, -1).T.copy(), Swz.reshape(G * C, -1).T.copy()  # (·, G·C): contiguous rows
    w_sum, z_sum = Sw[0], Swz[0]
    xw, x2w, xwz = Sw[1:m + 1], Sw[m + 1:], Swz[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        x_mean = xw / w_sum
        z_mean = z_sum / w_sum
        sxx = x2w - w_sum * x_mean * x_mean
        sxz = xwz - xw * z_mean
        usable = sxx > 1e-10 * x2w
        gain = np.where(usable, sxz * sxz / sxx, -np.inf)  # SSE = Szz − gain
        attr = np.argmax(gain, axis=0)
        cols = np.arange(G * C)
        slope = sxz[attr, cols] / sxx[attr, cols]
        intercept = z_mean - slope * x_mean[attr, cols]
    ok = ((w_sum > 0) & usable.any(axis=0)).reshape(G, C).all(axis=1)
    return attr.reshape(G, C), slope.reshape(G, C), intercept.reshape(G, C), ok


def _all_classes(attr, slope, intercept):
    """The fitted classes' regressions as all K classes' (K = 2: class 0 mirrors class 1)."""
    if attr.shape[-1] > 1:
        return attr, slope, intercept
    return (np.concatenate([attr, attr], axis=-1), np.concatenate([-slope, slope], axis=-1),
            np.concatenate([-intercept, intercept], axis=-1))


def _add_increment(F: np.ndarray, X: np.ndarray, attr, slope, intercept) -> None:
    """F += the increment of one iteration's regressions ((1, C) arrays) on the rows X."""
    f = X[:, attr[0]] * slope[0]
    f += intercept[0]
    _add_scores(F, f)


def _add_scores(F: np.ndarray, f: np.ndarray) -> None:
    """F += (f − mean over classes)·(K−1)/K for the fitted classes' regression values f."""
    k = F.shape[1]
    if f.shape[1] == 1:  # K = 2: [−f, f] is centred; times 1/2
        f *= 0.5
        F[:, 0] -= f[:, 0]
        F[:, 1] += f[:, 0]
        return
    f -= f.sum(axis=1, keepdims=True) / k
    f *= (k - 1) / k
    F += f


def _coefficients(history, m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The linear model ``F = X·B + b`` of a list of iterations (K-vector triples)."""
    B, b = _block_coefficients([(a[None], s[None], i[None]) for a, s, i in history], 1, m, k)
    return B[0], b[0]


def _block_coefficients(steps, G: int, m: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Every block's linear model (B (G, m, K), b (G, K)) of a :class:`_Boost`'s iterations."""
    B, b = np.zeros((G, m, k)), np.zeros((G, k))
    if not steps:
        return B, b
    D = (np.eye(k) - 1.0 / k) * ((k - 1) / k)
    attr, slope, intercept = _all_classes(*(np.stack([s[i] for s in steps]) for i in range(3)))
    index = (np.arange(G)[None, :, None] * m + attr) * k + np.arange(k)  # (T, G, K) into B
    B = np.bincount(index.ravel(), weights=slope.ravel(), minlength=G * m * k).reshape(G, m, k) @ D
    return B, intercept.sum(axis=0) @ D


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
    """WEKA ``performBoostingCV``: summed test-fold errors per iteration over 5 folds.

    WEKA boosts the folds one after the other; fold f adds its test error at each iteration
    to the running sums, stops at its own heuristic stop on those sums (folds 0..f), when it
    finds no attribute, or at the last iteration of an earlier fold, and the best iteration
    is sought up to the shortest fold's. Here the folds boost side by side (one :class:`_Boost`
    block each; as many folds at a time as :func:`_batches` allows), processed in fold order
    within an iteration with the same rules, and all stop at the first fold's end: no later
    iteration can change the result (every sum and every stopping decision up to the
    shortest length depends only on iterations up to it).
    """
    splits = _folds(yi, rng)
    if not splits:
        return 0
    tests = [(X[test], F0[test].copy(), yi[test], sw[test]) for _, test in splits]
    errors = np.zeros(max_iter + 1)
    for X_test, F_test, y_test, w_test in tests:
        errors[0] += _error(F_test, y_test, w_test, on_probabilities)
    completed = max_iter
    for folds in _batches([train.size for train, _ in splits], (2 * X.shape[1] + 1) * 8):  # [1, X, X²]
        sizes = np.array([splits[f][0].size for f in folds])
        ends = np.cumsum(sizes)
        rows = np.concatenate([splits[f][0] for f in folds])
        lb = _Boost(X[rows], yi[rows], k, sw[rows], F0[rows], beta,
                    list(zip((ends - sizes).tolist(), ends.tolist())))
        no_min, last_min = np.zeros(len(folds), dtype=int), np.full(len(folds), np.inf)
        it = 0
        while it < completed:
            check_deadline()
            lb.step()
            it += 1
            for j, f in enumerate(folds):
                if not lb.active[j]:  # no attribute left: the fold ends before this iteration
                    completed = min(completed, it - 1)
                    continue
                X_test, F_test, y_test, w_test = tests[f]
                _add_increment(F_test, X_test, *(a[j:j + 1] for a in lb.steps[-1][:3]))
                errors[it] += _error(F_test, y_test, w_test, on_probabilities)
                if no_min[j] > HEURISTIC_STOP:
                    completed = min(completed, it)
                elif errors[it] < last_min[j]:
                    last_min[j], no_min[j] = errors[it], 0
                else:
                    no_min[j] += 1
    return _best_iteration(list(errors), completed)


def _batches(sizes, row_bytes: int) -> list[list[int]]:
    """Consecutive groups of the blocks of ``sizes`` rows that take at most BATCH_BYTES at
    ``row_bytes`` per row (at least one block each): a bound on the memory of a batch."""
    groups, rows = [[]], 0
    for i, size in enumerate(sizes):
        if groups[-1] and (rows + size) * row_bytes > BATCH_BYTES:
            groups.append([])
            rows = 0
        groups[-1].append(i)
        rows += size
    return groups

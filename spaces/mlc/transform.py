"""Binary-relevance family and the pairwise / ranking transformations (BR, CC, BRq, CCq, FW, RT).

These are MEKA's simplest problem transformations: each turns the (n, L) label matrix
into one or more single-label problems for a base SLC (search-space notes §1.2.2,
§1.2.3, §1.2.7–§1.2.9, §1.2.15). They live together because they share one shape:
a list of fitted SLC clones, each made by :func:`spaces.slc.base.fit_slc` (constant
targets, instance weights) and queried in one vectorised call per model.

Every class outputs soft per-label scores in [0, 1] (decision 1) where MEKA passes hard
0/1 values or raw vote counts to the threshold; each docstring names its score. Cutting
a score at 0.5 gives back MEKA's own decision (up to exact ties).
"""
from __future__ import annotations

from itertools import combinations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.encoding import is_validated, mark_appended, mark_validated
from ggp_automl.spaces.mlc.base import MLCEstimator
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register
from ggp_automl.spaces.slc.base import fit_slc, positive_scores, slc_scores


def _member_seeds(random_state, n: int) -> np.ndarray:
    """``n`` independent seeds for member fits, derived from ``random_state`` only."""
    return np.random.default_rng(random_state).integers(0, 2**31 - 1, size=n)


def _as_features(X) -> np.ndarray:
    return np.asarray(X, dtype=float)


def _weights(sample_weight, n: int):
    return None if sample_weight is None else np.asarray(sample_weight, dtype=float).reshape(n)


def downsample_negatives(y: np.ndarray, ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Rows kept by MEKA's BRq/CCq downsampling of one binary target (notes §1.2.7, A-13).

    The rows are shuffled, then up to ``n - round(n * ratio)`` rows **whose y = 0** are
    removed in shuffled order; positives are never removed. Returns the kept row indices
    in the shuffled order (MEKA trains on the randomised data).
    """
    n = y.shape[0]
    perm = rng.permutation(n)
    n_remove = n - int(np.floor(n * ratio + 0.5))  # Java Math.round
    if n_remove <= 0:
        return perm
    negative = y[perm] == 0
    drop = np.zeros(n, dtype=bool)
    drop[np.flatnonzero(negative)[:n_remove]] = True
    return perm[~drop]


# --------------------------------------------------------------------------- BR, BRq


class BR(MLCEstimator):
    """Binary relevance: one binary SLC per label (MEKA ``BR``, notes §1.2.2).

    Score: P(y_j = 1 | x) from label j's model (a one-hot for hard learners, as WEKA's
    ``distributionForInstance``). Same output as MEKA.
    """

    def __init__(self, base, random_state=None):
        self.base = base
        self.random_state = random_state

    def _rows(self, y: np.ndarray, rng: np.random.Generator):
        """Training rows of one label's model (all of them for plain BR)."""
        return None

    def fit(self, X, Y, sample_weight=None):
        X = _as_features(X)
        Y = self._validate_Y(Y)
        w = _weights(sample_weight, X.shape[0])
        L = Y.shape[1]
        seeds = _member_seeds(self.random_state, L + 1)
        rng = np.random.default_rng(seeds[-1])
        self.estimators_ = []
        for j in range(L):
            check_deadline()
            rows = self._rows(Y[:, j], rng)
            if rows is None:
                est = fit_slc(self.base, X, Y[:, j], w, int(seeds[j]))
            else:
                est = fit_slc(self.base, X[rows], Y[rows, j], None if w is None else w[rows], int(seeds[j]))
            self.estimators_.append(est)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_scores(self, X) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = _as_features(X)
        out = np.empty((X.shape[0], len(self.estimators_)))
        for j, est in enumerate(self.estimators_):
            out[:, j] = positive_scores(est, X)
        return np.clip(out, 0.0, 1.0)


class BRq(BR):
    """BR with per-label undersampling of negatives (MEKA ``BRq``, notes §1.2.7).

    ``downsample_ratio`` (grammar ``dsr``): for each label the rows are shuffled and up to
    N − round(N·dsr) rows with y_j = 0 are removed (A-13), then the binary model is trained.
    Score: P(y_j = 1 | x) of the downsampled model (MEKA outputs the hard ``classifyInstance``).
    """

    def __init__(self, base, downsample_ratio=0.75, random_state=None):
        self.base = base
        self.downsample_ratio = downsample_ratio
        self.random_state = random_state

    def _rows(self, y, rng):
        return downsample_negatives(y, self.downsample_ratio, rng)


# --------------------------------------------------------------------------- CC, CCq


class CC(MLCEstimator):
    """Classifier chain (MEKA ``CC``, notes §1.2.3).

    The chain order is the identity 0..L−1: MEKA's default seed 0 means no shuffle (A-14).
    Link j is trained on [x, true y_<j]; prediction runs down the chain feeding the hard
    decisions ŷ_<j (ŷ = P > 0.5, WEKA's argmax with ties to class 0).
    Score: P(y_j = 1 | x, ŷ_<j) (MEKA outputs the hard ŷ_j, which is this score cut at 0.5).
    """

    def __init__(self, base, random_state=None):
        self.base = base
        self.random_state = random_state

    def _order(self, L: int, rng: np.random.Generator) -> np.ndarray:
        return np.arange(L)

    def _rows(self, y: np.ndarray, rng: np.random.Generator):
        return None

    def fit(self, X, Y, sample_weight=None):
        X = _as_features(X)
        Y = self._validate_Y(Y)
        w = _weights(sample_weight, X.shape[0])
        n, M = X.shape
        L = Y.shape[1]
        seeds = _member_seeds(self.random_state, L + 1)
        rng = np.random.default_rng(seeds[-1])
        order = self._order(L, rng)
        # Features of link i: the attributes followed by the true labels earlier in the chain.
        XY = np.hstack([X, Y[:, order].astype(float)])
        # a link's [checked X, 0/1 labels] is as checked as X, and its X part is X itself: the link's learner
        # need not scan it, and takes what depends on X alone from the shared view (spaces.encoding)
        trusted = is_validated(X)
        self.estimators_ = []
        for i, j in enumerate(order):
            check_deadline()
            rows = self._rows(Y[:, j], rng)
            if rows is None:
                Z = XY[:, :M + i]
                if trusted:
                    mark_appended(mark_validated(Z), X)
                est = fit_slc(self.base, Z, Y[:, j], w, int(seeds[i]))
            else:
                est = fit_slc(self.base, XY[rows, :M + i], Y[rows, j],
                              None if w is None else w[rows], int(seeds[i]))
            self.estimators_.append(est)
        self.order_ = order
        self.n_features_in_ = M
        return self

    def predict_scores(self, X) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = _as_features(X)
        n, M = X.shape
        L = len(self.order_)
        XY = np.hstack([X, np.zeros((n, L))])
        out = np.empty((n, L))
        for i, (j, est) in enumerate(zip(self.order_, self.estimators_)):
            p = positive_scores(est, XY[:, :M + i])
            out[:, j] = p
            XY[:, M + i] = p > 0.5
        return np.clip(out, 0.0, 1.0)


class CCq(CC):
    """Classifier chain with per-link undersampling of negatives (MEKA ``CCq``, notes §1.2.8).

    The order is always a random permutation (from ``random_state``; MEKA uses Java's
    ``Random(0)``, whose stream cannot be reproduced). Each link drops negatives as
    :class:`BRq` does (``downsample_ratio`` = grammar ``dsr``). Training uses the true
    earlier labels, prediction the hard ones. Score: P(y_j = 1 | x, ŷ_<j).
    """

    def __init__(self, base, downsample_ratio=0.75, random_state=None):
        self.base = base
        self.downsample_ratio = downsample_ratio
        self.random_state = random_state

    def _order(self, L, rng):
        return rng.permutation(L)

    def _rows(self, y, rng):
        return downsample_negatives(y, self.downsample_ratio, rng)


# --------------------------------------------------------------------------- FW


class FW(MLCEstimator):
    """Four-class pairwise (MEKA ``FW``, notes §1.2.9).

    For each pair j < k one 4-class SLC learns the code (y_j, y_k) ∈ {00, 10, 01, 11}
    (class ids 0..3 in MEKA's value order); L(L−1)/2 models. Each model's hard class votes
    10 → j, 01 → k, 11 → both. Score: the vote fraction votes_j / (L − 1) (MEKA passes the
    raw count ∈ [0, L−1]). With L = 1 there are no pairs and the score is 0.
    """

    def __init__(self, base, random_state=None):
        self.base = base
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X = _as_features(X)
        Y = self._validate_Y(Y)
        w = _weights(sample_weight, X.shape[0])
        L = Y.shape[1]
        self.pairs_ = list(combinations(range(L), 2))
        seeds = _member_seeds(self.random_state, len(self.pairs_))
        self.estimators_ = []
        for (j, k), seed in zip(self.pairs_, seeds):
            check_deadline()
            code = Y[:, j].astype(np.int64) + 2 * Y[:, k].astype(np.int64)
            self.estimators_.append(fit_slc(self.base, X, code, w, int(seed)))
        self.n_features_in_ = X.shape[1]
        return self

    def predict_scores(self, X) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = _as_features(X)
        L = self.n_labels_
        votes = np.zeros((X.shape[0], L))
        codes = np.arange(4)
        for (j, k), est in zip(self.pairs_, self.estimators_):
            c = np.argmax(slc_scores(est, X, codes), axis=1)
            votes[:, j] += (c == 1) | (c == 3)
            votes[:, k] += (c == 2) | (c == 3)
        return np.clip(votes / max(L - 1, 1), 0.0, 1.0)


# --------------------------------------------------------------------------- RT


class RT(MLCEstimator):
    """Ranking + threshold (MEKA ``RT``, notes §1.2.15).

    Copy transformation: each training row is repeated once per positive label with that
    label as its class (rows without labels are dropped); one L-class SLC is trained.
    Score: the class posterior P(class = j | x), exactly MEKA's output. It already lies in
    [0, 1] (clipped for numerical safety) and sums to 1 over the labels, so a fixed
    threshold t admits at most ⌊1/t⌋ labels, as in MEKA. It is deliberately *not* divided
    by its row maximum: that would always predict the top label and hide how confident a
    row is, which PCut's global threshold relies on. Labels never positive in training
    score 0; with no positive label at all every score is 0.
    """

    def __init__(self, base, random_state=None):
        self.base = base
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X = _as_features(X)
        Y = self._validate_Y(Y)
        w = _weights(sample_weight, X.shape[0])
        rows, labels = np.nonzero(Y)
        seed = int(_member_seeds(self.random_state, 1)[0])
        if rows.size == 0:
            self.estimator_ = None
        else:
            self.estimator_ = fit_slc(self.base, X[rows], labels, None if w is None else w[rows], seed)
        self.n_features_in_ = X.shape[1]
        return self

    def predict_scores(self, X) -> np.ndarray:
        check_is_fitted(self, "n_features_in_")
        X = _as_features(X)
        if self.estimator_ is None:
            return np.zeros((X.shape[0], self.n_labels_))
        return np.clip(slc_scores(self.estimator_, X, np.arange(self.n_labels_)), 0.0, 1.0)


# --------------------------------------------------------------------------- registry


@register("BR", kind="mlc")
def build_br(p: Params, base):
    """BR: one binary SLC per label; score P(y_j=1)."""
    return BR(base=base, random_state=p.random_state)


@register("CC", kind="mlc")
def build_cc(p: Params, base):
    """CC: chain in label order (MEKA seed 0); score P(y_j=1 | x, ŷ_<j)."""
    return CC(base=base, random_state=p.random_state)


@register("BRq", kind="mlc")
def build_brq(p: Params, base):
    """BRq: BR with negatives undersampled to ratio dsr."""
    return BRq(base=base, downsample_ratio=p.real("dsr"), random_state=p.random_state)


@register("CCq", kind="mlc")
def build_ccq(p: Params, base):
    """CCq: randomly ordered CC with negatives undersampled per link to ratio dsr."""
    return CCq(base=base, downsample_ratio=p.real("dsr"), random_state=p.random_state)


@register("FW", kind="mlc")
def build_fw(p: Params, base):
    """FW: four-class pairwise models; score = vote fraction."""
    return FW(base=base, random_state=p.random_state)


@register("RT", kind="mlc")
def build_rt(p: Params, base):
    """RT: copy transformation to one L-class SLC; score = class posterior."""
    return RT(base=base, random_state=p.random_state)

"""Label-powerset family: LC, PS, PSt, RAkEL, RAkELd (search-space notes §1.2.4, §1.2.5, §1.2.12–§1.2.14).

All five methods turn labelsets (whole rows of Y, or of a subset of its columns) into the
classes of one multi-class SLC; they differ in how the labelsets are pruned (PS) and in
which label subsets get a model (RAkEL, RAkELd). The shared pieces are here:
:func:`ps_transform`, MEKA's exact pruned-sets transformation, and :class:`PS`, which
fits one multi-class SLC on it and exposes the labelset posterior.

skmultilearn is not used for the fitting: ``RakelO`` hangs or fails on the grammar's
ranges and ``RakelD`` has neither PS inside nor MEKA's partition sizes (notes §0.3).

Scores (decision 1; MEKA passes the hard argmax labelset or raw vote counts instead):

* **marginal** (LC, PSt): s_j = Σ_{S ∋ j} P(S | x), skmultilearn ``LabelPowerset.predict_proba``
  and MEKA PSt's ``recombination_t``;
* **max-marginal** (PS, RAkELd): s_j = a_j / (a_j + b_j) with a_j = max_{S ∋ j} P(S | x)
  and b_j = max_{S ∌ j} P(S | x). It exceeds 0.5 exactly when j belongs to the most
  probable labelset, so cutting at 0.5 gives MEKA's hard PS output, while thresholds and
  PCut still see a confidence;
* **vote fraction** (RAkEL): the share of the models containing j whose argmax labelset
  contains j.
"""
from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.mlc.base import MLCEstimator
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register
from ggp_automl.spaces.slc.base import fit_slc, slc_scores


def _member_seeds(random_state, n: int) -> np.ndarray:
    """``n`` independent seeds for member fits, derived from ``random_state`` only."""
    return np.random.default_rng(random_state).integers(0, 2**31 - 1, size=n)


# --------------------------------------------------------------------------- PS transformation


def ps_transform(Y, pruning: int = 0, subsampling: int = 0):
    """MEKA's ``PSUtils.PSTransformation`` (notes §1.2.12).

    1. Count the distinct labelsets of ``Y``; drop those with count ≤ ``pruning``
       (none when it is 0). If at most one survives and pruning > 0, retry with pruning − 1.
    2. A row with a surviving labelset keeps it.
    3. A row with a pruned labelset y is dropped when ``subsampling`` = 0. Otherwise the
       surviving labelsets s with ∅ ≠ s ⊆ y are sorted ascending by (|s|, count(s)); equal
       (|s|, count) pairs collapse into one (Java ``TreeSet``; we keep the lexicographically
       first, MEKA an arbitrary hash-order one); the last ``subsampling`` of them are taken.
       The row gets the first of these and one copy of the row is added for each other one.
       Without such an s the row is dropped.

    Returns ``(rows, classes, labelsets)``: the training row of every transformed example
    (rows repeat for the copies), its class id, and the (K, L) 0/1 matrix of class labelsets.
    """
    Y = (np.asarray(Y) > 0).astype(np.int8)
    n, L = Y.shape
    if n == 0:
        return np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp), np.zeros((0, L), dtype=np.int8)
    uniq, inverse, counts = np.unique(Y, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    p = int(pruning)
    while True:
        keep = counts > p if p > 0 else np.ones(counts.size, dtype=bool)
        if keep.sum() <= 1 and p > 0:
            p -= 1
            continue
        break
    kept_ids = np.flatnonzero(keep)
    labelsets = uniq[kept_ids]
    class_of = np.full(uniq.shape[0], -1, dtype=np.intp)
    class_of[kept_ids] = np.arange(kept_ids.size)

    row_class = class_of[inverse]
    rows = [np.flatnonzero(row_class >= 0)]
    classes = [row_class[rows[0]]]

    pruned_ids = np.flatnonzero(~keep)
    if subsampling > 0 and pruned_ids.size:
        sizes = labelsets.sum(axis=1)
        kept_counts = counts[kept_ids]
        # |s ∩ y| for every pruned y and surviving s; s ⊆ y  ⟺  |s ∩ y| = |s|.
        inter = uniq[pruned_ids].astype(np.float32) @ labelsets.T.astype(np.float32)
        is_subset = (inter == sizes[None, :]) & (sizes[None, :] > 0)
        for a, u in enumerate(pruned_ids):
            check_deadline()
            cand = np.flatnonzero(is_subset[a])
            if cand.size == 0:
                continue
            # ascending (size, count); candidates are already in lexicographic order, and
            # lexsort is stable, so the first of each (size, count) pair is the lexicographic first.
            order = cand[np.lexsort((kept_counts[cand], sizes[cand]))]
            key = np.stack([sizes[order], kept_counts[order]], axis=1)
            first = np.ones(order.size, dtype=bool)
            first[1:] = np.any(key[1:] != key[:-1], axis=1)
            top = order[first][-int(subsampling):]
            members = np.flatnonzero(inverse == u)
            for s in top:  # the row itself takes top[0]; the copies the others
                rows.append(members)
                classes.append(np.full(members.size, s, dtype=np.intp))
    return np.concatenate(rows), np.concatenate(classes), labelsets


# --------------------------------------------------------------------------- LC, PS, PSt


def marginal_scores(P: np.ndarray, labelsets: np.ndarray) -> np.ndarray:
    """s_j = Σ_{S ∋ j} P(S)."""
    return P @ labelsets.astype(float)


def max_marginal_scores(P: np.ndarray, labelsets: np.ndarray) -> np.ndarray:
    """s_j = max_{S∋j} P(S) / (max_{S∋j} P(S) + max_{S∌j} P(S)); > 0.5 iff j ∈ argmax S."""
    n, L = P.shape[0], labelsets.shape[1]
    out = np.zeros((n, L))
    member = labelsets.astype(bool)
    for j in range(L):
        inside, outside = member[:, j], ~member[:, j]
        a = P[:, inside].max(axis=1) if inside.any() else np.zeros(n)
        b = P[:, outside].max(axis=1) if outside.any() else np.zeros(n)
        total = a + b
        out[:, j] = np.divide(a, total, out=np.full(n, 0.5), where=total > 0)
    return out


class PS(MLCEstimator):
    """Pruned sets (MEKA ``PS``, notes §1.2.12): :func:`ps_transform`, then one multi-class SLC.

    ``pruning`` (grammar ``pv``; 0 = plain LC) and ``subsampling`` (``sv``) as MEKA.
    Score: the max-marginal a_j / (a_j + b_j) (module docstring); at 0.5 it reproduces
    MEKA's hard argmax labelset. :meth:`labelset_proba` gives P(S | x) over ``labelsets_``.
    """

    #: how the labelset posterior becomes per-label scores
    _scores = staticmethod(max_marginal_scores)

    def __init__(self, base, pruning=0, subsampling=0, random_state=None):
        self.base = base
        self.pruning = pruning
        self.subsampling = subsampling
        self.random_state = random_state

    def _transform_args(self) -> tuple[int, int]:
        return int(self.pruning), int(self.subsampling)

    def fit(self, X, Y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        Y = self._validate_Y(Y)
        rows, classes, self.labelsets_ = ps_transform(Y, *self._transform_args())
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=float)[rows]
        seed = int(_member_seeds(self.random_state, 1)[0])
        self.estimator_ = fit_slc(self.base, X[rows], classes, w, seed)
        self.n_features_in_ = X.shape[1]
        return self

    def labelset_proba(self, X) -> np.ndarray:
        """(n, K) posterior over ``labelsets_`` (rows renormalised to sum 1)."""
        check_is_fitted(self, "estimator_")
        P = slc_scores(self.estimator_, np.asarray(X, dtype=float), np.arange(self.labelsets_.shape[0]))
        P = np.clip(P, 0.0, None)
        total = P.sum(axis=1, keepdims=True)
        return np.divide(P, total, out=np.full_like(P, 1.0 / P.shape[1]), where=total > 0)

    def predict_labelsets(self, X) -> np.ndarray:
        """(n, L) 0/1: the most probable labelset (MEKA's LC/PS output; ties → first class)."""
        return self.labelsets_[np.argmax(self.labelset_proba(X), axis=1)].astype(np.int8)

    def predict_scores(self, X) -> np.ndarray:
        return np.clip(self._scores(self.labelset_proba(X), self.labelsets_), 0.0, 1.0)


class PSt(PS):
    """Pruned sets with threshold (MEKA ``PSt``, notes §1.2.13): PS training.

    Score: the marginal Σ_{S∋j} P(S | x), MEKA's ``recombination_t`` output (the same as MEKA).
    """

    _scores = staticmethod(marginal_scores)


class LC(PS):
    """Label combination / label powerset (MEKA ``LC``, notes §1.2.4): every training labelset is a class.

    Score: the marginal Σ_{S∋j} P(S | x), as skmultilearn ``LabelPowerset.predict_proba``
    (MEKA outputs the hard argmax labelset, :meth:`predict_labelsets`).
    """

    _scores = staticmethod(marginal_scores)

    def __init__(self, base, random_state=None):
        self.base = base
        self.random_state = random_state

    def _transform_args(self):
        return 0, 0


# --------------------------------------------------------------------------- RAkEL, RAkELd


def _subset_size(k: int, L: int) -> int:
    """Clamp k to [1, L − 1] (MEKA needs 0 < k < L; the grammar default 3 exceeds L/2 when L < 6)."""
    return int(min(max(int(k), 1), max(L - 1, 1)))


def random_k_subsets(L: int, k: int, n_models: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
    """``n_models`` sorted k-subsets of range(L): distinct while C(L, k) allows.

    When C(L, k) ≥ n_models, the subsets are distinct (sampled without replacement from the
    enumeration when it is small, else by rejection, which is then quick). Otherwise every
    k-subset is used once and the rest are random repeats. Terminates in all cases.
    """
    total = comb(L, k)
    if total <= max(4 * n_models, 10_000):
        every = list(combinations(range(L), k))
        if total >= n_models:
            pick = rng.choice(total, size=n_models, replace=False)
        else:
            pick = np.concatenate([rng.permutation(total), rng.integers(0, total, size=n_models - total)])
        return [every[i] for i in pick]
    chosen: list[tuple[int, ...]] = []
    seen: set[tuple[int, ...]] = set()
    while len(chosen) < n_models:
        s = tuple(sorted(int(v) for v in rng.permutation(L)[:k]))
        if s not in seen:
            seen.add(s)
            chosen.append(s)
    return chosen


def balanced_partition(L: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """MEKA RAkELd's partition: ⌊L/k⌋ groups of a random permutation, the first L mod num one larger."""
    num = max(L // k, 1)
    perm = rng.permutation(L)
    size, extra = divmod(L, num)
    groups, start = [], 0
    for c in range(num):
        stop = start + size + (1 if c < extra else 0)
        groups.append(np.sort(perm[start:stop]))
        start = stop
    return groups


class RAkEL(MLCEstimator):
    """Random k-labelsets over pruned sets (MEKA ``RAkEL``, notes §1.2.5).

    ``n_models`` (grammar ``sre``) PS models, each on a random k-subset of the labels
    (``k`` = ``les``, clamped to [1, L − 1]), with ``pruning`` (``pv``) and ``subsampling``
    (``sv``). Each model votes with its argmax labelset. Score: the vote fraction
    votes_j / (number of models containing j), 0 for labels in no subset (MEKA passes the
    raw count). Deviations: subsets are distinct whenever C(L, k) ≥ n_models (MEKA may draw
    duplicates), else all k-subsets are used and the rest repeat; a repeated subset reuses
    its fitted PS model, because it would be trained on the same data.
    """

    def __init__(self, base, n_models=10, k=3, pruning=0, subsampling=0, random_state=None):
        self.base = base
        self.n_models = n_models
        self.k = k
        self.pruning = pruning
        self.subsampling = subsampling
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        Y = self._validate_Y(Y)
        L = Y.shape[1]
        k = _subset_size(self.k, L)
        n_models = max(int(self.n_models), 1)
        seeds = _member_seeds(self.random_state, n_models + 1)
        self.subsets_ = [np.array(s) for s in random_k_subsets(L, k, n_models, np.random.default_rng(seeds[-1]))]
        fitted: dict[tuple[int, ...], PS] = {}
        self.estimators_ = []
        for s, seed in zip(self.subsets_, seeds):
            check_deadline()
            key = tuple(s.tolist())
            if key not in fitted:
                fitted[key] = PS(self.base, pruning=self.pruning, subsampling=self.subsampling,
                                 random_state=int(seed)).fit(X, Y[:, s], sample_weight)
            self.estimators_.append(fitted[key])
        self.k_ = k
        self.n_features_in_ = X.shape[1]
        return self

    def predict_scores(self, X) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = np.asarray(X, dtype=float)
        votes = np.zeros((X.shape[0], self.n_labels_))
        covered = np.zeros(self.n_labels_)
        cache: dict[int, np.ndarray] = {}
        for s, est in zip(self.subsets_, self.estimators_):
            if id(est) not in cache:
                cache[id(est)] = est.predict_labelsets(X)
            votes[:, s] += cache[id(est)]
            covered[s] += 1
        return np.clip(votes / np.maximum(covered, 1), 0.0, 1.0)


class RAkELd(MLCEstimator):
    """Disjoint random k-labelsets over pruned sets (MEKA ``RAkELd``, notes §1.2.14).

    ``k`` (grammar ``les``, clamped to [1, L − 1]) gives ⌊L/k⌋ disjoint groups of a random
    permutation, the first L mod ⌊L/k⌋ one label larger (MEKA's sizes); a PS model
    (``pruning`` = ``pv``, ``subsampling`` = ``sv``) per group. Score: that PS model's
    max-marginal for the label; cut at 0.5 it is MEKA's 0/1 vote.
    """

    def __init__(self, base, k=3, pruning=0, subsampling=0, random_state=None):
        self.base = base
        self.k = k
        self.pruning = pruning
        self.subsampling = subsampling
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X = np.asarray(X, dtype=float)
        Y = self._validate_Y(Y)
        L = Y.shape[1]
        k = _subset_size(self.k, L)
        seeds = _member_seeds(self.random_state, L + 1)
        self.groups_ = balanced_partition(L, k, np.random.default_rng(seeds[-1]))
        self.estimators_ = []
        for g, seed in zip(self.groups_, seeds):
            check_deadline()
            self.estimators_.append(PS(self.base, pruning=self.pruning, subsampling=self.subsampling,
                                       random_state=int(seed)).fit(X, Y[:, g], sample_weight))
        self.k_ = k
        self.n_features_in_ = X.shape[1]
        return self

    def predict_scores(self, X) -> np.ndarray:
        check_is_fitted(self, "estimators_")
        X = np.asarray(X, dtype=float)
        out = np.zeros((X.shape[0], self.n_labels_))
        for g, est in zip(self.groups_, self.estimators_):
            out[:, g] = est.predict_scores(X)
        return out


# --------------------------------------------------------------------------- registry


@register("LC", kind="mlc")
def build_lc(p: Params, base):
    """LC: label powerset; score = per-label marginal Σ P(S∋j)."""
    return LC(base=base, random_state=p.random_state)


@register("PS", kind="mlc")
def build_ps(p: Params, base):
    """PS: pruned sets (pv prune count ≤ p, 0 = LC; sv subsets); score = max-marginal."""
    return PS(base=base, pruning=p.int("pv"), subsampling=p.int("sv"), random_state=p.random_state)


@register("PSt", kind="mlc")
def build_pst(p: Params, base):
    """PSt: pruned sets; score = per-label marginal Σ P(S∋j)."""
    return PSt(base=base, pruning=p.int("pv"), subsampling=p.int("sv"), random_state=p.random_state)


@register("RAkEL", kind="mlc")
def build_rakel(p: Params, base):
    """RAkEL: sre PS models on random les-subsets; score = vote fraction."""
    return RAkEL(base=base, n_models=p.int("sre"), k=p.int("les"), pruning=p.int("pv"),
                 subsampling=p.int("sv"), random_state=p.random_state)


@register("RAkELd", kind="mlc")
def build_rakeld(p: Params, base):
    """RAkELd: PS on ⌊L/les⌋ disjoint label groups; score = PS max-marginal."""
    return RAkELd(base=base, k=p.int("les"), pruning=p.int("pv"), subsampling=p.int("sv"),
                  random_state=p.random_state)

"""Correlation-based feature subset selection: WEKA's CfsSubsetEval with BestFirst / GreedyStepwise.

Why this exists: Auto-MEKA's optional ``ASC <sm>`` wrapper is WEKA's AttributeSelectedClassifier
with its fixed evaluator CfsSubsetEval (Hall 1998) and a choice of search. scikit-learn has no
CFS (``SequentialFeatureSelector`` is a much slower wrapper method), so it is written here,
following WEKA 3.8 step by step (search-space notes §1.1.23):

1. every attribute is discretised with supervised MDL (Fayyad & Irani, with WEKA's
   "better encoding": the cost term counts the distinct candidate cut points);
2. correlations are symmetric uncertainties of the discretised attributes — with the class,
   and lazily between attributes — stored as float32 as WEKA does; a zero attribute-attribute
   SU counts as 1 (maximally redundant), a zero attribute-class SU as 0;
3. merit(S) = Σ r_cf / √(k + 2 Σ_{i<j} r_ff) = k·r̄_cf / √(k + k(k−1)·r̄_ff);
4. search forward from the empty set: BestFirst (open list bounded to 5 entries, stops after
   5 consecutive expansions without an improvement > 1e-5) or GreedyStepwise (add the best
   attribute while the merit strictly improves);
5. CfsSubsetEval's default post-processing adds "locally predictive" attributes: in order of
   decreasing class correlation, an attribute joins when no selected attribute correlates
   with it more than it correlates with the class.

The merits of all one-attribute extensions of a subset are computed in one vectorised step.
Discretisation uses the instance weights (as WEKA's Discretize); the contingency tables of the
symmetric uncertainties are unweighted counts (as WEKA's CfsSubsetEval).
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted

from ggp_automl.spaces.deadline import check_deadline

from ._meta_common import fit_inputs, training_weights

#: WEKA's Utils.SMALL, also the threshold of ContingencyTables.lnFunc
SMALL = 1e-6
LN2 = math.log(2.0)
SEARCHES = ("BestFirst", "GreedyStepwise")


def _xlogx(c) -> np.ndarray:
    """WEKA's lnFunc: x·ln x, taken as 0 below 1e-6."""
    c = np.asarray(c, dtype=np.float64)
    out = np.zeros_like(c)
    m = c >= SMALL
    out[m] = c[m] * np.log(c[m])
    return out


def _entropy_bits(counts: np.ndarray) -> float:
    """Entropy in bits of a vector of (weighted) class counts (ContingencyTables.entropy)."""
    total = float(counts.sum())
    if abs(total) < SMALL:
        return 0.0
    return float((_xlogx(total) - _xlogx(counts).sum()) / (total * LN2))


# --------------------------------------------------------------------------- MDL discretisation
# CfsSubsetEval discretises with useBetterEncoding on (the _mdl default).
from ._mdl import all_cut_points, discretise, mdl_cut_points  # noqa: E402,F401  (re-exported for the tests)


# --------------------------------------------------------------------------- correlations

class SymmetricUncertainty:
    """Symmetric uncertainties of discretised attributes: with the class up front, and between
    attributes lazily, one attribute against all others per call (cached, symmetric)."""

    def __init__(self, codes: np.ndarray, n_bins: np.ndarray, y: np.ndarray, n_classes: int):
        self.codes = codes
        self.n_bins = n_bins.astype(np.int64)
        self.n = codes.shape[0]
        self.n_features = codes.shape[1]
        self.h = self._entropies(codes, self.n_bins)
        yc = np.asarray(y, dtype=np.int64)
        hy = self._entropies(yc[:, None], np.array([n_classes]))[0]
        self.class_su = self._against(yc, n_classes, hy, attribute_pair=False)
        self._rows: dict[int, np.ndarray] = {}

    def _entropies(self, codes: np.ndarray, n_bins: np.ndarray) -> np.ndarray:
        """n·H of each column in nats (WEKA's unnormalised entropies)."""
        offsets = np.concatenate(([0], np.cumsum(n_bins)[:-1]))
        counts = np.bincount((codes + offsets[None, :]).ravel(), minlength=int(n_bins.sum()))
        return _xlogx(float(self.n)) - np.add.reduceat(_xlogx(counts), offsets)

    def _against(self, col: np.ndarray, col_bins: int, col_h: float, attribute_pair: bool) -> np.ndarray:
        sizes = col_bins * self.n_bins
        offsets = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        joint = col[:, None] * self.n_bins[None, :] + self.codes + offsets[None, :]
        counts = np.bincount(joint.ravel(), minlength=int(sizes.sum()))
        h_joint = _xlogx(float(self.n)) - np.add.reduceat(_xlogx(counts), offsets)
        denom = col_h + self.h
        with np.errstate(divide="ignore", invalid="ignore"):
            su = np.where((abs(col_h) < SMALL) | (np.abs(self.h) < SMALL), 0.0,
                          2.0 * (col_h + self.h - h_joint) / denom)
        su = su.astype(np.float32).astype(np.float64)   # WEKA keeps a float correlation matrix
        zero = np.abs(su) < SMALL
        su[zero] = 1.0 if attribute_pair else 0.0
        return su

    def row(self, j: int) -> np.ndarray:
        """SU of attribute ``j`` with every attribute (1 on the diagonal)."""
        r = self._rows.get(j)
        if r is None:
            r = self._against(self.codes[:, j], int(self.n_bins[j]), float(self.h[j]), attribute_pair=True)
            for other, orow in self._rows.items():   # keep the matrix exactly symmetric
                r[other] = orow[j]
            r[j] = 1.0
            self._rows[j] = r
        return r

    def extension_merits(self, subset: list[int]) -> np.ndarray:
        """CFS merit of ``subset ∪ {i}`` for every attribute ``i`` (entries of ``subset`` are
        meaningless). Merit = Σ r_cf / √(k + 2 Σ_{pairs} r_ff)."""
        k = len(subset)
        rcf = self.class_su
        if k:
            rows = np.stack([self.row(j) for j in subset])
            within = rows[:, subset]
            pair_sum = (within.sum() - np.trace(within)) / 2.0
            cross = rows.sum(axis=0)
            num = rcf[subset].sum() + rcf
        else:
            pair_sum, cross, num = 0.0, np.zeros(self.n_features), rcf.copy()
        denom = np.abs((k + 1) + 2.0 * (pair_sum + cross))
        with np.errstate(divide="ignore", invalid="ignore"):
            merit = np.where(denom == 0.0, 0.0, np.abs(num) / np.sqrt(denom))
        return merit

    def merit(self, subset: list[int]) -> float:
        if not subset:
            return 0.0
        head, last = list(subset[:-1]), subset[-1]
        return float(self.extension_merits(head)[last])


# --------------------------------------------------------------------------- searches

class _BoundedList:
    """WEKA BestFirst's LinkedList2: sorted by merit (descending), ties after existing
    entries, never longer than ``max_size`` (a newcomer no better than the last is dropped)."""

    def __init__(self, max_size: int):
        self.max_size = max_size
        self.items: list[tuple[float, tuple[int, ...]]] = []

    def accepts(self, merit: float) -> bool:
        """Would ``add`` keep an entry of this merit?"""
        return len(self.items) < self.max_size or merit > self.items[-1][0]

    def add(self, subset: tuple[int, ...], merit: float) -> None:
        items = self.items
        if not items:
            items.append((merit, subset))
            return
        if not self.accepts(merit):
            return
        for i, (m, _) in enumerate(items):
            if merit > m:
                if len(items) == self.max_size:
                    items.pop()
                items.insert(i, (merit, subset))
                return
        items.append((merit, subset))

    def pop(self) -> tuple[int, ...]:
        return self.items.pop(0)[1]

    def __len__(self) -> int:
        return len(self.items)


def best_first(su: SymmetricUncertainty, max_stale: int = 5) -> tuple[list[int], float]:
    """Forward BestFirst from the empty set (WEKA defaults ``-D 1 -N 5``)."""
    best_group: tuple[int, ...] = ()
    best_merit = su.merit([])
    open_list = _BoundedList(max_stale)
    open_list.add(best_group, best_merit)
    stale = 0
    while stale < max_stale:
        check_deadline()
        if not len(open_list):
            break
        group = open_list.pop()
        merits = su.extension_merits(list(group))
        outside = np.ones(su.n_features, dtype=bool)
        outside[list(group)] = False
        added = False
        for i in np.flatnonzero(outside).tolist():      # children in attribute order, as WEKA
            merit = float(merits[i])
            improves = merit - best_merit > 0.00001
            if improves or open_list.accepts(merit):
                child = tuple(sorted(group + (i,)))
                open_list.add(child, merit)
                if improves:
                    added, best_merit, best_group = True, merit, child
        if added:
            stale = 0
        else:
            stale += 1
    return list(best_group), best_merit


def greedy_stepwise(su: SymmetricUncertainty) -> tuple[list[int], float]:
    """Forward GreedyStepwise from the empty set: add the best attribute while merit strictly improves."""
    group: list[int] = []
    best_merit = su.merit([])
    while len(group) < su.n_features:
        check_deadline()
        merits = su.extension_merits(group)
        merits[group] = -np.inf
        i = int(np.argmax(merits))                 # first of equal bests, as WEKA's '>' scan
        if not merits[i] > best_merit:
            break
        group.append(i)
        best_merit = float(merits[i])
    return sorted(group), best_merit


def add_locally_predictive(su: SymmetricUncertainty, selected: list[int]) -> list[int]:
    """CfsSubsetEval's default post-processing (``-L`` absent)."""
    chosen = list(selected)
    rcf = su.class_su
    in_group = np.zeros(su.n_features, dtype=bool)
    in_group[chosen] = True
    for j in np.argsort(-rcf, kind="stable"):      # decreasing class SU, first index on ties
        if in_group[j]:
            continue
        check_deadline()
        if all(su.row(i)[j] <= rcf[j] for i in chosen):
            chosen.append(int(j))
        in_group[j] = True
    return sorted(chosen)


# --------------------------------------------------------------------------- the selector

class CFSSubsetSelector(SelectorMixin, BaseEstimator):
    """CFS feature subset selection (WEKA CfsSubsetEval + BestFirst or GreedyStepwise).

    Parameters
    ----------
    search : {"BestFirst", "GreedyStepwise"}
    locally_predictive : bool, WEKA's default True (switch ``-L`` absent).
    max_stale : int, BestFirst's ``-N`` (5).

    Fitted: ``support_`` (bool mask), ``merit_`` (merit of the searched subset, before the
    locally-predictive additions), ``cut_points_`` (MDL cuts per attribute), ``class_su_``.
    Deviation: correlations are float64 sums of float32 SUs, so merits can differ from WEKA's
    in the last bits; ties broken on such differences may pick another subset.
    """

    def __init__(self, search: str = "BestFirst", locally_predictive: bool = True, max_stale: int = 5):
        self.search = search
        self.locally_predictive = locally_predictive
        self.max_stale = max_stale

    def fit(self, X, y, sample_weight=None):
        if self.search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}, got {self.search!r}")
        X, _, codes = fit_inputs(self, X, y)
        n_classes = int(codes.max()) + 1 if codes.size else 1
        w = training_weights(sample_weight, X.shape[0])
        check_deadline()
        cut_points = self.cut_points_ = all_cut_points(X, codes, n_classes, w)
        n_bins = np.array([c.size + 1 for c in cut_points], dtype=np.int64)
        su = SymmetricUncertainty(discretise(X, cut_points), n_bins, codes, n_classes)
        if self.search == "BestFirst":
            selected, merit = best_first(su, self.max_stale)
        else:
            selected, merit = greedy_stepwise(su)
        if self.locally_predictive:
            selected = add_locally_predictive(su, selected)
        support = np.zeros(X.shape[1], dtype=bool)
        support[selected] = True
        self.support_ = support
        self.merit_ = merit
        self.class_su_ = su.class_su
        return self

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

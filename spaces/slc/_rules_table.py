"""WEKA DecisionTable (Kohavi 1995): a table over a searched subset of discretised attributes.

Fit = MDL-discretise every attribute (:mod:`spaces.slc._rules_mdl`), then search attribute
subsets forward from the empty set (``BestFirst`` with 5 non-improving expansions, or
``GreedyStepwise``), scoring each subset by cross-validating the table built on it: leave-one-out
(``crv`` = 1) or k stratified folds, with the measure ``acc``/``rmse``/``mae``/``auc``. Predict =
class distribution of the row's cell; rows matching no cell get the class priors or, with
``uibk``, the vote of their nearest cells (IB1 on the discretised selected attributes).

Scoring is where the time goes, so it is done **from counts, for all children of a search node
at once**: a child's cells are (parent cell, bin of the added attribute); one ``np.unique`` and
one ``bincount`` give every cell's class counts for every candidate, and leave-one-out (or
leave-fold-out) subtracts the row's own (or its fold's) counts, exactly WEKA's
``evaluateInstanceLeaveOneOut``/``evaluateFoldCV`` including their quirks (a cell is used only
if some class still has count > 1, else the down-dated class priors).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.slc._rules_base import SMALL, make_rng, normalise_rows, stratified_folds
from ggp_automl.spaces.slc._mdl import all_cut_points, discretise
from ggp_automl.spaces.slc._validation import fit_inputs, labels, predict_inputs

_CHUNK_CELLS = 3_000_000
MEASURES = ("acc", "rmse", "mae", "auc")
SEARCHES = ("BestFirst", "GreedyStepwise")


def weighted_auc(scores: np.ndarray, positive: np.ndarray, w: np.ndarray) -> np.ndarray:
    """AUC of every column of ``scores`` (ties count 1/2, weighted), NaN when undefined."""
    n, c = scores.shape
    P, N = w[positive].sum(), w[~positive].sum()
    if not (P > 0 and N > 0):
        return np.full(c, np.nan)
    order = np.argsort(scores, axis=0, kind="stable")
    s = np.take_along_axis(scores, order, axis=0)
    wp = (w * positive)[order]
    wn = (w * ~positive)[order]
    cn = np.cumsum(wn, axis=0)
    idx = np.arange(n)[:, None]
    new = np.ones((n, c), dtype=bool)
    new[1:] = s[1:] != s[:-1]
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=0)
    last = np.ones((n, c), dtype=bool)
    last[:-1] = new[1:]
    end = np.minimum.accumulate(np.where(last, idx, n)[::-1], axis=0)[::-1]
    below = np.take_along_axis(cn, start, axis=0) - np.take_along_axis(wn, start, axis=0)
    tied = np.take_along_axis(cn, end, axis=0) - below
    return (wp * (below + 0.5 * tied)).sum(axis=0) / (P * N)


class _SubsetScorer:
    """Cross-validated merit of decision tables, many candidate cell partitions at a time."""

    def __init__(self, y, w, n_classes, measure, folds, n_folds):
        self.y, self.w, self.k = y, w, n_classes
        self.measure = measure
        self.folds, self.n_folds = folds, n_folds
        n = y.shape[0]
        self.prior_counts = 1.0 + np.bincount(y, weights=w, minlength=n_classes)
        self.onehot = np.zeros((n, n_classes))
        self.onehot[np.arange(n), y] = 1.0
        self.own = self.onehot * w[:, None]
        if folds is None:  # leave-one-out: priors down-dated by the row itself
            self.left_out_priors = normalise_rows(self.prior_counts - self.own, 1.0 / n_classes)
        else:
            fold_class = np.bincount(folds * n_classes + y, weights=w,
                                     minlength=n_folds * n_classes).reshape(n_folds, n_classes)
            self.left_out_priors = normalise_rows(self.prior_counts - fold_class, 1.0 / n_classes)[folds]
        self.auc_weights = self.prior_counts / self.prior_counts.sum()

    def merits(self, keys: np.ndarray) -> np.ndarray:
        """Merit (higher is better) of each column of ``keys``: per-row cell ids of one table."""
        n, c = keys.shape
        chunk = max(1, _CHUNK_CELLS // max(1, n * self.k))
        out = np.empty(c)
        for lo in range(0, c, chunk):
            check_deadline()
            out[lo:lo + chunk] = self._merits(keys[:, lo:lo + chunk])
        return out

    def _merits(self, keys):
        n, c = keys.shape
        k, y, w = self.k, self.y, self.w
        flat = (keys + np.arange(c)[None, :] * (int(keys.max()) + 1)).ravel()
        uniq, inv = np.unique(flat, return_inverse=True)
        yrep, wrep = np.repeat(y, c), np.repeat(w, c)
        cnt = np.bincount(inv * k + yrep, weights=wrep, minlength=uniq.size * k).reshape(-1, k)
        held = cnt[inv].reshape(n, c, k)
        if self.folds is None:
            held -= self.own[:, None, :]
        else:
            f = self.n_folds
            frep = np.repeat(self.folds, c)
            per_fold = np.bincount((inv * f + frep) * k + yrep, weights=wrep,
                                   minlength=uniq.size * f * k).reshape(-1, f, k)
            held -= per_fold[inv, frep].reshape(n, c, k)
        ok = (held > 1.0 + SMALL).any(axis=2)
        tot = held.sum(axis=2)
        dist = np.where(ok[..., None], held / np.where(ok, tot, 1.0)[..., None],
                        self.left_out_priors[:, None, :])
        W = w.sum()
        if self.measure == "acc":
            hit = dist.argmax(axis=2) == y[:, None]
            return 100.0 * (w[:, None] * hit).sum(axis=0) / W
        if self.measure in ("rmse", "mae"):
            diff = dist - self.onehot[:, None, :]
            if self.measure == "rmse":
                return -np.sqrt((w[:, None] * (diff ** 2).sum(axis=2) / k).sum(axis=0) / W)
            return -(w[:, None] * np.abs(diff).sum(axis=2) / k).sum(axis=0) / W
        merit = np.zeros(c)
        for j in range(k):  # class-prior weighted AUC; undefined AUCs are skipped, as in WEKA
            auc = weighted_auc(dist[:, :, j], y == j, w)
            merit += np.where(np.isnan(auc), 0.0, self.auc_weights[j] * auc)
        return merit


def _add_to_open_list(lst, merit, group, max_size):
    """BestFirst's LinkedList2.addToList: bounded list sorted by decreasing merit."""
    item = (merit, group)
    if not lst:
        lst.append(item)
        return
    if merit > lst[0][0]:
        if len(lst) == max_size:
            lst.pop()
        lst.insert(0, item)
        return
    if len(lst) == max_size and merit <= lst[-1][0]:
        return
    for i, (m, _) in enumerate(lst):
        if merit > m:
            if len(lst) == max_size:
                lst.pop()
            lst.insert(i, item)
            return
    lst.append(item)


def best_first(evaluate_children, empty_merit, n_attributes, max_stale=5):
    """WEKA BestFirst, forward from the empty set, stopping after ``max_stale`` idle expansions."""
    cache = {frozenset(): empty_merit}
    best_group, best_merit = frozenset(), empty_merit
    open_list = [(empty_merit, frozenset())]
    stale = 0
    while stale < max_stale and open_list:
        check_deadline()
        _, group = open_list.pop(0)
        cands = [i for i in range(n_attributes) if i not in group]
        need = [i for i in cands if group | {i} not in cache]
        if need:
            for i, merit in zip(need, evaluate_children(group, need)):
                cache[group | {i}] = float(merit)
        added = False
        for i in cands:
            sub = group | {i}
            merit = cache[sub]
            _add_to_open_list(open_list, merit, sub, max_stale)
            if merit - best_merit > 1e-5:
                added, stale = True, 0
                best_merit, best_group = merit, sub
        if not added:
            stale += 1
    return sorted(best_group)


def greedy_stepwise(evaluate_children, empty_merit, n_attributes):
    """WEKA GreedyStepwise (forward): add the best attribute while the merit strictly improves."""
    group, best = frozenset(), empty_merit
    while True:
        check_deadline()
        cands = [i for i in range(n_attributes) if i not in group]
        if not cands:
            break
        merits = evaluate_children(group, cands)
        j = int(np.argmax(merits))
        if not merits[j] > best:
            break
        group, best = group | {cands[j]}, float(merits[j])
    return sorted(group)


class WekaDecisionTable(ClassifierMixin, BaseEstimator):
    """WEKA DecisionTable: ``evaluation_measure`` (-E), ``use_ibk`` (-I), ``search`` (-S),
    ``cv_folds`` (-X, 1 = leave-one-out).

    ``predict_proba``: the normalised class counts of the row's cell; unmatched rows get the
    Laplace class priors, or with ``use_ibk`` IB1's distribution over the discretised selected
    attributes (all cells at the minimum Hamming distance vote, plus IBk's 1/N correction).
    Instance weights are honoured.

    Deviation: with ``cv_folds`` > 1 the stratified folds are drawn once per fit from
    ``random_state``; WEKA reshuffles them for every subset it scores, which only adds noise to
    the comparison of subsets.
    """

    def __init__(self, evaluation_measure="acc", use_ibk=False, search="BestFirst", cv_folds=1,
                 random_state=None):
        self.evaluation_measure = evaluation_measure
        self.use_ibk = use_ibk
        self.search = search
        self.cv_folds = cv_folds
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if self.evaluation_measure not in MEASURES:
            raise ValueError(f"evaluation_measure must be one of {MEASURES}")
        if self.search not in SEARCHES:
            raise ValueError(f"search must be one of {SEARCHES}")
        X, codes, w = fit_inputs(self, X, y, sample_weight)
        n, m = X.shape
        k = self.classes_.size
        self.cut_points_ = all_cut_points(X, codes, k, w)
        B = discretise(X, self.cut_points_)
        card = np.array([c.size + 1 for c in self.cut_points_], dtype=np.int64)
        folds_n = int(self.cv_folds)
        folds = None if folds_n <= 1 else stratified_folds(
            codes, folds_n, make_rng(self.random_state))
        scorer = _SubsetScorer(codes, w, k, self.evaluation_measure, folds, folds_n)

        def cells(cols):
            if not cols:
                return np.zeros(n, dtype=np.int64)
            return np.unique(B[:, cols], axis=0, return_inverse=True)[1].ravel().astype(np.int64)

        known = {}

        def evaluate_children(group, cands):
            # an attribute discretised into one bin leaves the table as it is: parent's merit
            cands = np.asarray(cands)
            out = np.full(cands.size, known[frozenset(group)])
            split = card[cands] > 1
            if split.any():
                c = cands[split]
                g = cells(sorted(group))
                out[split] = scorer.merits(g[:, None] * card[c][None, :] + B[:, c])
            for i, merit in zip(cands, out):
                known[frozenset(group) | {int(i)}] = float(merit)
            return out

        empty = float(scorer.merits(np.zeros((n, 1), dtype=np.int64))[0])
        known[frozenset()] = empty
        if self.search == "BestFirst":
            selected = best_first(evaluate_children, empty, m)
        else:
            selected = greedy_stepwise(evaluate_children, empty, m)

        self.selected_ = np.asarray(selected, dtype=np.intp)
        self.n_train_ = n
        prior = 1.0 + np.bincount(codes, weights=w, minlength=k)
        self.class_prior_ = prior / prior.sum()
        keys = B[:, self.selected_]
        self.cells_, inv = np.unique(keys, axis=0, return_inverse=True)
        inv = inv.ravel()
        self.cell_counts_ = np.bincount(inv * k + codes, weights=w,
                                        minlength=self.cells_.shape[0] * k).reshape(-1, k)
        return self

    def _ib1(self, keys):
        """IBk (k = 1) on the cells: every cell at the minimum Hamming distance votes."""
        k = self.classes_.size
        out = np.empty((keys.shape[0], k))
        u = self.cells_.shape[0]
        step = max(1, _CHUNK_CELLS // max(1, u * max(1, keys.shape[1])))
        for lo in range(0, keys.shape[0], step):
            d = (keys[lo:lo + step, None, :] != self.cells_[None, :, :]).sum(axis=2)
            near = (d == d.min(axis=1, keepdims=True)).astype(float)
            votes = near @ self.cell_counts_ + 1.0 / max(1, self.n_train_)
            out[lo:lo + step] = votes / votes.sum(axis=1, keepdims=True)
        return out

    def predict_proba(self, X):
        X = predict_inputs(self, X)
        keys = discretise(X[:, self.selected_], [self.cut_points_[j] for j in self.selected_])  # those columns only
        if self.selected_.size == 0:  # one cell holding every training row
            return np.tile(normalise_rows(self.cell_counts_[0], self.class_prior_), (X.shape[0], 1))
        u = self.cells_.shape[0]
        _, inv = np.unique(np.vstack([self.cells_, keys]), axis=0, return_inverse=True)
        inv = inv.ravel()
        lookup = np.full(inv.max() + 1, -1)
        lookup[inv[:u]] = np.arange(u)
        cell = lookup[inv[u:]]
        hit = cell >= 0
        out = np.empty((X.shape[0], self.classes_.size))
        out[hit] = normalise_rows(self.cell_counts_[cell[hit]], self.class_prior_)
        miss = ~hit
        if miss.any():
            out[miss] = self._ib1(keys[miss]) if self.use_ibk else self.class_prior_
        return out

    def predict(self, X):
        return labels(self, self.predict_proba(X))

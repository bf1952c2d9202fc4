"""One WEKA JRip rule and how it is built: grow, prune, and the grow/prune split.

Kept apart from :mod:`spaces.slc._rules_ripper` because this is the row-level, vectorised part
of the port (``RipperRule``/``NumericAntd`` in WEKA), testable on its own
(``tests/test_slc_rules.py`` checks :func:`_best_antecedent` against a brute-force search):

* **grow**: add the antecedent ``x <= v`` / ``x >= v`` of maximum FOIL gain
  p·(log2((p+1)/(t+1)) − log2(P'/T')), over all attributes and all distinct values at once
  (per-column sorted orders + cumulative weights), until the rule is pure or a condition would
  cover less than ``min_weight`` positive weight (``mtw``);
* **prune**: keep the prefix of antecedents with the best (p+1)/(p+n+2) on the prune rows
  (or, when revising a rule in the optimisation stage, the best accuracy on all of them);
* **split**: 2/3 grow, 1/3 prune, stratified by class (``RuleStats.stratify`` + ``partition``).

:class:`_Context` carries the training data of one fit shared by this code and the
description-length bookkeeping in :mod:`spaces.slc._rules_ripper_stats`.
"""
from __future__ import annotations

import math

import numpy as np

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.slc._rules_base import SMALL

N_FOLDS = 3  # JRip -F: one fold prunes


# ---------------------------------------------------------------------------------------------
# rules

class _Rule:
    """Conjunction of numeric antecedents predicting ``cls``; coverage on the training rows cached."""

    __slots__ = ("cls", "att", "thr", "ge", "_mask")

    def __init__(self, cls, att=None, thr=None, ge=None):
        self.cls = cls
        self.att = list(att or [])
        self.thr = list(thr or [])
        self.ge = list(ge or [])
        self._mask = None

    def size(self) -> int:
        return len(self.att)

    def copy(self) -> "_Rule":
        r = _Rule(self.cls, self.att, self.thr, self.ge)
        r._mask = self._mask
        return r

    def add(self, att, thr, ge):
        self.att.append(att)
        self.thr.append(thr)
        self.ge.append(ge)
        self._mask = None

    def truncate(self, k):
        del self.att[k:], self.thr[k:], self.ge[k:]
        self._mask = None

    def covers(self, X) -> np.ndarray:
        m = np.ones(X.shape[0], dtype=bool)
        for a, t, g in zip(self.att, self.thr, self.ge):
            m &= (X[:, a] >= t) if g else (X[:, a] <= t)
        return m

    def mask(self, X) -> np.ndarray:
        if self._mask is None:
            self._mask = self.covers(X)
        return self._mask

class _Context:
    """Training data shared by the grow/prune/stats code of one fit."""

    def __init__(self, X, y, w, k, order, total_conds, min_weight, rng):
        self.X, self.y, self.w, self.k = X, y, w, k
        self.order = order
        self.total_conds = total_conds
        self.min_weight = min_weight
        self.rng = rng
        self.unit_weights = bool(np.all(w == 1.0))
        total = float(w.sum())
        # integer weights: every count is an integer, so log2(count + 1) comes from a table
        self._table = (np.log2(np.arange(1.0, int(total) + 3.0))
                       if np.all(w == np.floor(w)) and total < 1e7 else None)

    def log2p1(self, x):
        if self._table is not None:
            return np.take(self._table, x.astype(np.intp))
        return np.log2(x + 1.0)


# ---------------------------------------------------------------------------------------------
# grow / prune

def _best_antecedent(ctx, rows, cls, def_ac_rt):
    """NumericAntd.splitData for every attribute at once → (att, thr, ge, accu, cover) or None."""
    s = ctx.order.sorted_rows(rows)                    # (M, c)
    m, c = s.shape
    v = ctx.order.values(s)
    if ctx.unit_weights:
        w = np.ones((m, c))
        cw = np.broadcast_to(np.arange(1.0, c + 1.0), (m, c))
        p = (ctx.y[s] == cls).astype(float)
    else:
        w = ctx.w[s]
        cw = np.cumsum(w, axis=1)
        p = np.where(ctx.y[s] == cls, w, 0.0)
    cp = np.cumsum(p, axis=1)
    log2p1 = ctx.log2p1
    is_end = np.ones((m, c), dtype=bool)
    np.greater(v[:, 1:], v[:, :-1], out=is_end[:, :-1])
    log_def = math.log2(def_ac_rt)
    # first bag "x <= v": the rows up to the end of v's group
    f_gain = cp * (log2p1(cp) - log2p1(cw) - log_def)
    if is_end.all():  # no ties: the second bag "x >= v" starts at the row itself
        s_cover = cw[:, -1:] - cw + w
        s_accu = cp[:, -1:] - cp + p
    else:             # ties: it starts at the first row of v's group
        is_start = np.ones((m, c), dtype=bool)
        is_start[:, 1:] = is_end[:, :-1]
        start = np.maximum.accumulate(np.where(is_start, np.arange(c), 0), axis=1)
        start += (np.arange(m) * c)[:, None]
        s_cover = cw[:, -1:] - np.take(cw - w, start)
        s_accu = cp[:, -1:] - np.take(cp - p, start)
    s_gain = s_accu * (log2p1(s_accu) - log2p1(s_cover) - log_def)
    first = f_gain > s_gain
    gain = np.where(first, f_gain, s_gain)
    gain[~is_end] = -np.inf
    pos = np.argmax(gain, axis=1)
    best = gain[np.arange(m), pos]
    att = int(np.argmax(best))
    if not best[att] > 0:
        return None
    q = int(pos[att])
    if first[att, q]:
        return att, float(v[att, q]), False, float(cp[att, q]), float(cw[att, q])
    return att, float(v[att, q]), True, float(s_accu[att, q]), float(s_cover[att, q])


def _grow(ctx, rule, rows):
    """RipperRule.grow: extend ``rule`` on the grow rows (existing antecedents kept)."""
    w = ctx.w[rows]
    total = w.sum()
    if not total > SMALL:
        return
    def_accu = w[ctx.y[rows] == rule.cls].sum()
    def_ac_rt = (def_accu + 1.0) / (total + 1.0)
    while rows.size > 0 and def_ac_rt < 1.0 - SMALL:
        check_deadline()
        found = _best_antecedent(ctx, rows, rule.cls, def_ac_rt)
        if found is None:
            break
        att, thr, ge, accu, cover = found
        if accu < ctx.min_weight - SMALL:
            break
        rule.add(att, thr, ge)
        x = ctx.X[rows, att]
        rows = rows[(x >= thr) if ge else (x <= thr)]
        def_ac_rt = (accu + 1.0) / (cover + 1.0)


def _prune(ctx, rule, rows, use_whole):
    """RipperRule.prune: keep the antecedent prefix of best worth on the prune rows."""
    w = ctx.w[rows]
    total = w.sum()
    if not total > SMALL or rule.size() == 0:
        return
    pos = ctx.y[rows] == rule.cls
    def_accu = w[pos].sum()
    X = ctx.X[rows]
    conds = np.stack([(X[:, a] >= t) if g else (X[:, a] <= t)
                      for a, t, g in zip(rule.att, rule.thr, rule.ge)])
    cum = np.logical_and.accumulate(conds, axis=0)                # (size, c) prefix coverage
    worth = cum @ (w * pos)
    if use_whole:
        tn = (~cum) @ (w * ~pos)
        worth_rt = (worth + tn) / total
    else:
        worth_rt = (worth + 1.0) / (cum @ w + 2.0)
    max_value, max_index = (def_accu + 1.0) / (total + 2.0), -1
    for i, r in enumerate(worth_rt):
        if r > max_value:
            max_value, max_index = r, i
    rule.truncate(max_index + 1)


def _stratify_partition(ctx, rows):
    """RuleStats.stratify + partition: per-class shuffles dealt into folds; last fold prunes."""
    y = ctx.y[rows]
    bags = [ctx.rng.permutation(rows[y == c]) for c in range(ctx.k)]
    flat = np.concatenate(bags) if bags else rows
    dealt = np.concatenate([flat[f::N_FOLDS] for f in range(N_FOLDS)])
    split = rows.size * (N_FOLDS - 1) // N_FOLDS
    return np.sort(dealt[:split]), np.sort(dealt[split:])

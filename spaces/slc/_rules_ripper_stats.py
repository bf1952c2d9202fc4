"""Description-length bookkeeping of WEKA JRip (``weka.classifiers.rules.RuleStats``).

Kept apart from :mod:`spaces.slc._rules_ripper` because it is the one self-contained piece of
arithmetic there: Quinlan's MDL as ``RuleStats`` computes it, over row-index arrays of the
training data, with Java's NaN/inf semantics where they change a comparison. It answers
"how many bits does this rule set cost, and how many would it cost without rule *i*", which
the estimator uses to stop the building stage (64 bits above the minimum seen), to choose
between a rule, its replacement and its revision, and to delete rules that raise the total.
It only reads the rules it is given (``cls``, ``size()``, ``mask(X)``) and the shared training
context (``X``, ``y``, ``w``, ``k``, ``total_conds``), so it imports neither of the other two
JRip modules.
"""
from __future__ import annotations

import math

import numpy as np

from ggp_automl.spaces.slc._rules_base import SMALL

REDUNDANCY_FACTOR = 0.5


# ---------------------------------------------------------------------------------------------
# description-length arithmetic (RuleStats), with Java's NaN/inf semantics where it matters

def _log2(x: float) -> float:
    if x > 0:
        return math.log2(x)
    return -math.inf if x == 0 else math.nan


def _div(a: float, b: float) -> float:
    if b != 0:
        return a / b
    return math.nan if a == 0 else math.copysign(math.inf, a)


def subset_dl(t: float, k: float, p: float) -> float:
    """S(t, k, p) = -k·log2(p) - (t-k)·log2(1-p); a term with a zero factor counts 0."""
    rt = -k * _log2(p) if p > SMALL else 0.0
    if t - k != 0:
        rt -= (t - k) * _log2(1 - p)
    return rt


def data_dl(exp_fp_over_err, cover, uncover, fp, fn) -> float:
    total_bits = _log2(cover + uncover + 1.0)
    if cover > uncover + SMALL:
        exp_err = exp_fp_over_err * (fp + fn)
        cover_bits = subset_dl(cover, fp, _div(exp_err, cover))
        uncover_bits = subset_dl(uncover, fn, fn / uncover) if uncover > SMALL else 0.0
    else:
        exp_err = (1.0 - exp_fp_over_err) * (fp + fn)
        cover_bits = subset_dl(cover, fp, fp / cover) if cover > SMALL else 0.0
        uncover_bits = subset_dl(uncover, fn, _div(exp_err, uncover))
    return total_bits + cover_bits + uncover_bits

class _RuleStats:
    """weka.classifiers.rules.RuleStats over row-index arrays of the training data."""

    def __init__(self, ctx, data, rules=None):
        self.ctx = ctx
        self.data = data
        self.rules = list(rules) if rules is not None else []
        self.simple: list | None = None
        self.filtered: list | None = None
        self.dists: list | None = None

    def _stats(self, j, rows, want_dist=False):
        ctx = self.ctx
        rule = self.rules[j]
        cov = rule.mask(ctx.X)[rows]
        w, pos = ctx.w[rows], ctx.y[rows] == rule.cls
        st = np.array([w[cov].sum(), w[~cov].sum(), w[cov & pos].sum(), w[~cov & ~pos].sum(),
                       w[cov & ~pos].sum(), w[~cov & pos].sum()])
        dist = np.bincount(ctx.y[rows[cov]], weights=w[cov], minlength=ctx.k) if want_dist else None
        return st, (rows[cov], rows[~cov]), dist

    def count_data(self):
        self.simple, self.filtered, self.dists = [], [], []
        rows = self.data
        for j in range(len(self.rules)):
            st, filt, dist = self._stats(j, rows, True)
            self.simple.append(st)
            self.filtered.append(filt)
            self.dists.append(dist)
            rows = filt[1]

    def count_data_from(self, index, uncovered, prev_stats):
        self.simple = list(prev_stats[:index])
        self.filtered = [None] * index
        if index > 0:
            self.filtered[index - 1] = (None, uncovered)
        rows = uncovered
        for j in range(index, len(self.rules)):
            st, filt, _ = self._stats(j, rows)
            self.simple.append(st)
            self.filtered.append(filt)
            rows = filt[1]

    def add_and_update(self, rule):
        self.rules.append(rule)
        if self.simple is None:
            self.simple, self.filtered, self.dists = [], [], []
        rows = self.filtered[-1][1] if self.filtered else self.data
        st, filt, dist = self._stats(len(self.rules) - 1, rows, True)
        self.simple.append(st)
        self.filtered.append(filt)
        self.dists.append(dist)

    def remove_last(self):
        self.rules.pop()
        self.filtered.pop()
        self.simple.pop()
        if self.dists:
            self.dists.pop()

    def theory_dl(self, index) -> float:
        k = float(self.rules[index].size())
        if k == 0:
            return 0.0
        tdl = _log2(k)
        if k > 1:
            tdl += 2.0 * _log2(tdl)
        tdl += subset_dl(self.ctx.total_conds, k, k / self.ctx.total_conds)
        return REDUNDANCY_FACTOR * tdl

    def potential(self, index, exp_fp, rs, rule_stat, check_err) -> float:
        pcov = rs[0] - rule_stat[0]
        puncov = rs[1] + rule_stat[0]
        pfp = rs[4] - rule_stat[4]
        pfn = rs[5] + rule_stat[2]
        with_dl = data_dl(exp_fp, rs[0], rs[1], rs[4], rs[5])
        without_dl = data_dl(exp_fp, pcov, puncov, pfp, pfn)
        pot = with_dl + self.theory_dl(index) - without_dl
        err = _div(rule_stat[4], rule_stat[0])
        over_err = check_err and err >= 0.5 - SMALL
        if pot >= -SMALL or over_err:
            rs[0], rs[1], rs[4], rs[5] = pcov, puncov, pfp, pfn
            return pot
        return math.nan

    def min_data_dl_if_deleted(self, index, exp_fp, check_err) -> float:
        rs = np.zeros(6)
        for j in range(index):
            rs[[0, 2, 4]] += self.simple[j][[0, 2, 4]]
        rows = self.data if index == 0 else self.filtered[index - 1][1]
        plus = []
        for j in range(index + 1, len(self.rules)):
            st, filt, _ = self._stats(j, rows)
            plus.append(st)
            rs[[0, 2, 4]] += st[[0, 2, 4]]
            rows = filt[1]
        if plus:
            rs[[1, 3, 5]] = plus[-1][[1, 3, 5]]
        elif index > 0:
            rs[[1, 3, 5]] = self.simple[index - 1][[1, 3, 5]]
        else:
            s0 = self.simple[0]
            rs[1], rs[3], rs[5] = s0[0] + s0[1], s0[3] + s0[4], s0[2] + s0[5]
        pot = 0.0
        for k in range(index + 1, len(self.rules)):
            p = self.potential(k, exp_fp, rs, plus[k - index - 1], check_err)
            if not math.isnan(p):
                pot += p
        return data_dl(exp_fp, rs[0], rs[1], rs[4], rs[5]) - pot

    def _ruleset_stat(self):
        rs = np.zeros(6)
        for st in self.simple:
            rs[[0, 2, 4]] += st[[0, 2, 4]]
        if self.simple:
            rs[[1, 3, 5]] = self.simple[-1][[1, 3, 5]]
        return rs

    def min_data_dl_if_exists(self, index, exp_fp, check_err) -> float:
        rs = self._ruleset_stat()
        pot = 0.0
        for k in range(index + 1, len(self.simple)):
            p = self.potential(k, exp_fp, rs, self.simple[k], check_err)
            if not math.isnan(p):
                pot += p
        return data_dl(exp_fp, rs[0], rs[1], rs[4], rs[5]) - pot

    def relative_dl(self, index, exp_fp, check_err) -> float:
        return (self.min_data_dl_if_exists(index, exp_fp, check_err) + self.theory_dl(index)
                - self.min_data_dl_if_deleted(index, exp_fp, check_err))

    def reduce_dl(self, exp_fp, check_err):
        rs = self._ruleset_stat()
        need_update = False
        for k in range(len(self.simple) - 1, -1, -1):
            p = self.potential(k, exp_fp, rs, self.simple[k], check_err)
            if not math.isnan(p):
                if k == len(self.simple) - 1:
                    self.remove_last()
                else:
                    del self.rules[k]
                    need_update = True
        if need_update:
            self.count_data()

"""WEKA JRip (RIPPER, Cohen 1995), ported from ``weka.classifiers.rules.JRip``/``RuleStats``.

No scikit-learn RIPPER exists, and the ``wittgenstein`` package (decision 11) is not installed,
bins numeric attributes and was measured at 5 s per label, so this is a compact port of WEKA's
implementation with the row-level work vectorised:

* classes are handled in increasing weighted frequency; each gets a rule set (class vs. the
  remaining rows), the most frequent class is the default rule;
* **grow**: add the antecedent ``x <= v`` / ``x >= v`` of maximum FOIL gain
  p·(log2((p+1)/(t+1)) − log2(P'/T')), over all attributes and all distinct values at once
  (per-column sorted orders + cumulative weights), until the rule is pure or a condition would
  cover less than ``min_weight`` positive weight (``mtw``);
* **prune** (unless ``use_pruning`` is off): 2/3 grow, 1/3 prune stratified split; keep the
  prefix of antecedents with the best (p+1)/(p+n+2) on the prune rows;
* **stop**: description length 64 bits above the minimum seen, no positive covered, or error
  rate ≥ 0.5 (``check_error_rate``); DL = Quinlan's MDL exactly as ``RuleStats``;
* **optimise** ``optimizations`` times (only with pruning, as in WEKA): for every rule, grow a
  replacement and a revision, keep the variant of least relative DL, cover residual positives
  with new rules, then delete rules that increase the DL.

Confidence is WEKA's: the class distribution (normalised weighted counts, not Laplace-corrected)
of the training rows the covering rule took when the rule set was counted. Random streams
differ from Java's, so rule sets differ from WEKA's run to run like any reseeding does.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.slc._rules_base import SMALL, ColumnOrder, make_rng, normalise_rows
from ggp_automl.spaces.slc._validation import fit_inputs, labels, predict_inputs

MAX_DL_SURPLUS = 64.0
REDUNDANCY_FACTOR = 0.5
N_FOLDS = 3  # JRip -F: one fold prunes


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


# ---------------------------------------------------------------------------------------------

class WekaJRip(ClassifierMixin, BaseEstimator):
    """WEKA JRip: ``min_weight`` (-N, grammar ``mtw``), ``check_error_rate`` (absence of -E),
    ``use_pruning`` (absence of -P), ``optimizations`` (-O). Three folds for pruning (-F 3).

    ``predict_proba`` = class distribution of the first covering rule (WEKA). Instance weights
    are honoured. Deviation: where WEKA would divide by zero (a rule set covering every training
    row, leaving the default rule no rows) the default rule predicts the training class
    distribution instead of failing.
    """

    def __init__(self, min_weight=2.0, check_error_rate=True, use_pruning=True, optimizations=2,
                 random_state=None):
        self.min_weight = min_weight
        self.check_error_rate = check_error_rate
        self.use_pruning = use_pruning
        self.optimizations = optimizations
        self.random_state = random_state

    # -- one class -----------------------------------------------------------------------
    def _check_stop(self, rst, min_dl, dl) -> bool:
        if dl > min_dl + MAX_DL_SURPLUS:
            return True
        if not rst[2] > SMALL:
            return True
        if _div(rst[4], rst[0]) >= 0.5:
            return bool(self.check_error_rate)
        return False

    def _ruleset_for_class(self, ctx, exp_fp, data, cls, def_dl):
        check_err = bool(self.check_error_rate)
        new_data, stop, ruleset = data, False, []
        dl = min_dl = def_dl
        rstats = None
        has_pos = True
        while not stop and has_pos:  # building stage
            check_deadline()
            rule = _Rule(cls)
            if self.use_pruning:
                grow, prune = _stratify_partition(ctx, new_data)
                _grow(ctx, rule, grow)
                _prune(ctx, rule, prune, False)
            else:
                _grow(ctx, rule, new_data)
            if rstats is None:
                rstats = _RuleStats(ctx, new_data)
            rstats.add_and_update(rule)
            last = len(rstats.rules) - 1
            dl += rstats.relative_dl(last, exp_fp, check_err)
            min_dl = min(min_dl, dl)
            rst = rstats.simple[last]
            stop = self._check_stop(rst, min_dl, dl)
            if not stop:
                ruleset.append(rule)
                new_data = rstats.filtered[last][1]
                has_pos = rst[5] > SMALL
            else:
                rstats.remove_last()

        if self.use_pruning:  # optimisation stage
            for _ in range(int(self.optimizations)):
                new_data = data
                final = _RuleStats(ctx, data)
                position, stop, has_pos = 0, False, True
                dl = min_dl = def_dl
                while not stop and has_pos:
                    check_deadline()
                    residual = position >= len(ruleset)
                    grow, prune = _stratify_partition(ctx, new_data)
                    if residual:
                        final_rule = _Rule(cls)
                        _grow(ctx, final_rule, grow)
                        _prune(ctx, final_rule, prune, False)
                    else:
                        old = ruleset[position]
                        if not old.mask(ctx.X)[new_data].any():  # null coverage: keep as is
                            final.add_and_update(old)
                            position += 1
                            continue
                        replace = _Rule(cls)
                        _grow(ctx, replace, grow)
                        later = np.zeros(prune.size, dtype=bool)
                        for r in ruleset[position + 1:]:
                            later |= r.mask(ctx.X)[prune]
                        prune = prune[~later]
                        _prune(ctx, replace, prune, True)
                        revision = old.copy()
                        _grow(ctx, revision, grow[old.mask(ctx.X)[grow]])
                        _prune(ctx, revision, prune, True)
                        prev = final.simple[:position] if final.simple else []
                        dls = []
                        for variant in (replace, revision, old):
                            rules = list(ruleset)
                            rules[position] = variant
                            st = _RuleStats(ctx, data, rules)
                            st.count_data_from(position, new_data, prev)
                            dls.append(st.relative_dl(position, exp_fp, check_err))
                        rep_dl, rev_dl, old_dl = dls
                        if old_dl <= rev_dl and old_dl <= rep_dl:
                            final_rule = old
                        elif rev_dl <= rep_dl:
                            final_rule = revision
                        else:
                            final_rule = replace
                    final.add_and_update(final_rule)
                    rst = final.simple[position]
                    if residual:
                        dl += final.relative_dl(position, exp_fp, check_err)
                        min_dl = min(min_dl, dl)
                        stop = self._check_stop(rst, min_dl, dl)
                        if not stop:
                            ruleset.append(final_rule)
                        else:
                            final.remove_last()
                            position -= 1
                    else:
                        ruleset[position] = final_rule
                    if final.rules:
                        new_data = final.filtered[position][1]
                    has_pos = rst[5] > SMALL
                    position += 1
                # WEKA adds the rules not gone through from position + 1 on (sic)
                for k in range(position + 1, len(ruleset)):
                    final.add_and_update(ruleset[k])
                final.reduce_dl(exp_fp, check_err)
                ruleset = list(final.rules)
                rstats = final

        remaining = rstats.filtered[len(ruleset) - 1][1] if ruleset else data
        return remaining, rstats

    # -- estimator API -------------------------------------------------------------------
    def fit(self, X, y, sample_weight=None):
        X, codes, w = fit_inputs(self, X, y, sample_weight)
        k = self.classes_.size
        counts = np.bincount(codes, weights=w, minlength=k)
        order = np.argsort(counts, kind="stable")          # ordered class r = original order[r]
        rank = np.empty(k, dtype=np.intp)
        rank[order] = np.arange(k)
        yo = rank[codes]
        ordered_counts = counts[order]
        srt = np.sort(X, axis=0)
        total_conds = float(2 * ((np.diff(srt, axis=0) != 0).sum() + X.shape[1]))
        ctx = _Context(X, yo, w, k, ColumnOrder(X), total_conds, float(self.min_weight),
                       make_rng(self.random_state))
        prior = counts / counts.sum() if counts.sum() > 0 else np.full(k, 1.0 / k)

        data = np.arange(X.shape[0])
        all_rules, all_dists = [], []
        for r in range(k - 1):
            if abs(ordered_counts[r]) < SMALL:
                continue
            exp_fp = ordered_counts[r] / ordered_counts[r:].sum()
            wd = w[data]
            class_w, total_w = wd[yo[data] == r].sum(), wd.sum()
            if not class_w > 0:
                continue
            def_dl = data_dl(exp_fp, 0.0, total_w, 0.0, class_w)
            data, stats = self._ruleset_for_class(ctx, exp_fp, data, r, def_dl)
            for rule, dist in zip(stats.rules, stats.dists):
                all_rules.append(rule)
                all_dists.append(dist)
        all_rules.append(_Rule(k - 1))                    # default rule: most frequent class
        all_dists.append(np.bincount(yo[data], weights=w[data], minlength=k))
        dists = normalise_rows(np.array(all_dists)[:, rank], prior)  # back to original order
        self.rules_ = [(np.array(r.att, dtype=np.intp), np.array(r.thr), np.array(r.ge, dtype=bool))
                       for r in all_rules]
        self.rule_classes_ = self.classes_[order[[r.cls for r in all_rules]]]
        self.rule_distributions_ = dists
        return self

    def predict_proba(self, X):
        X = predict_inputs(self, X)
        out = np.empty((X.shape[0], self.classes_.size))
        free = np.ones(X.shape[0], dtype=bool)
        for (att, thr, ge), dist in zip(self.rules_, self.rule_distributions_):
            hit = free.copy()
            for a, t, g in zip(att, thr, ge):
                hit &= (X[:, a] >= t) if g else (X[:, a] <= t)
            out[hit] = dist
            free &= ~hit
            if not free.any():
                break
        return out

    def predict(self, X):
        return labels(self, self.predict_proba(X))

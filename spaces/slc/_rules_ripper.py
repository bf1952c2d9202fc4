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

This module holds the estimator and the per-class building and optimisation stages; a rule and
its growing/pruning are :mod:`spaces.slc._rules_ripper_grow`, the description-length
bookkeeping (``RuleStats``) is :mod:`spaces.slc._rules_ripper_stats`.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.encoding import per_view
from ggp_automl.spaces.slc._rules_base import SMALL, column_order, make_rng, normalise_rows
from ggp_automl.spaces.slc._rules_ripper_grow import (  # noqa: F401 - _best_antecedent re-exported for the tests
    _best_antecedent, _Context, _grow, _prune, _Rule, _stratify_partition)
from ggp_automl.spaces.slc._rules_ripper_stats import _div, _RuleStats, data_dl
from ggp_automl.spaces.slc._validation import fit_inputs, labels, predict_inputs

MAX_DL_SURPLUS = 64.0


# ---------------------------------------------------------------------------------------------


def _possible_conditions(X: np.ndarray) -> float:
    """Twice the number of distinct cut points plus attributes: JRip's count of possible conditions."""
    srt = np.sort(X, axis=0)
    return float(2 * ((np.diff(srt, axis=0) != 0).sum() + X.shape[1]))

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
        # what depends on X alone is shared by every label and candidate on the data view (issue 25)
        total_conds = per_view(X, "ripper-conditions", _possible_conditions)
        ctx = _Context(X, yo, w, k, column_order(X), total_conds, float(self.min_weight),
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

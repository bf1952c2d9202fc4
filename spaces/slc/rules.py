"""The rule learners of the SLC level: JRip, PART, DecisionTable, OneR, ZeroR.

Builders only: each maps the grammar's hyper-parameters (search-space notes §1.1.1, §1.1.8,
§1.1.12, §1.1.18, §1.1.22) onto a WEKA-faithful estimator. The estimators live in the
``_rules_*`` modules, one algorithm per module, with their deviations from WEKA in the class
docstrings. WEKA switches that turn a feature *off* are translated here: ``cer`` present = do
NOT check the error rate, ``up`` present = NO pruning.
"""
from __future__ import annotations

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register
from ggp_automl.spaces.slc._rules_oner import WekaOneR
from ggp_automl.spaces.slc._rules_part import WekaPART
from ggp_automl.spaces.slc._rules_ripper import WekaJRip
from ggp_automl.spaces.slc._rules_table import WekaDecisionTable
from ggp_automl.spaces.slc._rules_zeror import WekaZeroR

__all__ = ["WekaJRip", "WekaPART", "WekaDecisionTable", "WekaOneR", "WekaZeroR"]


@register("JRip", kind="slc")
def jrip(p: Params):
    """JRip (RIPPER): mtw min. positive weight per condition, cer = no error-rate check,
    up = no pruning, o optimisation runs."""
    return WekaJRip(min_weight=p.real("mtw"), check_error_rate=not p.flag("cer"),
                    use_pruning=not p.flag("up"), optimizations=p.int("o"),
                    random_state=p.random_state)


@register("PART", kind="slc")
def part(p: Params):
    """PART: partial C4.5 trees → decision list; mno_part min. leaf weight, bs binary splits,
    rep <nr> (reduced-error pruning, nr folds) or ebp (C4.5 error-based pruning, CF 0.25)."""
    rep = p.has("rep")
    # without REP the folds are unused; <nr> is then absent and reads as its default, as in WEKA
    return WekaPART(min_no_obj=p.int("mno_part"), binary_splits=p.flag("bs"),
                    reduced_error_pruning=rep, num_folds=p.int("nr"),
                    random_state=p.random_state)


@register("DecisionTable", kind="slc")
def decision_table(p: Params):
    """DecisionTable: em measure, uibk = 1-NN for unmatched rows, sm search, crv folds (1 = LOO)."""
    return WekaDecisionTable(evaluation_measure=p.cat("em"), use_ibk=p.flag("uibk"),
                             search=p.cat("sm"), cv_folds=p.int("crv"),
                             random_state=p.random_state)


@register("OneR", kind="slc")
def one_r(p: Params):
    """OneR: one bucketed attribute, mbs minimum bucket size (hard learner)."""
    return WekaOneR(min_bucket_size=p.int("mbs"), random_state=p.random_state)


@register("ZeroR", kind="slc")
def zero_r(p: Params):
    """ZeroR: majority class; class priors with WEKA's +1 as probabilities."""
    return WekaZeroR(random_state=p.random_state)

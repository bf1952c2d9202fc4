"""Single-label meta-classifiers of the Large space (grammar Box 5.4 and the ``ASC <sm>`` wrapper).

Each builder reads its hyper-parameters by the grammar's rule names (an absent rule is at its
``#@`` annotation's default, i.e. Appendix A: ``spaces/params.py``) and wraps the unfitted base
SLC it is given. The estimators live in one module per concept:

* ``ASC``             → :class:`AttributeSelectedClassifier` (``_meta_asc``, CFS in ``_cfs``)
* ``AdaBoostM1``      → :class:`AdaBoostM1` (``_meta_boost``)
* ``Bagging``         → :class:`Bagging` (``_meta_ensemble``)
* ``RandomCommittee`` → :class:`RandomCommittee` (``_meta_ensemble``)
* ``RandomSubSpace``  → :class:`RandomSubSpace` (``_meta_ensemble``)
* ``LWL``             → :class:`LocallyWeightedLearning` (``_meta_lwl``)

All of them fit their base through :func:`spaces.slc.base.fit_slc` (constant targets, weights
for learners without ``sample_weight``), accept ``sample_weight`` themselves, and derive every
member seed from their seed: WEKA's ``-S``, which PBIL-Auto-Ens searches as a hyper-parameter
(``s_ada``, ``s_bagging``, ``s_rc``; :meth:`Params.seed` falls back to ``p.random_state``).
"""
from __future__ import annotations

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from ._meta_asc import AttributeSelectedClassifier
from ._meta_boost import AdaBoostM1
from ._meta_ensemble import Bagging, RandomCommittee, RandomSubSpace
from ._meta_lwl import LocallyWeightedLearning

__all__ = ["AttributeSelectedClassifier", "AdaBoostM1", "Bagging", "RandomCommittee",
           "RandomSubSpace", "LocallyWeightedLearning"]


@register("ASC", kind="meta-slc")
def attribute_selected_classifier(p: Params, base):
    """ASC: CfsSubsetEval merit searched by <sm> (BestFirst | GreedyStepwise), then the base on the kept attributes."""
    return AttributeSelectedClassifier(base, search=p.cat("sm"), random_state=p.random_state)


@register("AdaBoostM1", kind="meta-slc")
def adaboost_m1(p: Params, base):
    """AdaBoostM1: <ni_ada> rounds, weight threshold <wt>% (100 = no trimming), <ur> = resampling
    (SAMME for K>2), seed <s_ada>."""
    return AdaBoostM1(base, n_estimators=p.int("ni_ada"), weight_threshold=p.int("wt"),
                      use_resampling=p.flag("ur"), random_state=p.seed("s_ada"))


@register("Bagging", kind="meta-slc")
def bagging(p: Params, base):
    """Bagging: <ni_bagging> bags of <bsp_bagging>% of the rows ('100 coob': full bags + out-of-bag
    error), seed <s_bagging>."""
    oob = p.has("coob")
    # WEKA computes the out-of-bag error only with full-size bags ('100 coob')
    percent = 100 if oob else p.int("bsp_bagging")
    return Bagging(base, n_estimators=p.int("ni_bagging"), bag_size_percent=percent,
                   oob_score=oob, random_state=p.seed("s_bagging"))


@register("RandomCommittee", kind="meta-slc")
def random_committee(p: Params, base):
    """RandomCommittee: <ni_rc> differently seeded copies of the base on all rows, probabilities
    averaged, seed <s_rc>."""
    return RandomCommittee(base, n_estimators=p.int("ni_rc"), random_state=p.seed("s_rc"))


@register("RandomSubSpace", kind="meta-slc")
def random_subspace(p: Params, base):
    """RandomSubSpace: <ni_rss> members on random attribute subsets of fraction <sss>, probabilities averaged."""
    return RandomSubSpace(base, n_estimators=p.int("ni_rss"), subspace_size=p.real("sss"),
                          random_state=p.random_state)


@register("LWL", kind="meta-slc")
def locally_weighted_learning(p: Params, base):
    """LWL: a kernel-weighted base fit per test row; <k_lwl> neighbours (-1 = all), kernel <wk> (EMPTY = linear)."""
    wk = p.cat("wk")  # EMPTY leaves WEKA's -U unset: its default kernel, 0 = linear
    return LocallyWeightedLearning(base, n_neighbors=p.int("k_lwl"), kernel=0 if wk is None else int(float(wk)),
                                   random_state=p.random_state)

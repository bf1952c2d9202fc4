"""Single-label Stacking (ST) and Vote (VT), the heterogeneous ensembles of PBIL-Auto-Ens-v2.

The paper (Table 1) gives ST the hyper-parameters X, S, B, NBC and VT the hyper-parameters
S, R, B, NBC, and picks one base-classifier type for each through a level-3 vector
(Table 2), but it never says what B and NBC mean. The project's decision (also recorded in
``grammars/README.md``):

* **Members.** NBC (rule ``nbc_st`` / ``nbc_vt``, an int 1..10, default 1) copies of the
  base classifier the grammar chose, with its own hyper-parameters; copy i (i = 0..NBC-1)
  is re-seeded with seed S + i where it has a ``random_state`` (deterministic learners give
  identical copies, which is harmless), **plus** one classifier of the type numbered B
  (rule ``b_st`` / ``b_vt``, "1".."9", default "2") in the paper's order of Table 2 —
  1 BayesNet, 2 NaiveBayes, 3 MultilayerPerceptron, 4 SMO, 5 KNN (WEKA IBk), 6 KStar,
  7 J48, 8 DecisionTable, 9 RandomTree — built at its registry defaults with seed S.
  Every ST/VT ensemble is therefore heterogeneous whenever B differs from the base's type,
  which is what WEKA's Stacking and Vote (several ``-B`` classifiers) are for.
* **Seed.** S = rule ``s_st`` / ``s_vt`` (1..255, WEKA's ``-S``), read with
  :meth:`Params.seed`, which falls back to the run's ``random_state`` when a tree has none.
* **Stacking** (WEKA ``weka.classifiers.meta.Stacking``): X = rule ``x_st`` (int 1..10,
  default 10) internal stratified folds drawn from S give the meta-level data (the
  members' out-of-fold class probabilities; X = 1: their predictions on the training rows
  themselves); the members are then refit on all rows. The meta-learner is the registry's
  ``LogisticRegression`` at its defaults (WEKA Logistic, ridge 1e-8), not WEKA's default
  ``-M`` ZeroR: ZeroR predicts the class prior whatever its inputs, so Stacking would
  ignore its members and every ST candidate would score like ZeroR. A linear model over
  the members' class probabilities is the standard level-1 learner (Ting & Witten 1999;
  WEKA's StackingC uses multi-response linear regression), and logistic regression is its
  probabilistic form.
* **Vote** (WEKA ``weka.classifiers.meta.Vote``): combination rule R = rule ``r_vt``, one of
  AVG, PROD, MAJ, MIN, MAX, MED (default AVG), each followed by WEKA's normalisation
  (uniform when everything is 0); MAJ breaks ties at random from S.

The estimators are in ``_meta_combine`` (members, folds, Stacking, Vote) and the rules in
``_meta_combine_rules``; the deviations from WEKA are listed in their class docstrings.
"""
from __future__ import annotations

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from ._meta_combine import Stacking, Vote
from ._meta_combine_rules import RULES

__all__ = ["Stacking", "Vote", "B_TYPES", "b_member"]

#: the paper's base-classifier order (Table 2: NET, NB, MLP, SMO, IBK, KST, J48, DT, RT) as
#: registry names; B = "1" is the first
B_TYPES = ("BayesNet", "NaiveBayes", "MultilayerPerceptron", "SMO", "KNN", "KStar", "J48",
           "DecisionTable", "RandomTree")


def _registry_default(name: str, seed: int):
    from ggp_automl.spaces.registry import load_all  # the registry imports this module
    return load_all()[name].build(Params(name, random_state=seed))


def b_member(b: str, seed: int):
    """The extra member of type number ``b`` ("1".."9"), built at its registry defaults."""
    try:
        index = int(float(b))
    except (TypeError, ValueError):
        raise ValueError(f"B must be a number 1..{len(B_TYPES)}, got {b!r}") from None
    if not 1 <= index <= len(B_TYPES):
        raise ValueError(f"B must be a number 1..{len(B_TYPES)}, got {b!r}")
    return _registry_default(B_TYPES[index - 1], seed)


@register("Stacking", kind="meta-slc")
def stacking(p: Params, base):
    """Stacking: <nbc_st> base copies + type <b_st>; Logistic on <x_st>-fold out-of-fold probabilities; seed <s_st>."""
    seed = p.seed("s_st")
    return Stacking(base, n_copies=p.int("nbc_st"), extra_estimator=b_member(p.cat("b_st"), seed),
                    n_folds=p.int("x_st"), final_estimator=_registry_default("LogisticRegression", seed),
                    random_state=seed)


@register("Vote", kind="meta-slc")
def vote(p: Params, base):
    """Vote: <nbc_vt> base copies + type <b_vt>, combined by <r_vt> (AVG|PROD|MAJ|MIN|MAX|MED); seed <s_vt>."""
    seed = p.seed("s_vt")
    rule = str(p.cat("r_vt")).strip().upper()
    if rule not in RULES:
        raise ValueError(f"r_vt must be one of {RULES}, got {rule!r}")
    return Vote(base, n_copies=p.int("nbc_vt"), extra_estimator=b_member(p.cat("b_vt"), seed),
                combination_rule=rule, random_state=seed)

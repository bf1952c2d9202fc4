"""A minimal multi-label model around any single registered algorithm.

Used by the per-algorithm tests and benchmarks: it exercises one algorithm at its
default hyper-parameters inside the smallest chain that makes it a multi-label model
(an SLC under BR, a meta-SLC over WEKA's default base learner under BR, an MLC over logistic regression, a
meta-MLC over BR with logistic regression).
"""
from __future__ import annotations

from .params import Params
from .registry import load_all


#: the base learner WEKA's meta-learners take by default (``-W``): a meta-learner's default configuration
#: includes it (Stacking and Vote default to ZeroR in WEKA, which says nothing of their cost: J48 here)
WEKA_DEFAULT_BASE = {"AdaBoostM1": "DecisionStump", "Bagging": "REPTree", "LWL": "DecisionStump",
                     "RandomCommittee": "RandomTree", "RandomSubSpace": "REPTree", "ASC": "J48"}


def minimal_chain(name: str, random_state: int = 0):
    registry = load_all()
    spec = registry[name]
    default = Params(name, random_state=random_state)

    def build(other: str, *base):
        return registry[other].build(Params(other, random_state=random_state), *base)

    if spec.kind == "slc":
        return build("BR", spec.build(default))
    if spec.kind == "meta-slc":
        return build("BR", spec.build(default, build(WEKA_DEFAULT_BASE.get(name, "J48"))))
    if spec.kind == "mlc":
        return spec.build(default, build("LogisticRegression"))
    if spec.kind == "mlc-aa":
        return spec.build(default)
    return spec.build(default, build("BR", build("LogisticRegression")))

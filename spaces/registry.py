"""The registry: grammar terminal -> estimator builder.

Adding an algorithm is one grammar alternative plus one entry here (see
``spaces/README.md``)::

    @register("ExtraTrees", kind="slc")
    def extra_trees(p: Params):
        return ExtraTreesClassifier(n_estimators=p.int("nt", 100), random_state=p.random_state)

Kinds say what an algorithm wraps, which is how a tree's chain of algorithms
(meta-MLC → MLC → meta-SLC → ASC → SLC, in pre-order) is assembled:

* ``slc``       a single-label classifier; ``build(p)``
* ``meta-slc``  wraps a single-label classifier; ``build(p, base)``
* ``mlc``       a multi-label method over a single-label base; ``build(p, base)``
* ``mlc-aa``    a multi-label method with no base (algorithm adaptation); ``build(p)``
* ``meta-mlc``  wraps a multi-label method; ``build(p, base)``
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable

KINDS = ("slc", "meta-slc", "mlc", "mlc-aa", "meta-mlc")
TAKES_BASE = {"slc": None, "meta-slc": "slc", "mlc": "slc", "mlc-aa": None, "meta-mlc": "mlc"}


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    kind: str
    build: Callable[..., Any]
    description: str = ""

    @property
    def base_kind(self) -> str | None:
        """The kind of estimator this algorithm wraps (None if it wraps nothing)."""
        return TAKES_BASE[self.kind]

    @property
    def produces(self) -> str:
        return "slc" if self.kind in ("slc", "meta-slc") else "mlc"


REGISTRY: dict[str, AlgorithmSpec] = {}

#: modules whose import registers the shipped algorithms
_MODULES = (
    "spaces.slc.trees", "spaces.slc.rules", "spaces.slc.functions", "spaces.slc.lazy",
    "spaces.slc.bayes", "spaces.slc.logistic", "spaces.slc.meta", "spaces.slc.combine",
    "spaces.mlc.transform", "spaces.mlc.chains", "spaces.mlc.labelsets", "spaces.mlc.trellis",
    "spaces.mlc.adaptation", "spaces.mlc.meta",
)


def register(name: str, kind: str, description: str = "") -> Callable:
    if kind not in KINDS:
        raise ValueError(f"unknown algorithm kind {kind!r}; expected one of {KINDS}")

    def decorator(build: Callable) -> Callable:
        if name in REGISTRY and REGISTRY[name].build is not build:
            raise ValueError(f"algorithm {name!r} is registered twice")
        REGISTRY[name] = AlgorithmSpec(name, kind, build, description or (build.__doc__ or "").strip())
        return build

    return decorator


def load_all() -> dict[str, AlgorithmSpec]:
    """Import the shipped algorithm modules (idempotent) and return the registry."""
    for module in _MODULES:
        importlib.import_module(module)
    return REGISTRY

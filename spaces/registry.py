"""The registry: grammar terminal -> estimator builder.

Adding an algorithm is one grammar alternative plus one registered builder, here or in a
module of the user's own (a plug-in, :mod:`spaces.plugins`; recipe in ``spaces/README.md``)::

    @register("ExtraTrees", kind="slc")
    def extra_trees(p: Params):
        return ExtraTreesClassifier(n_estimators=p.int("nt"), random_state=p.random_state)  # default: the grammar's

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

from ._plugins import load_entry_points

KINDS = ("slc", "meta-slc", "mlc", "mlc-aa", "meta-mlc")
TAKES_BASE = {"slc": None, "meta-slc": "slc", "mlc": "slc", "mlc-aa": None, "meta-mlc": "mlc"}


@dataclass(frozen=True)
class AlgorithmSpec:
    name: str
    kind: str
    build: Callable[..., Any]
    description: str = ""
    #: terminals the builder reads with ``Params.has`` when a grammar writes them beside the algorithm's
    #: name (``KNN fast <k_nn>``); any other terminal there means nothing and a grammar holding it is refused
    options: tuple[str, ...] = ()

    def stray(self, tokens) -> list[int]:
        """The positions of the tokens beside this algorithm's name (its alternative's items, or a tree
        node's leaves, as text) that mean nothing: neither the name (its first occurrence) nor an option
        its builder reads. The grammar check and the mapper both ask this."""
        named, out = False, []
        for i, token in enumerate(tokens):
            if token == self.name and not named:
                named = True
            elif token not in self.options:
                out.append(i)
        return out

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
    "ggp_automl.spaces.slc.trees", "ggp_automl.spaces.slc.rules", "ggp_automl.spaces.slc.functions", "ggp_automl.spaces.slc.lazy",
    "ggp_automl.spaces.slc.bayes", "ggp_automl.spaces.slc.logistic", "ggp_automl.spaces.slc.meta", "ggp_automl.spaces.slc.combine",
    "ggp_automl.spaces.mlc.transform", "ggp_automl.spaces.mlc.chains", "ggp_automl.spaces.mlc.labelsets", "ggp_automl.spaces.mlc.trellis",
    "ggp_automl.spaces.mlc.adaptation", "ggp_automl.spaces.mlc.meta",
)


def register(name: str, kind: str, description: str = "", options: tuple[str, ...] = ()) -> Callable:
    if kind not in KINDS:
        raise ValueError(f"unknown algorithm kind {kind!r}; expected one of {KINDS}")

    def decorator(build: Callable) -> Callable:
        old = REGISTRY.get(name)
        if old is not None and _origin(old.build) != _origin(build):  # the same function re-imported is fine
            raise ValueError(f"algorithm {name!r} is registered twice: by {_origin(old.build)} and by "
                             f"{_origin(build)}; give the new one another name (and its grammar terminal)")
        REGISTRY[name] = AlgorithmSpec(name, kind, build, description or (build.__doc__ or "").strip(),
                                       tuple(str(o) for o in options))
        return build

    return decorator


def _origin(build: Callable) -> str:
    return f"{getattr(build, '__module__', '?')}.{getattr(build, '__qualname__', repr(build))}"


def load_all() -> dict[str, AlgorithmSpec]:
    """Import the shipped algorithm modules and the installed packages' plug-ins (entry points; idempotent)
    and return the registry. Plug-ins named by a run are imported by :func:`spaces.plugins.load_plugins`."""
    for module in _MODULES:
        importlib.import_module(module)
    load_entry_points()
    return REGISTRY

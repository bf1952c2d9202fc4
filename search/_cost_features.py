"""The cost model's features: what a candidate's tree and its data view say about its wall time.

Private helper of :mod:`ggp_automl.search.cost_model` (the features are described in its docstring),
apart so that the model's module holds the model; import them from there.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Iterable

#: the shape terms are logarithms centred on these sizes
REF_ROWS, REF_FEATURES, REF_TARGETS = 500.0, 50.0, 5.0
#: times below this many seconds count as this many (log of 0 is not a time)
MIN_SECONDS = 0.01


@dataclass(frozen=True)
class Shape:
    """What the data view says about a candidate's cost: learning rows, features, targets (labels or
    classes) and fits (cross-validation folds; 1 for a hold-out)."""

    rows: int
    features: int
    targets: int
    fits: int = 1

    @classmethod
    def of(cls, split) -> "Shape":
        """The shape of an :class:`~ggp_automl.evaluation.candidate.Split`."""
        X = split.X_learn
        return cls(int(split.n_rows), int(X.shape[1]) if X.ndim > 1 else 1, int(split.task.n_targets),
                   max(len(split.folds), 1))

    @classmethod
    def from_record(cls, value) -> "Shape | None":
        """The shape an evaluation record logged (``[rows, features, targets, fits]``), or None."""
        if not isinstance(value, (list, tuple)) or len(value) != 4:
            return None
        try:
            return cls(*(max(int(v), 1) for v in value))
        except (TypeError, ValueError):
            return None

    def as_list(self) -> list[int]:
        return [self.rows, self.features, self.targets, self.fits]


def _number(token: str) -> float | None:
    try:
        v = float(token)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _tokens(tree_or_phenotype) -> list[str]:
    if isinstance(tree_or_phenotype, str):
        return tree_or_phenotype.split()
    return tree_or_phenotype.phenotype.split()  # a gp.tree.Node: its leaves' tokens


def features(tree_or_phenotype, shape: Shape, algorithms: Iterable[str] | None = None) -> dict[str, float]:
    """The features of a candidate (a :class:`~ggp_automl.gp.tree.Node` or its phenotype) on a view of
    ``shape``; ``algorithms``: the names that are algorithms (default: every registered one)."""
    if algorithms is None:
        from ggp_automl.spaces.registry import load_all

        algorithms = load_all().keys()
    names = set(algorithms)
    rows = math.log(max(shape.rows, 1) / REF_ROWS)
    cols = math.log(max(shape.features, 1) / REF_FEATURES)
    targets = math.log(max(shape.targets, 1) / REF_TARGETS)
    x: dict[str, float] = {"bias": 1.0, "rows": rows, "features": cols, "targets": targets,
                           "fits": math.log(max(shape.fits, 1))}

    def add(name: str, value: float) -> None:
        x[name] = x.get(name, 0.0) + value

    owner, position = "", 0
    for token in _tokens(tree_or_phenotype):
        if token in names:
            owner, position = token, 0
            add(f"alg:{token}", 1.0)
            add(f"alg:{token}*rows", rows)
            add(f"alg:{token}*features", cols)
            add(f"alg:{token}*targets", targets)
            continue
        v = _number(token)
        if v is not None:
            add(f"hp:{owner}#{position}", math.copysign(math.log1p(abs(v)), v))
            position += 1
        else:
            add(f"opt:{owner}={token}", 1.0)
    return x


def owner_of(name: str) -> str | None:
    """The algorithm a feature belongs to (None: a shape term)."""
    if ":" not in name:
        return None
    return re.split(r"[*#=]", name.split(":", 1)[1], maxsplit=1)[0] or None

"""The one in-memory form every loader returns: :class:`Dataset`; and rule 8, finite features.

Why a module of its own: the search, the splits, the fidelity views, the learnability checks
and the final refit all take a Dataset and never care which format it was read from, so the
class stands apart from the parsers. :func:`refuse_non_finite` (rule 8 of
:mod:`evaluation.data`: a feature value is finite or missing) lives here too, because every
loader applies it to the features it keeps: the loaders then import nothing above them
(:mod:`evaluation.learnable`, which checks whole Datasets before a search, re-exports it).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.gp.errors import DataError

__all__ = ["Dataset", "refuse_non_finite"]


def refuse_non_finite(X: np.ndarray, feature_names: Sequence[str], where: str,
                      line_of: Sequence[int] | np.ndarray | None = None) -> None:
    """Raise a DataError at the first infinite value of ``X`` (row-major order); NaN (missing) is fine.

    ``line_of[r]`` is the file line of data row ``r`` when the data came from a file.
    """
    bad = np.isinf(X)
    if not bad.any():
        return
    r, j = (int(i) for i in np.argwhere(bad)[0])
    at = f"{where}:{int(line_of[r])}" if line_of is not None and len(line_of) > r else where
    raise DataError(f"{at}: attribute '{feature_names[j]}' is {X[r, j]:g} in data row {r + 1}: feature values "
                    "must be finite numbers (write ? for a missing value; a number beyond ±1.8e308 overflows to "
                    "infinity)")


def _locked(a: np.ndarray, dtype: type) -> np.ndarray:
    """``a`` as a read-only array of ``dtype``, copying unless it already is one."""
    out = np.asarray(a, dtype=dtype)
    if out.flags.writeable:
        out = out.copy()
        out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset: features ``X`` (float, NaN = missing) and targets ``Y``.

    Multi-label: ``Y`` is an int8 (n, q) 0/1 matrix and ``label_names`` names its columns.
    Single-label: ``Y`` is an int64 vector of class codes ``0 .. len(classes) - 1``,
    ``classes`` holds the class names and ``label_names`` the class attribute's name.
    A target that is not known (``?``) is -1 (see :attr:`task` and ``Task.labelled``).
    The arrays are read-only (the dataclass is frozen, and so is its data): indexing
    (``ds.X[rows]``) gives writable copies; :meth:`subset` gives a smaller Dataset.
    """

    X: np.ndarray
    Y: np.ndarray
    feature_names: tuple[str, ...]
    label_names: tuple[str, ...]
    categorical_features: tuple[int, ...] = ()
    name: str = "dataset"
    source: str = ""
    #: For each categorical feature index: its category names; code ``i`` means ``categories[j][i]``.
    categories: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    #: Features removed as identifiers (rule 5 of the :mod:`evaluation.data` docstring).
    dropped_features: tuple[str, ...] = ()
    #: Single-label data: the class names (empty for multi-label data).
    classes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = self.source or self.name
        X = _locked(self.X, np.float64)
        raw_Y = np.asarray(self.Y)
        classes = tuple(str(c) for c in self.classes)
        if raw_Y.ndim == 1:
            if not classes and (raw_Y != -1).any():  # every class unknown ('?', data to predict): no names needed
                raise DataError(f"{where}: a class vector needs its class names")
            if raw_Y.size and (not np.isin(raw_Y, np.arange(-1, len(classes))).all()):
                raise DataError(f"{where}: class codes must lie in 0..{len(classes) - 1} (-1: unknown)")
            Y = _locked(raw_Y, np.int64)
        else:
            if classes:
                raise DataError(f"{where}: class names given for a multi-label target matrix")
            if raw_Y.size and not np.isin(raw_Y, (-1, 0, 1)).all():
                raise DataError(f"{where}: Y must contain only 0 and 1")
            Y = _locked(raw_Y, np.int8)
        if X.ndim != 2 or Y.ndim not in (1, 2):
            raise DataError(f"{where}: X must be 2-D and Y 1-D (classes) or 2-D (labels), got {X.ndim}-D and "
                            f"{Y.ndim}-D")
        if X.shape[0] != Y.shape[0]:
            raise DataError(f"{where}: X has {X.shape[0]} rows but Y has {Y.shape[0]}")
        features = tuple(str(f) for f in self.feature_names)
        labels = tuple(str(lab) for lab in self.label_names)
        if len(features) != X.shape[1]:
            raise DataError(f"{where}: {len(features)} feature names for {X.shape[1]} columns")
        if len(labels) != (1 if Y.ndim == 1 else Y.shape[1]):
            raise DataError(f"{where}: {len(labels)} label names for {1 if Y.ndim == 1 else Y.shape[1]} target "
                            "column(s)")
        cats = tuple(sorted({int(i) for i in self.categorical_features}))
        if cats and (cats[0] < 0 or cats[-1] >= X.shape[1]):
            raise DataError(f"{where}: categorical feature index out of range 0..{X.shape[1] - 1}")
        categories = {int(k): tuple(str(v) for v in vals) for k, vals in dict(self.categories).items()}
        if not set(categories) <= set(cats):
            extra = sorted(set(categories) - set(cats))
            raise DataError(f"{where}: categories given for non-categorical features {extra}")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Y", Y)
        object.__setattr__(self, "feature_names", features)
        object.__setattr__(self, "label_names", labels)
        object.__setattr__(self, "categorical_features", cats)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "dropped_features", tuple(self.dropped_features))
        object.__setattr__(self, "classes", classes)

    @property
    def task(self):
        """The problem type (:mod:`evaluation.task`): single-label for a class vector, else multi-label."""
        from ..task import MultiLabel, SingleLabel

        return SingleLabel(self.classes) if self.Y.ndim == 1 else MultiLabel(self.label_names)

    @property
    def n_instances(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Target columns: the labels of multi-label data, 1 (the class) for single-label data."""
        return 1 if self.Y.ndim == 1 else int(self.Y.shape[1])

    @property
    def label_cardinality(self) -> float:
        """Mean number of positive labels per instance (1 for single-label data)."""
        if self.Y.ndim == 1:
            return 1.0
        return float(self.Y.sum(axis=1).mean()) if self.n_instances else 0.0

    @property
    def label_density(self) -> float:
        """Label cardinality divided by the number of labels."""
        return self.label_cardinality / self.n_labels if self.n_labels else 0.0

    @property
    def meta(self) -> DatasetMeta:
        """The (L, M, N) the grammar bounds depend on; L is the number of classes for single-label data."""
        return DatasetMeta(self.task.n_targets, self.n_features, self.n_instances)

    def subset(self, rows: Sequence[int] | np.ndarray, name: str | None = None) -> Dataset:
        """The dataset restricted to ``rows`` (indices or a boolean mask), same columns."""
        idx = np.asarray(rows)
        return Dataset(self.X[idx], self.Y[idx], self.feature_names, self.label_names, self.categorical_features,
                       name or self.name, self.source, self.categories, self.dropped_features, self.classes)

    def labelled(self) -> Dataset:
        """The rows whose every target is known (the dataset itself when all are)."""
        mask = self.task.labelled(self.Y)
        return self if mask.all() else self.subset(np.flatnonzero(mask))

    def __repr__(self) -> str:
        targets = (f"{len(self.classes)} classes" if self.Y.ndim == 1
                   else f"q={self.n_labels}, card={self.label_cardinality:.3f}")
        return (f"Dataset({self.name!r}: n={self.n_instances}, m={self.n_features} "
                f"({len(self.categorical_features)} categorical), {targets})")

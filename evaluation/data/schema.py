"""The training data's columns, by name and type: :class:`FeatureSchema`, and new data aligned to it.

Why a module of its own: a model is a function of column *positions* and category *codes*, but people
hand it files and data frames whose columns are named. A CSV with the training columns in another order,
or a nominal column whose values are coded in another order (a file's codes are its own sorted values or
its own ARFF declaration), would give predictions for swapped features without a word (issue 24: a UCI
set's accuracy fell from 0.96 to 0.36). So wherever a model meets new data — ``predict``, ``evolve
--test`` (:func:`~.dispatch.load_split`), the estimators — the new columns are put in the training order
by name and their category codes re-mapped to the training codes; different names are refused with the
missing and the unexpected ones, text where the training column held numbers with the column's name. Data
without names (a bare array) can only be checked by its shape, as scikit-learn does with
``feature_names_in_``.

A category value the training data never had becomes missing (NaN), which every model imputes, as in
:func:`~.dispatch.load_split`: the value is of the right type, only unseen.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ggp_automl.gp.errors import DataError

from .dataset import Dataset

__all__ = ["FeatureSchema"]

#: how many names a message lists
_SHOWN = 5


def _listed(names) -> str:
    names = list(names)
    more = f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else ""
    return ", ".join(repr(n) for n in names[:_SHOWN]) + more


def _number_text(value: float) -> str:
    """How a number read from a file would be written as a category value (``1.0`` -> ``1``)."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


@dataclass(frozen=True)
class FeatureSchema:
    """The names of the training features in their order, the values of the nominal ones (by name;
    code ``i`` of a nominal feature is ``nominal[name][i]``), and the identifier columns the training data
    dropped (rule 5 of :mod:`evaluation.data`; new data may hold them, and they are left out again)."""

    names: tuple[str, ...]
    nominal: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    dropped: tuple[str, ...] = ()

    @classmethod
    def of(cls, data: Dataset) -> "FeatureSchema":
        return cls(tuple(data.feature_names),
                   {data.feature_names[j]: tuple(data.categories.get(j, ())) for j in data.categorical_features},
                   tuple(data.dropped_features))

    # -- the record in config.json -------------------------------------------------------------------------
    def record(self) -> dict:
        return {"names": list(self.names), "nominal": {name: list(values) for name, values in self.nominal.items()},
                "dropped": list(self.dropped)}

    @classmethod
    def from_record(cls, record) -> "FeatureSchema":
        """The schema a ``record()`` wrote; ValueError (saying what is wrong) for anything else."""
        if not isinstance(record, dict):
            raise ValueError("the training features are not a JSON object")
        names, nominal, dropped = record.get("names"), record.get("nominal", {}), record.get("dropped", [])
        if not isinstance(names, list) or not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
            raise ValueError("the training feature names are not a list of distinct strings")
        if not isinstance(nominal, dict) or not all(
                k in names and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in nominal.items()):
            raise ValueError("the training features' nominal values are not lists of strings of named features")
        if not isinstance(dropped, list) or not all(isinstance(n, str) for n in dropped):
            raise ValueError("the training data's dropped identifier columns are not a list of strings")
        return cls(tuple(names), {k: tuple(v) for k, v in nominal.items()}, tuple(dropped))

    # -- new data ------------------------------------------------------------------------------------------
    def numeric(self) -> tuple[str, ...]:
        """The features that held numbers in training (a loader given them says where text is, by line)."""
        return tuple(n for n in self.names if n not in self.nominal)

    def align(self, data: Dataset, where: str, trained_on: str = "the training data") -> Dataset:
        """``data`` with the training features in the training order and the training category codes.

        DataError when the names differ (the missing and the unexpected ones are named) or a feature that
        held numbers in training holds text."""
        have = tuple(data.feature_names)
        X = self._aligned(data.X, have, {j: data.categories.get(j, ()) for j in data.categorical_features},
                          where, trained_on)
        names = list(self.names)
        return Dataset(X, data.Y, self.names, data.label_names, tuple(names.index(n) for n in self.nominal),
                       data.name, data.source, {names.index(n): v for n, v in self.nominal.items()},
                       tuple(n for n in have if n in self.dropped), data.classes)

    def align_arrays(self, X, where: str, trained_on: str = "the data given to fit") -> np.ndarray:
        """New rows for an estimator (a DataFrame, an array or a sparse matrix) as the float matrix the
        model was fitted on: columns by name when ``X`` has names, else by position (the count must match),
        and category codes by value either way."""
        from ._arrays import _features_from

        values, names, categories = _features_from(X, where)
        if names is None:
            if values.shape[1] != len(self.names):
                raise DataError(f"{where}: {values.shape[1]} features, but the model was fitted on "
                                f"{len(self.names)}")
            names = list(self.names)
        return self._aligned(values, tuple(names), categories, where, trained_on)

    def _aligned(self, values: np.ndarray, have: tuple[str, ...], categories: Mapping[int, tuple[str, ...]],
                 where: str, trained_on: str) -> np.ndarray:
        missing = [n for n in self.names if n not in have]
        unexpected = [n for n in have if n not in self.names and n not in self.dropped]
        if missing or unexpected:
            parts = ([f"missing {_listed(missing)}"] if missing else []) + \
                    ([f"unexpected {_listed(unexpected)}"] if unexpected else [])
            raise DataError(f"{where}: its features do not match those of {trained_on} ({'; '.join(parts)}); "
                            "columns are matched by name")
        order = [have.index(n) for n in self.names]
        X = np.array(values[:, order], dtype=np.float64)
        for j, name in enumerate(self.names):
            k = order[j]
            known = categories.get(k)
            if name not in self.nominal:
                if known is not None:
                    shown = next((known[int(c)] for c in values[:, k] if not np.isnan(c)), "")
                    raise DataError(f"{where}: column '{name}' holds text ('{shown[:40]}'), but {trained_on} held "
                                    "numbers in it")
                continue
            want = {v: i for i, v in enumerate(self.nominal[name])}
            col = X[:, j]
            present = ~np.isnan(col)
            if known is None:  # numbers where training had values: the same values written as numbers
                X[present, j] = [want.get(_number_text(v), np.nan) for v in col[present]]
            elif tuple(known) != self.nominal[name]:
                lut = np.array([want.get(v, np.nan) for v in known], dtype=np.float64)
                X[present, j] = lut[col[present].astype(np.int64)]
        return X

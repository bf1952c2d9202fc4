"""Converting in-memory inputs (numpy, pandas, scipy.sparse) to float features and 0/1 labels.

Why a module of its own: :func:`evaluation.data.arrays.from_arrays` accepts whatever a
scikit-learn user passes to ``fit``; recognising DataFrames, Series and sparse matrices by
their attributes (without importing pandas or scipy) and coding object and ``category``
columns is kept apart from building the Dataset.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ggp_automl.gp.errors import DataError


def _is_frame(obj: Any) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "dtypes") and hasattr(obj, "iloc")


def _is_series(obj: Any) -> bool:
    return hasattr(obj, "dtype") and hasattr(obj, "index") and hasattr(obj, "to_numpy") and not _is_frame(obj)


def _column_from_objects(values: np.ndarray, null: np.ndarray) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """A column of Python objects: numeric if every non-null value is a number, else nominal codes."""
    present = values[~null]
    out = np.full(len(values), np.nan)
    try:
        out[~null] = [float(v) for v in present]
        return out, None
    except (TypeError, ValueError):
        pass
    cats = tuple(sorted({str(v) for v in present}))
    lookup = {c: i for i, c in enumerate(cats)}
    out[~null] = [lookup[str(v)] for v in present]
    return out, cats


def _object_null(values: np.ndarray) -> np.ndarray:
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) or type(v).__name__ in ("NAType", "NaTType")
                     for v in values], dtype=bool)


def _features_from(X: Any, where: str) -> tuple[np.ndarray, list[str] | None, dict[int, tuple[str, ...]]]:
    """Features as float with nominal columns coded; returns (X, column names or None, categories)."""
    if hasattr(X, "toarray") and hasattr(X, "nnz"):            # scipy.sparse
        X = X.toarray()
    if _is_frame(X):
        names = [str(c) for c in X.columns]
        cols, categories = [], {}
        for j, col in enumerate(X.columns):
            s = X[col]
            if str(s.dtype) == "category":
                codes = s.cat.codes.to_numpy().astype(np.float64)
                codes[codes < 0] = np.nan
                cols.append(codes)
                categories[j] = tuple(str(c) for c in s.cat.categories)
            elif getattr(s.dtype, "kind", "O") in "biuf":
                cols.append(s.to_numpy(dtype=np.float64, na_value=np.nan))
            else:
                values = s.to_numpy(dtype=object)
                out, cats = _column_from_objects(values, np.asarray(s.isna().to_numpy(), dtype=bool))
                cols.append(out)
                if cats is not None:
                    categories[j] = cats
        arr = np.column_stack(cols) if cols else np.empty((len(X), 0))
        return arr, names, categories
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise DataError(f"{where}: X must be 2-D (n_instances × n_features), got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64), None, {}
    cols, categories = [], {}
    for j in range(arr.shape[1]):
        values = arr[:, j].astype(object)
        out, cats = _column_from_objects(values, _object_null(values))
        cols.append(out)
        if cats is not None:
            categories[j] = cats
    return (np.column_stack(cols) if cols else np.empty((arr.shape[0], 0))), None, categories


def _labels_from(Y: Any, where: str) -> tuple[np.ndarray, list[str] | None]:
    if hasattr(Y, "toarray") and hasattr(Y, "nnz"):
        Y = Y.toarray()
    names = None
    if _is_frame(Y):
        names = [str(c) for c in Y.columns]
        columns = [Y[c].to_numpy(dtype=object) for c in Y.columns]
        Y = np.column_stack(columns) if columns else np.empty((len(Y), 0))
    elif _is_series(Y):
        names = [str(Y.name)] if Y.name is not None else None
        Y = Y.to_numpy(dtype=object)
    arr = np.asarray(Y)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"{where}: Y must be 2-D (n_instances × n_labels), got shape {arr.shape}")
    if arr.dtype.kind == "b":
        return arr.astype(np.int8), names
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{where}: labels must be 0 or 1 (found non-numeric values)") from None
    bad = np.argwhere(~np.isin(num, (0.0, 1.0)))
    if bad.size:
        r, c = bad[0]
        value = arr[r, c].item() if hasattr(arr[r, c], "item") else arr[r, c]
        label = repr(names[c]) if names else str(c)
        raise DataError(f"{where}: label column {label} has value {value!r} in row {r}; labels must be 0 or 1")
    return num.astype(np.int8), names

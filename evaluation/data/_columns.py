"""From a matrix of internal values to a :class:`Dataset`, by the role of each column.

Why a module of its own: every loader (ARFF, CSV, OpenML) ends the same way. It describes
its columns as :class:`_Attribute` (name, kind, declared values), holds the values as numbers
or nominal codes, and names the target columns; :func:`_assemble` then applies the rules of
:mod:`evaluation.data` that do not depend on the format, in one place: label order (rule 2),
0/1 labels (rule 4), identifier columns (rule 5, :data:`ID_MIN_ROWS`) and finite features
(rule 8).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ggp_automl.gp.errors import DataError

from ..targets import class_column
from .dataset import Dataset, refuse_non_finite

#: The distinct-value-per-row rule for identifier columns needs at least this many rows,
#: so that a small test file does not lose a genuine categorical feature by chance.
ID_MIN_ROWS = 20

_ID_NAME = re.compile(r"^(?:id|ids|identifier|uid|uuid|guid)$|[_\-\s.](?:id|uid|uuid|identifier)$", re.IGNORECASE)
_CAMEL_ID = re.compile(r"[a-z0-9](?:Id|ID)$")
_TRUE_FALSE = {"0": 0, "1": 1, "false": 0, "true": 1}


@dataclass
class _Attribute:
    name: str
    kind: str                      # numeric | nominal | string | date
    values: tuple[str, ...] = ()   # nominal: declared values; string: filled from the data
    line: int = 0


def _looks_like_id(name: str, kind: str, n_declared: int, n_rows: int, codes: Callable[[], np.ndarray]) -> bool:
    """Rule 5: an identifier-like name (with more than two distinct values, so a bag-of-words
    feature called ``id`` survives), or a different value on every one of at least
    :data:`ID_MIN_ROWS` rows. ``codes`` is called only when needed: a nominal attribute
    declaring fewer values than there are rows cannot be distinct per row."""
    named = bool(_ID_NAME.search(name.strip()) or _CAMEL_ID.search(name.strip()))
    could_be_unique = n_rows >= ID_MIN_ROWS and (kind == "string" or n_declared >= n_rows)
    if not (named or could_be_unique):
        return False
    values = codes()
    present = values[~np.isnan(values)]
    distinct = len(np.unique(present))
    if named and distinct > 2:
        return True
    return could_be_unique and present.size == n_rows and distinct == n_rows


def _label_column(values: np.ndarray, attr: _Attribute, where: str, line_of: np.ndarray,
                  unlabelled: bool = False) -> np.ndarray:
    """A label attribute's internal values (numbers or nominal codes) as 0/1, or a DataError.

    ``unlabelled``: a missing value ('?') is -1 (data to predict) instead of an error."""
    if unlabelled and np.isnan(values).any():
        known = ~np.isnan(values)
        out = np.full(len(values), -1, dtype=np.int8)
        out[known] = _label_column(values[known], attr, where, line_of[known])
        return out
    if np.isnan(values).any():
        row = int(np.flatnonzero(np.isnan(values))[0])
        raise DataError(f"{where}:{line_of[row]}: label '{attr.name}' is missing ('?'); labels must be 0 or 1")
    if attr.kind in ("nominal", "string"):
        lut = np.array([_TRUE_FALSE.get(v.strip().lower(), -1) for v in attr.values], dtype=np.int64)
        codes = values.astype(np.int64)
        out = lut[codes] if len(lut) else np.full(len(codes), -1)
        bad = np.flatnonzero(out < 0)
        if bad.size:
            row = int(bad[0])
            raise DataError(f"{where}:{line_of[row]}: label '{attr.name}' has value {attr.values[codes[row]]!r}; "
                            "labels must be 0 or 1")
        return out.astype(np.int8)
    bad = np.flatnonzero((values != 0) & (values != 1))
    if bad.size:
        row = int(bad[0])
        raise DataError(f"{where}:{line_of[row]}: label '{attr.name}' has value {values[row]:g}; "
                        "labels must be 0 or 1")
    return values.astype(np.int8)


def _assemble(V: Any, attrs: list[_Attribute], label_idx: list[int], *, where: str, name: str,
              source: str, line_of: np.ndarray, drop_ids: bool, drop: Sequence[str] = (),
              single: bool = False, explicit: bool = True, unlabelled: bool = False) -> Dataset:
    """Build a Dataset from the internal value matrix (numbers / nominal codes), by column roles.

    ``V`` is a dense ndarray or a scipy CSC matrix (all-sparse ARFF). ``single``: the one target
    attribute is a class (:func:`evaluation.targets.class_column`; ``explicit`` whether the user
    named it); otherwise the targets are 0/1 labels (``unlabelled``: a missing label is -1).
    """
    dense = isinstance(V, np.ndarray)

    def column(a: int) -> np.ndarray:
        return V[:, a] if dense else V[:, [a]].toarray().ravel()

    n = V.shape[0]
    if n == 0:
        raise DataError(f"{where}: the dataset has no instances")
    if not label_idx:
        raise DataError(f"{where}: no labels found")
    label_set = set(label_idx)
    label_idx = sorted(label_set)                       # rule 2: ARFF column order
    classes: tuple[str, ...] = ()
    if single:
        a = label_idx[0]
        Y, classes = class_column(column(a), attrs[a].kind, attrs[a].values, attrs[a].name, where, line_of, explicit)
    else:
        Y = np.empty((n, len(label_idx)), dtype=np.int8)
        for k, a in enumerate(label_idx):
            Y[:, k] = _label_column(column(a), attrs[a], where, line_of, unlabelled)
    unknown_drop = set(drop) - {a.name for a in attrs}
    if unknown_drop:
        raise DataError(f"{where}: cannot drop unknown feature(s) {sorted(unknown_drop)}")
    keep: list[int] = []
    dropped: list[str] = []
    for a, attr in enumerate(attrs):
        if a in label_set:
            continue
        if attr.name in drop:
            dropped.append(attr.name)
            continue
        if drop_ids and attr.kind in ("nominal", "string") and _looks_like_id(
                attr.name, attr.kind, len(attr.values), n, lambda a=a: column(a)):
            dropped.append(attr.name)
            continue
        keep.append(a)
    if not keep:
        raise DataError(f"{where}: no features left (all {len(attrs)} attributes are labels or identifiers)")
    if not dense:
        X = V[:, keep].toarray()
    elif keep == list(range(keep[0], keep[-1] + 1)):
        X = V[:, keep[0]:keep[-1] + 1].copy()                # a slice copies much faster than a gather
    else:
        X = np.take(V, keep, axis=1)
    refuse_non_finite(X, [attrs[a].name for a in keep], where, line_of)
    X.flags.writeable = False
    categorical = [j for j, a in enumerate(keep) if attrs[a].kind in ("nominal", "string")]
    categories = {j: attrs[keep[j]].values for j in categorical}
    return Dataset(X, Y, tuple(attrs[a].name for a in keep), tuple(attrs[a].name for a in label_idx),
                   tuple(categorical), name, source, categories, tuple(dropped), classes)

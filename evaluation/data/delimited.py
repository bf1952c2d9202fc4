"""Loading a delimited text file (CSV, TSV): :func:`load_csv`.

Why a module of its own: unlike ARFF, a CSV file declares neither types nor targets. The
caller names the targets, each column's type is inferred from its cells (numeric when every
present cell is a number, else nominal), and several spellings of "missing" are accepted.
(Named ``delimited`` rather than ``csv`` so that it never stands in for the standard library's
``csv`` module, which it uses.)
"""
from __future__ import annotations

import csv
import io
from collections.abc import Collection, Sequence
from pathlib import Path

import numpy as np

from ggp_automl.gp.errors import DataError

from ..targets import target_names, unknown_target
from ._columns import _assemble, _Attribute
from ._text import _codes, _read_text, _strip_suffixes, _to_float
from .dataset import Dataset

__all__ = ["load_csv"]

_MISSING_TOKENS = frozenset({"", "?", "na", "nan", "n/a", "null", "none"})


def load_csv(path: str | Path, label_columns: Sequence[str] | str | None = None, *,
             target: str | Sequence[str] | None = None, unlabelled: bool = False, delimiter: str | None = None,
             drop_ids: bool = True, drop: Sequence[str] = (), name: str | None = None,
             numeric: Collection[str] = ()) -> Dataset:
    """Load a CSV file with a header row. ``target`` names the class column (single-label) or the
    0/1 label columns (multi-label); ``label_columns`` always names 0/1 label columns.

    A column is numeric when every non-missing cell parses as a number, otherwise nominal
    (categories = its sorted distinct values). Missing: empty, ``?``, ``NA``, ``NaN``,
    ``null``, ``None`` (any case). ``delimiter`` defaults to ``,`` (``\\t`` for ``.tsv``).
    ``numeric`` names columns that must hold numbers (a model's numeric features): text in one is a
    DataError at its line.
    """
    p = Path(path)
    names = target_names(target)
    if names is None and label_columns is None:
        raise DataError(f"{p}: a CSV file does not say which columns are the targets: name the class column "
                        "(--target COLUMN) or the 0/1 label columns (--target A,B,C)")
    single = names is not None and len(names) == 1
    label_columns = names if names is not None else (
        [label_columns] if isinstance(label_columns, str) else list(label_columns))
    text = _read_text(p)
    if delimiter is None:
        delimiter = "\t" if ".tsv" in p.name.lower() else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    try:
        header = next(reader, None)
        while header is not None and not any(h.strip() for h in header):
            header = next(reader, None)
        if header is None:
            raise DataError(f"{p}: empty file (no header row)")
        header = [h.strip() for h in header]
        rows: list[list[str]] = []
        line_of: list[int] = []
        for row in reader:
            if not row or not any(c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise DataError(f"{p}:{reader.line_num}: {len(row)} fields, but the header has {len(header)}")
            rows.append([c.strip() for c in row])
            line_of.append(reader.line_num)
    except csv.Error as exc:
        raise DataError(f"{p}:{reader.line_num}: malformed CSV: {exc}") from None
    dup = {h for h in header if header.count(h) > 1}
    if dup:
        raise DataError(f"{p}:1: duplicate column name(s) {sorted(dup)}")
    missing = [c for c in label_columns if c not in header]
    if missing:
        raise unknown_target(missing[0], header, str(p))
    if not rows:
        raise DataError(f"{p}: the dataset has no instances")
    S = np.empty((len(rows), len(header)), dtype=object)
    S[:] = rows
    lines_arr = np.asarray(line_of, dtype=np.int64)
    attrs: list[_Attribute] = []
    V = np.empty(S.shape, dtype=np.float64)
    for j, col in enumerate(header):
        values, bad = _to_float(S[:, j], _MISSING_TOKENS, fold_case=True)
        if bad < 0:
            attrs.append(_Attribute(col, "numeric", (), 1))
            V[:, j] = values
            continue
        if col in numeric:
            raise DataError(f"{p}:{line_of[bad]}: column '{col}' holds text ('{str(S[bad, j])[:40]}'), but the "
                            "training data held numbers in it")
        distinct = np.unique(S[:, j]).tolist()
        missing_here = [t for t in distinct if t.lower() in _MISSING_TOKENS]
        present = [t for t in distinct if t.lower() not in _MISSING_TOKENS]
        V[:, j] = _codes(S[:, j], {v: i for i, v in enumerate(present)}, missing_here)[0]
        attrs.append(_Attribute(col, "nominal", tuple(present), 1))
    label_idx = [header.index(c) for c in label_columns]
    return _assemble(V, attrs, label_idx, where=str(p), name=name or _strip_suffixes(p), source=str(p),
                     line_of=lines_arr, drop_ids=drop_ids, drop=drop, single=single, unlabelled=unlabelled)

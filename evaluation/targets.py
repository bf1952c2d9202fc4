"""Which columns of a file are the targets, and single-label class columns.

Why a module of its own: the loaders (:mod:`evaluation.data`) read every format into one
value matrix; deciding which attributes are the targets — and so which task a file is
(:mod:`evaluation.task`) — is one rule for ARFF, CSV and OpenML:

* ``target`` names the targets: one name is a **single-label class**, several names are the
  0/1 **labels** of multi-label data (``--target class`` or ``--target a,b,c`` on the CLI);
* otherwise an ARFF file is multi-label when a MULAN ``.xml`` lies beside it or its relation
  name carries MEKA's ``-C q``, and single-label with its **last attribute** as the class
  otherwise (WEKA's convention). A CSV file has no such convention: it needs ``target``.

A class column is nominal (its declared values are the classes, in declaration order, as WEKA
numbers them) or a string attribute (its sorted distinct values). A numeric column is a class
only when it is named explicitly and every value is a whole number (``0, 1, 2`` in a CSV);
a column with fractional values is a regression target, which this project does not learn.
A missing class (``?``) is coded -1: such rows are left out of training and accepted by
``predict``.
"""
from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

from ggp_automl.gp.errors import DataError

__all__ = ["class_column", "target_names", "unknown_target"]

#: a whole-number class column with more distinct values than this is refused (an identifier or a count)
MAX_CLASSES = 1000


def target_names(target: str | Sequence[str] | None) -> list[str] | None:
    """``"a,b"`` or ``["a", "b"]`` → ``["a", "b"]``; None stays None."""
    if target is None:
        return None
    names = [t.strip() for t in target.split(",")] if isinstance(target, str) else [str(t).strip() for t in target]
    if not names or any(not n for n in names):
        raise DataError(f"--target needs attribute names separated by commas, got {target!r}")
    if len(set(names)) != len(names):
        raise DataError(f"--target names an attribute twice: {target!r}")
    return names


def unknown_target(name: str, known: Sequence[str], where: str) -> DataError:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.5)
    hint = f"did you mean {close[0]!r}?" if close else "its attributes are " + ", ".join(list(known)[:8]) + (
        ", …" if len(known) > 8 else "")
    return DataError(f"{where}: {name!r} is not an attribute of the file; {hint} (--target names the class or the "
                     "label attributes)")


def class_column(values: np.ndarray, kind: str, declared: Sequence[str], name: str, where: str,
                 line_of: np.ndarray, explicit: bool) -> tuple[np.ndarray, tuple[str, ...]]:
    """``(codes, classes)`` of a class attribute's internal values (nominal codes or numbers).

    ``kind`` is the attribute's type (nominal, string, numeric, date); ``declared`` its declared
    values; ``explicit`` whether the user named it (a numeric class is accepted only then).
    """
    missing = np.isnan(values)
    if kind in ("nominal", "string"):
        codes = np.where(missing, -1, np.nan_to_num(values, nan=-1)).astype(np.int64)
        if not declared:
            raise DataError(f"{where}: the class attribute '{name}' declares no values")
        return codes, tuple(declared)
    if kind != "numeric":
        raise DataError(f"{where}: the class attribute '{name}' is a {kind} attribute; a class must be nominal")
    if not explicit:
        raise DataError(f"{where}: the last attribute '{name}' is numeric, so it is not a class: declare it nominal "
                        "({a,b,…}), name the class with --target NAME, or mark multi-label data with a MULAN .xml "
                        "file or '-C q' in the relation name")
    present = values[~missing]
    fractional = np.flatnonzero(present != np.round(present))
    if fractional.size:
        row = int(np.flatnonzero(~missing)[fractional[0]])
        raise DataError(f"{where}:{line_of[row]}: the class '{name}' has the value {values[row]:g}: a numeric class "
                        "must hold whole numbers (fractional values are a regression target, which ggp-automl does "
                        "not learn)")
    distinct = np.unique(present)
    if distinct.size > MAX_CLASSES:
        raise DataError(f"{where}: the class '{name}' has {distinct.size:,} distinct values (more than "
                        f"{MAX_CLASSES:,}): is it an identifier or a count rather than a class?")
    codes = np.full(len(values), -1, dtype=np.int64)
    codes[~missing] = np.searchsorted(distinct, present)
    return codes, tuple(f"{v:.0f}" for v in distinct)

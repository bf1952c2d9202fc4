"""Loading an ARFF file: :func:`load_arff`.

Why a module of its own: ARFF is the format of the benchmark collection (MULAN with an XML
label file, MEKA with ``-C q``, Weka's single-label files), dense or sparse, possibly
compressed. This module strings the steps together — read the text, parse the header, find
the targets, parse the data, assemble — whose parts live in :mod:`._arff`, :mod:`._labels`
and :mod:`._columns`.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ggp_automl.gp.errors import DataError

from ._arff import _parse_data, _parse_header
from ._columns import _assemble
from ._labels import LabelSpec, _resolve_targets
from ._text import _read_text, _strip_suffixes
from .dataset import Dataset

__all__ = ["LabelSpec", "load_arff"]


def load_arff(path: str | Path, labels: LabelSpec = None, *, target: str | Sequence[str] | None = None,
              unlabelled: bool = False, drop_ids: bool = True, drop: Sequence[str] = (),
              name: str | None = None) -> Dataset:
    """Load an ARFF file, dense or sparse (also ``.gz``/``.bz2``/``.xz``): multi-label (MULAN ARFF + XML,
    MEKA ``-C q``) or single-label (a nominal class attribute, the last one by default).

    ``target``: the class attribute's name (single-label) or several label names (multi-label);
    see :mod:`evaluation.targets`. ``labels``: multi-label only — an ``int`` q with MEKA's meaning,
    a path to a MULAN XML file, or the label attribute names. ``unlabelled``: accept missing
    labels ('?', coded -1: data to predict); a missing class is always accepted. ``drop``: feature
    names to remove; ``drop_ids``: apply the identifier rule. See :mod:`evaluation.data`.
    """
    p = Path(path)
    text = _read_text(p)
    lines = text.split("\n")
    relation, attrs, data_start = _parse_header(lines, p)
    seen: dict[str, int] = {}
    for attr in attrs:
        if attr.name in seen:
            raise DataError(f"{p}:{attr.line}: attribute '{attr.name}' is declared twice "
                            f"(first on line {seen[attr.name]})")
        seen[attr.name] = attr.line
    label_idx, single, explicit = _resolve_targets(target, labels, attrs, relation, p)
    V, line_of = _parse_data(lines, data_start, attrs, p)
    return _assemble(V, attrs, label_idx, where=str(p), name=name or _strip_suffixes(p), source=str(p),
                     line_of=line_of, drop_ids=drop_ids, drop=drop, single=single, explicit=explicit,
                     unlabelled=unlabelled)

"""Which attributes are the targets (rule 1 of :mod:`evaluation.data`).

Why a module of its own: the answer has several sources, in order — a ``target=`` or
``labels=`` argument, a MULAN XML label file beside the ARFF (``name.xml``, or ``stem.xml``
for ``stem-train*.arff``), MEKA's ``-C q`` in the relation name, else the last attribute as
a class — and matching label names against the attributes (escaped or not, each once) is
shared with the OpenML loader.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ggp_automl.gp.errors import DataError

from ..targets import target_names, unknown_target
from ._columns import _Attribute
from ._text import _exists, _unescape

_MEKA_C = re.compile(r"-C\s+(-?[0-9]+)")
#: any ``-C`` option of a relation name, whatever follows it (a MEKA file's label count)
_MEKA_C_ANY = re.compile(r"(?:^|\s|')-C(?=\s|'|$)(?:\s+([^\s']+))?")


def _xml_beside(path: Path) -> Path | None:
    stem = path.name
    for suffix in (".gz", ".bz2", ".xz"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    stem = re.sub(r"\.arff$", "", stem, flags=re.IGNORECASE)
    base = re.sub(r"-(?:train|test)\d*$", "", stem, flags=re.IGNORECASE)
    for candidate in dict.fromkeys((stem, base)):
        xml = path.with_name(candidate + ".xml")
        if _exists(xml):
            return xml
    return None


def _xml_labels(xml: Path) -> list[str]:
    try:
        root = ET.parse(xml).getroot()
    except (ET.ParseError, OSError) as exc:
        raise DataError(f"{xml}: cannot read the MULAN label file: {exc}") from None
    names = [el.get("name") for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "label"]
    names = [n for n in names if n is not None]
    if not names:
        raise DataError(f"{xml}: no <label name=...> elements: not a MULAN label file")
    return names


def _labels_by_name(names: Sequence[str], attrs: list[_Attribute], where: str, what: str) -> list[int]:
    index = {a.name: i for i, a in enumerate(attrs)}
    out, missing = [], []
    for name in names:
        i = index.get(name, index.get(_unescape(name), index.get(name.strip())))
        (missing if i is None else out).append(name if i is None else i)
    if missing:
        raise DataError(f"{where}: {len(missing)} of the {len(names)} labels in {what} are not attributes of the "
                        f"data file, e.g. {missing[0]!r}; the label file does not match")
    if len(set(out)) != len(out):
        raise DataError(f"{where}: {what} names a label twice")
    return out


def _meka_labels(q: int, d: int, where: str) -> list[int]:
    if q == 0 or abs(q) >= d:
        raise DataError(f"{where}: -C {q} with {d} attributes; need 1 <= |q| < number of attributes")
    return list(range(q)) if q > 0 else list(range(d + q, d))


LabelSpec = int | str | Path | Sequence[str] | None


def _resolve_labels(labels: LabelSpec, attrs: list[_Attribute], relation: str, path: Path) -> list[int] | None:
    """The multi-label label columns by rule 1; None when the file names none (a single-label file)."""
    d = len(attrs)
    if isinstance(labels, bool):
        raise TypeError("labels must be an int (MEKA -C q), an XML path, or label names")
    if isinstance(labels, (int, np.integer)):
        return _meka_labels(int(labels), d, f"{path}")
    if isinstance(labels, Path) or (isinstance(labels, str) and labels.lower().endswith(".xml")):
        xml = Path(labels)
        if not _exists(xml):
            raise DataError(f"{xml}: no such label file")
        return _labels_by_name(_xml_labels(xml), attrs, f"{xml}", f"{xml.name} (for {path.name})")
    if isinstance(labels, str):
        labels = [labels]
    if labels is not None:
        return _labels_by_name(list(labels), attrs, f"{path}", "the labels argument")
    xml = _xml_beside(path)
    if xml is not None:                                   # rule 1: the XML overrides -C
        return _labels_by_name(_xml_labels(xml), attrs, f"{xml}", f"{xml.name} (for {path.name})")
    m = _MEKA_C.search(relation)
    if m is None:
        bad = _MEKA_C_ANY.search(relation)
        if bad is not None:  # a MEKA file whose label count is not a number: not a single-label file (issue 24)
            raise DataError(f"{path}: the relation name's -C {bad.group(1) or ''} is not a number of labels "
                            "(MEKA's -C q: the first q attributes are labels, or the last |q| for q < 0)")
        return None
    return _meka_labels(int(m.group(1)), d, f"{path}")


def _resolve_targets(target, labels: LabelSpec, attrs: list[_Attribute], relation: str, path: Path
                     ) -> tuple[list[int], bool, bool]:
    """``(target columns, single-label?, named by the user?)`` (:mod:`evaluation.targets`)."""
    names = target_names(target)
    if names is not None:
        index = {a.name: i for i, a in enumerate(attrs)}
        missing = [n for n in names if n not in index]
        if missing:
            raise unknown_target(missing[0], [a.name for a in attrs], str(path))
        return [index[n] for n in names], len(names) == 1, True
    label_idx = _resolve_labels(labels, attrs, relation, path)
    if label_idx is not None:
        return label_idx, False, True
    if len(attrs) < 2:
        raise DataError(f"{path}: one attribute only: nothing to learn from")
    return [len(attrs) - 1], True, False

"""Dataset meta-data (labels, features, instances) read from a file's header.

Grammar bounds depend only on these three numbers, so ``check`` and ``sample``
read them without loading the data: the ARFF header gives the attributes and the
data section is only counted. Labels come from a MULAN XML file beside the ARFF
(which takes precedence) or from MEKA's ``-C q`` in the relation name.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

from gp.binding import DatasetMeta
from gp.errors import DataError

_ATTRIBUTE = re.compile(r"@attribute\s+('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\S+)", re.IGNORECASE)
_MEKA_C = re.compile(r"-C\s+(-?\d+)")


def read_meta(path: str | Path) -> DatasetMeta:
    """L, M and N of a MULAN (ARFF + XML) or MEKA (``-C q``) ARFF file."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"{path}: no such file")
    if p.suffix.lower() != ".arff":
        raise DataError(f"{path}: unsupported format '{p.suffix}'; give an ARFF file (MULAN with its .xml, "
                        "or MEKA with '-C q' in the relation name)")
    relation, attributes, n_rows = _scan_arff(p)
    xml = _xml_for(p)
    if xml is not None:
        labels = _xml_labels(xml)
        names = set(attributes)
        missing = [lab for lab in labels if lab not in names]
        if missing:
            raise DataError(f"{xml}: {len(missing)} label(s) are not attributes of {p.name}, "
                            f"e.g. {missing[0]!r}")
        n_labels = len(labels)
    else:
        m = _MEKA_C.search(relation)
        if not m:
            raise DataError(f"{path}: no labels found: add a MULAN XML file '{p.with_suffix('.xml').name}' "
                            "or put '-C q' (q labels first) / '-C -q' (q labels last) in the relation name")
        n_labels = abs(int(m.group(1)))
    if n_labels == 0 or n_labels >= len(attributes):
        raise DataError(f"{path}: {n_labels} labels among {len(attributes)} attributes; need 1 ≤ labels < attributes")
    if n_rows == 0:
        raise DataError(f"{path}: the dataset has no instances")
    return DatasetMeta(n_labels, len(attributes) - n_labels, n_rows)


def _unquote(name: str) -> str:
    if len(name) >= 2 and name[0] == name[-1] and name[0] in "'\"":
        name = name[1:-1]
    return re.sub(r"\\(.)", r"\1", name)


def _scan_arff(p: Path) -> tuple[str, list[str], int]:
    relation, attributes, rows, in_data = "", [], 0, False
    try:
        with p.open(encoding="utf-8", errors="replace") as fh:
            for number, raw in enumerate(fh, start=1):
                line = raw.strip()
                if not line or line.startswith("%"):
                    continue
                if in_data:
                    rows += 1
                    continue
                low = line.lower()
                if low.startswith("@relation"):
                    relation = line[len("@relation"):].strip()
                elif low.startswith("@attribute"):
                    m = _ATTRIBUTE.match(line)
                    if not m:
                        raise DataError(f"{p}:{number}: malformed @attribute line")
                    attributes.append(_unquote(m.group(1)))
                elif low.startswith("@data"):
                    in_data = True
    except OSError as exc:
        raise DataError(f"{p}: cannot read: {exc.strerror}") from None
    if not in_data:
        raise DataError(f"{p}: not an ARFF file (no @data section)")
    return relation, attributes, rows


def _xml_for(p: Path) -> Path | None:
    candidates = [p.with_suffix(".xml")]
    stem = re.sub(r"-(train|test)$", "", p.stem)
    candidates.append(p.with_name(stem + ".xml"))
    return next((c for c in candidates if c.exists()), None)


def _xml_labels(xml: Path) -> list[str]:
    try:
        root = ET.parse(xml).getroot()
    except (ET.ParseError, OSError) as exc:
        raise DataError(f"{xml}: cannot read the MULAN label file: {exc}") from None
    labels = [el.get("name") for el in root.iter() if el.tag.split("}")[-1] == "label"]
    if not labels:
        raise DataError(f"{xml}: no <label name=…> elements")
    return [_unquote(x) for x in labels if x is not None]

"""Parsing an ARFF file: the header into attributes, the data section into a value matrix.

Why a module of its own: this is the bulk of the ARFF reader and the reason it is fast (see
:mod:`evaluation.data`): rows are tokenised with ``str`` methods, columns are converted in
blocks (all numeric attributes at once, nominal ones grouped by their declared values), and
an all-sparse file stays a scipy CSC matrix. :func:`evaluation.data.arff.load_arff` is its
public face; every malformed line is a DataError naming the file and line.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ggp_automl.gp.errors import DataError

from ._columns import _Attribute
from ._text import _codes, _split_quoted, _to_float, _unquote

_ATTR_NAME = re.compile(r"""\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s{]+)\s*(.*)$""", re.DOTALL)
_NUMERIC_TYPES = {"numeric", "real", "integer", "int", "float", "double"}


def _parse_attribute(line: str, path: Path, number: int) -> _Attribute:
    m = _ATTR_NAME.match(line, len("@attribute"))
    if m is None or not m.group(2).strip():
        raise DataError(f"{path}:{number}: malformed @attribute line (expected '@attribute <name> <type>')")
    name, spec = _unquote(m.group(1)), m.group(2).strip()
    low = spec.lower()
    if spec.startswith("{"):
        if not spec.endswith("}"):
            raise DataError(f"{path}:{number}: nominal attribute '{name}': missing closing '}}'")
        try:
            values = _split_quoted(spec[1:-1]) if spec[1:-1].strip() else []
        except ValueError as exc:
            raise DataError(f"{path}:{number}: nominal attribute '{name}': {exc}") from None
        values = [v.strip() for v in values]
        if len(set(values)) != len(values):
            raise DataError(f"{path}:{number}: nominal attribute '{name}' declares a value twice")
        return _Attribute(name, "nominal", tuple(values), number)
    kind = low.split()[0]
    if kind in _NUMERIC_TYPES:
        return _Attribute(name, "numeric", (), number)
    if kind == "string":
        return _Attribute(name, "string", (), number)
    if kind == "date":
        return _Attribute(name, "date", (), number)
    if kind == "relational":
        raise DataError(f"{path}:{number}: relational attribute '{name}' is not supported")
    raise DataError(f"{path}:{number}: attribute '{name}' has unknown type {spec.split()[0]!r}")


def _parse_header(lines: list[str], path: Path) -> tuple[str, list[_Attribute], int]:
    relation, attrs = "", []
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line[:10].lower()
        if low.startswith("@relation"):
            relation = _unquote(line[len("@relation"):].strip())
        elif low.startswith("@attribute"):
            attrs.append(_parse_attribute(line, path, i + 1))
        elif low.startswith("@data"):
            if not attrs:
                raise DataError(f"{path}:{i + 1}: @data before any @attribute")
            return relation, attrs, i + 1
        elif low.startswith("@end"):
            continue
        else:
            raise DataError(f"{path}:{i + 1}: unexpected line in the ARFF header: {line[:60]!r}")
    raise DataError(f"{path}: not an ARFF file (no @data section)")


_SPARSE_ENTRY = re.compile(r"""\s*(\S+)\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,]*?)\s*(?:,|$)""")


def _parse_data(lines: list[str], start: int, attrs: list[_Attribute], path: Path) -> tuple[Any, np.ndarray]:
    """The data section as an (n × d) matrix of internal values, and each row's line number.

    The matrix is a dense ndarray, or a scipy CSC matrix when every row is sparse (bibtex:
    the dense block is then built once, for the kept features only).
    """
    d = len(attrs)
    dense_rows: list[list[str]] = []
    dense_at: list[int] = []
    sp_idx: list[str] = []
    sp_val: list[str] = []
    sp_row: list[int] = []
    sp_count: list[int] = []
    line_of: list[int] = []
    for i in range(start, len(lines)):
        s = lines[i].strip()
        if not s or s[0] == "%":
            continue
        row = len(line_of)
        line_of.append(i + 1)
        if s[0] == "{":
            if not s.endswith("}"):
                raise DataError(f"{path}:{i + 1}: sparse row without a closing '}}'")
            inner = s[1:-1]
            if "'" in inner or '"' in inner:
                pairs = [(m.group(1), _unquote(m.group(2))) for m in _SPARSE_ENTRY.finditer(inner) if m.group(0)]
                toks = [t for p in pairs for t in p]
            else:
                toks = inner.replace(",", " ").split()
            if len(toks) % 2:
                raise DataError(f"{path}:{i + 1}: malformed sparse row (expected '{{index value, ...}}')")
            sp_idx.extend(toks[0::2])
            sp_val.extend(toks[1::2])
            sp_count.append(len(toks) // 2)
            sp_row.append(row)
        else:
            if "'" in s or '"' in s:
                try:
                    toks = [t.strip() for t in _split_quoted(s)]
                except ValueError as exc:
                    raise DataError(f"{path}:{i + 1}: {exc}") from None
            else:
                toks = s.replace(" ", "").replace("\t", "").split(",")
            if len(toks) == d + 1 and toks[-1].startswith("{") and toks[-1].endswith("}"):
                toks.pop()                                      # an instance weight {w}: ignored
            if len(toks) != d:
                raise DataError(f"{path}:{i + 1}: {len(toks)} values, but {d} attributes are declared")
            dense_rows.append(toks)
            dense_at.append(row)
    n = len(line_of)
    lines_arr = np.asarray(line_of, dtype=np.int64)
    V: Any = np.zeros((n, d), dtype=np.float64) if dense_rows else None
    # Columns are converted in blocks: all numeric attributes at once, and the nominal
    # attributes grouped by their declared values (genbase: 1185 × {YES,NO}; bibtex: 1995 × {0,1}).
    blocks: dict[tuple[str, ...] | None, list[int]] = {}
    for a, attr in enumerate(attrs):
        if attr.kind == "numeric":
            blocks.setdefault(None, []).append(a)
        elif attr.kind == "nominal":
            blocks.setdefault(attr.values, []).append(a)
    singles = [a for a, attr in enumerate(attrs) if attr.kind in ("string", "date")]
    if dense_rows:
        S = np.empty((len(dense_rows), d), dtype=object)
        S[:] = dense_rows
        rows = np.asarray(dense_at, dtype=np.int64)
        for values, cols in blocks.items():
            block = S[:, cols]
            out, bad = _block(block, values)
            if bad >= 0:
                r, c = divmod(bad, len(cols))
                _bad_value(path, lines_arr[rows[r]], attrs[cols[c]], block[r, c])
            V[np.ix_(rows, cols)] = out.reshape(len(rows), len(cols))
        for a in singles:
            V[rows, a] = _convert(S[:, a], attrs[a], path, lines_arr[rows])
    if sp_idx:
        entry_row = np.repeat(np.asarray(sp_row, dtype=np.int64), sp_count)
        try:
            cols = np.fromiter(map(int, sp_idx), dtype=np.int64, count=len(sp_idx))
        except (ValueError, OverflowError):
            bad = next(k for k, t in enumerate(sp_idx) if not _is_index(t))
            raise DataError(f"{path}:{lines_arr[entry_row[bad]]}: sparse index {sp_idx[bad]!r} "
                            f"is not an attribute number (0..{d - 1})") from None
        out_of_range = np.flatnonzero((cols < 0) | (cols >= d))
        if out_of_range.size:
            k = int(out_of_range[0])
            raise DataError(f"{path}:{lines_arr[entry_row[k]]}: sparse index {cols[k]} is out of range 0..{d - 1}")
        same_row = entry_row[1:] == entry_row[:-1]
        if np.any(same_row & (cols[1:] <= cols[:-1])):      # indices not increasing: look for a repeat
            keyed = entry_row * d + cols
            order = np.argsort(keyed, kind="stable")
            repeats = np.flatnonzero(np.diff(keyed[order]) == 0)
            if repeats.size:
                k = int(order[repeats[0] + 1])
                raise DataError(f"{path}:{lines_arr[entry_row[k]]}: sparse index {cols[k]} appears twice in the row")
        vals = np.empty(len(sp_val), dtype=object)
        vals[:] = sp_val
        entry_value = np.empty(len(vals), dtype=np.float64)
        group_of_attr = np.full(d, -1, dtype=np.int64)
        keys = list(blocks)
        for g, key in enumerate(keys):
            group_of_attr[blocks[key]] = g
        entry_group = group_of_attr[cols]
        for g, key in enumerate(keys):
            sel = np.flatnonzero(entry_group == g) if len(keys) > 1 or singles else np.arange(len(cols))
            if not sel.size:
                continue
            out, bad = _block(vals[sel], key)
            if bad >= 0:
                k = int(sel[bad])
                _bad_value(path, lines_arr[entry_row[k]], attrs[cols[k]], vals[k])
            entry_value[sel] = out
        for a in singles:
            sel = np.flatnonzero(cols == a)
            entry_value[sel] = _convert(vals[sel], attrs[a], path, lines_arr[entry_row[sel]])
        if V is None:          # all rows sparse: stay sparse until the feature block is densified
            from scipy import sparse
            V = sparse.csc_matrix((entry_value, (entry_row, cols)), shape=(n, d))
        else:
            V[entry_row, cols] = entry_value
    if V is None:
        V = np.zeros((n, d), dtype=np.float64)
    return V, lines_arr


def _is_index(token: str) -> bool:
    """Whether ``int`` reads ``token`` as a 64-bit integer (the test behind a failed bulk conversion)."""
    try:
        return -2**63 <= int(token) < 2**63
    except ValueError:
        return False


def _block(tokens: np.ndarray, values: tuple[str, ...] | None) -> tuple[np.ndarray, int]:
    """Numeric (``values is None``) or nominal tokens as internal values; see _to_float / _codes."""
    if values is None:
        return _to_float(tokens, ("?",))
    return _codes(tokens, {v: i for i, v in enumerate(values)}, ("?",))


def _bad_value(path: Path, line: int, attr: _Attribute, token: str) -> None:
    if attr.kind == "numeric":
        raise DataError(f"{path}:{line}: attribute '{attr.name}' is numeric but the value is {token!r}")
    shown = ", ".join(attr.values[:8]) + (", …" if len(attr.values) > 8 else "")
    raise DataError(f"{path}:{line}: value {token!r} is not declared for nominal attribute '{attr.name}' "
                    f"(declared: {{{shown}}})")


def _convert(tokens: np.ndarray, attr: _Attribute, path: Path, lines: np.ndarray) -> np.ndarray:
    """A string or date attribute's tokens as internal values (codes, or seconds since the epoch)."""
    if attr.kind == "string":
        present = sorted({str(t) for t in tokens} - {"?"})
        attr.values = tuple(present)
        return _codes(tokens, {v: i for i, v in enumerate(present)}, ("?",))[0]
    out = np.full(len(tokens), np.nan)
    for k, tok in enumerate(tokens):
        if tok == "?":
            continue
        try:
            out[k] = np.datetime64(str(tok).replace(" ", "T"), "s").astype(np.int64)
        except ValueError:
            raise DataError(f"{path}:{lines[k]}: date attribute '{attr.name}' has unreadable value {str(tok)!r} "
                            "(expected ISO-8601, e.g. 2001-04-03T12:12:12)") from None
    return out

"""Reading a data file as text, and the tokenising helpers the ARFF and CSV readers share.

Why a module of its own: both formats are text, possibly compressed, with quoted and escaped
values, and both turn columns of string tokens into numbers or nominal codes in bulk. What
a missing, unreadable or binary file looks like (a DataError naming it) is decided here
once, and so is the fast conversion (``map(float)`` over Python strings, with a per-token
loop only to find the first token that fails).
"""
from __future__ import annotations

import bz2
import gzip
import lzma
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np

from ggp_automl.gp.errors import DataError

_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


def _exists(path: Path) -> bool:
    """``path.exists()``, with a name the system cannot even look up (too long) as a DataError."""
    try:
        return path.exists()
    except OSError as exc:
        raise DataError(f"{str(path)[:80]}{'…' if len(str(path)) > 80 else ''}: cannot look the file up: "
                        f"{exc.strerror or exc}") from None


def _read_text(path: Path) -> str:
    if not _exists(path):
        raise DataError(f"{path}: no such file")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a data file")
    if not path.is_file():  # a pipe or a device (/dev/zero) would be read forever
        raise DataError(f"{path}: not a regular file (a device, pipe or socket); give a data file")
    opener = _COMPRESSED.get(path.suffix.lower())
    try:
        raw = opener(path, "rb").read() if opener else path.read_bytes()
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if b"\0" in raw[:4096]:
        raise DataError(f"{path}: not a text file (binary content)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _strip_suffixes(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".bz2", ".xz", ".arff", ".csv", ".tsv"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), s)


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return _unescape(s[1:-1])
    return s


_FIELD = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,'"]*?))\s*(,|$)""", re.DOTALL)


def _split_quoted(s: str) -> list[str]:
    """Comma-separated ARFF values, honouring '…' and "…" quoting with backslash escapes."""
    out: list[str] = []
    pos = 0
    while True:
        m = _FIELD.match(s, pos)
        if m is None:
            raise ValueError(f"unbalanced quote or stray quote character near column {pos + 1}")
        quoted = m.group(1) if m.group(1) is not None else m.group(2)
        out.append(_unescape(quoted) if quoted is not None else m.group(3))
        if m.group(4) == "":
            return out
        pos = m.end()


def _to_float(tokens: Sequence[str] | np.ndarray, missing: Iterable[str], fold_case: bool = False
              ) -> tuple[np.ndarray, int]:
    """Float conversion of string tokens (``missing`` tokens → NaN), flattened.

    Returns ``(values, -1)``, or ``(empty, i)`` where ``i`` is the flat index of the first
    token that is not a number. ``map(float)`` over Python strings is several times faster
    than numpy's unicode-array ``astype``; the per-token loop runs only when a token fails.
    """
    seq = tokens.ravel() if isinstance(tokens, np.ndarray) else tokens
    try:
        return np.fromiter(map(float, seq), dtype=np.float64, count=len(seq)), -1
    except ValueError:
        pass
    missing = frozenset(missing)
    out = np.empty(len(seq), dtype=np.float64)
    for i, tok in enumerate(seq):
        try:
            out[i] = float(tok)
        except ValueError:
            if (tok.strip().lower() if fold_case else tok) in missing:
                out[i] = np.nan
            else:
                return np.empty(0), i
    return out, -1


def _codes(tokens: Sequence[str] | np.ndarray, mapping: Mapping[str, int], missing: Iterable[str]
           ) -> tuple[np.ndarray, int]:
    """Map string tokens through ``mapping`` (``missing`` tokens → NaN), flattened.

    Returns ``(codes, -1)``, or ``(empty, i)`` for the flat index of the first unknown token.
    """
    seq = tokens.ravel() if isinstance(tokens, np.ndarray) else tokens
    try:
        return np.fromiter(map(mapping.__getitem__, seq), dtype=np.float64, count=len(seq)), -1
    except KeyError:
        pass
    full: dict[str, float] = {k: float(v) for k, v in mapping.items()}
    full.update({m: np.nan for m in missing})
    out = np.empty(len(seq), dtype=np.float64)
    for i, tok in enumerate(seq):
        value = full.get(tok)
        if value is None:
            return np.empty(0), i
        out[i] = value
    return out, -1

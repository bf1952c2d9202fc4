"""Reading a run directory that may be damaged: what is usable, and what is not and why.

Why: ``inspect`` must work on whatever is readable — a run killed mid-write, a disk that
filled up, a file someone edited or truncated — and say which file is damaged and what can
still be done, instead of failing on the first odd value. So every value read from a run
directory passes through here: JSON objects with the reason they cannot be used, evaluation
records with each field coerced to the type the report expects (a wrong one becomes
"unknown", never an exception), and a byte-level look at ``checkpoint.pkl`` (the report
never unpickles: that needs this program's classes and trusts the file).
"""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Optional

#: where a checkpoint's pickle names its class: protocol 4+ writes the module and the class name
#: in its first bytes (``search/rundir.py`` writes ``SearchState`` with the highest protocol); the class
#: lived in ``search.loop`` before ``search.state``, and a checkpoint of either version resumes
_CHECKPOINT_MODULES = (b"ggp_automl.search.state", b"ggp_automl.search.loop")
_CHECKPOINT_CLASS = b"SearchState"


def finite(value: Any) -> Optional[float]:
    """``value`` as a finite float, or None (also for bools, which are not numbers in a record)."""
    if isinstance(value, bool):
        return None
    try:
        x = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return x if math.isfinite(x) else None


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def json_object(path: Path) -> tuple[Optional[dict], Optional[str]]:
    """(the JSON object in ``path``, None) or (None, why it cannot be used); (None, None) when missing."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except UnicodeDecodeError:
        return None, "not UTF-8 text"
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if not text.strip():
        return None, "empty"
    try:
        value = json.loads(text)
    except ValueError as exc:
        return None, f"not valid JSON: {exc}"
    if not isinstance(value, dict):
        return None, f"a JSON {type(value).__name__}, not an object"
    return value, None


def _key(value: Any) -> Any:
    """A species or generation id as a hashable, comparable-with-its-kind value (or None)."""
    if value is None or isinstance(value, (str, int)) and not isinstance(value, bool):
        return value
    return str(value)


def clean_evaluation(record: dict) -> dict:
    """An evaluation record with every field the report reads of the type it expects."""
    rec = dict(record)
    n = rec.get("n")
    rec["n"] = n if type(n) is int else None
    rec["phenotype"] = str(rec.get("phenotype", ""))
    rec["status"] = str(rec.get("status"))
    rec["phase"] = str(rec.get("phase", "search"))
    rec["fitness"] = finite(rec.get("fitness"))
    rec["measures"] = {str(k): v for k, v in as_dict(rec.get("measures")).items()}
    rec["species"] = _key(rec.get("species"))
    rec["generation"] = _key(rec.get("generation"))
    for name in ("time", "fit_time", "limit", "level"):
        rec[name] = finite(rec.get(name))
    return rec


def checkpoint_problem(path: Path) -> Optional[str]:
    """Why ``checkpoint.pkl`` cannot be a checkpoint of this program, from its bytes; None if it may be."""
    try:
        size = path.stat().st_size
        with path.open("rb") as f:
            head = f.read(64)
            f.seek(max(size - 1, 0))
            tail = f.read(1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"unreadable: {exc.strerror or exc}"
    if size == 0:
        return "empty"
    if head[:1] != b"\x80":
        return "not a pickle"
    if _CHECKPOINT_CLASS not in head or not any(module in head for module in _CHECKPOINT_MODULES):
        return "a pickle of something else than a search state"
    if tail != b".":
        return "truncated pickle"
    return None

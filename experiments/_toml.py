"""Writing the small TOML files the portfolio builder derives from an experiment file.

Why by hand: the standard library reads TOML (``tomllib``) but does not write it, and the files written
here hold only tables of strings, numbers, booleans, lists and inline tables — not worth a dependency.
"""
from __future__ import annotations

import json
import math
import re

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def key(name: str) -> str:
    """A key as TOML writes it: bare when it may be (``Flags``), else quoted (``"wine-quality.1"``)."""
    return name if _BARE.match(name) else json.dumps(name)


def value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if not math.isfinite(v):
            raise ValueError(f"TOML has no {v}")
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # JSON's escapes are TOML basic-string escapes
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{key(k)} = {value(x)}" for k, x in v.items()) + " }" if v else "{}"
    raise TypeError(f"cannot write a {type(v).__name__} as TOML")


def dumps(doc: dict, comment: str = "") -> str:
    """``{table: {key: value}}`` and ``{table: {name: {key: value}}}`` (``[datasets.Flags]``) as TOML text."""
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    for table, content in doc.items():
        nested = {k: v for k, v in content.items() if isinstance(v, dict) and table in ("datasets", "methods")}
        plain = {k: v for k, v in content.items() if k not in nested}
        if plain or not nested:
            lines += ["", f"[{key(table)}]"] + [f"{key(k)} = {value(v)}" for k, v in plain.items()]
        for name, sub in nested.items():
            lines += ["", f"[{key(table)}.{key(name)}]"] + [f"{key(k)} = {value(v)}" for k, v in sub.items()]
    return "\n".join(lines).lstrip("\n") + "\n"

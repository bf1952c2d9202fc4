"""Where the shipped grammars are, and finding one by name.

Why: the grammars are the search space, so they ship inside the package (``grammars/`` beside ``gp/``
in the checkout, ``ggp_automl/grammars/`` when installed). A user outside the checkout writes
``--grammar large.bnf`` (or the checkout's ``grammars/large.bnf``) and means the shipped file; a path
that exists always wins, so a grammar of one's own with the same name is never shadowed.
"""
from __future__ import annotations

from pathlib import Path

#: the folder of the shipped grammars (and their species) in the checkout and in the installed package
SHIPPED_GRAMMARS = Path(__file__).resolve().parents[1] / "grammars"
#: the search space when none is named: the Auto-MEKA Large space
DEFAULT_GRAMMAR = SHIPPED_GRAMMARS / "large.bnf"


def shipped_grammar(name: str) -> Path | None:
    """The shipped grammar a name means (``large``, ``large.bnf``, ``grammars/large.bnf``,
    ``species/large-1.bnf``), or None when it names none."""
    parts = Path(name).parts
    if parts[:1] == ("grammars",):
        parts = parts[1:]
    if not parts or any(p in ("..", ".") for p in parts):
        return None
    candidate = SHIPPED_GRAMMARS.joinpath(*parts)
    if candidate.suffix != ".bnf":
        candidate = candidate.with_name(candidate.name + ".bnf")
    return candidate if candidate.is_file() else None


def locate_grammar(path: str | Path) -> Path:
    """``path`` itself when it exists (or names no shipped grammar), else the shipped grammar of that name."""
    given = Path(path)
    if given.exists():
        return given
    return shipped_grammar(str(path)) or given

"""User-facing errors with source positions.

Every problem a user can fix in a grammar file is reported as a :class:`Diagnostic`
carrying ``file:line:col``, a one-line reason and the offending line with a caret,
so the CLI can print it and exit non-zero instead of showing a Python traceback.
"""
from __future__ import annotations

from dataclasses import dataclass

#: Characters of a source line shown under a diagnostic.
_SHOWN = 120


def shorten(text: str, width: int = 60) -> str:
    """A user's token or expression for a message: a 1 MB terminal is shown by its start."""
    return text if len(text) <= width else text[:width - 1] + "…"


@dataclass(frozen=True)
class SourceLocation:
    """A position in a grammar file (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Diagnostic:
    """One error or warning about a grammar, with the line it points at."""

    location: SourceLocation | None
    message: str
    severity: str = "error"  # "error" | "warning"
    source_line: str | None = None

    def render(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.severity}: {self.message}"
        if self.source_line is not None and self.location is not None:
            line = self.source_line.rstrip("\n").expandtabs(1)
            column = max(self.location.column - 1, 0)
            if len(line) > _SHOWN:  # a window around the column of a very long line
                first = max(0, min(column - _SHOWN // 2, len(line) - _SHOWN))
                tail = "…" if first + _SHOWN < len(line) else ""
                line = ("…" if first else "") + line[first:first + _SHOWN] + tail
                column = column - first + (1 if first else 0)
            text += f"\n    {line}\n    {' ' * column}^"
        return text


class InputError(Exception):
    """What the user gave cannot be used — a file, a run directory, a cluster address, a plug-in — and
    the message says which and why. Every such error of the layers above derives from it too, so that
    the command line (which prints the message and exits 1) need not import those layers to catch them."""


class GrammarError(Exception):
    """A grammar file that cannot be used; holds one or more diagnostics."""

    def __init__(self, diagnostics: list[Diagnostic]):
        self.diagnostics = list(diagnostics)
        super().__init__("\n".join(d.render() for d in self.diagnostics))


class BindingError(GrammarError):
    """A grammar whose bounds are invalid for a particular dataset (e.g. lo > hi)."""


class PhenotypeError(ValueError):
    """A phenotype string that does not derive (uniquely) from a grammar."""


class DataError(InputError, ValueError):
    """A dataset file that cannot be read; the message names the file (and line)."""


class SourceText:
    """The text of a grammar file, able to turn offsets into diagnostics."""

    def __init__(self, text: str, filename: str):
        self.text = text
        self.filename = filename
        # Lines as Lark counts them: only "\n" ends one (str.splitlines also splits at
        # form feeds and U+2028, which would shift every later line of a diagnostic).
        self.lines = text.split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()

    def location(self, line: int, column: int) -> SourceLocation:
        return SourceLocation(self.filename, line, column)

    def diagnostic(self, line: int, column: int, message: str, severity: str = "error") -> Diagnostic:
        source = self.lines[line - 1] if 0 < line <= len(self.lines) else None
        return Diagnostic(self.location(line, column), message, severity, source)

    def at(self, loc: SourceLocation | None, message: str, severity: str = "error") -> Diagnostic:
        if loc is None:
            return Diagnostic(None, message, severity)
        return self.diagnostic(loc.line, loc.column, message, severity)

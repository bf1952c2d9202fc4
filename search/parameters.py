"""Parameters a search method declares for itself (SMAC3's rule: each optimiser owns its own).

Why: a new method or sampling policy must be one file. Its parameters — PBIL's learning
rate, selection share and population, say — are declared on the method class as
:class:`Parameter` objects; from there, and with no edit anywhere else, they

* become command-line options of ``cli.py evolve`` (``--learning-rate 0.3``; an option that
  already exists, such as ``--population``, is passed on to a method that declares it),
* are checked and stored in :attr:`ggp_automl.search.config.RunConfig.method_params` and so in the
  run directory's ``config.json``, from which a resumed run reads them back,
* are accepted by the Python API (``GrammarAutoML(method="pbil", method_params={...})``),
* reach the method as ``self.params`` (declared defaults filled in).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

__all__ = ["Parameter", "RESHUFFLE", "check_params", "resolve_params"]

_TYPES = {int: "a whole number", float: "a number", bool: "true or false", str: "a word"}


@dataclass(frozen=True)
class Parameter:
    """One parameter of a search method: its name (``--name-with-dashes`` on the CLI), type,
    default, one line of help, and the values it accepts (inclusive bounds, or choices)."""

    name: str
    type: type
    default: Any
    help: str
    low: float | None = None
    high: float | None = None
    choices: tuple | None = None

    @property
    def option(self) -> str:
        return "--" + self.name.replace("_", "-")

    def problem(self, value: Any) -> str | None:
        """Why ``value`` is not acceptable, or None."""
        want = self.type
        if want is tuple:  # a list of values (spGGP's species); the method checks its members
            if not isinstance(value, (list, tuple)) or not value:
                return f"{self.name} must be a non-empty list, got {value!r:.60}"
            return None
        if want is bool:
            ok_type = isinstance(value, bool)
        elif want in (int, float):
            ok_type = isinstance(value, (int, float) if want is float else int) and not isinstance(value, bool)
        else:
            ok_type = isinstance(value, want)
        if not ok_type:
            return f"{self.name} must be {_TYPES.get(want, want.__name__)}, got {value!r}"
        if want in (int, float):
            if not math.isfinite(value):
                return f"{self.name} must be finite, got {value!r}"
            if self.low is not None and value < self.low or self.high is not None and value > self.high:
                return f"{self.name} must be in [{self.low:g}, {self.high:g}], got {value:g}"
        if self.choices is not None and value not in self.choices:
            return f"{self.name} must be one of {', '.join(map(str, self.choices))}, got {value!r}"
        return None

    def parse(self, text: str) -> Any:
        """A command-line value; ValueError with a message when it is not one."""
        try:
            if self.type is bool:
                if text.lower() not in ("on", "off", "true", "false", "1", "0", "yes", "no"):
                    raise ValueError
                value: Any = text.lower() in ("on", "true", "1", "yes")
            else:
                value = self.type(text)
        except ValueError:
            raise ValueError(f"expected {_TYPES.get(self.type, self.type.__name__)}, got {text!r}") from None
        problem = self.problem(value)
        if problem:
            raise ValueError(problem)
        return value


#: The BO thesis's first remedy for overfitting the validation data (001 §3.1, notes
#: bo-and-ensembles.md §2.1), declared by every method it makes sense for; the loop reads it
#: through :attr:`ggp_automl.search.methods.base.SearchMethod.resample_period`.
RESHUFFLE = Parameter(
    "reshuffle", bool, False,
    "a fresh learning/validation split for every generation (batch) of evaluations instead of one split "
    "(every 5 generations for GGP/spGGP/GA): the BO thesis's remedy for overfitting the validation data")


def check_params(method: str, declared: tuple[Parameter, ...], given: dict) -> list[str]:
    """Problems with ``given`` (unknown names, wrong types or values) for ``method``'s parameters."""
    known = {p.name: p for p in declared}
    out = []
    for name, value in given.items():
        if name not in known:
            what = f"; its parameters are {', '.join(known)}" if known else "; it has none"
            out.append(f"{method} has no parameter {name!r}{what}")
            continue
        problem = known[name].problem(value)
        if problem:
            out.append(problem)
    return out


def resolve_params(declared: tuple[Parameter, ...], given: dict) -> dict:
    """The declared defaults, overridden by ``given``."""
    return {p.name: (float(v) if p.type is float else tuple(v) if p.type is tuple else v) for p in declared
            for v in (given.get(p.name, p.default),)}

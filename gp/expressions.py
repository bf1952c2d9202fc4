"""Bound expressions over dataset meta-data.

Sampled terminals such as ``RANDOM-INT(1, floor(sqrt(L)) + 1)`` have bounds that
depend on the dataset (the thesis needs ``SQRT(L)+1``, ``min(2L,100)``, ``L/2`` and
a fraction of the attribute count). Expressions are tiny immutable ASTs, evaluated
when a grammar is bound to a dataset's :class:`DatasetMeta`.

A grammar file is untrusted input, so evaluation is kept cheap and total: integers
that outgrow 64 bits continue as floats (a 1 MB file of digits must not turn into
million-digit arithmetic; such a bound is refused anyway), and every arithmetic or
domain failure becomes one :class:`BoundError` with a message for the user. The
parser limits how deeply expressions nest, which bounds the recursion here.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Callable, Mapping, Union

from .errors import shorten

#: Integers beyond this continue as floats (see the module docstring).
_EXACT_INT_LIMIT = 2 ** 63


class BoundError(ValueError):
    """A bound expression that has no value (division by zero, sqrt of a negative, …)."""


def _tame(value: float) -> float:
    if isinstance(value, int) and not -_EXACT_INT_LIMIT <= value <= _EXACT_INT_LIMIT:
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value

#: Dataset variables a bound may use, with what they mean.
VARIABLES: dict[str, str] = {
    "L": "number of labels",
    "M": "number of features (attributes, labels excluded)",
    "N": "number of training instances",
}


def _round_half_up(x: float) -> int:
    # Java's Math.round (used by MEKA/WEKA), not Python's banker's rounding.
    return math.floor(x + 0.5)


#: Functions a bound may call: name -> (callable, min arity, max arity).
FUNCTIONS: dict[str, tuple[Callable[..., float], int, int]] = {
    "sqrt": (math.sqrt, 1, 1),
    "floor": (math.floor, 1, 1),
    "ceil": (math.ceil, 1, 1),
    "round": (_round_half_up, 1, 1),
    "log2": (math.log2, 1, 1),
    "min": (min, 2, 16),
    "max": (max, 2, 16),
}

_BINARY: dict[str, Callable[[float, float], float]] = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
}


@dataclass(frozen=True)
class Num:
    value: float

    def evaluate(self, env: Mapping[str, float]) -> float:
        return self.value

    def variables(self) -> frozenset[str]:
        return frozenset()

    def __str__(self) -> str:
        v = self.value
        return str(int(v)) if isinstance(v, int) else repr(v)


@dataclass(frozen=True)
class Var:
    name: str

    def evaluate(self, env: Mapping[str, float]) -> float:
        return env[self.name]

    def variables(self) -> frozenset[str]:
        return frozenset({self.name})

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Neg:
    operand: "Expr"

    def evaluate(self, env: Mapping[str, float]) -> float:
        return _tame(-self.operand.evaluate(env))

    def variables(self) -> frozenset[str]:
        return self.operand.variables()

    def __str__(self) -> str:
        return f"-{_wrap(self.operand)}"


@dataclass(frozen=True)
class BinOp:
    op: str
    left: "Expr"
    right: "Expr"

    def evaluate(self, env: Mapping[str, float]) -> float:
        return _tame(_BINARY[self.op](self.left.evaluate(env), self.right.evaluate(env)))

    def variables(self) -> frozenset[str]:
        return self.left.variables() | self.right.variables()

    def __str__(self) -> str:
        return f"{_wrap(self.left)} {self.op} {_wrap(self.right)}"


@dataclass(frozen=True)
class Call:
    function: str
    args: tuple["Expr", ...]

    def evaluate(self, env: Mapping[str, float]) -> float:
        fn = FUNCTIONS[self.function][0]
        return _tame(fn(*(a.evaluate(env) for a in self.args)))

    def variables(self) -> frozenset[str]:
        out: frozenset[str] = frozenset()
        for a in self.args:
            out |= a.variables()
        return out

    def __str__(self) -> str:
        return f"{self.function}({', '.join(str(a) for a in self.args)})"


Expr = Union[Num, Var, Neg, BinOp, Call]


def _wrap(e: Expr) -> str:
    return f"({e})" if isinstance(e, BinOp) else str(e)


def is_well_formed(expr: Expr) -> bool:
    """Only known variables, and known functions with a valid number of arguments.

    The parser reports each unknown name where it is written; this tells it not to
    evaluate such an expression as well.
    """
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, Var) and e.name not in VARIABLES:
            return False
        if isinstance(e, Call):
            if e.function not in FUNCTIONS or not FUNCTIONS[e.function][1] <= len(e.args) <= FUNCTIONS[e.function][2]:
                return False
            stack.extend(e.args)
        elif isinstance(e, BinOp):
            stack += [e.left, e.right]
        elif isinstance(e, Neg):
            stack.append(e.operand)
    return True


def evaluate_bound(expr: Expr, env: Mapping[str, float]) -> float:
    """The value of a well-formed bound, as :func:`as_number`; any failure is a :class:`BoundError`."""
    try:
        return as_number(expr.evaluate(env))
    except ZeroDivisionError:
        raise BoundError(f"{_short(expr)} divides by zero") from None
    except OverflowError:
        raise BoundError(f"{_short(expr)} overflows (a number beyond ±1.8e308)") from None
    except ValueError as exc:  # math domain errors, floor/ceil of nan or inf
        raise BoundError(f"{_short(expr)} has no value ({exc})") from None


def _short(expr: Expr) -> str:
    return f"'{shorten(str(expr))}'"


def as_number(value: float) -> float:
    """Normalise an evaluated bound: integral floats become ints (within 64 bits, where they are exact)."""
    if isinstance(value, float) and value.is_integer() and abs(value) <= _EXACT_INT_LIMIT:
        return int(value)
    return value

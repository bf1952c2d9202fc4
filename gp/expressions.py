"""Bound expressions over dataset meta-data.

Sampled terminals such as ``RANDOM-INT(1, floor(sqrt(L)) + 1)`` have bounds that
depend on the dataset (the thesis needs ``SQRT(L)+1``, ``min(2L,100)``, ``L/2`` and
a fraction of the attribute count). Expressions are tiny immutable ASTs, evaluated
when a grammar is bound to a dataset's :class:`DatasetMeta`.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from typing import Callable, Mapping, Union

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
        return -self.operand.evaluate(env)

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
        return _BINARY[self.op](self.left.evaluate(env), self.right.evaluate(env))

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
        return fn(*(a.evaluate(env) for a in self.args))

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


def as_number(value: float) -> float:
    """Normalise an evaluated bound: integral floats become ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value

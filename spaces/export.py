"""Export an (unfitted) estimator as Python source that rebuilds it.

The generated code is a list of imports and one constructor expression, using only
public constructor parameters (``get_params(deep=False)``), so a user can take a
model out of the framework: ``exec`` it, or paste it into a script that depends only
on this project's estimator modules and scikit-learn.
"""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator


def _literal(value, imports: set[str]) -> str:
    if isinstance(value, BaseEstimator):
        return _constructor(value, imports)
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, np.ndarray):
        imports.add("import numpy as np")
        return f"np.array({_literal(value.tolist(), imports)})"
    if isinstance(value, np.generic):
        return _literal(value.item(), imports)
    if isinstance(value, numbers.Integral):
        return repr(int(value))
    if isinstance(value, numbers.Real):
        f = float(value)
        if f != f or f in (float("inf"), float("-inf")):
            return f"float({str(f)!r})"
        return repr(f)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(_literal(v, imports) for v in value)
        if isinstance(value, tuple):
            return f"({inner}{',' if len(value) == 1 else ''})"
        return f"[{inner}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k, imports)}: {_literal(v, imports)}" for k, v in value.items()) + "}"
    if isinstance(value, type):
        imports.add(f"from {value.__module__} import {value.__name__}")
        return value.__name__
    if callable(value) and getattr(value, "__module__", None) and getattr(value, "__qualname__", "").isidentifier():
        imports.add(f"from {value.__module__} import {value.__qualname__}")
        return value.__qualname__
    raise TypeError(f"cannot export a parameter of type {type(value).__name__}: {value!r}")


def _constructor(est: BaseEstimator, imports: set[str]) -> str:
    cls = type(est)
    imports.add(f"from {cls.__module__} import {cls.__name__}")
    args = ", ".join(f"{k}={_literal(v, imports)}" for k, v in sorted(est.get_params(deep=False).items()))
    return f"{cls.__name__}({args})"


def to_python(estimator: BaseEstimator, variable: str = "model") -> str:
    """Source code that defines ``variable`` as an unfitted copy of ``estimator``."""
    imports: set[str] = set()
    expression = _constructor(estimator, imports)
    header = '"""Exported by ggp-automl: an unfitted estimator. Fit it with model.fit(X, Y)."""\n'
    return header + "\n".join(sorted(imports)) + f"\n\n{variable} = {expression}\n"


def same_estimator(a, b) -> bool:
    """Structural equality of (unfitted) estimators: same classes, same parameters."""
    if isinstance(a, BaseEstimator) or isinstance(b, BaseEstimator):
        if type(a) is not type(b):
            return False
        pa, pb = a.get_params(deep=False), b.get_params(deep=False)
        return pa.keys() == pb.keys() and all(same_estimator(pa[k], pb[k]) for k in pa)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_estimator(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_estimator(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return a == b

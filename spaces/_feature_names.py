"""Feature names, as scikit-learn keeps them, and new data matched to them by name.

Why a module of its own: every model we ship (:mod:`spaces.model`'s two wrappers, :mod:`spaces.ensemble`)
takes data frames, and a frame of the training columns in another order must not be applied position by
position (issue 24: a UCI set's accuracy fell from 0.96 to 0.36 so). scikit-learn refuses such a frame;
we put its columns in the training order, as the command line does with files
(:mod:`evaluation.data.schema`), and refuse other names, naming them.
"""
from __future__ import annotations

import numpy as np


def _column_names(X) -> list[str] | None:
    """The column names of a data frame whose names are all strings (scikit-learn's rule), else None."""
    columns = getattr(X, "columns", None)
    if columns is None or not all(isinstance(c, str) for c in columns):
        return None
    return [str(c) for c in columns]


def remember_names(estimator, X) -> None:
    """``feature_names_in_`` as scikit-learn sets it in ``fit``: the data frame's names, or none."""
    names = _column_names(X)
    if names is not None:
        estimator.feature_names_in_ = np.asarray(names, dtype=object)
    elif hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_


def by_name(estimator, X):
    """``X`` with the columns ``fit`` saw, in the order it saw them, when both have names (issue 24: a frame of
    the training columns in another order was applied position by position). Other names are a ValueError
    naming the missing and the unexpected ones; data without names are taken by position."""
    seen = getattr(estimator, "feature_names_in_", None)
    names = _column_names(X)
    if seen is None or names is None or names == list(seen):
        return X
    missing = [n for n in seen if n not in names]
    unexpected = [n for n in names if n not in set(seen)]
    if missing or unexpected:
        raise ValueError(f"X's features do not match those seen in fit (missing {missing[:5]}, unexpected "
                         f"{unexpected[:5]}); columns are matched by name")
    return X[list(seen)]

"""Can a search learn anything from this dataset? The checks that run before it starts.

Why a module of its own: a dataset that loads is not necessarily one a search can use. A
one-row file cannot be split into learning and validation parts, an infinite feature value
makes every candidate fail, and labels that never change give a "winner" whose perfect
fitness means nothing. Each of these used to surface only after the search had spent its
budget (or as a traceback); here they are written once, and every entry point asks:
the loaders (:mod:`evaluation.data`) call :func:`refuse_non_finite` (defined beside
:class:`~evaluation.data.dataset.Dataset`, beneath the loaders, and re-exported here), ``evolve`` and
:class:`gp.GrammarAutoML` (through ``ggp_automl.search.run``) call :func:`check_fold_rows` and
:func:`check_learnable`, and ``cli.py check --data`` calls :func:`check_learnable`.

**Refused** (:class:`~gp.errors.DataError`; the CLI exits 1 with ``error: …``):

* an infinite feature value (``inf``, ``-Infinity``, or a number beyond ±1.8e308, which
  overflows to infinity): every model rejects it. The message names the file, line,
  attribute and data row. A *missing* value is not refused: ``?`` (and ``NaN``, which is
  what Weka itself stores for a missing value) become NaN, and the models impute it;
* too few rows for the splits the run will cut: every part of a split must get at least one
  row, so a split into parts of shares f₁…fₖ needs ``max(ceil(1/fᵢ))`` rows — 5 for the
  80/20 learning/validation split every run uses (:data:`evaluation.fidelity.NIS_VALID_FRACTION`),
  6 for the six folds of a PIS fidelity schedule, and for ``--fold k`` of 5 enough rows that
  the training part of every fold still has the hold-out's 5 (:func:`fold_min_rows`: 7);
* every label constant in the training data (each label always 0 or always 1), or a single
  class of single-label data: a model that ignores the features is perfect, so the search
  has nothing to find. This is also what a wrong ``-C``, label file or ``--target`` usually
  looks like, so the message says to check them;
* fewer rows than the folds of an internal cross-validation (``--cv K``).

**Warned about** (returned as strings; the run goes on, and the CLI prints ``warning: …``):

* some labels constant in the training data: every model predicts them trivially, so
  measures averaged over labels are inflated by them; for single-label data, classes with
  fewer rows than the cross-validation folds (some folds then never see them);
* fewer than :data:`SMALL_VALID_ROWS` validation rows: a candidate's fitness then moves in
  steps of 1/rows, and the search follows noise;
* every feature constant or missing: the models can only learn how often each label occurs.

A test set (``--test`` or a fold's held-out part) needs no check of its own beyond the
loaders': it has at least one row, and the same features and labels as the training data.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ggp_automl.gp.errors import DataError

from .data.dataset import Dataset, refuse_non_finite
from .fidelity import NIS_VALID_FRACTION

__all__ = ["SMALL_VALID_ROWS", "check_fold_rows", "check_learnable", "fold_min_rows", "min_rows",
           "refuse_non_finite"]

#: with fewer validation rows than this, the search is warned that its fitness is mostly noise
SMALL_VALID_ROWS = 10


def min_rows(fractions: Sequence[float]) -> int:
    """The fewest rows a stratified split into parts of these shares needs: one row in every part."""
    return max(math.ceil(1.0 / f - 1e-9) for f in fractions)


def _holdout_fractions() -> tuple[float, float]:
    """The learning/validation split's shares."""
    return NIS_VALID_FRACTION, 1.0 - NIS_VALID_FRACTION


def fold_min_rows(n_folds: int) -> int:
    """The fewest rows for ``--fold k`` of ``n_folds``: every fold gets a row, and the training part
    (``(n_folds - 1) / n_folds`` of the rows) still holds the learning/validation split's minimum."""
    holdout = min_rows(_holdout_fractions())
    return max(n_folds, math.ceil(holdout * n_folds / (n_folds - 1) - 1e-9))


def _where(data: Dataset) -> str:
    return data.source or data.name


def check_fold_rows(data: Dataset, n_folds: int) -> None:
    """Refuse a dataset too small to be cut into ``n_folds`` folds for ``--fold k`` (before cutting it)."""
    need = fold_min_rows(n_folds)
    if data.n_instances < need:
        raise DataError(f"{_where(data)}: {_instances(data.n_instances)} are too few for --fold of {n_folds} "
                        f"folds: it needs at least {need} (one per fold, and {min_rows(_holdout_fractions())} in "
                        "each fold's training part); give a larger dataset, or drop --fold")


def _instances(n: int) -> str:
    return f"{n} instance{'s' if n != 1 else ''}"


def check_learnable(train: Dataset, *, schedule=None, what: str = "the training data", cv: int = 0) -> list[str]:
    """Refuse (DataError) a training set the search cannot learn from; return warnings (strings).

    ``schedule``: the run's :class:`evaluation.fidelity.FidelitySchedule` (None: no multi-fidelity);
    a PIS schedule cuts the training data into more parts than the learning/validation split.
    ``what`` names the training data in messages, e.g. ``"the training part of fold 2"``; ``cv``
    the folds of the candidates' internal cross-validation (0: the hold-out split). The rules
    are in the module docstring.
    """
    where = _where(train)
    n = train.n_instances
    parts = {"the learning/validation split": _holdout_fractions()}
    if cv:
        parts[f"{cv}-fold cross-validation"] = (1.0 / cv,) * cv
    if schedule is not None and schedule.instances == "PIS":
        k = sum(schedule.n_folds(1))
        parts[f"the {schedule.scenario} schedule's {k} folds"] = (1.0 / k,) * k
    for split, fractions in parts.items():
        need = min_rows(fractions)
        if n < need:
            raise DataError(f"{where}: {what} has {_instances(n)}, too few for {split}: it needs at least "
                            f"{need}, so that its smallest part gets one; give a larger dataset")
    # what the targets must be like is the task's: labels not all constant, more than one class, …
    warnings = train.task.check_targets(train.Y, where, what, cv)
    return warnings + _feature_warnings(train, where, what, cv)


def _feature_warnings(train: Dataset, where: str, what: str, cv: int = 0) -> list[str]:
    warnings = []
    n = train.n_instances
    valid = n if cv else math.floor(n * _holdout_fractions()[0])
    if valid < SMALL_VALID_ROWS:
        warnings.append(f"{where}: {what} has {n} instances, so about {max(valid, 1)} validate each candidate: its "
                        "fitness moves in large steps and the search mostly follows noise; at least "
                        f"{math.ceil(SMALL_VALID_ROWS / _holdout_fractions()[0])} instances are advisable")
    # fmax/fmin skip NaN; an all-missing column gives NaN, which is not > anything
    if train.n_features and not (np.fmax.reduce(train.X, axis=0) > np.fmin.reduce(train.X, axis=0)).any():
        warnings.append(f"{where}: every feature is constant or missing in {what}: the models can only learn how "
                        "often each label occurs")
    return warnings

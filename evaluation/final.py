"""Refit the chosen configuration on the whole training set, and score it on a test set.

The last step of every run (thesis Alg. 5.1 l.17–18): the winner of the final
re-evaluation is trained on learning + validation data together and, when a test
set is given, measured on it. It runs isolated like any candidate — a winner that
crashes at full size must not take the run down — and the fitted model comes back
to the parent pickled.

When no candidate can be refit within the budget, the run returns the model its final
re-evaluation fitted on the learning rows (:mod:`ggp_automl.search.finish`); :func:`score_model`
measures that one on the test set, isolated too.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.tree import Node
from ggp_automl.spaces.compiler import compile_tree
from ggp_automl.spaces.registry import load_all

from .isolation import OK, Limits, run_isolated
from .task import Task, task_of


@dataclass
class FinalFit:
    status: str
    model: Any = None
    test_measures: dict = field(default_factory=dict)
    fit_time: float = 0.0
    wall_time: float = 0.0
    reason: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK


def _fit(tree: Node, grammar: Grammar, X, Y, categorical, X_test, Y_test, random_state: int, task: Task):
    model = compile_tree(tree, grammar, random_state=random_state, categorical_features=categorical or None,
                         task=task)
    t0 = time.perf_counter()
    model.fit(X, Y)
    fit_time = time.perf_counter() - t0
    measures = {}
    if X_test is not None and len(X_test):
        predictions, scores = task.outputs(model, X_test)
        measures = task.measures(Y_test, predictions, scores)
    return model, measures, fit_time


def _score(model_bytes: bytes, X_test, Y_test, task: Task):
    import pickle

    model = pickle.loads(model_bytes)
    predictions, scores = task.outputs(model, X_test)
    return task.measures(Y_test, predictions, scores)


def score_model(model_bytes: bytes, X_test: np.ndarray, Y_test: np.ndarray, limits: Limits = Limits(),
                task: Task | None = None) -> FinalFit:
    """Measure an already fitted model (pickled: :attr:`evaluation.candidate.EvaluationResult.model`) on a
    test set, in isolation like a refit: the run's model when the winner could not be refit on all its rows.
    The :class:`FinalFit` holds the measures, not the model."""
    load_all()
    task = task or task_of(Y_test)
    outcome = run_isolated(_score, (model_bytes, X_test, Y_test, task), limits)
    if outcome.status != OK:
        return FinalFit(outcome.status, wall_time=outcome.wall_time, reason=outcome.reason)
    return FinalFit(OK, None, outcome.value, 0.0, outcome.wall_time)


def fit_final(tree: Node, grammar: Grammar, X: np.ndarray, Y: np.ndarray, categorical_features=(),
              X_test: np.ndarray | None = None, Y_test: np.ndarray | None = None,
              limits: Limits = Limits(), random_state: int = 0, task: Task | None = None) -> FinalFit:
    """Fit ``tree``'s model on ``(X, Y)`` in isolation; measure it on the test set if given.
    ``task``: the data's (:mod:`evaluation.task`; None: read off ``Y``)."""
    load_all()
    task = task or task_of(Y)
    outcome = run_isolated(_fit, (tree, grammar, X, Y, list(categorical_features), X_test, Y_test, random_state,
                                  task), limits)
    if outcome.status != OK:
        return FinalFit(outcome.status, wall_time=outcome.wall_time, reason=outcome.reason)
    model, measures, fit_time = outcome.value
    return FinalFit(OK, model, measures, fit_time, outcome.wall_time)

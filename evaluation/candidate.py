"""Evaluate one candidate: compile its tree, fit on the learning rows, score on the validation rows.

A :class:`Split` is either a learning/validation hold-out or an internal k-fold
cross-validation of its rows (``folds``; the PBIL-Auto-Ens protocol, 10 folds for
single-label data): the candidate is then fit once per fold, and its measures — the
fitness among them — are the means over the folds. What the targets are, how scores
become predictions and which measures exist is the split's task's (:mod:`evaluation.task`).

Runs in an isolated child (:mod:`evaluation.isolation`; by default the thread's reused warm
child, :mod:`evaluation.warm`), so an exception, a hang, a memory blow-up or a crash becomes a
failed result with fitness 0 and a recorded reason — never an exception in the search. Non-finite scores are a failure too.
"""
from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field

import numpy as np
import sklearn
from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.tree import Node
from ggp_automl.spaces.compiler import compile_tree
from ggp_automl.spaces.encoding import shared_encodings
from ggp_automl.spaces.registry import load_all
from sklearn.base import clone

from .isolation import OK, Limits, run_isolated
from .metrics import get_fitness
from .task import Task, task_of
from .warm import run_warm

INVALID = "invalid"
#: each cross-validated split's fold arrays, made once per process (see :meth:`Split.parts`)
_PARTS: weakref.WeakKeyDictionary[Split, list] = weakref.WeakKeyDictionary()


@dataclass(frozen=True, eq=False)
class Split:
    """The data a candidate is evaluated on.

    Hold-out (``folds`` empty): fit on ``(X_learn, Y_learn)``, score on ``(X_valid, Y_valid)``.
    Cross-validation: ``folds`` are ``(train, test)`` row indices into ``X_learn``/``Y_learn``
    (``X_valid`` is then empty); the candidate is fit on each train part and scored on its test
    part. ``task`` is the data's :class:`~evaluation.task.Task` (None: read off ``Y_learn``).
    """

    X_learn: np.ndarray
    Y_learn: np.ndarray
    X_valid: np.ndarray
    Y_valid: np.ndarray
    categorical_features: tuple[int, ...] = ()
    task: Task | None = None
    folds: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    #: return the candidate's scores on the scored rows (:attr:`EvaluationResult.scores`): the
    #: validation predictions ensembles are built from (:mod:`evaluation.predictions`)
    keep_scores: bool = False
    #: a test set (same columns) each fitted model is also scored on, for anytime test curves
    #: (``RunConfig.trace_test``); its score never reaches the search (:attr:`EvaluationResult.test_fitness`)
    X_test: np.ndarray | None = None
    Y_test: np.ndarray | None = None
    #: return the fitted model, pickled in the child (:attr:`EvaluationResult.model`): the last part's —
    #: fitted on the learning rows of a hold-out, on the last fold's train rows under cross-validation
    #: (:attr:`model_rows`). The final re-evaluation keeps it: the model a run returns when the winner
    #: cannot be refit on all its rows (:mod:`ggp_automl.search.finish`)
    keep_model: bool = False

    def __post_init__(self) -> None:
        if self.task is None:
            object.__setattr__(self, "task", task_of(self.Y_learn))

    @property
    def n_rows(self) -> int:
        """Rows the candidate learns from (a cross-validated split: all its rows)."""
        return len(self.Y_learn)

    def parts(self) -> list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]:
        """``(X_fit, Y_fit, X_score, Y_score)`` once for a hold-out, once per fold for cross-validation.

        The same array objects every time (made once per split and process): encodings are shared
        per array object (:func:`~ggp_automl.spaces.encoding.shared_encodings`)."""
        if not self.folds:
            return [(self.X_learn, self.Y_learn, self.X_valid, self.Y_valid)]
        made = _PARTS.get(self)
        if made is None:
            made = _PARTS[self] = [(self.X_learn[train], self.Y_learn[train], self.X_learn[test], self.Y_learn[test])
                                   for train, test in self.folds]
        return made

    @property
    def model_rows(self) -> int:
        """Rows the kept model (``keep_model``) was fitted on: the learning rows, or the last fold's train rows."""
        return len(self.folds[-1][0]) if self.folds else len(self.Y_learn)

    @property
    def scored_targets(self) -> np.ndarray:
        """The targets of the rows a candidate's scores cover, in their order: the validation rows of
        a hold-out, every row (out of fold) under cross-validation."""
        return self.Y_learn if self.folds else self.Y_valid


@dataclass(frozen=True)
class EvaluationResult:
    phenotype: str
    status: str                      # ok | error | timeout | memory | crashed | invalid
    fitness: float                   # 0.0 unless ok
    measures: dict = field(default_factory=dict)
    fit_time: float = 0.0
    predict_time: float = 0.0
    wall_time: float = 0.0           # everything, process start and scoring included
    reason: str = ""
    limit: float = 0.0               # the time limit it ran under (s); 0.0 when not recorded
    #: scores on the split's scored rows (float32; ``Split.keep_scores`` only; never logged or cached)
    scores: np.ndarray | None = field(default=None, repr=False, compare=False)
    #: the fitness of the fitted model(s) on ``Split.X_test`` (mean over folds); None when not traced
    test_fitness: float | None = None
    #: the fitted model, pickled (``Split.keep_model`` only; None when it could not be pickled; never logged
    #: or cached): :meth:`fitted_model` unpickles it
    model: bytes | None = field(default=None, repr=False, compare=False)

    def fitted_model(self):
        """The kept model (``Split.keep_model``), unpickled; None when none was kept."""
        import pickle

        return None if self.model is None else pickle.loads(self.model)

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def overhead(self) -> float:
        """Wall time outside fit and predict: process start, data hand-over, scoring."""
        return max(self.wall_time - self.fit_time - self.predict_time, 0.0)


def _fit_and_score(tree: Node, grammar: Grammar, split: Split, fitness: str, random_state: int) -> dict:
    template = compile_tree(tree, grammar, random_state=random_state,
                            categorical_features=list(split.categorical_features) or None, task=split.task)
    # The data's encoding is shared by every candidate on this view, and checked for finite values
    # once, where it is made: the learners' own checks would repeat it at every base fit.
    with shared_encodings(), sklearn.config_context(assume_finite=True):
        return _fit_parts(template, split, fitness)


def _fit_parts(template, split: Split, fitness: str) -> dict:
    task = split.task
    fit_time = predict_time = 0.0
    per_part, kept, tested = [], [], []
    for X_fit, Y_fit, X_score, Y_score in split.parts():
        model = clone(template)  # compiled once; each fold fits a fresh copy
        t0 = time.perf_counter()
        model.fit(X_fit, Y_fit)
        t1 = time.perf_counter()
        predictions, scores = task.outputs(model, X_score)
        t2 = time.perf_counter()
        fit_time, predict_time = fit_time + t1 - t0, predict_time + t2 - t1
        if not np.all(np.isfinite(scores)):
            return {"status": INVALID, "reason": "non-finite scores", "fit_time": fit_time,
                    "predict_time": predict_time}
        per_part.append(task.measures(Y_score, predictions, scores))
        if split.keep_scores:
            kept.append(np.asarray(scores, dtype=np.float32))
        if split.X_test is not None:
            tested.append(_test_fitness(model, task, split, fitness))
    measures = {k: float(np.mean([m[k] for m in per_part])) for k in per_part[0] if all(k in m for m in per_part)}
    value = measures.get(fitness)
    if value is None or not np.isfinite(value):
        return {"status": INVALID, "reason": f"fitness {fitness!r} is {value}", "fit_time": fit_time,
                "predict_time": predict_time}
    return {"status": OK, "measures": measures, "fitness": float(value), "fit_time": fit_time,
            "predict_time": predict_time, "scores": _scored_rows(split, kept) if split.keep_scores else None,
            "test_fitness": float(np.mean(tested)) if tested and np.all(np.isfinite(tested)) else None,
            "model": _pickled(model) if split.keep_model else None}


def _pickled(model) -> bytes | None:
    """``model`` pickled here, in the child: one that cannot be pickled is not kept, and its result still
    comes back (pickled by the pipe, it would have turned the evaluation into an error)."""
    import pickle

    try:
        return pickle.dumps(model, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - a lambda or an open handle in a plug-in's model
        return None


def _test_fitness(model, task: Task, split: Split, fitness: str) -> float:
    """The fitted model's fitness on the split's test set (not timed: tracing is not the candidate's cost)."""
    predictions, scores = task.outputs(model, split.X_test)
    return float(task.measures(split.Y_test, predictions, scores).get(fitness, np.nan))


def _scored_rows(split: Split, kept: list[np.ndarray]) -> np.ndarray:
    """One score per scored row: the hold-out's, or the folds' out-of-fold scores in row order."""
    if not split.folds:
        return kept[0]
    out = np.zeros((split.n_rows,) + kept[0].shape[1:], dtype=np.float32)
    for (_, test), part in zip(split.folds, kept):
        out[test] = part
    return out


def evaluate_candidate(tree: Node, grammar: Grammar, split: Split, limits: Limits = Limits(),
                       fitness: str = "fitness", random_state: int = 0) -> EvaluationResult:
    """Fit ``tree``'s model on the learning part, score it on the validation part, in isolation.

    An unknown ``fitness`` name raises ValueError here, before any child is started.
    """
    get_fitness(fitness)
    load_all()  # import every algorithm module here, once, so forked children inherit them
    arguments = (tree, grammar, split, fitness, random_state)
    if limits.warm:  # the grammar and the split are inherited by the warm child, not sent each time
        outcome = run_warm(_fit_and_score, arguments, limits, shared=(1, 2))
    else:
        outcome = run_isolated(_fit_and_score, arguments, limits)
    phenotype = tree.phenotype
    if outcome.status != OK:
        return EvaluationResult(phenotype, outcome.status, 0.0, wall_time=outcome.wall_time, reason=outcome.reason)
    r = outcome.value
    if r["status"] != OK:
        return EvaluationResult(phenotype, r["status"], 0.0, fit_time=r["fit_time"], predict_time=r["predict_time"],
                                wall_time=outcome.wall_time, reason=r["reason"])
    return EvaluationResult(phenotype, OK, r["fitness"], r["measures"], r["fit_time"], r["predict_time"],
                            outcome.wall_time, scores=r.get("scores"), test_fitness=r.get("test_fitness"),
                            model=r.get("model"))


"""The problem type of a run: multi-label or single-label classification, as one object.

Why: everything that depends on what the targets are — how they are checked, how rows are
stratified into folds, what the compiled model wraps, how scores become predictions, which
measures are computed and which fitness the search maximises — is decided here and nowhere
else. The loop, the evaluation engine, the CLI and the estimators ask the run's :class:`Task`
and never test for a task themselves, so a third problem type is one more class here.

A dataset knows its task (:attr:`evaluation.data.Dataset.task`): a 2-D 0/1 target matrix is
multi-label (MULAN/MEKA files, CSV with several ``--target`` columns), a 1-D vector of class
codes is single-label (an ARFF whose class is a nominal attribute, CSV with one ``--target``
column). The grammar states the other side: a tree compiles to a multi-label method or to a
single-label classifier (:attr:`Task.produces`), and a run refuses a grammar whose trees build
the other kind.

Targets that are not known (``?`` in a file) are coded -1; :meth:`Task.labelled` says which rows
have every target, so training data can leave the others out and ``predict`` can take them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ggp_automl.gp.errors import DataError

from . import default_data as embedded
from . import metrics

__all__ = ["MultiLabel", "SingleLabel", "Task", "TASKS", "TASK_CLASSES", "task_of", "task_of_kind", "task_of_record"]

#: constant labels or rare classes are named in a message up to this many
_SHOWN = 5


def _listed(items: list[str]) -> str:
    return ", ".join(items[:_SHOWN]) + (f", … ({len(items) - _SHOWN} more)" if len(items) > _SHOWN else "")


class Task(ABC):
    """What a problem type decides, so that no code outside this module switches on a task's name:
    the class attributes below, and the methods. Code that only has a record's name (``config.json``,
    ``final.json``) looks the class up once with :func:`task_of_record`."""

    #: "multilabel" or "singlelabel": the name ``config.json``, ``final.json`` and the CLI store
    name: ClassVar[str]
    #: "multi-label" or "single-label": the task in words, in messages and report titles
    title: ClassVar[str]
    #: what the targets are called in messages: "labels" or "classes"
    target_word: ClassVar[str]
    #: the key of :meth:`describe` (``config.json``'s ``data``) that counts the targets
    count_key: ClassVar[str]
    #: what the trees of this task's grammars build, in words ("multi-label methods")
    models: ClassVar[str]
    #: the shipped grammar of this task (:mod:`gp.shipped`): the estimator's default, the one a refusal suggests
    shipped_grammar: ClassVar[str]
    #: the embedded dataset a run without ``--data`` uses (:mod:`evaluation.default_data`)
    default_data: ClassVar[embedded.DefaultData]
    #: the fitnesses the search can maximise on this task (:mod:`evaluation.metrics`' table of the task)
    fitnesses: ClassVar[tuple[metrics.Fitness, ...]]
    #: one target column of class codes (True) or a 0/1 matrix of labels (False)
    single_label: ClassVar[bool]
    #: the registry kind (:mod:`spaces.registry`) the outermost algorithm of a tree must produce
    produces: ClassVar[str]
    #: what the search maximises unless ``--fitness`` says otherwise
    default_fitness: ClassVar[str]
    #: internal cross-validation folds of a candidate's evaluation unless ``--cv`` says otherwise
    #: (0: the learning/validation hold-out split)
    default_cv: ClassVar[int]
    #: (column title, measure key) shown wherever one line of measures is printed
    headline: ClassVar[tuple[tuple[str, str], ...]]
    #: (column title, measure key) of the measures a run's report (``inspect``) shows beside the fitness
    columns: ClassVar[tuple[tuple[str, str], ...]]
    #: the test measures an experiment's report tables unless its ``[report] measures`` name others
    report_measures: ClassVar[tuple[str, ...]]

    # -- targets ------------------------------------------------------------------------------
    @abstractmethod
    def labelled(self, Y: np.ndarray) -> np.ndarray:
        """Boolean mask of the rows whose every target is known."""

    @abstractmethod
    def check_targets(self, Y: np.ndarray, where: str, what: str, cv: int = 0) -> list[str]:
        """Refuse (DataError) training targets there is nothing to learn from (every label constant, a
        single class); warnings about weaker problems (some labels constant, classes rarer than the
        ``cv`` folds). ``where`` names the file, ``what`` the training data (:mod:`evaluation.learnable`)."""

    @abstractmethod
    def prediction_table(self, predictions: np.ndarray, scores: np.ndarray, with_scores: bool,
                         target_names: tuple[str, ...]) -> tuple[list[str], np.ndarray, str | list[str]]:
        """``(header, table, fmt)`` of ``predict``'s CSV file (``numpy.savetxt``); ``target_names`` are
        the data's label names (multi-label) or class attribute name (single-label)."""

    @abstractmethod
    def describe(self) -> dict:
        """The targets for ``config.json`` and messages."""

    @property
    @abstractmethod
    def n_targets(self) -> int:
        """L in the grammars' bounds: labels (multi-label) or classes (single-label)."""

    # -- splitting ----------------------------------------------------------------------------
    @abstractmethod
    def folds(self, Y: np.ndarray, fractions: Sequence[float], rng: np.random.Generator) -> list[np.ndarray]:
        """A stratified partition of the rows into parts of these shares (none empty)."""

    def holdout(self, Y: np.ndarray, rng: np.random.Generator, valid_fraction: float = 0.2
                ) -> tuple[np.ndarray, np.ndarray]:
        """``(learn, valid)`` row indices, stratified."""
        if not 0.0 < valid_fraction < 1.0:
            raise ValueError(f"valid_fraction must lie in (0, 1), got {valid_fraction}")
        valid, learn = self.folds(Y, [valid_fraction, 1.0 - valid_fraction], rng)
        return learn, valid

    def kfold(self, Y: np.ndarray, k: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
        """Stratified k-fold cross-validation: ``[(train, test), ...]``; the test parts partition the rows."""
        if int(k) != k or k < 2:
            raise ValueError(f"the number of folds must be an integer >= 2, got {k}")
        from . import splits  # scikit-multilearn: only where rows are split

        return splits.as_kfold(self.folds(Y, [1.0 / k] * int(k), rng))

    # -- models -------------------------------------------------------------------------------
    @abstractmethod
    def wrap(self, estimator, global_values: dict, categorical_features=None):
        """The unfitted model of a tree: preprocessing + ``estimator`` (+ threshold for multi-label)."""

    @abstractmethod
    def outputs(self, model, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(predictions, scores)`` of a fitted model; scores cover every target of the task."""

    # -- measures -----------------------------------------------------------------------------
    @abstractmethod
    def measures(self, Y: np.ndarray, predictions: np.ndarray, scores: np.ndarray) -> dict[str, float]:
        """Every measure of the task and every fitness of the task, by name."""

    @classmethod
    def fitness_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in cls.fitnesses)

    def check_fitness(self, name: str) -> None:
        """ValueError unless ``name`` is a fitness of this task."""
        metrics.get_fitness(name)
        if name not in self.fitness_names():
            raise ValueError(f"fitness {name!r} is for {metrics.get_fitness(name).task} data; for {self.name} "
                             f"data use one of {', '.join(self.fitness_names())}")

    @property
    def phrase(self) -> str:
        """``single-label data (6 classes)`` / ``multi-label data (14 labels)``, for messages."""
        return f"{self.title} data ({self.n_targets} {self.target_word})"

    @classmethod
    def grammar_advice(cls) -> str:
        """The grammars this task needs, for a refusal: ``multi-label methods such as grammars/large.bnf``."""
        return f"{cls.models} such as grammars/{cls.shipped_grammar}"

    @classmethod
    def targets_of(cls, description: dict) -> str:
        """``6 labels`` / ``3 classes`` from a :meth:`describe` record (``config.json``'s ``data``)."""
        return f"{description.get(cls.count_key, '?')} {cls.target_word}"

    @classmethod
    def summary(cls, measures: dict) -> str:
        """One line of the headline measures."""
        return "  ".join(f"{title} {measures[key]:.4f}" for title, key in cls.headline
                         if isinstance(measures.get(key), (int, float)))


@dataclass(frozen=True)
class MultiLabel(Task):
    """Multi-label classification: ``Y`` is an (n, q) 0/1 matrix (-1: unknown)."""

    labels: tuple[str, ...] = ()

    name: ClassVar[str] = "multilabel"
    title: ClassVar[str] = "multi-label"
    target_word: ClassVar[str] = "labels"
    count_key: ClassVar[str] = "n_labels"
    models: ClassVar[str] = "multi-label methods"
    shipped_grammar: ClassVar[str] = "large.bnf"
    default_data: ClassVar[embedded.DefaultData] = embedded.MULTI_LABEL
    fitnesses: ClassVar[tuple] = metrics.MULTILABEL_FITNESS
    single_label: ClassVar[bool] = False
    produces: ClassVar[str] = "mlc"
    default_fitness: ClassVar[str] = "fitness"
    default_cv: ClassVar[int] = 0
    headline: ClassVar[tuple] = (("fitness", "fitness"), ("EM", "exact_match"), ("HL", "hamming_loss"),
                                 ("FM", "f1_macro"), ("RL", "ranking_loss"))
    columns: ClassVar[tuple] = (("EM", "exact_match"), ("HL", "hamming_loss"), ("FM", "f1_macro"),
                                ("RL", "ranking_loss"))
    report_measures: ClassVar[tuple] = ("fitness", "exact_match", "hamming_loss", "f1_macro", "ranking_loss")

    @property
    def n_targets(self) -> int:
        return len(self.labels)

    def labelled(self, Y):
        return np.all(np.asarray(Y) >= 0, axis=1)

    def check_targets(self, Y, where, what, cv=0):
        Y = np.asarray(Y)
        constant = np.flatnonzero((Y == Y[:1]).all(axis=0)) if len(Y) else np.arange(0)
        named = _listed([f"'{self.labels[k]}' always {int(Y[0, k])}" for k in constant])
        if len(constant) == Y.shape[1]:
            raise DataError(f"{where}: every label is constant in {what} ({named}): a model that ignores the "
                            "features is perfect, so there is nothing to learn; check which attributes are the "
                            "labels (the MULAN .xml file, -C in the relation name, or --target)")
        if len(constant):
            return [f"{where}: {len(constant)} of the {Y.shape[1]} labels are constant in {what} ({named}): every "
                    "model predicts them trivially, so measures averaged over labels overstate how well the others "
                    "are learnt; consider removing them"]
        return []

    def prediction_table(self, predictions, scores, with_scores, target_names):
        header = list(target_names) + ([f"{n}:score" for n in target_names] if with_scores else [])
        table = np.hstack([predictions, scores]) if with_scores else predictions
        return header, table, ["%d"] * predictions.shape[1] + (["%.6g"] * scores.shape[1] if with_scores else [])

    def describe(self):
        return {"task": self.name, self.count_key: len(self.labels)}

    def folds(self, Y, fractions, rng):
        from . import splits  # scikit-multilearn: only where rows are split

        return splits.stratified_folds(Y, fractions, rng)

    def wrap(self, estimator, global_values, categorical_features=None):
        from ggp_automl.spaces.model import wrap_model

        return wrap_model(estimator, self.produces, global_values, categorical_features)

    def outputs(self, model, X):
        scores = model.predict_proba(X)
        return model.decide(scores), scores

    def measures(self, Y, predictions, scores):
        return metrics.multilabel_measures(Y, predictions, scores)


@dataclass(frozen=True)
class SingleLabel(Task):
    """Single-label (binary or multi-class) classification: ``Y`` is a vector of class codes
    ``0 .. len(classes) - 1`` (-1: unknown); ``classes`` are the class names."""

    classes: tuple[str, ...] = ()

    name: ClassVar[str] = "singlelabel"
    title: ClassVar[str] = "single-label"
    target_word: ClassVar[str] = "classes"
    count_key: ClassVar[str] = "n_classes"
    models: ClassVar[str] = "single-label classifiers"
    shipped_grammar: ClassVar[str] = "ensembles.bnf"
    default_data: ClassVar[embedded.DefaultData] = embedded.SINGLE_LABEL
    fitnesses: ClassVar[tuple] = metrics.SINGLELABEL_FITNESS
    single_label: ClassVar[bool] = True
    produces: ClassVar[str] = "slc"
    default_fitness: ClassVar[str] = "accuracy"
    #: the PBIL-Auto-Ens protocol: the mean error over an internal stratified 10-fold CV (paper §4.3)
    default_cv: ClassVar[int] = 10
    headline: ClassVar[tuple] = (("error", "error_rate"), ("P", "macro_precision"), ("R", "macro_recall"),
                                 ("F", "macro_f_measure"), ("BA", "balanced_accuracy"), ("log loss", "log_loss"))
    columns: ClassVar[tuple] = headline
    report_measures: ClassVar[tuple] = ("error_rate", "macro_f_measure")

    @property
    def n_targets(self) -> int:
        return len(self.classes)

    def labelled(self, Y):
        return np.asarray(Y) >= 0

    def check_targets(self, Y, where, what, cv=0):
        counts = np.bincount(np.asarray(Y), minlength=len(self.classes))
        present = np.flatnonzero(counts)
        if present.size < 2:
            only = f"only class {self.classes[present[0]]!r} occurs" if present.size else "no class occurs"
            raise DataError(f"{where}: {only} in {what}: a model that ignores the features is perfect, so there is "
                            "nothing to learn; check which attribute is the class (the last one, or --target NAME)")
        if counts.max() < 2:  # issue 24: such a run "finished" with fitness 0
            raise DataError(f"{where}: every class occurs once in {what}: a model learns the classes of some rows and "
                            "is validated on others, whose classes it never saw, so every candidate would score 0; "
                            "give at least two rows of some class (is the class attribute an identifier?)")
        rare = [repr(self.classes[k]) for k in present if counts[k] < cv]
        if rare:
            return [f"{where}: {len(rare)} class(es) have fewer rows than the {cv} cross-validation folds in {what} "
                    f"({_listed(rare)}): some folds never see them"]
        return []

    def prediction_table(self, predictions, scores, with_scores, target_names):
        header = list(target_names[:1]) + ([f"P({c})" for c in self.classes] if with_scores else [])
        cells = np.asarray(self.classes, dtype=object)[predictions][:, None]
        return header, (np.hstack([cells, scores.round(6).astype(object)]) if with_scores else cells), "%s"

    def describe(self):
        return {"task": self.name, self.count_key: len(self.classes), "classes": list(self.classes)}

    def folds(self, Y, fractions, rng):
        from . import splits  # scikit-multilearn: only where rows are split

        return splits.class_folds(Y, fractions, rng)

    def wrap(self, estimator, global_values, categorical_features=None):
        from ggp_automl.spaces.model import wrap_model

        return wrap_model(estimator, self.produces, global_values, categorical_features)

    def outputs(self, model, X):
        proba = model.predict_proba(X)
        scores = np.zeros((proba.shape[0], len(self.classes)))
        scores[:, np.asarray(model.classes_, dtype=np.int64)] = proba
        return model.decide(proba), scores

    def measures(self, Y, predictions, scores):
        return metrics.singlelabel_measures(Y, predictions, scores, n_classes=len(self.classes))


def task_of(Y: Any, names: Sequence[str] = ()) -> Task:
    """The task of a target array: 1-D class codes are single-label, a 2-D matrix multi-label.
    ``names`` are the class names (single-label) or label names (multi-label)."""
    Y = np.asarray(Y)
    if Y.ndim == 1:
        names = tuple(names) or tuple(str(c) for c in range(int(Y.max()) + 1 if Y.size else 0))
        return SingleLabel(tuple(names))
    return MultiLabel(tuple(names) or tuple(f"y{k}" for k in range(Y.shape[1])))


#: the task classes by name (``config.json``'s ``data.task``), in the order reports list them
TASK_CLASSES: dict[str, type[Task]] = {cls.name: cls for cls in (MultiLabel, SingleLabel)}
#: the task names, as ``config.json`` and the CLI spell them
TASKS = tuple(TASK_CLASSES)


def task_of_record(name) -> type[Task]:
    """The task class a record (``config.json``, ``final.json``) names; multi-label for a record without one
    (the runs written before the field existed). A task class or instance is its own class."""
    if isinstance(name, Task):
        return type(name)
    if isinstance(name, type) and issubclass(name, Task):
        return name
    try:
        return TASK_CLASSES.get(name, MultiLabel)
    except TypeError:  # a damaged record's value, not a name
        return MultiLabel


def task_of_kind(kind: str) -> type[Task]:
    """The task class whose models are of this registry kind (:attr:`Task.produces`: a grammar's
    :func:`spaces.grammar_check.grammar_produces`)."""
    for cls in TASK_CLASSES.values():
        if cls.produces == kind:
            return cls
    raise ValueError(f"no task produces {kind!r} models; known: "
                     f"{', '.join(cls.produces for cls in TASK_CLASSES.values())}")


def summary_line(task_name: str, measures: dict) -> str:
    """One line of a task's headline measures, knowing only the task's name (as run directories record it)."""
    return task_of_record(task_name).summary(measures)

"""The run's data: the training rows (a file, a fold of one, arrays, or the embedded dataset), the test rows,
and what ``config.json`` records of them; and the checks that refuse data or a grammar a run cannot use.

Why apart from :mod:`.run`: reading and describing data is needed by the command line (``evolve``,
``check``), the estimators and the experiments without starting anything, and it is one concept.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ggp_automl.evaluation.data import Dataset, FeatureSchema, from_arrays, load_dataset, load_split
from ggp_automl.evaluation.fidelity import FidelitySchedule
from ggp_automl.evaluation.learnable import check_fold_rows, check_learnable
from ggp_automl.evaluation.task import Task, task_of_kind, task_of_record
from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.grammar import Grammar
from ggp_automl.spaces.grammar_check import grammar_produces

from .config import RunConfig
from .errors import RunError

#: ``--fold k`` uses this split seed, so that every method and seed sees the same folds
FOLD_SEED = 0
#: ``--fold k`` alone holds out fold k of this many; ``--fold k/n`` of n (an outer n-fold)
N_FOLDS = 5
MAX_FOLDS = 100


@dataclass
class RunData:
    train: Dataset
    test: Dataset | None = None
    #: for config.json: name, path, test, fold and sizes
    description: dict = field(default_factory=dict)


def default_dataset(task: str | type[Task] | None = None) -> Dataset:
    """The embedded synthetic dataset of a task (a task or its stored name; None: multi-label), its
    :attr:`~evaluation.task.Task.default_data`."""
    default = task_of_record(task).default_data
    X, Y = default.load()
    return from_arrays(X, Y, name=default.name, classes=default.classes)


def load_run_data(data: str | Path | None = None, test: str | Path | None = None,
                  fold: int | None = None, target: str | None = None, task: str | type[Task] | None = None,
                  folds: int = N_FOLDS) -> RunData:
    """The training (and test) data of a run: a file, a train/test pair, fold ``fold`` of ``folds`` (an
    outer stratified k-fold of the file), or the default (of ``task``, the grammar's: a single-label
    grammar gets the single-label default; a task or its stored name, None: multi-label).

    ``target`` names the class or label attributes (:mod:`evaluation.targets`). Rows whose targets are
    unknown ('?') are left out of both parts (counted in the description: a warning says so)."""
    if test is not None and fold is not None:
        raise RunError("give either a test set or a fold, not both")
    if data is None:
        if test is not None:
            raise RunError("a test set needs its training data (--data)")
        if target is not None:
            raise RunError("--target names attributes of --data; the embedded default dataset has its own")
        train, name = default_dataset(task), task_of_record(task).default_data.run_name
    elif test is not None:
        train, test_set = load_split(data, test, unlabelled=True, target=target)
        return describe_data(train, test_set, data, test, None, target=target)
    else:
        train = load_dataset(data, unlabelled=True, target=target)
        name = None
    train, unlabelled = _labelled(train)
    if fold is None:
        return describe_data(train, None, data, None, None, name, target, unlabelled)
    if not 2 <= folds <= MAX_FOLDS:
        raise RunError(f"an outer k-fold needs 2 to {MAX_FOLDS} folds, got {folds}")
    if not 1 <= fold <= folds:
        raise RunError(f"--fold must be between 1 and {folds}, got {fold}")
    check_fold_rows(train, folds)
    learn, held_out = train.task.kfold(train.Y, folds, np.random.default_rng(FOLD_SEED))[fold - 1]
    return describe_data(train.subset(learn), train.subset(held_out), data, None, fold, name, target, unlabelled,
                         folds)


def _labelled(data: Dataset) -> tuple[Dataset, int]:
    """``data`` without its rows of unknown targets, and how many those were."""
    kept = data.labelled()
    return kept, data.n_instances - kept.n_instances


def describe_data(train: Dataset, test: Dataset | None, data, test_path, fold, name: str | None = None,
                  target: str | None = None, unlabelled: int = 0, folds: int = N_FOLDS) -> RunData:
    """The run's data, unlabelled rows left out, and their description for ``config.json``."""
    train, more = _labelled(train)
    unlabelled += more
    test_unlabelled = 0
    if test is not None:
        test, test_unlabelled = _labelled(test)
        test = test if test.n_instances else None
    description = {
        "name": name or getattr(train, "name", None) or str(data),
        "path": None if data is None else str(Path(data).resolve()),
        "test": None if test_path is None else str(Path(test_path).resolve()),
        "target": target,
        "fold": fold, "fold_seed": FOLD_SEED if fold is not None else None,
        "folds": folds if fold is not None else None,
        "n_instances": train.n_instances, "n_features": train.n_features, "n_labels": train.n_labels,
        **train.task.describe(),
        # the features by name and type: `predict` matches new columns to them (evaluation/data/schema.py)
        "features": FeatureSchema.of(train).record(),
        "n_test": None if test is None else test.n_instances,
        "unlabelled_dropped": {"train": unlabelled, "test": test_unlabelled},
    }
    return RunData(train, test, description)


def _test_source(desc: dict) -> str | None:
    if desc.get("test"):
        return desc["test"]
    if desc.get("fold"):
        return (f"fold {desc['fold']} of {desc.get('folds') or N_FOLDS} (stratified k-fold of the file, "
                f"seed {FOLD_SEED})")
    return None


def check_run_data(config: RunConfig, data: RunData) -> list[str]:
    """Refuse (DataError) training data this run cannot learn from; its warnings otherwise
    (the rules: :mod:`evaluation.learnable`)."""
    fold = data.description.get("fold")
    warnings = check_learnable(data.train, schedule=FidelitySchedule(config.fidelity, config.fidelity_steps),
                               what="the training data" if fold is None else f"the training part of fold {fold}",
                               cv=config.cv or 0)
    dropped = data.description.get("unlabelled_dropped") or {}
    for part, what in (("train", "training"), ("test", "test")):
        if dropped.get(part):
            warnings.append(f"{dropped[part]} {what} row(s) have unknown targets ('?') and were left out"
                            + (" (the test set had no labelled row: no test measures)"
                               if part == "test" and data.test is None and data.description.get("test") else ""))
    return warnings


def check_task(grammar: Grammar, data: RunData, produced: str | None = None) -> None:
    """Refuse a grammar whose trees build models of the other task (RunError naming both); ``produced``:
    the grammar's kind when the caller has it already (:func:`spaces.grammar_check.registry_check`)."""
    produced = produced or grammar_produces(grammar)
    task = data.train.task
    if produced != task.produces:
        name = data.description.get("name", "the data")
        raise RunError(f"{grammar.path} builds {task_of_kind(produced).models}, but {name} is {task.phrase}; use "
                       f"a grammar of {task.grammar_advice()}")


def grammar_task(grammar: str | Path | Grammar) -> str:
    """``"multilabel"`` or ``"singlelabel"``: the task whose models the grammar's trees build."""
    g = grammar if isinstance(grammar, Grammar) else load_grammar(grammar)
    return task_of_kind(grammar_produces(g)).name

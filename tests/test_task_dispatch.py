"""The task dispatches itself (issue 23, item 5): whatever differs between multi-label and single-label
work — the default dataset, the words of messages and reports, the measures shown, the fitnesses — is
an attribute or a method of :class:`evaluation.task.Task`, and no module outside ``evaluation/task.py``
decides it by comparing a task's stored name ("multilabel", "singlelabel").

The scan reads the checkout's own files (product and benchmarks; tests aside) with ``ast``: a
comparison with a task name, a dict keyed by one or a ``match`` case on one is a switch, wherever it
is; a task name written anywhere else must be in :data:`ALLOWED`, each entry saying why it only
reads or writes the stored name.
"""
from __future__ import annotations

import ast
import os
from pathlib import Path

import numpy as np
import pytest

from ggp_automl.evaluation import default_data, metrics
from ggp_automl.evaluation.task import TASK_CLASSES, TASKS, MultiLabel, SingleLabel, Task, task_of_kind, task_of_record
from ggp_automl.gp.shipped import SHIPPED_GRAMMARS

ROOT = Path(__file__).resolve().parents[1]
#: where the task names may be switched on: the tasks themselves
HOME = "evaluation/task.py"
#: folders of the checkout that are not scanned (tests compare run records with the names on purpose)
NOT_SCANNED = {"tests", "docs", "build", "dist", "runs", "__pycache__", "venv"}

#: Files outside task.py that hold a task's stored name without switching on it, and why.
ALLOWED: dict[str, str] = {
    "evaluation/metrics.py": "tags each fitness with its task's stored name (Fitness.task): the task named in "
                             "Task.check_fitness's refusal, and metrics.fitness_names(name) for callers holding "
                             "only a name; the tasks use their own tables (Task.fitnesses)",
    "evaluation/default_data.py": "tags each embedded dataset with its task's stored name (DefaultData.task) for "
                                  "name()/meta()/load_default(name), called with a name only (tests); the tasks "
                                  "use their own (Task.default_data)",
    "search/options.py": "passes each stored name to metrics.fitness_names to list a task's fitnesses in "
                         "--fitness's help text (a search/ file under reorganisation, left as it is)",
}
#: Files that still switch on a task name: a debt each, with the reason it is not paid yet. The test fails
#: once a file no longer switches, so that its entry is removed.
PENDING: dict[str, str] = {}


def _python_files() -> list[str]:
    found = []
    for here, dirs, files in os.walk(ROOT):
        rel = Path(here).relative_to(ROOT)
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d.endswith(".egg-info") or d in NOT_SCANNED))
        found += [(rel / f).as_posix() for f in files if f.endswith(".py")]
    return sorted(found)


def _is_name(node: ast.AST, names) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in names


def _switches(tree: ast.AST, names=frozenset(TASKS)) -> list[tuple[int, str]]:
    """(line, what) of every comparison with a task name (``==``, ``!=``, ``in (…)``), dict keyed by
    one, and ``match`` case on one."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            operands += [e for o in operands if isinstance(o, (ast.Tuple, ast.List, ast.Set)) for e in o.elts]
            if any(_is_name(o, names) for o in operands):
                found.append((node.lineno, "a comparison with a task name"))
        elif isinstance(node, ast.Dict):
            if any(k is not None and _is_name(k, names) for k in node.keys):
                found.append((node.lineno, "a dict keyed by task names"))
        elif isinstance(node, ast.MatchValue) and _is_name(node.value, names):
            found.append((node.lineno, "a match case on a task name"))
    return found


def _literals(tree: ast.AST, names=frozenset(TASKS)) -> list[int]:
    """Lines where a task name is written as a string literal (docstrings that merely mention one aside)."""
    return [node.lineno for node in ast.walk(tree) if _is_name(node, names)]


def _parse(rel: str) -> ast.AST:
    return ast.parse((ROOT / rel).read_text(encoding="utf-8"), filename=rel)


# -- the scan ------------------------------------------------------------------------------------------------


def test_no_module_outside_task_py_switches_on_a_task_name():
    files = _python_files()
    assert HOME in files and "search/run.py" in files
    offences = [f"{rel}:{line}: {what}" for rel in files if rel != HOME and rel not in PENDING
                for line, what in _switches(_parse(rel))]
    assert not offences, ("switches on a task's name outside evaluation/task.py; give the Task an attribute or "
                          "method and call it (a name read from a record: task_of_record(name)):\n  "
                          + "\n  ".join(offences))


def test_a_task_name_is_written_only_where_it_is_stored_or_read():
    written = {rel: lines for rel in _python_files() if rel != HOME and rel not in PENDING
               and (lines := _literals(_parse(rel)))}
    unexplained = {rel: lines for rel, lines in written.items() if rel not in ALLOWED}
    assert not unexplained, (f"task names written outside evaluation/task.py (file: lines): {unexplained}; use the "
                             "task's attributes, or add the file to ALLOWED saying why it only stores or reads the name")
    stale = sorted(set(ALLOWED) - set(written))
    assert not stale, f"these files no longer write a task name: remove them from ALLOWED: {stale}"


def test_every_pending_entry_is_still_a_debt():
    paid = [rel for rel in PENDING if not (ROOT / rel).is_file() or not _switches(_parse(rel))]
    assert not paid, f"these files no longer switch on a task name: remove them from PENDING: {paid}"


def test_the_scan_finds_what_it_should():
    bad = ('x == "multilabel"\n"singlelabel" != t.name\nt in ("multilabel", "other")\n'
           'd = {"multilabel": 1}\nmatch t:\n    case "singlelabel":\n        pass\n')
    assert [line for line, _ in _switches(ast.parse(bad))] == [1, 2, 3, 4, 6]
    good = ('"""Mentions "multilabel" in a docstring."""\nname = task.name\nf(task="singlelabel")\n'
            'x == task.name\nd = {task.name: 1}\n')
    assert _switches(ast.parse(good)) == []
    assert _literals(ast.parse(good)) == [3]


# -- the tasks' attributes -----------------------------------------------------------------------------------


def test_the_tasks_are_listed_once_by_their_stored_names():
    assert TASKS == ("multilabel", "singlelabel")  # config.json and final.json keep these
    assert TASK_CLASSES == {"multilabel": MultiLabel, "singlelabel": SingleLabel}
    for cls in TASK_CLASSES.values():
        assert task_of_record(cls.name) is cls and task_of_kind(cls.produces) is cls


def test_task_of_record_reads_old_and_damaged_records_as_multi_label_and_passes_tasks_through():
    assert task_of_record(None) is MultiLabel  # runs written before the field existed
    assert task_of_record("regression") is MultiLabel
    assert task_of_record(["singlelabel"]) is MultiLabel  # a damaged config.json: not a name
    assert task_of_record(SingleLabel) is SingleLabel and task_of_record(SingleLabel(("a", "b"))) is SingleLabel
    with pytest.raises(ValueError, match="no task produces 'xyz' models; known: mlc, slc"):
        task_of_kind("xyz")


def test_the_words_of_messages_and_reports():
    ml, sl = MultiLabel(("a", "b", "c")), SingleLabel(("x", "y"))
    assert (ml.title, ml.target_word, sl.title, sl.target_word) == ("multi-label", "labels", "single-label", "classes")
    assert ml.phrase == "multi-label data (3 labels)" and sl.phrase == "single-label data (2 classes)"
    assert MultiLabel.grammar_advice() == "multi-label methods such as grammars/large.bnf"
    assert SingleLabel.grammar_advice() == "single-label classifiers such as grammars/ensembles.bnf"
    for task in (ml, sl):  # the count describe() writes is the one the run report reads back
        assert task.targets_of(task.describe()) == f"{task.n_targets} {task.target_word}"
    assert SingleLabel.targets_of({}) == "? classes"


def test_the_run_report_shows_each_tasks_columns():
    from ggp_automl.results.render import _data_line
    from ggp_automl.results.report import MEASURES, measure_columns

    assert MEASURES == {"EM": "exact_match", "HL": "hamming_loss", "FM": "f1_macro", "RL": "ranking_loss"}
    assert measure_columns("multilabel") == measure_columns(None) == MEASURES
    assert measure_columns("singlelabel") == dict(SingleLabel.headline)
    data = {"name": "d", "n_instances": 10, "n_features": 4, "n_labels": 6, "n_classes": 3}
    assert _data_line({**data, "task": "singlelabel"}) == "d: 10 instances × 4 features, 3 classes"
    assert _data_line({**data, "task": "multilabel"}) == _data_line(data) == "d: 10 instances × 4 features, 6 labels"


@pytest.mark.parametrize("cls", [MultiLabel, SingleLabel])
def test_every_measure_a_task_names_is_one_it_computes(cls: type[Task]):
    rng = np.random.default_rng(0)
    if cls is MultiLabel:
        task, Y = MultiLabel(("a", "b", "c")), rng.integers(0, 2, (20, 3))
        scores = rng.random((20, 3))
        measures = task.measures(Y, (scores > 0.5).astype(int), scores)
    else:
        task, y = SingleLabel(("a", "b", "c")), np.arange(20) % 3
        proba = rng.dirichlet(np.ones(3), 20)
        measures = task.measures(y, proba.argmax(axis=1), proba)
    named = {key for _, key in task.headline + task.columns} | set(task.report_measures) | {task.default_fitness}
    assert named <= set(measures), named - set(measures)
    assert set(task.fitness_names()) <= set(measures) and task.default_fitness in task.fitness_names()


@pytest.mark.parametrize("cls", [MultiLabel, SingleLabel])
def test_each_task_refers_to_its_own_tables(cls: type[Task]):
    """metrics and default_data tag their per-task tables with the stored name; the tags agree with the task."""
    assert cls.fitnesses and all(f.task == cls.name for f in cls.fitnesses)
    assert metrics.fitness_names(cls.name) == cls.fitness_names()
    assert cls.default_data.task == cls.name and default_data.of(cls.name) is cls.default_data
    assert default_data.of(cls) is default_data.of(cls()) is cls.default_data
    assert (SHIPPED_GRAMMARS / cls.shipped_grammar).is_file()


def test_the_fitness_registry_is_the_two_tables():
    assert tuple(metrics.FITNESS) == MultiLabel.fitness_names() + SingleLabel.fitness_names()
    with pytest.raises(ValueError, match="fitness 'fitness' is for multilabel data; for singlelabel data use one "
                                         "of accuracy, macro_f_measure, balanced_accuracy"):
        SingleLabel(("a", "b")).check_fitness("fitness")


def test_each_task_carries_its_default_dataset():
    ml, sl = MultiLabel.default_data, SingleLabel.default_data
    assert (ml.name, ml.run_name, ml.classes) == ("synthetic-default (300 instances, 20 features, 6 labels)",
                                                  "synthetic default", None)
    assert (sl.name, sl.run_name, sl.classes) == ("synthetic-default (300 instances, 20 features, 3 classes)",
                                                  "synthetic default (single-label)", ("c0", "c1", "c2"))
    assert default_data.of() is ml and default_data.meta() == default_data.META  # no task: multi-label
    X, Y = ml.load()
    assert X.shape == (300, 20) and Y.shape == (300, 6) and Y.dtype == np.int8
    X, y = sl.load()
    assert X.shape == (300, 20) and y.shape == (300,) and set(np.unique(y)) == {0, 1, 2}
    assert (sl.meta.n_labels, sl.meta.n_features, sl.meta.n_instances) == (3, 20, 300)
    assert np.array_equal(default_data.load_default("singlelabel")[1], y)


def test_a_run_without_data_gets_its_tasks_default_by_name_or_by_task():
    from ggp_automl.search.run import grammar_task, load_run_data

    for cls in TASK_CLASSES.values():
        assert grammar_task(SHIPPED_GRAMMARS / cls.shipped_grammar) == cls.name
        for task in (cls.name, cls):
            data = load_run_data(None, task=task)
            assert type(data.train.task) is cls and data.train.name == cls.default_data.name
            assert data.description["name"] == cls.default_data.run_name
            assert data.description["task"] == cls.name

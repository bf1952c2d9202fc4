"""The embedded default datasets, used when no ``--data`` is given.

A fixed synthetic problem per task (scikit-learn's ``make_multilabel_classification`` or
``make_classification`` with a fixed seed), so that the README's first command works on a
fresh machine with no data at hand, whichever grammar it searches. They are generated, not
stored, and are the same on every machine.

Each task carries its own (:attr:`evaluation.task.Task.default_data`: :data:`MULTI_LABEL`,
:data:`SINGLE_LABEL`). :func:`name`, :func:`meta` and :func:`load_default` take a task's stored name
(or the task), for callers that hold only the name: each default is tagged with it (:attr:`DefaultData.task`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ggp_automl.gp.binding import DatasetMeta

NAME = "synthetic-default (300 instances, 20 features, 6 labels)"
N_INSTANCES, N_FEATURES, N_LABELS = 300, 20, 6
META = DatasetMeta(N_LABELS, N_FEATURES, N_INSTANCES)
#: the single-label default: 3 classes
N_CLASSES = 3
SINGLE_LABEL_NAME = f"synthetic-default (300 instances, 20 features, {N_CLASSES} classes)"
SINGLE_LABEL_META = DatasetMeta(N_CLASSES, N_FEATURES, N_INSTANCES)
CLASSES = tuple(f"c{k}" for k in range(N_CLASSES))


@dataclass(frozen=True)
class DefaultData:
    """One task's embedded dataset (:attr:`evaluation.task.Task.default_data`)."""

    #: the stored name of its task (:attr:`evaluation.task.Task.name`)
    task: str
    #: the dataset's own name (``Dataset.name``, ``check``'s and ``sample``'s "where the meta comes from")
    name: str
    #: what a run calls it (``config.json``'s ``data.name``)
    run_name: str
    meta: DatasetMeta
    #: the class names (single-label); None for a label matrix
    classes: tuple[str, ...] | None
    make: Callable[[], tuple[np.ndarray, np.ndarray]]

    def load(self) -> tuple[np.ndarray, np.ndarray]:
        """``(X, Y)``: features and a 0/1 label matrix, or (single-label) the codes of :attr:`classes`."""
        return self.make()


def _multi_label() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(n_samples=N_INSTANCES, n_features=N_FEATURES, n_classes=N_LABELS,
                                          n_labels=2, allow_unlabeled=False, random_state=20190701)
    return X.astype(float), Y.astype(np.int8)


def _single_label() -> tuple[np.ndarray, np.ndarray]:
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=N_INSTANCES, n_features=N_FEATURES, n_informative=8, n_redundant=4,
                               n_classes=N_CLASSES, n_clusters_per_class=2, class_sep=1.0, random_state=20190701)
    return X.astype(float), y.astype(np.int64)


MULTI_LABEL = DefaultData("multilabel", NAME, "synthetic default", META, None, _multi_label)
SINGLE_LABEL = DefaultData("singlelabel", SINGLE_LABEL_NAME, "synthetic default (single-label)", SINGLE_LABEL_META,
                           CLASSES, _single_label)


def of(task=None) -> DefaultData:
    """The default of a task: a task class or instance, or its stored name (None: multi-label, as
    :func:`evaluation.task.task_of_record` reads a record without one)."""
    tagged = getattr(task, "default_data", None)
    if tagged is not None:
        return tagged
    return next((d for d in (MULTI_LABEL, SINGLE_LABEL) if d.task == task), MULTI_LABEL)


def name(task=None) -> str:
    return of(task).name


def meta(task=None) -> DatasetMeta:
    return of(task).meta


def load_default(task=None) -> tuple[np.ndarray, np.ndarray]:
    """``(X, Y)``: features and a 0/1 label matrix, or (single-label) the codes of :data:`CLASSES`."""
    return of(task).load()

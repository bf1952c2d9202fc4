"""The embedded default datasets, used when no ``--data`` is given.

A fixed synthetic problem per task (scikit-learn's ``make_multilabel_classification`` or
``make_classification`` with a fixed seed), so that the README's first command works on a
fresh machine with no data at hand, whichever grammar it searches. They are generated, not
stored, and are the same on every machine.
"""
from __future__ import annotations

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


def name(task: str = "multilabel") -> str:
    return NAME if task == "multilabel" else SINGLE_LABEL_NAME


def meta(task: str = "multilabel") -> DatasetMeta:
    return META if task == "multilabel" else SINGLE_LABEL_META


def load_default(task: str = "multilabel") -> tuple[np.ndarray, np.ndarray]:
    """``(X, Y)``: features and a 0/1 label matrix, or (single-label) the codes of :data:`CLASSES`."""
    if task == "multilabel":
        from sklearn.datasets import make_multilabel_classification

        X, Y = make_multilabel_classification(n_samples=N_INSTANCES, n_features=N_FEATURES, n_classes=N_LABELS,
                                              n_labels=2, allow_unlabeled=False, random_state=20190701)
        return X.astype(float), Y.astype(np.int8)
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=N_INSTANCES, n_features=N_FEATURES, n_informative=8, n_redundant=4,
                               n_classes=N_CLASSES, n_clusters_per_class=2, class_sep=1.0, random_state=20190701)
    return X.astype(float), y.astype(np.int64)

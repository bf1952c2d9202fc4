"""The embedded default dataset, used when no ``--data`` is given.

A fixed synthetic multi-label problem (scikit-learn's
``make_multilabel_classification`` with a fixed seed), so that the README's first
command works on a fresh machine with no data at hand. It is generated, not stored,
and is the same on every machine.
"""
from __future__ import annotations

import numpy as np

from gp.binding import DatasetMeta

NAME = "synthetic-default (300 instances, 20 features, 6 labels)"
N_INSTANCES, N_FEATURES, N_LABELS = 300, 20, 6
META = DatasetMeta(N_LABELS, N_FEATURES, N_INSTANCES)


def load_default() -> tuple[np.ndarray, np.ndarray]:
    """``(X, Y)``: features and a 0/1 label matrix."""
    from sklearn.datasets import make_multilabel_classification

    X, Y = make_multilabel_classification(n_samples=N_INSTANCES, n_features=N_FEATURES, n_classes=N_LABELS,
                                          n_labels=2, allow_unlabeled=False, random_state=20190701)
    return X.astype(float), Y.astype(np.int8)

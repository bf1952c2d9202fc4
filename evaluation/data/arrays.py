"""A Dataset from in-memory arrays: :func:`from_arrays`.

Why a module of its own: the scikit-learn interface (``GrammarAutoMLClassifier.fit``) and the
embedded default dataset hand the search arrays, not files. No file means no identifier rule
(the caller chose the columns) and no line numbers in messages; the inputs are converted by
:mod:`._arrays`.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ggp_automl.gp.errors import DataError

from ._arrays import _features_from, _labels_from
from .dataset import Dataset, refuse_non_finite

__all__ = ["from_arrays"]


def from_arrays(X: Any, Y: Any, *, feature_names: Sequence[str] | None = None,
                label_names: Sequence[str] | None = None,
                categorical_features: Sequence[int | str] | None = None, name: str = "arrays",
                source: str = "arrays", classes: Sequence[str] | None = None) -> Dataset:
    """A Dataset from numpy arrays, pandas DataFrames/Series, or scipy sparse matrices.

    pandas ``category`` columns keep their categories; object/string columns are coded by
    their sorted distinct values; ``None``/``NaN``/``pd.NA`` become NaN. Multi-label (no
    ``classes``): ``Y`` must hold 0/1 (or booleans); a 1-D ``Y`` is one label. Single-label:
    ``classes`` are the class names and ``Y`` the class codes ``0 .. len(classes) - 1``
    (``GrammarAutoMLClassifier`` encodes arbitrary labels so). ``categorical_features``
    (indices or names) marks further numeric columns as categorical: they must already hold
    integer codes >= 0. Identifier columns are *not* dropped here: the caller chose the columns.
    """
    Xf, x_names, categories = _features_from(X, source)
    if classes is not None:
        Yf = np.asarray(Y)
        if Yf.ndim != 1 or (Yf.size and not np.isin(Yf, np.arange(-1, len(classes))).all()):
            raise DataError(f"{source}: single-label targets must be a vector of class codes 0..{len(classes) - 1}")
        Yf, y_names = Yf.astype(np.int64), [str(label_names[0]) if label_names else "class"]
        label_names = y_names
    else:
        Yf, y_names = _labels_from(Y, source)
    if Xf.shape[0] != Yf.shape[0]:
        raise DataError(f"{source}: X has {Xf.shape[0]} rows but Y has {Yf.shape[0]}")
    if Xf.shape[0] == 0:
        raise DataError(f"{source}: the dataset has no instances")
    features = list(feature_names) if feature_names is not None else x_names or [f"x{j}" for j in range(Xf.shape[1])]
    labels = list(label_names) if label_names is not None else y_names or [f"y{k}" for k in range(Yf.shape[1])]
    if classes is None and len(labels) != Yf.shape[1]:
        raise DataError(f"{source}: {len(labels)} label names for {Yf.shape[1]} label columns")
    if len(features) != Xf.shape[1]:
        raise DataError(f"{source}: {len(features)} feature names for {Xf.shape[1]} columns")
    refuse_non_finite(Xf, features, source)
    for c in categorical_features or ():
        j = features.index(c) if isinstance(c, str) and c in features else c
        if not isinstance(j, (int, np.integer)) or not 0 <= j < Xf.shape[1]:
            raise DataError(f"{source}: categorical feature {c!r} is not a column")
        j = int(j)
        if j in categories:
            continue
        col = Xf[:, j]
        present = col[~np.isnan(col)]
        if present.size and (np.any(present < 0) or np.any(present != np.round(present))):
            raise DataError(f"{source}: categorical feature {features[j]!r} must hold integer codes >= 0")
        categories[j] = tuple(str(i) for i in range(int(present.max()) + 1 if present.size else 0))
    return Dataset(Xf, Yf, tuple(str(f) for f in features), tuple(str(lab) for lab in labels),
                   tuple(sorted(categories)), name, source, categories, (), tuple(classes or ()))

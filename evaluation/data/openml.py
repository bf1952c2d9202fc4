"""Fetching a dataset from OpenML: :func:`load_openml` (``--data openml:<name or id>``).

Why a module of its own: it is the one loader that needs the network (or scikit-learn's
cache) and scikit-learn itself, imported only when it is called; a missing network is a
DataError, not a hang. The fetched matrix goes through the same :func:`._columns._assemble`
as a file's.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ggp_automl.gp.errors import DataError

from ..targets import target_names
from ._columns import _assemble, _Attribute
from ._labels import _labels_by_name
from .dataset import Dataset

__all__ = ["load_openml"]


def load_openml(name_or_id: str | int, *, version: int | str = "active", labels: Sequence[str] | None = None,
                target: str | Sequence[str] | None = None, data_home: str | Path | None = None,
                drop_ids: bool = True, unlabelled: bool = False) -> Dataset:
    """Fetch a dataset from OpenML by name or numeric id (needs the network, or sklearn's cache).

    Targets are ``target`` (one name: a class; several: labels), else ``labels`` (0/1 labels),
    else the dataset's default target attribute(s): one is a single-label class, several are
    labels (multi-label OpenML datasets such as yeast, id 40597, list all label columns there),
    which must be 0/1 or ``FALSE``/``TRUE``. No network gives a DataError, not a hang:
    a single retry after 0.1 s.
    """
    from urllib.error import URLError

    from sklearn.datasets import fetch_openml

    where = f"openml:{name_or_id}"
    key = str(name_or_id).strip()
    kwargs: dict[str, Any] = {"data_id": int(key)} if key.isdigit() else {"name": key, "version": version}
    try:
        bunch = fetch_openml(**kwargs, as_frame=False, parser="liac-arff", target_column=None,
                             data_home=None if data_home is None else str(data_home), n_retries=1, delay=0.1)
    except (URLError, TimeoutError, ConnectionError) as exc:
        raise DataError(f"{where}: cannot download from OpenML (is the network available?): {exc}") from None
    except OSError as exc:
        raise DataError(f"{where}: cannot download from OpenML: {exc}") from None
    except ValueError as exc:
        raise DataError(f"{where}: {exc}") from None
    data = bunch.data.toarray() if hasattr(bunch.data, "toarray") else np.asarray(bunch.data, dtype=np.float64)
    names = [str(f) for f in bunch.feature_names]
    cats: Mapping[str, Sequence[str]] = getattr(bunch, "categories", None) or {}
    attrs = [_Attribute(f, "nominal", tuple(str(v) for v in cats[f]), 0) if f in cats else _Attribute(f, "numeric")
             for f in names]
    single = False
    if target is not None:
        labels = target_names(target)
        single = len(labels) == 1
    elif labels is None:
        default = (getattr(bunch, "details", None) or {}).get("default_target_attribute") or ""
        labels = [t.strip() for t in str(default).split(",") if t.strip()]
        if not labels:
            raise DataError(f"{where}: no targets found: the dataset has no default target; pass target=...")
        single = len(labels) == 1
    label_idx = _labels_by_name(list(labels), attrs, where, "the label list")
    line_of = np.arange(1, data.shape[0] + 1)             # "line" = row number for OpenML data
    ds_name = str((getattr(bunch, "details", None) or {}).get("name") or key)
    return _assemble(np.asarray(data, dtype=np.float64), attrs, label_idx, where=where, name=ds_name,
                     source=where, line_of=line_of, drop_ids=drop_ids, single=single, unlabelled=unlabelled)

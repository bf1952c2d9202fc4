"""Choosing the loader by name (:func:`load_dataset`) and loading train/test pairs (:func:`load_split`).

Why a module of its own: the command line and run configurations name data as a path or
``openml:<name or id>`` and do not say which loader to use; and a test file must be read in
terms of its training file (the same dropped identifiers, category codes and class order,
:func:`recode_classes`), which no single-file loader can know.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ggp_automl.gp.errors import DataError

from ._text import _exists
from .arff import load_arff
from .dataset import Dataset
from .delimited import load_csv
from .openml import load_openml
from .schema import FeatureSchema

__all__ = ["load_dataset", "load_new_data", "load_split", "recode_classes"]


def load_dataset(path_or_name: str | Path, **kwargs: Any) -> Dataset:
    """Load by extension: ``.arff`` (single-label, MULAN/MEKA multi-label), ``.csv``/``.tsv``
    (``target=`` required), each optionally ``.gz``/``.bz2``/``.xz``; ``openml:<name or id>``
    fetches from OpenML. Keyword arguments go to the loader (``target``, ``unlabelled``, …)."""
    if isinstance(path_or_name, str) and path_or_name.lower().startswith("openml:"):
        return load_openml(path_or_name.split(":", 1)[1], **kwargs)
    p = Path(path_or_name)
    name = p.name.lower()
    for suffix in (".gz", ".bz2", ".xz"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    if name.endswith(".arff"):
        return load_arff(p, **kwargs)
    if name.endswith(".csv") or name.endswith(".tsv"):
        return load_csv(p, **kwargs)
    if not _exists(p):
        raise DataError(f"{p}: no such file (give an .arff or .csv file, or 'openml:<name or id>')")
    raise DataError(f"{p}: unsupported format {p.suffix!r}; supported: .arff (MULAN with .xml, or MEKA '-C q'), "
                    ".csv/.tsv, optionally compressed (.gz, .bz2, .xz), and 'openml:<name or id>'")


def load_split(train: str | Path, test: str | Path, **kwargs: Any) -> tuple[Dataset, Dataset]:
    """Load a train/test pair so that both have the same features, labels and category codes.

    The identifier rule is decided on the train file and applied to the test file; the test file's
    columns are matched to the train file's by name and its category codes re-mapped to the train
    file's (:meth:`FeatureSchema.align`; values unseen in training become NaN). Mismatching files raise
    a DataError.
    """
    tr = load_dataset(train, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k not in ("drop", "drop_ids")}
    te = load_new_data(test, FeatureSchema.of(tr), Path(str(train)).name, **kwargs)
    if te.label_names != tr.label_names or (te.Y.ndim != tr.Y.ndim):
        raise DataError(f"{test}: its targets ({', '.join(te.label_names[:5])}) do not match those of "
                        f"{Path(str(train)).name} ({', '.join(tr.label_names[:5])})")
    Y = recode_classes(te, tr.classes, str(test)) if tr.Y.ndim == 1 else te.Y
    te = Dataset(te.X, Y, te.feature_names, te.label_names, te.categorical_features, te.name, te.source,
                 te.categories, te.dropped_features, tr.classes)
    return tr, te


def load_new_data(path: str | Path, schema: FeatureSchema, trained_on: str, **kwargs: Any) -> Dataset:
    """Data for a model trained on ``schema``'s features: loaded without the identifier rule (the
    training data decided which columns are features, and the identifiers it dropped are left out), its
    columns put in the training order by name and its category codes made the training codes
    (:meth:`FeatureSchema.align`; ``trained_on`` names the training data in messages). In a CSV file, text
    in a column that held numbers in training is refused at its line."""
    name = str(path).lower()
    if ".csv" in name or ".tsv" in name:
        kwargs["numeric"] = schema.numeric()
    data = load_dataset(path, drop_ids=False, **kwargs)
    return schema.align(data, str(path), trained_on)


def recode_classes(data: Dataset, classes: Sequence[str], where: str) -> np.ndarray:
    """The class codes of single-label ``data`` in terms of ``classes`` (another file's class order).

    A class of ``data`` that ``classes`` lacks is a DataError naming it: a model cannot predict it.
    """
    if tuple(data.classes) == tuple(classes):
        return data.Y
    lookup = {c: i for i, c in enumerate(classes)}
    used = np.unique(data.Y[data.Y >= 0])
    unknown = [data.classes[int(c)] for c in used if data.classes[int(c)] not in lookup]
    if unknown:
        raise DataError(f"{where}: class {unknown[0]!r} does not occur among the training classes "
                        f"({', '.join(list(classes)[:10])})")
    lut = np.array([lookup.get(c, -1) for c in data.classes] + [-1], dtype=np.int64)
    return lut[np.where(data.Y >= 0, data.Y, len(data.classes))]

"""Multi-label datasets: one in-memory form and loaders for every format the project meets.

Why a loader of our own: the benchmark files (``../shared/datasets/mlc``) come in
MULAN ARFF + XML, MEKA ARFF (``-C q`` in the relation name), dense and sparse,
with nominal features, escaped quotes in names and labels at either end, and the
search needs them as plain numpy arrays with a 0/1 label matrix. ``liac-arff``
reads them, but slowly (CPU seconds just to parse: bibtex 1.25, HumanPseAAC 1.56,
genbase 1.04). The reader below tokenises lines with ``str`` methods, converts
blocks of columns at once (``map(float)``, one dictionary per distinct nominal
declaration) and keeps all-sparse files in a scipy CSC matrix until the kept
features are densified once; it builds the complete Dataset in 0.66, 0.78 and 0.22
CPU seconds for those three, and about 3 CPU seconds for the whole shared collection.

Every loader returns a :class:`Dataset`:

* ``X`` — float64 features, ``NaN`` = missing. A nominal (or string) attribute is
  stored as its integer *code* (the index of the value in the ARFF declaration, or
  in the sorted distinct values for CSV/arrays/string attributes); its column index
  is listed in ``categorical_features`` and its value names in ``categories``. The
  model imputes and one-hot encodes these itself, so raw ARFF data need no
  preprocessing. Binary nominal attributes (``{0,1}`` in bibtex, enron, medical,
  flags; ``{YES,NO}`` in genbase) are nominal too and are listed; a consumer may
  skip one-hot encoding for features with two categories.
* ``Y`` — int8 0/1 label matrix (n × q).

Rules, applied by every loader (they are what ``../shared/datasets/mlc/README.md``
asks for, plus the decisions it leaves open):

1. **Which columns are labels.** An explicit ``labels=`` argument wins; then a MULAN
   XML file beside the ARFF (``name.xml``, or ``stem.xml`` for ``stem-train*.arff`` /
   ``stem-test*.arff``); then MEKA's ``-C q`` in the relation name (q > 0: the first q
   attributes; q < 0: the last |q|). **The XML overrides ``-C``** (medical.arff still
   carries a stale ``-C 45``).
2. **Label order is the ARFF column order** of the label attributes, not the XML
   order (they differ for yeast, enron, CHD_49, water-quality, langlog, 3sources,
   GpositiveGO). The column order is what MEKA uses for ``-C`` files, so a MULAN file
   and its MEKA twin give the same label matrix; names are in ``label_names``.
3. **Names are unescaped** (``'Swainson\\'s Thrush'`` becomes ``Swainson's Thrush``)
   before they are matched against the XML.
4. **Labels must be 0/1** (nominal ``{0,1}``, numeric 0/1, or nominal
   ``{FALSE,TRUE}``); a missing or other value is a :class:`~gp.errors.DataError`
   naming the file and line.
5. **Identifier columns are dropped**: a nominal or string *feature* whose name looks
   like an identifier (``id``, ``ID``, ``row_id``, ``proteinId``, ``uuid``, …) or whose
   value differs on every row (with at least :data:`ID_MIN_ROWS` rows, no missing
   value), e.g. genbase's ``protein`` (662 values for 662 rows). Their names are
   kept in ``Dataset.dropped_features``. ``drop_ids=False`` keeps them. Numeric
   columns are never dropped. Because the distinct-per-row rule looks at the rows,
   load a train/test pair with :func:`load_split`, which applies the train file's
   decisions (and category codes) to the test file.
6. **Sparse ARFF** (``{index value, ...}``): omitted values are 0, i.e. numeric 0 or
   the *first* declared value of a nominal attribute (Weka's semantics).
7. ``date`` attributes become seconds since the epoch (numeric); ``string``
   attributes are nominal with their sorted distinct values as categories;
   ``relational`` attributes are rejected.
8. **Feature values are finite or missing.** ``?`` (and ``NaN``, Weka's own stored form
   of a missing value) is missing; ``inf``, ``-Infinity`` or a number that overflows
   (``1e400``) is a DataError naming the line, attribute and row
   (:func:`evaluation.learnable.refuse_non_finite`; whether a dataset can be *learned*
   from — rows, constant labels — is checked before a search, in the same module).

Errors are :class:`gp.errors.DataError` whose message starts with the file name (and
``:line`` where one applies): missing/unreadable/malformed file, a directory, pipe or
device instead of a file, no labels found, a label file that does not match the ARFF,
labels that are not 0/1, infinite feature values, no instances, no features.
"""
from __future__ import annotations

import bz2
import csv
import gzip
import io
import lzma
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.gp.errors import DataError

from .learnable import refuse_non_finite
from .targets import class_column, target_names, unknown_target

__all__ = [
    "Dataset", "ID_MIN_ROWS", "from_arrays", "load_arff", "load_csv", "load_dataset", "load_openml",
    "load_split",
]

#: The distinct-value-per-row rule for identifier columns needs at least this many rows,
#: so that a small test file does not lose a genuine categorical feature by chance.
ID_MIN_ROWS = 20

_ID_NAME = re.compile(r"^(?:id|ids|identifier|uid|uuid|guid)$|[_\-\s.](?:id|uid|uuid|identifier)$", re.IGNORECASE)
_CAMEL_ID = re.compile(r"[a-z0-9](?:Id|ID)$")
_MEKA_C = re.compile(r"-C\s+(-?\d+)")
_MISSING_TOKENS = frozenset({"", "?", "na", "nan", "n/a", "null", "none"})
_TRUE_FALSE = {"0": 0, "1": 1, "false": 0, "true": 1}
_COMPRESSED = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}


# --------------------------------------------------------------------------------------------
# The dataset
# --------------------------------------------------------------------------------------------

def _locked(a: np.ndarray, dtype: type) -> np.ndarray:
    """``a`` as a read-only array of ``dtype``, copying unless it already is one."""
    out = np.asarray(a, dtype=dtype)
    if out.flags.writeable:
        out = out.copy()
        out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Dataset:
    """A dataset: features ``X`` (float, NaN = missing) and targets ``Y``.

    Multi-label: ``Y`` is an int8 (n, q) 0/1 matrix and ``label_names`` names its columns.
    Single-label: ``Y`` is an int64 vector of class codes ``0 .. len(classes) - 1``,
    ``classes`` holds the class names and ``label_names`` the class attribute's name.
    A target that is not known (``?``) is -1 (see :attr:`task` and ``Task.labelled``).
    The arrays are read-only (the dataclass is frozen, and so is its data): indexing
    (``ds.X[rows]``) gives writable copies; :meth:`subset` gives a smaller Dataset.
    """

    X: np.ndarray
    Y: np.ndarray
    feature_names: tuple[str, ...]
    label_names: tuple[str, ...]
    categorical_features: tuple[int, ...] = ()
    name: str = "dataset"
    source: str = ""
    #: For each categorical feature index: its category names; code ``i`` means ``categories[j][i]``.
    categories: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    #: Features removed as identifiers (rule 5 of the module docstring).
    dropped_features: tuple[str, ...] = ()
    #: Single-label data: the class names (empty for multi-label data).
    classes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        where = self.source or self.name
        X = _locked(self.X, np.float64)
        raw_Y = np.asarray(self.Y)
        classes = tuple(str(c) for c in self.classes)
        if raw_Y.ndim == 1:
            if not classes:
                raise DataError(f"{where}: a class vector needs its class names")
            if raw_Y.size and (not np.isin(raw_Y, np.arange(-1, len(classes))).all()):
                raise DataError(f"{where}: class codes must lie in 0..{len(classes) - 1} (-1: unknown)")
            Y = _locked(raw_Y, np.int64)
        else:
            if classes:
                raise DataError(f"{where}: class names given for a multi-label target matrix")
            if raw_Y.size and not np.isin(raw_Y, (-1, 0, 1)).all():
                raise DataError(f"{where}: Y must contain only 0 and 1")
            Y = _locked(raw_Y, np.int8)
        if X.ndim != 2 or Y.ndim not in (1, 2):
            raise DataError(f"{where}: X must be 2-D and Y 1-D (classes) or 2-D (labels), got {X.ndim}-D and "
                            f"{Y.ndim}-D")
        if X.shape[0] != Y.shape[0]:
            raise DataError(f"{where}: X has {X.shape[0]} rows but Y has {Y.shape[0]}")
        features = tuple(str(f) for f in self.feature_names)
        labels = tuple(str(lab) for lab in self.label_names)
        if len(features) != X.shape[1]:
            raise DataError(f"{where}: {len(features)} feature names for {X.shape[1]} columns")
        if len(labels) != (1 if Y.ndim == 1 else Y.shape[1]):
            raise DataError(f"{where}: {len(labels)} label names for {1 if Y.ndim == 1 else Y.shape[1]} target "
                            "column(s)")
        cats = tuple(sorted({int(i) for i in self.categorical_features}))
        if cats and (cats[0] < 0 or cats[-1] >= X.shape[1]):
            raise DataError(f"{where}: categorical feature index out of range 0..{X.shape[1] - 1}")
        categories = {int(k): tuple(str(v) for v in vals) for k, vals in dict(self.categories).items()}
        if not set(categories) <= set(cats):
            extra = sorted(set(categories) - set(cats))
            raise DataError(f"{where}: categories given for non-categorical features {extra}")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "Y", Y)
        object.__setattr__(self, "feature_names", features)
        object.__setattr__(self, "label_names", labels)
        object.__setattr__(self, "categorical_features", cats)
        object.__setattr__(self, "categories", categories)
        object.__setattr__(self, "dropped_features", tuple(self.dropped_features))
        object.__setattr__(self, "classes", classes)

    @property
    def task(self):
        """The problem type (:mod:`evaluation.task`): single-label for a class vector, else multi-label."""
        from .task import MultiLabel, SingleLabel

        return SingleLabel(self.classes) if self.Y.ndim == 1 else MultiLabel(self.label_names)

    @property
    def n_instances(self) -> int:
        return int(self.X.shape[0])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def n_labels(self) -> int:
        """Target columns: the labels of multi-label data, 1 (the class) for single-label data."""
        return 1 if self.Y.ndim == 1 else int(self.Y.shape[1])

    @property
    def label_cardinality(self) -> float:
        """Mean number of positive labels per instance (1 for single-label data)."""
        if self.Y.ndim == 1:
            return 1.0
        return float(self.Y.sum(axis=1).mean()) if self.n_instances else 0.0

    @property
    def label_density(self) -> float:
        """Label cardinality divided by the number of labels."""
        return self.label_cardinality / self.n_labels if self.n_labels else 0.0

    @property
    def meta(self) -> DatasetMeta:
        """The (L, M, N) the grammar bounds depend on; L is the number of classes for single-label data."""
        return DatasetMeta(self.task.n_targets, self.n_features, self.n_instances)

    def subset(self, rows: Sequence[int] | np.ndarray, name: str | None = None) -> Dataset:
        """The dataset restricted to ``rows`` (indices or a boolean mask), same columns."""
        idx = np.asarray(rows)
        return Dataset(self.X[idx], self.Y[idx], self.feature_names, self.label_names, self.categorical_features,
                       name or self.name, self.source, self.categories, self.dropped_features, self.classes)

    def labelled(self) -> Dataset:
        """The rows whose every target is known (the dataset itself when all are)."""
        mask = self.task.labelled(self.Y)
        return self if mask.all() else self.subset(np.flatnonzero(mask))

    def __repr__(self) -> str:
        targets = (f"{len(self.classes)} classes" if self.Y.ndim == 1
                   else f"q={self.n_labels}, card={self.label_cardinality:.3f}")
        return (f"Dataset({self.name!r}: n={self.n_instances}, m={self.n_features} "
                f"({len(self.categorical_features)} categorical), {targets})")


# --------------------------------------------------------------------------------------------
# Text helpers shared by the ARFF and CSV readers
# --------------------------------------------------------------------------------------------

def _exists(path: Path) -> bool:
    """``path.exists()``, with a name the system cannot even look up (too long) as a DataError."""
    try:
        return path.exists()
    except OSError as exc:
        raise DataError(f"{str(path)[:80]}{'…' if len(str(path)) > 80 else ''}: cannot look the file up: "
                        f"{exc.strerror or exc}") from None


def _read_text(path: Path) -> str:
    if not _exists(path):
        raise DataError(f"{path}: no such file")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a data file")
    if not path.is_file():  # a pipe or a device (/dev/zero) would be read forever
        raise DataError(f"{path}: not a regular file (a device, pipe or socket); give a data file")
    opener = _COMPRESSED.get(path.suffix.lower())
    try:
        raw = opener(path, "rb").read() if opener else path.read_bytes()
    except (OSError, EOFError, lzma.LZMAError) as exc:
        raise DataError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    if b"\0" in raw[:4096]:
        raise DataError(f"{path}: not a text file (binary content)")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def _unescape(s: str) -> str:
    if "\\" not in s:
        return s
    return re.sub(r"\\(.)", lambda m: {"n": "\n", "t": "\t", "r": "\r"}.get(m.group(1), m.group(1)), s)


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] and s[0] in "'\"":
        return _unescape(s[1:-1])
    return s


_FIELD = re.compile(r"""\s*(?:'((?:[^'\\]|\\.)*)'|"((?:[^"\\]|\\.)*)"|([^,'"]*?))\s*(,|$)""", re.DOTALL)


def _split_quoted(s: str) -> list[str]:
    """Comma-separated ARFF values, honouring '…' and "…" quoting with backslash escapes."""
    out: list[str] = []
    pos = 0
    while True:
        m = _FIELD.match(s, pos)
        if m is None:
            raise ValueError(f"unbalanced quote or stray quote character near column {pos + 1}")
        quoted = m.group(1) if m.group(1) is not None else m.group(2)
        out.append(_unescape(quoted) if quoted is not None else m.group(3))
        if m.group(4) == "":
            return out
        pos = m.end()


def _to_float(tokens: Sequence[str] | np.ndarray, missing: Iterable[str], fold_case: bool = False
              ) -> tuple[np.ndarray, int]:
    """Float conversion of string tokens (``missing`` tokens → NaN), flattened.

    Returns ``(values, -1)``, or ``(empty, i)`` where ``i`` is the flat index of the first
    token that is not a number. ``map(float)`` over Python strings is several times faster
    than numpy's unicode-array ``astype``; the per-token loop runs only when a token fails.
    """
    seq = tokens.ravel() if isinstance(tokens, np.ndarray) else tokens
    try:
        return np.fromiter(map(float, seq), dtype=np.float64, count=len(seq)), -1
    except ValueError:
        pass
    missing = frozenset(missing)
    out = np.empty(len(seq), dtype=np.float64)
    for i, tok in enumerate(seq):
        try:
            out[i] = float(tok)
        except ValueError:
            if (tok.strip().lower() if fold_case else tok) in missing:
                out[i] = np.nan
            else:
                return np.empty(0), i
    return out, -1


def _codes(tokens: Sequence[str] | np.ndarray, mapping: Mapping[str, int], missing: Iterable[str]
           ) -> tuple[np.ndarray, int]:
    """Map string tokens through ``mapping`` (``missing`` tokens → NaN), flattened.

    Returns ``(codes, -1)``, or ``(empty, i)`` for the flat index of the first unknown token.
    """
    seq = tokens.ravel() if isinstance(tokens, np.ndarray) else tokens
    try:
        return np.fromiter(map(mapping.__getitem__, seq), dtype=np.float64, count=len(seq)), -1
    except KeyError:
        pass
    full: dict[str, float] = {k: float(v) for k, v in mapping.items()}
    full.update({m: np.nan for m in missing})
    out = np.empty(len(seq), dtype=np.float64)
    for i, tok in enumerate(seq):
        value = full.get(tok)
        if value is None:
            return np.empty(0), i
        out[i] = value
    return out, -1


def _looks_like_id(name: str, kind: str, n_declared: int, n_rows: int, codes: Callable[[], np.ndarray]) -> bool:
    """Rule 5: an identifier-like name (with more than two distinct values, so a bag-of-words
    feature called ``id`` survives), or a different value on every one of at least
    :data:`ID_MIN_ROWS` rows. ``codes`` is called only when needed: a nominal attribute
    declaring fewer values than there are rows cannot be distinct per row."""
    named = bool(_ID_NAME.search(name.strip()) or _CAMEL_ID.search(name.strip()))
    could_be_unique = n_rows >= ID_MIN_ROWS and (kind == "string" or n_declared >= n_rows)
    if not (named or could_be_unique):
        return False
    values = codes()
    present = values[~np.isnan(values)]
    distinct = len(np.unique(present))
    if named and distinct > 2:
        return True
    return could_be_unique and present.size == n_rows and distinct == n_rows


@dataclass
class _Attribute:
    name: str
    kind: str                      # numeric | nominal | string | date
    values: tuple[str, ...] = ()   # nominal: declared values; string: filled from the data
    line: int = 0


def _label_column(values: np.ndarray, attr: _Attribute, where: str, line_of: np.ndarray,
                  unlabelled: bool = False) -> np.ndarray:
    """A label attribute's internal values (numbers or nominal codes) as 0/1, or a DataError.

    ``unlabelled``: a missing value ('?') is -1 (data to predict) instead of an error."""
    if unlabelled and np.isnan(values).any():
        known = ~np.isnan(values)
        out = np.full(len(values), -1, dtype=np.int8)
        out[known] = _label_column(values[known], attr, where, line_of[known])
        return out
    if np.isnan(values).any():
        row = int(np.flatnonzero(np.isnan(values))[0])
        raise DataError(f"{where}:{line_of[row]}: label '{attr.name}' is missing ('?'); labels must be 0 or 1")
    if attr.kind in ("nominal", "string"):
        lut = np.array([_TRUE_FALSE.get(v.strip().lower(), -1) for v in attr.values], dtype=np.int64)
        codes = values.astype(np.int64)
        out = lut[codes] if len(lut) else np.full(len(codes), -1)
        bad = np.flatnonzero(out < 0)
        if bad.size:
            row = int(bad[0])
            raise DataError(f"{where}:{line_of[row]}: label '{attr.name}' has value {attr.values[codes[row]]!r}; "
                            "labels must be 0 or 1")
        return out.astype(np.int8)
    bad = np.flatnonzero((values != 0) & (values != 1))
    if bad.size:
        row = int(bad[0])
        raise DataError(f"{where}:{line_of[row]}: label '{attr.name}' has value {values[row]:g}; "
                        "labels must be 0 or 1")
    return values.astype(np.int8)


def _assemble(V: Any, attrs: list[_Attribute], label_idx: list[int], *, where: str, name: str,
              source: str, line_of: np.ndarray, drop_ids: bool, drop: Sequence[str] = (),
              single: bool = False, explicit: bool = True, unlabelled: bool = False) -> Dataset:
    """Build a Dataset from the internal value matrix (numbers / nominal codes), by column roles.

    ``V`` is a dense ndarray or a scipy CSC matrix (all-sparse ARFF). ``single``: the one target
    attribute is a class (:func:`evaluation.targets.class_column`; ``explicit`` whether the user
    named it); otherwise the targets are 0/1 labels (``unlabelled``: a missing label is -1).
    """
    dense = isinstance(V, np.ndarray)

    def column(a: int) -> np.ndarray:
        return V[:, a] if dense else V[:, [a]].toarray().ravel()

    n = V.shape[0]
    if n == 0:
        raise DataError(f"{where}: the dataset has no instances")
    if not label_idx:
        raise DataError(f"{where}: no labels found")
    label_set = set(label_idx)
    label_idx = sorted(label_set)                       # rule 2: ARFF column order
    classes: tuple[str, ...] = ()
    if single:
        a = label_idx[0]
        Y, classes = class_column(column(a), attrs[a].kind, attrs[a].values, attrs[a].name, where, line_of, explicit)
    else:
        Y = np.empty((n, len(label_idx)), dtype=np.int8)
        for k, a in enumerate(label_idx):
            Y[:, k] = _label_column(column(a), attrs[a], where, line_of, unlabelled)
    unknown_drop = set(drop) - {a.name for a in attrs}
    if unknown_drop:
        raise DataError(f"{where}: cannot drop unknown feature(s) {sorted(unknown_drop)}")
    keep: list[int] = []
    dropped: list[str] = []
    for a, attr in enumerate(attrs):
        if a in label_set:
            continue
        if attr.name in drop:
            dropped.append(attr.name)
            continue
        if drop_ids and attr.kind in ("nominal", "string") and _looks_like_id(
                attr.name, attr.kind, len(attr.values), n, lambda a=a: column(a)):
            dropped.append(attr.name)
            continue
        keep.append(a)
    if not keep:
        raise DataError(f"{where}: no features left (all {len(attrs)} attributes are labels or identifiers)")
    if not dense:
        X = V[:, keep].toarray()
    elif keep == list(range(keep[0], keep[-1] + 1)):
        X = V[:, keep[0]:keep[-1] + 1].copy()                # a slice copies much faster than a gather
    else:
        X = np.take(V, keep, axis=1)
    refuse_non_finite(X, [attrs[a].name for a in keep], where, line_of)
    X.flags.writeable = False
    categorical = [j for j, a in enumerate(keep) if attrs[a].kind in ("nominal", "string")]
    categories = {j: attrs[keep[j]].values for j in categorical}
    return Dataset(X, Y, tuple(attrs[a].name for a in keep), tuple(attrs[a].name for a in label_idx),
                   tuple(categorical), name, source, categories, tuple(dropped), classes)


# --------------------------------------------------------------------------------------------
# ARFF
# --------------------------------------------------------------------------------------------

_ATTR_NAME = re.compile(r"""\s*('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^\s{]+)\s*(.*)$""", re.DOTALL)
_NUMERIC_TYPES = {"numeric", "real", "integer", "int", "float", "double"}


def _parse_attribute(line: str, path: Path, number: int) -> _Attribute:
    m = _ATTR_NAME.match(line, len("@attribute"))
    if m is None or not m.group(2).strip():
        raise DataError(f"{path}:{number}: malformed @attribute line (expected '@attribute <name> <type>')")
    name, spec = _unquote(m.group(1)), m.group(2).strip()
    low = spec.lower()
    if spec.startswith("{"):
        if not spec.endswith("}"):
            raise DataError(f"{path}:{number}: nominal attribute '{name}': missing closing '}}'")
        try:
            values = _split_quoted(spec[1:-1]) if spec[1:-1].strip() else []
        except ValueError as exc:
            raise DataError(f"{path}:{number}: nominal attribute '{name}': {exc}") from None
        values = [v.strip() for v in values]
        if len(set(values)) != len(values):
            raise DataError(f"{path}:{number}: nominal attribute '{name}' declares a value twice")
        return _Attribute(name, "nominal", tuple(values), number)
    kind = low.split()[0]
    if kind in _NUMERIC_TYPES:
        return _Attribute(name, "numeric", (), number)
    if kind == "string":
        return _Attribute(name, "string", (), number)
    if kind == "date":
        return _Attribute(name, "date", (), number)
    if kind == "relational":
        raise DataError(f"{path}:{number}: relational attribute '{name}' is not supported")
    raise DataError(f"{path}:{number}: attribute '{name}' has unknown type {spec.split()[0]!r}")


def _parse_header(lines: list[str], path: Path) -> tuple[str, list[_Attribute], int]:
    relation, attrs = "", []
    for i, raw in enumerate(lines):
        line = raw.strip()
        if not line or line.startswith("%"):
            continue
        low = line[:10].lower()
        if low.startswith("@relation"):
            relation = _unquote(line[len("@relation"):].strip())
        elif low.startswith("@attribute"):
            attrs.append(_parse_attribute(line, path, i + 1))
        elif low.startswith("@data"):
            if not attrs:
                raise DataError(f"{path}:{i + 1}: @data before any @attribute")
            return relation, attrs, i + 1
        elif low.startswith("@end"):
            continue
        else:
            raise DataError(f"{path}:{i + 1}: unexpected line in the ARFF header: {line[:60]!r}")
    raise DataError(f"{path}: not an ARFF file (no @data section)")


_SPARSE_ENTRY = re.compile(r"""\s*(\S+)\s+('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"|[^,]*?)\s*(?:,|$)""")


def _parse_data(lines: list[str], start: int, attrs: list[_Attribute], path: Path) -> tuple[Any, np.ndarray]:
    """The data section as an (n × d) matrix of internal values, and each row's line number.

    The matrix is a dense ndarray, or a scipy CSC matrix when every row is sparse (bibtex:
    the dense block is then built once, for the kept features only).
    """
    d = len(attrs)
    dense_rows: list[list[str]] = []
    dense_at: list[int] = []
    sp_idx: list[str] = []
    sp_val: list[str] = []
    sp_row: list[int] = []
    sp_count: list[int] = []
    line_of: list[int] = []
    for i in range(start, len(lines)):
        s = lines[i].strip()
        if not s or s[0] == "%":
            continue
        row = len(line_of)
        line_of.append(i + 1)
        if s[0] == "{":
            if not s.endswith("}"):
                raise DataError(f"{path}:{i + 1}: sparse row without a closing '}}'")
            inner = s[1:-1]
            if "'" in inner or '"' in inner:
                pairs = [(m.group(1), _unquote(m.group(2))) for m in _SPARSE_ENTRY.finditer(inner) if m.group(0)]
                toks = [t for p in pairs for t in p]
            else:
                toks = inner.replace(",", " ").split()
            if len(toks) % 2:
                raise DataError(f"{path}:{i + 1}: malformed sparse row (expected '{{index value, ...}}')")
            sp_idx.extend(toks[0::2])
            sp_val.extend(toks[1::2])
            sp_count.append(len(toks) // 2)
            sp_row.append(row)
        else:
            if "'" in s or '"' in s:
                try:
                    toks = [t.strip() for t in _split_quoted(s)]
                except ValueError as exc:
                    raise DataError(f"{path}:{i + 1}: {exc}") from None
            else:
                toks = s.replace(" ", "").replace("\t", "").split(",")
            if len(toks) == d + 1 and toks[-1].startswith("{") and toks[-1].endswith("}"):
                toks.pop()                                      # an instance weight {w}: ignored
            if len(toks) != d:
                raise DataError(f"{path}:{i + 1}: {len(toks)} values, but {d} attributes are declared")
            dense_rows.append(toks)
            dense_at.append(row)
    n = len(line_of)
    lines_arr = np.asarray(line_of, dtype=np.int64)
    V: Any = np.zeros((n, d), dtype=np.float64) if dense_rows else None
    # Columns are converted in blocks: all numeric attributes at once, and the nominal
    # attributes grouped by their declared values (genbase: 1185 × {YES,NO}; bibtex: 1995 × {0,1}).
    blocks: dict[tuple[str, ...] | None, list[int]] = {}
    for a, attr in enumerate(attrs):
        if attr.kind == "numeric":
            blocks.setdefault(None, []).append(a)
        elif attr.kind == "nominal":
            blocks.setdefault(attr.values, []).append(a)
    singles = [a for a, attr in enumerate(attrs) if attr.kind in ("string", "date")]
    if dense_rows:
        S = np.empty((len(dense_rows), d), dtype=object)
        S[:] = dense_rows
        rows = np.asarray(dense_at, dtype=np.int64)
        for values, cols in blocks.items():
            block = S[:, cols]
            out, bad = _block(block, values)
            if bad >= 0:
                r, c = divmod(bad, len(cols))
                _bad_value(path, lines_arr[rows[r]], attrs[cols[c]], block[r, c])
            V[np.ix_(rows, cols)] = out.reshape(len(rows), len(cols))
        for a in singles:
            V[rows, a] = _convert(S[:, a], attrs[a], path, lines_arr[rows])
    if sp_idx:
        entry_row = np.repeat(np.asarray(sp_row, dtype=np.int64), sp_count)
        try:
            cols = np.fromiter(map(int, sp_idx), dtype=np.int64, count=len(sp_idx))
        except (ValueError, OverflowError):
            bad = next(k for k, t in enumerate(sp_idx) if not _is_index(t))
            raise DataError(f"{path}:{lines_arr[entry_row[bad]]}: sparse index {sp_idx[bad]!r} "
                            f"is not an attribute number (0..{d - 1})") from None
        out_of_range = np.flatnonzero((cols < 0) | (cols >= d))
        if out_of_range.size:
            k = int(out_of_range[0])
            raise DataError(f"{path}:{lines_arr[entry_row[k]]}: sparse index {cols[k]} is out of range 0..{d - 1}")
        same_row = entry_row[1:] == entry_row[:-1]
        if np.any(same_row & (cols[1:] <= cols[:-1])):      # indices not increasing: look for a repeat
            keyed = entry_row * d + cols
            order = np.argsort(keyed, kind="stable")
            repeats = np.flatnonzero(np.diff(keyed[order]) == 0)
            if repeats.size:
                k = int(order[repeats[0] + 1])
                raise DataError(f"{path}:{lines_arr[entry_row[k]]}: sparse index {cols[k]} appears twice in the row")
        vals = np.empty(len(sp_val), dtype=object)
        vals[:] = sp_val
        entry_value = np.empty(len(vals), dtype=np.float64)
        group_of_attr = np.full(d, -1, dtype=np.int64)
        keys = list(blocks)
        for g, key in enumerate(keys):
            group_of_attr[blocks[key]] = g
        entry_group = group_of_attr[cols]
        for g, key in enumerate(keys):
            sel = np.flatnonzero(entry_group == g) if len(keys) > 1 or singles else np.arange(len(cols))
            if not sel.size:
                continue
            out, bad = _block(vals[sel], key)
            if bad >= 0:
                k = int(sel[bad])
                _bad_value(path, lines_arr[entry_row[k]], attrs[cols[k]], vals[k])
            entry_value[sel] = out
        for a in singles:
            sel = np.flatnonzero(cols == a)
            entry_value[sel] = _convert(vals[sel], attrs[a], path, lines_arr[entry_row[sel]])
        if V is None:          # all rows sparse: stay sparse until the feature block is densified
            from scipy import sparse
            V = sparse.csc_matrix((entry_value, (entry_row, cols)), shape=(n, d))
        else:
            V[entry_row, cols] = entry_value
    if V is None:
        V = np.zeros((n, d), dtype=np.float64)
    return V, lines_arr


def _is_index(token: str) -> bool:
    """Whether ``int`` reads ``token`` as a 64-bit integer (the test behind a failed bulk conversion)."""
    try:
        return -2**63 <= int(token) < 2**63
    except ValueError:
        return False


def _block(tokens: np.ndarray, values: tuple[str, ...] | None) -> tuple[np.ndarray, int]:
    """Numeric (``values is None``) or nominal tokens as internal values; see _to_float / _codes."""
    if values is None:
        return _to_float(tokens, ("?",))
    return _codes(tokens, {v: i for i, v in enumerate(values)}, ("?",))


def _bad_value(path: Path, line: int, attr: _Attribute, token: str) -> None:
    if attr.kind == "numeric":
        raise DataError(f"{path}:{line}: attribute '{attr.name}' is numeric but the value is {token!r}")
    shown = ", ".join(attr.values[:8]) + (", …" if len(attr.values) > 8 else "")
    raise DataError(f"{path}:{line}: value {token!r} is not declared for nominal attribute '{attr.name}' "
                    f"(declared: {{{shown}}})")


def _convert(tokens: np.ndarray, attr: _Attribute, path: Path, lines: np.ndarray) -> np.ndarray:
    """A string or date attribute's tokens as internal values (codes, or seconds since the epoch)."""
    if attr.kind == "string":
        present = sorted({str(t) for t in tokens} - {"?"})
        attr.values = tuple(present)
        return _codes(tokens, {v: i for i, v in enumerate(present)}, ("?",))[0]
    out = np.full(len(tokens), np.nan)
    for k, tok in enumerate(tokens):
        if tok == "?":
            continue
        try:
            out[k] = np.datetime64(str(tok).replace(" ", "T"), "s").astype(np.int64)
        except ValueError:
            raise DataError(f"{path}:{lines[k]}: date attribute '{attr.name}' has unreadable value {str(tok)!r} "
                            "(expected ISO-8601, e.g. 2001-04-03T12:12:12)") from None
    return out


def _xml_beside(path: Path) -> Path | None:
    stem = path.name
    for suffix in (".gz", ".bz2", ".xz"):
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
    stem = re.sub(r"\.arff$", "", stem, flags=re.IGNORECASE)
    base = re.sub(r"-(?:train|test)\d*$", "", stem, flags=re.IGNORECASE)
    for candidate in dict.fromkeys((stem, base)):
        xml = path.with_name(candidate + ".xml")
        if _exists(xml):
            return xml
    return None


def _xml_labels(xml: Path) -> list[str]:
    try:
        root = ET.parse(xml).getroot()
    except (ET.ParseError, OSError) as exc:
        raise DataError(f"{xml}: cannot read the MULAN label file: {exc}") from None
    names = [el.get("name") for el in root.iter() if el.tag.rsplit("}", 1)[-1] == "label"]
    names = [n for n in names if n is not None]
    if not names:
        raise DataError(f"{xml}: no <label name=...> elements: not a MULAN label file")
    return names


def _labels_by_name(names: Sequence[str], attrs: list[_Attribute], where: str, what: str) -> list[int]:
    index = {a.name: i for i, a in enumerate(attrs)}
    out, missing = [], []
    for name in names:
        i = index.get(name, index.get(_unescape(name), index.get(name.strip())))
        (missing if i is None else out).append(name if i is None else i)
    if missing:
        raise DataError(f"{where}: {len(missing)} of the {len(names)} labels in {what} are not attributes of the "
                        f"data file, e.g. {missing[0]!r}; the label file does not match")
    if len(set(out)) != len(out):
        raise DataError(f"{where}: {what} names a label twice")
    return out


def _meka_labels(q: int, d: int, where: str) -> list[int]:
    if q == 0 or abs(q) >= d:
        raise DataError(f"{where}: -C {q} with {d} attributes; need 1 <= |q| < number of attributes")
    return list(range(q)) if q > 0 else list(range(d + q, d))


LabelSpec = int | str | Path | Sequence[str] | None


def _resolve_labels(labels: LabelSpec, attrs: list[_Attribute], relation: str, path: Path) -> list[int] | None:
    """The multi-label label columns by rule 1; None when the file names none (a single-label file)."""
    d = len(attrs)
    if isinstance(labels, bool):
        raise TypeError("labels must be an int (MEKA -C q), an XML path, or label names")
    if isinstance(labels, (int, np.integer)):
        return _meka_labels(int(labels), d, f"{path}")
    if isinstance(labels, Path) or (isinstance(labels, str) and labels.lower().endswith(".xml")):
        xml = Path(labels)
        if not _exists(xml):
            raise DataError(f"{xml}: no such label file")
        return _labels_by_name(_xml_labels(xml), attrs, f"{xml}", f"{xml.name} (for {path.name})")
    if isinstance(labels, str):
        labels = [labels]
    if labels is not None:
        return _labels_by_name(list(labels), attrs, f"{path}", "the labels argument")
    xml = _xml_beside(path)
    if xml is not None:                                   # rule 1: the XML overrides -C
        return _labels_by_name(_xml_labels(xml), attrs, f"{xml}", f"{xml.name} (for {path.name})")
    m = _MEKA_C.search(relation)
    if m is None:
        return None
    return _meka_labels(int(m.group(1)), d, f"{path}")


def _resolve_targets(target, labels: LabelSpec, attrs: list[_Attribute], relation: str, path: Path
                     ) -> tuple[list[int], bool, bool]:
    """``(target columns, single-label?, named by the user?)`` (:mod:`evaluation.targets`)."""
    names = target_names(target)
    if names is not None:
        index = {a.name: i for i, a in enumerate(attrs)}
        missing = [n for n in names if n not in index]
        if missing:
            raise unknown_target(missing[0], [a.name for a in attrs], str(path))
        return [index[n] for n in names], len(names) == 1, True
    label_idx = _resolve_labels(labels, attrs, relation, path)
    if label_idx is not None:
        return label_idx, False, True
    if len(attrs) < 2:
        raise DataError(f"{path}: one attribute only: nothing to learn from")
    return [len(attrs) - 1], True, False


def _strip_suffixes(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".bz2", ".xz", ".arff", ".csv", ".tsv"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
    return name


def load_arff(path: str | Path, labels: LabelSpec = None, *, target: str | Sequence[str] | None = None,
              unlabelled: bool = False, drop_ids: bool = True, drop: Sequence[str] = (),
              name: str | None = None) -> Dataset:
    """Load an ARFF file, dense or sparse (also ``.gz``/``.bz2``/``.xz``): multi-label (MULAN ARFF + XML,
    MEKA ``-C q``) or single-label (a nominal class attribute, the last one by default).

    ``target``: the class attribute's name (single-label) or several label names (multi-label);
    see :mod:`evaluation.targets`. ``labels``: multi-label only — an ``int`` q with MEKA's meaning,
    a path to a MULAN XML file, or the label attribute names. ``unlabelled``: accept missing
    labels ('?', coded -1: data to predict); a missing class is always accepted. ``drop``: feature
    names to remove; ``drop_ids``: apply the identifier rule. See the module docstring.
    """
    p = Path(path)
    text = _read_text(p)
    lines = text.split("\n")
    relation, attrs, data_start = _parse_header(lines, p)
    seen: dict[str, int] = {}
    for attr in attrs:
        if attr.name in seen:
            raise DataError(f"{p}:{attr.line}: attribute '{attr.name}' is declared twice "
                            f"(first on line {seen[attr.name]})")
        seen[attr.name] = attr.line
    label_idx, single, explicit = _resolve_targets(target, labels, attrs, relation, p)
    V, line_of = _parse_data(lines, data_start, attrs, p)
    return _assemble(V, attrs, label_idx, where=str(p), name=name or _strip_suffixes(p), source=str(p),
                     line_of=line_of, drop_ids=drop_ids, drop=drop, single=single, explicit=explicit,
                     unlabelled=unlabelled)


# --------------------------------------------------------------------------------------------
# CSV
# --------------------------------------------------------------------------------------------

def load_csv(path: str | Path, label_columns: Sequence[str] | str | None = None, *,
             target: str | Sequence[str] | None = None, unlabelled: bool = False, delimiter: str | None = None,
             drop_ids: bool = True, drop: Sequence[str] = (), name: str | None = None) -> Dataset:
    """Load a CSV file with a header row. ``target`` names the class column (single-label) or the
    0/1 label columns (multi-label); ``label_columns`` always names 0/1 label columns.

    A column is numeric when every non-missing cell parses as a number, otherwise nominal
    (categories = its sorted distinct values). Missing: empty, ``?``, ``NA``, ``NaN``,
    ``null``, ``None`` (any case). ``delimiter`` defaults to ``,`` (``\\t`` for ``.tsv``).
    """
    p = Path(path)
    names = target_names(target)
    if names is None and label_columns is None:
        raise DataError(f"{p}: a CSV file does not say which columns are the targets: name the class column "
                        "(--target COLUMN) or the 0/1 label columns (--target A,B,C)")
    single = names is not None and len(names) == 1
    label_columns = names if names is not None else (
        [label_columns] if isinstance(label_columns, str) else list(label_columns))
    text = _read_text(p)
    if delimiter is None:
        delimiter = "\t" if ".tsv" in p.name.lower() else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, skipinitialspace=True)
    try:
        header = next(reader, None)
        while header is not None and not any(h.strip() for h in header):
            header = next(reader, None)
        if header is None:
            raise DataError(f"{p}: empty file (no header row)")
        header = [h.strip() for h in header]
        rows: list[list[str]] = []
        line_of: list[int] = []
        for row in reader:
            if not row or not any(c.strip() for c in row):
                continue
            if len(row) != len(header):
                raise DataError(f"{p}:{reader.line_num}: {len(row)} fields, but the header has {len(header)}")
            rows.append([c.strip() for c in row])
            line_of.append(reader.line_num)
    except csv.Error as exc:
        raise DataError(f"{p}:{reader.line_num}: malformed CSV: {exc}") from None
    dup = {h for h in header if header.count(h) > 1}
    if dup:
        raise DataError(f"{p}:1: duplicate column name(s) {sorted(dup)}")
    missing = [c for c in label_columns if c not in header]
    if missing:
        raise unknown_target(missing[0], header, str(p))
    if not rows:
        raise DataError(f"{p}: the dataset has no instances")
    S = np.empty((len(rows), len(header)), dtype=object)
    S[:] = rows
    lines_arr = np.asarray(line_of, dtype=np.int64)
    attrs: list[_Attribute] = []
    V = np.empty(S.shape, dtype=np.float64)
    for j, col in enumerate(header):
        values, bad = _to_float(S[:, j], _MISSING_TOKENS, fold_case=True)
        if bad < 0:
            attrs.append(_Attribute(col, "numeric", (), 1))
            V[:, j] = values
            continue
        distinct = np.unique(S[:, j]).tolist()
        missing_here = [t for t in distinct if t.lower() in _MISSING_TOKENS]
        present = [t for t in distinct if t.lower() not in _MISSING_TOKENS]
        V[:, j] = _codes(S[:, j], {v: i for i, v in enumerate(present)}, missing_here)[0]
        attrs.append(_Attribute(col, "nominal", tuple(present), 1))
    label_idx = [header.index(c) for c in label_columns]
    return _assemble(V, attrs, label_idx, where=str(p), name=name or _strip_suffixes(p), source=str(p),
                     line_of=lines_arr, drop_ids=drop_ids, drop=drop, single=single, unlabelled=unlabelled)


# --------------------------------------------------------------------------------------------
# Arrays (numpy, pandas, scipy.sparse)
# --------------------------------------------------------------------------------------------

def _is_frame(obj: Any) -> bool:
    return hasattr(obj, "columns") and hasattr(obj, "dtypes") and hasattr(obj, "iloc")


def _is_series(obj: Any) -> bool:
    return hasattr(obj, "dtype") and hasattr(obj, "index") and hasattr(obj, "to_numpy") and not _is_frame(obj)


def _column_from_objects(values: np.ndarray, null: np.ndarray) -> tuple[np.ndarray, tuple[str, ...] | None]:
    """A column of Python objects: numeric if every non-null value is a number, else nominal codes."""
    present = values[~null]
    out = np.full(len(values), np.nan)
    try:
        out[~null] = [float(v) for v in present]
        return out, None
    except (TypeError, ValueError):
        pass
    cats = tuple(sorted({str(v) for v in present}))
    lookup = {c: i for i, c in enumerate(cats)}
    out[~null] = [lookup[str(v)] for v in present]
    return out, cats


def _object_null(values: np.ndarray) -> np.ndarray:
    return np.array([v is None or (isinstance(v, float) and np.isnan(v)) or type(v).__name__ in ("NAType", "NaTType")
                     for v in values], dtype=bool)


def _features_from(X: Any, where: str) -> tuple[np.ndarray, list[str] | None, dict[int, tuple[str, ...]]]:
    """Features as float with nominal columns coded; returns (X, column names or None, categories)."""
    if hasattr(X, "toarray") and hasattr(X, "nnz"):            # scipy.sparse
        X = X.toarray()
    if _is_frame(X):
        names = [str(c) for c in X.columns]
        cols, categories = [], {}
        for j, col in enumerate(X.columns):
            s = X[col]
            if str(s.dtype) == "category":
                codes = s.cat.codes.to_numpy().astype(np.float64)
                codes[codes < 0] = np.nan
                cols.append(codes)
                categories[j] = tuple(str(c) for c in s.cat.categories)
            elif getattr(s.dtype, "kind", "O") in "biuf":
                cols.append(s.to_numpy(dtype=np.float64, na_value=np.nan))
            else:
                values = s.to_numpy(dtype=object)
                out, cats = _column_from_objects(values, np.asarray(s.isna().to_numpy(), dtype=bool))
                cols.append(out)
                if cats is not None:
                    categories[j] = cats
        arr = np.column_stack(cols) if cols else np.empty((len(X), 0))
        return arr, names, categories
    arr = np.asarray(X)
    if arr.ndim != 2:
        raise DataError(f"{where}: X must be 2-D (n_instances × n_features), got shape {arr.shape}")
    if arr.dtype.kind in "biuf":
        return arr.astype(np.float64), None, {}
    cols, categories = [], {}
    for j in range(arr.shape[1]):
        values = arr[:, j].astype(object)
        out, cats = _column_from_objects(values, _object_null(values))
        cols.append(out)
        if cats is not None:
            categories[j] = cats
    return (np.column_stack(cols) if cols else np.empty((arr.shape[0], 0))), None, categories


def _labels_from(Y: Any, where: str) -> tuple[np.ndarray, list[str] | None]:
    if hasattr(Y, "toarray") and hasattr(Y, "nnz"):
        Y = Y.toarray()
    names = None
    if _is_frame(Y):
        names = [str(c) for c in Y.columns]
        columns = [Y[c].to_numpy(dtype=object) for c in Y.columns]
        Y = np.column_stack(columns) if columns else np.empty((len(Y), 0))
    elif _is_series(Y):
        names = [str(Y.name)] if Y.name is not None else None
        Y = Y.to_numpy(dtype=object)
    arr = np.asarray(Y)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"{where}: Y must be 2-D (n_instances × n_labels), got shape {arr.shape}")
    if arr.dtype.kind == "b":
        return arr.astype(np.int8), names
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{where}: labels must be 0 or 1 (found non-numeric values)") from None
    bad = np.argwhere(~np.isin(num, (0.0, 1.0)))
    if bad.size:
        r, c = bad[0]
        value = arr[r, c].item() if hasattr(arr[r, c], "item") else arr[r, c]
        label = repr(names[c]) if names else str(c)
        raise DataError(f"{where}: label column {label} has value {value!r} in row {r}; labels must be 0 or 1")
    return num.astype(np.int8), names


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


# --------------------------------------------------------------------------------------------
# OpenML
# --------------------------------------------------------------------------------------------

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


# --------------------------------------------------------------------------------------------
# Train/test pairs and the dispatcher
# --------------------------------------------------------------------------------------------

def load_split(train: str | Path, test: str | Path, **kwargs: Any) -> tuple[Dataset, Dataset]:
    """Load a train/test pair so that both have the same features, labels and category codes.

    The identifier rule is decided on the train file and applied to the test file; string
    attributes' codes in the test file are re-mapped to the train file's categories
    (values unseen in training become NaN). Mismatching files raise a DataError.
    """
    tr = load_dataset(train, **kwargs)
    kwargs = {k: v for k, v in kwargs.items() if k not in ("drop", "drop_ids")}
    te = load_dataset(test, drop_ids=False, drop=tr.dropped_features, **kwargs)
    if te.feature_names != tr.feature_names:
        only_test = sorted(set(te.feature_names) - set(tr.feature_names))[:3]
        only_train = sorted(set(tr.feature_names) - set(te.feature_names))[:3]
        raise DataError(f"{test}: its features do not match {Path(str(train)).name} (only in test: {only_test}, "
                        f"only in train: {only_train}, or a different order)")
    if te.label_names != tr.label_names or (te.Y.ndim != tr.Y.ndim):
        raise DataError(f"{test}: its targets ({', '.join(te.label_names[:5])}) do not match those of "
                        f"{Path(str(train)).name} ({', '.join(tr.label_names[:5])})")
    Y = recode_classes(te, tr.classes, str(test)) if tr.Y.ndim == 1 else te.Y
    X = np.array(te.X)
    for j in tr.categorical_features:
        want, have = tr.categories.get(j, ()), te.categories.get(j, ())
        if want == have:
            continue
        lookup = {v: i for i, v in enumerate(want)}
        lut = np.array([lookup.get(v, np.nan) for v in have] + [np.nan], dtype=np.float64)
        col = X[:, j]
        codes = np.where(np.isnan(col), len(have), col).astype(np.int64)
        X[:, j] = lut[codes]
    te = Dataset(X, Y, te.feature_names, te.label_names, tr.categorical_features, te.name, te.source,
                 tr.categories, te.dropped_features, tr.classes)
    return tr, te


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

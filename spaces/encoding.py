"""The preprocessing in front of every learner: impute, one-hot encode — once per data view.

Every compiled model (:mod:`spaces.model`) imputes missing values (numeric: the column's mean;
nominal: its most frequent code) and one-hot encodes nominal columns (a column of two values
becomes one 0/1 column, WEKA's and scikit-learn's ``drop="if_binary"``; an unseen value encodes as
all zeros). This is what a scikit-learn ``ColumnTransformer`` of ``SimpleImputer`` and
``OneHotEncoder`` computes, and the models did exactly that until issue 25; it cost 25–30 ms per
fit on a 120-row data set — more than the whole fit of a cheap learner, for every candidate,
every fold and every base fit of a search — because each step re-validates its input and
dispatches through several layers. :class:`FeatureEncoder` computes the same numbers (tested
against that transformer) with a few numpy operations.

And a search fits thousands of candidates on the same few arrays (one data view: the learning
rows of a hold-out, or each training part of a cross-validation), so while a candidate is evaluated
(inside :func:`shared_encodings`, which :mod:`evaluation.candidate` enters) the encoding is
computed once per array and process and shared: :func:`fit_encoded` and :func:`encoded` remember
their result for the array *object* they were given (held by a weak reference, so a new array
with the same address is never mistaken for it), in a cache bounded in bytes. Outside it — a
user's ``predict`` on an array they may change in place between calls — nothing is remembered.
The shared encoded arrays are read-only: a learner that wrote into its input would otherwise
change every later candidate's data.
"""
from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np
from sklearn.base import BaseEstimator, TransformerMixin

#: bytes of encoded arrays kept per process (a data view of bibtex's learning rows is about 90 MB)
CACHE_BYTES = 512 * 2 ** 20


def _most_frequent(values: np.ndarray) -> float:
    """The most frequent non-missing value, the smallest on ties (``SimpleImputer``'s rule); 0 when none."""
    values = values[~np.isnan(values)]
    if values.size == 0:
        return 0.0
    uniq, counts = np.unique(values, return_counts=True)
    return float(uniq[np.argmax(counts)])


class FeatureEncoder(TransformerMixin, BaseEstimator):
    """Mean-impute numeric columns; most-frequent-impute and one-hot encode the ``categorical_features``.

    Output: the numeric columns in their order, then each nominal column's indicator columns in
    column order (categories sorted; one column for a two-valued column), as float64. A column
    with no value at all in training imputes to 0 (``keep_empty_features=True``).
    """

    def __init__(self, categorical_features=None):
        self.categorical_features = categorical_features

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=float)
        n = X.shape[1]
        cat = sorted({int(i) for i in (self.categorical_features or [])})
        if any(i < 0 or i >= n for i in cat):
            raise ValueError(f"categorical_features {cat} out of range for {n} columns")
        self.n_features_in_ = n
        self.numeric_ = np.array([i for i in range(n) if i not in set(cat)], dtype=np.intp)
        self.nominal_ = np.array(cat, dtype=np.intp)
        numeric = X[:, self.numeric_]
        present = (~np.isnan(numeric)).sum(axis=0)
        sums = np.nansum(numeric, axis=0)
        self.means_ = np.divide(sums, present, out=np.zeros(len(self.numeric_)), where=present > 0)
        self.modes_ = np.array([_most_frequent(X[:, j]) for j in self.nominal_], dtype=float)
        self.categories_ = []
        for j, mode in zip(self.nominal_, self.modes_):
            column = X[:, j]
            self.categories_.append(np.unique(np.where(np.isnan(column), mode, column)))
        # the indicator columns: (nominal column position, category value); binary columns keep the second
        self.indicators_ = [(k, c) for k, cats in enumerate(self.categories_)
                            for c in (cats[1:] if len(cats) == 2 else cats)]
        return self

    def transform(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} features; the encoder was fitted with "
                             f"{self.n_features_in_}")
        out = np.empty((X.shape[0], len(self.numeric_) + len(self.indicators_)), dtype=float)
        numeric = X[:, self.numeric_]
        np.copyto(numeric, self.means_, where=np.isnan(numeric))
        out[:, :len(self.numeric_)] = numeric
        if len(self.nominal_):
            nominal = X[:, self.nominal_]
            np.copyto(nominal, self.modes_, where=np.isnan(nominal))
            columns = np.fromiter((k for k, _ in self.indicators_), dtype=np.intp, count=len(self.indicators_))
            values = np.fromiter((c for _, c in self.indicators_), dtype=float, count=len(self.indicators_))
            out[:, len(self.numeric_):] = nominal[:, columns] == values
        return out


class _EncodingCache:
    """Encoded arrays by the identity of (encoder, input array), least recently used out, bounded in bytes."""

    def __init__(self, limit: int):
        self.limit = limit
        self._items: OrderedDict[tuple, tuple] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: tuple, sources: tuple):
        with self._lock:
            hit = self._items.get(key)
            if hit is None or any(ref() is not obj for ref, obj in zip(hit[0], sources)):
                return None
            self._items.move_to_end(key)
            return hit[1]

    def put(self, key: tuple, sources: tuple, value: tuple, nbytes: int) -> None:
        if nbytes > self.limit:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._bytes -= old[2]
            self._items[key] = (tuple(weakref.ref(obj) for obj in sources), value, nbytes)
            self._bytes += nbytes
            while self._bytes > self.limit:
                _, (_, _, size) = self._items.popitem(last=False)
                self._bytes -= size

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0


_CACHE = _EncodingCache(CACHE_BYTES)
_SHARING: ContextVar[bool] = ContextVar("ggp_automl_shared_encodings", default=False)


@contextmanager
def shared_encodings():
    """Within this block (in this thread), encodings are remembered per array object: for arrays
    that nobody changes while it lasts (a data view of the search)."""
    token = _SHARING.set(True)
    try:
        yield
    finally:
        _SHARING.reset(token)


#: the encoded arrays made here, by id (checked against a weak reference): finite float64 matrices
#: that the learners need not validate again (:func:`is_validated`)
_VALIDATED: dict[int, weakref.ref] = {}


#: the shared encoded arrays among them, by id: read-only, so what is computed from one may be kept
#: (:func:`per_view`)
_FROZEN: dict[int, weakref.ref] = {}


def _frozen(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    _register(_FROZEN, a)
    return mark_validated(a)


def _register(registry: dict, a: np.ndarray) -> None:
    if len(registry) > 64:
        for key in [k for k, ref in list(registry.items()) if ref() is None]:
            registry.pop(key, None)
    registry[id(a)] = weakref.ref(a)


def _registered(registry: dict, a) -> bool:
    ref = registry.get(id(a))
    return ref is not None and ref() is a


def mark_validated(a: np.ndarray) -> np.ndarray:
    """Register ``a`` as checked: the caller vouches that it is a finite 2-d float array and stays
    finite while it lives (the label network's buffer of features and 0/1 parent labels, made from a
    checked matrix and rewritten thousands of times in a Gibbs sweep). The learners then skip
    validating it, as they skip the shared encoding."""
    _register(_VALIDATED, a)
    return a


def is_validated(X) -> bool:
    """Whether ``X`` is a shared encoded array of this process (2-d, float64, finite, read-only) or
    another array registered by :func:`mark_validated`."""
    return _registered(_VALIDATED, X)


def fit_encoded(X: np.ndarray, categorical_features) -> tuple[FeatureEncoder, np.ndarray]:
    """A :class:`FeatureEncoder` fitted on ``X`` and ``X`` encoded; within :func:`shared_encodings`, once
    per array (read-only)."""
    cat = tuple(sorted({int(i) for i in (categorical_features or [])}))
    if not _SHARING.get():
        encoder = FeatureEncoder(list(cat) or None).fit(X)
        return encoder, encoder.transform(X)
    key = ("fit", id(X), cat)
    hit = _CACHE.get(key, (X,))
    if hit is not None:
        return hit
    encoder = FeatureEncoder(list(cat) or None).fit(X)
    Xt = _frozen(encoder.transform(X))
    _CACHE.put(key, (X,), (encoder, Xt), Xt.nbytes)
    _CACHE.put(("transform", id(encoder), id(X)), (encoder, X), (Xt,), 0)  # the same array: no new bytes
    return encoder, Xt


def encoded(encoder, X: np.ndarray) -> np.ndarray:
    """``encoder.transform(X)``; within :func:`shared_encodings`, once per (encoder, array) pair
    (read-only). Any fitted
    transformer works (a model saved before issue 25 holds a ``ColumnTransformer``)."""
    if not _SHARING.get():
        return np.asarray(encoder.transform(X), dtype=float)
    key = ("transform", id(encoder), id(X))
    hit = _CACHE.get(key, (encoder, X))
    if hit is not None:
        return hit[0]
    Xt = _frozen(np.asarray(encoder.transform(X), dtype=float))
    _CACHE.put(key, (encoder, X), (Xt,), Xt.nbytes)
    return Xt


def per_view(X: np.ndarray, name: str, compute):
    """``compute(X)``, once per shared encoded array (:func:`is_validated`) and ``name``: what depends on
    the features alone — the sorted order of every column, say — is then computed once per data view
    and process, and reused by the q binary problems of a binary relevance, the members of an
    ensemble and every later candidate on that view. Any other ``X`` (also a writable one registered
    by :func:`mark_validated`): computed each time.
    The result's arrays (a tuple's, or an object's attributes) are made read-only."""
    if not _registered(_FROZEN, X):     # a checked but writable array may change under the key
        return compute(X)
    key = ("view", id(X), name)
    hit = _CACHE.get(key, (X,))
    if hit is not None:
        return hit[0]
    value = compute(X)
    arrays = [v for v in (value if isinstance(value, tuple) else vars(value).values() if hasattr(value, "__dict__")
                          else [value]) if isinstance(v, np.ndarray)]
    for a in arrays:
        a.flags.writeable = False
    _CACHE.put(key, (X,), (value,), sum(a.nbytes for a in arrays))
    return value


#: a label network's node matrices [shared encoded array, parent labels], by id: the shared array it starts with
_APPENDED: dict[int, tuple[weakref.ref, weakref.ref]] = {}


def mark_appended(Z: np.ndarray, X: np.ndarray) -> np.ndarray:
    """Register ``Z`` as ``X`` with more columns after it (the caller vouches that ``Z[:, :X.shape[1]]``
    equals ``X`` while ``Z`` lives), when ``X`` is a shared encoded array: a learner can then take what
    depends on ``X`` alone from :func:`per_view` and compute only the appended columns' part (a chain's
    node j learns on [X, y_<j]; the X part is the same for every node). Returns ``Z``."""
    if _registered(_FROZEN, X) and Z.ndim == 2 and Z.shape[0] == X.shape[0] and Z.shape[1] >= X.shape[1]:
        if len(_APPENDED) > 64:
            for key in [k for k, (z, x) in list(_APPENDED.items()) if z() is None or x() is None]:
                _APPENDED.pop(key, None)
        _APPENDED[id(Z)] = (weakref.ref(Z), weakref.ref(X))
    return Z


def appended_to(Z) -> np.ndarray | None:
    """The shared encoded array ``Z`` starts with (:func:`mark_appended`), or None."""
    refs = _APPENDED.get(id(Z))
    if refs is None or refs[0]() is not Z:
        return None
    return refs[1]()


def per_view_columns(X: np.ndarray, name: str, compute, join):
    """:func:`per_view` for a ``compute`` that treats every column on its own: on a matrix registered by
    :func:`mark_appended`, ``join(per_view(view, name, compute), compute(the appended columns))`` — the
    view's part shared, only the new columns computed — else ``per_view(X, name, compute)``."""
    view = appended_to(X)
    if view is None:
        return per_view(X, name, compute)
    return join(per_view(view, name, compute), compute(X[:, view.shape[1]:]))


def clear_cache() -> None:
    """Forget every encoded array of this process."""
    _CACHE.clear()

"""The label network: one binary base model per label, over the features and that label's parents.

Every classifier chain (PCC, MCC, PMCC, BCC: ``chains.py``) and every trellis or dependency
network (CT, CDN, CDT: ``trellis.py``) is a :class:`LabelNetwork`: model j is trained on
``[X, true Y[:, parents_j]]`` (MEKA trains chains on the true parent labels). Here are the
network, how its features are prepared (:func:`as_features`, :class:`AugmentedRows`), the seeds
its nodes are fitted with, the classifier chain's shape (:func:`fit_chain`) and
:class:`NetworkEstimator`, the fit-time plumbing of all seven estimators. Inference over a
directed network is ``network_inference.py``; Gibbs sampling is the trellis module's.

It was the first part of ``chains.py``: a module of its own, so that the trellis methods build on
the network without importing the chain estimators (and BCC, a chain, can use the dependency
matrices of ``label_dependency.py`` without importing the trellises).

A node's parent labels are appended to ``X`` in **label-index order**, so a node's model depends
only on its parent *set*: chain-order searches reuse the unchanged nodes of the current chain
instead of rebuilding the whole chain (MEKA rebuilds it). Large batches are cut into blocks of
about ``_BLOCK_FLOATS`` floats so memory stays bounded, and every node fit calls
:func:`spaces.deadline.check_deadline`.
"""
from __future__ import annotations

import numpy as np
from sklearn import config_context

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.encoding import is_validated, mark_appended, mark_validated
from ggp_automl.spaces.slc.base import fit_slc, positive_scores

from .base import MLCEstimator

#: a block of augmented rows passed to a base learner holds at most this many floats (~32 MB)
_BLOCK_FLOATS = 1 << 22


# ============================================================================ helpers

def make_rng(random_state, *tags: int) -> np.random.Generator:
    """A generator derived from ``random_state`` and integer ``tags`` (None: fresh entropy)."""
    if random_state is None:
        return np.random.default_rng()
    return np.random.default_rng([int(t) for t in tags] + [int(random_state) % (1 << 32)])


def node_seed(random_state, label: int) -> int:
    """The seed handed to :func:`fit_slc` for label ``label`` (same in every candidate chain)."""
    return int(make_rng(random_state, 7, label).integers(1 << 31))


def as_features(X) -> np.ndarray:
    """Dense float features, checked finite once (inner base-learner calls then skip the check)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity; the model imputes before the multi-label method")
    return X


class AugmentedRows:
    """``X`` with room for label columns, so ``[X, parent labels]`` is built without copying X.

    Thousands of base-learner calls (Gibbs sweeps, chain searches on the training set)
    each need ``[X, y_parents]`` for all rows; writing the parent values into a buffer
    that already holds X saves an ``hstack`` per call. The returned view is overwritten
    by the next call. Used only when the buffer fits in ``_BLOCK_FLOATS`` floats.
    """

    def __init__(self, X: np.ndarray, max_parents: int):
        self.X = X
        self.max_parents = int(max_parents)
        self._buffer = None
        #: id(model) -> (model, its appended scorer over these rows or None)
        self.scorers: dict[int, tuple] = {}

    @property
    def shape(self) -> tuple[int, int]:
        return self.X.shape

    @property
    def buffer(self) -> np.ndarray | None:
        """The buffer (made on first use; None when it would exceed ``_BLOCK_FLOATS``)."""
        n, M = self.X.shape
        if self._buffer is None and 0 < self.max_parents and n * (M + self.max_parents) <= _BLOCK_FLOATS:
            self._buffer = np.empty((n, M + self.max_parents))
            self._buffer[:, :M] = self.X
            # one view per parent count, registered as checked (X was checked by as_features, the
            # parent values are 0/1), so the base learners' thousands of calls skip validation
            self.views = [mark_validated(self._buffer[:, :M + k]) for k in range(self.max_parents + 1)]
        return self._buffer

    def scorer(self, model):
        """The model's ``appended_scorer`` over these rows (the features' part of its score computed
        once, kept per model), or None when it has none."""
        cache = self.scorers
        hit = cache.get(id(model))
        if hit is None or hit[0] is not model:
            make = getattr(model, "appended_scorer", None)
            classes = getattr(model, "classes_", None)
            binary = classes is not None and len(classes) == 2 and classes[0] == 0 and classes[1] == 1
            hit = cache[id(model)] = (model, make(self.X) if make is not None and binary else None)
        return hit[1]

    def with_parents(self, values: np.ndarray) -> np.ndarray:
        k = values.shape[1]
        if k == 0:
            return self.X
        M = self.X.shape[1]
        self.buffer[:, M:M + k] = values
        return self.views[k]


class LabelNetwork:
    """L binary base models over ``[X, Y[:, parents[j]]]``; ``order`` is the inference order.

    A fitted helper shared by the chain and trellis estimators (not itself an estimator).
    For directed methods (chains, trellises) ``order`` is topological: every parent of a
    label comes before it. For CDN/CDT the parents are undirected neighbours and ``order``
    is only the order in which the nodes were fitted.
    """

    def __init__(self, parents, order=None):
        self.parents = [np.sort(np.asarray(pa, dtype=np.intp)) for pa in parents]
        L = len(self.parents)
        self.order = np.arange(L) if order is None else np.asarray(order, dtype=np.intp)
        self.models: list = [None] * L

    @property
    def n_labels(self) -> int:
        return len(self.parents)

    @property
    def max_parents(self) -> int:
        return max((pa.size for pa in self.parents), default=0)

    def rows_of(self, X) -> "AugmentedRows":
        """``X`` prepared for repeated full-batch calls (see :class:`AugmentedRows`)."""
        return X if isinstance(X, AugmentedRows) else AugmentedRows(X, self.max_parents)

    def fit(self, base, X, Y, sample_weight=None, random_state=0, reuse: "LabelNetwork | None" = None,
            nodes: "NodeCache | None" = None):
        """Fit every node; nodes whose parent set equals ``reuse``'s are shared, not refitted, and so are
        those ``nodes`` remembers (a chain-order search meets the same parent sets again and again)."""
        # [checked features, 0/1 labels] is as checked as the features: the node's learner need not scan it
        trusted = is_validated(X)
        for j in self.order:
            check_deadline()
            pa = self.parents[j]
            if reuse is not None and np.array_equal(reuse.parents[j], pa):
                self.models[j] = reuse.models[j]
                continue
            known = nodes.get(j, pa) if nodes is not None else None
            if known is not None:
                self.models[j] = known
                continue
            Z = np.hstack([X, Y[:, pa]]) if pa.size else X
            if trusted and Z is not X:
                mark_appended(mark_validated(Z), X)
            self.models[j] = fit_slc(base, Z, Y[:, j], sample_weight, node_seed(random_state, j))
            if nodes is not None:
                nodes.put(j, pa, self.models[j])
        return self


    def proba(self, j: int, X: np.ndarray, parent_values: np.ndarray, rows=None) -> np.ndarray:
        """P(y_j = 1) for each row of ``parent_values`` (the values of ``parents[j]``).

        ``rows`` maps those rows to rows of ``X`` (default: aligned with ``X``); work is
        cut into blocks so that no augmented matrix exceeds ``_BLOCK_FLOATS`` floats.
        ``X`` may be an :class:`AugmentedRows` (rows aligned). Base learners skip their
        finiteness check: features are checked once on entry (:func:`as_features`).
        """
        model = self.models[j]
        if isinstance(X, AugmentedRows):
            score = X.scorer(model)
            if score is not None:
                return np.clip(score(parent_values, rows)[:, 1], 0.0, 1.0)
            if X.buffer is not None and rows is None:
                with config_context(assume_finite=True):
                    return np.clip(positive_scores(model, X.with_parents(parent_values)), 0.0, 1.0)
            X = X.X
        count = parent_values.shape[0]
        width = X.shape[1] + parent_values.shape[1]
        step = max(1, _BLOCK_FLOATS // max(1, width))
        out = np.empty(count)
        for start in range(0, count, step):
            stop = min(count, start + step)
            Xb = X[start:stop] if rows is None else X[rows[start:stop]]
            if parent_values.shape[1]:
                Xb = np.hstack([Xb, parent_values[start:stop]])
            with config_context(assume_finite=True):
                out[start:stop] = positive_scores(model, Xb)
        return np.clip(out, 0.0, 1.0)


class NodeCache:
    """Fitted nodes by (label, parent set), for one chain-order search (MCC, PMCC).

    A node's model depends only on its label and parent *set* (parents are appended in label order,
    and its seed is the label's), so a proposal that meets a parent set seen before gets the very
    model a refit would give. Swap proposals from an order that is kept for many rejected proposals
    meet the same sets again and again. Bounded by the bytes of the models' arrays (a lazy learner
    keeps its training rows), oldest out first. It also keeps every rated order's rating: a
    proposal rated before needs no chain at all when its rating decides it.
    """

    def __init__(self, max_bytes: int = 64 << 20):
        self.max_bytes = int(max_bytes)
        self._items: dict[tuple[int, bytes], tuple[object, int]] = {}
        self._bytes = 0
        self.hits = 0
        self._ratings: dict[bytes, float] = {}

    def rating(self, order: np.ndarray) -> float | None:
        """What :meth:`rate` recorded for this label order (None: not rated yet)."""
        return self._ratings.get(np.asarray(order).tobytes())

    def rate(self, order: np.ndarray, value: float) -> None:
        """Remember a chain order's rating (its payoff is a function of the order alone)."""
        self._ratings[np.asarray(order).tobytes()] = value

    def get(self, j: int, parents: np.ndarray):
        hit = self._items.get((int(j), parents.tobytes()))
        if hit is None:
            return None
        self.hits += 1
        return hit[0]

    def put(self, j: int, parents: np.ndarray, model) -> None:
        size = _array_bytes(model)
        if size > self.max_bytes:
            return
        self._items[(int(j), parents.tobytes())] = (model, size)
        self._bytes += size
        while self._bytes > self.max_bytes:
            _, (_, old) = self._items.pop(next(iter(self._items)))
            self._bytes -= old


def _array_bytes(obj, depth: int = 0) -> int:
    """The bytes of the numpy arrays a fitted model holds (attributes, lists, nested estimators)."""
    if isinstance(obj, np.ndarray):
        return obj.nbytes
    if depth > 4:
        return 0
    if isinstance(obj, (list, tuple)):
        return sum(_array_bytes(v, depth + 1) for v in obj)
    if isinstance(obj, dict):
        return sum(_array_bytes(v, depth + 1) for v in obj.values())
    if hasattr(obj, "__dict__"):
        return sum(_array_bytes(v, depth + 1) for v in vars(obj).values()) + 512
    return 0


def chain_parents(order) -> list[np.ndarray]:
    """Classifier-chain parents: every label earlier in ``order``."""
    order = np.asarray(order, dtype=np.intp)
    parents = [None] * order.size
    for pos, j in enumerate(order):
        parents[j] = order[:pos]
    return parents


def fit_chain(base, X, Y, order, sample_weight=None, random_state=0, reuse=None,
              nodes: NodeCache | None = None) -> LabelNetwork:
    """A fitted classifier chain (CC) with the given label order."""
    return LabelNetwork(chain_parents(order), order).fit(base, X, Y, sample_weight, random_state, reuse, nodes)


# ============================================================================ estimators

class NetworkEstimator(MLCEstimator):
    """Shared fit-time plumbing: validated arrays and the base learner."""

    def _prepare(self, X, Y, sample_weight):
        X = as_features(X)
        Y = self._validate_Y(Y)
        if X.shape[0] != Y.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but Y has {Y.shape[0]}")
        self.n_features_in_ = X.shape[1]
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return X, Y, sw

    def _check_X(self, X):
        X = as_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, expected {self.n_features_in_}")
        return X

"""The tree learners of the single-label level: J48, DecisionStump, RandomForest,
RandomTree and REPTree (search-space notes §1.1.5, §1.1.7, §1.1.13, §1.1.16, §1.1.19).

scikit-learn grows every tree (entropy criterion, fast and vectorised); what makes
each one its WEKA namesake happens around the growth and is implemented here and in
the ``_tree_*`` helpers:

* ``_tree_flat``    an editable array copy of a grown tree, with vectorised routing;
* ``_tree_c45``     C4.5's split test (minSplit, MDL correction), collapsing, and
                    error-based pruning with subtree raising;
* ``_tree_holdout`` WEKA's stratified folds and reduced-error pruning.

Conventions shared by the custom trees (J48, REPTree, RandomTree):

* inputs are numeric (the model one-hot encodes nominal attributes), so every split
  is binary, ``x <= t`` — which is also what WEKA does with numeric attributes;
* instance weights are rescaled to sum to the number of rows passed (WEKA's
  convention: its meta-learners keep weights summing to N), so the weight thresholds
  (``-M``) and C4.5's error counts mean the same whatever the scale of the weights a
  meta-learner passes; rows of weight 0 are then dropped;
* a leaf that no training row reaches predicts its parent's distribution (WEKA's
  "empty" leaves), or none at all with RandomTree's ``-U`` (an all-zero row);
* inputs are validated as every SLC's (:mod:`spaces.slc._validation`): finite floats, any
  class labels, ``n_features_in_`` checked at prediction.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.ensemble import RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from ._tree_c45 import apply_split_test, collapse, prune
from ._tree_flat import LEAF, FlatTree
from ..encoding import is_validated, mark_validated, per_view_columns
from ._tree_grow import grow as grow_tree
from ._tree_grow import sorted_columns
from ._tree_grow import preload as preload_tree_grower  # noqa: F401 - the search calls it before forking
from ._tree_holdout import reduced_error_prune, stratified_folds
from ._validation import fit_inputs, labels, predict_inputs

_SEED_MAX = np.iinfo(np.int32).max


def _checked_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`sorted_columns` of a checked float64 matrix; its float32 copy is registered as checked too
    when no value overflows float32 (then the trees' input checks need not run again)."""
    X32, order = sorted_columns(X)
    if np.isfinite(X32).all():
        mark_validated(X32)
    return X32, order


def _tree_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_checked_columns` of a checked ``X``, once per data view; for a label network's node matrix
    [view, parent labels] only the parents' columns are sorted (each column is sorted on its own)."""
    return per_view_columns(X, "tree-columns", _checked_columns, _join_columns)


def _join_columns(view: tuple[np.ndarray, np.ndarray], extra: tuple[np.ndarray, np.ndarray]):
    X32 = np.hstack([view[0], extra[0]])
    if is_validated(view[0]) and is_validated(extra[0]):
        mark_validated(X32)
    return X32, np.vstack([view[1], extra[1]])


def weka_k_features(n_features: int, requested: int) -> int:
    """WEKA's ``-K`` for RandomForest/RandomTree: 0 means ``int(log2(M) + 1)``; at most M."""
    k = requested if requested > 0 else int(math.log2(n_features) + 1) if n_features > 0 else 1
    return max(1, min(k, n_features))


class _WekaTree(ClassifierMixin, BaseEstimator):
    """Shared fitting preamble and prediction for trees held as a :class:`FlatTree`."""

    def _prepare(self, X, y, sample_weight):
        """float32 ``X`` (as sklearn trees see it), class indices, weights summing to n, whether they are
        all 1, and every column's sorted row order when it is shared (None: computed when growing)."""
        shared = None
        if is_validated(X):
            # a data view's shared encoding: its float32 copy and sorted columns are the same for every
            # label of a binary relevance and every later tree on it (issue 25)
            shared = _tree_columns(X)
        X, y_idx, w = fit_inputs(self, X if shared is None else shared[0], y, sample_weight, dtype=np.float32)
        self.n_classes_ = self.classes_.size
        w = w * (X.shape[0] / w.sum())
        keep = w > 0                      # weightless rows carry nothing (WEKA's resamples drop them)
        order = None if shared is None else shared[1]
        if not keep.all():
            X, y_idx, w, order = X[keep], y_idx[keep], w[keep], None
        unit = bool(np.allclose(w, 1.0, rtol=0.0, atol=1e-9))
        return X, y_idx.astype(np.intp), w, unit, order

    def _finish(self, tree: FlatTree, counts: np.ndarray, laplace: bool = False,
                unclassified: bool = False):
        """Store the compacted tree, its per-node class weights and probabilities.

        ``unclassified``: a leaf without weight gets an all-zero distribution (WEKA's
        RandomTree ``-U``) instead of its nearest weighted ancestor's.
        """
        dist = tree.node_distributions(counts, laplace=laplace)
        if unclassified:
            dist[(tree.left == LEAF) & (counts.sum(axis=1) <= 0)] = 0.0
        self.tree_, kept = tree.compact()
        self.node_weights_ = counts[kept]
        self.node_proba_ = dist[kept]
        return self

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, dtype=np.float32, fitted="tree_")
        return self.node_proba_[self.tree_.route(X)]

    def predict(self, X) -> np.ndarray:
        return labels(self, self.predict_proba(X))

    def get_depth(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.depth

    def get_n_leaves(self) -> int:
        check_is_fitted(self, "tree_")
        return self.tree_.n_leaves


class J48Classifier(_WekaTree):
    """C4.5 decision tree, as WEKA's J48.

    Grown as scikit-learn's entropy tree with ``min_samples_leaf = min_num_obj`` (weight, when
    weighted) — by the compiled presorted grower of :mod:`spaces.slc._tree_grow` (4–5× faster; the
    first attribute wins an exact tie of gains) — then post-processed as J48 does:

    1. C4.5's split test: a node stays split only if some attribute has a split point
       with at least ``minSplit = clamp(0.1 W / K, M, 25)`` weight per side and a
       positive information gain, less the MDL penalty ``log2(#split points) / W``
       when ``use_mdl_correction`` (WEKA ``-J`` turns it off);
    2. collapsing (``collapse_tree``; ``-O`` turns it off): cut subtrees that do not
       lower the training error — applied whether or not the tree is pruned, as in WEKA;
    3. unless ``unpruned`` (``-U``): error-based pruning with confidence
       ``confidence_factor`` (``-C``) and subtree raising (``subtree_raising``; ``-S``
       turns it off). Like WEKA, a confidence above 0.5 adds no pessimistic errors;
    4. ``use_laplace`` (``-A``): leaf probabilities ``(n_c + 1) / (n + K)``.

    Deviations: the split at a node is the best information-gain split
    under ``min_samples_leaf``, not C4.5's best gain-ratio split under minSplit
    (scikit-learn offers no gain ratio); the split test above only decides whether a
    node is split. Binary splits (``-B``) concern nominal attributes only, and inputs
    here are numeric (one-hot encoded), so every split is binary already.
    """

    def __init__(self, min_num_obj=2, confidence_factor=0.25, unpruned=False, collapse_tree=True,
                 subtree_raising=True, use_mdl_correction=True, use_laplace=False, random_state=None):
        self.min_num_obj = min_num_obj
        self.confidence_factor = confidence_factor
        self.unpruned = unpruned
        self.collapse_tree = collapse_tree
        self.subtree_raising = subtree_raising
        self.use_mdl_correction = use_mdl_correction
        self.use_laplace = use_laplace
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if not self.confidence_factor > 0:
            raise ValueError(f"confidence_factor must be > 0, got {self.confidence_factor!r}")
        if self.min_num_obj < 1:
            raise ValueError(f"min_num_obj must be >= 1, got {self.min_num_obj!r}")
        X, y, w, unit, order = self._prepare(X, y, sample_weight)
        k, mno = self.n_classes_, float(self.min_num_obj)
        if unit:
            limits = {"min_samples_leaf": max(1, int(math.ceil(mno)))}
        else:   # sklearn's minimum leaf weight is this fraction of the total weight
            limits = {"min_weight_fraction_leaf": min(0.5, max(0.0, (mno - 1e-9) / w.sum()))}
        # the same tree grown from presorted columns (compiled; None without numba)
        # the same tree grown from presorted columns, C4.5's split test applied as it grows (compiled;
        # None without numba)
        grown = grow_tree(X, y, w, k, limits.get("min_samples_leaf", 1),
                     limits.get("min_weight_fraction_leaf", 0.0) * w.sum(), unit, mno, bool(self.use_mdl_correction),
                     order=order)
        if grown is not None:
            tree = FlatTree(*grown)
        else:
            tree = FlatTree.from_sklearn(DecisionTreeClassifier(
                criterion="entropy", random_state=self.random_state, **limits).fit(X, y, sample_weight=w).tree_)
        counts = tree.class_weights(X, y, w, k)
        tree.cut_weak_splits(counts, min_split_weight=2 * mno, min_child_weight=mno)
        if grown is None:
            apply_split_test(tree, X, y, w, k, mno, bool(self.use_mdl_correction))
        if self.collapse_tree:
            collapse(tree, counts)
        if not self.unpruned:
            prune(tree, counts, X, y, w, k, float(self.confidence_factor), bool(self.subtree_raising))
        return self._finish(tree, counts, laplace=bool(self.use_laplace))


class REPTreeClassifier(_WekaTree):
    """WEKA's REPTree: information-gain tree with reduced-error pruning and back-fitting.

    With pruning (default; ``no_pruning`` is WEKA ``-P``), the rows are split into
    ``num_folds`` stratified folds; the tree grows on all but the first, which is then
    used to prune it bottom-up (a subtree goes when its hold-out errors are not below
    its root's), and finally added to the leaf class counts (back-fitting).

    Growth follows REPTree's rules: the best information-gain split is taken only if
    the node weighs at least ``2 * min_num``, both children at least ``min_num``, and
    the gain is positive — otherwise the node is a leaf (scikit-learn grows with
    ``min_samples_leaf=1`` so that its split is REPTree's unconstrained best split).
    ``max_depth`` -1 = unlimited (0 = a single leaf, as in WEKA).

    Deviation: only tie-breaking and the random stream of the fold assignment (Java's
    ``Random`` cannot be reproduced) differ from WEKA.
    """

    def __init__(self, min_num=2, max_depth=-1, no_pruning=False, num_folds=3, random_state=None):
        self.min_num = min_num
        self.max_depth = max_depth
        self.no_pruning = no_pruning
        self.num_folds = num_folds
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if not self.no_pruning and self.num_folds < 2:
            raise ValueError(f"num_folds must be >= 2 for pruning, got {self.num_folds!r}")
        X, y, w, unit, order = self._prepare(X, y, sample_weight)
        rng = check_random_state(self.random_state)
        k, mw = self.n_classes_, float(self.min_num)
        grow = np.arange(X.shape[0])
        hold = grow[:0]
        if not self.no_pruning:
            fold = stratified_folds(y, int(self.num_folds), rng)
            if np.any(fold != 0):
                grow, hold = np.flatnonzero(fold != 0), np.flatnonzero(fold == 0)
        depth = None if self.max_depth < 0 else max(1, int(self.max_depth))
        split = max(2, int(math.ceil(2 * mw))) if unit else 2
        seed = rng.randint(_SEED_MAX)                  # drawn either way: the fold stream stays the same
        grown = grow_tree(X[grow], y[grow], w[grow], k, 1, 0.0, unit, min_split=split, max_depth=depth,
                          order=None if hold.size else order)
        if grown is not None:   # compiled, from presorted columns (see J48)
            tree = FlatTree(*grown)
        else:
            tree = FlatTree.from_sklearn(DecisionTreeClassifier(
                criterion="entropy", max_depth=depth, min_samples_split=split, random_state=seed
            ).fit(X[grow], y[grow], sample_weight=w[grow]).tree_)
        counts = tree.class_weights(X, y, w, k, rows=grow)
        if self.max_depth == 0:
            tree.make_leaf(0)
        tree.cut_weak_splits(counts, min_split_weight=2 * mw, min_child_weight=mw, min_gain=1e-12)
        if hold.size:
            hold_counts = tree.class_weights(X, y, w, k, rows=hold)
            reduced_error_prune(tree, counts, hold_counts)
            counts = counts + hold_counts                      # back-fitting
        return self._finish(tree, counts)


class RandomTreeClassifier(_WekaTree):
    """WEKA's RandomTree: an unpruned tree choosing among K random attributes per node.

    scikit-learn's best splitter with ``max_features = K`` (``n_features`` 0 =
    ``int(log2(M) + 1)``, at most M), entropy criterion; a node is split only if it weighs
    at least ``2 * min_num`` (WEKA's ``-M`` check — children may be lighter), up to
    ``max_depth`` (0 = unlimited). With ``num_folds`` >= 2 (``-N``), the tree grows on
    all stratified folds but the second, and the class distributions are re-estimated
    from that held-out fold alone; leaves it does not reach are empty.

    An empty leaf predicts its nearest non-empty ancestor's distribution (WEKA returns no
    distribution there and the parent answers), unless ``allow_unclassified`` (``-U``):
    then WEKA's empty leaf returns an all-zero distribution, and so does ``predict_proba``
    for the rows reaching it — such a row is unclassified (WEKA's ``classifyInstance`` gives
    a missing value; ``predict`` must name a label and gives ``classes_[0]``). In an averaging
    ensemble the zero row adds nothing, as in WEKA; a multi-label transformation reads a
    score of 0 for every class. Only back-fitting (``num_folds`` >= 2) makes empty leaves.

    Deviation: when the K sampled attributes give no gain, WEKA samples more until one
    does, scikit-learn only until a non-constant one is found.
    """

    def __init__(self, min_num=1, n_features=0, max_depth=0, num_folds=0, allow_unclassified=False,
                 random_state=None):
        self.min_num = min_num
        self.n_features = n_features
        self.max_depth = max_depth
        self.num_folds = num_folds
        self.allow_unclassified = allow_unclassified
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if self.num_folds == 1 or self.num_folds < 0:
            raise ValueError(f"num_folds must be 0 (no back-fitting) or >= 2, got {self.num_folds!r}")
        if self.n_features < 0 or self.max_depth < 0:
            raise ValueError(f"n_features and max_depth must be >= 0 (0 = WEKA's default), got "
                             f"{self.n_features!r} and {self.max_depth!r}")
        X, y, w, unit, order = self._prepare(X, y, sample_weight)
        rng = check_random_state(self.random_state)
        k, mw = self.n_classes_, float(self.min_num)
        grow = np.arange(X.shape[0])
        back = grow[:0]
        if self.num_folds >= 2:
            fold = stratified_folds(y, int(self.num_folds), rng)
            if np.any(fold != 1) and np.any(fold == 1):
                grow, back = np.flatnonzero(fold != 1), np.flatnonzero(fold == 1)
        split = max(2, int(math.ceil(2 * mw))) if unit else 2
        grown = DecisionTreeClassifier(
            criterion="entropy", max_features=weka_k_features(X.shape[1], int(self.n_features)),
            max_depth=int(self.max_depth) if self.max_depth > 0 else None,
            min_samples_split=split, random_state=rng.randint(_SEED_MAX),
        ).fit(X[grow], y[grow], sample_weight=w[grow])
        tree = FlatTree.from_sklearn(grown.tree_)
        counts = tree.class_weights(X, y, w, k, rows=grow)
        tree.cut_weak_splits(counts, min_split_weight=2 * mw)
        if back.size:
            back_counts = tree.class_weights(X, y, w, k, rows=back)
            if back_counts[0].sum() > 0:
                counts = back_counts                            # back-fitting
        return self._finish(tree, counts, unclassified=bool(self.allow_unclassified))


class WekaRandomForest(ClassifierMixin, BaseEstimator):
    """WEKA's RandomForest: bagged random trees (information gain), averaged distributions.

    ``RandomForestClassifier(criterion="entropy", bootstrap=True)`` with WEKA's
    ``-K`` resolved at fit time (``n_features`` 0 = ``int(log2(M) + 1)``, at most M)
    and ``max_depth`` 0 = unlimited. Close, not exact: WEKA's trees break ties at
    random and keep sampling attributes until one has a positive gain.
    """

    def __init__(self, n_estimators=100, n_features=0, max_depth=0, random_state=None):
        self.n_estimators = n_estimators
        self.n_features = n_features
        self.max_depth = max_depth
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X, codes, w = fit_inputs(self, X, y, sample_weight, dtype=np.float32)
        self.forest_ = RandomForestClassifier(
            n_estimators=int(self.n_estimators), criterion="entropy",
            max_features=weka_k_features(X.shape[1], int(self.n_features)),
            max_depth=int(self.max_depth) if self.max_depth > 0 else None,
            bootstrap=True, n_jobs=1, random_state=self.random_state,
        ).fit(X, codes, sample_weight=None if sample_weight is None else w)
        return self

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, dtype=np.float32, fitted="forest_")
        return self.forest_.predict_proba(X)          # columns: the codes 0..K-1 of classes_

    def predict(self, X) -> np.ndarray:
        return labels(self, self.predict_proba(X))


# ---------------------------------------------------------------------- registry
@register("J48", kind="slc")
def j48(p: Params):
    """J48 (C4.5): mno_c45 min objects, cf_c45 confidence in (0, 5] or u (unpruned); switches
    ct = do NOT collapse, sr = NO subtree raising, umc = NO MDL correction, ul = Laplace leaves;
    bs has no effect (numeric inputs, binary splits already). A confidence above 0.5 adds no
    pessimistic errors (WEKA's Stats.addErrs warns and returns 0), so error-based pruning then
    only cuts splits that do not lower the training error by more than 0.1."""
    return J48Classifier(min_num_obj=p.int("mno_c45"), confidence_factor=p.real("cf_c45"),
                         unpruned=p.has("u"), collapse_tree=not p.flag("ct"),
                         subtree_raising=not p.flag("sr"), use_mdl_correction=not p.flag("umc"),
                         use_laplace=p.flag("ul"), random_state=p.random_state)


@register("DecisionStump", kind="slc")
def decision_stump(p: Params):
    """DecisionStump: one entropy split, leaf class distributions (WEKA's missing-value branch
    is moot: inputs are imputed)."""
    return DecisionTreeClassifier(criterion="entropy", max_depth=1, random_state=p.random_state)


@register("RandomForest", kind="slc")
def random_forest(p: Params):
    """RandomForest: nt trees, nf_rf features (0 = int(log2(M)+1), at most M), depth md_rf
    (0 = unlimited)."""
    return WekaRandomForest(n_estimators=p.int("nt"), n_features=p.int("nf_rf"),
                            max_depth=p.int("md_rf"), random_state=p.random_state)


@register("RandomTree", kind="slc")
def random_tree(p: Params):
    """RandomTree: mw_rtree min weight to split (2x), nfbgt back-fitting folds (0 = none),
    nf_rtree features (0 = int(log2(M)+1), at most M), md_rtree depth (0 = unlimited),
    ua_rtree = allow unclassified instances (WEKA -U: an empty leaf gives a zero distribution)."""
    return RandomTreeClassifier(min_num=p.int("mw_rtree"), num_folds=p.int("nfbgt"),
                                n_features=p.int("nf_rtree"), max_depth=p.int("md_rtree"),
                                allow_unclassified=p.flag("ua_rtree"), random_state=p.random_state)


@register("REPTree", kind="slc")
def rep_tree(p: Params):
    """REPTree: mw_rep min weight per leaf, up = NO pruning, md_rep depth (-1 = unlimited);
    reduced-error pruning on 1 of 3 stratified folds, then back-fitting."""
    return REPTreeClassifier(min_num=p.int("mw_rep"), no_pruning=p.flag("up"),
                             max_depth=p.int("md_rep"), random_state=p.random_state)

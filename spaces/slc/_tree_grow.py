"""C4.5's growing phase, compiled: the tree J48 prunes, grown from presorted columns (issue 25).

Why: J48 is the base learner of most tree ensembles of the grammars (AdaBoostM1, Bagging,
RandomCommittee, RandomSubSpace, ASC, Vote, Stacking, LWL), so its fit is paid q × members times
per candidate; scikit-learn's builder sorts every column again at every node (n log n per node and
attribute), and J48's own pruning is cheap next to it. Here every column is sorted once and each
split partitions the sorted row lists stably (n per level and attribute), with numba.

What it grows is scikit-learn's ``DecisionTreeClassifier(criterion="entropy")`` tree under the
same limits (``min_samples_leaf`` rows, or ``min_weight_leaf`` weight for weighted rows): at every
node the split of largest information gain over all attributes, between two distinct values
(more than 1e-7 apart), threshold the midpoint of the two values, a node split whenever it is
impure and some split is allowed. One difference: among splits of exactly equal gain, the first
attribute in column order wins (scikit-learn draws the attribute order at random), so trees may
differ where gains tie exactly.

Without numba (an install that lacks it), :func:`grow` returns None and the caller grows with
scikit-learn. numba is imported and the kernel compiled (or loaded from numba's cache) on first use,
:func:`preload`.
"""
from __future__ import annotations

import numpy as np

import threading

#: scikit-learn's FEATURE_THRESHOLD: values closer than this are one value
_SAME = 1e-7


def _c45_splittable(X, y, w, idx, lo, hi, n_classes, total, weight, min_obj, mdl, unit, xlogx, first):
    """C4.5's split test of a node (``_tree_c45.node_is_splittable``, the same numbers): some attribute has
    a split point between values more than 1e-5 apart with more than minSplit weight on each side and
    a positive gain, less the MDL penalty. ``first``: the attribute tried first (the one chosen)."""
    if weight < 2.0 * min_obj - 1e-6 or abs(total.max() - weight) < 1e-6:
        return False
    min_split = 0.1 * weight / n_classes
    min_split = min_obj if min_split <= min_obj else min(min_split, 25.0)
    if hi - lo < 2.0 * min_split:
        return False
    ln2 = np.log(2.0)
    old = 0.0
    for c in range(n_classes):
        if total[c] > 0.0:
            old -= total[c] * np.log(total[c])
    old += weight * np.log(weight)
    lc = np.zeros(n_classes)
    m = X.shape[1]
    for step in range(m + 1):
        if step == 0:
            f = first
        else:
            f = step - 1
            if f == first:
                continue
        col = idx[f]
        lc[:] = 0.0
        wl = 0.0
        best = 0.0
        n_valid = 0
        for p in range(lo, hi - 1):
            i = col[p]
            lc[y[i]] += w[i]
            wl += w[i]
            if not np.float64(X[i, f]) + 1e-5 < np.float64(X[col[p + 1], f]):
                continue
            wr = weight - wl
            if not (wl > min_split - 1e-6 and wr > min_split - 1e-6):
                continue
            n_valid += 1
            new = 0.0
            if unit:
                for c in range(n_classes):
                    a = int(lc[c] + 0.5)
                    new -= xlogx[a] + xlogx[int(total[c] + 0.5) - a]
                new += xlogx[int(wl + 0.5)] + xlogx[int(wr + 0.5)]
            else:
                for c in range(n_classes):
                    a, b = lc[c], total[c] - lc[c]
                    if a > 0.0:
                        new -= a * np.log(a)
                    if b > 0.0:
                        new -= b * np.log(b)
                if wl > 0.0:
                    new += wl * np.log(wl)
                if wr > 0.0:
                    new += wr * np.log(wr)
            gain = (old - new) / ln2 / weight
            if gain > best:
                best = gain
        if n_valid == 0:
            continue
        if mdl:
            best -= np.log(max(n_valid, 1)) / ln2 / weight
        if best >= 1e-6:
            return True
    return False


def _kernel(X, y, w, n_classes, min_rows, min_weight, unit, order, min_obj, mdl, min_split, max_depth):  # pragma: no cover
    n, m = X.shape
    cap = 2 * n + 1
    feature = np.full(cap, -2, np.int64)
    threshold = np.full(cap, -2.0)
    left = np.full(cap, -1, np.int64)
    right = np.full(cap, -1, np.int64)
    idx = order.copy()                        # (m, n): each column's rows, each node's segment sorted
    goes_left = np.zeros(n, np.bool_)
    spare = np.empty(n, np.int64)
    xlogx = np.zeros(n + 1)                   # k log k for integer counts (unit weights)
    for k in range(2, n + 1):
        xlogx[k] = k * np.log(k)
    stack_node = np.empty(cap, np.int64)
    stack_lo = np.empty(cap, np.int64)
    stack_hi = np.empty(cap, np.int64)
    stack_depth = np.zeros(cap, np.int64)
    stack_node[0], stack_lo[0], stack_hi[0] = 0, 0, n
    top = 1
    count = 1
    total = np.zeros(n_classes)
    lc = np.zeros(n_classes)
    while top > 0:
        top -= 1
        node, lo, hi, depth = stack_node[top], stack_lo[top], stack_hi[top], stack_depth[top]
        rows = hi - lo
        if rows < min_split or (max_depth >= 0 and depth >= max_depth):
            continue
        total[:] = 0.0
        for p in range(lo, hi):
            i = idx[0, p]
            total[y[i]] += w[i]
        weight = total.sum()
        if rows < 2 or rows < 2 * min_rows or weight < 2.0 * min_weight:
            continue
        if total.max() >= weight * (1.0 - 1e-12):   # pure: no impurity to remove
            continue
        best, best_f, best_p, best_t = -np.inf, -1, -1, 0.0
        for f in range(m):
            col = idx[f]
            if X[col[hi - 1], f] <= X[col[lo], f] + _SAME:   # constant in this node
                continue
            lc[:] = 0.0
            wl = 0.0
            for p in range(lo, hi - 1):
                i = col[p]
                lc[y[i]] += w[i]
                wl += w[i]
                x_here, x_next = X[i, f], X[col[p + 1], f]
                if x_next <= x_here + _SAME:
                    continue
                n_left = p + 1 - lo
                if n_left < min_rows:
                    continue
                if hi - p - 1 < min_rows:
                    break
                wr = weight - wl
                if wl < min_weight or wr < min_weight:
                    continue
                # proxy of the children's weighted entropy (larger is better): Σ c log c − W log W per side
                v = 0.0
                if unit:
                    for c in range(n_classes):
                        a = int(lc[c] + 0.5)
                        v += xlogx[a] + xlogx[int(total[c] + 0.5) - a]
                    v -= xlogx[int(wl + 0.5)] + xlogx[int(wr + 0.5)]
                else:
                    for c in range(n_classes):
                        a, b = lc[c], total[c] - lc[c]
                        if a > 0.0:
                            v += a * np.log(a)
                        if b > 0.0:
                            v += b * np.log(b)
                    v -= wl * np.log(wl) + wr * np.log(wr)
                if v > best:
                    t = np.float64(x_here) / 2.0 + np.float64(x_next) / 2.0
                    if t == np.float64(x_next) or not np.isfinite(t):
                        t = np.float64(x_here)
                    best, best_f, best_p, best_t = v, f, p, t
        if best_f < 0:
            continue
        if min_obj > 0.0 and not _splittable(X, y, w, idx, lo, hi, n_classes, total, weight, min_obj, mdl,
                                             unit, xlogx, best_f):
            continue                           # C4.5 would not split it: a leaf, its subtree never grown
        col = idx[best_f]
        for p in range(lo, hi):
            goes_left[col[p]] = p <= best_p
        cut = best_p + 1
        for f in range(m):                     # stable partition of every column's segment
            col = idx[f]
            a, b = lo, 0
            for p in range(lo, hi):
                i = col[p]
                if goes_left[i]:
                    col[a] = i
                    a += 1
                else:
                    spare[b] = i
                    b += 1
            for q in range(b):
                col[a + q] = spare[q]
        l_id, r_id = count, count + 1
        count += 2
        feature[node], threshold[node], left[node], right[node] = best_f, best_t, l_id, r_id
        stack_node[top], stack_lo[top], stack_hi[top], stack_depth[top] = r_id, cut, hi, depth + 1
        top += 1
        stack_node[top], stack_lo[top], stack_hi[top], stack_depth[top] = l_id, lo, cut, depth + 1
        top += 1
    return feature[:count], threshold[:count], left[:count], right[:count]


_splittable = None          # the compiled split test, which the compiled kernel calls by this name
_compiled = None
_loaded = False
_lock = threading.Lock()


def preload():
    """The compiled kernel (None without numba), compiled or loaded from numba's cache on first use —
    about a second, so commands that grow no tree never pay it. The search calls this before its
    worker processes fork (``evaluation.engine._prepare_process``): they inherit it."""
    global _splittable, _compiled, _loaded
    with _lock:
        if not _loaded:
            _loaded = True
            try:  # numba is a dependency; an environment without it still works, at scikit-learn's speed
                from numba import njit
            except ImportError:  # pragma: no cover - exercised only where numba is missing
                return None
            _splittable = njit(cache=True, nogil=True)(_c45_splittable)
            kernel = njit(cache=True, nogil=True)(_kernel)
            kernel(np.zeros((2, 1), np.float32), np.array([0, 1]), np.ones(2), 2, 1, 0.0, True,
                   np.zeros((1, 2), np.int64), 1.0, True, 2, -1)
            _compiled = kernel
    return _compiled


def grow(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int, min_rows: int, min_weight: float,
         unit: bool, min_obj: float = 0.0, mdl: bool = True, min_split: int = 2, max_depth: int | None = None,
         order: np.ndarray | None = None):
    """(feature, threshold, left, right) of the grown tree (see the module docstring), node 0 the root and
    children after their parent; None without numba. ``X`` float32 (as scikit-learn's trees see it),
    ``y`` class codes, ``w`` weights; ``unit``: every weight is 1 (then counts are whole numbers).
    ``min_obj`` > 0: a node that fails C4.5's split test (J48's -M ``min_obj``, ``mdl`` its MDL
    correction) is left a leaf — what :func:`spaces.slc._tree_c45.apply_split_test` does to a grown tree.
    ``min_split`` (rows) and ``max_depth`` (None: unlimited) as scikit-learn's ``min_samples_split`` and
    ``max_depth``. ``order``: every column's stable ascending row order, when known (:func:`sorted_columns`)."""
    kernel = _compiled if _loaded else preload()
    if kernel is None:
        return None
    if X.shape[0] == 0 or X.shape[1] == 0:      # nothing to split on: a single leaf
        return np.array([-2]), np.array([-2.0]), np.array([-1]), np.array([-1])
    X = np.ascontiguousarray(X, dtype=np.float32)
    if order is None:
        order = sorted_columns(X)[1]
    return kernel(X, np.asarray(y, dtype=np.int64), np.ascontiguousarray(w, dtype=np.float64), int(n_classes),
                     int(min_rows), float(min_weight), bool(unit), order, float(min_obj), bool(mdl),
                     int(min_split), -1 if max_depth is None else int(max_depth))


def sorted_columns(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``X`` as the trees see it (float32, C order) and every column's stable ascending row order (m, n):
    what growing needs of ``X`` alone — computed once per data view for the q labels of a binary
    relevance (:func:`spaces.encoding.per_view`)."""
    X32 = np.ascontiguousarray(X, dtype=np.float32)
    return X32, np.ascontiguousarray(np.argsort(X32.T, axis=1, kind="stable")).astype(np.int64)

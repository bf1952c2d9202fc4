"""The lazy single-label learners of the grammars: KNN (WEKA IBk) and KStar (WEKA K*).

scikit-learn's ``KNeighborsClassifier`` has no instance weights (WEKA IBk uses them, and AdaM1,
LWL, EMax and BaggingML pass them), no hold-one-out choice of k, no ``1 - d`` weighting and
different tie handling; K* has no library counterpart. Both are therefore small numpy
estimators (search-space notes §1.1.2, §1.1.9), vectorised over test rows in chunks:

* :class:`WekaIBk` — attributes min-max normalised on the training data, distance
  ``sqrt(Σ diff² / M)``, every training row tied with the k-th distance is a neighbour (as WEKA's
  linear search), votes ``dw(d) · instance weight`` plus WEKA's 1/N per-class correction;
  ``loo`` picks k ∈ [1, K] with the fewest hold-one-out errors (smallest k on ties);
* :class:`WekaKStar` — Cleary & Trigg's entropic similarity, the product over attributes of
  ``P*(d) = s·exp(-2 s d)`` with per-(test value, attribute) scales from
  :mod:`spaces.slc._lazy_kstar`; P(class) ∝ Σ of the similarities of that class's rows.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from ._lazy_kstar import MISSING_MODES, NUM_RAND_COLS, kstar_scales, similarity_get, similarity_key, similarity_put
from ._validation import fit_inputs, labels, predict_inputs

_MEMORY = 64e6  # bytes for one block of pairwise values
#: K*: a (test × train) similarity matrix up to this size is computed whole and kept for the next label
_SIM_BYTES = 48e6


def _rows_per_block(n_cols: int, per_cell: int = 8, factor: int = 4) -> int:
    return int(max(1, min(4096, _MEMORY // (per_cell * factor * max(1, n_cols)))))


# --------------------------------------------------------------------------- IBk

class WekaIBk(ClassifierMixin, BaseEstimator):
    """WEKA ``lazy.IBk``: k nearest neighbours with instance weights.

    ``distance_weighting``: ``"none"`` | ``"inverse"`` (-I, 1/(d + 0.001)) | ``"similarity"``
    (-F, 1 - d). ``loo`` (-X): choose k in [1, n_neighbors] by hold-one-out error.

    Deviations: attribute ranges come from the training data only (WEKA also widens them with
    each test instance it sees, which makes predictions depend on the order of the test set);
    1 - d is clipped at 0 for test values outside the training range (else votes turn negative).
    """

    def __init__(self, n_neighbors: int = 1, loo: bool = False, distance_weighting: str = "none"):
        self.n_neighbors = n_neighbors
        self.loo = loo
        self.distance_weighting = distance_weighting

    # -- helpers
    def _normalise(self, X):
        return (X - self.min_) * self.inv_range_

    def _vote_weights(self, d2):
        """Distance-weight factor of squared normalised distances (IBk's makeDistribution)."""
        if self.distance_weighting == "none":
            return np.ones_like(d2)
        d = np.sqrt(d2 / self.n_attributes_used_)
        if self.distance_weighting == "inverse":
            return 1.0 / (d + 0.001)
        return np.maximum(0.0, 1.0 - d)

    def _neighbours(self, Xn, k: int, hold_out=None):
        """The k nearest training rows of each row of ``Xn`` plus every row tied with the k-th,
        as WEKA's linear search returns them.

        Returns ``(idx, d2, member)``, each (rows, W): candidate training indices, their exact
        squared normalised distances (sum of squared differences, as WEKA) and whether they are
        neighbours. Candidates come from the fast ``|a|² + |b|² - 2ab`` expansion with a margin
        above the k-th value; exact distances then decide the ties.
        """
        train = self.train_
        d2 = (np.einsum("ij,ij->i", Xn, Xn)[:, None] + self.train_sq_[None, :] - 2.0 * Xn @ train.T)
        if hold_out is not None:
            d2[np.arange(Xn.shape[0]), hold_out] = np.inf
        kth = np.partition(d2, k - 1, axis=1)[:, k - 1]
        margin = 1e-9 * (1.0 + np.abs(kth))
        n_cand = (d2 <= (kth + margin)[:, None]).sum(axis=1)
        W = int(n_cand.max())
        idx = np.argpartition(d2, W - 1, axis=1)[:, :W] if W < d2.shape[1] else \
            np.broadcast_to(np.arange(d2.shape[1]), d2.shape).copy()
        cand = np.take_along_axis(d2, idx, axis=1) <= (kth + margin)[:, None]
        exact = np.empty(idx.shape)
        step = max(1, int(4e6 // max(1, W * train.shape[1])))
        for s0 in range(0, Xn.shape[0], step):
            diff = Xn[s0:s0 + step, None, :] - train[idx[s0:s0 + step]]
            exact[s0:s0 + step] = np.einsum("ijk,ijk->ij", diff, diff)
        exact[~cand] = np.inf
        kth_exact = np.partition(exact, k - 1, axis=1)[:, k - 1]
        return idx, exact, exact <= kth_exact[:, None]

    def fit(self, X, y, sample_weight=None):
        if self.distance_weighting not in ("none", "inverse", "similarity"):
            raise ValueError("distance_weighting must be 'none', 'inverse' or 'similarity', "
                             f"got {self.distance_weighting!r}")
        if int(self.n_neighbors) < 1:
            raise ValueError(f"n_neighbors must be >= 1, got {self.n_neighbors}")
        X, y_enc, w = fit_inputs(self, X, y, sample_weight)
        n = X.shape[0]
        self.min_ = X.min(axis=0)
        rng = X.max(axis=0) - self.min_
        self.inv_range_ = np.divide(1.0, rng, out=np.zeros_like(rng), where=rng > 0)
        self.train_ = self._normalise(X)
        self.train_sq_ = np.einsum("ij,ij->i", self.train_, self.train_)
        self.y_ = y_enc
        self.weights_ = w
        self.n_attributes_used_ = max(1, X.shape[1])
        self.k_ = int(min(int(self.n_neighbors), n))
        if self.loo and n > 1:
            self.loo_errors_ = self._hold_one_out_errors(min(int(self.n_neighbors), n - 1))
            self.k_ = int(np.argmin(self.loo_errors_)) + 1
        return self

    def _hold_one_out_errors(self, k_max: int) -> np.ndarray:
        """Hold-one-out misclassifications for k = 1..k_max (WEKA ``crossValidate``: the
        prediction for each k uses the k nearest other rows plus ties; smallest k wins ties)."""
        n, C = self.train_.shape[0], self.classes_.size
        errors = np.zeros(k_max)
        ks = np.arange(1, k_max + 1)
        block = _rows_per_block(n)
        for start in range(0, n, block):
            check_deadline()
            rows = np.arange(start, min(n, start + block))
            idx, d2, _ = self._neighbours(self.train_[rows], k_max, hold_out=rows)
            order = np.argsort(d2, axis=1, kind="stable")
            sd = np.take_along_axis(d2, order, axis=1)            # exact, ascending (inf = not a candidate)
            nb = np.take_along_axis(idx, order, axis=1)
            vote = np.where(np.isfinite(sd), self._vote_weights(np.where(np.isfinite(sd), sd, 0.0)), 0.0)
            vote = vote * self.weights_[nb]
            width = sd.shape[1]
            sub = max(1, int(_MEMORY // (8 * width * C * 2)))     # bound the (rows, width, C) table
            for s0 in range(0, rows.size, sub):
                sl = slice(s0, s0 + sub)
                contrib = np.zeros((vote[sl].shape[0], width, C))
                np.put_along_axis(contrib, self.y_[nb[sl]][..., None], vote[sl][..., None], axis=2)
                cum = np.cumsum(contrib, axis=1)
                kth_k = sd[sl][:, ks - 1]                                        # (b, k_max)
                n_in = (sd[sl][:, None, :] <= kth_k[:, :, None]).sum(axis=2)     # neighbours per k
                sums = np.take_along_axis(cum, (n_in - 1)[..., None], axis=1)    # (b, k_max, C)
                pred = np.argmax(sums, axis=2)
                errors += (pred != self.y_[rows[sl]][:, None]).sum(axis=0)
        return errors

    def predict_proba(self, X):
        X = predict_inputs(self, X, fitted="train_")
        Xn = self._normalise(X)
        n_train, C = self.train_.shape[0], self.classes_.size
        out = np.empty((X.shape[0], C))
        block = _rows_per_block(n_train)
        for start in range(0, X.shape[0], block):
            check_deadline()
            idx, d2, member = self._neighbours(Xn[start:start + block], self.k_)
            vote = np.where(member, self._vote_weights(np.where(member, d2, 0.0)), 0.0)
            vote *= self.weights_[idx]
            b = idx.shape[0]
            flat = (np.arange(b)[:, None] * C + self.y_[idx]).ravel()
            dist = np.bincount(flat, weights=vote.ravel(), minlength=b * C).reshape(b, C)
            dist += 1.0 / n_train                                 # WEKA's per-class correction
            out[start:start + b] = dist / dist.sum(axis=1, keepdims=True)
        return out

    def predict(self, X):
        return labels(self, self.predict_proba(X))


# --------------------------------------------------------------------------- K*

class WekaKStar(ClassifierMixin, BaseEstimator):
    """WEKA ``lazy.KStar`` (numeric attributes): P(class | x) ∝ Σ_{training rows of the class}
    Π_attributes s·exp(-2 s |x - u|).

    ``global_blend`` (-B, %), ``entropic_auto_blend`` (-E), ``missing_mode`` (-M: a|d|m|n).
    ``random_state`` seeds the 5 random class permutations of the entropic blend.

    K* is not a WEKA WeightedInstancesHandler, so ``fit`` takes no ``sample_weight``
    (``fit_slc`` then resamples by weight, as MEKA would).
    Deviations: similarities are summed in log space (WEKA's plain product can underflow to 0
    and fall back to a uniform distribution) and the per-attribute sums are taken relative to the
    nearest distance (WEKA's P* can underflow far from the data, which zeroes its entropies);
    ``n0`` counts the training values within 1e-5 of the true smallest distance (WEKA's streaming
    count depends on the order of the training rows); the scale root is found on an exact grid of
    sums (see ``_lazy_kstar``) rather than by WEKA's bisection, to within WEKA's tolerance; a
    missing test value's exponent correction (M / (M - missing)) is applied once, as intended,
    instead of after every attribute.
    """

    def __init__(self, global_blend: int = 20, entropic_auto_blend: bool = False,
                 missing_mode: str = "a", random_state=None):
        self.global_blend = global_blend
        self.entropic_auto_blend = entropic_auto_blend
        self.missing_mode = missing_mode
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True          # missing values are K*'s to handle (<mm>)
        return tags

    def fit(self, X, y):
        if self.missing_mode not in MISSING_MODES:
            raise ValueError(f"missing_mode must be one of {MISSING_MODES}, got {self.missing_mode!r}")
        if not 0 <= int(self.global_blend) <= 100:
            raise ValueError(f"global_blend must be in [0, 100], got {self.global_blend}")
        X, y_enc, _ = fit_inputs(self, X, y, allow_nan=True)
        self.train_ = X
        self.y_ = y_enc
        missing = np.isnan(X)
        # attribute-major copies: the similarity loop reads one contiguous row per attribute
        self.train_by_attribute_ = np.ascontiguousarray(np.where(missing, 0.0, X).T)
        self.train_missing_by_attribute_ = np.ascontiguousarray(missing.T)
        rng = np.random.default_rng(self.random_state)
        self.class_columns_ = np.column_stack(
            [y_enc] + [rng.permutation(y_enc) for _ in range(NUM_RAND_COLS)])
        return self

    def predict_proba(self, X):
        X = predict_inputs(self, X, allow_nan=True, fitted="train_")
        C = self.classes_.size
        onehot = np.zeros((self.train_.shape[0], C))
        onehot[np.arange(self.train_.shape[0]), self.y_] = 1.0
        whole = X.shape[0] * self.train_.shape[0] * 8 <= _SIM_BYTES
        key = None if self.entropic_auto_blend or not whole else similarity_key(
            self.train_, X, (int(self.global_blend), self.missing_mode))
        hit = None if key is None else similarity_get(key)
        if hit is None and key is not None:
            hit = self._similarities(X)
            similarity_put(key, hit)
        out = np.empty((X.shape[0], C))
        step = X.shape[0] if hit is not None else max(1, int(_SIM_BYTES // (8 * max(1, self.train_.shape[0]))))
        for start in range(0, X.shape[0], step):             # blocks of bounded memory when not kept
            sim, ok = (hit[0][start:start + step], hit[1][start:start + step]) if hit is not None \
                else self._similarities(X[start:start + step])
            mass = sim @ onehot
            total = mass.sum(axis=1, keepdims=True)
            ok = ok & (total[:, 0] > 0)
            res = np.full(mass.shape, 1.0 / C)               # WEKA: no similarity mass → uniform
            res[ok] = mass[ok] / total[ok]
            out[start:start + step] = res
        return out

    def _similarities(self, X):
        """(n_test, n_train) similarities, each row divided by its largest, and whether the row has any
        (the class plays no part with the global blend: the same for every label)."""
        scale, p_miss = kstar_scales(self.train_, X, int(self.global_blend),
                                     bool(self.entropic_auto_blend), self.missing_mode,
                                     self.class_columns_)
        M = X.shape[1]
        test_missing = np.isnan(X)
        scale = np.where(test_missing, 0.0, scale)            # a missing test value is skipped
        with np.errstate(divide="ignore"):
            log_scale = np.where(test_missing, 0.0, np.log(np.where(scale > 0, scale, 1.0)))
            log_miss = np.where(test_missing, 0.0, np.log(p_miss) - log_scale)
        n_present = M - test_missing.sum(axis=1)
        exponent = np.where(n_present > 0, M / np.maximum(n_present, 1), 0.0)
        X = np.where(test_missing, 0.0, X)
        sim = np.empty((X.shape[0], self.train_.shape[0]))
        ok = np.empty(X.shape[0], dtype=bool)
        for start in range(0, X.shape[0], 64):               # cache-sized (64 × n_train) blocks
            check_deadline()
            sl = slice(start, start + 64)
            logk = self._log_similarity(X[sl], scale[sl], log_scale[sl], log_miss[sl])
            logk *= exponent[sl, None]
            logk[exponent[sl] == 0] = -np.inf                # every test value missing
            top = logk.max(axis=1, keepdims=True)
            sim[sl] = np.exp(logk - np.where(np.isfinite(top), top, 0.0))
            ok[sl] = np.isfinite(top[:, 0])
        return sim, ok

    def _log_similarity(self, X, scale, log_scale, log_miss):
        """(rows, n_train) log Π_a P*_a: Σ_a log s_a - 2 s_a |x_a - u_a|, with log P(missing)
        for a missing training value."""
        acc = np.zeros((X.shape[0], self.train_by_attribute_.shape[1]))
        tmp = np.empty_like(acc)
        for j, row in enumerate(self.train_by_attribute_):
            np.subtract(X[:, j, None], row[None, :], out=tmp)
            np.abs(tmp, out=tmp)
            tmp *= scale[:, j, None]
            acc += tmp
        logk = log_scale.sum(axis=1)[:, None] - 2.0 * acc
        for j in np.flatnonzero(self.train_missing_by_attribute_.any(axis=1)):
            col = self.train_missing_by_attribute_[j]        # P(missing) replaces P* there
            logk[:, col] += (log_miss[:, j, None] + 2.0 * scale[:, j, None] * np.abs(X[:, j, None]))
        return logk

    def predict(self, X):
        return labels(self, self.predict_proba(X))


# --------------------------------------------------------------------------- registry

@register("KNN", kind="slc")
def knn(p: Params):
    """KNN (IBk): <k_nn> neighbours, <loo> hold-one-out choice of k, <dw> F = 1-d, I = 1/d."""
    dw = p.cat("dw")
    weighting = {None: "none", "F": "similarity", "I": "inverse"}.get(dw)
    if weighting is None:
        raise ValueError(f"KNN: unknown <dw> value {dw!r} ({p.origin})")
    return WekaIBk(n_neighbors=p.int("k_nn"), loo=p.flag("loo"), distance_weighting=weighting)


@register("KStar", kind="slc")
def kstar(p: Params):
    """KStar: <gb> global blend %, <eab> entropic auto-blend, <mm> missing mode a|d|m|n."""
    return WekaKStar(global_blend=p.int("gb"), entropic_auto_blend=p.flag("eab"),
                     missing_mode=p.cat("mm"), random_state=p.random_state)

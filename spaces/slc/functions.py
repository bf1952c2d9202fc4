"""WEKA's function learners at the SLC level: VotedPerceptron, MultilayerPerceptron, SGD,
Logistic (grammar ``LogisticRegression``) and SMO.

Each is a small scikit-learn estimator that carries WEKA's implicit preprocessing
(normalisation, standardisation, missing-value replacement) inside ``fit`` and returns
what WEKA's ``distributionForInstance`` returns (search-space notes §0.4, §1.1.3,
§1.1.11, §1.1.14, §1.1.15, §1.1.21):

* VotedPerceptron — a sigmoid of the perceptrons' vote (not hard);
* MultilayerPerceptron — the sigmoid outputs normalised to sum 1;
* SGD — probabilities for log loss, a one-hot of the prediction for hinge and squared loss;
* Logistic — probabilities;
* SMO — normalised one-vs-one votes, or pairwise-coupled Platt probabilities with ``bcm``.

The binary-only learners (SGD, VotedPerceptron) are fitted one-vs-rest on multi-class
targets (decision 3). WEKA's kernels live in :mod:`spaces.slc._kernels`.
"""
from __future__ import annotations

import warnings

import numpy as np
from scipy.special import expit, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression, SGDClassifier
from sklearn.svm import SVC
from sklearn.utils.validation import check_array, check_is_fitted

from spaces.deadline import check_deadline
from spaces.params import Params
from spaces.registry import register

from . import _kernels


# --------------------------------------------------------------------------- shared helpers
def _features(X) -> np.ndarray:
    """Dense float features; NaN allowed (the learners replace missing values themselves)."""
    return check_array(X, dtype=float, ensure_all_finite="allow-nan")


def _target(X: np.ndarray, y) -> tuple[np.ndarray, np.ndarray]:
    """``classes_`` and the class index of every row."""
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != X.shape[0]:
        raise ValueError(f"y must be 1-d with {X.shape[0]} entries, got shape {y.shape}")
    return np.unique(y, return_inverse=True)


def _weights(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=float).reshape(-1)
    if w.shape[0] != n:
        raise ValueError(f"sample_weight has {w.shape[0]} entries, X has {n} rows")
    return w


def _fill_missing(X: np.ndarray, values: np.ndarray) -> np.ndarray:
    """WEKA ReplaceMissingValues for numeric attributes: NaN → the training mean."""
    if not np.isnan(X).any():
        return X
    return np.where(np.isnan(X), values[None, :], X)


def _column_means(X: np.ndarray) -> np.ndarray:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns
        return np.nan_to_num(np.nanmean(X, axis=0))


def _range_scaling(X: np.ndarray, lo: float, hi: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """WEKA Normalize onto ``[lo, hi]`` with the training min/max (``(X - mn) * mult + add``).

    Columns constant in training map to 0, as in WEKA's Normalize.
    """
    mn, mx = X.min(axis=0), X.max(axis=0)
    span = mx - mn
    const = span == 0
    mult = np.where(const, 0.0, (hi - lo) / np.where(const, 1.0, span))
    add = np.where(const, 0.0, lo)
    return mn, mult, add


def _standardisation(X: np.ndarray, w: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(Weighted) mean and standard deviation (denominator W − 1); constant columns get sd 1."""
    w = np.ones(X.shape[0]) if w is None else w
    total = w.sum()
    mean = w @ X / total
    var = w @ (X - mean) ** 2 / max(total - 1.0, 1e-12)
    sd = np.sqrt(np.maximum(var, 0.0))
    return mean, np.where(sd > 0, sd, 1.0)


def _one_hot(idx: np.ndarray, k: int) -> np.ndarray:
    out = np.zeros((idx.shape[0], k))
    out[np.arange(idx.shape[0]), idx] = 1.0
    return out


def _ovr_proba(log_pos: np.ndarray) -> np.ndarray:
    """WEKA MultiClassClassifier (1-vs-rest): normalise P(positive) of every class.

    Computed from ``log P(positive)`` so that rows where every member says ~0 still get
    a distribution (the least negative member wins) instead of 0/0.
    """
    return np.exp(log_pos - logsumexp(log_pos, axis=1, keepdims=True))


# ---------------------------------------------------------------------------- VotedPerceptron
def _vp_train(X: np.ndarray, positive: np.ndarray, n_iter: int, max_k: int, exponent: float,
              rng: np.random.Generator):
    """One binary voted perceptron (WEKA ``VotedPerceptron.buildClassifier``).

    The data are shuffled once; each mistake adds the row (sign +1 for the positive class)
    and starts a new perceptron whose vote weight counts the rows it then gets right.
    ``f`` holds the current perceptron's output on every training row, so the next mistake
    is found by one vectorised scan and costs one kernel row (cached: rows recur across
    epochs). Returns the distinct mistaken rows, each mistake's index into them, the signs
    and the vote weights.
    """
    n = X.shape[0]
    order = rng.permutation(n)
    Xo, yo = X[order], positive[order]
    f = np.zeros(n)
    rows: list[int] = []
    signs: list[float] = []
    votes = [0.0]
    cache: dict[int, np.ndarray] = {}
    cache_limit = max(1, 4_000_000 // n)  # kernel rows kept (about 32 MB)
    for _ in range(n_iter):
        pos = 0
        while pos < n and len(rows) < max_k:
            check_deadline()
            wrong = (f[pos:] >= 0) != yo[pos:]
            j = int(np.argmax(wrong))
            if not wrong[j]:
                votes[-1] += n - pos
                break
            votes[-1] += j
            i = pos + j
            sign = 1.0 if yo[i] else -1.0
            rows.append(i)
            signs.append(sign)
            votes.append(1.0)
            pos = i + 1
            if len(rows) == max_k:  # WEKA stops as soon as maxK perceptrons exist
                break
            row = cache.get(i)
            if row is None:
                row = _kernels.poly_kernel(Xo, Xo[i:i + 1], exponent, True)[:, 0]
                if len(cache) < cache_limit:
                    cache[i] = row
            f += sign * row
        if len(rows) == max_k:
            break
    distinct, which = np.unique(np.asarray(rows, dtype=int), return_inverse=True)
    return Xo[distinct], which, np.asarray(signs), np.asarray(votes)


def _vp_output(X: np.ndarray, support: np.ndarray, which: np.ndarray, signs: np.ndarray,
               votes: np.ndarray, exponent: float) -> np.ndarray:
    """Σ_k votes_k · sign(perceptron_k(x)) with perceptron_0 = 0 counting as positive."""
    out = np.full(X.shape[0], votes[0])
    k = signs.shape[0]
    if k == 0:
        return out
    chunk = max(1, 2_000_000 // k)
    for start in range(0, X.shape[0], chunk):
        gram = _kernels.poly_kernel(X[start:start + chunk], support, exponent, True)
        partial = np.cumsum(gram[:, which] * signs, axis=1)  # column k-1 = perceptron_k
        out[start:start + chunk] += np.where(partial < 0, -1.0, 1.0) @ votes[1:]
    return out


class WekaVotedPerceptron(ClassifierMixin, BaseEstimator):
    """WEKA VotedPerceptron (Freund & Schapire) with kernel ``(x·y + 1)^exponent``.

    Confidence = sigmoid of the vote, as WEKA's ``distributionForInstance``. Missing values →
    training means.
    ``normalize`` maps the attributes to [0, 1] with the training range (constant columns → 0),
    as WEKA's SMO does for the same kernel; off by default, as in WEKA's VotedPerceptron.
    Deviations: the grammar's ``VotedPerceptron`` is built with ``normalize=True``, because
    unscaled attributes let the widest columns decide every update and vote (issue 8);
    binary-only in WEKA, here one-vs-rest on multi-class targets (decision 3);
    a fractional exponent on a negative base uses the odd extension (WEKA: NaN, see
    :mod:`spaces.slc._kernels`).
    """

    def __init__(self, n_iter=1, max_k=10000, exponent=1.0, normalize=False, random_state=0):
        self.n_iter = n_iter
        self.max_k = max_k
        self.exponent = exponent
        self.normalize = normalize
        self.random_state = random_state

    def _prepare(self, X) -> np.ndarray:
        X = _fill_missing(_features(X), self.means_)
        scaling = getattr(self, "scaling_", None)  # None also for models pickled before scaling existed
        return X if scaling is None else (X - scaling[0]) * scaling[1] + scaling[2]

    def fit(self, X, y):
        X = _features(X)
        self.classes_, yi = _target(X, y)
        self.means_ = _column_means(X)
        self.scaling_ = _range_scaling(_fill_missing(X, self.means_), 0.0, 1.0) if self.normalize else None
        X = self._prepare(X)
        k = self.classes_.size
        targets = [yi == 1] if k == 2 else [yi == c for c in range(k)]
        self.perceptrons_ = []
        for c, positive in enumerate(targets):
            rng = np.random.default_rng([int(self.random_state), c])
            self.perceptrons_.append(_vp_train(X, positive, int(self.n_iter), int(self.max_k),
                                               float(self.exponent), rng))
        return self

    def _outputs(self, X) -> np.ndarray:
        check_is_fitted(self, "perceptrons_")
        X = self._prepare(X)
        return np.column_stack([_vp_output(X, *perceptron, float(self.exponent))
                                for perceptron in self.perceptrons_])

    def predict_proba(self, X):
        out = self._outputs(X)
        if self.classes_.size == 2:
            p1 = expit(out[:, 0])
            return np.column_stack([1.0 - p1, p1])
        return _ovr_proba(-np.logaddexp(0.0, -out))  # log sigmoid per class

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


# ------------------------------------------------------------------------ MultilayerPerceptron
def _sigmoid_inplace(a: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-a))`` written into ``a`` (overflow → 0, as WEKA's clamped sigmoid)."""
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1.0
    np.reciprocal(a, out=a)
    return a


class NetworkDiverged(RuntimeError):
    """WEKA: "Network cannot train. Try restarting with a smaller learning rate." """


class WekaMultilayerPerceptron(ClassifierMixin, BaseEstimator):
    """WEKA MultilayerPerceptron: one sigmoid hidden layer, sigmoid outputs, squared error.

    As WEKA: attributes normalised to [-1, 1] with the training range; weights initialised
    uniformly in [-0.05, 0.05]; the data shuffled once; ``epochs`` passes with
    ``Δw = rate·Σ weight·δ·input + momentum·Δw_prev``; ``decay`` divides the rate by the
    epoch number; ``reset`` restarts with half the rate when the weights diverge (NaN/inf),
    and without ``reset`` divergence raises :class:`NetworkDiverged`; ``hidden_layers`` is
    WEKA's wildcard a=(M+K)//2, i=M, o=K, t=M+K (or a number; 0 = no hidden layer);
    confidences are the K sigmoid outputs normalised to sum 1.
    Deviation (decision 10): updates are applied per mini-batch of ``batch_size`` rows instead
    of per row, for speed: the batch's summed per-row WEKA updates scaled by 1/sqrt(batch)
    (the square-root batch-size rule, which keeps online SGD's noise scale; the plain sum
    saturates the sigmoids with many classes, the mean learns 32 times slower), momentum
    per batch; training runs in single precision.
    ``nominal_to_binary`` has no effect: the model one-hot encodes nominal attributes first.
    """

    def __init__(self, learning_rate=0.3, momentum=0.2, hidden_layers="a", nominal_to_binary=True,
                 reset=True, decay=False, epochs=500, batch_size=32, random_state=0):
        self.learning_rate = learning_rate
        self.momentum = momentum
        self.hidden_layers = hidden_layers
        self.nominal_to_binary = nominal_to_binary
        self.reset = reset
        self.decay = decay
        self.epochs = epochs
        self.batch_size = batch_size
        self.random_state = random_state

    def _hidden_units(self, m: int, k: int) -> int:
        spec = str(self.hidden_layers).strip()
        sizes = {"a": (m + k) // 2, "i": m, "o": k, "t": m + k}
        return sizes[spec] if spec in sizes else int(float(spec))

    def _scale(self, X: np.ndarray) -> np.ndarray:
        X = (X - self.offset_) * self.mult_ + self.add_
        return np.nan_to_num(X, nan=0.0)  # WEKA: a missing input is 0

    def fit(self, X, y, sample_weight=None):
        X = _features(X)
        self.classes_, yi = _target(X, y)
        w = _weights(sample_weight, X.shape[0])
        self.offset_, self.mult_, self.add_ = _range_scaling(_fill_missing(X, _column_means(X)), -1.0, 1.0)
        Xs = self._scale(X)
        targets = _one_hot(yi, self.classes_.size)
        self.n_hidden_ = self._hidden_units(X.shape[1], self.classes_.size)
        rate = float(self.learning_rate)
        while True:
            layers = self._train(Xs, targets, w, rate)
            if layers is not None:
                break
            if not self.reset:
                raise NetworkDiverged("network cannot train; try a smaller learning rate")
            rate /= 2.0
            if rate <= 1e-6:
                raise NetworkDiverged(f"learning rate got too small ({rate})")
        self.layers_ = layers
        self.learning_rate_ = rate
        return self

    def _train(self, X, T, w, rate):
        """All epochs at one learning rate; None when the weights diverge (NaN/inf)."""
        rng = np.random.default_rng(int(self.random_state))
        order = rng.permutation(X.shape[0])
        m, k, h = X.shape[1], T.shape[1], self.n_hidden_
        dt = np.float32  # single precision halves the cost of this Python-level loop
        # weight matrices carry the bias (threshold) as their last row: inputs get a 1 column
        shapes = [(m + 1, h), (h + 1, k)] if h > 0 else [(m + 1, k)]
        layers = [rng.uniform(-0.05, 0.05, size=s).astype(dt) for s in shapes]
        velocity = [np.zeros(s, dtype=dt) for s in shapes]
        bs = max(1, int(self.batch_size))
        Xa = np.hstack([X, np.ones((X.shape[0], 1))]).astype(dt)
        batches = []
        for s in range(0, X.shape[0], bs):
            rows = order[s:s + bs]
            hidden = np.ones((rows.size, h + 1), dtype=dt)  # last column = bias input
            batches.append((Xa[rows], T[rows].astype(dt), w[rows, None].astype(dt), hidden))
        mom = dt(self.momentum)
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is detected below
            for epoch in range(1, int(self.epochs) + 1):
                check_deadline()
                step = dt((rate / epoch if self.decay else rate) / np.sqrt(bs))
                for xa, tb, wb, ha in batches:
                    if h > 0:
                        W1, W2 = layers
                        hid = ha[:, :h]
                        np.matmul(xa, W1, out=hid)
                        _sigmoid_inplace(hid)
                        out = _sigmoid_inplace(ha @ W2)
                    else:
                        out = _sigmoid_inplace(xa @ layers[0])
                    d_out = tb - out
                    d_out *= out
                    d_out *= 1.0 - out
                    d_out *= wb
                    d_out *= step  # scales both layers' updates (the hidden deltas are linear in it)
                    if h > 0:
                        d_hid = d_out @ W2[:h].T
                        d_hid *= hid
                        d_hid *= 1.0 - hid
                        grads = (xa.T @ d_hid, ha.T @ d_out)
                    else:
                        grads = (xa.T @ d_out,)
                    for p, v, g in zip(layers, velocity, grads):
                        v *= mom
                        v += g
                        p += v
                if not all(np.isfinite(p).all() for p in layers):
                    return None
        return [p.astype(float) for p in layers]

    def predict_proba(self, X):
        check_is_fitted(self, "layers_")
        A = self._scale(_features(X))
        for W in self.layers_:
            A = expit(A @ W[:-1] + W[-1])
        total = A.sum(axis=1, keepdims=True)
        return A / np.where(total > 0, total, 1.0)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


# -------------------------------------------------------------------------------------- SGD
_SGD_LOSS = {0: "hinge", 1: "log_loss", 2: "squared_error"}


class WekaSGD(ClassifierMixin, BaseEstimator):
    """WEKA SGD: linear model, constant learning rate, 500 epochs over a once-shuffled order.

    Maps to ``SGDClassifier(learning_rate="constant", eta0=lr, alpha=ridge/N, max_iter=500,
    tol=None, shuffle=False)`` on rows permuted once, which reproduces WEKA's per-row update
    (weight decay ``1 − lr·λ/N``, unpenalised bias). Attributes normalised to [0, 1] unless
    ``normalize=False`` (``nn``); missing values → means unless ``replace_missing=False``
    (``nrmv``: then a missing value contributes nothing, as in WEKA). ``loss``: 0 hinge,
    1 log, 2 squared. Log loss gives probabilities; hinge and squared loss are hard
    (one-hot of the prediction), as WEKA's distribution.
    Deviations: one-vs-rest on multi-class targets (decision 3; WEKA is binary-only);
    squared loss regresses the ±1 class code (WEKA accepts squared loss only for a numeric
    class). No ``sample_weight``: WEKA's SGD ignores instance weights.
    """

    def __init__(self, loss=0, learning_rate=0.01, ridge=1e-4, normalize=True,
                 replace_missing=True, epochs=500, random_state=0):
        self.loss = loss
        self.learning_rate = learning_rate
        self.ridge = ridge
        self.normalize = normalize
        self.replace_missing = replace_missing
        self.epochs = epochs
        self.random_state = random_state

    def _prepare(self, X: np.ndarray) -> np.ndarray:
        if self.replace_missing:
            X = _fill_missing(X, self.means_)
        if self.normalize:
            X = (X - self.offset_) * self.mult_ + self.add_
        return np.nan_to_num(X, nan=0.0)

    def fit(self, X, y):
        X = _features(X)
        self.classes_, yi = _target(X, y)
        loss = int(self.loss)
        if loss not in _SGD_LOSS:
            raise ValueError(f"loss must be 0 (hinge), 1 (log) or 2 (squared), got {self.loss!r}")
        self.means_ = _column_means(X)
        filled = _fill_missing(X, self.means_)
        self.offset_, self.mult_, self.add_ = _range_scaling(filled, 0.0, 1.0)
        Xs = self._prepare(X)
        if self.classes_.size < 2:  # a constant target: WEKA predicts the one class
            self.model_ = None
            return self
        order = np.random.default_rng(int(self.random_state)).permutation(X.shape[0])
        self.model_ = SGDClassifier(
            loss=_SGD_LOSS[loss], penalty="l2", alpha=float(self.ridge) / X.shape[0],
            learning_rate="constant", eta0=float(self.learning_rate), max_iter=int(self.epochs),
            tol=None, shuffle=False, random_state=int(self.random_state), n_jobs=1)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit(Xs[order], yi[order])
        return self

    def decision_function(self, X):
        check_is_fitted(self, "classes_")
        Xs = self._prepare(_features(X))
        return np.zeros(Xs.shape[0]) if self.model_ is None else self.model_.decision_function(Xs)

    def _predicted_index(self, Xs: np.ndarray) -> np.ndarray:
        return np.zeros(Xs.shape[0], dtype=int) if self.model_ is None else self.model_.predict(Xs)

    def predict_proba(self, X):
        check_is_fitted(self, "classes_")
        Xs = self._prepare(_features(X))
        if int(self.loss) == 1 and self.model_ is not None:
            return self.model_.predict_proba(Xs)
        return _one_hot(self._predicted_index(Xs), self.classes_.size)

    def predict(self, X):
        check_is_fitted(self, "classes_")
        return self.classes_[self._predicted_index(self._prepare(_features(X)))]


# --------------------------------------------------------------------------------- Logistic
class WekaLogistic(ClassifierMixin, BaseEstimator):
    """WEKA Logistic: ridge logistic regression on standardised attributes.

    WEKA minimises ``NLL + ridge·‖β‖²`` (intercept free) on attributes standardised with the
    (weighted) training mean and sd; divided by 2·ridge this is scikit-learn's
    ``½‖β‖² + C·NLL`` with ``C = 1/(2·ridge)`` (notes §1.1.3). Missing values → means.
    Exact for binary targets; for multi-class, scikit-learn's symmetric softmax replaces
    WEKA's K−1 vectors against a reference class, which differ under the ridge (close).
    """

    def __init__(self, ridge=1e-8, max_iter=1000, random_state=0):
        self.ridge = ridge
        self.max_iter = max_iter
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        X = _features(X)
        self.classes_, yi = _target(X, y)
        w = _weights(sample_weight, X.shape[0])
        self.means_ = _column_means(X)
        X = _fill_missing(X, self.means_)
        self.center_, self.scale_ = _standardisation(X, w)
        if self.classes_.size < 2:  # a constant target: WEKA predicts the one class
            self.model_ = None
            return self
        ridge = float(self.ridge)
        self.model_ = LogisticRegression(C=1.0 / (2.0 * ridge) if ridge > 0 else np.inf, l1_ratio=0.0,
                                         solver="lbfgs", max_iter=int(self.max_iter),
                                         random_state=int(self.random_state))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.model_.fit((X - self.center_) / self.scale_, yi, sample_weight=w)
        return self

    def _z(self, X):
        check_is_fitted(self, "classes_")
        return (_fill_missing(_features(X), self.means_) - self.center_) / self.scale_

    @property
    def coef_(self) -> np.ndarray:
        """Coefficients on the standardised attributes."""
        check_is_fitted(self, "classes_")
        return np.zeros((1, self.center_.size)) if self.model_ is None else self.model_.coef_

    def decision_function(self, X):
        Z = self._z(X)
        return np.zeros(Z.shape[0]) if self.model_ is None else self.model_.decision_function(Z)

    def predict_proba(self, X):
        Z = self._z(X)
        return np.ones((Z.shape[0], 1)) if self.model_ is None else self.model_.predict_proba(Z)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


# -------------------------------------------------------------------------------------- SMO
def _indicator(idx: np.ndarray, k: int) -> np.ndarray:
    """(len(idx), k) 0/1 matrix with a 1 at column idx[p] of row p."""
    return _one_hot(np.asarray(idx), k)


def _pairwise_coupling(r: np.ndarray, n_pair: np.ndarray, pairs: np.ndarray, k: int) -> np.ndarray:
    """Hastie & Tibshirani's pairwise coupling, as WEKA's ``MultiClassClassifier.pairwiseCoupling``.

    ``r[:, p]`` = P(first class of pair p | one of the pair), ``n_pair`` = training weight
    of each pair. Every row iterates until no probability moves by more than 1e-3.
    """
    n = r.shape[0]
    first_ind, second_ind = _indicator(pairs[:, 0], k), _indicator(pairs[:, 1], k)
    first_sum = (r * n_pair) @ first_ind + ((1.0 - r) * n_pair) @ second_ind
    p = np.full((n, k), 1.0 / k)
    u = np.full_like(r, 0.5)
    active = np.arange(n)
    for _ in range(10_000):
        if active.size == 0:
            break
        pa, ua, fa = p[active], u[active], first_sum[active]
        second = (ua * n_pair) @ first_ind + ((1.0 - ua) * n_pair) @ second_ind
        zero = (fa == 0) | (second == 0)
        new = np.where(zero, 0.0, pa * fa / np.where(zero, 1.0, second))
        changed = (zero & (pa > 0)) | (~zero & (np.abs(new - pa) > 1e-3))
        total = new.sum(axis=1, keepdims=True)
        new = np.where(total > 0, new / np.where(total > 0, total, 1.0), 1.0 / k)
        denom = new[:, pairs[:, 0]] + new[:, pairs[:, 1]]
        u[active] = np.where(denom > 0, new[:, pairs[:, 0]] / np.where(denom > 0, denom, 1.0), 0.5)
        p[active] = new
        active = active[changed.any(axis=1)]
    return p


class WekaSMO(ClassifierMixin, BaseEstimator):
    """WEKA SMO: a support vector classifier, pairwise (1-vs-1) for multi-class targets.

    libsvm (``SVC(kernel="precomputed")``) solves the same box-constrained dual as WEKA's
    SMO with per-row cost ``C·weight`` and tolerance 1e-3; the Gram matrix comes from WEKA's
    kernels (:mod:`spaces.slc._kernels`). ``filter_type``: 0 normalise to [0, 1],
    1 standardise, 2 none; missing values → means.
    Without ``build_calibration`` the confidences are WEKA's normalised pairwise votes
    (one-hot for two classes); with it, a ridge-1e-8 logistic model is fitted to each pair's
    SVM outputs on the training rows (WEKA ``-M -V -1``) and the pairwise probabilities are
    coupled with Hastie & Tibshirani's method, as WEKA does.
    As WEKA, NormalizedPolyKernel ignores an exponent of 1.0 (its setter rejects it) and
    keeps its own default 2.0. Deviation: a fractional exponent on a negative base uses the
    odd extension instead of WEKA's NaN (see :mod:`spaces.slc._kernels`).
    """

    def __init__(self, C=1.0, filter_type=0, build_calibration=False, kernel="PolyKernel",
                 exponent=1.0, lower_order=True, omega=1.0, sigma=1.0, gamma=0.01,
                 tol=1e-3, random_state=0):
        self.C = C
        self.filter_type = filter_type
        self.build_calibration = build_calibration
        self.kernel = kernel
        self.exponent = exponent
        self.lower_order = lower_order
        self.omega = omega
        self.sigma = sigma
        self.gamma = gamma
        self.tol = tol
        self.random_state = random_state

    def _kernel_params(self) -> dict:
        exponent = float(self.exponent)
        if self.kernel == _kernels.NORMALIZED_POLY and exponent == 1.0:
            exponent = 2.0
        return dict(exponent=exponent, lower_order=bool(self.lower_order), omega=float(self.omega),
                    sigma=float(self.sigma), gamma=float(self.gamma))

    def _filter(self, X: np.ndarray) -> np.ndarray:
        X = _fill_missing(X, self.means_)
        return X if self.filter_ is None else (X - self.filter_[0]) * self.filter_[1] + self.filter_[2]

    def fit(self, X, y, sample_weight=None):
        X = _features(X)
        w = _weights(sample_weight, X.shape[0])
        keep = w > 0  # WEKA drops rows of weight 0
        X, y, w = X[keep], np.asarray(y)[keep], w[keep]
        self.classes_, yi = _target(X, y)
        if self.kernel not in _kernels.KERNELS:
            raise ValueError(f"unknown kernel {self.kernel!r}; expected one of {_kernels.KERNELS}")
        self.means_ = _column_means(X)
        filled = _fill_missing(X, self.means_)
        ft = int(self.filter_type)
        if ft == 0:
            self.filter_ = _range_scaling(filled, 0.0, 1.0)
        elif ft == 1:
            mean, sd = _standardisation(filled)
            self.filter_ = (mean, 1.0 / sd, np.zeros_like(mean))
        elif ft == 2:
            self.filter_ = None
        else:
            raise ValueError(f"filter_type must be 0, 1 or 2, got {self.filter_type!r}")
        self.train_ = self._filter(X)
        k = self.classes_.size
        if k < 2:
            self.svc_ = None
            return self
        gram = _kernels.kernel_matrix(self.kernel, self.train_, self.train_, **self._kernel_params())
        self.svc_ = SVC(C=float(self.C), kernel="precomputed", tol=float(self.tol),
                        decision_function_shape="ovo", random_state=int(self.random_state))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.svc_.fit(gram, yi, sample_weight=w)
        self.pairs_ = np.array([(i, j) for i in range(k) for j in range(i + 1, k)])
        if self.build_calibration:
            outputs = self._weka_outputs(gram)
            self.calibrators_ = []
            self.pair_weights_ = np.zeros(len(self.pairs_))
            for p, (i, j) in enumerate(self.pairs_):
                rows = (yi == i) | (yi == j)
                self.pair_weights_[p] = w[rows].sum()
                self.calibrators_.append(
                    WekaLogistic(ridge=1e-8).fit(outputs[rows, p:p + 1], (yi[rows] == j).astype(int),
                                                 sample_weight=w[rows]))
        return self

    def _weka_outputs(self, gram: np.ndarray) -> np.ndarray:
        """WEKA's SVM output per pair (i, j): positive means the second class j."""
        d = self.svc_.decision_function(gram)
        return d[:, None] if d.ndim == 1 else -d  # binary: >0 → class 1; ovo: >0 → class i

    def _test_gram(self, X) -> np.ndarray:
        Xf = self._filter(_features(X))
        gram = np.zeros((Xf.shape[0], self.train_.shape[0]))
        sv = self.svc_.support_
        gram[:, sv] = _kernels.kernel_matrix(self.kernel, Xf, self.train_[sv], **self._kernel_params())
        return gram

    def predict_proba(self, X):
        check_is_fitted(self, "train_")
        k = self.classes_.size
        if self.svc_ is None:
            return np.ones((_features(X).shape[0], 1))
        out = self._weka_outputs(self._test_gram(X))
        if not self.build_calibration:
            second_wins = (out > 0).astype(float)
            votes = (second_wins @ _indicator(self.pairs_[:, 1], k)
                     + (1.0 - second_wins) @ _indicator(self.pairs_[:, 0], k))
            return votes / len(self.pairs_)
        r = np.column_stack([cal.predict_proba(out[:, p:p + 1])[:, 0]
                             for p, cal in enumerate(self.calibrators_)])
        if k == 2:
            return np.column_stack([r[:, 0], 1.0 - r[:, 0]])
        return _pairwise_coupling(r, self.pair_weights_, self.pairs_, k)

    def predict(self, X):
        return self.classes_[np.argmax(self.predict_proba(X), axis=1)]


# ---------------------------------------------------------------------------------- builders
@register("VotedPerceptron", kind="slc")
def voted_perceptron(p: Params):
    """VotedPerceptron: i epochs, mk max perceptrons, e exponent of (x·y+1)^e; inputs scaled to [0, 1]."""
    return WekaVotedPerceptron(n_iter=p.int("i", 1), max_k=p.int("mk", 10000),
                               exponent=p.real("e", 1.0), normalize=True, random_state=p.random_state)


@register("MultilayerPerceptron", kind="slc")
def multilayer_perceptron(p: Params):
    """MultilayerPerceptron: lr, momentum m, hidden wildcard nhn; n2b/reset switch features OFF."""
    return WekaMultilayerPerceptron(
        learning_rate=p.real("lr", 0.3), momentum=p.real("m", 0.2), hidden_layers=p.cat("nhn", "a"),
        nominal_to_binary=not p.flag("n2b"), reset=not p.flag("reset"), decay=p.flag("decay"),
        random_state=p.random_state)


@register("SGD", kind="slc")
def sgd(p: Params):
    """SGD: loss lf (0 hinge, 1 log, 2 squared), lr_sgd, ridge r_sgd; nn/nrmv switch features OFF."""
    return WekaSGD(loss=int(p.cat("lf", "0")), learning_rate=p.real("lr_sgd", 0.01),
                   ridge=p.real("r_sgd", 1e-4), normalize=not p.flag("nn"),
                   replace_missing=not p.flag("nrmv"), random_state=p.random_state)


@register("LogisticRegression", kind="slc")
def logistic_regression(p: Params):
    """WEKA Logistic with ridge r_lr (C = 1/(2·ridge) on standardised attributes)."""
    return WekaLogistic(ridge=p.real("r_lr", 1e-8), random_state=p.random_state)


@register("SMO", kind="slc")
def smo(p: Params):
    """SMO: cost c, filter ft, bcm; kernel Poly/NormalizedPoly (exp, ulo), Puk (om, sig) or RBF (g)."""
    if p.has(_kernels.PUK):
        kernel = _kernels.PUK
    elif p.has(_kernels.RBF):
        kernel = _kernels.RBF
    else:
        kernel = p.cat("poly_kernel", _kernels.POLY)
    # <ulo> defaults to present (decision 9): absent from the tree means "use lower-order terms"
    lower_order = p.flag("ulo") if "ulo" in p else True
    return WekaSMO(C=p.real("c", 1.0), filter_type=int(p.cat("ft", "0")), build_calibration=p.flag("bcm"),
                   kernel=kernel, exponent=p.real("exp", 1.0), lower_order=lower_order,
                   omega=p.real("om", 1.0), sigma=p.real("sig", 1.0), gamma=p.real("g", 0.01),
                   random_state=p.random_state)

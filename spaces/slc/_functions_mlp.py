"""WEKA's MultilayerPerceptron as a scikit-learn estimator (search-space notes §1.1.11).

Why custom: scikit-learn's ``MLPClassifier`` has a softmax output, cross-entropy loss and no
WEKA learning-rate reset, while WEKA trains independent sigmoid outputs on the squared error,
normalises its attributes to [-1, 1] and restarts a diverging network at half the rate. The
training loop is vectorised per mini-batch (decision 10) and runs in single precision; a
network that still diverges raises :class:`NetworkDiverged` (a ``ValueError``), so the search
records a failed candidate instead of receiving NaN probabilities.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline

from ._functions_common import column_means, fill_missing, one_hot, range_scaling
from ._validation import ReplacesMissingValues, fit_inputs, labels, predict_inputs

#: the smallest learning rate a reset may reach before the network is declared untrainable
MIN_RATE = 1e-6
#: WEKA's SigmoidUnit returns exactly 0 / 1 beyond this net input
SIGMOID_CLAMP = 45.0
#: the net input of the training loop's hidden bias unit: its float32 sigmoid is exactly 1
BIAS_NET = 50.0


def _sigmoid_inplace(a: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-a))`` written into ``a`` (overflow → 0, as WEKA's clamped sigmoid)."""
    np.negative(a, out=a)
    np.exp(a, out=a)
    a += 1.0
    np.reciprocal(a, out=a)
    return a


class NetworkDiverged(ValueError):
    """WEKA: "Network cannot train. Try restarting with a smaller learning rate."

    A ``ValueError``: the hyper-parameters (learning rate, momentum) make training diverge,
    which the evaluation records as a failed candidate."""


class WekaMultilayerPerceptron(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
    """WEKA MultilayerPerceptron: one sigmoid hidden layer, sigmoid outputs, squared error.

    As WEKA: attributes normalised to [-1, 1] with the training range; weights initialised
    uniformly in [-0.05, 0.05]; the data shuffled once; ``epochs`` passes with
    ``Δw = rate·Σ weight·δ·input + momentum·Δw_prev``; ``decay`` divides the rate by the
    epoch number; ``reset`` restarts with half the rate when the weights diverge (NaN/inf),
    and without ``reset`` divergence raises :class:`NetworkDiverged`; ``hidden_layers`` is
    WEKA's wildcard a=(M+K)//2, i=M, o=K, t=M+K (or a number; 0 = no hidden layer);
    confidences are the K sigmoid outputs normalised to sum 1, the sigmoid clamped to 0 / 1
    beyond ±45 (WEKA's SigmoidUnit); a row whose outputs are all 0 — a saturated network, as
    momentum 1.0 tends to give — gets WEKA's fallback, the ZeroR distribution (weighted class
    counts + 1, normalised). Missing values → 0 after scaling.
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
        X, yi, w = fit_inputs(self, X, y, sample_weight, allow_nan=True)
        self.offset_, self.mult_, self.add_ = range_scaling(fill_missing(X, column_means(X)), -1.0, 1.0)
        Xs = self._scale(X)
        targets = one_hot(yi, self.classes_.size)
        counts = 1.0 + targets.T @ w                    # WEKA's fallback ZeroR, built in fit
        self.class_prior_ = counts / counts.sum()
        self.n_hidden_ = self._hidden_units(X.shape[1], self.classes_.size)
        rate = float(self.learning_rate)
        while True:
            layers = self._train(Xs, targets, w, rate)
            if layers is not None:
                break
            if not self.reset:
                raise NetworkDiverged(f"network cannot train: the weights diverge at learning rate "
                                      f"{rate:.3g} with momentum {self.momentum}; try a smaller "
                                      f"learning rate")
            rate /= 2.0
            if rate <= MIN_RATE:
                raise NetworkDiverged(f"network cannot train: the weights diverge even at learning "
                                      f"rate {rate:.3g} (learning_rate={self.learning_rate}, "
                                      f"momentum={self.momentum})")
        self.layers_ = layers
        self.learning_rate_ = rate
        return self

    def _train(self, X, T, w, rate):
        """All epochs at one learning rate; None when the weights diverge (NaN/inf).

        The per-batch work is a fixed sequence of in-place numpy calls on preallocated,
        contiguous buffers: the weights, their momentum terms and their gradients are each
        one flat array (one update of three calls for both layers), and every product writes
        into its buffer. The hidden layer's bias unit is computed as an extra hidden column
        whose net input is always BIAS_NET (input weights 0, bias weight BIAS_NET), so that
        its sigmoid is exactly 1 and its gradient exactly 0: the hidden buffer is then one
        contiguous array with the bias column included. The arithmetic of every other
        number is the plain mini-batch update described in the class docstring.
        """
        rng = np.random.default_rng(int(self.random_state))
        order = rng.permutation(X.shape[0])
        m, k, h = X.shape[1], T.shape[1], self.n_hidden_
        dt = np.float32  # single precision halves the cost of this Python-level loop
        # weight matrices carry the bias (threshold) as their last row: inputs get a 1 column
        shapes = [(m + 1, h), (h + 1, k)] if h > 0 else [(m + 1, k)]
        init = [rng.uniform(-0.05, 0.05, size=s).astype(dt) for s in shapes]
        if h > 0:  # the bias unit's column
            init[0] = np.hstack([init[0], np.zeros((m + 1, 1), dtype=dt)])
            init[0][m, h] = BIAS_NET
        ends = np.cumsum([p.size for p in init])
        params = np.concatenate([p.ravel() for p in init])
        velocity, grads = np.zeros_like(params), np.zeros_like(params)
        layers = [params[e - p.size:e].reshape(p.shape) for p, e in zip(init, ends)]
        grad = [grads[e - p.size:e].reshape(p.shape) for p, e in zip(init, ends)]
        bs = max(1, int(self.batch_size))
        Xa = np.hstack([X, np.ones((X.shape[0], 1))]).astype(dt)
        weighted = not np.all(w == w[0])
        batches = []
        for s in range(0, X.shape[0], bs):
            rows = order[s:s + bs]
            xa = Xa[rows]
            batches.append((xa, xa.T.copy(), T[rows].astype(dt),
                            w[rows, None].astype(dt) if weighted else None if w[0] == 1.0 else dt(w[0])))
        n_max = min(bs, X.shape[0])
        buffers = {r: (np.empty((r, h + 1), dtype=dt), np.empty((r, h + 1), dtype=dt),
                       np.empty((r, h + 1), dtype=dt), np.empty((r, k), dtype=dt),
                       np.empty((r, k), dtype=dt)) for r in {n_max, X.shape[0] % bs or n_max}}
        mom = dt(self.momentum)
        mm, sub = np.matmul, np.subtract
        with np.errstate(over="ignore", invalid="ignore"):  # divergence is detected below
            for epoch in range(1, int(self.epochs) + 1):
                check_deadline()
                step = dt((rate / epoch if self.decay else rate) / np.sqrt(bs))
                for xa, xaT, tb, wb in batches:
                    ha, d_hid, tmp, out, d_out = buffers[xa.shape[0]]
                    if h > 0:
                        W1, W2 = layers
                        mm(xa, W1, out=ha)
                        _sigmoid_inplace(ha)  # the last column: exactly 1, the bias input
                        mm(ha, W2, out=out)
                    else:
                        mm(xa, layers[0], out=out)
                    _sigmoid_inplace(out)
                    sub(tb, out, out=d_out)
                    d_out *= out
                    sub(1.0, out, out=out)
                    d_out *= out
                    if wb is not None:  # (a weight of 1 changes nothing)
                        d_out *= wb
                    d_out *= step  # scales both layers' updates (the hidden deltas are linear in it)
                    if h > 0:
                        mm(ha.T, d_out, out=grad[1])
                        mm(d_out, W2.T, out=d_hid)
                        d_hid *= ha
                        sub(1.0, ha, out=tmp)
                        d_hid *= tmp  # 0 in the bias column: its weights never change
                        mm(xaT, d_hid, out=grad[0])
                    else:
                        mm(xaT, d_out, out=grad[0])
                    velocity *= mom
                    velocity += grads
                    params += velocity
                if not np.isfinite(params).all():
                    return None
        if h > 0:
            layers[0] = layers[0][:, :h]
        return [p.astype(float) for p in layers]

    def predict_proba(self, X):
        A = self._scale(predict_inputs(self, X, allow_nan=True, fitted="layers_"))
        for W in self.layers_[:-1]:
            A = expit(A @ W[:-1] + W[-1])
        W = self.layers_[-1]
        z = A @ W[:-1] + W[-1]
        if not np.isfinite(z).all():   # inputs far outside the training range overflow
            raise ValueError("MultilayerPerceptron: non-finite network output; inputs far outside "
                             "the training range")
        out = np.where(z < -SIGMOID_CLAMP, 0.0, np.where(z > SIGMOID_CLAMP, 1.0, expit(z)))
        total = out.sum(axis=1, keepdims=True)
        dead = total[:, 0] <= 0
        out[~dead] /= total[~dead]
        out[dead] = self.class_prior_   # WEKA: every output 0 → its ZeroR's distribution
        return out

    def predict(self, X):
        return labels(self, self.predict_proba(X))

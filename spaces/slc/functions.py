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

Because they replace missing values themselves (WEKA ReplaceMissingValues), all five accept
NaN in ``X`` (the ``allow_nan`` tag); infinities are refused. The binary-only learners (SGD,
VotedPerceptron) are fitted one-vs-rest on multi-class targets (decision 3).

This module holds VotedPerceptron and the builders; the other learners live in
``_functions_mlp``, ``_functions_linear`` (SGD, Logistic) and ``_functions_smo``, the shared
preprocessing in ``_functions_common`` and WEKA's kernels in ``_kernels``.
"""
from __future__ import annotations

import numpy as np
from scipy.special import expit, logsumexp
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from . import _kernels
from ._functions_common import column_means, fill_missing, range_scaling
from ._functions_linear import WekaLogistic, WekaSGD
from ._functions_mlp import NetworkDiverged, WekaMultilayerPerceptron
from ._functions_smo import WekaSMO
from ._validation import ReplacesMissingValues, fit_inputs, labels, predict_inputs

# reached through this module: the pairwise coupling by the tests, WEKA's Normalize by ML-BPNN
# (spaces/mlc/adaptation.py)
from ._functions_smo import _pairwise_coupling  # noqa: E402,F401

_range_scaling = range_scaling

__all__ = ["WekaVotedPerceptron", "WekaMultilayerPerceptron", "NetworkDiverged", "WekaSGD",
           "WekaLogistic", "WekaSMO"]


# ---------------------------------------------------------------------------- VotedPerceptron
def _normalised_sigmoids(z: np.ndarray) -> np.ndarray:
    """``sigmoid(z_k) / Σ_j sigmoid(z_j)`` per row, computed from ``log sigmoid``.

    WEKA MultiClassClassifier's normalisation of its 1-vs-rest members; in log space a row
    where every sigmoid underflows to 0 still gets a distribution (the least negative output
    wins) instead of 0/0.
    """
    log_pos = -np.logaddexp(0.0, -z)
    return np.exp(log_pos - logsumexp(log_pos, axis=1, keepdims=True))


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


class WekaVotedPerceptron(ReplacesMissingValues, ClassifierMixin, BaseEstimator):
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

    def _prepare(self, X: np.ndarray) -> np.ndarray:
        X = fill_missing(X, self.means_)
        scaling = getattr(self, "scaling_", None)  # None also for models pickled before scaling existed
        return X if scaling is None else (X - scaling[0]) * scaling[1] + scaling[2]

    def fit(self, X, y):
        X, yi, _ = fit_inputs(self, X, y, allow_nan=True)
        self.means_ = column_means(X)
        self.scaling_ = range_scaling(fill_missing(X, self.means_), 0.0, 1.0) if self.normalize else None
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
        X = self._prepare(predict_inputs(self, X, allow_nan=True, fitted="perceptrons_"))
        return np.column_stack([_vp_output(X, *perceptron, float(self.exponent))
                                for perceptron in self.perceptrons_])

    def predict_proba(self, X):
        out = self._outputs(X)
        if self.classes_.size == 2:
            p1 = expit(out[:, 0])
            return np.column_stack([1.0 - p1, p1])
        return _normalised_sigmoids(out)

    def predict(self, X):
        return labels(self, self.predict_proba(X))


# ---------------------------------------------------------------------------------- builders
@register("VotedPerceptron", kind="slc")
def voted_perceptron(p: Params):
    """VotedPerceptron: i epochs, mk max perceptrons, e exponent of (x·y+1)^e; inputs scaled to [0, 1]."""
    return WekaVotedPerceptron(n_iter=p.int("i"), max_k=p.int("mk"),
                               exponent=p.real("e"), normalize=True, random_state=p.random_state)


@register("MultilayerPerceptron", kind="slc")
def multilayer_perceptron(p: Params):
    """MultilayerPerceptron: lr, momentum m (both up to 1.0; a diverging network raises
    NetworkDiverged), hidden wildcard nhn; n2b/reset switch features OFF; seed s_mlp (WEKA -S)."""
    return WekaMultilayerPerceptron(
        learning_rate=p.real("lr"), momentum=p.real("m"), hidden_layers=p.cat("nhn"),
        nominal_to_binary=not p.flag("n2b"), reset=not p.flag("reset"), decay=p.flag("decay"),
        random_state=p.seed("s_mlp"))


@register("SGD", kind="slc")
def sgd(p: Params):
    """SGD: loss lf (0 hinge, 1 log, 2 squared), lr_sgd, ridge r_sgd; nn/nrmv switch features OFF."""
    return WekaSGD(loss=int(p.cat("lf")), learning_rate=p.real("lr_sgd"),
                   ridge=p.real("r_sgd"), normalize=not p.flag("nn"),
                   replace_missing=not p.flag("nrmv"), random_state=p.random_state)


@register("LogisticRegression", kind="slc")
def logistic_regression(p: Params):
    """WEKA Logistic with ridge r_lr (C = 1/(2·ridge) on standardised attributes)."""
    return WekaLogistic(ridge=p.real("r_lr"), random_state=p.random_state)


@register("SMO", kind="slc")
def smo(p: Params):
    """SMO: cost c, filter ft, bcm; kernel Poly/NormalizedPoly (exp, ulo), Puk (om, sig) or RBF (g)."""
    if p.has(_kernels.PUK):
        kernel = _kernels.PUK
    elif p.has(_kernels.RBF):
        kernel = _kernels.RBF
    else:
        kernel = p.cat("poly_kernel")
    return WekaSMO(C=p.real("c"), filter_type=int(p.cat("ft")), build_calibration=p.flag("bcm"),
                   kernel=kernel, exponent=p.real("exp"), lower_order=p.flag("ulo"),
                   omega=p.real("om"), sigma=p.real("sig"), gamma=p.real("g"),
                   random_state=p.random_state)

"""Ensemble losses of majority-vote ensembles (001 §4.3; notes bo-and-ensembles §3.4–3.5).

Why: ensemble optimisation (``--method eo``) labels every evaluated model by the loss of the
current ensemble with that model added, and the plain 0-1 loss of a vote is flat over most
additions (one more vote rarely flips a majority). These are the thesis's losses that reward
margin and disagreement smoothly. They work on *votes*: ``votes[h, i]`` is member ``h``'s
predicted class for example ``i``. Multi-label data is voted per (row, label) cell — each cell a
binary example, a member's vote its 0/1 prediction — so every loss is then a smooth Hamming loss
(our extension: the documents define none for multi-label outputs, notes §9).

With ``m`` members, ``v*`` the votes for the true class and ``v_max`` those of the strongest wrong
class: the margin is ``M = (1/m) Σ_h [1 − 2·l01(h)]`` (Eq. 4.6), the vote's 0-1 loss counts a tie
as an error (the toy tables' convention), the squared margin is ``(1 − M)²/4`` (Eq. 4.8), the
adapted C-bound ``½ (1 − sign(μ1) μ1²/μ2)`` from the margin's moments (Eqs. 4.21–4.22; 1 when
``μ2 = 0``), and the sigmoid loss ``1 − s((v* − v_max)/m, a(m))`` (Eq. 4.23) with ``a(m)`` the root
above 1 of ``s(1, a) − s(1 − 2/m, a) = ε``, ε = 1e-3 (ensembles under 3 members use ``a(3)``).
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

#: the smallest loss step of the sigmoid (001 §4.3)
EPSILON = 1e-3
LOSSES = ("l01", "margin", "squared_margin", "c_bound", "sigmoid")


def votes_of(predictions: list[np.ndarray]) -> tuple[np.ndarray, bool]:
    """``(votes, binary)``: members' predictions stacked as votes; multi-label (n, L) 0/1 matrices
    are flattened into binary cells."""
    stacked = np.stack([np.asarray(p) for p in predictions])
    if stacked.ndim == 3:
        return stacked.reshape(stacked.shape[0], -1).astype(np.int64), True
    return stacked.astype(np.int64), False


def margins(votes: np.ndarray, y: np.ndarray, n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """``(M, D)`` per example: the margin of Eq. 4.6 and ``(v* − v_max)/m``."""
    votes = np.atleast_2d(votes)
    m, n = votes.shape
    y = np.asarray(y, dtype=np.int64).ravel()
    correct = (votes == y).sum(axis=0)
    counts = np.zeros((n, n_classes), dtype=np.int64)
    np.add.at(counts, (np.tile(np.arange(n), m), votes.ravel()), 1)
    counts[np.arange(n), y] = -1  # the true class is not a wrong class
    strongest_wrong = counts.max(axis=1).clip(min=0)
    return (2.0 * correct - m) / m, (correct - strongest_wrong) / m


@lru_cache(maxsize=None)
def sigmoid_slope(m: int, epsilon: float = EPSILON) -> float:
    """a(m): the root above 1 of s(1, a) − s(1 − 2/m, a) = ε (m < 3 uses a(3))."""
    m = max(int(m), 3)

    def gap(a: float) -> float:
        return _sigmoid(1.0, a) - _sigmoid(1.0 - 2.0 / m, a) - epsilon

    from scipy.optimize import brentq  # here: naming the losses (the command line) needs no optimiser

    return float(brentq(gap, 1.0, 1e4, xtol=1e-10))


def _sigmoid(x, a: float):
    return 1.0 / (1.0 + np.exp(-a * np.asarray(x, dtype=float)))


def ensemble_loss(votes: np.ndarray, y: np.ndarray, n_classes: int, loss: str, slope: float | None = None) -> float:
    """The named loss of the majority vote of ``votes`` (m, n) on targets ``y`` (n,); ``slope``: the
    sigmoid's a (None: a(m))."""
    M, D = margins(votes, y, n_classes)
    if loss == "l01":
        return float(np.mean(D <= 0))  # a tie is an error
    if loss == "margin":
        return float(np.mean((1.0 - M) / 2.0))
    if loss == "squared_margin":
        return float(np.mean((1.0 - M) ** 2 / 4.0))
    if loss == "c_bound":
        mu1, mu2 = float(np.mean(M)), float(np.mean(M ** 2))
        if mu2 == 0.0:
            return 1.0
        return 0.5 * (1.0 - np.sign(mu1) * mu1 ** 2 / mu2)
    if loss == "sigmoid":
        a = sigmoid_slope(np.atleast_2d(votes).shape[0]) if slope is None else slope
        return float(np.mean(1.0 - _sigmoid(D, a)))
    raise ValueError(f"unknown ensemble loss {loss!r}; known: {', '.join(LOSSES)}")


def diversity(a: np.ndarray, b: np.ndarray, multilabel: bool) -> float:
    """DivBO's diversity of two models from their validation scores (002 Eq. 3), in [0, 1].

    Single-label, (n, classes) probabilities: ``(√2/2) · mean over rows of ‖p_a − p_b‖₂``.
    Multi-label, (n, labels) scores: each label is a two-class distribution (p, 1 − p), whose distance
    is ``√2 |p_a − p_b|``, so the same formula averaged over the labels is the mean over rows and labels
    of ``|p_a − p_b|`` — our definition (the documents define none for multi-label data)."""
    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    if multilabel:
        return float(np.mean(np.abs(d)))
    return float(np.sqrt(0.5) * np.mean(np.linalg.norm(d, axis=1)))

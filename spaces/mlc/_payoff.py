"""Payoff functions (``<pof>``) that rate a candidate classifier chain.

MCC, PMCC (and, nominally, CT) rate a chain by one of 23 MEKA ``Result`` measures
computed on the training set. MEKA *maximises the raw value*, so a loss such as
Hamming loss selects the worst chain; decision 4 (search-space notes §1.2.0, §6)
fixes the orientation per measure: gains are maximised, losses minimised. This
module holds the measures and that orientation in one place.

Every measure takes ``(Y, P, S)``: the true 0/1 labels, the hard predictions and
the soft scores, all (n, L). Set measures (Jaccard, Hamming, F1, precision, ...)
use ``P``; ranking and probability measures (rank loss, one error, average
precision, log loss, AUROC, AUPRC) use ``S`` (decision 1: chains output soft
scores; MEKA fed them a chain's hard 0/1 output). Formulas follow MEKA's
``meka.core.Metrics``, except rank loss and average precision, which use
scikit-learn's ranking conventions (decision 8: tied pairs count as mis-ordered).

:func:`utility` turns any measure into a non-negative "larger is better" number:
a gain as it is, a loss as ``upper - loss`` where ``upper`` is the loss's maximum
(1, or ``log L`` / ``log N`` for the limited log losses). Ordering by utility is
ordering by the oriented payoff, and PMCC can normalise utilities into weights.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy.stats import rankdata
from sklearn.metrics import (average_precision_score, label_ranking_average_precision_score,
                             label_ranking_loss)


def _div(a, b):
    """a / b elementwise, 0 where b == 0."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    out = np.zeros(np.broadcast(a, b).shape)
    np.divide(a, b, out=out, where=b != 0)
    return out


def _counts(Y, P, axis=None):
    tp = np.sum((Y == 1) & (P == 1), axis=axis)
    fp = np.sum((Y == 0) & (P == 1), axis=axis)
    fn = np.sum((Y == 1) & (P == 0), axis=axis)
    return tp, fp, fn


# ----------------------------------------------------------------------------- set measures

def jaccard_index(Y, P, S):
    """Example-based Jaccard index (MEKA 'Accuracy'); 1 for a row where both sets are empty."""
    inter = np.sum((Y == 1) & (P == 1), axis=1)
    union = np.sum((Y == 1) | (P == 1), axis=1)
    return float(np.mean(np.where(union > 0, _div(inter, union), 1.0)))


def hamming_loss(Y, P, S):
    return float(np.mean(Y != P))


def exact_match(Y, P, S):
    return float(np.mean(np.all(Y == P, axis=1)))


def harmonic_score(Y, P, S):
    """Mean over rows of the harmonic mean of the accuracy on the 0s and on the 1s.

    A row without positives or without negatives is undefined in MEKA and skipped;
    0 if every row is undefined.
    """
    pos = np.sum(Y == 1, axis=1)
    neg = np.sum(Y == 0, axis=1)
    ok = (pos > 0) & (neg > 0)
    if not np.any(ok):
        return 0.0
    acc1 = _div(np.sum((Y == 1) & (P == 1), axis=1), pos)[ok]
    acc0 = _div(np.sum((Y == 0) & (P == 0), axis=1), neg)[ok]
    h = np.where((acc0 > 0) & (acc1 > 0), _div(2.0 * acc0 * acc1, acc0 + acc1), 0.0)
    return float(np.mean(h))


def micro_precision(Y, P, S):
    tp, fp, _ = _counts(Y, P)
    return float(_div(tp, tp + fp))


def micro_recall(Y, P, S):
    tp, _, fn = _counts(Y, P)
    return float(_div(tp, tp + fn))


def macro_precision(Y, P, S):
    tp, fp, _ = _counts(Y, P, axis=0)
    return float(np.mean(_div(tp, tp + fp)))


def macro_recall(Y, P, S):
    tp, _, fn = _counts(Y, P, axis=0)
    return float(np.mean(_div(tp, tp + fn)))


def _f1(tp, fp, fn):
    prec = _div(tp, tp + fp)
    rec = _div(tp, tp + fn)
    return _div(2.0 * prec * rec, prec + rec)


def f1_micro(Y, P, S):
    return float(_f1(*_counts(Y, P)))


def f1_macro_by_example(Y, P, S):
    """Mean per-row F1; a row with no true and no predicted label scores 0 (as MEKA)."""
    return float(np.mean(_f1(*_counts(Y, P, axis=1))))


def f1_macro_by_label(Y, P, S):
    return float(np.mean(_f1(*_counts(Y, P, axis=0))))


def levenshtein_distance(Y, P, S):
    """Mean over rows of the edit distance between the label strings, divided by L.

    Vectorised over rows: the dynamic programme runs along anti-diagonals.
    """
    Y = np.asarray(Y, dtype=np.int8)
    P = np.asarray(P, dtype=np.int8)
    n, L = Y.shape
    if L == 0:
        return 0.0
    big = np.int32(1 << 20)
    prev2 = np.full((n, L + 1), big, dtype=np.int32)     # diagonal k-2, indexed by i
    prev1 = np.full((n, L + 1), big, dtype=np.int32)     # diagonal k-1
    prev1[:, 0] = 0                                       # D[0][0]
    for k in range(1, 2 * L + 1):
        cur = np.full((n, L + 1), big, dtype=np.int32)
        lo, hi = max(1, k - L), min(k - 1, L)
        if lo <= hi:
            i = np.arange(lo, hi + 1)
            cost = (Y[:, i - 1] != P[:, k - i - 1]).astype(np.int32)
            cur[:, i] = np.minimum(np.minimum(prev1[:, i - 1] + 1, prev1[:, i] + 1),
                                   prev2[:, i - 1] + cost)
        if k <= L:
            cur[:, 0] = k          # D[0][k]
            cur[:, k] = k          # D[k][0]
        prev2, prev1 = prev1, cur
    return float(np.mean(prev1[:, L]) / L)


# ----------------------------------------------------------------------------- score measures

def rank_loss(Y, P, S):
    return float(label_ranking_loss(Y, S))


def avg_precision(Y, P, S):
    return float(label_ranking_average_precision_score(Y, S))


def one_error(Y, P, S):
    """Fraction of rows whose top-scored label (first on ties) is not relevant."""
    top = np.argmax(S, axis=1)
    return float(np.mean(Y[np.arange(Y.shape[0]), top] <= 0))


def _log_loss(Y, S, limit):
    """MEKA L_LogLoss: per-cell log loss capped at ``limit``, summed, divided by N·L."""
    Y = np.asarray(Y, dtype=float)
    S = np.clip(np.asarray(S, dtype=float), 0.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        cell = -(Y * np.log(S) + (1.0 - Y) * np.log(1.0 - S))
    cell = np.where(Y == S, 0.0, cell)
    cell = np.nan_to_num(cell, nan=0.0, posinf=limit)
    return float(np.sum(np.minimum(cell, limit)) / Y.size)


def log_loss_lim_l(Y, P, S):
    return _log_loss(Y, S, math.log(Y.shape[1]) if Y.shape[1] > 1 else 0.0)


def log_loss_lim_d(Y, P, S):
    return _log_loss(Y, S, math.log(Y.shape[0]) if Y.shape[0] > 1 else 0.0)


def auroc_macro(Y, P, S):
    """Mean per-label ROC area (Mann-Whitney, ties count 1/2) over labels with both classes.

    0.5 when no label has both classes (MEKA would give NaN).
    """
    pos = Y.sum(axis=0)
    neg = Y.shape[0] - pos
    ok = (pos > 0) & (neg > 0)
    if not np.any(ok):
        return 0.5
    ranks = rankdata(S[:, ok], axis=0)
    r_pos = np.sum(ranks * (Y[:, ok] == 1), axis=0)
    auc = (r_pos - pos[ok] * (pos[ok] + 1) / 2.0) / (pos[ok] * neg[ok])
    return float(np.mean(auc))


def auprc_macro(Y, P, S):
    """Mean per-label average precision over labels with a positive; 0 if none has one."""
    cols = np.flatnonzero(Y.sum(axis=0) > 0)
    if cols.size == 0:
        return 0.0
    return float(np.mean([average_precision_score(Y[:, j], S[:, j]) for j in cols]))


# ----------------------------------------------------------------------------- the table

@dataclass(frozen=True)
class Payoff:
    """One ``<pof>`` value: the grammar identifier, MEKA's measure name, orientation."""

    name: str
    meka_name: str
    fn: Callable[[np.ndarray, np.ndarray, np.ndarray], float]
    loss: bool = False
    #: the largest value a loss can take, given (n, L); unused for gains
    upper: Callable[[int, int], float] = lambda n, L: 1.0


def _one_minus(fn):
    def loss(Y, P, S):
        return 1.0 - fn(Y, P, S)
    loss.__doc__ = f"1 - {fn.__name__}"
    return loss


PAYOFFS: dict[str, Payoff] = {p.name: p for p in (
    Payoff("Accuracy", "Accuracy", jaccard_index),
    Payoff("Jaccard_index", "Jaccard index", jaccard_index),
    Payoff("Hamming_score", "Hamming score", _one_minus(hamming_loss)),
    Payoff("Exact_match", "Exact match", exact_match),
    Payoff("Jaccard_distance", "Jaccard distance", _one_minus(jaccard_index), loss=True),
    Payoff("Hamming_loss", "Hamming loss", hamming_loss, loss=True),
    Payoff("ZeroOne_loss", "ZeroOne loss", _one_minus(exact_match), loss=True),
    Payoff("Harmonic_score", "Harmonic score", harmonic_score),
    Payoff("One_error", "One error", one_error, loss=True),
    Payoff("Rank_loss", "Rank loss", rank_loss, loss=True),
    Payoff("Avg_precision", "Avg precision", avg_precision),
    Payoff("LogLoss_lim_L", "Log Loss (lim. L)", log_loss_lim_l, loss=True,
           upper=lambda n, L: math.log(L) if L > 1 else 0.0),
    Payoff("LogLoss_lim_D", "Log Loss (lim. D)", log_loss_lim_d, loss=True,
           upper=lambda n, L: math.log(n) if n > 1 else 0.0),
    Payoff("Micro_Precision", "Micro Precision", micro_precision),
    Payoff("Micro_Recall", "Micro Recall", micro_recall),
    Payoff("Macro_Precision", "Macro Precision", macro_precision),
    Payoff("Macro_Recall", "Macro Recall", macro_recall),
    Payoff("F1_micro", "F1 (micro averaged)", f1_micro),
    Payoff("F1_macro_by_example", "F1 (macro averaged by example)", f1_macro_by_example),
    Payoff("F1_macro_by_label", "F1 (macro averaged by label)", f1_macro_by_label),
    Payoff("AUPRC_macro", "AUPRC (macro averaged)", auprc_macro),
    Payoff("AUROC_macro", "AUROC (macro averaged)", auroc_macro),
    Payoff("Levenshtein_distance", "Levenshtein distance", levenshtein_distance, loss=True),
)}


def _key(name: str) -> str:
    return "".join(ch for ch in str(name).lower() if ch.isalnum())


_ALIASES = {_key(p.name): p for p in PAYOFFS.values()}
_ALIASES.update({_key(p.meka_name): p for p in PAYOFFS.values()})
_ALIASES[_key("AURUC macro")] = PAYOFFS["AUROC_macro"]          # the thesis's typo (I-9)


def get_payoff(name: str) -> Payoff:
    """The payoff for a grammar identifier (``Exact_match``) or a MEKA name (``Exact match``)."""
    try:
        return _ALIASES[_key(name)]
    except KeyError:
        raise ValueError(f"unknown payoff {name!r}; expected one of {sorted(PAYOFFS)}") from None


def raw_payoff(name: str, Y, P, S) -> float:
    """The measure's own value (a loss is returned as a loss)."""
    Y = np.asarray(Y)
    return get_payoff(name).fn(Y, np.asarray(P), np.asarray(S, dtype=float))


def utility(name: str, Y, P, S) -> float:
    """Oriented, non-negative payoff: larger is always better (decision 4)."""
    pay = get_payoff(name)
    value = raw_payoff(name, Y, P, S)
    if pay.loss:
        n, L = np.asarray(Y).shape
        return max(0.0, pay.upper(n, L) - value)
    return value

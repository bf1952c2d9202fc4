"""Evaluation measures and the fitness registry.

Why: the search compares candidates by one number, Auto-MEKA's fitness (thesis Eq. 5.1)

    fitness = [EM + (1 − HL) + FM + (1 − RL)] / 4,

computed on the validation split, and reports the four measures (and others) on test
data. Definitions follow thesis Ch. 3 §3.2 and ``shared/notes/methods.md`` §2, with
MEKA's conventions where the thesis leaves a case open. The multi-label measures equal
the scikit-learn functions named below (a randomised test checks it, ties included) but
are computed directly with numpy: scikit-learn's input validation cost ~170 ms per
candidate, more than the whole evaluation overhead budget of 50 ms.

======================  ==========================================  =====================================
measure                 definition                                  implementation / convention
======================  ==========================================  =====================================
exact_match (EM)        Eq. 3.1, share of rows with Z = Y           ``accuracy_score`` (subset accuracy)
hamming_loss (HL)       Eq. 3.2 divided by q (the thesis's "/n" is  ``hamming_loss``
                        a typo)
f1_macro (FM)           Eqs. 3.10–3.11, per-label F1 averaged       ``f1_score(average="macro",
                                                                    zero_division=0)``: a label with TP = 0
                                                                    scores 0, even if never present nor
                                                                    predicted (MEKA ``P_FmacroAvgL``)
ranking_loss (RL)       Eq. 3.13 on the scores                      ``label_ranking_loss``: a tied
                                                                    (relevant, irrelevant) pair counts as
                                                                    mis-ordered (decision 8); rows with
                                                                    no or all labels count 0
f1_example              Eq. 3.6, per-row F1 averaged                ``f1_score(average="samples",
                                                                    zero_division=0)``: an empty Y and
                                                                    empty Z scores 0 (MEKA ``F1``)
f1_micro                Eq. 3.12 with F1                            ``f1_score(average="micro",
                                                                    zero_division=0)``
jaccard                 Eq. 3.3, example-based accuracy |Z∩Y|/|Z∪Y| ``jaccard_score(average="samples",
                                                                    zero_division=1)``: empty Y and Z
                                                                    scores 1 (MEKA ``P_Accuracy``)
one_error               share of rows whose top-scored label is     numpy; the first maximum wins ties
                        irrelevant                                  and a row with no labels is an error
                                                                    (MEKA ``L_OneError``)
coverage                Eq. 3.14, mean (worst rank of a relevant    numpy = ``coverage_error`` − 1; ties
                        label) − 1                                  count pessimistically; rows with no
                                                                    labels count 0
average_precision       Eq. 3.15                                    ``label_ranking_average_precision_
                                                                    score``: ties pessimistic, a row with
                                                                    no labels scores 1 (MEKA agrees)
======================  ==========================================  =====================================

Single-label tasks (PBIL-Auto-Ens, paper 000 §5.3): ``error_rate`` = misclassified /
total; ``macro_precision`` and ``macro_recall`` = per-class precision and recall,
each class in turn positive, averaged over classes (a class never predicted has
precision 0); ``macro_f_measure`` = 2·P·R / (P + R) of those *averaged* P and R, which
is not scikit-learn's ``f1_score(average="macro")``; ``balanced_accuracy`` = recall averaged
over the classes present; ``log_loss`` on the class probabilities. The fitnesses are
``accuracy`` (1 − error rate, the paper's), ``macro_f_measure`` and ``balanced_accuracy``.

**The fitness registry.** :data:`FITNESS` maps a name to a :class:`Fitness`, a
callable ``(Y_true, Y_pred, scores) -> float``. **Every registered fitness is
maximised and lies in [0, 1]**, so a failed candidate's fitness 0 is always the worst
(thesis §6.1.2); losses are registered in their complemented form
(``hamming_score`` = 1 − HL, ``ranking_score`` = 1 − RL, ``one_error_score``,
``coverage_score`` = 1 − coverage / (q − 1)). :func:`get_fitness` raises a
``ValueError`` listing the known names. :func:`multilabel_measures` returns every
measure (losses as losses) together with every multi-label fitness, so
``measures[name]`` works for any registered multi-label fitness name.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

__all__ = [
    "FITNESS", "Fitness", "MAXIMISE", "average_precision", "balanced_accuracy", "coverage", "error_rate",
    "exact_match", "f1_example", "f1_macro", "f1_micro", "fitness", "fitness_names", "get_fitness", "hamming_loss",
    "jaccard", "macro_f_measure", "macro_precision", "macro_recall", "MULTILABEL_FITNESS", "multilabel_measures",
    "one_error", "ranking_loss", "SINGLELABEL_FITNESS", "singlelabel_measures",
]

#: Direction of every registered fitness: larger is better.
MAXIMISE = True


# --------------------------------------------------------------------------------------------
# Input checks
# --------------------------------------------------------------------------------------------

def _matrix(a: Any, what: str) -> np.ndarray:
    if hasattr(a, "toarray"):
        a = a.toarray()
    arr = np.asarray(a)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{what} must be a 2-D (n_instances × n_labels) array, got shape {arr.shape}")
    return arr


def _binary(a: Any, what: str) -> np.ndarray:
    arr = _matrix(a, what)
    if arr.size and not ((arr == 0) | (arr == 1)).all():  # np.isin costs 30 µs a call; this is one pass
        raise ValueError(f"{what} must contain only 0 and 1")
    return arr.astype(np.int8)


def _pair(Y_true: Any, Y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    Y, Z = _binary(Y_true, "Y_true"), _binary(Y_pred, "Y_pred")
    if Y.shape != Z.shape:
        raise ValueError(f"Y_true {Y.shape} and Y_pred {Z.shape} differ in shape")
    if Y.shape[0] == 0:
        raise ValueError("no instances to evaluate")
    return Y, Z


def _counts(Y: np.ndarray, Z: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(TP, FP, FN) summed along ``axis``."""
    y, z = Y.astype(bool), Z.astype(bool)
    return ((y & z).sum(axis=axis).astype(float), (~y & z).sum(axis=axis).astype(float),
            (y & ~z).sum(axis=axis).astype(float))


def _row_blocks(shape: tuple[int, int], budget: int = 4_000_000):
    """Row slices whose (rows × L × L) pairwise tables stay within ``budget`` cells."""
    n, q = shape
    step = max(1, budget // max(q * q, 1))
    for start in range(0, n, step):
        yield slice(start, min(start + step, n))


def _ranked(Y_true: Any, scores: Any) -> tuple[np.ndarray, np.ndarray]:
    Y = _binary(Y_true, "Y_true")
    S = _matrix(scores, "scores").astype(np.float64)
    if Y.shape != S.shape:
        raise ValueError(f"Y_true {Y.shape} and scores {S.shape} differ in shape")
    if Y.shape[0] == 0:
        raise ValueError("no instances to evaluate")
    if not np.all(np.isfinite(S)):
        raise ValueError("scores must be finite")
    return Y, S


# --------------------------------------------------------------------------------------------
# Multi-label measures
# --------------------------------------------------------------------------------------------

def exact_match(Y_true: Any, Y_pred: Any) -> float:
    """Eq. 3.1: share of instances whose predicted label set equals the true one (higher is better)."""
    Y, Z = _pair(Y_true, Y_pred)
    return float(np.mean(np.all(Y == Z, axis=1)))


def hamming_loss(Y_true: Any, Y_pred: Any) -> float:
    """Eq. 3.2 (divided by q): share of wrong instance–label pairs (lower is better)."""
    Y, Z = _pair(Y_true, Y_pred)
    return float(np.mean(Y != Z))


def f1_macro(Y_true: Any, Y_pred: Any) -> float:
    """Eqs. 3.10–3.11: per-label F1 averaged over labels; TP = 0 gives 0 (MEKA). Higher is better."""
    Y, Z = _pair(Y_true, Y_pred)
    # numpy rather than f1_score: identical values, without ~20 ms of validation per call
    tp, fp, fn = _counts(Y, Z, axis=0)
    return float(np.mean(np.where(tp > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)))


def f1_micro(Y_true: Any, Y_pred: Any) -> float:
    """Eq. 3.12: F1 of the pooled TP/FP/FN counts; 0 when nothing is true or predicted. Higher is better."""
    Y, Z = _pair(Y_true, Y_pred)
    tp, fp, fn = (float(c.sum()) for c in _counts(Y, Z, axis=0))
    return 2 * tp / (2 * tp + fp + fn) if tp > 0 else 0.0


def f1_example(Y_true: Any, Y_pred: Any) -> float:
    """Eq. 3.6: per-instance F1 averaged; an instance with empty Y and Z scores 0 (MEKA). Higher is better."""
    Y, Z = _pair(Y_true, Y_pred)
    tp, fp, fn = _counts(Y, Z, axis=1)
    return float(np.mean(np.where(tp > 0, 2 * tp / np.maximum(2 * tp + fp + fn, 1), 0.0)))


def jaccard(Y_true: Any, Y_pred: Any) -> float:
    """Eq. 3.3, example-based accuracy |Z∩Y|/|Z∪Y|; empty Y and Z score 1 (MEKA). Higher is better."""
    Y, Z = _pair(Y_true, Y_pred)
    tp, fp, fn = _counts(Y, Z, axis=1)
    union = tp + fp + fn
    return float(np.mean(np.where(union > 0, tp / np.maximum(union, 1), 1.0)))


def ranking_loss(Y_true: Any, scores: Any) -> float:
    """Eq. 3.13 on the scores; tied pairs count as mis-ordered (decision 8). Lower is better."""
    Y, S = _ranked(Y_true, scores)
    rel = Y.astype(bool)
    n_rel = rel.sum(axis=1)
    pairs = n_rel * (Y.shape[1] - n_rel)
    wrong = np.zeros(len(Y))
    for rows in _row_blocks(Y.shape):  # (relevant a, irrelevant b) with S_b >= S_a: mis-ordered, ties too
        s, r = S[rows], rel[rows]
        wrong[rows] = ((s[:, None, :] >= s[:, :, None]) & r[:, :, None] & ~r[:, None, :]).sum(axis=(1, 2))
    return float(np.mean(np.where(pairs > 0, wrong / np.maximum(pairs, 1), 0.0)))


def one_error(Y_true: Any, scores: Any) -> float:
    """Share of instances whose top-scored label (first maximum) is not relevant (MEKA). Lower is better."""
    Y, S = _ranked(Y_true, scores)
    top = np.argmax(S, axis=1)
    return float(np.mean(Y[np.arange(len(Y)), top] == 0))


def coverage(Y_true: Any, scores: Any) -> float:
    """Eq. 3.14: how far down the ranking, on average, to cover every relevant label, minus 1.

    Ties are pessimistic (a label's rank counts every label scored at least as high), as
    in ``sklearn.metrics.coverage_error``, which this equals minus 1; instances with no
    relevant label count 0. Range [0, q − 1]; lower is better.
    """
    Y, S = _ranked(Y_true, scores)
    relevant = Y.astype(bool)
    lowest_relevant = np.where(relevant, S, np.inf).min(axis=1)
    worst_rank = (S >= lowest_relevant[:, None]).sum(axis=1)
    return float(np.mean(np.where(relevant.any(axis=1), worst_rank - 1, 0)))


def average_precision(Y_true: Any, scores: Any) -> float:
    """Eq. 3.15 (label-ranking average precision); no relevant label scores 1. Higher is better."""
    Y, S = _ranked(Y_true, scores)
    rel = Y.astype(bool)
    n_rel = rel.sum(axis=1)
    ap = np.ones(len(Y))
    for rows in _row_blocks(Y.shape):  # as sklearn's LRAP: ranks count every label scored at least as high
        s, r = S[rows], rel[rows]
        at_least = s[:, None, :] >= s[:, :, None]          # [i, j, k]: label k scores >= label j
        rank = at_least.sum(axis=2)
        rel_rank = (at_least & r[:, None, :]).sum(axis=2)
        per_row = np.where(r, rel_rank / rank, 0.0).sum(axis=1) / np.maximum(r.sum(axis=1), 1)
        ap[rows] = per_row
    trivial = (n_rel == 0) | (n_rel == Y.shape[1])
    return float(np.mean(np.where(trivial, 1.0, ap)))


def fitness(Y_true: Any, Y_pred: Any, scores: Any) -> float:
    """Eq. 5.1: [EM + (1 − HL) + FM + (1 − RL)] / 4, in [0, 1], maximised."""
    return (exact_match(Y_true, Y_pred) + (1.0 - hamming_loss(Y_true, Y_pred)) + f1_macro(Y_true, Y_pred)
            + (1.0 - ranking_loss(Y_true, scores))) / 4.0


# --------------------------------------------------------------------------------------------
# Single-label measures (paper 000 §5.3)
# --------------------------------------------------------------------------------------------

def _vector(a: Any, what: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{what} must be a 1-D vector of class labels, got shape {arr.shape}")
    return arr


def _classes(y_true: Any, y_pred: Any) -> tuple[np.ndarray, np.ndarray]:
    t, p = _vector(y_true, "y_true"), _vector(y_pred, "y_pred")
    if t.shape != p.shape:
        raise ValueError(f"y_true {t.shape} and y_pred {p.shape} differ in shape")
    if t.size == 0:
        raise ValueError("no instances to evaluate")
    return t, p


def error_rate(y_true: Any, y_pred: Any) -> float:
    """Misclassified instances / all instances. Lower is better."""
    from sklearn.metrics import accuracy_score  # here: the command line reads measure names without scikit-learn

    t, p = _classes(y_true, y_pred)
    return float(1.0 - accuracy_score(t, p))


def macro_precision(y_true: Any, y_pred: Any, labels: Sequence[Any] | None = None) -> float:
    """Per-class precision (each class in turn positive) averaged over ``labels``
    (default: every class in y_true or y_pred); a never-predicted class has precision 0."""
    from sklearn.metrics import precision_score

    t, p = _classes(y_true, y_pred)
    return float(precision_score(t, p, labels=labels, average="macro", zero_division=0))


def macro_recall(y_true: Any, y_pred: Any, labels: Sequence[Any] | None = None) -> float:
    """Per-class recall averaged over ``labels`` (default: every class in y_true or y_pred)."""
    from sklearn.metrics import recall_score

    t, p = _classes(y_true, y_pred)
    return float(recall_score(t, p, labels=labels, average="macro", zero_division=0))


def macro_f_measure(y_true: Any, y_pred: Any, labels: Sequence[Any] | None = None) -> float:
    """2·P·R / (P + R) of the macro-averaged precision P and recall R (paper 000 §5.3); 0 if both are 0."""
    prec, rec = macro_precision(y_true, y_pred, labels), macro_recall(y_true, y_pred, labels)
    return 0.0 if prec + rec == 0 else 2.0 * prec * rec / (prec + rec)


def balanced_accuracy(y_true: Any, y_pred: Any) -> float:
    """Recall averaged over the classes that occur in ``y_true`` (scikit-learn's
    ``balanced_accuracy_score``). Higher is better."""
    t, p = _classes(y_true, y_pred)
    classes = np.unique(t)
    return float(np.mean([np.mean(p[t == c] == c) for c in classes]))


def _confusion(t: np.ndarray, p: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(t * k + p, minlength=k * k).reshape(k, k).astype(float)


def singlelabel_measures(y_true: Any, y_pred: Any, proba: Any = None, n_classes: int | None = None
                         ) -> dict[str, float]:
    """Every single-label measure and the single-label fitnesses, by name.

    ``y_true``/``y_pred`` are class codes ``0 .. n_classes - 1``; ``proba`` the (n, n_classes)
    class probabilities the predictions came from (for ``log_loss``; omitted without them).
    Computed from one confusion matrix in numpy (a candidate under 10-fold cross-validation is
    measured ten times); the values equal scikit-learn's ``accuracy_score``,
    ``precision_score``/``recall_score(average="macro", zero_division=0)`` over the classes
    that occur in either vector, ``balanced_accuracy_score`` and ``log_loss`` (rows normalised,
    probabilities clipped to [1e-15, 1 − 1e-15]; a test checks it). ``macro_f_measure`` is the
    paper's F of the averaged P and R (000 §5.3), not the mean of per-class F1.
    """
    t, p = _classes(y_true, y_pred)
    t, p = t.astype(np.int64), p.astype(np.int64)
    k = int(n_classes) if n_classes is not None else int(max(t.max(), p.max())) + 1
    if t.min() < 0 or p.min() < 0 or t.max() >= k or p.max() >= k:
        raise ValueError(f"class codes must lie in 0..{k - 1}")
    cm = _confusion(t, p, k)
    tp, support, predicted = np.diag(cm), cm.sum(axis=1), cm.sum(axis=0)
    present = (support > 0) | (predicted > 0)
    precision = np.where(predicted > 0, tp / np.maximum(predicted, 1), 0.0)[present].mean()
    recall = np.where(support > 0, tp / np.maximum(support, 1), 0.0)[present].mean()
    accuracy = tp.sum() / len(t)
    out = {"error_rate": float(1.0 - accuracy), "accuracy": float(accuracy), "macro_precision": float(precision),
           "macro_recall": float(recall),
           "macro_f_measure": 0.0 if precision + recall == 0 else float(2 * precision * recall / (precision + recall)),
           "balanced_accuracy": float((tp[support > 0] / support[support > 0]).mean())}
    if proba is not None:
        P = np.asarray(proba, dtype=np.float64)
        if P.shape != (len(t), k):
            raise ValueError(f"proba must have shape ({len(t)}, {k}), got {P.shape}")
        eps = 1e-15
        P = np.clip(P, eps, 1 - eps)
        P = P / P.sum(axis=1, keepdims=True)
        out["log_loss"] = float(-np.mean(np.log(P[np.arange(len(t)), t])))
    return out


# --------------------------------------------------------------------------------------------
# The fitness registry
# --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Fitness:
    """A named fitness: ``fitness(Y_true, Y_pred, scores) -> float`` in [0, 1], maximised."""

    name: str
    function: Callable[[Any, Any, Any], float]
    description: str
    task: str                  # the stored name of its task (evaluation.task.Task.name)
    uses_scores: bool
    greater_is_better: bool = True

    def __call__(self, Y_true: Any, Y_pred: Any, scores: Any = None) -> float:
        if self.uses_scores and scores is None:
            raise ValueError(f"fitness {self.name!r} needs the label scores (confidences), not only predictions")
        return float(self.function(Y_true, Y_pred, scores))


def _q(Y: Any) -> int:
    return _matrix(Y, "Y_true").shape[1]


#: the stored task names (``config.json``'s ``data.task``) each fitness is tagged with, for messages and
#: :func:`fitness_names`; the tasks themselves refer to their tables (:attr:`evaluation.task.Task.fitnesses`)
_MULTILABEL, _SINGLELABEL = "multilabel", "singlelabel"

#: the multi-label fitnesses (:class:`evaluation.task.MultiLabel`)
MULTILABEL_FITNESS: tuple[Fitness, ...] = (
    Fitness("fitness", fitness, "Auto-MEKA Eq. 5.1: [EM + (1-HL) + FM + (1-RL)] / 4", _MULTILABEL, True),
    Fitness("exact_match", lambda Y, Z, S: exact_match(Y, Z), "exact match (subset accuracy)", _MULTILABEL, False),
    Fitness("hamming_score", lambda Y, Z, S: 1.0 - hamming_loss(Y, Z), "1 - Hamming loss", _MULTILABEL, False),
    Fitness("f1_macro", lambda Y, Z, S: f1_macro(Y, Z), "F1 macro-averaged by label", _MULTILABEL, False),
    Fitness("f1_micro", lambda Y, Z, S: f1_micro(Y, Z), "F1 micro-averaged", _MULTILABEL, False),
    Fitness("f1_example", lambda Y, Z, S: f1_example(Y, Z), "F1 averaged by example", _MULTILABEL, False),
    Fitness("jaccard", lambda Y, Z, S: jaccard(Y, Z), "example-based accuracy (Jaccard index)", _MULTILABEL, False),
    Fitness("ranking_score", lambda Y, Z, S: 1.0 - ranking_loss(Y, S), "1 - ranking loss", _MULTILABEL, True),
    Fitness("one_error_score", lambda Y, Z, S: 1.0 - one_error(Y, S), "1 - one-error", _MULTILABEL, True),
    Fitness("coverage_score", lambda Y, Z, S: 1.0 - coverage(Y, S) / max(_q(Y) - 1, 1),
            "1 - coverage / (q - 1)", _MULTILABEL, True),
    Fitness("average_precision", lambda Y, Z, S: average_precision(Y, S), "average precision (ranking)",
            _MULTILABEL, True),
)
#: the single-label fitnesses (:class:`evaluation.task.SingleLabel`)
SINGLELABEL_FITNESS: tuple[Fitness, ...] = (
    Fitness("accuracy", lambda y, z, s: 1.0 - error_rate(y, z), "single-label: 1 - error rate", _SINGLELABEL, False),
    Fitness("macro_f_measure", lambda y, z, s: macro_f_measure(y, z),
            "single-label: F of macro precision and macro recall", _SINGLELABEL, False),
    Fitness("balanced_accuracy", lambda y, z, s: balanced_accuracy(y, z),
            "single-label: recall averaged over classes", _SINGLELABEL, False),
)

#: name → :class:`Fitness`; every entry is maximised and lies in [0, 1].
FITNESS: Mapping[str, Fitness] = MappingProxyType({f.name: f for f in MULTILABEL_FITNESS + SINGLELABEL_FITNESS})


def fitness_names(task: str | None = None) -> tuple[str, ...]:
    """The registered fitness names, optionally only those of the task stored as ``task``
    (:attr:`Fitness.task`; a task's own are :meth:`evaluation.task.Task.fitness_names`)."""
    return tuple(n for n, f in FITNESS.items() if task is None or f.task == task)


def get_fitness(name: str) -> Fitness:
    """The registered fitness called ``name``; a ValueError listing the known names otherwise."""
    try:
        return FITNESS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown fitness {name!r}; known (all maximised): {', '.join(FITNESS)}") from None


def multilabel_measures(Y_true: Any, Y_pred: Any, scores: Any = None) -> dict[str, float]:
    """Every multi-label measure (losses as losses) and every multi-label fitness, by name.

    ``scores`` are the per-label confidences the predictions were thresholded from; without
    them the ranking measures use ``Y_pred`` itself as the scores (ties then abound, and
    count against ranking loss).
    """
    Y, Z = _pair(Y_true, Y_pred)
    S = Z.astype(np.float64) if scores is None else scores
    out = {
        "exact_match": exact_match(Y, Z),
        "hamming_loss": hamming_loss(Y, Z),
        "f1_macro": f1_macro(Y, Z),
        "ranking_loss": ranking_loss(Y, S),
        "f1_micro": f1_micro(Y, Z),
        "f1_example": f1_example(Y, Z),
        "jaccard": jaccard(Y, Z),
        "one_error": one_error(Y, S),
        "coverage": coverage(Y, S),
        "average_precision": average_precision(Y, S),
    }
    out["fitness"] = (out["exact_match"] + 1.0 - out["hamming_loss"] + out["f1_macro"] + 1.0 - out["ranking_loss"]) / 4
    out["hamming_score"] = 1.0 - out["hamming_loss"]
    out["ranking_score"] = 1.0 - out["ranking_loss"]
    out["one_error_score"] = 1.0 - out["one_error"]
    out["coverage_score"] = 1.0 - out["coverage"] / max(Y.shape[1] - 1, 1)
    return out

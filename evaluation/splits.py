"""Iteratively stratified splits (learning/validation and k-fold), reproducible from one Generator.

Why: Auto-MEKA's protocol (thesis §5.3.1, §6.1) splits every dataset by iterative
stratification (Sechidis et al. 2011): an outer stratified 5-fold CV, and inside each
training part a learning/validation split (80/20) that the evolutionary methods redraw
every 5 generations with a fresh seed. Project decision 12 says to use
scikit-multilearn's ``IterativeStratification`` (order 1, i.e. Sechidis' setting).

How randomness is handled (checked against scikit-multilearn-ng 0.0.8):

* ``IterativeStratification(random_state=None)`` draws its tie-breaks and the placement
  of label-less rows from **numpy's global RandomState**, so results would depend on
  whatever else touched ``np.random``.
* Passing ``random_state`` switches on its shuffle, and the shuffle is broken: it
  permutes the rows, stratifies the permuted labels, but yields the fold indices
  *without mapping them back* to the original rows. The folds are then effectively
  random, not stratified (on a 2,000-row, 20-label problem the mean label-proportion
  deviation of a 20 % fold rises from 0.002 to 0.016, the same as a random subset).
  ``iterative_train_test_split(random_state=...)`` has the same defect, and it
  stratifies on second-order label pairs, not Sechidis' single labels.

Its assignment loop also departs from Sechidis' algorithm, which the thesis used
(through Mulan): (a) with order 1 its "most desired combination" test can never
succeed (every combination has size 1), so labels are processed in order of first
appearance instead of *rarest remaining label first*; (b) ties between folds that
want a label equally are broken at random instead of by the folds' overall remaining
capacity; (c) rows without labels go to a random fold with room instead of the fold
with the most room. On the shared datasets this roughly doubles the label-proportion
deviation (yeast 80/20: mean 0.0038 vs 0.0012, worst label 0.021 vs 0.007; enron:
0.0029 vs 0.0005; random splitting: 0.0077 / 0.029 on yeast).

So :class:`SechidisStratification` subclasses ``IterativeStratification``, keeps its
data preparation and its scikit-learn ``split`` plumbing, and overrides the two
distribution steps with Sechidis' rules (a)–(c). Every split here then: draws a
permutation of the rows and a 32-bit seed from the caller's
``numpy.random.Generator``; gives the stratifier a private
``numpy.random.RandomState(seed)`` as the ``_rng_state`` it reads its random choices
from (``shuffle=False``, so the broken shuffle never runs); stratifies the permuted
label matrix; and maps the folds back through the permutation. The global numpy state
is neither read nor changed, the same Generator state always gives the same split, and
each call advances the Generator, so calling again (the resampling every R generations)
gives a fresh split. Fold sizes follow Sechidis: close to, not exactly, the requested
fractions when rows carry many labels (CAL500, 26 labels per row: ±10 % of a fold), and a
fold never comes out empty when there are at least as many rows as folds (on a tiny label
matrix Sechidis' rules can leave one empty; the largest fold then gives it a row).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from skmultilearn.model_selection import IterativeStratification

__all__ = ["SechidisStratification", "as_kfold", "class_folds", "draw_seed", "holdout_split", "kfold_splits",
           "label_proportion_deviation", "stratified_folds"]

_SEED_BOUND = 2**32  # numpy.random.RandomState accepts seeds in [0, 2**32 - 1]


def draw_seed(rng: np.random.Generator) -> int:
    """A fresh 32-bit seed from ``rng`` (advances it)."""
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    return int(rng.integers(0, _SEED_BOUND, dtype=np.uint64))


def _label_matrix(Y: Any) -> np.ndarray:
    if hasattr(Y, "toarray"):
        Y = Y.toarray()
    Y = np.asarray(Y)
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"Y must be a 2-D 0/1 label matrix, got shape {Y.shape}")
    if Y.size and not np.isin(Y, (0, 1)).all():
        raise ValueError("Y must contain only 0 and 1")
    return Y.astype(np.int8)


class SechidisStratification(IterativeStratification):
    """scikit-multilearn's ``IterativeStratification`` (order 1) with Sechidis et al.'s assignment rules.

    Construct it with ``order=1, shuffle=False`` and assign ``_rng_state`` a private
    ``numpy.random.RandomState`` (see :func:`stratified_folds`); the module docstring
    says why the inherited distribution steps are replaced.
    """

    def _distribute_positive_evidence(self, rows_used: dict[int, bool], folds: list[list[int]],
                                      samples_with_combination: dict[tuple[int, ...], list[int]],
                                      per_row_combinations: list[list[tuple[int, ...]]]) -> None:
        wanted = self.desired_samples_per_combination_per_fold
        overall = self.desired_samples_per_fold
        while True:
            live = [(len(rows), i, c) for i, (c, rows) in enumerate(samples_with_combination.items()) if rows]
            if not live:
                return
            label = min(live)[2]                               # (a) the rarest remaining label first
            rows = samples_with_combination[label]
            while rows:
                row = rows.pop()
                want = wanted[label]
                best = np.flatnonzero(want == want.max())
                if len(best) > 1:                              # (b) then the fold with the most room
                    room = overall[best]
                    best = best[room == room.max()]
                fold = int(best[0] if len(best) == 1 else self._rng_state.choice(best))
                folds[fold].append(row)
                rows_used[row] = True
                for combination in per_row_combinations[row]:
                    if combination != label:
                        samples_with_combination[combination].remove(row)
                    wanted[combination][fold] -= 1
                overall[fold] -= 1

    def _distribute_negative_evidence(self, rows_used: dict[int, bool], folds: list[list[int]]) -> None:
        overall = self.desired_samples_per_fold
        for row in [r for r, used in rows_used.items() if not used]:
            best = np.flatnonzero(overall == overall.max())    # (c) label-less rows: the fold with most room
            fold = int(best[0] if len(best) == 1 else self._rng_state.choice(best))
            folds[fold].append(row)
            rows_used[row] = True
            overall[fold] -= 1


def stratified_folds(Y: Any, fractions: Sequence[float], rng: np.random.Generator) -> list[np.ndarray]:
    """Partition the rows of ``Y`` into ``len(fractions)`` iteratively stratified folds.

    ``fractions`` are the desired fold sizes as shares of the rows (they must sum to 1).
    Returns one sorted index array per fold, none empty; together they partition ``range(n)``.
    """
    Y = _label_matrix(Y)
    n = Y.shape[0]
    k = len(fractions)
    if k < 2:
        raise ValueError("need at least 2 folds")
    fr = [float(f) for f in fractions]
    if any(not 0.0 < f < 1.0 for f in fr) or abs(sum(fr) - 1.0) > 1e-9:
        raise ValueError(f"fractions must lie in (0, 1) and sum to 1, got {fractions}")
    if n < k:
        raise ValueError(f"cannot split {n} instances into {k} folds")
    perm = rng.permutation(n)
    seed = draw_seed(rng)
    stratifier = SechidisStratification(n_splits=k, order=1, sample_distribution_per_fold=fr, shuffle=False,
                                        random_state=None)
    if not hasattr(stratifier, "_rng_state") or getattr(stratifier, "need_shuffle", False):
        raise RuntimeError("unsupported scikit-multilearn version: IterativeStratification no longer keeps its "
                           "random state in '_rng_state'; evaluation/splits.py must be updated")
    stratifier._rng_state = np.random.RandomState(seed)   # private RNG: never the global numpy state
    folds = [np.sort(perm[test]) for _, test in stratifier.split(np.zeros((n, 1)), Y[perm])]
    return _fill_empty(folds, Y)


def _fill_empty(folds: list[np.ndarray], Y: np.ndarray) -> list[np.ndarray]:
    """Give every empty fold one row of the largest fold.

    Sechidis' rules place rows label by label, so on a tiny or skewed label matrix a small fold
    can end up empty (6 rows, 80/20: no validation row for some label patterns), and an empty
    learning or validation part makes every candidate fail. The row moved is the largest fold's
    row with the fewest positive labels (the least label evidence taken from it; the lowest
    index on ties), so no random draw is added and a split without an empty fold is unchanged.
    """
    while True:
        empty = [i for i, f in enumerate(folds) if not len(f)]
        if not empty:
            return folds
        big = max(range(len(folds)), key=lambda i: len(folds[i]))
        rows = folds[big]
        row = rows[int(np.argmin(Y[rows].sum(axis=1)))]
        folds[empty[0]] = np.array([row], dtype=rows.dtype)
        folds[big] = rows[rows != row]


def class_folds(y: Any, fractions: Sequence[float], rng: np.random.Generator) -> list[np.ndarray]:
    """Partition the rows of a class-code vector ``y`` into ``len(fractions)`` stratified folds.

    The single-label counterpart of :func:`stratified_folds`. The rows are grouped by class
    (randomly ordered within each class) and dealt out one by one to the fold that is furthest
    below its share so far (ties: a fold order drawn once), so every class is spread over the
    folds in proportion to the fractions, every fold gets its share of the rows overall, and a
    class with fewer rows than folds simply misses some folds (scikit-learn's stratified
    splitters refuse such data). Returns one sorted index array per fold, none empty when there
    are at least as many rows as ``1 / min(fractions)``. Only ``rng`` is drawn from.
    """
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"class codes must be a 1-D vector, got shape {y.shape}")
    n, k = len(y), len(fractions)
    if k < 2:
        raise ValueError("need at least 2 folds")
    fr = np.asarray([float(f) for f in fractions])
    if np.any((fr <= 0) | (fr >= 1)) or abs(fr.sum() - 1.0) > 1e-9:
        raise ValueError(f"fractions must lie in (0, 1) and sum to 1, got {list(fractions)}")
    if n < k:
        raise ValueError(f"cannot split {n} instances into {k} folds")
    order = rng.permutation(n)
    order = order[np.argsort(y[order], kind="stable")]       # grouped by class, random within each
    priority = rng.permutation(k)                             # who wins a tie
    tie = np.empty(k)
    tie[priority] = np.arange(k) * 1e-9
    counts = np.zeros(k)
    fold_of = np.empty(n, dtype=np.int64)
    for i, row in enumerate(order):
        j = int(np.argmax(fr * (i + 1) - counts - tie))
        fold_of[row] = j
        counts[j] += 1
    folds = [np.flatnonzero(fold_of == j) for j in range(k)]
    return _fill_empty(folds, np.zeros((n, 1)))


def holdout_split(Y: Any, rng: np.random.Generator, valid_fraction: float = 0.2) -> tuple[np.ndarray, np.ndarray]:
    """``(learn_idx, valid_idx)``: the thesis's learning/validation split (80/20 by default)."""
    if not 0.0 < valid_fraction < 1.0:
        raise ValueError(f"valid_fraction must lie in (0, 1), got {valid_fraction}")
    valid, learn = stratified_folds(Y, [valid_fraction, 1.0 - valid_fraction], rng)
    return learn, valid


def kfold_splits(Y: Any, n_splits: int, rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """Iteratively stratified k-fold CV: ``[(train_idx, test_idx), ...]``, the test parts partition the rows."""
    if int(n_splits) != n_splits or n_splits < 2:
        raise ValueError(f"n_splits must be an integer >= 2, got {n_splits}")
    return as_kfold(stratified_folds(Y, [1.0 / n_splits] * int(n_splits), rng))


def as_kfold(parts: Sequence[np.ndarray]) -> list[tuple[np.ndarray, np.ndarray]]:
    """``[(train, test), ...]`` of a partition of the rows: each part is the test part once."""
    n = sum(len(p) for p in parts)
    out = []
    for p in parts:
        mask = np.ones(n, dtype=bool)
        mask[p] = False
        out.append((np.flatnonzero(mask), p))
    return out


def label_proportion_deviation(Y: Any, parts: Sequence[np.ndarray]) -> float:
    """Largest absolute difference, over labels and parts, between a part's positive rate and the whole's.

    A stratification quality check (Sechidis et al.'s label distribution, worst case).
    """
    Y = _label_matrix(Y)
    whole = Y.mean(axis=0)
    return float(max(np.abs(Y[np.asarray(p)].mean(axis=0) - whole).max() for p in parts if len(p)))

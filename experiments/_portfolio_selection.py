"""Choosing a portfolio from a pool's fitness on many datasets: auto-sklearn 2.0's greedy rule.

The pool's validation fitness is normalised per dataset and fold (min-max over the pool: 1 the best
member, 0 the worst; a member that failed, timed out or was not evaluated counts as the worst), so that
no dataset weighs more because its fitness values spread more; a dataset's score of a member is the
mean over its folds. The greedy rule (Feurer et al., JMLR 2022, Alg. 1) then adds, K times, the member
that most raises the mean over datasets of the best score among those chosen; a tie (the same raise,
zero once every dataset has its best) goes to the better mean score, then to the earlier member.

Leave-one-dataset-out (``held_out=D``) removes D's column *and* every member that came from a run on D
before anything is normalised or chosen, so nothing D's evaluations said reaches D's portfolio.
"""
from __future__ import annotations

import numpy as np

from ..search.portfolio import Member

#: scores[dataset][fold][phenotype]: the validation fitness, or None (failed, timed out, not evaluated)
Scores = dict[str, dict[int, dict[str, float | None]]]


def normalised(scores: Scores, pool: list[str]) -> dict[str, np.ndarray]:
    """Each dataset's mean over folds of the pool's min-max normalised fitness, in pool order."""
    table = {}
    for dataset, folds in scores.items():
        per_fold = []
        for cell in folds.values():
            raw = np.array([np.nan if cell.get(p) is None else float(cell[p]) for p in pool], dtype=float)
            ok = np.isfinite(raw)
            norm = np.zeros(len(pool))
            if ok.any():
                lo, hi = raw[ok].min(), raw[ok].max()
                norm[ok] = (raw[ok] - lo) / (hi - lo) if hi > lo else 1.0
            per_fold.append(norm)
        if per_fold:
            table[dataset] = np.mean(per_fold, axis=0)
    return table


def greedy(table: dict[str, np.ndarray], k: int) -> list[tuple[int, float, float]]:
    """``(pool index, gain, mean score)`` of up to ``k`` members in the order the greedy rule adds them."""
    if not table:
        return []
    matrix = np.vstack(list(table.values()))  # datasets × pool
    n = matrix.shape[1]
    means = matrix.mean(axis=0)
    best = np.zeros(matrix.shape[0])
    chosen: list[tuple[int, float, float]] = []
    left = list(range(n))
    for _ in range(min(k, n)):
        values = np.maximum(best[:, None], matrix[:, left]).mean(axis=0)
        # lexicographic: the raise, then the mean score, then the pool's order (argmax takes the first)
        top = values.max()
        tied = [j for j, v in enumerate(values) if v >= top - 1e-12]
        j = max(tied, key=lambda t: (means[left[t]], -t))
        i = left.pop(j)
        chosen.append((i, float(top - best.mean()), float(means[i])))
        best = np.maximum(best, matrix[:, i])
    return chosen


def select(pool: list[Member], scores: Scores, k: int, held_out: str | None = None) -> list[Member]:
    """The portfolio of ``k`` members of ``pool`` from ``scores``; with ``held_out``, built without that
    dataset: neither its scores nor the members its runs contributed take part."""
    if held_out is not None:
        pool = [m for m in pool if m.source != f"run:{held_out}"]
        scores = {d: s for d, s in scores.items() if d != held_out}
    table = normalised(scores, [m.phenotype for m in pool])
    return [Member(pool[i].phenotype, pool[i].source, round(gain, 6), round(mean, 6))
            for i, gain, mean in greedy(table, k)]

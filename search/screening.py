"""Cheap screening before full fidelity: successive-halving rungs over the learning rows.

Why: in a large space most candidates are mediocre, and a fit on a third of the rows says
so at a fraction of the cost. With screening on, a new candidate is first fit on a
stratified subsample of the current view's learning rows (rung 0) and scored on the same
validation rows; only the promising ones are promoted to the next rung, up to the full
learning set. In asynchronous search a new candidate that the cost model predicts to take at most
``loop.DIRECT_SECONDS`` on the full view starts there (:meth:`SearchLoop.start_rung`): screening
it would cost more than it saves. It composes with every method and with the multi-fidelity schedules of
:mod:`evaluation.fidelity`: the rungs subsample whichever view the schedule gives.

Rungs: with ``eta`` = η and ``rungs`` = R, rung k learns on η^-(R-1-k) of the learning rows
(η=3, R=2: 1/3, then all). A rung with fewer than ``min_rows`` learning rows is dropped (on
a small dataset a subsample says little), so screening switches itself off on small data.

Promotion — fitness values are compared only within one rung of one view:

* asynchronous search (ASHA, Li et al. 2020): whenever a worker frees up, the best candidate
  of rung k that is among the top ⌊n_k/η⌋ of the n_k results of rung k and has not been
  promoted yet goes to rung k+1 (higher rungs first); if there is none, a new candidate
  starts at rung 0 (:class:`Promotions`);
* generational search (successive halving): a generation is evaluated at rung 0, the top
  ⌈n/η⌉ at rung 1, and so on (:func:`survivors`). A candidate keeps the fidelity level of
  the last rung it reached, and levels are compared before fitness values
  (:mod:`ggp_automl.search.individual`), so a promoted candidate beats every screened-out one and
  fitness values of different rungs are never compared.

Only full-fidelity results are told to an asynchronous method; the subsamples are drawn
with a seed derived from the view's (from the run's one Generator), so they are the same
after a resume.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ggp_automl.evaluation.candidate import Split

from .individual import Individual


@dataclass(frozen=True)
class Screening:
    eta: int = 3
    rungs: int = 2
    min_rows: int = 100

    def fractions(self, n_learn: int) -> list[float]:
        """Learning-row fractions of the rungs kept for a view with ``n_learn`` learning rows; the last is 1."""
        kept = [self.eta ** -(self.rungs - 1 - k) for k in range(self.rungs - 1)]
        return [f for f in kept if f * n_learn >= self.min_rows] + [1.0]


def subsample(split: Split, fraction: float, seed: int) -> Split:
    """``split`` with a stratified ``fraction`` of its learning rows; the validation rows unchanged.
    A cross-validated split keeps a stratified ``fraction`` of its rows, cross-validated as many times."""
    if fraction >= 1.0:
        return split
    rng = np.random.default_rng(seed)
    task = split.task
    keep = np.sort(task.folds(split.Y_learn, [fraction, 1.0 - fraction], rng)[0])
    X, Y = split.X_learn[keep], split.Y_learn[keep]
    folds = tuple(task.kfold(Y, len(split.folds), rng)) if split.folds else ()
    return Split(X, Y, split.X_valid, split.Y_valid, split.categorical_features, task, folds)


def survivors(results: list[tuple[int, bool, float]], eta: int) -> list[int]:
    """Successive halving: of ``(index, ok, fitness)``, the indices of the top ⌈n/η⌉ that ended
    with a fitness, best first (ties: earlier first)."""
    ok = [(i, f) for i, good, f in results if good]
    ok.sort(key=lambda t: -t[1])
    return [i for i, _ in ok[: math.ceil(len(results) / eta)]]


@dataclass
class _Entry:
    individual: Individual
    fitness: float
    ok: bool
    promoted: bool = False


@dataclass
class Promotions:
    """ASHA's bookkeeping for one data view: the results of each lower rung, and who went up."""

    n_rungs: int
    eta: int
    view: str = ""
    entries: list[list[_Entry]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.entries:
            self.entries = [[] for _ in range(self.n_rungs)]

    def record(self, rung: int, individual: Individual, fitness: float, ok: bool) -> None:
        if rung < self.n_rungs - 1:
            self.entries[rung].append(_Entry(individual, fitness, ok))

    def next(self) -> tuple[Individual, int] | None:
        """The candidate to promote now and its new rung, or None (then start a new one)."""
        for rung in range(self.n_rungs - 2, -1, -1):
            results = self.entries[rung]
            top = sorted((e for e in results if e.ok), key=lambda e: -e.fitness)[: len(results) // self.eta]
            for entry in top:
                if not entry.promoted:
                    entry.promoted = True
                    return entry.individual, rung + 1
        return None

    def counts(self) -> list[int]:
        return [len(r) for r in self.entries]

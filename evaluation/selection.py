"""Post-hoc ensemble selection (Caruana et al. 2004) over stored validation predictions.

Why here: selecting an ensemble is arithmetic on the scores the evaluations kept
(:mod:`evaluation.predictions`) and on the run's own fitness, for either task, so it belongs
with the measures and not with any search method. :class:`EnsembleObjective` says how good
the weighted mean of some candidates' scores is: single-label data by the run's fitness of the
class of highest mean probability (accuracy: the error of the averaged probabilities);
multi-label data by the run's fitness (Eq. 5.1 by default) with the threshold re-chosen for
the ensemble — PCut1 or PCutL calibrated on the ensemble's own validation scores to the
training label cardinality (:mod:`spaces.thresholds`), whichever scores higher — because a mean
of scores is less extreme than its members' and their thresholds no longer fit it.

:func:`caruana` is forward greedy selection with replacement, warm-started with the
individually best few (001 §3.1; 002 App. A.1 without its sorted start). Ties go to the
candidate that is better on its own. It returns the best ensemble met on the way, and the single
best candidate alone is one of them, so the selected ensemble never scores below the single
best on the validation rows (larger sizes overfit them: 002 found 25 better than 100).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ggp_automl.spaces.thresholds import calibrate

from .metrics import get_fitness
from .task import Task

#: the default ensemble size (greedy steps with replacement; 002 App. A.1)
DEFAULT_SIZE = 25
#: candidates the greedy selection starts from (001 Ch. 4: the top 3)
WARM_START = 3
#: threshold strategies re-chosen for a multi-label ensemble
ENSEMBLE_THRESHOLDS = ("PCut1", "PCutL")


@dataclass
class EnsembleObjective:
    """The run's fitness of a (weighted mean) score array on a view's scored rows ``Y``.

    ``Y_train``: the targets the cut's cardinality comes from (multi-label; default ``Y``)."""

    task: Task
    Y: np.ndarray
    fitness: str
    Y_train: np.ndarray | None = None
    _fitness: object = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._fitness = get_fitness(self.fitness)
        self.Y = np.asarray(self.Y)
        self.Y_train = self.Y if self.Y_train is None else np.asarray(self.Y_train)

    @property
    def multilabel(self) -> bool:
        return self.Y.ndim == 2

    def strategy(self, scores: np.ndarray) -> str | None:
        """The threshold strategy (PCut1 or PCutL) that cuts these scores best (multi-label); None for
        single-label. What a returned ensemble keeps: the strategy, re-calibrated on its refit members'
        scores, not the values chosen here — those belong to the members fitted on the learning rows,
        whose scores differ from the refit members' (measured: issue 12's benchmark)."""
        return self._scored(scores)[3]

    def decide(self, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """``(predictions, thresholds)``: the best cut's predictions (multi-label), the arg-max class."""
        return self._scored(scores)[1:3]

    def _scored(self, scores: np.ndarray) -> tuple[float, np.ndarray, np.ndarray | None, str | None]:
        """``(fitness, predictions, thresholds, strategy)`` with the best cut."""
        if not self.multilabel:
            predictions = np.argmax(scores, axis=1)
            return float(self._fitness(self.Y, predictions, scores)), predictions, None, None
        best = None
        for strategy in ENSEMBLE_THRESHOLDS:
            thresholds = calibrate(strategy, scores, self.Y_train)
            predictions = (scores >= thresholds).astype(np.int8)
            value = float(self._fitness(self.Y, predictions, scores))
            if best is None or value > best[0]:
                best = (value, predictions, thresholds, strategy)
        return best

    def __call__(self, scores: np.ndarray) -> float:
        return self._scored(scores)[0]

    def measures(self, scores: np.ndarray) -> dict[str, float]:
        """Every measure of the task for these scores (with the re-chosen cut)."""
        predictions, _ = self.decide(scores)
        return self.task.measures(self.Y, predictions, scores)


@dataclass(frozen=True)
class Selection:
    """The outcome of ensemble selection: ``counts[i]`` picks of pool member ``i``."""

    counts: np.ndarray
    value: float              # the ensemble's validation fitness
    single_best: int          # the pool index of the individually best member
    single_value: float       # its validation fitness
    trace: tuple[float, ...]  # the fitness after each greedy step

    @property
    def weights(self) -> np.ndarray:
        return self.counts / self.counts.sum()

    @property
    def members(self) -> np.ndarray:
        """Pool indices with a positive weight, heaviest first (ties: pool order)."""
        idx = np.flatnonzero(self.counts)
        return idx[np.argsort(-self.counts[idx], kind="stable")]


def mean_scores(pool: list[np.ndarray], counts: np.ndarray) -> np.ndarray:
    """The count-weighted mean of the pool's score arrays."""
    total = np.zeros(pool[0].shape, dtype=np.float64)
    for i in np.flatnonzero(counts):
        total += counts[i] * pool[i]
    return total / counts.sum()


def caruana(pool: list[np.ndarray], objective: EnsembleObjective, size: int = DEFAULT_SIZE,
            warm_start: int = WARM_START) -> Selection:
    """Forward greedy selection with replacement of ``size`` picks from ``pool`` (score arrays on the
    same rows), starting from the ``warm_start`` individually best; the best ensemble on the way."""
    if not pool:
        raise ValueError("ensemble selection needs at least one candidate")
    if size < 1:
        raise ValueError(f"the ensemble size must be at least 1, got {size}")
    alone = np.array([objective(s) for s in pool])
    order = np.argsort(-alone, kind="stable")  # ties: the earlier (better searched) candidate
    best_single = int(order[0])
    counts = np.zeros(len(pool), dtype=np.int64)
    total = np.zeros(pool[0].shape, dtype=np.float64)
    for i in order[: max(1, min(warm_start, size))]:
        counts[i] += 1
        total += pool[i]
    value = objective(total / counts.sum())
    trace = [value]
    kept = (alone[best_single], np.eye(len(pool), dtype=np.int64)[best_single])
    if value > kept[0]:
        kept = (value, counts.copy())
    while counts.sum() < size:
        m = counts.sum()
        step = max(((objective((total + pool[i]) / (m + 1)), -rank, int(i)) for rank, i in enumerate(order)))
        value, i = step[0], step[2]
        counts[i] += 1
        total += pool[i]
        trace.append(value)
        if value > kept[0]:  # strictly better: ties keep the smaller ensemble
            kept = (value, counts.copy())
    return Selection(kept[1], float(kept[0]), best_single, float(alone[best_single]), tuple(trace))

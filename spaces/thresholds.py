"""Threshold strategies: a fixed real, PCut1 and PCutL (notes §2, decision 2).

PCut is calibrated at fit time and stored, so predictions do not depend on the batch.
The project's clean PCut picks the cut whose number of positives is closest to the
intended one (training label cardinality × n for PCut1, each label's training
frequency × n for PCutL), without MEKA's off-by-one. It is calibrated on the model's
in-sample (training) scores: cheap, and the target count comes from the training
labels anyway; over-confident learners simply get cuts near 0.5.
"""
from __future__ import annotations

import math

import numpy as np

STRATEGIES = ("PCut1", "PCutL")
#: the grammar rule that holds a tree's threshold strategy (a global value: it belongs to no algorithm)
THRESHOLD_RULE = "pred_tshd"


def java_round(x: float) -> int:
    """MEKA's Math.round: half up, not Python's banker's rounding."""
    return int(math.floor(x + 0.5))


def pcut(scores: np.ndarray, target_cardinality: float) -> float:
    """Threshold t so that #{scores >= t} is as close as possible to round(target × rows)."""
    values = np.sort(np.asarray(scores, dtype=float).ravel())[::-1]
    rows = scores.shape[0]
    k = min(max(java_round(target_cardinality * rows), 0), values.size)
    if values.size == 0:
        return 0.5
    if k == 0:
        return float(np.nextafter(values[0], np.inf))
    if k == values.size:
        return float(values[-1])
    uniq = np.unique(values)[::-1]
    counts = np.searchsorted(-values, -uniq, side="right")
    best = int(np.argmin(np.abs(counts - k) + 1e-9 * counts))  # ties: fewer positives
    return float(uniq[best])


def calibrate(strategy: str | float, train_scores: np.ndarray, Y_train: np.ndarray) -> np.ndarray:
    """Per-label thresholds (L,) for a strategy name or a fixed real."""
    n_labels = Y_train.shape[1]
    if isinstance(strategy, str):
        if strategy == "PCut1":
            t = pcut(train_scores, float(Y_train.sum(axis=1).mean()))
            return np.full(n_labels, t)
        if strategy == "PCutL":
            freq = Y_train.mean(axis=0)
            return np.array([pcut(train_scores[:, j:j + 1], float(freq[j])) for j in range(n_labels)])
        try:
            strategy = float(strategy)
        except ValueError:
            raise ValueError(f"unknown threshold strategy {strategy!r}; expected PCut1, PCutL or a number") from None
    return np.full(n_labels, float(strategy))


def threshold_of(global_values: dict) -> str | float:
    """The threshold strategy of a tree's global values (PCut1 when the tree has none)."""
    values = global_values.get(THRESHOLD_RULE)
    if not values:
        return "PCut1"
    v = values[0]
    if isinstance(v, str) and v in STRATEGIES:
        return v
    return float(v)

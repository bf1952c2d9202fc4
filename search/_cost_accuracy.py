"""How well the cost model predicted a run's times: what ``inspect`` reports.

Private helper of :mod:`ggp_automl.search.cost_model`; import it from there.
"""
from __future__ import annotations

import math
from typing import Iterable, Sequence

import numpy as np

from ._cost_features import MIN_SECONDS


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank."""
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    sorted_vals = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_vals[j + 1] == sorted_vals[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Spearman's rank correlation (None: fewer than 3 pairs, or a constant side)."""
    if len(a) < 3:
        return None
    ra, rb = _ranks(np.asarray(a, float)), _ranks(np.asarray(b, float))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denom = math.sqrt(float(ra @ ra) * float(rb @ rb))
    return None if denom == 0 else float(ra @ rb) / denom


def accuracy(records: Iterable[dict]) -> dict | None:
    """How well ``predicted`` matched ``wall_time`` over the ok evaluations that carry both: ``n``,
    ``spearman`` and ``median_ratio`` (predicted / actual), and ``skipped`` (candidates the cost model did
    not start); None when no record carries a prediction."""
    pairs, skipped = [], 0
    for r in records:
        if r.get("status") == "skipped" and str(r.get("reason", "")).startswith("skipped: the cost model"):
            skipped += 1
        p, t = r.get("predicted"), r.get("wall_time")
        if r.get("status") != "ok" or not isinstance(p, (int, float)) or not isinstance(t, (int, float)):
            continue
        if math.isfinite(p) and math.isfinite(t) and p > 0 and t > 0:
            pairs.append((float(p), max(float(t), MIN_SECONDS)))
    if not pairs:
        return None
    predicted, actual = zip(*pairs)
    return {"n": len(pairs), "spearman": spearman(predicted, actual),
            "median_ratio": float(np.median(np.array(predicted) / np.array(actual))), "skipped": skipped}

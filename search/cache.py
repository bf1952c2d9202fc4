"""The evaluation cache: one entry per (data view, phenotype).

A phenotype already evaluated on the current learning/validation view costs
nothing: elites, unchanged children and duplicates are served from here and
counted as hits. A view's screening rungs (:mod:`ggp_automl.search.screening`) are views of
their own, named ``VIEW|rK``, and live beside it. Entries of other views are dropped
when the view changes (after a resample the old fitness values are not comparable),
which also bounds memory.
"""
from __future__ import annotations

from ggp_automl.evaluation.candidate import EvaluationResult


def base_view(key: str) -> str:
    """The data view a (rung) key belongs to."""
    return key.split("|", 1)[0]


class EvaluationCache:
    def __init__(self) -> None:
        self.view: str | None = None
        self._entries: dict[tuple[str, str], EvaluationResult] = {}
        self.hits = 0

    def use_view(self, key: str) -> None:
        if base_view(key) != self.view:
            self.view, self._entries = base_view(key), {}

    def get(self, key: str, phenotype: str) -> EvaluationResult | None:
        result = self._entries.get((key, phenotype)) if base_view(key) == self.view else None
        if result is not None:
            self.hits += 1
        return result

    def put(self, key: str, result: EvaluationResult) -> None:
        if self.view is None:
            self.use_view(key)
        if base_view(key) == self.view:
            self._entries[(key, result.phenotype)] = result

    def __len__(self) -> int:
        return len(self._entries)

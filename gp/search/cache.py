"""The evaluation cache: one entry per (data view, phenotype).

A phenotype already evaluated on the current learning/validation view costs
nothing: elites, unchanged children and duplicates are served from here and
counted as hits. Entries of other views are dropped when the view changes (after a
resample the old fitness values are not comparable), which also bounds memory.
"""
from __future__ import annotations

from evaluation.candidate import EvaluationResult


class EvaluationCache:
    def __init__(self) -> None:
        self.view: str | None = None
        self._entries: dict[str, EvaluationResult] = {}
        self.hits = 0

    def use_view(self, key: str) -> None:
        if key != self.view:
            self.view, self._entries = key, {}

    def get(self, key: str, phenotype: str) -> EvaluationResult | None:
        result = self._entries.get(phenotype) if key == self.view else None
        if result is not None:
            self.hits += 1
        return result

    def put(self, key: str, result: EvaluationResult) -> None:
        if self.view is None:
            self.use_view(key)
        if key == self.view:
            self._entries[result.phenotype] = result

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, phenotype: str) -> bool:
        return phenotype in self._entries

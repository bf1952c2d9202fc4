"""Beam search (Auto-MEKA_BS, thesis §6.1.3; "greedy search" in paper 004).

Pure exploitation: start from one random derivation; each iteration evaluates
``batch_size`` distinct Whigham-mutation neighbours of the incumbent, and the best
neighbour replaces the incumbent only if it is strictly better. The incumbent is
put first in every batch: on an unchanged split that is a free cache hit, and when
the data view changes (multi-fidelity) it is re-scored on the new view, so the
comparison stays fair.
"""
from __future__ import annotations

from ..individual import Individual
from .base import SearchMethod, best_of
from .registry import register_method


@register_method
class BeamSearch(SearchMethod):
    name = "beam"

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.incumbent: Individual | None = None
        self.incumbents: list[Individual] = []  # every incumbent so far, newest last

    def ask(self, rng):
        if self.incumbent is None:  # the warm start's members, the best of which is the first incumbent
            trees = self.take_warm() or [self.variation.generator().grow(rng, self.config.max_depth)]
            return [Individual(t) for t in trees]
        seen = {self.incumbent.phenotype}
        batch = [Individual(self.incumbent.tree)]
        tries = 0
        while len(batch) <= self.config.batch_size and tries < 50 * self.config.batch_size:
            tries += 1
            neighbour = self.incumbent.mutate(self.variation, rng)
            if neighbour.phenotype not in seen:  # distinct from the incumbent and each other
                seen.add(neighbour.phenotype)
                batch.append(neighbour)
        return batch

    def tell(self, evaluated):
        if self.incumbent is None:
            self.incumbent = best_of(evaluated)
            self.incumbents.append(self.incumbent)
            return
        self.incumbent = evaluated[0]  # re-scored on the current view
        neighbours = evaluated[1:]
        if neighbours:
            best = best_of(neighbours)
            if best.rank > self.incumbent.rank:
                self.incumbent = best
                self.incumbents.append(best)
        self.incumbents[-1] = self.incumbent

    def archive(self):
        return list(reversed(self.incumbents))[: self.config.archive_size]

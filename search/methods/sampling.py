"""Random search (Auto-MEKA_RS, thesis §6.1.3): batches sampled from the grammar.

Each iteration draws ``batch_size`` distinct derivations (ramped half-and-half)
from the method's sampling policy; the best of every batch is kept for the final
choice. With the uniform policy this is the thesis's baseline; a learning policy
(PBIL, BO) turns the same method into a model-based search, because every told
batch is passed to :meth:`gp.policy.SamplingPolicy.update`.

Asynchronous (``--mode async``): the same batches are handed out one candidate at a
time, and a batch is told (policy update, batch best) once all its members are back.
"""
from __future__ import annotations

from ..individual import Individual
from .base import BatchedMethod, best_of, by_rank
from .registry import register_method


@register_method
class RandomSearch(BatchedMethod):
    name = "random"

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.batch_bests: list[Individual] = []

    @property
    def generation_size(self) -> int:
        return self.config.batch_size

    def ask(self, rng):
        n = self.config.batch_size
        trees = self.take_warm(n)  # the warm start's members are evaluated first
        if len(trees) < n:
            trees += self.variation.population(n - len(trees), rng, None, self.config.min_init_depth)
        return [Individual(t) for t in trees]

    def tell(self, evaluated):
        self.policy.update([i.tree for i in evaluated], [i.score for i in evaluated])
        self.batch_bests.append(best_of(evaluated))
        # keep only what the final choice can use
        self.batch_bests = by_rank(self.batch_bests)[: self.config.archive_size]

    def new_view(self):
        """Nothing to do: random search compares nothing while it searches."""

    def archive(self):
        return by_rank(self.batch_bests + ([best_of(self.current)] if self.current else []))

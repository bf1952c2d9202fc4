"""Speciated GGP (Auto-MEKA_spGGP, thesis §5.3.1.4, §6.3; paper 004 §4.2).

Eight species of ten individuals, each initialised from its own species grammar
(which evolves some hyper-parameter kinds and holds the others at their defaults,
:mod:`gp.species`). Selection, elitism and restarts are per species. With
probability P_c a pair is crossed over, inter-species with probability
``inter_species_rate`` (each parent crosses with a tournament winner of a uniformly
chosen other species and one child of each cross is kept — the only way non-default
values enter a restricted species), intra-species otherwise. Mutation regrows with
the individual's own species grammar. Children stay in their parents' species.

Asynchronous (``--mode async``): each species is a steady-state population
(:mod:`gp.search.population`); free workers are served the species in turn, so every
species keeps its share of the evaluations, and per-species generations
(``species_size`` insertions) drive the per-species restarts.
"""
from __future__ import annotations

import numpy as np
from deap import tools

from .ggp import Breeder, Convergence, _distinct, next_from
from .individual import Individual
from .method import SteadyStateMethod, best_of, register_method, tournament
from .parameters import RESHUFFLE
from .population import SteadyPopulation


@register_method
class SpeciatedGGP(SteadyStateMethod):
    name = "spggp"
    resamples = True
    parameters = (RESHUFFLE,)

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.species = list(config.species)
        self.populations: dict[int, list[Individual]] = {}
        self.convergence = {s: Convergence(config.restart_patience, config.restart_min_generations)
                            for s in self.species}
        self.restart_archive: list[Individual] = []
        self.hall = tools.HallOfFame(config.archive_size)
        self.steady = {s: SteadyPopulation(config.species_size) for s in self.species}
        self._restart_due = set(self.species)  # the first asynchronous asks start the species
        self._asks = 0

    @property
    def generation_size(self) -> int:
        return len(self.species) * self.config.species_size

    def fresh(self, s: int, rng: np.random.Generator) -> list[Individual]:
        trees = self.variation.population(self.config.species_size, rng, s, self.config.min_init_depth)
        return [Individual(t, s) for t in trees]

    def ask(self, rng):
        if not self.populations:
            return [ind for s in self.species for ind in self.fresh(s, rng)]
        breeder = Breeder(self)
        batch: list[Individual] = []
        for s in self.species:
            pool = self.populations[s]
            if self.convergence[s].step():
                self.restart_archive.append(best_of(pool))
                batch += self.fresh(s, rng)
                continue

            batch += breeder.breed(pool, self.config.species_size, rng, species=s,
                                   mate_for=self._mate(breeder, s, pool, self.populations))
        return batch

    def _mate(self, breeder: Breeder, s: int, pool: list[Individual], pools: dict[int, list[Individual]]):
        def mate(p1, p2, rng):
            if rng.random() < self.config.inter_species_rate:
                return self._inter(p1, p2, s, rng, pools)
            return breeder.crossover(p1, p2, pool, rng)
        return mate

    def _inter(self, p1: Individual, p2: Individual, s: int, rng,
               pools: dict[int, list[Individual]]) -> tuple[Individual, Individual] | None:
        """Each parent crosses with the winner of a tournament in another species; one child of each kept."""
        others = [o for o in self.species if o != s and pools.get(o)]
        if not others:  # (asynchronous start) no other species has an evaluated member yet
            return None
        kept = []
        for parent in (p1, p2):
            other = others[int(rng.integers(len(others)))]
            mate = tournament(pools[other], self.config.tournament_size, rng)
            children = parent.crossover(mate, self.variation, rng)
            if children is None:  # no shared rule: the parent passes unchanged
                kept.append(Individual(parent.tree, s))
            else:
                kept.append(Individual(children[int(rng.integers(2))].tree, s))
        return kept[0], kept[1]

    def tell(self, evaluated):
        self.populations = {s: [] for s in self.species}
        for ind in evaluated:
            self.populations[ind.species].append(ind)
        for s in self.species:
            self.convergence[s].record(best_of(self.populations[s]).phenotype)
        self.hall.update(evaluated)

    # -- asynchronous ----------------------------------------------------------------------
    def ask_one(self, rng):
        s = self.species[self._asks % len(self.species)]
        self._asks += 1
        pop = self.steady[s]
        if s in self._restart_due:
            if pop.members:
                self.restart_archive.append(pop.best())
            self._restart_due.discard(s)
            pop.restart(self.fresh(s, rng))
        pools = {o: p.selection_pool() for o, p in self.steady.items()}
        breeder = Breeder(self)
        return next_from(pop, lambda pool: breeder.pair(pool, rng, s, self._mate(breeder, s, pool, pools)),
                         lambda: Individual(self.variation.population(1, rng, s, self.config.min_init_depth)[0], s))

    def tell_one(self, evaluated):
        self.hall.update([evaluated])
        s = evaluated.species
        if s in self.steady and self.steady[s].insert(evaluated):
            self.convergence[s].record(self.steady[s].best().phenotype)
            if self.convergence[s].step():
                self._restart_due.add(s)

    def new_view(self):
        for pop in self.steady.values():
            pop.new_view(self.config.elitism)

    # -- both -----------------------------------------------------------------------------------
    def _current(self) -> dict[int, list[Individual]]:
        if self.populations:
            return self.populations
        return {s: p.members for s, p in self.steady.items()}

    def archive(self):
        finals = [best_of(p) for p in self._current().values() if p]
        return _distinct(self.restart_archive + finals + list(self.hall))

    def stats(self):
        species = {}
        current = self._current()
        for s in self.species:
            pool = current.get(s, [])
            scores = [i.score for i in pool]
            species[str(s)] = {
                "best_fitness": max(scores) if scores else 0.0,
                "mean_fitness": float(np.mean(scores)) if scores else 0.0,
                "best_phenotype": best_of(pool).phenotype if pool else "",
                "restarts": self.convergence[s].restarts,
            }
        return {"restarts": sum(c.restarts for c in self.convergence.values()), "species": species}

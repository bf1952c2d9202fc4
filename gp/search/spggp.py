"""Speciated GGP (Auto-MEKA_spGGP, thesis §5.3.1.4, §6.3; paper 004 §4.2).

Eight species of ten individuals, each initialised from its own species grammar
(which evolves some hyper-parameter kinds and holds the others at their defaults,
:mod:`gp.species`). Selection, elitism and restarts are per species. With
probability P_c a pair is crossed over, inter-species with probability
``inter_species_rate`` (each parent crosses with a tournament winner of a uniformly
chosen other species and one child of each cross is kept — the only way non-default
values enter a restricted species), intra-species otherwise. Mutation regrows with
the individual's own species grammar. Children stay in their parents' species.
"""
from __future__ import annotations

import numpy as np
from deap import tools

from .ggp import Breeder, Convergence, _distinct
from .individual import Individual
from .method import SearchMethod, best_of, register_method, tournament


@register_method
class SpeciatedGGP(SearchMethod):
    name = "spggp"
    resamples = True

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.species = list(config.species)
        self.populations: dict[int, list[Individual]] = {}
        self.convergence = {s: Convergence(config.restart_patience, config.restart_min_generations)
                            for s in self.species}
        self.restart_archive: list[Individual] = []
        self.hall = tools.HallOfFame(config.final_candidates)

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

            def mate(p1, p2, rng, s=s, pool=pool):
                if rng.random() < self.config.inter_species_rate:
                    return self._inter(p1, p2, s, rng)
                return breeder.crossover(p1, p2, pool, rng)

            batch += breeder.breed(pool, self.config.species_size, rng, species=s, mate_for=mate)
        return batch

    def _inter(self, p1: Individual, p2: Individual, s: int, rng) -> tuple[Individual, Individual] | None:
        """Each parent crosses with the winner of a tournament in another species; one child of each kept."""
        others = [o for o in self.species if o != s]
        kept = []
        for parent in (p1, p2):
            other = others[int(rng.integers(len(others)))]
            mate = tournament(self.populations[other], self.config.tournament_size, rng)
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

    def archive(self):
        finals = [best_of(p) for p in self.populations.values() if p]
        return _distinct(self.restart_archive + finals + list(self.hall))

    def stats(self):
        species = {}
        for s in self.species:
            pool = self.populations.get(s, [])
            scores = [i.score for i in pool]
            species[str(s)] = {
                "best_fitness": max(scores) if scores else 0.0,
                "mean_fitness": float(np.mean(scores)) if scores else 0.0,
                "best_phenotype": best_of(pool).phenotype if pool else "",
                "restarts": self.convergence[s].restarts,
            }
        return {"restarts": sum(c.restarts for c in self.convergence.values()), "species": species}

"""Ensemble optimisation by Bayesian optimisation (``--method eo``; 001 Algorithm 4.1, notes §3.3).

Why: a search for the single best model, followed by ensemble selection, optimises the wrong
thing; EO makes the ensemble the objective. It keeps ``slots`` (default 12, the thesis's m) ensemble
members and empties one slot per iteration, round-robin. Every evaluated model gets a fresh label —
the loss of the ensemble without that slot, with the model added (squared margin by default, or
the adapted C-bound or the sigmoid; :mod:`evaluation.ensemble_losses`) — computed from the stored
validation predictions, so relabelling costs arithmetic, not training. A fresh surrogate is fit on
those labels every iteration (the objective changes with the ensemble), EI proposes the next
configuration, and when its result comes back the emptied slot is refilled with the pool member
whose addition gives the lowest majority-vote 0-1 loss (ties broken by the smooth loss, then by the
member's own fitness: the notes' fix for the 0-1 plateau).

Decisions the thesis leaves open (notes §3.3, §10): the initial design is the grammar's default
configuration plus ``initial`` weighted random ones and counts towards the budget; a member already
in the ensemble is left out of that iteration's labels and cannot be added twice (the EO ensemble
has no duplicates); a failed candidate has no predictions, and is labelled with the worst loss, 1, so
the surrogate learns to avoid it. With several workers, the slot of an iteration is fixed when it is
asked and refilled when its result is told. Multi-label members vote per (row, label) cell, so the
losses become smooth Hamming losses (our extension). The run's model is the final ensemble, combined
by majority vote (:class:`spaces.ensemble.EnsembleModel` with ``voting="hard"``), unless
``--ensemble caruana`` asks for post-hoc selection over the re-evaluated pool instead (EO-post).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ggp_automl.evaluation.ensemble_losses import LOSSES, ensemble_loss

from ..individual import Individual
from .registry import register_method
from ..parameters import Parameter
from .prediction_search import CHALLENGERS, INITIAL, POPULATION, SURROGATE, PredictionSearch

#: the label of a candidate without predictions (it failed): the worst loss
FAILED_LOSS = 1.0


@register_method
class EO(PredictionSearch):
    name = "eo"
    parameters: ClassVar = (
        Parameter("slots", int, 12, "EO: ensemble members (m; the BO thesis: 12)", low=1, high=1000),
        Parameter("loss", str, "squared_margin", "EO: the smooth ensemble loss the surrogate learns (squared_margin, "
                  "c_bound or sigmoid)", choices=tuple(x for x in LOSSES if x not in ("l01", "margin"))),
        SURROGATE, INITIAL, CHALLENGERS, POPULATION,
    )

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.slots: list[str | None] = [None] * self.params["slots"]
        #: the slot each asked configuration refills, by phenotype (several in flight with workers)
        self.slot_of: dict[str, list[int]] = {}
        self.refills = 0

    # -- the ensemble ------------------------------------------------------------------------------
    def _others(self, j: int) -> list[str]:
        return [ph for k, ph in enumerate(self.slots) if ph is not None and k != j]

    def _loss(self, members: list[str], loss: str, added: str | None = None) -> float:
        """The vote's loss of ``members`` (one stacked array, or a list of phenotypes), plus ``added``."""
        objective = self.objective()
        votes = members if isinstance(members, np.ndarray) else self._stack(members)
        if added is not None:
            votes = np.vstack([votes, self.votes(added)[None, :]])
        n_classes = 2 if objective.multilabel else objective.task.n_targets
        return ensemble_loss(votes, np.asarray(objective.Y).ravel(), n_classes, loss)

    def _stack(self, members: list[str]) -> np.ndarray:
        n = np.asarray(self.objective().Y).size
        return np.stack([self.votes(ph) for ph in members]) if members else np.zeros((0, n), dtype=np.int64)

    def labels(self, j: int) -> tuple[list[dict], np.ndarray]:
        """Every observation's label with slot ``j`` emptied: the ensemble loss with it added (failed: 1)."""
        others = self._others(j)
        stacked = self._stack(others)  # once: each label only adds a row
        pool = set(self.pool())
        values, labels, seen = [], [], set()
        for v, ph, fit in self.observations:
            if ph in seen or ph in others:
                continue
            seen.add(ph)
            values.append(v)
            labels.append(self._loss(stacked, self.params["loss"], ph) if ph in pool else FAILED_LOSS)
        return values, np.asarray(labels)

    def propose(self, rng: np.random.Generator) -> dict:
        j = self.asked % len(self.slots)
        values, labels = self.labels(j)
        if len(labels) < 2:  # everything evaluated sits in the other slots: nothing to learn from yet
            return self.initial_values()
        _, acquisition = self.surrogate(values, labels)
        configs, _ = self.candidates(acquisition, [values[int(np.argmin(labels))]], rng)
        return dict(configs[0])

    def ask_one(self, rng):
        j = self.asked % len(self.slots)
        ind = super().ask_one(rng)
        self.slot_of.setdefault(ind.phenotype, []).append(j)
        return ind

    def told(self, phenotype: str, ok: bool) -> None:
        waiting = self.slot_of.get(phenotype)
        j = waiting.pop(0) if waiting else self.refills % len(self.slots)  # in flight at a resume
        if waiting == []:
            del self.slot_of[phenotype]
        self.refills += 1
        self.refill(j)

    def refill(self, j: int) -> None:
        """Slot ``j`` := the pool member (not in the other slots) whose addition gives the lowest 0-1 loss;
        ties by the smooth loss, then by the member's own fitness."""
        others = self._others(j)
        stacked = self._stack(others)
        best = None
        for ph in self.pool():
            if ph in others:
                continue
            key = (self._loss(stacked, "l01", ph), self._loss(stacked, self.params["loss"], ph),
                   -self.fitness_of(ph))
            if best is None or key < best[0]:
                best = (key, ph)
        if best is not None:
            self.slots[j] = best[1]

    def members(self) -> list[str]:
        return [ph for ph in self.slots if ph is not None]

    def ensemble(self) -> list[tuple[Individual, float]] | None:
        """The method's own ensemble (the run's model unless ``--ensemble`` is given): equal votes."""
        members = self.members()
        if not members:
            return None
        return [(Individual(self.flat.decode(self.values_of(ph), self.config.max_depth), fitness=self.fitness_of(ph)),
                 1.0) for ph in members]

    def ensemble_refits(self) -> int:
        from ..ensemble_spec import REFIT_MEMBERS

        return min(len(self.slots), REFIT_MEMBERS)

    def ensemble_measures(self) -> dict | None:
        members, objective = self.members(), self.objective()
        if not members or objective is None:
            return None
        shares = np.mean([self.votes(ph) for ph in members], axis=0)  # equal votes
        if objective.multilabel:
            Y = np.asarray(objective.Y)
            shares = shares.reshape(Y.shape)
            return objective.task.measures(Y, (shares > 0.5).astype(np.int8), shares)
        k = objective.task.n_targets
        table = np.mean([np.eye(k)[self.votes(ph)] for ph in members], axis=0)
        return objective.task.measures(objective.Y, np.argmax(table, axis=1), table)

    def archive(self) -> list[Individual]:
        """The ensemble's members first, then the best of the rest."""
        ens = [ind for ind, _ in (self.ensemble() or [])]
        names = {ind.phenotype for ind in ens}
        return ens + [ind for ind in super().archive() if ind.phenotype not in names]

    @property
    def keeps_final_order(self) -> bool:
        return False

    def stats(self) -> dict:
        out = super().stats()
        members = self.members()
        if members and self.objective() is not None:
            out["method"]["ensemble_l01"] = round(self._loss(members, "l01"), 6)
            out["method"]["members"] = len(members)
        return out

    def report(self) -> dict | None:
        members = self.members()
        if not members:
            return None
        rows = [[ph, f"{self.fitness_of(ph):.4f}"] for ph in members]
        title = (f"EO ({self.params['loss']}, {self.params['surrogate']} surrogate): {len(members)} of "
                 f"{len(self.slots)} slots filled, ensemble 0-1 loss on the validation rows "
                 f"{self._loss(members, 'l01'):.4f}" if self.objective() is not None else "EO")
        return {"title": title, "columns": ["member", "fitness"], "rows": rows}

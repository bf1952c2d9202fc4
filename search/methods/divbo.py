"""DivBO: diversity-aware Bayesian optimisation for ensembles (``--method divbo``; 002, notes §6).

Why: post-hoc ensemble selection can only combine what the search evaluated, and a search for the
single best keeps proposing near-copies of it. DivBO ranks the acquisition's candidates by expected
improvement *and* by how different their predictions are expected to be from the current ensemble,
with a small weight that grows over the run:

* **performance surrogate** — the random forest (or the conditional GP) on 1 − fitness, EI;
* **diversity surrogate** — an ensemble of ``diversity_models`` LightGBM regressors (bagging, feature
  subsampling, different seeds) over configuration pairs ``enc(x_i) ++ enc(x_j)``, trained on every
  ordered pair of evaluated configurations (at most ``pair_cap``, drawn with the run's Generator) with
  their diversity from the stored validation scores (:func:`evaluation.ensemble_losses.diversity`:
  002 Eq. 3; for multi-label data the mean over labels of the probability distance). Only the
  columns active in some evaluated configuration enter (the Large space has 1,917, a pool uses a few
  hundred); the members' mean and standard deviation are the predictive distribution;
* **temporary pool** — the distinct members of Caruana's ensemble selection (size ``ensemble_size``,
  25) over the best 50 evaluated (the post-hoc pool's size), recomputed at every iteration (002 §3.2);
* **diversity acquisition** — the mean over ``samples`` (15) Gaussian draws of the *minimum* predicted
  diversity to the pool's members (Eq. 4: a copy of a member scores 0);
* **rank-weighted choice** — argmin of rank(EI) + w·rank(diversity), rank 1 the best, average ranks
  for ties, ``w = β (sigmoid(τ t) − 0.5)`` with β = 0.05 and τ = 0.2 (Eq. 5) and t the iteration after
  the initial design. The sigmoid minus one half lies in [0, ½), so w saturates at β/2 = 0.025, not at
  β as the paper writes (notes §6.5): diversity reorders about the best 2.5 % of the EI ranking.

Candidates are ``challengers`` random configurations plus SMAC's local search from the best
(002 uses 4,950 + 50; the default 1,000 keeps an ask below an evaluation's time). The run ends with
ensemble selection, as DivBO does: its model is the Caruana ensemble of the re-evaluated pool
(``--ensemble caruana`` unless another size is given; :mod:`ggp_automl.search.ensemble`).
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from ggp_automl.evaluation.ensemble_losses import diversity
from ggp_automl.evaluation.selection import caruana

from .bo import FAILED_COST
from .registry import register_method
from ..parameters import Parameter
from .prediction_search import CHALLENGERS, POPULATION, SURROGATE, PredictionSearch


@register_method
class DivBO(PredictionSearch):
    name = "divbo"
    default_ensemble: ClassVar[str | None] = "caruana"
    parameters: ClassVar = (
        Parameter("beta", float, 0.05, "DivBO: the diversity weight's scale β (the weight saturates at β/2)",
                  low=0.0, high=10.0),
        Parameter("tau", float, 0.2, "DivBO: the diversity weight's growth τ per iteration", low=0.0, high=100.0),
        Parameter("ensemble_size", int, 25, "DivBO: picks of the temporary pool's ensemble selection", low=1,
                  high=1000),
        Parameter("samples", int, 15, "DivBO: draws from the diversity surrogate per candidate and pool member",
                  low=1, high=1000),
        Parameter("diversity_models", int, 5, "DivBO: LightGBM regressors in the diversity surrogate", low=1,
                  high=100),
        Parameter("pair_cap", int, 2000, "DivBO: configuration pairs the diversity surrogate is fit on at most",
                  low=10, high=1_000_000),
        Parameter("initial", int, 5, "DivBO: random configurations before the first surrogate, besides the "
                  "grammar's default configuration (002: 5)", low=1, high=10_000),
        SURROGATE, CHALLENGERS, POPULATION,
    )

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.iteration = 0
        self.last_weight = 0.0

    def weight(self, t: int) -> float:
        """w(t) = β (sigmoid(τ t) − 0.5), in [0, β/2)."""
        return self.params["beta"] * (1.0 / (1.0 + np.exp(-self.params["tau"] * t)) - 0.5)

    def temporary_pool(self, pool: list[str]) -> list[str]:
        """The distinct members of Caruana's ensemble selection over the evaluated pool — its best
        :data:`~ggp_automl.search.ensemble.POOL` by validation fitness, as the post-hoc selection sees (the cost of
        a greedy step grows with the pool; members far below the best are not picked)."""
        from ..ensemble_spec import POOL

        best = sorted(pool, key=lambda ph: -self.fitness_of(ph))[:POOL]
        selection = caruana([self.scores(ph) for ph in best], self.objective(), self.params["ensemble_size"])
        return [best[int(i)] for i in selection.members]

    def propose(self, rng: np.random.Generator) -> dict:
        self.iteration += 1
        values, costs = [], []
        for v, ph, fit in self.observations:
            values.append(v)
            costs.append(FAILED_COST if fit is None else 1.0 - fit)
        _, acquisition = self.surrogate(values, np.asarray(costs))
        configs, ei = self.candidates(acquisition, [values[int(np.argmin(costs))]], rng)
        w = self.last_weight = self.weight(self.iteration)
        pool = self.pool()
        if w <= 0.0 or len(pool) < 2:
            return dict(configs[0])
        members = self.temporary_pool(pool)
        alpha = self.diversity_acquisition(pool, members, configs, rng)
        from scipy.stats import rankdata  # here: scipy.stats takes a second to import, listing methods none

        rank = rankdata(-ei, method="average") + w * rankdata(-alpha, method="average")
        return dict(configs[int(np.argmin(rank))])  # ties: the first, i.e. the higher EI

    # -- the diversity surrogate -------------------------------------------------------------------
    def diversity_acquisition(self, pool: list[str], members: list[str], configs: list,
                              rng: np.random.Generator) -> np.ndarray:
        """α_div of each candidate: the mean over draws of the minimum predicted diversity to ``members``."""
        X = self.array([self.values_of(ph) for ph in pool])
        keep = ~np.all(np.isnan(X), axis=0)  # the columns some evaluated configuration uses
        X = X[:, keep]
        multilabel = self.objective().multilabel
        n = len(pool)
        pairs = np.array([(i, j) for i in range(n) for j in range(n) if i != j])
        if len(pairs) > self.params["pair_cap"]:
            pairs = pairs[np.sort(rng.choice(len(pairs), self.params["pair_cap"], replace=False))]
        div = {}
        for i, j in pairs:
            key = (min(i, j), max(i, j))
            if key not in div:
                div[key] = diversity(self.scores(pool[i]), self.scores(pool[j]), multilabel)
        features = np.hstack([X[pairs[:, 0]], X[pairs[:, 1]]])
        target = np.array([div[(min(i, j), max(i, j))] for i, j in pairs])
        models = self._fit_lightgbm(features, target, int(rng.integers(0, 2**31 - 1)))
        from smac.utils.configspace import convert_configurations_to_array

        C = convert_configurations_to_array(configs)[:, keep]
        index = {ph: k for k, ph in enumerate(pool)}
        draws = np.full((self.params["samples"], len(configs)), np.inf)
        for ph in members:
            left = np.repeat(X[index[ph]][None, :], len(configs), axis=0)
            predictions = np.stack([m.predict(np.hstack([left, C])) for m in models])
            mean, sd = predictions.mean(axis=0), predictions.std(axis=0)
            sample = mean + sd * rng.standard_normal((self.params["samples"], len(configs)))
            draws = np.minimum(draws, sample)
        return draws.mean(axis=0)

    def _fit_lightgbm(self, features: np.ndarray, target: np.ndarray, seed: int) -> list:
        import lightgbm as lgb

        models = []
        for k in range(self.params["diversity_models"]):
            model = lgb.LGBMRegressor(n_estimators=50, learning_rate=0.1, num_leaves=15, min_child_samples=5,
                                      subsample=0.8, subsample_freq=1, colsample_bytree=0.8, random_state=seed + k,
                                      n_jobs=1, deterministic=True, force_row_wise=True, verbose=-1)
            models.append(model.fit(features, target))
        return models

    def stats(self) -> dict:
        out = super().stats()
        out["method"]["diversity_weight"] = round(self.last_weight, 6)
        return out

    def report(self) -> dict | None:
        if not self.observations:
            return None
        ranked = sorted({ph: f for _, ph, f in self.observations if f is not None}.items(), key=lambda kv: -kv[1])
        rows = [[ph, f"{f:.4f}"] for ph, f in ranked[:5]]
        return {"title": f"DivBO ({self.params['surrogate']} surrogate): {len(self.observations)} observations, "
                         f"{self.iteration} model-based iterations, diversity weight now {self.last_weight:.4f}",
                "columns": ["configuration", "fitness"], "rows": rows}

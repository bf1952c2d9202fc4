"""Post-processing: return an ensemble of what the search evaluated instead of the single best.

GAMA-style, this is a step after the search, independent of the method: ``--ensemble
caruana[:SIZE]`` (default size :data:`~evaluation.selection.DEFAULT_SIZE`). The loop re-evaluates
up to :data:`POOL` of the method's best candidates on the fresh final split (as many as the
time-keeper's plan allows) and keeps their validation scores (:mod:`evaluation.predictions`) —
one consistent set of rows for all of them, out of fold under ``--cv``. Caruana's greedy
selection with replacement (:func:`evaluation.selection.caruana`) weighs them by the run's own
fitness; the members are refit on all the training data side by side on the workers, each
within the budget's remaining time (:meth:`TimeKeeper.refit_timeout`); a member that fails or
cannot finish is left out and the selection is redone without it. When fewer than two members
remain the single best is returned, and ``final.json`` says why.

The ensemble (:class:`spaces.ensemble.EnsembleModel`) is the run's model — ``best/model.joblib``,
``best/model.py``, ``predict`` and the Python estimators use it — while ``best/phenotype.txt`` and
the tree files stay the single best's. ``final.json``'s ``"ensemble"`` section holds the members,
their weights, the ensemble's validation and test measures beside the single best's, the time the
ensemble added and what the prediction store kept.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from ggp_automl.evaluation.final import fit_final
from ggp_automl.evaluation.isolation import Limits
from ggp_automl.evaluation.selection import EnsembleObjective, caruana, mean_scores

from .ensemble_spec import parse_ensemble

if TYPE_CHECKING:
    from .loop import SearchLoop

#: seconds a member's refit leaves at the end of the budget: the ensemble still predicts the test set
#: and is written to the run directory
END_MARGIN = 2.0


def build_ensemble(loop: "SearchLoop", pairs: list, winner, winner_fit) -> tuple[object | None, dict]:
    """``(model, report)``: the refit ensemble (None: keep the single best) and ``final.json``'s section."""
    from .loop import FINAL_VIEW

    t0 = time.time()
    cfg, store = loop.config, loop.predictions
    kind, size = parse_ensemble(cfg.ensemble_spec)
    report: dict = {"kind": kind, "size": size, "returned": False, "predictions": store.summary()}
    pool = [(c, r) for c, r in pairs if r is not None and r.ok and store.get(FINAL_VIEW, c.phenotype) is not None]
    report["pool"] = len(pool)
    if winner is None or len(pool) < 2:
        report["reason"] = ("no model was refit" if winner is None else
                            f"{len(pool)} candidate(s) were re-evaluated on the final split; an ensemble needs 2")
        return None, _timed(report, t0)
    train_Y = loop.train.Y[loop.train.task.labelled(loop.train.Y)]
    objective = EnsembleObjective(loop.train.task, store.targets(FINAL_VIEW), cfg.fitness, Y_train=train_Y)
    scores = [store.get(FINAL_VIEW, c.phenotype) for c, _ in pool]
    selection = caruana(scores, objective, size)
    models = {winner.phenotype: winner_fit.model}
    members = [int(i) for i in selection.members]
    dropped = _refit(loop, [(pool[i][0], pool[i][1].wall_time) for i in members
                            if pool[i][0].phenotype not in models], models)
    if dropped:  # select again among the members that could be refit
        usable = [i for i in range(len(pool)) if pool[i][0].phenotype in models]
        selection = caruana([scores[i] for i in usable], objective, size)
        pool, scores = [pool[i] for i in usable], [scores[i] for i in usable]
        members = [int(i) for i in selection.members]
    report["dropped"] = dropped
    single = pool[selection.single_best]
    report["single_best"] = {"phenotype": single[0].phenotype, "valid_fitness": selection.single_value}
    if len(members) < 2:
        report["reason"] = "the selection kept only the single best"
        return None, _timed(report, t0)
    from ggp_automl.spaces.ensemble import EnsembleModel

    weights = selection.weights[members]
    mean = mean_scores(scores, selection.counts)
    strategy = objective.strategy(mean)  # calibrated on the refit members' training scores, as a single model's
    model = EnsembleModel.from_fitted([models[pool[i][0].phenotype] for i in members], weights,
                                      strategy or "PCut1", X=loop.train.X, Y=loop.train.Y)
    report.update({
        "returned": True,
        "members": [{"phenotype": pool[i][0].phenotype, "weight": round(float(w), 6), "picks": int(selection.counts[i]),
                     "valid_fitness": pool[i][1].fitness} for i, w in zip(members, weights)],
        "valid_fitness": selection.value,
        "valid_measures": objective.measures(mean),
        "trace": [round(v, 6) for v in selection.trace],
        "thresholds": None if strategy is None else {
            "strategy": strategy, "values": [round(float(t), 6) for t in model.thresholds_]},
    })
    return model, _timed(_tested(loop, model, report), t0)


def build_method_ensemble(loop: "SearchLoop", winner, winner_fit) -> tuple[object | None, dict]:
    """``(model, report)`` of the method's own ensemble (:meth:`SearchMethod.ensemble`: ensemble
    optimisation's slots), refit and combined by majority vote."""
    from ggp_automl.spaces.ensemble import EnsembleModel

    t0 = time.time()
    method = loop.state.method
    members = method.ensemble() or []
    report: dict = {"kind": loop.config.method, "size": len(members), "returned": False, "pool": len(members),
                    "predictions": loop.predictions.summary() if loop.predictions is not None else None}
    if winner is None or len(members) < 2:
        report["reason"] = ("no model was refit" if winner is None
                            else f"the method's ensemble has {len(members)} member")
        return None, _timed(report, t0)
    models = {winner.phenotype: winner_fit.model}
    walls = loop.state.walls
    report["dropped"] = _refit(loop, [(ind, walls.get(ind.phenotype, (None, None))[1]) for ind, _ in members
                                      if ind.phenotype not in models], models)
    kept = [(ind, w) for ind, w in members if ind.phenotype in models]
    if len(kept) < 2:
        report["reason"] = "fewer than 2 members could be refit"
        return None, _timed(report, t0)
    total = sum(w for _, w in kept)
    model = EnsembleModel.from_fitted([models[ind.phenotype] for ind, _ in kept], [w / total for _, w in kept],
                                      voting="hard")
    measures = method.ensemble_measures() if not report["dropped"] else None
    report.update({
        "returned": True, "voting": "hard",
        "members": [{"phenotype": ind.phenotype, "weight": round(w / total, 6), "picks": 1,
                     "valid_fitness": ind.score} for ind, w in kept],
        "valid_fitness": None if measures is None else measures.get(loop.config.fitness),
        "valid_measures": measures or {},
        "single_best": {"phenotype": winner.phenotype, "valid_fitness": winner.score},
    })
    return model, _timed(_tested(loop, model, report), t0)


def _refit(loop: "SearchLoop", todo: list, models: dict) -> list[dict]:
    """Refit the members ``(candidate, measured seconds)`` side by side on the workers within the
    budget; the ones left out."""
    cfg = loop.config
    dropped: list[dict] = []

    def one(pair):
        cand, wall = pair
        timeout = loop.keeper.refit_timeout(cfg.budget_seconds - loop.now() - END_MARGIN, wall)
        if timeout is None:
            return cand, None, "no time was left in the budget to refit it"
        fit = fit_final(cand.tree, loop.grammar, loop.train.X, loop.train.Y, loop.train.categorical_features,
                        limits=Limits(timeout=timeout, memory_bytes=cfg.memory_bytes), random_state=cfg.seed,
                        task=loop.train.task)
        return cand, (fit.model if fit.ok else None), (None if fit.ok else f"{fit.status}: {fit.reason}")

    if not todo:
        return dropped
    with ThreadPoolExecutor(max_workers=max(1, min(loop.engine.workers, len(todo)))) as pool:
        for cand, model, reason in pool.map(one, todo):
            if model is not None:
                models[cand.phenotype] = model
            else:
                dropped.append({"phenotype": cand.phenotype, "reason": reason})
    return dropped


def _tested(loop: "SearchLoop", model, report: dict) -> dict:
    """The report with the ensemble's test measures, when the run has a test set."""
    if loop.test is not None:
        task = loop.train.task
        predictions, scores = task.outputs(model, loop.test.X)
        report["test"] = task.measures(loop.test.Y, predictions, scores)
    return report


def _timed(report: dict, t0: float) -> dict:
    report["seconds"] = round(time.time() - t0, 3)
    return report

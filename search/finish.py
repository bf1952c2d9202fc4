"""The end of a run: choose the winner, refit it on all training data, write the artefacts.

The archive is re-evaluated on a fresh split (in :meth:`SearchLoop.choose`); the
best re-evaluated candidate is refit on learning + validation data together and
measured on the test set when one is given. If the winner fails at full size, the
runner-up is tried (up to three refits). Only candidates that worked are refit: one
whose re-evaluation failed, or that was not re-evaluated and never ended with a fitness
in the search, would only fail again (issue 9: a run whose every candidate had failed
refit three of them). The refit's time limit is the time-keeper's
(:meth:`ggp_automl.search.timekeeper.TimeKeeper.refit_timeout`): the time left in the budget; a
candidate that cannot finish in it is not started (a faster runner-up may be), so the
run ends within its budget.

**Every run that evaluated a candidate successfully returns a model** (issue 25). The final
re-evaluation keeps the model it fits for its best candidate (:attr:`SearchLoop.kept_model`);
when no candidate can be refit on all the rows within the budget (or every refit fails), that
model — fitted on the final split's learning rows, about 80 % of the training rows — is the
run's: ``best/model.joblib``, measured on the test set like a refit one, status ``finished``.
``final.json``'s ``"model"`` says which rows the returned model saw (``fitted_on``: ``all
training rows`` or ``learning rows of the final re-evaluation``, ``rows``, ``of``) and, when it
was not refit, why (``refit_failure``). A refit started while such a model exists leaves the
time to measure it on the test set (:meth:`TimeKeeper.test_reserve`). Only a run with no
candidate re-evaluated (or whose kept model was lost to a kill before the refit) and no refit
ends without a model. ``final.json`` still records any overrun (the artefacts are written after
the refit).
"""
from __future__ import annotations

from pathlib import Path

import joblib

from ggp_automl.evaluation.final import fit_final, score_model
from ggp_automl.evaluation.isolation import Limits

from .loop import SearchLoop
from .state import SearchOutcome
from .rundir import BEST, FINAL

REFIT_TRIES = 3
#: final.json's ``model.fitted_on``
ALL_ROWS = "all training rows"
LEARNING_ROWS = "learning rows of the final re-evaluation"
FOLD_ROWS = "train rows of the final re-evaluation's last fold"


def _status(loop: SearchLoop, pairs, usable, started: int, winner) -> str:
    if winner is not None:
        return "finished"
    counts = loop.state.counts
    if not pairs and not counts.get("evaluations"):
        return "no candidate evaluated"
    if not usable and any(loop.worked(c) for c, _ in pairs):
        return "every candidate failed its final re-evaluation"
    if not usable:
        if counts.get("failed", 0) >= counts.get("evaluations", 0):
            return "every candidate failed"
        # some succeeded on a screening subsample only (their fits are not kept): nothing to return
        return ("no candidate was evaluated on all the learning rows within the budget (successes on "
                "screening subsamples only); give a larger --budget or --eval-timeout")
    return "no candidate could be refit" if started else "no model could be refit within the budget"


def _kept(loop: SearchLoop):
    """The final re-evaluation's kept model, unpickled here (None: none kept, or it does not load)."""
    kept = loop.kept_model
    if kept is None:
        return None, None
    try:
        return kept, kept.result.fitted_model()
    except Exception:  # noqa: BLE001 - a model pickled in the child that does not load here is no model
        return None, None


def finish(loop: SearchLoop) -> SearchOutcome:
    cfg, st = loop.config, loop.state
    pairs = loop.choose()
    kept = loop.kept_model
    usable = [(c, r) for c, r in pairs if (r.ok if r is not None else loop.worked(c))]
    archive = [{"phenotype": c.phenotype, "species": c.species, "search_fitness": c.score,
                "final_fitness": None if r is None else r.fitness, "status": "not re-evaluated" if r is None
                else r.status} for c, r in pairs]
    test = loop.test
    # a refit started while the re-evaluation's model exists leaves the time to measure that one on the test set
    keep = 0.0 if kept is None or test is None else loop.keeper.test_reserve(
        kept.result.predict_time, kept.scored_rows, len(test.Y))
    winner, fit, chosen, failure, started = None, None, None, None, 0
    loop.observer.on_phase("refit", usable[0][0].phenotype if usable else "")
    for cand, r in usable:
        if started == REFIT_TRIES:
            break
        measured = r.wall_time if r is not None else st.walls.get(cand.phenotype, (None, None))[1]
        remaining = cfg.budget_seconds - loop.now()
        timeout = loop.keeper.refit_timeout(remaining, measured, keep)
        if timeout is None:  # it could not end in time; a faster runner-up still may
            failure = (f"{max(remaining, 0.0):.1f} s of the budget were left"
                       + (f", and {cand.phenotype!r} took {measured:.1f} s on the learning rows alone"
                          if measured else "") + "; give a larger --budget")
            continue
        started += 1
        fit = fit_final(cand.tree, loop.grammar, loop.train.X, loop.train.Y, loop.train.categorical_features,
                        None if test is None else test.X, None if test is None else test.Y,
                        Limits(timeout=timeout, memory_bytes=cfg.memory_bytes), random_state=cfg.seed,
                        task=loop.train.task)
        if fit.ok:
            winner, chosen = cand, r
            break
        failure = f"{fit.status}: {fit.reason}"
    model = fit.model if winner is not None else None
    refit = winner
    returned = None if winner is None else {"fitted_on": ALL_ROWS, "rows": int(len(loop.train.Y)),
                                            "of": int(len(loop.train.Y)), "refit": True}
    test_measures, test_failure = (fit.test_measures if winner is not None else None), None
    if winner is None:
        kept, model = _kept(loop)
        if kept is not None:  # no refit: the model the final re-evaluation fitted is the run's
            winner, chosen = kept.candidate, kept.result
            returned = {"fitted_on": FOLD_ROWS if kept.folds else LEARNING_ROWS, "rows": int(kept.rows),
                        "of": int(len(loop.train.Y)), "refit": False,
                        "refit_failure": failure or "no candidate could be refit"}
            if test is not None:
                test_measures, test_failure = _score_kept(loop, kept)
    ensemble = None
    if cfg.ensemble_spec is not None or st.method.ensemble() is not None:
        from .ensemble import build_ensemble, build_method_ensemble

        loop.observer.on_phase("ensemble", cfg.ensemble_spec or cfg.method)
        try:  # members are refit on all rows: only beside a refit winner
            if cfg.ensemble_spec is not None:
                built, ensemble = build_ensemble(loop, pairs, refit, fit)
            else:
                built, ensemble = build_method_ensemble(loop, refit, fit)
        except Exception as exc:  # noqa: BLE001 - the single best is still a result
            built, ensemble = None, {"kind": cfg.ensemble_spec or cfg.method, "returned": False,
                                     "reason": f"building the ensemble failed: {type(exc).__name__}: {exc}"}
        model = built or model
    elapsed = loop.now()
    final = {
        "status": _status(loop, pairs, usable, started, winner),
        "method": cfg.method,
        "task": loop.train.task.name,
        "fitness": cfg.fitness,
        "time": round(elapsed, 3),
        "overrun_seconds": round(max(0.0, elapsed - cfg.budget_seconds), 3),
        "winner": None if winner is None else {
            "phenotype": winner.phenotype, "species": winner.species,
            "valid_fitness": chosen.fitness if chosen is not None else winner.score,
            "valid_measures": chosen.measures if chosen is not None else {}},
        "model": returned,
        "archive": archive,
        "test": None if winner is None or test is None or test_measures is None else {
            "measures": test_measures, "n_instances": int(test.X.shape[0]),
            "source": loop.info.get("test_source", "test set")},
        "test_failure": test_failure,
        "refit_time": None if fit is None else round(fit.wall_time, 3),
        "refit_failure": None if refit is not None else failure,
        "counts": {**st.counts, "generations": st.generation},
        "mode": cfg.effective_mode,
        "limits": loop.keeper.summary(),
        "screening": loop.screening_summary(),
        "work": loop.work(),
        "method_report": st.method.report(),
        "ensemble": ensemble,
        "warnings": [],
    }
    if loop.run_dir is not None:
        if winner is not None:
            final["warnings"] += write_best(loop, winner, model, final)
        final["warnings"] += write_method_artefacts(loop)
        final["warnings"] += write_convergence(loop)
        loop.run_dir.write_json(FINAL, final)
        loop.run_dir.close()
    loop.observer.on_phase("done")
    loop.observer.on_end(final)
    return SearchOutcome(winner, final, model, history=loop.history)


def _score_kept(loop: SearchLoop, kept) -> tuple[dict | None, str | None]:
    """The kept model's test measures, isolated and within the time left; or None and why not."""
    remaining = loop.config.budget_seconds - loop.now()
    if remaining < loop.keeper.test_reserve(0.0, 1, 1):
        return None, f"not measured on the test set: {max(remaining, 0.0):.1f} s of the budget were left"
    scored = score_model(kept.model, loop.test.X, loop.test.Y,
                         Limits(timeout=remaining, memory_bytes=loop.config.memory_bytes), task=loop.train.task)
    if scored.ok:
        return scored.test_measures, None
    return None, f"measuring it on the test set failed ({scored.status}: {scored.reason})"


def write_best(loop: SearchLoop, winner, model, final: dict) -> list[str]:
    """``best/``: phenotype, indented tree, DOT, PNG of the single best; the returned model (the single
    best, or the ensemble) fitted and as code. ``final["model_sha256"]`` is the model file's checksum:
    ``predict`` refuses a model file that is not the one this run wrote."""
    from sklearn.base import clone

    from ggp_automl.spaces.ensemble import EnsembleModel
    from ggp_automl.spaces.export import to_python

    from .plots import tree_png

    def code() -> str:
        if isinstance(model, EnsembleModel):
            return to_python(clone(model))
        return winner.export(loop.grammar, loop.config.seed)

    run = loop.run_dir
    warnings = []
    steps = [
        ("phenotype", lambda: run.write_text(f"{BEST}/phenotype.txt", winner.phenotype + "\n")),
        ("tree", lambda: run.write_text(f"{BEST}/tree.txt", winner.tree.render() + "\n")),
        ("dot", lambda: run.write_text(f"{BEST}/tree.dot", winner.tree.to_dot())),
        ("png", lambda: tree_png(winner.tree, run.path / BEST / "tree.png")),
        ("model", lambda: final.update(model_sha256=_dump(_signed(model, run.run_id), run.path / BEST / "model.joblib"))),
        ("code", lambda: run.write_text(f"{BEST}/model.py", code())),
    ]
    for what, step in steps:
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - one failed artefact must not lose the others
            warnings.append(f"could not write the {what} of the best individual: {type(exc).__name__}: {exc}")
    return warnings


def write_method_artefacts(loop: SearchLoop) -> list[str]:
    try:
        return loop.state.method.write_artefacts(loop.run_dir.path)
    except Exception as exc:  # noqa: BLE001 - a picture must not lose the run's results
        return [f"could not write the {loop.config.method} method's files: {type(exc).__name__}: {exc}"]


def write_convergence(loop: SearchLoop) -> list[str]:
    from .plots import convergence_png

    try:
        title = f"{loop.config.method} on {loop.info.get('data_name', 'data')}"
        convergence_png(loop.run_dir.generations(), loop.run_dir.path / "convergence.png", title)
    except Exception as exc:  # noqa: BLE001
        return [f"could not draw the convergence plot: {type(exc).__name__}: {exc}"]
    return []


#: how a model file names the run that wrote it: plain bytes in the pickle stream, which ``predict`` finds
#: without unpickling a file it refuses (results/predict.py)
RUN_MARK = "ggp-automl-run:"


def _signed(model, run_id: str | None):
    """``model`` carrying its run's id as a string attribute (its bytes appear verbatim in the file)."""
    if run_id:
        model.ggp_automl_run_ = RUN_MARK + run_id
    return model


def _dump(model, path: Path) -> str:
    """Write ``model`` to ``path`` (a complete file or none) and return its SHA-256."""
    import hashlib

    tmp = path.with_name(path.name + ".tmp")
    joblib.dump(model, tmp)
    digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
    tmp.replace(path)
    return digest

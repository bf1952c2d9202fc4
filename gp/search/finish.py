"""The end of a run: choose the winner, refit it on all training data, write the artefacts.

The archive is re-evaluated on a fresh split (in :meth:`SearchLoop.choose`); the
best re-evaluated candidate is refit on learning + validation data together and
measured on the test set when one is given. If the winner fails at full size, the
runner-up is tried (up to three candidates). The refit's time limit is the
time-keeper's (:meth:`gp.search.timekeeper.TimeKeeper.refit_timeout`): the rest of the
budget, but never less than 1.5× the candidate's measured time, so a slow winner may
end a run a little late rather than without a model; ``final.json`` records any overrun.
"""
from __future__ import annotations

import time
from pathlib import Path

import joblib

from evaluation.final import fit_final
from evaluation.isolation import Limits

from .loop import SearchLoop, SearchOutcome
from .rundir import BEST, FINAL

REFIT_TRIES = 3


def finish(loop: SearchLoop) -> SearchOutcome:
    cfg, st = loop.config, loop.state
    pairs = loop.choose()
    usable = [(c, r) for c, r in pairs if r is None or r.ok]
    archive = [{"phenotype": c.phenotype, "species": c.species, "search_fitness": c.score,
                "final_fitness": None if r is None else r.fitness, "status": "not re-evaluated" if r is None
                else r.status} for c, r in pairs]
    winner, fit, chosen = None, None, None
    loop.observer.on_phase("refit", usable[0][0].phenotype if usable else "")
    for cand, r in usable[:REFIT_TRIES]:
        remaining = loop.t0 + cfg.budget_seconds - time.time()
        timeout = loop.keeper.refit_timeout(remaining, r.wall_time if r is not None else None)
        test = loop.test
        fit = fit_final(cand.tree, loop.grammar, loop.train.X, loop.train.Y, loop.train.categorical_features,
                        None if test is None else test.X, None if test is None else test.Y,
                        Limits(timeout=timeout, memory_bytes=cfg.memory_bytes), random_state=cfg.seed)
        if fit.ok:
            winner, chosen = cand, r
            break
    elapsed = loop.now()
    final = {
        "status": "finished" if winner is not None else ("no candidate evaluated" if not pairs
                                                           else "no candidate could be refit"),
        "method": cfg.method,
        "time": round(elapsed, 3),
        "overrun_seconds": round(max(0.0, elapsed - cfg.budget_seconds), 3),
        "winner": None if winner is None else {
            "phenotype": winner.phenotype, "species": winner.species,
            "valid_fitness": chosen.fitness if chosen is not None else winner.score,
            "valid_measures": chosen.measures if chosen is not None else {}},
        "archive": archive,
        "test": None if winner is None or loop.test is None else {
            "measures": fit.test_measures, "n_instances": int(loop.test.X.shape[0]),
            "source": loop.info.get("test_source", "test set")},
        "refit_time": None if fit is None else round(fit.wall_time, 3),
        "refit_failure": None if fit is None or fit.ok else f"{fit.status}: {fit.reason}",
        "counts": {**st.counts, "generations": st.generation},
        "mode": cfg.effective_mode,
        "limits": loop.keeper.summary(),
        "screening": loop.screening_summary(),
        "work": loop.work(),
        "warnings": [],
    }
    if loop.run_dir is not None:
        if winner is not None:
            final["warnings"] += write_best(loop, winner, fit.model)
        final["warnings"] += write_convergence(loop)
        loop.run_dir.write_json(FINAL, final)
        loop.run_dir.close()
    loop.observer.on_phase("done")
    loop.observer.on_end(final)
    return SearchOutcome(winner, final, fit.model if fit is not None and fit.ok else None,
                         history=loop.history)


def write_best(loop: SearchLoop, winner, model) -> list[str]:
    """``best/``: phenotype, indented tree, DOT, PNG, fitted model, exported code."""
    from .plots import tree_png

    run = loop.run_dir
    warnings = []
    steps = [
        ("phenotype", lambda: run.write_text(f"{BEST}/phenotype.txt", winner.phenotype + "\n")),
        ("tree", lambda: run.write_text(f"{BEST}/tree.txt", winner.tree.render() + "\n")),
        ("dot", lambda: run.write_text(f"{BEST}/tree.dot", winner.tree.to_dot())),
        ("png", lambda: tree_png(winner.tree, run.path / BEST / "tree.png")),
        ("model", lambda: _dump(model, run.path / BEST / "model.joblib")),
        ("code", lambda: run.write_text(f"{BEST}/model.py", winner.export(loop.grammar, loop.config.seed))),
    ]
    for what, step in steps:
        try:
            step()
        except Exception as exc:  # noqa: BLE001 - one failed artefact must not lose the others
            warnings.append(f"could not write the {what} of the best individual: {type(exc).__name__}: {exc}")
    return warnings


def write_convergence(loop: SearchLoop) -> list[str]:
    from .plots import convergence_png

    try:
        title = f"{loop.config.method} on {loop.info.get('data_name', 'data')}"
        convergence_png(loop.run_dir.generations(), loop.run_dir.path / "convergence.png", title)
    except Exception as exc:  # noqa: BLE001
        return [f"could not draw the convergence plot: {type(exc).__name__}: {exc}"]
    return []


def _dump(model, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    joblib.dump(model, tmp)
    tmp.replace(path)

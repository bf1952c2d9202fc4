"""Start, resume and describe a run: the glue between the CLI / Python API and the loop.

:func:`start` builds everything a run needs from a :class:`RunConfig`, a grammar and
the data (the engine, the method, the initial state, the run directory); :func:`resume`
rebuilds the same from a run directory alone. Both end in :func:`run_loop`.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import pickle
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from evaluation.data import Dataset, from_arrays, load_dataset, load_split
from evaluation.engine import make_engine
from evaluation.isolation import Limits
from evaluation.splits import kfold_splits
from gp.bnf_parser import load_grammar
from gp.errors import DataError
from gp.grammar import Grammar

from .config import RunConfig
from .finish import finish
from .loop import SearchLoop, SearchOutcome, SearchState
from .method import make_method
from .observer import SearchObserver
from .rundir import FINAL, RunDirectory, default_run_name, library_versions

#: ``--fold k`` uses this split seed, so that every method and seed sees the same folds
FOLD_SEED = 0
N_FOLDS = 5


class RunError(ValueError):
    """A run that cannot start or resume (the message says why); the CLI exits 1."""


@dataclass
class RunData:
    train: Dataset
    test: Dataset | None = None
    #: for config.json: name, path, test, fold and sizes
    description: dict = field(default_factory=dict)


def default_dataset() -> Dataset:
    from evaluation import default_data

    X, Y = default_data.load_default()
    return from_arrays(X, Y, name=default_data.NAME)


def load_run_data(data: str | Path | None = None, test: str | Path | None = None,
                  fold: int | None = None) -> RunData:
    """The training (and test) data of a run: a file, a train/test pair, fold k of 5, or the default."""
    if test is not None and fold is not None:
        raise RunError("give either a test set or a fold, not both")
    if data is None:
        if test is not None:
            raise RunError("a test set needs its training data (--data)")
        train, name = default_dataset(), "synthetic default"
    elif test is not None:
        train, test_set = load_split(data, test)
        return describe_data(train, test_set, data, test, None)
    else:
        train = load_dataset(data)
        name = None
    if fold is None:
        return describe_data(train, None, data, None, None, name)
    if not 1 <= fold <= N_FOLDS:
        raise RunError(f"--fold must be between 1 and {N_FOLDS}, got {fold}")
    if train.n_instances < 2 * N_FOLDS:
        raise RunError(f"{train.n_instances} instances are too few for {N_FOLDS} folds")
    learn, held_out = kfold_splits(train.Y, N_FOLDS, np.random.default_rng(FOLD_SEED))[fold - 1]
    return describe_data(train.subset(learn), train.subset(held_out), data, None, fold, name)


def describe_data(train: Dataset, test: Dataset | None, data, test_path, fold, name: str | None = None) -> RunData:
    description = {
        "name": name or getattr(train, "name", None) or str(data),
        "path": None if data is None else str(Path(data).resolve()),
        "test": None if test_path is None else str(Path(test_path).resolve()),
        "fold": fold, "fold_seed": FOLD_SEED if fold is not None else None,
        "n_instances": train.n_instances, "n_features": train.n_features, "n_labels": train.n_labels,
        "n_test": None if test is None else test.n_instances,
    }
    return RunData(train, test, description)


def _sha256(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _test_source(desc: dict) -> str | None:
    if desc.get("test"):
        return desc["test"]
    if desc.get("fold"):
        return f"fold {desc['fold']} of {N_FOLDS} (iterative stratification, seed {FOLD_SEED})"
    return None


def start(config: RunConfig, grammar: str | Path | Grammar, data: RunData, out: str | Path | None = None,
          observers: list[SearchObserver] = (), argv: list[str] | None = None, write: bool = True) -> SearchOutcome:
    """Run a search from scratch. ``out`` None: a timestamped folder under ``runs/`` (unless ``write`` is False)."""
    g = grammar if isinstance(grammar, Grammar) else load_grammar(grammar)
    config = config.replace(mode=config.effective_mode)  # config.json says which mode ran
    run = None
    if write:
        run = RunDirectory(out or Path("runs") / default_run_name(config.method))
        run.create({
            "method": config.method, "config": config.to_dict(),
            "grammar": str(Path(g.path).resolve()) if Path(g.path).exists() else g.path,
            "grammar_sha256": _sha256(g.path) if Path(g.path).exists() else None,
            "data": data.description, "versions": library_versions(),
            "argv": list(argv) if argv is not None else sys.argv, "started": _dt.datetime.now().isoformat(),
        })
    method = make_method(config, g, data.train.meta)
    state = SearchState.initial(method, config, config.worker_count)
    return run_loop(config, g, data, state, run, observers)


def resume(path: str | Path, observers: list[SearchObserver] = (), workers: int | None = None,
           scheduler: str | None = None) -> SearchOutcome:
    """Continue an interrupted run from its directory (a kill -9 included)."""
    run = RunDirectory(path)
    if not run.exists:
        raise RunError(f"{path} is not a run directory (no config.json)")
    if (run.path / FINAL).exists():
        raise RunError(f"{path} has already finished; inspect it with `python cli.py inspect {path}`")
    record = run.config()
    config = RunConfig.from_dict(record["config"])
    if workers is not None or scheduler is not None:  # the machine may differ; the search does not
        config = config.replace(workers=workers or config.workers, scheduler=scheduler)
    grammar_path = record["grammar"]
    if not Path(grammar_path).exists():
        raise RunError(f"the run's grammar {grammar_path} no longer exists")
    if record.get("grammar_sha256") and _sha256(grammar_path) != record["grammar_sha256"]:
        raise RunError(f"{grammar_path} has changed since the run started; a resumed run must use the same "
                       "grammar (restore the file, or start a new run)")
    desc = record["data"]
    try:
        data = load_run_data(desc.get("path"), desc.get("test"), desc.get("fold"))
    except (DataError, OSError) as exc:
        raise RunError(f"cannot reload the run's data: {exc}") from None
    data.description = desc
    grammar = load_grammar(grammar_path)
    try:
        state: SearchState | None = run.load_checkpoint()
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError, TypeError) as exc:
        raise RunError(f"{path}: the checkpoint cannot be read ({type(exc).__name__}: {exc})") from None
    if state is not None and not hasattr(state, "keeper"):
        raise RunError(f"{path} was written by an older version of ggp-automl and cannot be resumed by this one; "
                       "start a new run")
    if state is None:  # killed before the first generation ended: the same seed replays it
        state = SearchState.initial(make_method(config, grammar, data.train.meta), config, config.worker_count)
    else:
        state.method.config = config
        state.method.attach(grammar, data.train.meta)
    run.repair("evaluations.jsonl")
    run.truncate_generations(state.generations_logged)
    logged = run.evaluations()
    restored = [r for r in logged if r.get("n", -1) >= state.logged]
    used = max([state.elapsed] + [float(r.get("time", 0.0)) for r in restored])
    state.logged = max([state.logged] + [int(r["n"]) + 1 for r in logged if "n" in r])
    return run_loop(config, grammar, data, state, run, observers, restored=restored, used=used)


def run_loop(config: RunConfig, grammar: Grammar, data: RunData, state: SearchState, run: RunDirectory | None,
             observers: list[SearchObserver] = (), restored: list[dict] = (), used: float | None = None
             ) -> SearchOutcome:
    limits = Limits(timeout=state.keeper.hard_cap, memory_bytes=config.memory_bytes)
    info = {"method": config.method, "mode": config.effective_mode, "budget": config.budget_seconds,
            "grammar": grammar.path,
            "data_name": data.description.get("name", "data"), "workers": config.worker_count,
            "scheduler": config.scheduler, "resumed": bool(restored) or state.generation > 0,
            "test_source": _test_source(data.description), "run_dir": None if run is None else str(run.path)}
    with make_engine(config.workers, limits, config.scheduler) as engine:
        info["workers"] = state.keeper.workers = engine.workers
        loop = SearchLoop(config=config, grammar=grammar, train=data.train, test=data.test, engine=engine,
                          state=state, run=run, observers=list(observers), restored=list(restored), info=info)
        if used is not None:
            loop.t0 = time.time() - used
        loop.observer.on_start({**info, "generation": state.generation, "counts": dict(state.counts),
                                "used": loop.now()})
        try:
            loop.search()
            return finish(loop)
        finally:
            if run is not None:
                run.close()

"""Start and resume a run: the glue between the CLI / Python API and the loop.

:func:`start` builds everything a run needs from a :class:`RunConfig`, a grammar and
the data (the engine, the method and its warm start, the initial state, the run directory); :func:`resume`
rebuilds the same from a run directory alone. Both end in :func:`run_loop`. The run's data and its checks
are :mod:`.run_data` (re-exported here).
"""
from __future__ import annotations

import datetime as _dt
import sys
import time
from collections.abc import Callable
from pathlib import Path

from ggp_automl.evaluation.engine import make_engine
from ggp_automl.evaluation.isolation import Limits, one_blas_thread
from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.errors import DataError
from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.species import resolve_species
from ggp_automl.spaces.grammar_check import registry_check

from .asynchronous import run_async
from .config import RunConfig
from .errors import RunError
from .finish import finish
from .generational import run_generational
from .loop import SearchLoop
from .state import SearchOutcome, SearchState
from .methods import make_method
from .observer import SearchObserver
from .portfolio import NONE, check_unchanged, resolve as portfolio_file, sha256 as _sha256, warm_started
from .rundir import CHECKPOINT, CONFIG, EVALUATIONS, FINAL, RunDirectory, default_run_name, library_versions
from .run_data import (FOLD_SEED, MAX_FOLDS, N_FOLDS, RunData, _test_source, check_run_data,  # noqa: F401 - API
                       check_task, default_dataset, describe_data, grammar_task, load_run_data)


def start(config: RunConfig, grammar: str | Path | Grammar, data: RunData, out: str | Path | None = None,
          observers: list[SearchObserver] = (), argv: list[str] | None = None, write: bool = True,
          warn: Callable[[str], None] | None = None) -> SearchOutcome:
    """Run a search from scratch. ``out`` None: a timestamped folder under ``runs/`` (unless ``write`` is False).

    The grammar is checked against the mapper's registry and the data against
    :mod:`evaluation.learnable` before a run directory exists (a refusal leaves none); each
    warning goes to ``warn`` as a line ready to print. The run directory is locked while the
    search runs (:mod:`ggp_automl.search.lock`)."""
    began = time.time()  # the budget counts from here: building the method (BO: seconds) is part of the run
    config = config.replace(plugins=_plugins(config.plugins))  # recorded as files' absolute paths
    if "species" in config.method_params:  # spGGP's species files too, as absolute paths (gp.species)
        config = config.replace(method_params={**config.method_params,
                                               "species": resolve_species(config.method_params["species"])})
    g = grammar if isinstance(grammar, Grammar) else load_grammar(grammar)
    # a grammar no tree of which the mapper can build fails here, not per candidate
    warnings, produced = registry_check(g)
    lines = [d.render() for d in warnings]
    check_task(g, data, produced)
    try:  # config.json says which mode ran, every method parameter, and what the task made of fitness and cv
        config = config.replace(mode=config.effective_mode, method_params=config.params).for_task(data.train.task)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    config, adjusted = _adjusted(config)
    data_warnings = check_run_data(config, data)
    portfolio, warm_warnings = portfolio_file(config.warm_start, g.path)  # recorded as the file it is, or "none"
    config = config.replace(warm_start=str(portfolio) if portfolio else NONE)
    for line in lines + [f"warning: {w}" for w in adjusted + data_warnings + warm_warnings]:
        if warn is not None:
            warn(line)
    try:  # before the run directory exists: a method may refuse the grammar (bo, ga: a recursive one)
        method = make_method(config, g, data.train.meta)
    except ValueError as exc:
        raise RunError(str(exc)) from None
    for line in warm_started(method, config):
        if warn is not None:
            warn(f"warning: {line}")
    run = None
    if write:
        run = RunDirectory(out or Path("runs") / default_run_name(config.method))
        run.create({
            "method": config.method, "config": config.to_dict(),
            "grammar": str(Path(g.path).resolve()) if Path(g.path).exists() else g.path,
            "grammar_sha256": _sha256(g.path) if Path(g.path).exists() else None,
            "species_sha256": {s: _sha256(s) for s in _species_files(config)},
            "warm_start_sha256": _sha256(portfolio) if portfolio else None,
            "data": {**data.description, "warnings": data_warnings}, "adjusted": adjusted,
            "versions": library_versions(),
            "argv": list(argv) if argv is not None else sys.argv, "started": _dt.datetime.now().isoformat(),
        })
    try:
        state = SearchState.initial(method, config, config.worker_count)
        return run_loop(config, g, data, state, run, observers, used=time.time() - began)
    finally:
        if run is not None:
            run.release()


def _adjusted(config: RunConfig) -> tuple[RunConfig, list[str]]:
    """Settings the run cannot keep as given, changed to the nearest it can, each said in a sentence (printed
    once as a warning and kept in config.json's "adjusted"): never silently."""
    from ggp_automl.evaluation.engine import MIN_START_SECONDS

    said = []
    if config.eval_timeout is not None and config.eval_timeout < MIN_START_SECONDS:
        said.append(f"the evaluation timeout {config.eval_timeout:g} s is below the {MIN_START_SECONDS:g} s a candidate "
                    f"is given at least (evaluation/engine.py); the run uses {MIN_START_SECONDS:g} s")
        config = config.replace(eval_timeout=MIN_START_SECONDS)
    return config, said


def _plugins(specs) -> tuple[str, ...]:
    """The run's plug-in modules imported in this process (:mod:`spaces.plugins`); RunError if one fails."""
    from ggp_automl.spaces.plugins import PluginError, load_plugins

    try:
        return load_plugins(specs)
    except PluginError as exc:
        raise RunError(str(exc)) from None


def _species_files(config: RunConfig) -> list[str]:
    """The species grammar files of a spGGP run (its ``species`` parameter's strings)."""
    species = config.method_params.get("species") or ()
    return [s for s in species if isinstance(s, str)]


def _check_species_files(config: RunConfig, record: dict) -> None:
    """A resumed spGGP run's species files exist and are the files it started with (as its grammar)."""
    recorded = record.get("species_sha256") if isinstance(record.get("species_sha256"), dict) else {}
    for spec in _species_files(config):
        if not Path(spec).is_file():
            raise RunError(f"the run's species file {spec} no longer exists")
        if recorded.get(spec) and _sha256(spec) != recorded[spec]:
            raise RunError(f"species file {spec} has changed since the run started; a resumed run must use the "
                           "same species (restore the file, or start a new run)")


def _text(value, *, optional: bool = False) -> bool:
    return (optional and value is None) or (isinstance(value, str) and value != "" and "\0" not in value)


def _run_record(run: RunDirectory) -> tuple[dict, RunConfig]:
    """``config.json`` checked field by field, so that a damaged one is reported as such."""
    record = run.config()
    if not isinstance(record.get("config"), dict):
        raise run.damaged(CONFIG, 'no "config" object with the run\'s settings')
    plugins = record["config"].get("plugins")
    if isinstance(plugins, list) and plugins and all(isinstance(s, str) for s in plugins):
        _plugins(plugins)  # before the settings are checked: a plug-in may register the run's method
    try:
        config = RunConfig.from_dict(record["config"])
    except (TypeError, ValueError) as exc:
        raise run.damaged(CONFIG, f"settings: {exc}") from None
    desc = record.get("data")
    problems = [] if _text(record.get("grammar")) else ['"grammar" is not a file name']
    if not _text(record.get("grammar_sha256"), optional=True):
        problems.append('"grammar_sha256" is not a hash')
    if not isinstance(desc, dict):
        problems.append('no "data" object')
    else:
        problems += [f'"data.{k}" is not a file name' for k in ("path", "test")
                     if not _text(desc.get(k), optional=True)]
        if not _text(desc.get("target"), optional=True):
            problems.append('"data.target" is not a list of attribute names')
        fold, folds = desc.get("fold"), desc.get("folds") or N_FOLDS  # no "folds": a run made before --fold K/N
        if type(folds) is not int or not 2 <= folds <= MAX_FOLDS:
            problems.append(f'"data.folds" is not a number of folds 2..{MAX_FOLDS}')
        elif fold is not None and (type(fold) is not int or not 1 <= fold <= folds):
            problems.append(f'"data.fold" is not a fold number 1..{folds}')
    if problems:
        raise run.damaged(CONFIG, "; ".join(problems))
    return record, config


def _well_formed(record: dict) -> bool:
    """An evaluation record as the loop writes it (a hand-edited or damaged one is not served back)."""
    number = (int, float)
    measures = record.get("measures") or {}
    return (type(record.get("n")) is int and record["n"] >= 0
            and all(isinstance(record.get(k), str) for k in ("split", "phenotype", "status"))
            and isinstance(record.get("reason", ""), str) and isinstance(record.get("fitness"), number)
            and isinstance(record.get("test_fitness", 0.0), number)
            and isinstance(measures, dict) and all(isinstance(v, number) for v in measures.values())
            and all(isinstance(record.get(k) or 0, number) for k in ("time", "fit_time", "predict_time",
                                                                     "wall_time", "limit")))


def resume(path: str | Path, observers: list[SearchObserver] = (), workers: int | None = None,
           scheduler: str | None = None) -> SearchOutcome:
    """Continue an interrupted run from its directory (a kill -9 included), locked while it runs."""
    run = RunDirectory(path)
    if not run.path.is_dir():
        raise RunError(f"{path} is not a run directory (" + ("a file" if run.path.exists() else "no such directory")
                       + ")")
    if not run.exists:
        raise RunError(f"{path} is not a run directory (no config.json)")
    if (run.path / FINAL).exists():
        raise RunError(f"{path} has already finished; inspect it with `python cli.py inspect {path}`")
    try:
        run.lock()
    except OSError as exc:
        raise RunError(f"cannot lock {path} for this process: {exc.strerror or exc}") from None
    try:
        return _resume(run, observers, workers, scheduler)
    finally:
        run.release()


def _resume(run: RunDirectory, observers, workers: int | None, scheduler: str | None) -> SearchOutcome:
    began = time.time()  # reloading the data and rebuilding the method count against the budget too
    path = run.path
    record, config = _run_record(run)
    if workers is not None or scheduler is not None:  # the machine may differ; the search does not
        try:
            config = config.replace(workers=workers or config.workers, scheduler=scheduler)
        except ValueError as exc:
            raise RunError(str(exc)) from None
    grammar_path = record["grammar"]
    if not Path(grammar_path).exists():
        raise RunError(f"the run's grammar {grammar_path} no longer exists")
    if record.get("grammar_sha256") and _sha256(grammar_path) != record["grammar_sha256"]:
        raise RunError(f"{grammar_path} has changed since the run started; a resumed run must use the same "
                       "grammar (restore the file, or start a new run)")
    desc = record["data"]
    _check_species_files(config, record)
    _plugins(config.plugins)  # before the grammar: its terminals may be the plug-ins' algorithms
    grammar = load_grammar(grammar_path)
    try:
        data = load_run_data(desc.get("path"), desc.get("test"), desc.get("fold"), desc.get("target"),
                             grammar_task(grammar), desc.get("folds") or N_FOLDS)
    except (DataError, OSError) as exc:
        raise RunError(f"cannot reload the run's data: {exc}") from None
    data.description = desc
    try:  # a run directory written before the task seam has neither fitness nor cv decided
        config = config.for_task(data.train.task)
    except ValueError as exc:
        raise run.damaged(CONFIG, f"settings: {exc}") from None
    state = run.load_checkpoint()
    if state is not None and not isinstance(state, SearchState):
        raise run.damaged(CHECKPOINT, f"it holds a {type(state).__name__}, not a search state")
    foreign = run.foreign(CHECKPOINT, getattr(state, "run_id", None)) if state is not None else None
    n_foreign, owner = run.foreign_evaluations()
    if foreign is None and n_foreign:
        foreign = run.foreign(EVALUATIONS, owner)
    if foreign is not None:
        raise foreign
    if state is not None and not hasattr(state, "keeper"):
        raise RunError(f"{path} was written by an older version of ggp-automl and cannot be resumed by this one; "
                       "start a new run")
    if state is None:  # killed before the first generation ended: the same seed replays it
        check_unchanged(config, record)
        method = make_method(config, grammar, data.train.meta)
        warm_started(method, config)
        state = SearchState.initial(method, config, config.worker_count)
    else:
        state.method.config = config
        state.method.attach(grammar, data.train.meta)
    run.repair(EVALUATIONS)
    run.truncate_generations(state.generations_logged)
    logged = run.evaluations()
    usable = [r for r in logged if _well_formed(r)]
    if len(usable) < len(logged):
        print(f"warning: {path / EVALUATIONS}: {len(logged) - len(usable)} damaged record(s) skipped; those "
              "evaluations run again", file=sys.stderr)
    restored = [r for r in usable if r["n"] >= state.logged]
    used = max([state.elapsed] + [float(r.get("time") or 0.0) for r in restored]) + (time.time() - began)
    state.logged = max([state.logged] + [r["n"] + 1 for r in usable])
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
    # One BLAS thread in the search process while its threads fork children: OpenBLAS's fork handler
    # can deadlock against a multi-threaded BLAS call in another thread (the BO surrogate, the cost
    # model; seen once as a hung run), and the cores belong to the workers anyway.
    with one_blas_thread(), \
            make_engine(config.workers, limits, config.scheduler, config.plugins) as engine:
        info["workers"] = state.keeper.workers = engine.workers
        loop = SearchLoop(config=config, grammar=grammar, train=data.train, test=data.test, engine=engine,
                          state=state, run=run, observers=list(observers), restored=list(restored), info=info)
        if used is not None:
            loop.t0 = time.time() - used
        loop.observer.on_start({**info, "generation": state.generation, "counts": dict(state.counts),
                                "used": loop.now()})
        try:
            search(loop)
            return finish(loop)
        finally:
            if run is not None:
                run.close()


def search(loop: SearchLoop) -> None:
    """The search phase of a run: the asynchronous or the generational driver, by the run's mode."""
    loop.observer.on_phase("search")
    if loop.config.effective_mode == "async":
        run_async(loop)
    else:
        run_generational(loop)
    loop.search_ended()

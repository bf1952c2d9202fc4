"""Building a portfolio: ``python cli.py portfolio build FILE.toml``.

Why through experiment grids: every evaluation of the pool is an ordinary ``evolve`` run (the engine,
its limits, the cache, the run directory ``inspect`` reads), the build resumes after a crash like
``bench`` does, runs on a Dask cluster with ``--scheduler``, and the derived experiment files in the
output directory say exactly what ran.

The file is an experiment file (benchmarks/README.md) with one grammar and a ``[portfolio]`` table::

    [experiment]
    budget = "20m"                 # each evaluation run: room for the whole pool at its eval_timeout
    workers = 2
    options = { eval_timeout = "30s" }
    [grammars]
    large = "../../grammars/large.bnf"
    [methods.ggp]                  # optional: searches whose best candidates join the pool
    method = "ggp"
    [datasets.Flags]
    data = "../../../shared/datasets/mlc-folds/Flags/Flags-train{fold}.arff"
    folds = [1, 2]
    [portfolio]
    size = 16                      # K, the members chosen
    sample = 48                    # random derivations of the grammar in the pool (ramped half-and-half)
    seed = 0                       # of that sample
    top = 3                        # the best candidates each search run contributes (its winner first)
    runs = ["../../runs/earlier"]  # finished experiment or run directories that contribute too
    search_budget = "1m"           # the [methods.*] searches' budget (default: the experiment's)
    leave_one_out = true           # also one portfolio per dataset, built without it

The stages, each in the output directory: ``search/`` (the ``[methods.*]`` grid), ``pool.portfolio.json``
(every candidate, with where it came from), ``evaluate/`` (one run per dataset and fold evaluating the
whole pool first: ``evolve --method random --warm-start POOL --population N --generations 1 --screening
off --adaptive-timeout off``, its search fitness on the training rows' validation split), then
``portfolio.json`` and, with ``leave_one_out``, ``without-DATASET.portfolio.json`` for each dataset
(:mod:`._portfolio_selection`: its scores and the candidates of its runs never take part).
"""
from __future__ import annotations

import datetime as _dt
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..gp.bnf_parser import load_grammar
from ..search.options import duration
from ..search.portfolio import Member, Portfolio, sha256
from ..search.rundir import read_jsonl
from . import _toml
from ._portfolio_selection import Scores, select
from .grid import MANIFEST, RUNS, Grid, prepare, state_of
from .spec import ExperimentError, _Reader, load_experiment

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

PORTFOLIO_KEYS = {"size": 16, "sample": 48, "seed": 0, "top": 3, "runs": [], "search_budget": None,
                  "leave_one_out": False}
#: what every evaluation run is told, whatever the file's options say: the pool, whole, at full fidelity, once
EVALUATION = {"method": "random", "generations": 1, "screening": "off", "adaptive_timeout": "off"}
POOL, PORTFOLIO = "pool.portfolio.json", "portfolio.json"


@dataclass(frozen=True)
class BuildSpec:
    path: Path
    doc: dict                # the experiment file's tables without [portfolio], paths made absolute
    grammar: Path
    datasets: dict           # label -> the files of each fold (absolute), as the experiment reader found them
    size: int
    sample: int
    seed: int
    top: int
    runs: tuple[Path, ...]
    search_budget: str
    leave_one_out: bool


def read_spec(path: str | Path) -> BuildSpec:
    """The build file checked (the experiment's tables by the experiment reader, ``file:line:col``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
        doc = tomllib.loads(text)
    except (OSError, UnicodeDecodeError) as exc:
        raise ExperimentError(f"{path}: cannot read the portfolio file: {getattr(exc, 'strerror', None) or exc}") \
            from None
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"{path}: not valid TOML: {exc}") from None
    options = doc.pop("portfolio", None)
    reader = _Reader(path, text, {**doc, "methods": doc.get("methods") or {"pool": dict(EVALUATION)}})
    if not isinstance(options, dict):
        reader.fail("portfolio", None, "a portfolio file needs a [portfolio] table (size, sample, seed, top, runs, "
                                       "search_budget, leave_one_out)")
    for key in set(options) - set(PORTFOLIO_KEYS):
        reader.fail("portfolio", key, f"unknown portfolio setting {key!r}; known: {', '.join(sorted(PORTFOLIO_KEYS))}")
    settings = {**PORTFOLIO_KEYS, **options}
    for key in ("size", "sample", "seed", "top"):
        if type(settings[key]) is not int or settings[key] < (1 if key == "size" else 0) or settings[key] > 10_000:
            reader.fail("portfolio", key, f"{key} is a whole number from {1 if key == 'size' else 0} to 10000")
    if not isinstance(settings["leave_one_out"], bool):
        reader.fail("portfolio", "leave_one_out", "leave_one_out is true or false")
    runs = settings["runs"]
    if not isinstance(runs, list) or not all(isinstance(r, str) and r for r in runs):
        reader.fail("portfolio", "runs", "runs is a list of experiment or run directories")
    runs = tuple((p if p.is_absolute() else reader.base / p).resolve() for p in map(Path, runs))
    for r in runs:
        if not (r / MANIFEST).is_file() and not (r / "config.json").is_file():
            reader.fail("portfolio", "runs", f"{r} is neither an experiment directory nor a run directory")
    experiment = reader.experiment()  # every other table checked as `bench` checks it
    grammars = doc.get("grammars") or {}
    if len(grammars) != 1:
        reader.fail("grammars", None, "a portfolio belongs to one grammar: give exactly one in [grammars]")
    budget = settings["search_budget"] or experiment.budget
    if not isinstance(budget, str):
        reader.fail("portfolio", "search_budget", 'search_budget: a duration such as "1m"')
    try:
        duration(budget)
    except Exception as exc:  # argparse's ArgumentTypeError: the command line's own message
        reader.fail("portfolio", "search_budget", f"search_budget: {exc}")
    if not doc.get("methods") and not runs and not settings["sample"]:
        reader.fail("portfolio", None, "the pool would be empty: give [methods.*] searches, runs, or a sample")
    grammar = Path(reader.file("grammars", next(iter(grammars)), next(iter(grammars.values()))))
    datasets = {name: reader.dataset(name, spec) for name, spec in doc["datasets"].items()}
    absolute = {**doc, "grammars": {next(iter(grammars)): str(grammar)},
                "datasets": {name: _absolute(spec, reader.base) for name, spec in doc["datasets"].items()}}
    return BuildSpec(path.resolve(), absolute, grammar, datasets, settings["size"], settings["sample"],
                     settings["seed"], settings["top"], runs, budget, settings["leave_one_out"])


def _absolute(spec: dict, base: Path) -> dict:
    """A dataset table with its files as absolute paths (the derived experiment files live elsewhere)."""
    out = dict(spec)
    for key in ("data", "test"):
        if isinstance(out.get(key), str) and out[key] != "default" and not Path(out[key]).is_absolute():
            out[key] = str(base / out[key])
    return out


def _experiment_file(spec: BuildSpec, out: Path, name: str, methods: dict, budget: str, seeds) -> Path:
    """A derived experiment file in ``out`` (absolute paths): what ``bench`` would run by hand."""
    exp = {k: v for k, v in spec.doc.get("experiment", {}).items() if k != "description"}
    exp.update(name=f"{exp.get('name', spec.path.stem)}-{name}", budget=budget, seeds=seeds, trace_test=False)
    doc = {"experiment": exp, "grammars": spec.doc["grammars"], "methods": methods, "datasets": spec.doc["datasets"]}
    path = out / f"{name}.toml"
    text = _toml.dumps(doc, f"derived by `cli.py portfolio build {spec.path}` (experiments/portfolio.py)")
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def _run_grid(path: Path, out: Path, scheduler: str | None, observer) -> Path:
    experiment = load_experiment(path)
    prepare(experiment, out)
    Grid(experiment, out, scheduler, observer).run()
    left = [r.id for r in experiment.runs if state_of(out / RUNS / r.directory) != "done"]
    if left:
        raise ExperimentError(f"{len(left)} run(s) of {out} did not finish ({', '.join(left[:3])}…; logs in "
                              f"{out / 'logs'}); run the same command again to retry them")
    return out


def _label(run_dir: Path, spec: BuildSpec) -> str:
    """The dataset a single run directory ran on: the build's label whose files hold its data, else its name."""
    data = (json.loads((run_dir / "config.json").read_text(encoding="utf-8")).get("data") or {})
    for label, dataset in spec.datasets.items():
        if any(data.get("path") == files[0] for files in dataset["files"].values()):
            return label
    return str(data.get("name") or Path(str(data.get("path") or "data")).stem)


def _run_dirs(source: Path, spec: BuildSpec) -> list[tuple[Path, str]]:
    """(run directory, dataset label) of every finished run an experiment or run directory holds."""
    if (source / MANIFEST).is_file():
        manifest = json.loads((source / MANIFEST).read_text(encoding="utf-8"))
        return [(source / RUNS / r["directory"], r["dataset"]) for r in manifest["runs"]
                if (source / RUNS / r["directory"] / "final.json").is_file()]
    return [(source, _label(source, spec))] if (source / "final.json").is_file() else []


def best_of_run(run_dir: Path, top: int) -> list[str]:
    """A finished run's winner, then its best other full-fidelity search candidates: ``top`` phenotypes."""
    final = json.loads((run_dir / "final.json").read_text(encoding="utf-8"))
    best: dict[str, float] = {}
    for e in read_jsonl(run_dir / "evaluations.jsonl"):
        if e.get("phase") == "search" and e.get("level", 0) == 0 and e.get("status") == "ok":
            best[e["phenotype"]] = max(best.get(e["phenotype"], -np.inf), float(e["fitness"]))
    ranked = sorted(best, key=lambda p: -best[p])
    winner = (final.get("winner") or {}).get("phenotype")
    ordered = ([winner] if winner else []) + [p for p in ranked if p != winner]
    return ordered[:top]


def make_pool(spec: BuildSpec, sources: list[Path]) -> list[Member]:
    """The pool: every source run's best candidates (tagged ``run:DATASET``), then the grammar's sample;
    a phenotype once, with the first source that gave it."""
    from ..gp.generate import TreeGenerator
    from ..search.run_data import default_dataset, grammar_task

    members: dict[str, Member] = {}
    for source in sources:
        for run_dir, label in _run_dirs(source, spec):
            for phenotype in best_of_run(run_dir, spec.top):
                members.setdefault(phenotype, Member(phenotype, f"run:{label}"))
    if spec.sample:
        grammar = load_grammar(spec.grammar)
        meta = default_dataset(grammar_task(grammar)).meta  # as `cli.py sample` binds without data
        rng = np.random.default_rng(spec.seed)
        for tree in TreeGenerator(grammar.bind(meta)).ramped_half_and_half(spec.sample, rng, min_depth=2):
            members.setdefault(tree.phenotype, Member(tree.phenotype, "sample"))
    return list(members.values())


def scores_of(evaluate: Path, pool: list[str]) -> tuple[Scores, float]:
    """Each dataset's and fold's search fitness of the pool's members (None: failed, timed out or never
    evaluated), and the machine seconds the evaluation runs took (wall time × workers)."""
    manifest = json.loads((evaluate / MANIFEST).read_text(encoding="utf-8"))
    wanted, scores = set(pool), {}
    for r in manifest["runs"]:
        cell = scores.setdefault(r["dataset"], {}).setdefault(r["fold"] or 0, {})
        for e in read_jsonl(evaluate / RUNS / r["directory"] / "evaluations.jsonl"):
            if e.get("phase") == "search" and e.get("level", 0) == 0 and e.get("phenotype") in wanted:
                ok = e.get("status") == "ok"
                cell.setdefault(e["phenotype"], float(e["fitness"]) if ok else None)
    return scores, _grid_seconds(evaluate)


def _grid_seconds(grid: Path) -> float:
    """The machine time of a grid's finished runs: each run's wall time (final.json) × its workers."""
    manifest = json.loads((grid / MANIFEST).read_text(encoding="utf-8"))
    total = 0.0
    for r in manifest["runs"]:
        try:
            final = json.loads((grid / RUNS / r["directory"] / "final.json").read_text(encoding="utf-8"))
            total += float(final.get("time") or 0.0) * int(manifest.get("workers") or 1)
        except (OSError, ValueError):
            continue
    return total


def build(path: str | Path, out: str | Path | None = None, scheduler: str | None = None, new_observer=None,
          command: str = "", say=lambda line: None) -> list[Path]:
    """Build (or resume building) the portfolio(s) a build file describes; the files written.
    ``new_observer()``: a fresh grid observer (:class:`~.live.GridProgress`) for each stage's grid;
    ``say(line)``: what the build is doing, and what it could not evaluate."""
    observer = new_observer or (lambda: None)
    spec = read_spec(path)
    out = Path(out) if out is not None else Path("runs") / f"portfolio-{spec.path.stem}"
    out.mkdir(parents=True, exist_ok=True)
    sources, seconds = list(spec.runs), 0.0
    if spec.doc.get("methods"):
        searches = _experiment_file(spec, out, "search", spec.doc["methods"], spec.search_budget,
                                    spec.doc.get("experiment", {}).get("seeds", [0]))
        say(f"stage 1 of 2: the pool's searches ({searches})")
        sources.append(_run_grid(searches, out / "search", scheduler, observer()))
        seconds += _grid_seconds(out / "search")
    pool_path = out / POOL
    if pool_path.is_file():  # a resumed build evaluates the pool it began with
        pool = list(Portfolio.load(pool_path).members)
    else:
        pool = make_pool(spec, sources)
        if not pool:
            raise ExperimentError(f"{spec.path}: the pool is empty (the runs found no successful candidate and "
                                  "sample is 0)")
        Portfolio(tuple(pool), spec.grammar.name, sha256(spec.grammar), command=command).save(pool_path)
    say(f"the pool: {len(pool)} candidates ({pool_path})")
    methods = {"pool": {**EVALUATION, "population": len(pool), "warm_start": str(pool_path.resolve())}}
    budget = spec.doc["experiment"]["budget"]
    evaluation = _experiment_file(spec, out, "evaluate", methods, budget, "fold")
    say(f"stage 2 of 2: the pool on every dataset and fold ({evaluation})")
    _run_grid(evaluation, out / "evaluate", scheduler, observer())
    scores, evaluated = scores_of(out / "evaluate", [m.phenotype for m in pool])
    seconds += evaluated
    missing = sum(1 for folds in scores.values() for cell in folds.values() for m in pool if m.phenotype not in cell)
    if missing:
        say(f"warning: {missing} (candidate, dataset, fold) cells were never evaluated (the run's budget ended first, "
            "or the candidate cannot be derived for that data): they count as the worst; a larger "
            "[experiment] budget evaluates them")
    written = []
    for held_out in [None] + (list(spec.datasets) if spec.leave_one_out else []):
        chosen = select(pool, scores, spec.size, held_out)
        name = PORTFOLIO if held_out is None else f"without-{_safe(held_out)}.portfolio.json"
        portfolio = Portfolio(
            tuple(chosen), spec.grammar.name, sha256(spec.grammar),
            tuple(d for d in spec.datasets if d != held_out), held_out,
            {d: [k for k in v["folds"]] for d, v in spec.datasets.items() if d != held_out},
            {"run": budget, "options": spec.doc["experiment"].get("options", {}),
             "workers": spec.doc["experiment"].get("workers", 1), "pool": len(pool)},
            command, _dt.datetime.now().isoformat(timespec="seconds"), round(seconds, 1))
        written.append(portfolio.save(out / name))
    return written


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]", "_", label)

#!/usr/bin/env python3
"""ggp-automl command line.

    python cli.py evolve  [--grammar FILE] [--data FILE [--target NAME[,NAME…]] [--test FILE | --fold K]]
                          [--method ggp|spggp|random|beam|pbil] [--budget 10m] [--eval-timeout 60s] [--memory 2GB]
                          [--workers N] [--seed S] [--mode async|generational] [--screening on|off]
                          [--adaptive-timeout on|off] [--thesis] [--fitness NAME] [--cv K] [--out DIR]
                          [--scheduler tcp://HOST:PORT] [--species S[,S…]] [--plugin MODULE|FILE.py …]
                          [the method's own options, e.g. --learning-rate 0.3]
    python cli.py evolve  --resume DIR [--workers N] [--scheduler ADDR]
    python cli.py inspect DIR
    python cli.py predict DIR --data FILE [--out FILE] [--scores]
    python cli.py check   --grammar FILE [--data FILE [--target NAME[,NAME…]] | --labels L --features M]
                          [--rules] [--plugin MODULE|FILE.py …]
    python cli.py sample  --grammar FILE -n N --seed S [--data FILE [--target …] | --labels L --features M]
    python cli.py species --grammar FILE [--out DIR]
    python cli.py bench   EXPERIMENT.toml|DIR [--out DIR] [--scheduler tcp://HOST:PORT] [--dry-run] [--quiet]
    python cli.py report  DIR [--out DIR] [--measure NAME …] [--alpha 0.05] [--blocks dataset|fold]

Exit codes: 0 success; 1 a grammar, dataset, run-directory or other input problem (the
message says where: ``file:line:col``), a run that found no working model, or an internal
error (a bug in ggp-automl: one line says so and where the traceback was written — the run
directory when there is one, else the system's temporary folder); 2 bad command-line usage;
130 interrupted (an interrupted ``evolve`` resumes with ``--resume``). No command prints a
Python traceback.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

EXIT_OK, EXIT_INPUT, EXIT_USAGE = 0, 1, 2
ROOT = Path(__file__).resolve().parent
DEFAULT_GRAMMAR = ROOT / "grammars" / "large.bnf"


class UsageError(Exception):
    pass


def _int_at_least(minimum: int, what: str):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected a number ≥ {minimum}, got {value}")
        return value
    return parse


_positive_int = _int_at_least(1, "a whole number")
_seed = _int_at_least(0, "an integer seed")

def _species(text: str) -> list:
    """``1,8,grammars/species/large-trees.bnf`` → [1, 8, 'grammars/species/large-trees.bnf'] (the numbers are
    generated species; a file is checked when the run starts). A file whose name holds a comma is one entry."""
    if Path(text).is_file():
        return [text]
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise argparse.ArgumentTypeError(f"expected species numbers 1-8 and species files separated by commas, "
                                             f"got {text!r}")
        if part.isdigit():
            if not 1 <= int(part) <= 8:
                raise argparse.ArgumentTypeError(f"the generated species are numbered 1 to 8, got {part} (a species "
                                                 "of your own is a grammar file)")
            out.append(int(part))
        else:
            out.append(part)
    return out


def _fold(text: str) -> tuple[int, int]:
    """``K`` (fold K of 5) or ``K/N`` (fold K of an outer N-fold)."""
    from gp.search.run import MAX_FOLDS, N_FOLDS

    k, _, n = text.partition("/")
    folds = _int_at_least(2, "a number of folds")(n) if n else N_FOLDS
    if folds > MAX_FOLDS:
        raise argparse.ArgumentTypeError(f"at most {MAX_FOLDS} folds, got {folds}")
    value = _positive_int(k)
    if value > folds:
        raise argparse.ArgumentTypeError(f"folds are numbered 1 to {folds}, got {value}")
    return value, folds


_DURATION_UNITS = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "d": 86400}
_MEMORY_UNITS = {"": 2 ** 20, "b": 1, "k": 2 ** 10, "kb": 2 ** 10, "m": 2 ** 20, "mb": 2 ** 20, "g": 2 ** 30,
                 "gb": 2 ** 30, "kib": 2 ** 10, "mib": 2 ** 20, "gib": 2 ** 30}


def _duration(text: str) -> float:
    """``90``, ``90s``, ``10m``, ``1.5h``, ``1h30m`` → seconds (> 0)."""
    import re

    t = text.strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([a-z]*)", t)
    if not parts or re.sub(r"(\d+(?:\.\d+)?)\s*([a-z]*)", "", t).strip():
        raise argparse.ArgumentTypeError(f"expected a duration such as 90s, 10m, 1h or 1h30m, got {text!r}")
    total = 0.0
    for number, unit in parts:
        if unit not in _DURATION_UNITS and unit != "":
            raise argparse.ArgumentTypeError(f"unknown time unit {unit!r} in {text!r} (use s, m or h)")
        total += float(number) * _DURATION_UNITS.get(unit, 1)
    if total <= 0:
        raise argparse.ArgumentTypeError(f"a duration must be positive, got {text!r}")
    return total


def _memory(text: str) -> int:
    """``2GB``, ``512MB``, ``2048`` (MB) → bytes (the range is RunConfig's and the machine's: _run_config)."""
    import math
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*", text)
    if not m or m.group(2).lower() not in _MEMORY_UNITS:
        raise argparse.ArgumentTypeError(f"expected a memory size such as 2GB or 512MB, got {text!r}")
    value = float(m.group(1)) * _MEMORY_UNITS[m.group(2).lower()]
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a memory size such as 2GB or 512MB, got {text!r}")
    return int(value)


def _path(text: str) -> str:
    """A file or directory argument: an empty one would silently mean the current or a default folder."""
    if not text or "\0" in text:
        raise argparse.ArgumentTypeError(f"expected a file or directory name, got {text!r}")
    return text


def _alpha(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"a significance level is a number, got {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"a significance level lies between 0 and 1, got {text}")
    return value


def _ensemble(text: str) -> str:
    from gp.search.ensemble import parse_ensemble

    try:
        parse_ensemble(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text.strip()


def _scheduler(text: str) -> str:
    from evaluation.engine import check_scheduler_address

    try:
        return check_scheduler_address(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _add_dataset_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("dataset (for bounds such as floor(L/2); default: the embedded synthetic dataset)")
    g.add_argument("--data", metavar="FILE", help="ARFF dataset (single-label, MULAN with .xml, or MEKA with -C q) or "
                                                   "CSV (with --target)")
    g.add_argument("--target", metavar="NAME[,NAME…]", help="the class attribute, or the label attributes, of --data")
    g.add_argument("--labels", type=_positive_int, metavar="L", help="number of labels (single-label: classes)")
    g.add_argument("--features", type=_positive_int, metavar="M", help="number of features")
    g.add_argument("--instances", type=_positive_int, metavar="N", default=None, help="number of instances")


def _dataset_meta(args, grammar=None):
    """(meta, where the meta comes from, the loaded Dataset or None). Without data, the embedded default
    of the grammar's task (a grammar the mapper cannot read gets the multi-label default)."""
    from evaluation import default_data
    from evaluation.data import load_dataset
    from gp.binding import DatasetMeta
    from gp.errors import GrammarError

    if args.data and (args.labels or args.features):
        raise UsageError("give either --data or --labels/--features, not both")
    if args.target and not args.data:
        raise UsageError("--target names attributes of --data")
    if args.data:
        dataset = load_dataset(args.data, unlabelled=True, target=args.target)
        return dataset.meta, args.data, dataset
    if args.labels or args.features:
        if not (args.labels and args.features):
            raise UsageError("--labels and --features go together")
        return DatasetMeta(args.labels, args.features, args.instances or 0), "command line", None
    task = "multilabel"
    if grammar is not None:
        from gp.search.run import grammar_task

        try:
            task = grammar_task(grammar)
        except GrammarError:
            pass
    return default_data.meta(task), default_data.name(task), None


def _load_plugins(specs) -> tuple[str, ...]:
    """Import the user's algorithm modules (``--plugin``; spaces/plugins.py) before any grammar is checked."""
    from spaces.plugins import load_plugins

    return load_plugins(specs or ())


def _run_plugins(run: Path) -> None:
    """Import the plug-ins a run directory's config.json names: its model may hold their estimators."""
    import json

    try:
        plugins = json.loads((run / "config.json").read_text(encoding="utf-8")).get("config", {}).get("plugins")
    except (OSError, ValueError, AttributeError):
        return  # the command's own reading of config.json says what is wrong with it
    if isinstance(plugins, list) and all(isinstance(p, str) for p in plugins):
        _load_plugins(plugins)


def _add_plugin_arg(p) -> None:
    p.add_argument("--plugin", action="append", type=_path, metavar="MODULE|FILE.py",
                   help="import a module that registers algorithms of your own (spaces/README.md, \"Plug-in "
                        "algorithms\"); repeatable; recorded with the run, imported in every worker")


def _load(path: str):
    from gp.bnf_parser import load_grammar

    return load_grammar(path)


def _print_warnings(grammar, more=()) -> None:
    for w in [*grammar.warnings, *more]:
        print(w.render(), file=sys.stderr)


def _fmt_count(value) -> str:
    from gp.analysis import COUNT_CAP

    if value == float("inf"):
        return "infinite (recursive grammar)"
    if value >= COUNT_CAP:  # counts saturate there (gp/analysis.py)
        return f"more than {COUNT_CAP:.0e}"
    if isinstance(value, int) and value < 10**7:
        return f"{value:,}"
    return f"{float(value):.4g}"


def cmd_check(args) -> int:
    from spaces.grammar_check import registry_check

    t0 = time.perf_counter()
    _load_plugins(args.plugin)
    grammar = _load(args.grammar)
    mapper_warnings, produced = registry_check(grammar)  # what only the search would find, tree by tree
    meta, meta_name, dataset = _dataset_meta(args, grammar)
    analysis = grammar.analysis
    grammar.bind(meta)
    summary = analysis.summary(meta)
    elapsed = time.perf_counter() - t0
    _print_warnings(grammar, mapper_warnings)
    if dataset is not None:  # what the search would refuse or warn about (evaluation/learnable.py)
        from evaluation.learnable import check_learnable
        from gp.search.run import RunData, check_task

        check_task(grammar, RunData(dataset, description={"name": args.data}), produced)
        for warning in check_learnable(dataset.labelled()):
            print(f"warning: {warning}", file=sys.stderr)
    print(f"{grammar.path}: OK")
    for key, value in summary.items():
        if key in ("algorithm combinations",) or key.startswith("configurations"):
            value = _fmt_count(value)
        elif isinstance(value, list):
            value = ", ".join(value) if value else "none"
        elif isinstance(value, dict):
            value = ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
        print(f"  {key:38s} {value}")
    print(f"  {'dataset for bounds':38s} {meta_name} ({meta})")
    if args.rules:
        print("  configurations per rule:")
        for rule in grammar:
            if rule.name in analysis.reachable and not rule.synthetic:
                print(f"    <{rule.name}>  {_fmt_count(analysis.configurations(meta, rule.name))}")
        from gp.selection import describe_selection

        print("  P(outermost algorithm) at each level (the start rule, and wherever an algorithm holds another):")
        for level, text in describe_selection(grammar):
            print(f"    {level:36s} {text}")
    print(f"  {'check time':38s} {elapsed * 1000:.0f} ms")
    return EXIT_OK


def cmd_sample(args) -> int:
    import numpy as np

    from gp.generate import TreeGenerator

    most = 10_000  # about a millisecond a tree for the Large space; -n 10000000 would run for hours
    if args.n > most:
        raise UsageError(f"-n is at most {most:,} trees, got {args.n:,}")
    grammar = _load(args.grammar)
    meta, meta_name, _ = _dataset_meta(args, grammar)
    _print_warnings(grammar)
    generator = TreeGenerator(grammar.bind(meta))
    rng = np.random.default_rng(args.seed)
    min_depth = grammar.analysis.min_depth[grammar.start]
    if args.max_depth < min_depth:
        raise UsageError(f"--max-depth {args.max_depth} is below the grammar's minimum depth {min_depth}")
    if args.method == "rhh":
        trees = generator.ramped_half_and_half(args.n, rng, max_depth=args.max_depth)
    else:
        make = generator.grow if args.method == "grow" else generator.full
        trees = [make(rng, args.max_depth) for _ in range(args.n)]
    if not args.quiet:
        print(f"# {args.n} trees from {grammar.path} ({args.method}, seed {args.seed}, "
              f"dataset {meta_name}: {meta})")
    for i, tree in enumerate(trees, start=1):
        if args.phenotypes:
            print(tree.phenotype)
            continue
        print(f"\n[{i}] {tree.phenotype}")
        print(f"    depth {tree.depth}, {tree.size} nodes")
        print("\n".join("    " + line for line in tree.render().splitlines()))
    return EXIT_OK


def cmd_species(args) -> int:
    from gp.species import write_species

    grammar = _load(args.grammar)
    _print_warnings(grammar)
    out = Path(args.out) if args.out else Path(args.grammar).parent / "species"
    try:
        paths = write_species(grammar, out)
    except OSError as exc:
        raise UsageError(f"cannot write species grammars to {out}: {exc.strerror or exc}") from None
    for p in paths:
        print(p)
    return EXIT_OK


# -- evolve / inspect / predict -------------------------------------------------------------

_EVOLVE_SETTINGS = ("grammar", "data", "test", "fold", "target", "method", "budget", "eval_timeout", "memory",
                    "seed", "fitness", "cv", "out", "population", "fidelity", "generations", "mode", "screening",
                    "adaptive_timeout", "thesis", "ensemble", "trace_test", "plugin", "species")
#: evolve option -> RunConfig field, for the options passed on as given (RunConfig holds the defaults)
_CONFIG_FIELDS = {"method": "method", "budget": "budget_seconds", "eval_timeout": "eval_timeout",
                  "memory": "memory_bytes", "workers": "workers", "scheduler": "scheduler", "seed": "seed",
                  "fitness": "fitness", "cv": "cv", "generations": "max_generations", "fidelity": "fidelity",
                  "mode": "mode", "ensemble": "ensemble", "trace_test": "trace_test"}


def _run_config(args):
    from gp.search import RunConfig
    from gp.search.config import THESIS_SETTINGS

    settings = dict(THESIS_SETTINGS) if args.thesis else {}  # explicit options below win over --thesis
    settings.update({field: getattr(args, option) for option, field in _CONFIG_FIELDS.items()
                     if getattr(args, option) is not None})
    if args.screening is not None:
        settings["screening"] = args.screening == "on"
    if args.adaptive_timeout is not None:
        settings["adaptive_timeout"] = args.adaptive_timeout == "on"
    if args.species:
        if settings.get("method") != "spggp":
            raise UsageError("--species goes with --method spggp")
        settings["species"] = tuple(s for given in args.species for s in given)
    if args.population:
        n = args.population
        settings.update(population=n, batch_size=n)
        if settings.get("method") == "spggp":
            k = len(settings.get("species", RunConfig.species))
            if n % k:
                raise UsageError(f"--population for spggp must be a multiple of the {k} species (it is split "
                                 f"evenly between them), got {n}")
            settings["species_size"] = n // k
    settings["method_params"] = _method_params(args, settings.get("method", "ggp"))
    if args.plugin:  # imported now, so that a broken one is said before anything else happens
        settings["plugins"] = _load_plugins(args.plugin)
    try:
        config = RunConfig(**settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _check_memory(args.memory, config.scheduler)
    return config


def _method_params(args, method: str) -> dict:
    """The chosen method's declared parameters given on the command line (gp.search.parameters); an
    option that belongs only to other methods is a usage error."""
    from gp.search.method import METHODS, known_methods

    known_methods()
    declared = {p.name for p in METHODS[method].parameters}
    for other in _declared_parameters():
        if getattr(args, other.name, None) is not None and other.name not in declared and \
                other.option not in _BUILT_IN_OPTIONS:
            raise UsageError(f"{other.option} is a parameter of {', '.join(_owners(other.name))}, not of {method}")
    return {name: getattr(args, name) for name in declared if getattr(args, name, None) is not None}


def _declared_parameters():
    """Every registered method's parameters, one per name (the first declaration's type and help)."""
    from gp.search.method import METHODS, known_methods

    known_methods()
    seen = {}
    for cls in METHODS.values():
        for p in cls.parameters:
            seen.setdefault(p.name, p)
    return list(seen.values())


def _owners(name: str) -> list[str]:
    from gp.search.method import METHODS

    return [m for m, cls in METHODS.items() if any(p.name == name for p in cls.parameters)]


def _parameter_type(p):
    def parse(text: str):
        try:
            return p.parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
    return parse


#: options of `evolve` that exist whatever the method; a method parameter of the same name receives their value
_BUILT_IN_OPTIONS: set[str] = set()


def _check_memory(memory: int | None, scheduler: str | None) -> None:
    """A --memory above this machine's memory limits nothing (the candidates run here unless a cluster does)."""
    from evaluation.isolation import machine_memory
    from gp.search.config import format_bytes

    if memory is not None and scheduler is None and memory > machine_memory():
        raise UsageError(f"--memory {format_bytes(memory)} is more than this machine's "
                         f"{format_bytes(machine_memory())} of memory; give at most {machine_memory() // 2**30}GB")


def cmd_evolve(args) -> int:
    from gp.search import RunConfig, load_run_data, resume, start
    from gp.search.progress import RichProgress

    observers = [] if args.quiet else [RichProgress()]
    if args.resume:
        given = [f"--{k.replace('_', '-')}" for k in _EVOLVE_SETTINGS if getattr(args, k) is not None]
        given += [p.option for p in _declared_parameters()
                  if p.option not in _BUILT_IN_OPTIONS and getattr(args, p.name, None) is not None]
        if given:
            raise UsageError(f"--resume continues a run with its own settings; {', '.join(given)} cannot be "
                             "changed (only --workers and --scheduler can)")
        try:  # the options' own rules, before the run directory is touched
            RunConfig(workers=args.workers, scheduler=args.scheduler)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        out = args.run_dir = Path(args.resume)
        outcome = resume(out, observers, workers=args.workers, scheduler=args.scheduler)
    else:
        from gp.search.run import N_FOLDS, grammar_task

        config = _run_config(args)
        grammar = _load(args.grammar or DEFAULT_GRAMMAR)
        _print_warnings(grammar)
        fold, folds = args.fold or (None, N_FOLDS)
        data = load_run_data(args.data, args.test, fold, args.target, grammar_task(grammar), folds)
        if config.fitness is not None:
            try:
                data.train.task.check_fitness(config.fitness)
            except ValueError as exc:
                raise UsageError(f"--fitness: {exc}") from None
        from gp.search.rundir import default_run_name

        out = args.run_dir = Path(args.out) if args.out else Path("runs") / default_run_name(config.method)
        outcome = start(config, grammar, data, out, observers, argv=sys.argv,
                        warn=lambda line: print(line, file=sys.stderr))
    return _report_outcome(outcome, out)


def _report_outcome(outcome, out: Path) -> int:
    final = outcome.final
    print(f"\nrun directory: {out}")
    if outcome.winner is None:
        print(f"no model: {final['status']}"
              + (f" ({final['refit_failure']})" if final.get("refit_failure") else ""), file=sys.stderr)
        print(f"see the failure reasons with: python cli.py inspect {out}", file=sys.stderr)
        return EXIT_INPUT
    w = final["winner"]
    c = final["counts"]
    print(f"best:         {w['phenotype']}")
    print(f"validation:   {final.get('fitness') or 'fitness'} {w['valid_fitness']:.4f} (re-evaluated on a fresh "
          "split)")
    if final.get("test"):
        from evaluation.task import summary_line

        m = final["test"]["measures"]
        fitness = final.get("fitness") or "fitness"
        print(f"test:         {fitness} {m.get(fitness, float('nan')):.4f}  "
              f"{summary_line(final.get('task', 'multilabel'), m)}"
              f"  ({final['test']['n_instances']} instances, {final['test']['source']})")
    print(f"evaluations:  {c['evaluations']} ({c['failed']} failed, {c['cached']} cache hits) in "
          f"{c['generations']} generations, {final['time']:.0f} s")
    for warning in final.get("warnings", []):
        print(f"warning: {warning}", file=sys.stderr)
    print(f"model:        {out / 'best' / 'model.joblib'} (code: {out / 'best' / 'model.py'})")
    print(f"inspect:      python cli.py inspect {out}")
    return EXIT_OK


def cmd_inspect(args) -> int:
    from rich.console import Console

    from gp.search.report import render_inspect

    _run_plugins(Path(args.run))
    render_inspect(args.run, Console())
    return EXIT_OK


def cmd_predict(args) -> int:
    import numpy as np

    from evaluation.data import load_dataset, recode_classes
    from evaluation.task import MultiLabel, SingleLabel
    from gp.errors import DataError
    from gp.search.rundir import RunDirectory
    from spaces.model import ModelFileError, load_model

    run = Path(args.run)
    model_path = run / "best" / "model.joblib"
    if not (run / "config.json").is_file():
        raise DataError(f"{run} is not a run directory (no config.json)")
    if not model_path.exists():
        raise DataError(f"{run} has no fitted model yet ({model_path} is missing): the run is unfinished; "
                        f"continue it with `python cli.py evolve --resume {run}`")
    run_dir = RunDirectory(run)
    trained = run_dir.config().get("data")
    if not isinstance(trained, dict) or not all(type(trained.get(k)) is int for k in ("n_features", "n_labels")):
        raise run_dir.damaged("config.json", "the training data's shape is missing",
                              "new data cannot be checked against the model")
    single = trained.get("task") == "singlelabel"
    classes_ok = isinstance(trained.get("classes"), list) and all(isinstance(c, str) for c in trained["classes"])
    if single and not classes_ok:
        raise run_dir.damaged("config.json", "the training data's classes are missing", "predictions cannot be named")
    _run_plugins(run)  # the model may hold estimators of the run's plug-ins
    try:
        model = load_model(model_path)
    except ModelFileError as exc:
        raise run_dir.damaged("best/model.joblib", exc.reason, "the model cannot be used (best/model.py has its "
                                                                "code, to fit it again)") from None
    target = trained.get("target") if isinstance(trained.get("target"), str) else None
    data = load_dataset(args.data, unlabelled=True, target=target)
    if single != (data.Y.ndim == 1):
        raise DataError(f"{args.data}: {data.task.name} data, but the model was trained on {trained.get('task')} "
                        "data")
    if data.n_features != trained["n_features"] or data.n_labels != trained["n_labels"]:
        raise DataError(f"{args.data}: {data.n_features} features and {data.n_labels} target column(s), but the model "
                        f"was trained on {trained['n_features']} features and {trained['n_labels']}")
    if single:
        task, Y = SingleLabel(tuple(trained["classes"])), recode_classes(data, trained["classes"], str(args.data))
    else:
        task, Y = MultiLabel(data.label_names), data.Y
    predictions, scores = task.outputs(model, data.X)
    out = Path(args.out) if args.out else run / f"predictions-{Path(args.data).name.split('.')[0]}.csv"
    header, table, fmt = task.prediction_table(predictions, scores, args.scores, data.label_names)
    try:
        np.savetxt(out, table, delimiter=",", header=",".join(_csv_cell(h) for h in header), comments="", fmt=fmt)
    except OSError as exc:
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None
    print(f"{len(predictions)} predictions written to {out}")
    known = task.labelled(Y)
    if known.any():
        measures = task.measures(Y[known], predictions[known], scores[known])
        print(f"measures against the file's {'classes' if single else 'labels'} ({int(known.sum())} of "
              f"{len(known)} rows have them): " + task.summary(measures))
    else:
        print(f"the file's {'classes are' if single else 'labels are'} unknown ('?'): no measures")
    return EXIT_OK


def cmd_bench(args) -> int:
    from evaluation.experiments import Grid, load_experiment, prepare
    from evaluation.experiments.grid import RUNS, default_out, load_directory, state_of
    from evaluation.experiments.live import GridProgress

    source = Path(args.experiment)
    if source.is_dir():  # an experiment directory: resume the grid it holds
        experiment, out = load_directory(source), source
        if args.out and Path(args.out).resolve() != source.resolve():
            raise UsageError("--out goes with an experiment file; a directory is resumed where it is")
    else:
        experiment = load_experiment(source)
        out = Path(args.out) if args.out else default_out(experiment)
    if args.dry_run:
        for run in experiment.runs:
            print(f"{run.id}: python cli.py evolve {' '.join(run.args)}")
        print(f"{len(experiment.runs)} runs of {experiment.budget}, {experiment.parallel} at a time, into {out}")
        return EXIT_OK
    out = args.experiment_dir_made = prepare(experiment, out)
    progress = GridProgress(experiment.budget_seconds, experiment.parallel, live=False if args.quiet else None)
    Grid(experiment, out, args.scheduler, progress).run()
    left = [r.id for r in experiment.runs if state_of(out / RUNS / r.directory) != "done"]
    print(f"experiment directory: {out}")
    if left:
        print(f"{len(left)} run(s) did not finish (see {out / 'logs'}); run the same command again to retry them",
              file=sys.stderr)
        return EXIT_INPUT
    print(f"report:               python cli.py report {out}")
    return EXIT_OK


def cmd_report(args) -> int:
    from evaluation.experiments import make_report

    path = make_report(args.experiment_dir, args.out, tuple(args.measure or ()), args.alpha, args.blocks)
    print(path.read_text(encoding="utf-8"))
    print(f"report: {path} (LaTeX: {path.with_suffix('.tex')})")
    return EXIT_OK


def _csv_cell(text: str) -> str:
    return f'"{text}"' if any(c in text for c in ',"\n') else text


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cli.py", description="Grammar-guided AutoML.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("evolve", help="search the grammar's space for the best model of a dataset",
                       description="Search a grammar's space of classifiers (multi-label methods, e.g. "
                                   "grammars/large.bnf, or single-label classifiers, e.g. grammars/ensembles.bnf) "
                                   "for a dataset of the same task. Without --data the embedded synthetic dataset "
                                   "of the grammar's task is used; without --grammar, grammars/large.bnf.")
    from evaluation.metrics import fitness_names
    from gp.search.method import known_methods

    p.add_argument("--grammar", metavar="FILE", help=f"search space (default {DEFAULT_GRAMMAR.relative_to(ROOT)})")
    p.add_argument("--data", metavar="FILE", help="training data: ARFF (single-label: the last attribute is the "
                                                   "class; multi-label: MULAN with .xml, MEKA with -C q), CSV (with "
                                                   "--target) or openml:NAME (default: the embedded synthetic dataset)")
    held_out = p.add_mutually_exclusive_group()
    held_out.add_argument("--test", metavar="FILE", help="test set, measured once with the final model")
    held_out.add_argument("--fold", type=_fold, metavar="K[/N]",
                          help="hold out fold K of a stratified 5-fold split of --data as the test set (K/N: "
                               "fold K of N, an outer N-fold; iterative stratification for multi-label data)")
    p.add_argument("--method", choices=known_methods(), help="search method (default ggp)")
    p.add_argument("--budget", type=_duration, metavar="TIME", help="whole-run time budget, e.g. 90s, 10m, 1h "
                                                                    "(default 10m)")
    p.add_argument("--eval-timeout", type=_duration, metavar="TIME",
                   help="hard cap on a candidate's time (default: a tenth of the budget); below it the limit "
                        "adapts to how long successful candidates take (see --adaptive-timeout)")
    p.add_argument("--adaptive-timeout", choices=["on", "off"],
                   help="stop a candidate that runs far longer than the successful ones did (default on)")
    p.add_argument("--mode", choices=["async", "generational"],
                   help="async: a free worker at once gets the next candidate (default where the method has it: "
                        "ggp, spggp, random); generational: the thesis's generations (beam search)")
    p.add_argument("--screening", choices=["on", "off"],
                   help="fit new candidates on a stratified third of the learning rows first and promote the "
                        "best third to all of them (successive halving; default on)")
    p.add_argument("--thesis", action="store_true", default=None,
                   help="the Auto-MEKA thesis's exact settings: generational, a fixed 180 s limit per candidate, "
                        "no screening (options given with it win)")
    p.add_argument("--memory", type=_memory, metavar="SIZE",
                   help="memory a candidate may add to its worker's own (default 2GB; at least 64MB, at most this "
                        "machine's memory)")
    p.add_argument("--workers", type=_positive_int, metavar="N",
                   help="candidates evaluated at a time (default: every core)")
    p.add_argument("--scheduler", type=_scheduler, metavar="ADDR",
                   help="evaluate on a Dask cluster (tcp://HOST:PORT) instead of local processes")
    p.add_argument("--seed", type=_seed, help="random seed (default 0)")
    p.add_argument("--target", metavar="NAME[,NAME…]",
                   help="the class attribute (single-label) or the label attributes (multi-label) of --data; "
                        "default: a MULAN .xml or MEKA -C for multi-label ARFF, else the last attribute as the "
                        "class; CSV files need it")
    p.add_argument("--fitness", choices=fitness_names(), metavar="NAME",
                   help="what the search maximises (default: multi-label fitness, Auto-MEKA's Eq. 5.1; "
                        "single-label accuracy = 1 - error rate); multi-label: "
                        + ", ".join(fitness_names("multilabel")) + "; single-label: "
                        + ", ".join(fitness_names("singlelabel")))
    p.add_argument("--cv", type=_int_at_least(0, "a number of folds"), metavar="K",
                   help="evaluate each candidate by K-fold internal cross-validation of the training data "
                        "(0: the 80/20 learning/validation hold-out; default 10 for single-label data, as "
                        "PBIL-Auto-Ens, and 0 for multi-label data, as Auto-MEKA)")
    p.add_argument("--population", type=_positive_int, metavar="N",
                   help="population (GGP), number of species x species size (spGGP: 8 x 10 unless --species) or "
                        "batch size (random, beam); default 80")
    p.add_argument("--species", action="append", type=_species, metavar="S[,S…]",
                   help="spGGP's species (default 1,2,…,8): a number 1-8 is a species generated from the grammar's "
                        "hyper-parameter annotations (gp/species.py), anything else a species grammar file of your "
                        "own, labelled in the records by its name without .bnf (gp/search/README.md, 'Writing a "
                        "species'); comma-separated or repeated, e.g. --species 1,8,grammars/species/large-trees.bnf; "
                        "--population is split evenly between them")
    p.add_argument("--fidelity", choices=["NAS-NIS", "PAS-PIS", "EAS-PIS", "NAS-PIS", "PAS-NIS", "EAS-NIS"],
                   help="multi-fidelity schedule (thesis §5.4; default NAS-NIS: none)")
    p.add_argument("--generations", type=_positive_int, metavar="N", help="stop after N generations at most")
    p.add_argument("--ensemble", type=_ensemble, metavar="caruana[:SIZE]",
                   help="return an ensemble of the evaluated candidates instead of the single best: Caruana's "
                        "greedy selection with replacement (SIZE picks, default 25) on the validation scores of "
                        "the final re-evaluation, members refit on all the training data")
    p.add_argument("--trace-test", action="store_true", default=None,
                   help="also score every evaluated candidate on the test set (--test or --fold), recorded as "
                        "test_fitness for anytime test curves and never shown to the search")
    _add_plugin_arg(p)
    p.add_argument("--out", type=_path, metavar="DIR", help="run directory (default runs/<date>-<time>-<method>)")
    p.add_argument("--resume", type=_path, metavar="DIR", help="continue an interrupted run from its directory")
    p.add_argument("--quiet", action="store_true", help="no progress display")
    _BUILT_IN_OPTIONS.update(p._option_string_actions)
    group = p.add_argument_group("method parameters (declared by each method; gp/search/README.md)")
    for param in _declared_parameters():
        if param.option not in _BUILT_IN_OPTIONS:
            flag = {"nargs": "?", "const": True} if param.type is bool else {}  # --reshuffle alone means on
            group.add_argument(param.option, dest=param.name, type=_parameter_type(param), metavar="VALUE",
                               help=f"{param.help} (default {param.default}; {', '.join(_owners(param.name))})",
                               **flag)
        else:  # an option every method has, passed on to the methods that declare it: say so in its help
            action = p._option_string_actions[param.option]
            action.help = f"{action.help}; {param.help} (default {param.default})"
    p.set_defaults(func=cmd_evolve)

    p = sub.add_parser("inspect", help="summarise a run directory")
    p.add_argument("run", type=_path, metavar="DIR")
    p.set_defaults(func=cmd_inspect)

    p = sub.add_parser("predict", help="predict the labels of a dataset with a run's final model")
    p.add_argument("run", type=_path, metavar="DIR")
    p.add_argument("--data", required=True, metavar="FILE", help="data with the training data's features")
    p.add_argument("--out", type=_path, metavar="FILE", help="CSV to write (default DIR/predictions-<data>.csv)")
    p.add_argument("--scores", action="store_true", help="also write each label's score")
    p.set_defaults(func=cmd_predict)

    p = sub.add_parser("check", help="validate a grammar and print its analysis")
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("--rules", action="store_true",
                   help="also print the configuration count of every rule and the probability of each algorithm")
    _add_dataset_args(p)
    _add_plugin_arg(p)
    p.set_defaults(func=cmd_check)

    p = sub.add_parser("sample", help="generate random derivation trees from a grammar")
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("-n", type=_positive_int, default=5, help="number of trees (default 5)")
    p.add_argument("--seed", type=_seed, default=0, help="random seed (default 0)")
    p.add_argument("--method", choices=["grow", "full", "rhh"], default="grow",
                   help="grow, full, or ramped half-and-half (default grow)")
    p.add_argument("--max-depth", type=_positive_int, default=100, help="maximum tree depth (default 100)")
    p.add_argument("--phenotypes", action="store_true", help="print only the phenotype strings")
    p.add_argument("--quiet", action="store_true", help="no header line")
    _add_dataset_args(p)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("bench", help="run an experiment grid (methods x grammars x datasets x seeds) from a TOML file",
                       description="Run every run an experiment file names (each an ordinary evolve run directory "
                                   "under DIR/runs), PARALLEL at a time, here or on a Dask cluster. Run it again (with "
                                   "the file or the directory) to resume: finished runs are kept, interrupted ones "
                                   "resume. Format: benchmarks/README.md.")
    p.add_argument("experiment", type=_path, metavar="EXPERIMENT", help="experiment file (.toml) or directory")
    p.add_argument("--out", type=_path, metavar="DIR", help="experiment directory (default runs/<name>)")
    p.add_argument("--scheduler", type=_scheduler, metavar="ADDR",
                   help="run whole runs on a Dask cluster (tcp://HOST:PORT); its workers need the project and the "
                        "data at the same paths")
    p.add_argument("--dry-run", action="store_true", help="list the runs and their evolve commands, run nothing")
    p.add_argument("--quiet", action="store_true", help="one line a run instead of the live table")
    p.set_defaults(func=cmd_bench)

    p = sub.add_parser("report", help="tables, rank tests, critical-difference diagrams and anytime curves of an "
                                      "experiment directory")
    p.add_argument("experiment_dir", type=_path, metavar="DIR")
    p.add_argument("--out", type=_path, metavar="DIR", help="where report.md, report.tex and figures go "
                                                            "(default DIR/report)")
    p.add_argument("--measure", action="append", metavar="NAME",
                   help="a test measure to report (repeatable; default: fitness, exact_match, hamming_loss, f1_macro, "
                        "ranking_loss for multi-label data, error_rate and macro_f_measure for single-label)")
    p.add_argument("--alpha", type=_alpha, default=0.05, help="significance level (default 0.05)")
    p.add_argument("--blocks", choices=["dataset", "fold"], default="dataset",
                   help="rank per dataset (mean over folds and seeds; the thesis's way, default) or per run")
    p.set_defaults(func=cmd_report)

    p = sub.add_parser("species", help="write the 8 species grammars of an annotated grammar")
    p.add_argument("--grammar", required=True, metavar="FILE")
    p.add_argument("--out", metavar="DIR", help="output folder (default: species/ beside the grammar)")
    p.set_defaults(func=cmd_species)
    return parser


def main(argv: list[str] | None = None) -> int:
    seen: dict = {}  # what _main got to, for the messages below
    try:
        return _main(argv, seen)
    except KeyboardInterrupt:
        from evaluation.isolation import kill_running_children

        kill_running_children()
        run_dir = getattr(seen.get("args"), "run_dir", None)
        hint = f"; continue with: python cli.py evolve --resume {run_dir}" \
            if run_dir and (Path(run_dir) / "config.json").is_file() else ""
        experiment_dir = getattr(seen.get("args"), "experiment_dir_made", None)
        if experiment_dir:
            hint = f"; continue with: python cli.py bench {experiment_dir}"
        print(f"interrupted{hint}", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early: not an error
        import os

        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except Exception as exc:  # noqa: BLE001 - a bug in this program: one line and a log, not a traceback
        log = _crash_log(argv, getattr(seen.get("args"), "run_dir", None))
        where = f"the traceback is in {log}" if log else "the traceback could not be written to a file"
        what = (str(exc).splitlines() or [""])[0][:200]
        print(f"internal error (a bug in ggp-automl, not a problem with your input): {type(exc).__name__}: {what}\n"
              f"{where}; please report it with that file", file=sys.stderr)
        return EXIT_INPUT


def _crash_log(argv, run_dir) -> str | None:
    """Write the current exception's traceback to the run directory (if it is one), else the temp folder."""
    import datetime
    import os
    import tempfile
    import traceback

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    text = (f"ggp-automl internal error, {datetime.datetime.now().isoformat()}\n"
            f"command: {' '.join(sys.argv[:1] + list(sys.argv[1:] if argv is None else argv))}\n"
            f"python {sys.version.split()[0]}\n\n{traceback.format_exc()}")
    places = [Path(run_dir)] if run_dir and (Path(run_dir) / "config.json").is_file() else []
    for place in places + [Path(tempfile.gettempdir())]:
        path = place / f"ggp-automl-crash-{stamp}-{os.getpid()}.log"
        try:
            path.write_text(text, encoding="utf-8", errors="backslashreplace")
            return str(path.resolve())
        except OSError:
            continue
    return None


def _main(argv: list[str] | None, seen: dict) -> int:
    for stream in (sys.stdout, sys.stderr):  # paths with undecodable bytes print as they came
        try:
            stream.reconfigure(errors="surrogateescape")
        except (AttributeError, ValueError):
            pass
    try:
        args = seen["args"] = build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse's usage errors (2) and --help (0), as a return value
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    from evaluation.engine import EngineError
    from evaluation.experiments.spec import ExperimentError
    from gp.errors import DataError, GrammarError
    from gp.search.lock import DirectoryInUse
    from gp.search.report import ReportError
    from gp.search.run import RunError
    from gp.search.rundir import RunDirectoryError
    from spaces.plugins import PluginError

    try:
        return args.func(args)
    except (RunError, RunDirectoryError, DirectoryInUse, ReportError, EngineError, DataError,
            ExperimentError, PluginError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except GrammarError as exc:
        for d in exc.diagnostics:
            print(d.render(), file=sys.stderr)
        n = sum(1 for d in exc.diagnostics if d.severity == "error")  # not the "… more not shown" note
        print(f"{n} error{'s' if n != 1 else ''}", file=sys.stderr)
        return EXIT_INPUT
    except UsageError as exc:
        print(f"cli.py: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        raise
    except OSError as exc:  # the machine refused something (disk full, permissions) on a file it names
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())

"""An experiment file (TOML) read into the grid of runs it names, every run an ordinary ``evolve``.

Why a file: the comparisons the field reports (methods × grammars × datasets × folds × seeds,
one budget) are made many times, resumed after a crash and shown to others; a file says all of
it, and the same file on another machine makes the same grid. Why each run is an ``evolve``
command line: a run of an experiment is then exactly a run a user could have made by hand, its
directory works with ``inspect``/``predict``, and every option is checked by the code that
checks it for ``evolve`` — nothing here re-implements a setting.

The format (paths are relative to the experiment file; ``docs``: benchmarks/README.md)::

    [experiment]
    name = "thesis-small"       # the default experiment directory: runs/<name>
    budget = "1m"               # per run (evolve --budget)
    workers = 1                 # evaluation workers per run
    parallel = 2                # runs at a time (here, or on the Dask cluster)
    seeds = [1, 2]              # or "fold": seed = fold number (1 for data without folds)
    trace_test = true           # evolve --trace-test where a test set exists (anytime test curves)
    options = { screening = "off" }   # evolve options of every run

    [grammars]                  # name -> file; runs: every method in every grammar
    small = "../grammars/small.bnf"

    [methods.ggp]               # label -> evolve options (method parameters included)
    method = "ggp"
    population = 20
    [methods.default-rf]        # a method with a grammar of its own runs only in that one
    method = "random"
    grammar = "grammars/default-random-forest.bnf"
    generations = 1

    [datasets.Flags]            # fixed folds: {fold} in data and test
    data = "../../shared/datasets/mlc-folds/Flags/Flags-train{fold}.arff"
    test = "../../shared/datasets/mlc-folds/Flags/Flags-test{fold}.arff"
    folds = [1, 2, 3, 4, 5]
    [datasets.car]              # an outer stratified k-fold of one file (evolve --fold k/3)
    data = "../../shared/datasets/slc/car-evaluation.arff"
    outer_folds = 3
    [datasets.synthetic]        # the embedded dataset of the grammar's task
    data = "default"

A method's ``warm_start = "FILE"`` is a portfolio file relative to the experiment file; ``{dataset}`` in it
becomes each dataset's name (``"portfolios/without-{dataset}.portfolio.json"``: leave-one-dataset-out).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..gp.errors import InputError

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

#: options an experiment sets for every run itself; a method entry may not
RESERVED = {"data": "the datasets table", "test": "the datasets table", "fold": "the datasets table",
            "target": "the datasets table", "seed": "experiment.seeds", "workers": "experiment.workers",
            "budget": "experiment.budget", "out": "the experiment directory", "resume": "the grid",
            "scheduler": "bench --scheduler", "quiet": "the grid", "trace_test": "experiment.trace_test"}
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
EXPERIMENT_KEYS = {"name", "budget", "workers", "parallel", "seeds", "trace_test", "options", "description"}
DATASET_KEYS = {"data", "test", "target", "folds", "outer_folds"}


class ExperimentError(InputError, ValueError):
    """An experiment file that cannot be run (the message says where); the CLI exits 1."""


@dataclass(frozen=True)
class Run:
    """One run of the grid: where its directory goes and the ``evolve`` arguments that make it."""

    id: str                 # dataset/fN/sS/config: unique, also the directory name (with - for /)
    config: str             # the compared entity: the method label, @grammar when several grammars
    method: str
    grammar: str
    dataset: str
    fold: int | None
    seed: int
    args: tuple[str, ...]   # evolve arguments without --out, --workers, --quiet

    @property
    def directory(self) -> str:
        return self.id.replace("/", "-")


@dataclass(frozen=True)
class Experiment:
    name: str
    path: Path              # the experiment file
    text: str               # its content (a resumed experiment must be made from the same)
    budget: str
    workers: int
    parallel: int
    runs: tuple[Run, ...]
    description: str = ""
    #: the [report] table: measures, blocks, published numbers to print beside ours
    report: dict = field(default_factory=dict)

    @property
    def budget_seconds(self) -> float:
        from ..search.options import duration

        return duration(self.budget)


def load_experiment(path: str | Path) -> Experiment:
    """Read, check and expand an experiment file; :class:`ExperimentError` names what is wrong and where."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ExperimentError(f"{path}: cannot read the experiment file: {getattr(exc, 'strerror', None) or exc}") \
            from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"\(at line (\d+), column (\d+)\)", str(exc))
        where = f"{path}:{m.group(1)}:{m.group(2)}" if m else str(path)
        raise ExperimentError(f"{where}: not valid TOML: {re.sub(r' [(]at line.*', '', str(exc))}") from None
    return _Reader(path, text, doc).experiment()


class _Reader:
    """Checks one parsed file, naming ``file:line:col`` of the offending key where it can find it."""

    def __init__(self, path: Path, text: str, doc: dict):
        self.path, self.text, self.doc = path, text, doc
        self.base = path.resolve().parent

    def where(self, table: str, key: str | None = None) -> str:
        """``file:line:col`` of ``key`` in ``[table]`` (or of the table's header), else the file."""
        lines = self.text.splitlines()
        head = re.compile(r"^\s*\[\s*" + r"\s*\.\s*".join(re.escape(p) for p in table.split(".")) + r"\s*\]")
        start = next((i for i, line in enumerate(lines) if head.match(line)), None)
        if start is None:
            return str(self.path)
        if key is None:
            return f"{self.path}:{start + 1}:1"
        pattern = re.compile(r"^\s*(\"?)" + re.escape(key) + r"\1\s*=")
        for i in range(start + 1, len(lines)):
            if re.match(r"^\s*\[", lines[i]):
                break
            if pattern.match(lines[i]):
                return f"{self.path}:{i + 1}:{len(lines[i]) - len(lines[i].lstrip()) + 1}"
        return f"{self.path}:{start + 1}:1"

    def fail(self, table: str, key: str | None, message: str):
        raise ExperimentError(f"{self.where(table, key)}: {message}")

    def table(self, name: str, required: bool = True) -> dict:
        value = self.doc.get(name)
        if value is None:
            if required:
                raise ExperimentError(f"{self.path}: no [{name}] table; an experiment names its {name}")
            return {}
        if not isinstance(value, dict) or (required and not value):
            self.fail(name, None, f"[{name}] must be a table with at least one entry")
        return value

    def experiment(self) -> Experiment:
        unknown = set(self.doc) - {"experiment", "grammars", "methods", "datasets", "report"}
        if unknown:
            raise ExperimentError(f"{self.path}: unknown table(s) {', '.join(sorted(unknown))}; an experiment has "
                                  "[experiment], [grammars], [methods.*], [datasets.*] and [report]")
        exp = self.table("experiment")
        for key in set(exp) - EXPERIMENT_KEYS:
            self.fail("experiment", key, f"unknown setting {key!r}; known: {', '.join(sorted(EXPERIMENT_KEYS))}")
        name = self.name("experiment", "name", exp.get("name", self.path.stem))
        budget = self.budget(exp)
        workers, parallel = (self.count(exp, k, 1) for k in ("workers", "parallel"))
        trace = exp.get("trace_test", True)
        if not isinstance(trace, bool):
            self.fail("experiment", "trace_test", "trace_test is true or false")
        common = exp.get("options", {})
        if not isinstance(common, dict):
            self.fail("experiment", "options", "options is a table of evolve options, e.g. { screening = \"off\" }")
        grammars = {self.name("grammars", g, g): self.file("grammars", g, f)
                    for g, f in self.table("grammars", required=False).items()}
        datasets = {self.name("datasets", d, d): self.dataset(d, spec) for d, spec in self.table("datasets").items()}
        methods = {self.name("methods", m, m): spec for m, spec in self.table("methods").items()}
        runs = []
        for dname, dataset in datasets.items():
            for fold in dataset["folds"]:
                for seed in self.seeds(exp, fold):
                    for label, spec in methods.items():
                        for gname, gpath, config in self.placements(label, spec, grammars):
                            args = self.arguments(label, {**common, **spec}, gpath, dataset, fold, seed, budget,
                                                  trace)
                            run_id = f"{dname}/f{fold or 0}/s{seed}/{config}"
                            runs.append(Run(run_id, config, str(spec.get("method", "ggp")), gname, dname, fold,
                                            seed, tuple(args)))
        return Experiment(name, self.path.resolve(), self.text, budget, workers, parallel, tuple(runs),
                          str(exp.get("description", "")), self.report(set(methods)))

    # -- the parts --------------------------------------------------------------------------
    def report(self, labels: set[str]) -> dict:
        """``[report]``: ``measures`` (names), ``blocks`` ("dataset" | "fold") and ``published``: a
        ``source`` sentence and, per measure, ``{label = [value, average rank]}`` to print beside ours."""
        rep = self.table("report", required=False)
        for key in set(rep) - {"measures", "blocks", "published"}:
            self.fail("report", key, f"unknown report setting {key!r}; known: blocks, measures, published")
        measures = rep.get("measures", [])
        if not isinstance(measures, list) or not all(isinstance(m, str) for m in measures):
            self.fail("report", "measures", "measures is a list of measure names")
        if rep.get("blocks", "dataset") not in ("dataset", "fold"):
            self.fail("report", "blocks", 'blocks is "dataset" or "fold"')
        published = rep.get("published", {})
        if not isinstance(published, dict) or (published and not isinstance(published.get("source"), str)):
            self.fail("report.published", None, "[report.published] needs source = \"where the numbers come from\"")
        for measure, values in published.items():
            if measure == "source":
                continue
            ok = isinstance(values, dict) and all(
                k in labels and isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v)
                for k, v in values.items())
            if not ok:
                self.fail("report.published", measure, f"{measure} = {{ LABEL = [value, average rank], ... }} with "
                          f"the labels of [methods.*] ({', '.join(sorted(labels))})")
        return {"measures": measures, "blocks": rep.get("blocks", "dataset"), "published": published}

    def name(self, table: str, key: str, value) -> str:
        if not isinstance(value, str) or not NAME.match(value):
            self.fail(table, key if table == "experiment" else None,
                      f"{value!r} is not a usable name (letters, digits and _ . + -, at most 64, no spaces): "
                      "names become directory names")
        return value

    def budget(self, exp: dict) -> str:
        from ..search.options import duration as _duration

        value = exp.get("budget")
        if not isinstance(value, str):
            self.fail("experiment", "budget" if "budget" in exp else None,
                      'experiment.budget is the budget of each run, e.g. "1m"')
        try:
            _duration(value)
        except Exception as exc:  # argparse's ArgumentTypeError: the CLI's own message
            self.fail("experiment", "budget", f"budget: {exc}")
        return value

    def count(self, exp: dict, key: str, default: int) -> int:
        value = exp.get(key, default)
        if type(value) is not int or not 1 <= value <= 1024:
            self.fail("experiment", key, f"{key} is a whole number from 1 to 1024, got {value!r}")
        return value

    def seeds(self, exp: dict, fold: int | None) -> list[int]:
        value = exp.get("seeds", [0])
        if value == "fold":
            return [fold or 1]
        if not isinstance(value, list) or not value or any(type(s) is not int or s < 0 for s in value) \
                or len(set(value)) != len(value):
            self.fail("experiment", "seeds", 'seeds is a list of distinct whole numbers >= 0, or "fold"')
        return value

    def file(self, table: str, key: str, value, fold: int | None = None) -> str:
        if not isinstance(value, str) or not value:
            self.fail(table, key, f"{key} is a file name")
        path = Path(value.replace("{fold}", str(fold)) if fold is not None else value)
        path = (path if path.is_absolute() else self.base / path).resolve()
        if not path.is_file():
            self.fail(table, key, f"{path} does not exist" + (" (relative paths are relative to the experiment "
                                                              "file)" if not Path(value).is_absolute() else ""))
        return str(path)

    def dataset(self, name: str, spec) -> dict:
        table = f"datasets.{name}"
        if not isinstance(spec, dict):
            self.fail("datasets", None, f"datasets.{name} must be a table")
        for key in set(spec) - DATASET_KEYS:
            self.fail(table, key, f"unknown dataset setting {key!r}; known: {', '.join(sorted(DATASET_KEYS))}")
        data = spec.get("data")
        if data is None:
            self.fail(table, None, 'a dataset needs data = "FILE" (or "default", the embedded dataset)')
        folds, outer = spec.get("folds"), spec.get("outer_folds")
        if outer is not None and (type(outer) is not int or not 2 <= outer <= 100):
            self.fail(table, "outer_folds", f"outer_folds is a number of folds from 2 to 100, got {outer!r}")
        templated = isinstance(data, str) and "{fold}" in data
        if templated and outer is not None:
            self.fail(table, "outer_folds", "give fold files ({fold} in data) or outer_folds, not both")
        if folds is None:
            folds = list(range(1, outer + 1)) if outer else ([] if templated else [None])
        if templated and not folds:
            self.fail(table, "data", "{fold} in data needs folds = [1, 2, ...]")
        if folds != [None] and (not isinstance(folds, list) or not folds
                                or any(type(k) is not int or k < 1 or (outer and k > outer) for k in folds)):
            self.fail(table, "folds", "folds is a list of fold numbers from 1" + (f" to {outer}" if outer else ""))
        if not (templated or outer) and folds != [None]:
            self.fail(table, "folds", "folds needs fold files ({fold} in data) or outer_folds")
        test = spec.get("test")
        if test is not None and (outer or data == "default"):
            self.fail(table, "test", "a test file goes with a data file, not with outer_folds or the default data")
        if test is not None and templated != ("{fold}" in str(test)):
            self.fail(table, "test", "data and test both name {fold}, or neither does")
        target = spec.get("target")
        if target is not None and (not isinstance(target, str) or data == "default"):
            self.fail(table, "target", "target is the class or label attributes, \"A\" or \"A,B,C\", of a data file")
        files = {}
        for k in folds:
            files[k] = (None if data == "default" else self.file(table, "data", data, k if templated else None),
                        None if test is None else self.file(table, "test", test, k))
        return {"name": name, "files": files, "folds": folds, "outer": outer, "target": target}

    def placements(self, label: str, spec, grammars: dict) -> list[tuple[str, str, str]]:
        """``(grammar name, grammar file, config label)`` of each grammar a method runs in."""
        table = f"methods.{label}"
        if not isinstance(spec, dict):
            self.fail("methods", None, f"methods.{label} must be a table of evolve options")
        own = spec.get("grammar")
        if own is not None:
            if isinstance(own, str) and own in grammars:
                return [(own, grammars[own], label)]
            return [(Path(str(own)).stem, self.file(table, "grammar", own), label)]
        if not grammars:
            self.fail(table, None, "no [grammars] table and no grammar = \"FILE\" in this method")
        return [(g, f, label if len(grammars) == 1 else f"{label}@{g}") for g, f in grammars.items()]

    def arguments(self, label: str, options: dict, grammar: str, dataset: dict, fold, seed: int, budget: str,
                  trace: bool) -> list[str]:
        table = f"methods.{label}"
        args = ["--grammar", grammar]
        for key, value in options.items():
            if key == "grammar":
                continue
            option = key.replace("_", "-")
            if key.replace("-", "_") in RESERVED:
                self.fail(table, key, f"{key} is set by {RESERVED[key.replace('-', '_')]}, not by a method")
            if key.replace("-", "_") == "warm_start" and isinstance(value, str) and value not in ("portfolio", "none"):
                # a portfolio file, relative to this file; {dataset}: each dataset's own (leave-one-dataset-out)
                value = self.file(table, key, value.replace("{dataset}", dataset["name"]))
            if isinstance(value, bool):
                args += [f"--{option}"] if value else []
            elif isinstance(value, (int, float, str)):
                args += [f"--{option}", str(value)]
            else:
                self.fail(table, key, f"{key}: an option's value is a string, number or boolean")
        data, test = dataset["files"][fold]
        if data is not None:
            args += ["--data", data]
        if test is not None:
            args += ["--test", test]
        if dataset["outer"]:
            args += ["--fold", f"{fold}/{dataset['outer']}"]
        if dataset["target"]:
            args += ["--target", dataset["target"]]
        args += ["--seed", str(seed), "--budget", budget]
        if trace and (test is not None or dataset["outer"]):
            args += ["--trace-test"]
        self.check_options(table, args, options)
        return args

    def check_options(self, table: str, args: list[str], options: dict) -> None:
        """Parse the run's arguments the way ``evolve`` does: a misspelt option fails here, not in an hour."""
        import contextlib
        import io

        from ..search.options import UsageError, evolve_parser, run_config

        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                parsed = evolve_parser().parse_args([*args, "--out", "x"])
        except SystemExit:
            message = (err.getvalue().strip().splitlines() or ["invalid options"])[-1]
            self.fail(table, self.culprit(message, options), message.replace("cli.py evolve: error: ",
                                                                             "evolve options: "))
        try:
            run_config(parsed)  # the settings' own rules (e.g. spggp's population is a multiple of 8)
        except UsageError as exc:
            self.fail(table, self.culprit(str(exc), options), f"evolve options: {exc}")

    @staticmethod
    def culprit(message: str, options: dict) -> str | None:
        """The option key an evolve message names (``--sed``, ``argument --population``), to point at its line."""
        named = set(re.findall(r"--([a-z][a-z0-9-]*)", message))
        return next((key for key in options if key.replace("_", "-") in named), None)

"""Every budget, limit and parameter of a search run, in one frozen dataclass.

SMAC3-style: a run is fully described by one :class:`RunConfig` (written verbatim
to the run directory's ``config.json``), so a run can be repeated or resumed from
its directory alone. Defaults are the Auto-MEKA thesis's (methods notes §1.1). A method's
own parameters live in ``method_params``, declared by the method (:mod:`ggp_automl.search.parameters`);
``fitness`` and ``cv`` left at None take the data's task's defaults (:mod:`evaluation.task`)
when the run starts, and ``config.json`` records what they became.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field

from .methods.registry import BUILT_IN, known_methods, method_class, supports_async
from .parameters import check_params, resolve_params

#: the built-in methods; more join by plug-in or entry point (:mod:`.methods.registry`)
METHODS = tuple(BUILT_IN)
MODES = ("generational", "async")

#: ``--thesis``: the Auto-MEKA thesis's exact settings, for reproduction — generational
#: search, a fixed 180 s limit per candidate, no screening
THESIS_SETTINGS = {"mode": "generational", "eval_timeout": 180.0, "adaptive_timeout": False, "screening": False}

#: the smallest per-candidate memory limit. The limit counts what a candidate adds on top of its
#: worker's starting memory (:mod:`evaluation.isolation`); below this not even a small model fits
MIN_MEMORY_BYTES = 64 * 2 ** 20
#: the longest budget and time limit accepted: a month. Longer values are typing mistakes, and
#: unbounded ones (``1e400 s`` is infinite) overflow the clocks and timers they reach
MAX_SECONDS = 30 * 86400.0
#: the largest population or batch: the initial population is generated before the budget's clock
#: can stop anything (100,000 trees take 30 s), and the thesis uses 80
MAX_POPULATION = 10_000
#: the most evaluation processes at a time: a fixed sanity bound (not the machine's, so that a run
#: resumes anywhere); each is a forked process that may use --memory on top of its start
MAX_WORKERS = 256
#: seeds are handed to numpy and scikit-learn ``random_state``s, which take 32-bit values
MAX_SEED = 2 ** 32 - 1


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: 1 KB, 63.9 MB, 2 GB, 93,132,257 GB."""
    for unit, size in (("GB", 2 ** 30), ("MB", 2 ** 20), ("KB", 2 ** 10)):
        if n >= size:
            return f"{n / size:,.3g} {unit}" if n < 1000 * size else f"{n / size:,.0f} {unit}"
    return f"{n:.0f} bytes"


#: settings of the GGP family that were RunConfig fields before they became its declared parameters
#: (a config.json of that time is read with them moved into ``method_params``)
LEGACY_METHOD_FIELDS = ("tournament_size", "elitism", "crossover_rate", "mutation_rate", "resample_every",
                        "restart_patience", "restart_min_generations", "species", "species_size",
                        "inter_species_rate")

#: the JSON types of a field's annotation, for :meth:`RunConfig.from_dict` (bool is not an int here)
_JSON_TYPES = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,), "None": (type(None),),
               "tuple[int, ...]": (list, tuple), "tuple[str, ...]": (list, tuple),
               "tuple[int | str, ...]": (list, tuple), "dict": (dict,)}
#: the most internal cross-validation folds (--cv)
MAX_CV = 100


@dataclass(frozen=True)
class RunConfig:
    method: str = "ggp"
    #: whole-run wall-clock budget, seconds
    budget_seconds: float = 600.0
    #: the search stops at this fraction of the budget; the rest is for the final
    #: re-evaluation of the archive and the refit of the winner (authors' code: 0.85)
    search_fraction: float = 0.85
    #: the hard cap on a candidate's time, seconds; None: a tenth of the budget (the thesis: 180 s);
    #: the rules are in :mod:`ggp_automl.search.timekeeper`
    eval_timeout: float | None = None
    #: stop a candidate that runs far longer than the successful ones did (timekeeper)
    adaptive_timeout: bool = True
    #: per-candidate memory (thesis: 2 GB)
    memory_bytes: int = 2 * 1024 ** 3
    #: "generational" (the thesis) or "async" (steady state, no idle workers); None: async when the
    #: method has an asynchronous form, else generational
    mode: str | None = None
    #: screen new candidates on stratified subsamples of the learning rows first (ggp_automl.search.screening);
    #: on by default: more candidates per minute and a larger share of useful work at equal or better
    #: test fitness (benchmarks/results/search.md)
    screening: bool = True
    screening_eta: int = 3
    screening_rungs: int = 2
    screening_min_rows: int = 100
    #: evaluation processes at a time; None: every core
    workers: int | None = None
    #: Dask scheduler address (tcp://HOST:PORT); None: local worker processes
    scheduler: str | None = None
    seed: int = 0
    #: the maximised measure; None: the task's (multi-label: Eq. 5.1 "fitness", single-label: "accuracy")
    fitness: str | None = None
    #: a candidate's evaluation: K-fold internal cross-validation of the view's rows (K >= 2), or 0 for the
    #: 80/20 learning/validation hold-out; None: the task's default (single-label 10, the PBIL-Auto-Ens
    #: protocol; multi-label 0, the thesis's)
    cv: int | None = None
    #: the evaluations that make a generation: GGP's and the GA's population (thesis §5.3.1.3: 80), the
    #: batch of random and beam search (§6.1.3: 80), how often BO and TPE record a generation. The GGP
    #: family's own knobs (tournament, elitism, rates, restarts, resampling; spGGP's species) are the
    #: methods' declared parameters (``method_params``; search/methods/evolutionary.py)
    population: int = 80
    #: every derivation's depth limit, and the smallest depth of ramped half-and-half (all methods)
    max_depth: int = 100
    min_init_depth: int = 2
    #: random and beam search: candidates per iteration (thesis §6.1.3: 80); ``--population`` sets it
    batch_size: int = 80
    #: multi-fidelity scenario (thesis §5.4) and its number of periods
    fidelity: str = "NAS-NIS"
    fidelity_steps: int = 5
    #: how many archive members are re-evaluated on a fresh split at the end
    final_candidates: int = 10
    #: build the returned model as an ensemble of what the search evaluated: "caruana" or
    #: "caruana:SIZE" (post-hoc ensemble selection, ggp_automl.search.ensemble); None: the single best
    ensemble: str | None = None
    #: the bound on kept validation predictions (evaluation.predictions), bytes
    prediction_bytes: int = 256 * 2 ** 20
    #: also score every full-data search evaluation on the run's test set (``test_fitness`` in
    #: evaluations.jsonl, never shown to the search): what the anytime test curves of experiments
    #: (``cli.py bench``/``report``) are drawn from; a run without a test set ignores it
    trace_test: bool = False
    #: the user's algorithm modules (a module name or a ``.py`` file each, :mod:`spaces.plugins`): imported
    #: before the grammar is checked, and in every worker process and on Dask workers
    plugins: tuple[str, ...] = ()
    #: stop after this many generations (None: only the budget stops the run)
    max_generations: int | None = None
    #: candidates evaluated before anything else (:mod:`ggp_automl.search.portfolio`): "portfolio" (the one that
    #: ships beside the grammar, if any), a portfolio file, or "none"; the run records the file it used
    warm_start: str = "portfolio"
    #: the method's own parameters (declared by the method: ggp_automl.search.parameters); missing ones take
    #: the declared defaults
    method_params: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        if isinstance(self.method_params, dict):  # paths from Python (spGGP's species files) as JSON writes them
            object.__setattr__(self, "method_params", {k: _plain(v) for k, v in self.method_params.items()})
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))

    def problems(self) -> list[str]:
        p = []
        if self.method not in known_methods():
            p.append(f"method must be one of {', '.join(known_methods())}, got {self.method!r}")
        if not 0 < self.budget_seconds <= MAX_SECONDS:
            p.append(f"the budget must be positive and at most {MAX_SECONDS / 86400:g} days, "
                     f"got {self.budget_seconds:g} s")
        if not 0 < self.search_fraction <= 1:
            p.append(f"search_fraction must be in (0, 1], got {self.search_fraction}")
        if self.eval_timeout is not None and not 0 < self.eval_timeout <= MAX_SECONDS:
            p.append(f"the evaluation timeout must be positive and at most {MAX_SECONDS / 86400:g} days, "
                     f"got {self.eval_timeout:g} s")
        if not 0 <= self.seed <= MAX_SEED:
            p.append(f"the seed must be between 0 and {MAX_SEED}, got {self.seed}")
        if self.mode is not None and self.mode not in MODES:
            p.append(f"mode must be one of {', '.join(MODES)}, got {self.mode!r}")
        elif self.mode == "async" and self.method in known_methods():
            if not supports_async(self.method):
                p.append(f"{self.method} has no asynchronous mode; use mode generational")
        if self.screening_eta < 2:
            p.append(f"screening_eta must be at least 2, got {self.screening_eta}")
        if self.screening_rungs < 2:
            p.append(f"screening_rungs must be at least 2, got {self.screening_rungs}")
        if self.memory_bytes < MIN_MEMORY_BYTES:
            p.append(f"the memory limit must be at least {format_bytes(MIN_MEMORY_BYTES)} (what a candidate may "
                     f"add to its worker's memory), got {format_bytes(self.memory_bytes)}")
        if self.scheduler is not None:
            from ggp_automl.evaluation.engine import check_scheduler_address

            try:
                check_scheduler_address(self.scheduler)
            except ValueError as exc:
                p.append(str(exc))
        if self.workers is not None and not 1 <= self.workers <= MAX_WORKERS:
            p.append(f"workers must be between 1 and {MAX_WORKERS}, got {self.workers}")
        for name in ("population", "batch_size"):
            if getattr(self, name) > MAX_POPULATION:
                p.append(f"{name} must be at most {MAX_POPULATION:,}, got {getattr(self, name):,}")
        for name in ("population", "batch_size", "max_depth", "final_candidates", "fidelity_steps",
                     "screening_min_rows"):
            if getattr(self, name) < 1:
                p.append(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.cv is not None and not (self.cv == 0 or 2 <= self.cv <= MAX_CV):
            p.append(f"cv must be 0 (hold-out) or 2..{MAX_CV} folds, got {self.cv}")
        if self.cv and self.cuts_rows:
            p.append(f"the {self.fidelity} schedule cuts the rows into folds itself; cross-validation (cv "
                     f"{self.cv}) needs an NIS schedule")
        if self.fitness is not None:
            from ggp_automl.evaluation.metrics import FITNESS

            if self.fitness not in FITNESS:
                p.append(f"unknown fitness {self.fitness!r}; known (all maximised): {', '.join(FITNESS)}")
        if self.ensemble is not None:
            from .ensemble_spec import parse_ensemble

            try:
                parse_ensemble(self.ensemble)
            except ValueError as exc:
                p.append(str(exc))
        if self.prediction_bytes < 2 ** 20:
            p.append(f"prediction_bytes must be at least 1 MB, got {format_bytes(self.prediction_bytes)}")
        if not isinstance(self.warm_start, str) or not self.warm_start or "\0" in self.warm_start:
            p.append(f'warm_start is "portfolio", "none" or a portfolio file, got {self.warm_start!r:.60}')
        if not isinstance(self.method_params, dict):
            p.append(f"method_params must be a dict, got {type(self.method_params).__name__}")
        elif self.method in known_methods():
            cls = method_class(self.method)
            given = check_params(self.method, cls.parameters, self.method_params)
            p += given or cls.problems_with(self, resolve_params(cls.parameters, self.method_params))
        return p

    @property
    def ensemble_spec(self) -> str | None:
        """The post-hoc ensemble the run builds: ``ensemble``, or the method's default (DivBO: caruana)."""
        if self.ensemble is not None:
            return self.ensemble
        if self.method not in known_methods():
            return None
        return getattr(method_class(self.method), "default_ensemble", None)

    @property
    def archive_size(self) -> int:
        """Candidates a method keeps for the final re-evaluation: ``final_candidates``, or the ensemble's
        pool (:data:`ggp_automl.search.ensemble.POOL`) when the run builds an ensemble from them."""
        if self.ensemble_spec is None:
            return self.final_candidates
        from .ensemble_spec import POOL

        return max(self.final_candidates, POOL)

    @property
    def search_seconds(self) -> float:
        return self.budget_seconds * self.search_fraction

    @property
    def effective_mode(self) -> str:
        if self.mode is not None:
            return self.mode
        return "async" if supports_async(self.method) else "generational"

    @property
    def worker_count(self) -> int:
        return self.workers or os.cpu_count() or 1

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["plugins"] = list(self.plugins)
        d["method_params"] = dict(self.method_params)
        return d

    @property
    def cuts_rows(self) -> bool:
        """Whether the fidelity schedule cuts the rows into folds itself (PIS), so there is no cross-validation."""
        return str(self.fidelity).upper().endswith("-PIS")

    @property
    def params(self) -> dict:
        """The method's parameters, its declared defaults filled in."""
        return resolve_params(method_class(self.method).parameters, self.method_params)

    def for_task(self, task) -> "RunConfig":
        """This config with ``fitness`` and ``cv`` decided for ``task`` (an :class:`evaluation.task.Task`);
        ValueError when the fitness belongs to the other task. A PIS schedule keeps its own folds."""
        fitness = self.fitness or task.default_fitness
        task.check_fitness(fitness)
        cv = self.cv if self.cv is not None else (0 if self.cuts_rows else task.default_cv)
        return self.replace(fitness=fitness, cv=cv)

    @classmethod
    def from_dict(cls, d: dict) -> "RunConfig":
        """The config of a ``config.json``; ``ValueError`` naming every field of the wrong JSON type or value."""
        fields = {f.name: f for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in d.items() if k in fields}
        wrong = [f"{k} is {type(v).__name__} {v!r:.40}, not {fields[k].type}" for k, v in kwargs.items()
                 if not isinstance(v, tuple(t for name in _alternatives(str(fields[k].type))
                                            for t in _JSON_TYPES[name]))
                 or (isinstance(v, bool) and "bool" not in str(fields[k].type))]
        if wrong:
            raise ValueError("; ".join(wrong))
        if "warm_start" not in d:  # a run directory written before warm starts: it started cold
            kwargs["warm_start"] = "none"
        if "mode" not in d:  # a run directory written before the asynchronous mode existed
            kwargs.update(THESIS_SETTINGS, eval_timeout=d.get("eval_timeout", 180.0))
        legacy = {k: d[k] for k in LEGACY_METHOD_FIELDS if k in d}
        if legacy and isinstance(kwargs.get("method", "ggp"), str) and isinstance(kwargs.get("method_params", {}), dict):
            # a run directory written while the GGP family's knobs were settings: those its method declares
            try:
                declared = {p.name for p in method_class(kwargs.get("method", "ggp")).parameters}
            except KeyError:
                declared = set()
            kwargs["method_params"] = {**{k: v for k, v in legacy.items() if k in declared},
                                       **kwargs.get("method_params", {})}
        if isinstance(kwargs.get("plugins"), (list, tuple)):
            if not all(isinstance(m, str) for m in kwargs["plugins"]):
                raise ValueError(f"plugins holds something else than module names: {kwargs['plugins']!r:.60}")
            kwargs["plugins"] = tuple(kwargs["plugins"])
        return cls(**kwargs)

    def replace(self, **changes) -> "RunConfig":
        return dataclasses.replace(self, **changes)


def _alternatives(annotation: str) -> list[str]:
    """The types of a field's annotation: ``int | None`` → int, None; a ``|`` inside brackets stays."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(annotation):
        depth += {"[": 1, "]": -1}.get(c, 0)
        if depth == 0 and annotation.startswith(" | ", i):
            parts.append(annotation[start:i])
            start = i + 3
    return parts + [annotation[start:]]


def _plain(value):
    """A method parameter's value as JSON holds it: paths as strings, lists of them too."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    return value

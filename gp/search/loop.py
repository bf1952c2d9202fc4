"""The search loop — one for every method.

Each generation: choose the data view (a learning/validation split, redrawn every
``resample_every`` generations for methods that resample, and narrowed by the
multi-fidelity schedule), ask the method for a batch, evaluate it (cache first,
then the engine's workers under the per-candidate limits and the search deadline),
log every finished evaluation as it finishes, tell the method, log the generation,
checkpoint. At 85 % of the budget the search stops; the method's archive is
re-evaluated on a fresh full-fidelity split, and the winner is refit on the whole
training set (and measured on the test set when there is one).

Resuming: the checkpoint holds the state after the last finished generation (the
method with its populations and policy, the rng, the cache, counters). Evaluations
that finished after it are read back from the evaluation log and served to the
replayed generation — which asks for exactly the same candidates, because the rng
is restored — so a run killed at any moment neither loses nor repeats a finished
evaluation.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field

import numpy as np
from deap import tools

from evaluation.candidate import EvaluationResult, Split
from evaluation.data import Dataset
from evaluation.engine import MIN_START_SECONDS, EvaluationEngine
from evaluation.fidelity import FidelitySchedule, full_view, restrict
from evaluation.splits import draw_seed
from gp.grammar import Grammar

from .cache import EvaluationCache
from .config import RunConfig
from .individual import Individual
from .method import SearchMethod, best_of
from .observer import Observers, SearchObserver
from .rundir import RunDirectory

FINAL_VIEW = "final"
#: The end of a run re-evaluates the best candidates and refits the winner on all the
#: training data (1.25x the learning rows): the search leaves about this many times the
#: best candidate's evaluation time for that, so a slow winner does not overrun the budget.
FINAL_RESERVE_FACTOR = 2.5
#: ... but the search always gets at least this share of the budget.
MIN_SEARCH_SHARE = 0.5


def _score(ind: Individual) -> float:
    return ind.score


def _statistics() -> tools.Statistics:
    stats = tools.Statistics(key=_score)
    stats.register("best", np.max)
    stats.register("mean", np.mean)
    return stats


@dataclass
class SearchState:
    """Everything a checkpoint holds."""

    rng: np.random.Generator
    final_rng: np.random.Generator
    method: SearchMethod
    generation: int = 0
    resample: int = 0
    split_seed: int = 0
    elapsed: float = 0.0
    #: evaluation records written so far (their "n" are 0 .. logged-1)
    logged: int = 0
    generations_logged: int = 0
    counts: dict = field(default_factory=lambda: {"evaluations": 0, "failed": 0, "cached": 0})
    cache: EvaluationCache = field(default_factory=EvaluationCache)
    logbook: tools.Logbook = field(default_factory=tools.Logbook)
    #: evaluated members of a generation the deadline cut short
    partial: list[Individual] = field(default_factory=list)
    #: the best search-phase fitness so far and its evaluation's wall time
    best_fitness: float = -1.0
    best_wall: float = 0.0

    @classmethod
    def initial(cls, method: SearchMethod, seed: int) -> "SearchState":
        rng = np.random.default_rng(seed)
        final_rng = rng.spawn(1)[0]  # its own stream: the final split does not depend on where the search stopped
        return cls(rng=rng, final_rng=final_rng, method=method, split_seed=draw_seed(rng))


def result_from_record(record: dict) -> EvaluationResult:
    return EvaluationResult(record["phenotype"], record["status"], float(record["fitness"]),
                            dict(record.get("measures") or {}), float(record.get("fit_time", 0.0)),
                            float(record.get("predict_time", 0.0)), float(record.get("wall_time", 0.0)),
                            record.get("reason", ""))


@dataclass
class SearchOutcome:
    """What a finished loop hands back (also written to ``final.json`` and ``best/``)."""

    winner: Individual | None
    final: dict
    model: object = None
    #: the generation records of this session (the run directory holds every session's)
    history: list[dict] = field(default_factory=list)


class SearchLoop:
    def __init__(self, *, config: RunConfig, grammar: Grammar, train: Dataset, engine: EvaluationEngine,
                 state: SearchState, run: RunDirectory | None = None, test: Dataset | None = None,
                 observers: list[SearchObserver] = (), restored: list[dict] = (), info: dict | None = None):
        self.config = config
        self.grammar = grammar
        self.train = train
        self.test = test
        self.engine = engine
        self.state = state
        self.run_dir = run
        self.observer = Observers(observers)
        self.schedule = FidelitySchedule(config.fidelity, config.fidelity_steps)
        self.info = info or {}
        self._views: dict[tuple, tuple[str, Split]] = {}
        self._restored = {(r["split"], r["phenotype"]): result_from_record(r) for r in restored}
        self._resumed = bool(restored) or state.generation > 0
        self.history: list[dict] = []
        self.t0 = time.time() - state.elapsed

    # -- clock -----------------------------------------------------------------------
    def now(self) -> float:
        """Seconds of the run's budget used (time between a kill and its resume is not counted)."""
        return time.time() - self.t0

    # -- data views ----------------------------------------------------------------------
    def _view(self, step: int) -> tuple[str, Split]:
        st = self.state
        which = (st.resample, st.split_seed, step)
        if which not in self._views:  # drawn once per resample and period, from the resample's own seed
            fidelity = self.schedule.view(self.train, step, st.resample, np.random.default_rng(st.split_seed))
            self._views = {which: (fidelity.key, restrict(self.train, fidelity))}
        return self._views[which]

    def _final_view(self) -> Split:
        return restrict(self.train, full_view(self.train, 0, copy.deepcopy(self.state.final_rng)))

    # -- evaluation ----------------------------------------------------------------------
    def _record(self, r: EvaluationResult, key: str, phase: str, generation: int, species: int | None) -> dict:
        return {"n": self.state.logged, "time": round(self.now(), 3), "generation": generation,
                "species": species, "phase": phase, "split": key, "phenotype": r.phenotype, "status": r.status,
                "fitness": r.fitness, "measures": r.measures, "fit_time": round(r.fit_time, 4),
                "predict_time": round(r.predict_time, 4), "wall_time": round(r.wall_time, 4), "reason": r.reason}

    def search_end(self) -> float:
        """Budget seconds at which the search stops: ``search_fraction`` of the budget, earlier
        when the best candidate is so slow that re-evaluating and refitting it needs more."""
        cfg, st = self.config, self.state
        reserve = max(cfg.budget_seconds - cfg.search_seconds, FINAL_RESERVE_FACTOR * st.best_wall)
        return max(cfg.budget_seconds - reserve, MIN_SEARCH_SHARE * cfg.search_seconds)

    def _count(self, r: EvaluationResult, stats: dict) -> None:
        """One evaluation that ran: in this generation's stats and the run's counts."""
        if r.ok and stats.get("phase") == "search" and r.fitness > self.state.best_fitness:
            self.state.best_fitness, self.state.best_wall = r.fitness, r.wall_time
        stats["evaluated"] += 1
        self.state.counts["evaluations"] += 1
        if not r.ok:
            stats["failed"] += 1
            self.state.counts["failed"] += 1

    def evaluate(self, batch: list[Individual], key: str, split: Split, deadline: float, phase: str,
                 generation: int) -> tuple[list[EvaluationResult | None], dict]:
        """Results aligned with ``batch`` (None: not evaluated before the deadline)."""
        st = self.state
        results: list[EvaluationResult | None] = [None] * len(batch)
        stats = {"evaluated": 0, "failed": 0, "cached": 0, "phase": phase}
        todo: dict[str, list[int]] = {}
        for i, ind in enumerate(batch):
            p = ind.phenotype
            if p in todo:
                todo[p].append(i)
                continue
            restored = self._restored.pop((key, p), None)
            if restored is not None:  # finished before a kill: counted as run, not run again
                results[i] = restored
                st.cache.put(key, restored)
                self._count(restored, stats)
                continue
            hit = st.cache.get(key, p)
            if hit is not None:
                results[i] = hit
                stats["cached"] += 1
                st.counts["cached"] += 1
                continue
            todo[p] = [i]
        order = [p for p, idx in todo.items() if results[idx[0]] is None]

        def on_result(j: int, r: EvaluationResult) -> None:
            record = self._record(r, key, phase, generation, batch[todo[order[j]][0]].species)
            if self.run_dir is not None:
                self.run_dir.append_evaluation(record)
            st.logged += 1
            st.cache.put(key, r)
            self._count(r, stats)
            self.observer.on_evaluation(record)

        if order:
            out = self.engine.evaluate([batch[todo[p][0]].tree for p in order], self.grammar, split, split_key=key,
                                       fitness=self.config.fitness, random_state=self.config.seed,
                                       deadline=deadline, on_result=on_result)
            for p, r in zip(order, out):
                results[todo[p][0]] = r
        for p, idx in todo.items():  # duplicates inside the batch share the first one's result
            for i in idx[1:]:
                results[i] = results[idx[0]]
                if results[i] is not None:
                    stats["cached"] += 1
                    st.counts["cached"] += 1
        del stats["phase"]
        return results, stats

    # -- the search ----------------------------------------------------------------------
    def search(self) -> None:
        st, cfg = self.state, self.config
        step_clock = st.elapsed if self._resumed else None
        self.observer.on_phase("search")
        while True:
            if cfg.max_generations is not None and st.generation >= cfg.max_generations:
                break
            search_deadline = self.t0 + self.search_end()
            if time.time() >= search_deadline - MIN_START_SECONDS:
                break
            g = st.generation
            if st.method.resamples and cfg.resample_every and g > 0 and g % cfg.resample_every == 0:
                st.resample += 1
                st.split_seed = draw_seed(st.rng)
            clock = step_clock if step_clock is not None else self.now()
            step_clock = None
            key, split = self._view(self.schedule.step_at(clock, cfg.search_seconds))
            st.cache.use_view(key)
            batch = st.method.ask(st.rng)
            results, stats = self.evaluate(batch, key, split, search_deadline, "search", g)
            if any(r is None for r in results):
                st.partial = [ind.with_fitness(r.fitness) for ind, r in zip(batch, results) if r is not None]
                break
            evaluated = [ind.with_fitness(r.fitness) for ind, r in zip(batch, results)]
            st.method.tell(evaluated)
            self._end_generation(g, key, evaluated, stats)

    def _end_generation(self, g: int, key: str, evaluated: list[Individual], stats: dict) -> None:
        st = self.state
        extra = st.method.stats()
        summary = _statistics().compile(evaluated)
        best = best_of(evaluated)
        record = {"generation": g, "time": round(self.now(), 3), "split": key, **stats,
                  "best_fitness": float(summary["best"]), "mean_fitness": float(summary["mean"]),
                  "best_phenotype": best.phenotype, "restarts": extra["restarts"], "species": extra["species"]}
        st.logbook.record(gen=g, time=record["time"], evals=stats["evaluated"], cached=stats["cached"],
                          best=record["best_fitness"], mean=record["mean_fitness"])
        st.generation = g + 1
        st.elapsed = self.now()
        st.generations_logged += 1
        self.history.append(record)
        if self.run_dir is not None:
            self.run_dir.append_generation(record)
            self.run_dir.save_checkpoint(st)
        self.observer.on_generation({**record, "counts": dict(st.counts)})

    # -- the end ---------------------------------------------------------------------------
    def candidates(self) -> list[Individual]:
        pool = self.state.method.archive() + sorted(self.state.partial, key=lambda i: -i.score)
        seen, out = set(), []
        for ind in sorted(pool, key=lambda i: -i.score):
            if ind.phenotype not in seen and ind.fitness.valid:
                seen.add(ind.phenotype)
                out.append(ind)
        return out[: self.config.final_candidates]

    def choose(self) -> list[tuple[Individual, EvaluationResult | None]]:
        """Re-evaluate the archive on a fresh full-fidelity split; the candidates, best first."""
        cfg = self.config
        cands = self.candidates()
        self.observer.on_phase("final", f"re-evaluating {len(cands)} candidates on a fresh split")
        split = self._final_view()
        self.state.cache.use_view(FINAL_VIEW)
        # the refit's share: half of the final phase, or what the best candidate's time suggests
        reserve = max((cfg.budget_seconds - cfg.search_seconds) / 2, 1.5 * self.state.best_wall)
        deadline = max(self.t0 + cfg.budget_seconds - reserve, time.time() + MIN_START_SECONDS)
        results, _ = self.evaluate(cands, FINAL_VIEW, split, deadline, "final", self.state.generation)
        pairs = list(zip(cands, results))
        # re-evaluated ones first, by their fresh fitness; the rest by their search fitness
        pairs.sort(key=lambda pr: (pr[1] is None, -(pr[1].fitness if pr[1] is not None else pr[0].score)))
        return pairs

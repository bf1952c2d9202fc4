"""The search loop — one for every method, in two modes.

The loop owns everything a method must not see: the data views (a learning/validation
split, redrawn every ``resample_every`` generations for methods that resample, narrowed by
the multi-fidelity schedule, and subsampled by the screening rungs), the cache, the
evaluation engine, the time-keeper's limits and deadline, the logs, the checkpoints and
resume. Two drivers share it:

* :mod:`ggp_automl.search.generational` — the thesis's: ask the method for a generation, evaluate it
  (workers wait for the slowest candidate), tell it, log, checkpoint;
* :mod:`ggp_automl.search.asynchronous` — steady state: a worker that frees up at once gets the next
  candidate; every result is told as it comes back.

At the search's end (:meth:`ggp_automl.search.timekeeper.TimeKeeper.search_end`) the method's archive
is re-evaluated on a fresh full-fidelity split in order of search fitness
(:meth:`SearchLoop.choose`), and the winner is refit on the whole training set
(:mod:`ggp_automl.search.finish`).

Resuming: the checkpoint holds the state after the last finished generation (the method
with its populations and policy, the rng, the cache, the time-keeper, counters, and in the
asynchronous mode the candidates in flight). Evaluations that finished after it are read
back from the evaluation log and served to the replayed search, so a run killed at any
moment neither loses nor repeats a finished evaluation.
"""
from __future__ import annotations

import copy
import dataclasses
import math
import time

import numpy as np
from deap import tools

from ggp_automl.evaluation.candidate import EvaluationResult, Split
from ggp_automl.evaluation.data import Dataset
from ggp_automl.evaluation.engine import EvaluationEngine
from ggp_automl.evaluation.fidelity import FidelitySchedule, full_view, restrict
from ggp_automl.evaluation.predictions import FILE as PREDICTIONS_FILE
from ggp_automl.evaluation.predictions import PredictionStore
from ggp_automl.gp.grammar import Grammar

from .config import RunConfig
from .cost_model import Shape, choose_rung
from .cost_model import features as cost_features
from .individual import Individual
from .methods.base import best_of, by_rank
from .observer import Observers, SearchObserver
from .rundir import RunDirectory
from .screening import Screening, subsample
from .state import KeptModel, SearchOutcome, SearchState, new_stats, result_from_record  # noqa: F401 (old checkpoints)

FINAL_VIEW = "final"
#: the status of a candidate the runtime screen did not start (:mod:`ggp_automl.search.runtime`)
SKIPPED = "skipped"
#: a new candidate predicted to take at most this long on the full view skips the screening rungs. Only
#: the fixed cost of an evaluation (a few ms) makes that pay: with η = 3, screening a candidate of full cost
#: F + 3v (fixed F, v per third of the rows) costs F + v, plus F + 3v for the third promoted; starting it
#: on the full view costs F + 3v, which is less only when v < F/3 (a grid with 1 s started more full
#: evaluations and made fewer per minute)
DIRECT_SECONDS = 0.05


def algorithms(phenotype: str) -> set[str]:
    """The algorithm names in a phenotype (its terminals that name a registered algorithm)."""
    from ggp_automl.spaces.registry import load_all

    return set(phenotype.split()) & load_all().keys()
#: how many measured times of good candidates the loop keeps for planning the final stage
_WALLS_KEPT = 250


def _score(ind: Individual) -> float:
    return ind.score


def _statistics() -> tools.Statistics:
    stats = tools.Statistics(key=_score)
    stats.register("best", np.max)
    stats.register("mean", np.mean)
    return stats


class SearchLoop:
    def __init__(self, *, config: RunConfig, grammar: Grammar, train: Dataset, engine: EvaluationEngine,
                 state: SearchState, run: RunDirectory | None = None, test: Dataset | None = None,
                 observers: list[SearchObserver] = (), restored: list[dict] = (), info: dict | None = None):
        if config.fitness is None or config.cv is None:  # start() and resume() decide them; a bare loop here
            config = config.for_task(train.task)
        self.config = config
        self.grammar = grammar
        self.train = train
        self.test = test
        self.engine = engine
        self.state = state
        self.keeper = state.keeper
        self.run_dir = run
        self.observer = Observers(observers)
        self.schedule = FidelitySchedule(config.fidelity, config.fidelity_steps)
        self.screening = Screening(config.screening_eta, config.screening_rungs, config.screening_min_rows) \
            if config.screening else None
        self.info = info or {}
        self._views: dict[tuple, tuple[str, Split]] = {}
        self._rungs: dict[str, list[tuple[str, Split]]] = {}
        self._screened_rows: tuple[int, list[float]] | None = None  # the last view's learning rows and rungs
        self._shapes: dict[str, Shape] = {}  # view key -> its shape, what the cost model reads of the data
        #: the final re-evaluation's model of its best candidate (:meth:`choose`)
        self.kept_model: KeptModel | None = None
        #: evaluations logged after the checkpoint, in the order they finished
        self.restored = sorted(restored, key=lambda r: r.get("n", 0))
        # a record logged after the checkpoint may be on a view the resumed run does not draw again
        self._shapes.update((r["split"], shape) for r in self.restored
                            if (shape := Shape.from_record(r.get("shape"))) is not None)
        self._restored = {(r["split"], r["phenotype"]): result_from_record(r) for r in self.restored}
        self.resumed = bool(restored) or state.generation > 0
        self.history: list[dict] = []
        self.t0 = time.time() - state.elapsed
        self._busy_base = state.busy_seconds
        #: validation predictions, kept when the run builds an ensemble or its method learns from them
        self.predictions: PredictionStore | None = None
        if config.ensemble_spec is not None or state.method.uses_predictions:
            self.predictions = PredictionStore(config.prediction_bytes,
                                               None if run is None else run.path / PREDICTIONS_FILE,
                                               None if run is None else run.run_id).load()
            foreign = None if run is None else run.foreign(PREDICTIONS_FILE, self.predictions.owner)
            if foreign is not None:
                raise foreign
            if state.method.uses_predictions:
                state.method.use_predictions(self.predictions)

    # -- clock -----------------------------------------------------------------------
    def now(self) -> float:
        """Seconds of the run's budget used (time between a kill and its resume is not counted)."""
        return time.time() - self.t0

    def search_deadline(self) -> float:
        """The search's end as a ``time.time()`` epoch."""
        return self.t0 + self.keeper.search_end()

    # -- data views ----------------------------------------------------------------------
    def period(self, clock: float) -> int:
        """The multi-fidelity period at ``clock`` budget seconds; always 1 without multi-fidelity,
        where every period would show the same data (and a new period must not empty the cache)."""
        return 1 if self.schedule.is_full else self.schedule.step_at(clock, self.keeper.search_seconds)

    def view(self, step: int, resample: int | None = None, seed: int | None = None) -> tuple[str, Split]:
        """The view of fidelity period ``step`` in the current resample (or a given one's)."""
        st = self.state
        which = (st.resample if resample is None else resample, st.split_seed if seed is None else seed, step)
        if which not in self._views:  # drawn once per resample and period, from the resample's own seed
            fidelity = self.schedule.view(self.train, step, which[0], np.random.default_rng(which[1]),
                                          self.config.cv)
            latest = dict(list(self._views.items())[-1:])
            split = restrict(self.train, fidelity)
            if self.config.trace_test and self.test is not None:
                split = dataclasses.replace(split, X_test=self.test.X[:, np.asarray(fidelity.features)],
                                            Y_test=self.test.Y)
            if self.state.method.uses_predictions:
                split = self._keeping_scores(fidelity.key, split)
            self._views = {**latest, which: (fidelity.key, split)}
            self._shapes[fidelity.key] = Shape.of(split)
        return self._views[which]

    def _keeping_scores(self, key: str, split: Split) -> Split:
        """The view with its candidates' validation scores kept (:mod:`evaluation.predictions`)."""
        self.predictions.set_targets(key, split.scored_targets, search=key != FINAL_VIEW)
        return dataclasses.replace(split, keep_scores=True)

    def rungs(self, key: str, split: Split, seed: int | None = None) -> list[tuple[str, Split]]:
        """The screening rungs of a view, cheapest first; the last is the view itself. The
        subsamples are drawn from the view's seed (default: the current resample's)."""
        if self.screening is None:
            return [(key, split)]
        if key not in self._rungs:
            seed = self.state.split_seed if seed is None else seed
            fractions = self.screening.fractions(len(split.Y_learn))
            self._screened_rows = (len(split.Y_learn), fractions)
            self._rungs = {**dict(list(self._rungs.items())[-1:]),
                           key: [(f"{key}|r{r}", subsample(split, f, seed + r)) for r, f in enumerate(fractions[:-1])]
                           + [(key, split)]}
            self._shapes.update((rkey, Shape.of(rsplit)) for rkey, rsplit in self._rungs[key])
        return self._rungs[key]

    def _final_view(self) -> Split:
        """The final re-evaluation's split; its candidates keep their fitted models (the run's model when
        the winner cannot be refit on all the rows: :mod:`ggp_automl.search.finish`)."""
        split = restrict(self.train, full_view(self.train, 0, copy.deepcopy(self.state.final_rng), self.config.cv))
        split = dataclasses.replace(split, keep_model=True)
        return self._keeping_scores(FINAL_VIEW, split) if self.config.ensemble_spec is not None else split

    # -- one finished evaluation ---------------------------------------------------------------
    def finished(self, r: EvaluationResult, key: str, phase: str, generation: int, species: int | None,
                 level: int, timing: object, stats: dict, restored: bool = False) -> dict:
        """Book one evaluation that ran (now, or before a kill when ``restored``)."""
        st = self.state
        if r.scores is not None:  # kept (on disk first, so that a kill cannot log it without them)
            if r.ok and self.predictions is not None:
                self.predictions.put(key, r.phenotype, r.fitness, r.scores)
            r = dataclasses.replace(r, scores=None)
        if r.model is not None:  # a kept model goes back to choose() only: never cached or checkpointed
            r = dataclasses.replace(r, model=None)
        cost = self._cost(r, key, phase)
        note = self.keeper.observe(r, timing, search=phase == "search", algorithms=algorithms(r.phenotype))
        record = {"n": st.logged, "time": round(self.now(), 3), "generation": generation, "species": species,
                  "phase": phase, "split": key, "level": level, "phenotype": r.phenotype, "status": r.status,
                  "fitness": r.fitness, "measures": r.measures, "fit_time": round(r.fit_time, 4),
                  "predict_time": round(r.predict_time, 4), "wall_time": round(r.wall_time, 4), "reason": r.reason,
                  **note, **cost}
        if r.test_fitness is not None:
            record["test_fitness"] = round(r.test_fitness, 6)
        if not restored:
            if self.run_dir is not None:
                self.run_dir.append_evaluation(record)
            st.logged += 1
            self.observer.on_evaluation(record)
        st.cache.put(key, r)
        if r.ok and phase == "search":
            st.useful_seconds += r.wall_time
            if level == 0:
                self.keeper.observe_full(r.fitness, r.wall_time, self.keeper.kept)
                self._remember_wall(r)
        stats["evaluated"] += 1
        st.counts["evaluations"] += 1
        if r.status == SKIPPED:
            st.counts["skipped"] = st.counts.get("skipped", 0) + 1
        if not r.ok:
            stats["failed"] += 1
            st.counts["failed"] += 1
        return record

    def cached(self, stats: dict) -> None:
        stats["cached"] += 1
        self.state.counts["cached"] += 1

    def _remember_wall(self, r: EvaluationResult) -> None:
        walls = self.state.walls
        walls[r.phenotype] = (r.fitness, r.wall_time)
        if len(walls) > 2 * _WALLS_KEPT:
            kept = sorted(walls.items(), key=lambda kv: -kv[1][0])[:_WALLS_KEPT]
            self.state.walls = dict(kept)

    def _cost(self, r: EvaluationResult, key: str, phase: str) -> dict:
        """The cost model's prediction for a finished evaluation, made before it learns from it (a search
        evaluation), and the view's shape: what its log record says about its predicted time."""
        shape = self._shapes.get(key)
        if shape is None:
            return {"predicted": None}
        x = cost_features(r.phenotype, shape, algorithms(r.phenotype))
        predicted = self.keeper.cost.predict_seconds(x)
        if phase == "search":
            self.keeper.cost.observe(x, r.status, r.wall_time, r.limit)
        return {"predicted": round(predicted, 4), "shape": shape.as_list()}

    def _shape_at(self, timing: object) -> Shape | None:
        """The shape of the current resample's view at ``timing`` = (period, rung), if it was drawn."""
        if not (isinstance(timing, tuple) and len(timing) == 2):
            return None
        step, rung = timing
        view = self._views.get((self.state.resample, self.state.split_seed, step))
        if view is None:
            return None
        rungs = self._rungs.get(view[0], [view]) if self.screening is not None else [view]
        return self._shapes.get(rungs[min(rung, len(rungs) - 1)][0])

    def start_rung(self, phenotype: str, rungs: list[tuple[str, Split]]) -> int:
        """The screening rung a new candidate starts at: the highest one at which the cost model predicts it
        within :data:`DIRECT_SECONDS` (the full view for a cheap candidate: screening it first would cost
        more than it saves, and a second evaluation), else the cheapest."""
        if len(rungs) < 2:
            return 0
        shapes = [self._shapes.get(key) for key, _ in rungs]
        if any(shape is None for shape in shapes):
            return 0
        return choose_rung(self.keeper.cost, phenotype, shapes, DIRECT_SECONDS, algorithms(phenotype))

    def start_limit(self, phenotype: str, timing: object,
                    key: str | None = None) -> tuple[float, EvaluationResult | None]:
        """The time limit of a candidate about to start on view ``key`` (default: the one ``timing`` names),
        and — when the runtime screen or the cost model says it would not finish under it — the
        ``skipped`` result that replaces its evaluation."""
        names = algorithms(phenotype)
        shape = self._shapes.get(key) if key is not None else self._shape_at(timing)
        x = None if shape is None else cost_features(phenotype, shape, names)
        limit, skip = self.keeper.assign(timing, names, x)
        if skip is None:
            return limit, None
        return limit, EvaluationResult(phenotype, SKIPPED, 0.0, reason=skip, limit=limit)

    # -- a batch (a generation, a rung of one, the final re-evaluation) --------------------------
    def evaluate(self, batch: list[Individual], key: str, split: Split, deadline: float, phase: str,
                 generation: int, level: int = 0, timing: object = None,
                 timeouts: list[float] | None = None) -> tuple[list[EvaluationResult | None], dict]:
        """Results aligned with ``batch`` (None: not evaluated before the deadline). Search
        candidates get the time-keeper's limits; ``timeouts`` (one per candidate) replaces them."""
        results: list[EvaluationResult | None] = [None] * len(batch)
        stats = new_stats()
        todo: dict[str, list[int]] = {}
        self._shapes[key] = Shape.of(split)
        limits: dict[str, float] = {}
        for i, ind in enumerate(batch):
            p = ind.phenotype
            if p in todo:
                todo[p].append(i)
                continue
            hit = self.state.cache.get(key, p)
            if hit is not None:
                results[i] = hit
                self.cached(stats)
                continue
            todo[p] = [i]
            if timeouts is not None:
                limits[p], skipped = timeouts[i], None
            else:  # assigned in batch order, restored or not, so that a resumed run replays the probes
                limits[p], skipped = self.start_limit(p, timing, key)
            restored = self._restored.pop((key, p), None)
            if restored is not None:  # finished before a kill: counted as run, not run again
                results[i] = restored
                self.finished(restored, key, phase, generation, ind.species, level, timing, stats, restored=True)
            elif skipped is not None:
                results[i] = skipped
                self.finished(skipped, key, phase, generation, ind.species, level, timing, stats)
        order = [p for p, idx in todo.items() if results[idx[0]] is None]

        def on_result(j: int, r: EvaluationResult) -> None:
            self.finished(r, key, phase, generation, batch[todo[order[j]][0]].species, level, timing, stats)

        if order:
            out = self.engine.evaluate([batch[todo[p][0]].tree for p in order], self.grammar, split, split_key=key,
                                       fitness=self.config.fitness, random_state=self.config.seed,
                                       deadline=deadline, on_result=on_result, timeout=[limits[p] for p in order])
            for p, r in zip(order, out):
                results[todo[p][0]] = r
        for p, idx in todo.items():  # duplicates inside the batch share the first one's result
            for i in idx[1:]:
                results[i] = results[idx[0]]
                if results[i] is not None:
                    self.cached(stats)
        return results, stats

    # -- the search ----------------------------------------------------------------------
    def search_ended(self) -> None:
        """The driver (:mod:`.asynchronous` or :mod:`.generational`, chosen by :func:`.run.search`) is done."""
        self.state.busy_seconds = self._busy()
        self.state.search_ended = self.now()

    def _busy(self) -> float:
        return self._busy_base + self.engine.busy_seconds

    def work(self) -> dict:
        """How the workers spent the search phase (``final.json``'s ``work``)."""
        st = self.state
        available = self.engine.workers * (st.search_ended or self.now())
        return {"workers": self.engine.workers, "search_seconds": round(st.search_ended or self.now(), 3),
                "busy_worker_seconds": round(st.busy_seconds, 1), "useful_worker_seconds": round(st.useful_seconds, 1),
                "utilisation": round(st.busy_seconds / available, 4) if available > 0 else None,
                "useful_work": round(st.useful_seconds / st.busy_seconds, 4) if st.busy_seconds > 0 else None}

    def screening_summary(self) -> dict | None:
        """Whether screening ran on this data (``final.json``'s ``screening``; None: it was off)."""
        if self.screening is None:
            return None
        rows, fractions = self._screened_rows or (None, None)
        return {"eta": self.screening.eta, "min_rows": self.screening.min_rows, "learning_rows": rows,
                "fractions": fractions, "active": None if fractions is None else len(fractions) > 1}

    def log_generation(self, g: int, key: str, evaluated: list[Individual], stats: dict) -> None:
        """The generation record (statistics over the full-fidelity members when there are any)."""
        st = self.state
        extra = st.method.stats()
        full = [i for i in evaluated if i.level == 0] or evaluated
        summary = _statistics().compile(full)
        best = best_of(evaluated)
        record = {"generation": g, "time": round(self.now(), 3), "split": key, **stats,
                  "best_fitness": float(summary["best"]), "mean_fitness": float(summary["mean"]),
                  "best_phenotype": best.phenotype, "restarts": extra["restarts"], "species": extra["species"],
                  **({"method": extra["method"]} if extra.get("method") is not None else {})}
        st.logbook.record(gen=g, time=record["time"], evals=stats["evaluated"], cached=stats["cached"],
                          best=record["best_fitness"], mean=record["mean_fitness"])
        st.generation = g + 1
        st.generations_logged += 1
        self.history.append(record)
        if self.run_dir is not None:
            self.run_dir.append_generation(record)
        self.observer.on_generation({**record, "counts": dict(st.counts)})

    def checkpoint(self) -> None:
        self.state.elapsed = self.now()
        self.state.busy_seconds = self._busy()
        if self.run_dir is not None:
            self.state.run_id = self.run_dir.run_id
            self.run_dir.save_checkpoint(self.state)

    # -- the end ---------------------------------------------------------------------------
    def candidates(self) -> list[Individual]:
        """The archive and a cut generation's members, distinct, best first (full fidelity first)."""
        seen, out = set(), []
        method = self.state.method
        ordered = method.archive() + by_rank(self.state.partial)
        for ind in (ordered if method.keeps_final_order else by_rank(ordered)):
            if ind.phenotype not in seen and ind.fitness.valid:
                seen.add(ind.phenotype)
                out.append(ind)
        return out[: self.config.archive_size]

    def worked(self, ind: Individual) -> bool:
        """Whether a candidate ended with a fitness in the search (a failure scores exactly 0; an ok
        full-fidelity result also has its time in ``state.walls``)."""
        return ind.score > 0 or ind.phenotype in self.state.walls

    def choose(self) -> list[tuple[Individual, EvaluationResult | None]]:
        """Re-evaluate the best candidates that worked on a fresh full-fidelity split, in order of
        search fitness and as many as the time-keeper's plan allows (none when not even the best
        fits: :meth:`TimeKeeper.final_plan`); the candidates, best first."""
        cands = self.candidates()
        walls = [self.state.walls.get(c.phenotype, (None, None))[1] for c in cands]
        worth = [i for i, c in enumerate(cands) if self.worked(c)]  # a failure would only fail again
        split = self._final_view()
        chosen, end = self.keeper.final_plan([self._planned_wall(cands[i], walls[i], split) for i in worth],
                                             self.now())
        chosen = [worth[j] for j in chosen]
        planned = [cands[i] for i in chosen]
        self.observer.on_phase("final", f"re-evaluating {len(planned)} of {len(cands)} candidates on a fresh split")
        self.state.cache.use_view(FINAL_VIEW)
        results, _ = self.evaluate(planned, FINAL_VIEW, split, self.t0 + end, "final", self.state.generation,
                                   timeouts=[self.keeper.reevaluation_limit(walls[i]) for i in chosen])
        fresh = dict(zip((c.phenotype for c in planned), results))
        pairs = [(c, fresh.get(c.phenotype)) for c in cands]
        # re-evaluated ones first, by their fresh fitness (or in the method's order: posterior-mean
        # selection); the rest in their search order
        fresh_order = not self.state.method.keeps_final_order
        pairs.sort(key=lambda pr: (pr[1] is None or not pr[1].ok,
                                   -(pr[1].fitness if pr[1] is not None and fresh_order else 0.0)))
        self.kept_model = self._keep_first_model(pairs, split)
        return [(c, None if r is None else dataclasses.replace(r, model=None)) for c, r in pairs]

    def _planned_wall(self, cand: Individual, wall: float | None, split: Split) -> float | None:
        """The time the final plan reckons for re-evaluating ``cand``: its measured full-fidelity time, else
        the cost model's upper prediction on the final split (a candidate measured only on a screening
        rung or a smaller view; it is still stopped at the hard cap), else None (the hard cap)."""
        if wall is not None or not self.keeper.adaptive:
            return wall
        mu, spread = self.keeper.cost.predict_log(cost_features(cand.phenotype, Shape.of(split),
                                                                algorithms(cand.phenotype)))
        return min(self.keeper.hard_cap, math.exp(min(mu + spread, 50.0)))

    def _keep_first_model(self, pairs, split: Split) -> "KeptModel | None":
        """The fitted model of the first re-evaluated candidate that kept one (the others' are dropped:
        one model in memory, not one per candidate). None when none did: a re-evaluation restored
        from the log after a kill, or a model that could not be pickled."""
        for cand, r in pairs:
            if r is not None and r.ok and r.model is not None:
                return KeptModel(cand, r, r.model, split.model_rows, len(split.scored_targets),
                                 len(split.folds))
        return None

"""The time-keeper: every budget rule of a run, in one place (GAMA's one time-keeper).

Why one object: the budget is split between the search, the final re-evaluation and the
refit of the winner, and every candidate needs a time limit. When those rules live in
several modules they drift apart; here they are written once, and the loop and the final
stage only ask.

**Per-candidate time limits** (issue 8). A candidate runs under the smallest of

1. the *hard cap*: ``--eval-timeout`` when given, else a tenth of the budget
   (:data:`EVAL_TIMEOUT_SHARE`; auto-sklearn's ``per_run_time_limit`` and GAMA's
   ``max_eval_time`` use the same share), so a 3-minute run does not wait 180 s for one
   candidate;
2. the *adaptive limit*, once :data:`MIN_OBSERVATIONS` candidates at the same fidelity (data
   view size and screening rung) have ended with a fitness::

       limit = max(FLOOR_SECONDS, SPREAD × median(successful times))
       limit = max(limit, GOOD_SLACK × t)   for a candidate of the same kind as one of the
                                             TOP_KINDS fittest kinds, t the time of its best

   A candidate that runs :data:`SPREAD` times longer than the typical successful candidate is
   stopped. The median, not a high quantile, because the times are heavy-tailed (in the Large
   space a third of the candidates take 10-1000 times the median), so a high quantile is itself
   "far longer". The second line is SMAC's adaptive capping turned round for a quality
   objective: what the fittest candidates needed is what their kind may take. A *kind* is the
   set of algorithms a tree combines (RSML over CDN over LogisticRegression); the children of a
   good candidate mostly keep it;
3. the time left before the search's deadline (the engine applies that one).

Slow but excellent candidates are not locked out, for two reasons written into the rule: once a
slow candidate (a 300-tree random forest on yeast) is among the fittest, its kind gets
:data:`GOOD_SLACK` × its time, so its variants can be refined; and every
:data:`PROBE_EVERY`-th candidate runs under the hard cap alone (a *probe*), so slow kinds are
still tried and, when they prove good, earn their time through the second line. The
protection is per kind on purpose: one lucky slow candidate must not lift the limit of every
other candidate back to the hard cap. Times are kept per fidelity level, because a candidate on a 1/3 subsample or an
early multi-fidelity period is faster than on the full data: a new level starts at the hard
cap. A candidate stopped below the hard cap counts as *capped*; the worker-seconds it could
still have used under the hard cap count as *saved* (an upper bound), and ``inspect`` shows both.
Under an adaptive limit, a candidate whose algorithms the run has seen run past that limit
again and again is not started at all (:mod:`ggp_automl.search.runtime`); probes never are skipped.
Nor is, under an adaptive limit, a candidate the cost model (:mod:`ggp_automl.search.cost_model`, learned
from the run's times) predicts above that limit (its predicted median): it decides only where the adaptive limit,
itself a function of measured times, is in force.

**The end of the search** (:meth:`TimeKeeper.search_end`): at ``search_fraction`` (85 %) of
the budget, or earlier when the best candidates are so slow that re-evaluating them and
refitting the best needs more than the remaining 15 % (or than :data:`MIN_FINAL_RESERVE`);
never before half of the 85 %.
**The final stage never starts work that cannot end before the budget does** (issue 9: a run
whose candidates had all failed refit one with 1.25 × the hard cap and took 59 s of a 30 s
budget). :meth:`TimeKeeper.final_plan` re-evaluates the candidates in order of search fitness,
as many as their measured times allow before the refit's reserve of the slowest one chosen —
any of them may win, and the winner's refit must have its time (issue 25) — a time not measured on the full view
counting as the cost model's upper prediction on the final split (``SearchLoop._planned_wall``), else the hard cap; when not even the best one fits, none is re-evaluated and the search's
best goes straight to the refit, because a model that was not re-evaluated beats no model — or,
when only its re-evaluation fits in the time left, it alone is re-evaluated, since the
re-evaluation's fitted model is returned when no refit succeeds (:mod:`ggp_automl.search.finish`).
The refit (:meth:`TimeKeeper.refit_timeout`) gets the time left, less what measuring that kept
model on the test set needs (:meth:`TimeKeeper.test_reserve`), and is not started when that is
less than the candidate's measured time (it fits more rows than it was measured on, so it could
not end) or than :data:`MIN_REFIT_SECONDS`.
**Ensembles** (``refits`` > 1: ``--ensemble``, DivBO, EO's slots): the final stage is planned for
the members too — the best ``refits`` candidates' share of the workers for their re-evaluation
and for their refits, side by side (:meth:`TimeKeeper.refit_wall`) — so the search ends earlier
by what the ensemble will cost, and the re-evaluated pool is large enough to select from.
"""
from __future__ import annotations

import threading

import numpy as np

from .cost_model import CostModel
from .runtime import RuntimeScreen

#: the hard cap, when ``--eval-timeout`` is not given: this share of the budget
EVAL_TIMEOUT_SHARE = 0.1
#: adaptive limits start after this many successful evaluations at a fidelity level
MIN_OBSERVATIONS = 10
#: ... allow this many times the median successful time ...
SPREAD = 10.0
#: ... and, for the kinds of the TOP_KINDS fittest candidates, this many times their time ...
GOOD_SLACK = 3.0
TOP_KINDS = 3
#: ... and never less than this
FLOOR_SECONDS = 3.0
#: every PROBE_EVERY-th candidate runs under the hard cap alone (in the Large space about one
#: probe in three runs to the cap, so probes cost about 1.5 % of the candidates' hard caps)
PROBE_EVERY = 20
#: a re-evaluation at the end is planned at this many times the candidate's measured time
REEVAL_MARGIN = 1.2
#: the refit on all the training data (1.25x the learning rows) is planned at this many times
#: the winner's measured time
REFIT_FACTOR = 1.5
#: the search always gets at least this share of its planned time
MIN_SEARCH_SHARE = 0.5
#: the fewest seconds a final re-evaluation or refit is planned at
MIN_FINAL_SECONDS = 5.0
#: a refit is not started with less time left than this (a process start and a pickled model
#: coming back take a few tenths of a second)
MIN_REFIT_SECONDS = 0.5
#: scoring the final re-evaluation's kept model on the test set (when the refit fails) is planned at this
#: many times its measured prediction time per row, plus MIN_REFIT_SECONDS
TEST_MARGIN = 2.0
#: the final stage keeps at least this many seconds, so that a short budget (15 % of 5 s is
#: 0.75 s) still leaves time to refit a fast winner
MIN_FINAL_RESERVE = 2.0


class TimeKeeper:
    """Budget rules of one run; its counters are part of the checkpoint."""

    def __init__(self, budget: float, search_fraction: float = 0.85, eval_timeout: float | None = None,
                 adaptive: bool = True, workers: int = 1, refits: int = 1):
        self.budget = float(budget)
        #: candidates the end re-evaluates and refits at least: the winner, or an ensemble's members
        self.refits = int(refits)
        self.search_fraction = float(search_fraction)
        self.hard_cap = float(eval_timeout) if eval_timeout else max(EVAL_TIMEOUT_SHARE * self.budget,
                                                                     FLOOR_SECONDS)
        self.hard_cap_source = "--eval-timeout" if eval_timeout else f"{EVAL_TIMEOUT_SHARE:.0%} of the budget"
        self.adaptive = bool(adaptive)
        self.workers = int(workers)
        #: fidelity level -> wall times of the evaluations that ended with a fitness
        self.times: dict[object, list[float]] = {}
        #: fidelity level -> the fittest kinds: [(fitness, wall time, algorithms)], best first
        self.top: dict[object, list[tuple[float, float, frozenset]]] = {}
        #: the fittest full-fidelity search candidates: (fitness, wall time), best first
        self.best: list[tuple[float, float]] = []
        self.requests = 0
        self.screen = RuntimeScreen()
        self.capped = 0
        self.saved_seconds = 0.0
        self.timeouts = 0
        self._lock = threading.Lock()

    def __getstate__(self):
        state = self.__dict__.copy()
        del state["_lock"]
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._lock = threading.Lock()

    # -- per-candidate limits -------------------------------------------------------------
    def adaptive_limit(self, level: object = None, algorithms: set[str] | None = None) -> float | None:
        """The adaptive limit at ``level`` for a candidate combining ``algorithms`` (None: not enough
        observations, or adaptive limits off)."""
        with self._lock:
            times = self.times.get(level, [])
            if not self.adaptive or len(times) < MIN_OBSERVATIONS:
                return None
            limit = max(FLOOR_SECONDS, SPREAD * float(np.median(times)))
            kind = frozenset(algorithms or ())
            for _, wall, top_kind in self.top.get(level, []):
                if kind and kind == top_kind:
                    limit = max(limit, GOOD_SLACK * wall)
        return min(self.hard_cap, limit)

    @property
    def cost(self) -> CostModel:
        """The cost model, learned from this run's evaluations from the shipped prior (made on first use:
        a checkpoint of an older version resumes)."""
        if getattr(self, "_cost", None) is None:
            self._cost = CostModel.from_prior()
        return self._cost

    def assign(self, level: object = None, algorithms: set[str] = frozenset(),
               cost_features: dict | None = None) -> tuple[float, str | None]:
        """The time limit of the next candidate at ``level``, and why it should not be started at
        all (the runtime screen's verdict, else the cost model's on ``cost_features``) or None. Every
        candidate that is not a cache hit is assigned exactly once, in the order the search meets it,
        so a resumed run replays the probes."""
        with self._lock:
            self.requests += 1
            probe = self.requests % PROBE_EVERY == 0
        adaptive = None if probe else self.adaptive_limit(level, algorithms)
        if adaptive is None:
            return self.hard_cap, None
        verdict = self.screen.verdict(algorithms, adaptive) if self.adaptive else None
        if verdict is None and cost_features is not None and self.adaptive:
            verdict = self.cost.verdict(cost_features, adaptive)
        return adaptive, verdict

    def limit(self, level: object = None) -> float:
        """The time limit of the next candidate at ``level`` (counts it for the probe rule)."""
        return self.assign(level)[0]

    def observe(self, result, level: object = None, search: bool = True, algorithms: set[str] = frozenset()) -> dict:
        """Learn from one finished evaluation; returns what its log record says about its limit."""
        if search:
            self.screen.observe(algorithms, result.status, result.wall_time, result.limit)
        note = {"limit": result.limit or None}
        if result.status == "timeout":
            self.timeouts += 1
            if result.limit and result.limit < self.hard_cap - 1e-6:
                self.capped += 1
                self.saved_seconds += self.hard_cap - result.limit
                note["capped"] = True
        if result.ok and search:
            with self._lock:
                self.times.setdefault(level, []).append(float(result.wall_time))
                kind = frozenset(algorithms)
                top = [t for t in self.top.get(level, []) if t[2] != kind or t[0] >= result.fitness]
                if all(t[2] != kind for t in top):
                    top.append((float(result.fitness), float(result.wall_time), kind))
                top.sort(key=lambda t: -t[0])
                self.top[level] = top[:TOP_KINDS]
        return note

    def observe_full(self, fitness: float, wall_time: float, keep: int) -> None:
        """A full-fidelity search result: the final stage plans its time from the best ones."""
        self.best.append((float(fitness), float(wall_time)))
        self.best.sort(key=lambda fw: -fw[0])
        del self.best[keep:]

    def summary(self) -> dict:
        return {"hard_cap": round(self.hard_cap, 3), "hard_cap_source": self.hard_cap_source,
                "adaptive": self.adaptive, "timeouts": self.timeouts, "capped": self.capped,
                "saved_seconds": round(self.saved_seconds, 1), "skipped": self.screen.skipped,
                "adaptive_limits": {str(k): v for k in self.times
                                    if (v := self.adaptive_limit(k)) is not None}}

    # -- the end of the search and the final stage ----------------------------------------------
    @property
    def search_seconds(self) -> float:
        return self.budget * self.search_fraction

    def final_need(self) -> float:
        """Seconds the final stage needs for the best candidates found so far."""
        if not self.best:
            return 0.0
        walls = [w for _, w in self.best]
        workers = max(self.workers, 1)
        # one round of re-evaluations on the workers — or, for an ensemble, its members' share of them
        reevaluate = REEVAL_MARGIN * max(max(walls[:workers]), sum(walls[: self.kept]) / workers)
        # whichever of them wins the re-evaluation is refit (final_plan): the slowest one's refit
        return reevaluate + REFIT_FACTOR * self.refit_wall(sorted(walls[: self.kept], reverse=True))

    @property
    def kept(self) -> int:
        """How many of the best full-fidelity candidates' times the final stage is planned from."""
        return max(self.workers, getattr(self, "refits", 1), 1)

    def refit_wall(self, walls: list[float | None]) -> float:
        """The planned time of the end's refits (side by side on the workers), from the measured times of
        the candidates that may be refit, in the order given: the first one's, or the first ``refits``
        candidates' share of the workers. A time not measured (None) counts as the hard cap."""
        first = [self.hard_cap if w is None else w for w in walls[: max(getattr(self, "refits", 1), 1)]]
        return max(first[0] if first else 0.0, sum(first) / max(self.workers, 1))

    def search_end(self) -> float:
        """Budget seconds at which the search stops."""
        reserve = max(self.budget - self.search_seconds, self.final_need(), MIN_FINAL_RESERVE)
        return max(self.budget - reserve, MIN_SEARCH_SHARE * self.search_seconds)

    def refit_reserve(self, wall_time: float) -> float:
        return max(REFIT_FACTOR * wall_time, MIN_FINAL_SECONDS)

    def final_plan(self, walls: list[float | None], now: float) -> tuple[list[int], float]:
        """Which candidates (given best first, with their measured times; None: not measured, planned at
        the hard cap) to re-evaluate, and the deadline (budget seconds) of the re-evaluation.

        List scheduling on the workers in order of search fitness: a candidate is kept only if the
        re-evaluation of the ones kept, itself included, is planned to end before the refit's reserve
        of the slowest of them — whichever wins, its refit has its time (issue 25: a runner-up slower
        than the search's best won the re-evaluation on bibtex and could not be refit). When the first
        does not fit, the runners-up are not re-evaluated either: alone they could crown one of them
        over the search's best without a fair comparison. Then the search's best goes straight to the
        refit when that fits in the time left; when it does not but its re-evaluation does, the best
        alone is re-evaluated up to the budget's end — the model it fits is the run's (the refit, if
        one can still start, may replace it). The refits' reserve is for the winner, or an ensemble's
        ``refits`` members (:meth:`refit_wall`)."""
        measured = [self.hard_cap if w is None else float(w) for w in walls]
        free = [now] * max(self.workers, 1)
        chosen: list[int] = []
        for i, wall in enumerate(measured):
            need = max(REEVAL_MARGIN * wall, 1.0)
            k = int(np.argmin(free))
            trial = free.copy()
            trial[k] += need
            stop = self.budget - self.refit_reserve(self.refit_wall(sorted([measured[j] for j in chosen] + [wall],
                                                                           reverse=True)))
            if max(trial) <= stop:
                chosen.append(i)
                free = trial
            elif i == 0:
                break
        if chosen:
            return chosen, self.budget - self.refit_reserve(self.refit_wall(sorted((measured[j] for j in chosen),
                                                                                  reverse=True)))
        if measured and now + REFIT_FACTOR * measured[0] > self.budget \
                and now + max(REEVAL_MARGIN * measured[0], 1.0) <= self.budget:
            return [0], self.budget  # no time to refit it: its re-evaluation fits the model the run returns
        return [], max(self.budget - self.refit_reserve(self.refit_wall(measured)), now)

    def reevaluation_limit(self, wall: float | None) -> float:
        """A final re-evaluation's own limit: twice its measured time (the split is new), within the hard cap."""
        if wall is None:
            return self.hard_cap
        return min(self.hard_cap, max(2.0 * wall, MIN_FINAL_SECONDS))

    def test_reserve(self, predict_time: float, scored_rows: int, test_rows: int) -> float:
        """Seconds a refit leaves for measuring the model the run already has (fitted by the final
        re-evaluation, which predicted ``scored_rows`` rows in ``predict_time`` s) on ``test_rows`` rows."""
        if not test_rows:
            return 0.0
        return MIN_REFIT_SECONDS + TEST_MARGIN * predict_time * test_rows / max(scored_rows, 1)

    def refit_timeout(self, remaining: float, measured: float | None, keep: float = 0.0) -> float | None:
        """The refit's limit: the ``remaining`` seconds of the budget less the ``keep`` seconds the run
        still needs after it (measuring the model it already has on the test set, should the refit
        fail), or None — do not start it — when that is less than MIN_REFIT_SECONDS or than the
        candidate's ``measured`` time (None: not known), which the refit on more rows would exceed."""
        remaining -= keep
        if remaining < max(MIN_REFIT_SECONDS, measured or 0.0):
            return None
        return remaining

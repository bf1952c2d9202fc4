"""The asynchronous driver (``--mode async``): no worker waits for another.

Whenever a worker frees up it gets the next candidate at once — with screening, first a
candidate that has earned promotion to the next rung (ASHA, :mod:`ggp_automl.search.screening`),
otherwise a new one from :meth:`~ggp_automl.search.methods.base.SteadyStateMethod.ask_one`. Every
full-fidelity result on the current view is told to the method as it comes back
(:meth:`~ggp_automl.search.methods.base.SteadyStateMethod.tell_one`). A *generation* is the method's
``generation_size`` tells: it is logged and checkpointed, and it is where the data view may
change (the resample every ``resample_every`` generations, the next multi-fidelity period),
so that views change at the same points with one worker or many. A candidate already
cached on its view is told at once; a candidate whose twin is running waits for the twin's
result (neither occupies a worker). Results that come back on an old view are logged and
cached but not told: the method has moved on.

Resume after a kill. The checkpoint holds the candidates in flight at that moment.
:class:`Replay` re-creates the run from there: the restored method and rng ask for the same
candidates, and the evaluations logged after the checkpoint are fed back in the order they
finished — each to the in-flight candidate it belongs to — so the run goes on from exactly
where it was (with one worker, the same run as without the kill). A logged evaluation that
matches no candidate (the run is resumed with another number of workers) is still booked,
cached and told, its tree parsed back from its phenotype: no finished evaluation is lost,
and none is repeated, because the cache answers for it.

Asking ahead. A method whose ask is costly (BO's surrogate fit and acquisition search, TPE, EO,
DivBO: :attr:`~ggp_automl.search.methods.base.SteadyStateMethod.ask_is_costly`) must not keep a
freed worker waiting, nor the loop that would hand out promotions and log results meanwhile.
:class:`AskAhead` starts the method's next ask in a background thread as soon as a candidate it
proposed has been handed out (submitted to a worker, or answered by the cache or a twin), and the
driver waits for that thread before it does anything else with the method or the run's state (a
tell, a logged result, the next hand-out, a checkpoint, the end of the search). So the run is the
one in which that ask was made at once, where it started: the proposal for candidate k+1 is made
from the tells known once candidate k was handed out, never from those that arrive while it is
being made — a fixed rule that no timing changes, so one worker still gives one run per seed. The
proposal waits in the method's ``asked_ahead`` and so is in every checkpoint; a replay asks ahead at
the same points (in the foreground: nothing runs meanwhile), so a resume goes on exactly as before.
Cheap methods ask when a worker frees, as they always did.
"""
from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass

from ggp_automl.evaluation.candidate import EvaluationResult
from ggp_automl.evaluation.engine import DEADLINE_GRACE_SECONDS, MIN_START_SECONDS
from ggp_automl.evaluation.splits import draw_seed
from ggp_automl.gp.errors import PhenotypeError
from ggp_automl.gp.phenotype import all_parses

from .cache import base_view
from .individual import Individual
from .loop import SKIPPED, SearchLoop
from .state import new_stats, result_from_record
from .screening import Promotions

#: how long one wait for a finished candidate lasts before the loop looks at the clock again
WAIT_SECONDS = 5.0


@dataclass
class Slot:
    """One candidate on its way: the individual, the (rung) view it runs on, the rung, and
    what rebuilds that view (fidelity period, resample and its seed)."""

    individual: Individual
    key: str
    rung: int
    step: int
    resample: int = 0
    seed: int = 0
    #: the time-keeper's limit, and the runtime screen's reason not to start it (None: start it)
    limit: float | None = None
    skip: str | None = None

    @property
    def id(self) -> tuple[str, str]:
        return self.key, self.individual.phenotype


class Replay:
    """The evaluations logged after the checkpoint, served in the order they finished."""

    def __init__(self, loop: SearchLoop):
        self.records = deque(r for r in loop.restored if r.get("phase", "search") == "search")
        self.loop = loop

    def __bool__(self) -> bool:
        return bool(self.records)

    def pop_if(self, slot: Slot) -> dict | None:
        """The next logged evaluation if it is ``slot``'s (a candidate that finished at once: skipped)."""
        if self.records and (self.records[0]["split"], self.records[0]["phenotype"]) == slot.id:
            record = self.records.popleft()
            self.loop._restored.pop(slot.id, None)
            return record
        return None

    def next(self, waiting: list[Slot]) -> tuple[Slot | None, dict]:
        """The next logged evaluation and the waiting slot it belongs to (None: it matches none)."""
        record = self.records.popleft()
        self.loop._restored.pop((record["split"], record["phenotype"]), None)
        for i, slot in enumerate(waiting):
            if slot.id == (record["split"], record["phenotype"]):
                return waiting.pop(i), record
        return None, record


class AskAhead:
    """A costly method's next candidate, asked while the workers evaluate (see the module docstring).

    :meth:`start` begins the next ask (in a thread, or at once while a replay runs), :meth:`take`
    hands out the candidate asked ahead (or asks now when there is none), :meth:`settle` waits for
    the ask in progress. The driver settles before every other use of the method or of the run's
    rng, so no tell runs beside an ask and the two threads never draw from one Generator at once.
    """

    def __init__(self, method, state):
        self.method, self.st = method, state
        self.thread: threading.Thread | None = None
        self.error: BaseException | None = None
        #: asks made ahead in the background, and in the foreground (replay): for tests and benchmarks
        self.background = self.foreground = 0

    @property
    def enabled(self) -> bool:
        return bool(getattr(self.method, "ask_is_costly", False))

    def _ask(self) -> None:
        try:
            self.method.asked_ahead = self.method.ask_one(self.st.rng)
        except BaseException as exc:  # noqa: BLE001 - raised again in the driver's thread by settle()
            self.error = exc

    def start(self, background: bool) -> None:
        self.settle()
        if not background:
            self.foreground += 1
            self.method.asked_ahead = self.method.ask_one(self.st.rng)
            return
        self.background += 1
        self.thread = threading.Thread(target=self._ask, name="ggp-ask-ahead", daemon=True)
        self.thread.start()

    def settle(self, quiet: bool = False) -> None:
        """Wait for the ask in progress (if any); its exception, if it raised, is raised here (unless
        ``quiet``: the driver is already on its way out with an exception of its own)."""
        if self.thread is not None:
            self.thread.join()
            self.thread = None
        if self.error is not None:
            error, self.error = self.error, None
            if not quiet:
                raise error

    def take(self) -> Individual:
        self.settle()
        ind, self.method.asked_ahead = self.method.asked_ahead, None
        return ind if ind is not None else self.method.ask_one(self.st.rng)


class AsyncDriver:
    def __init__(self, loop: SearchLoop):
        self.loop, self.st, self.cfg = loop, loop.state, loop.config
        self.method = self.st.method
        self.running: dict[object, Slot] = {}
        #: (view, phenotype) -> slots waiting for a running twin
        self.twins: dict[tuple[str, str], list[Slot]] = {}
        self.replay = Replay(loop)
        #: candidates of the replayed past: in flight at the checkpoint, or asked since
        self.waiting: list[Slot] = []
        self.clock = self.st.elapsed  # budget time of the last event: decisions replay identically
        self.ahead = AskAhead(self.method, self.st)

    # -- the current view ------------------------------------------------------------------
    def view(self):
        key, split = self.loop.view(self.st.step)
        return key, self.loop.rungs(key, split)

    def _promotions(self, key: str, n_rungs: int) -> Promotions:
        p = self.st.promotions
        if p is None or p.view != key:
            p = self.st.promotions = Promotions(n_rungs, self.cfg.screening_eta, key)
        return p

    def _level(self, slot: Slot) -> int:
        """0 for full fidelity, negative for a screening rung (of the current view, or any rung of an old one)."""
        key, rungs = self.view()
        if base_view(slot.key) == key:
            return slot.rung - (len(rungs) - 1)
        return -1 if "|r" in slot.key else 0

    # -- starting candidates ---------------------------------------------------------------------
    def _can_start(self) -> bool:
        if self.cfg.max_generations is not None and self.st.generation >= self.cfg.max_generations:
            return False
        return bool(self.replay) or time.time() < self.loop.search_deadline() - MIN_START_SECONDS

    def _next_slot(self) -> tuple[Slot, bool]:
        """The next candidate, and whether the method was asked for it (not a promotion)."""
        self.ahead.settle()
        key, rungs = self.view()
        promoted = self._promotions(key, len(rungs)).next() if len(rungs) > 1 else None
        st = self.st
        if promoted is not None:
            ind, rung = promoted
            slot = Slot(ind.fresh(), rungs[rung][0], rung, st.step, st.resample, st.split_seed)
        else:
            ind = self.ahead.take() if self.ahead.enabled else self.method.ask_one(st.rng)
            rung = self.loop.start_rung(ind.phenotype, rungs)
            slot = Slot(ind, rungs[rung][0], rung, st.step, st.resample, st.split_seed)
        if self.st.cache.get(*slot.id) is None and not self._busy(slot.id):
            # decided as the candidate is met (not when it starts), so that a replay meets the same
            slot.limit, skipped = self.loop.start_limit(slot.individual.phenotype, (slot.step, slot.rung))
            slot.skip = None if skipped is None else skipped.reason
        return slot, promoted is None

    def _fill(self) -> None:
        # cached candidates, twins and skipped ones take no worker; while replaying (when the clock
        # does not stop it) a search that has seen its whole tiny space must not ask for ever
        asks = 0
        while len(self.running) + len(self.waiting) < self.loop.engine.workers and self._can_start():
            asks += 1
            if self.replay and asks > 10 * self.method.generation_size:
                break
            slot, asked = self._next_slot()
            self._start(slot)
            if asked and self.ahead.enabled and self._can_start():
                # the next ask starts now, from this state, while the workers evaluate (a replay: at once)
                self.ahead.start(background=not self.replay)
        if not self.replay and self.waiting:  # the replay is over: what was in flight runs now, in order
            self.ahead.settle()  # an older view's slot may add its targets to the prediction store
            slots, self.waiting = self.waiting, []
            for slot in slots:
                if self._can_start():
                    self._start(slot)

    def _busy(self, slot_id: tuple[str, str]) -> bool:
        return slot_id in self.twins or any(s.id == slot_id for s in (*self.running.values(), *self.waiting))

    def _start(self, slot: Slot) -> None:
        result = self.st.cache.get(*slot.id)
        if result is not None:
            self.loop.cached(self.st.window_stats)
            self._route(slot, result)
        elif self._busy(slot.id):
            self.twins.setdefault(slot.id, []).append(slot)
        elif slot.skip is not None:  # the runtime screen's verdict: finished at once, no worker used
            record = self.replay.pop_if(slot)
            if record is not None:
                self._finish(slot, result_from_record(record), True)
            else:
                self._finish(slot, EvaluationResult(slot.individual.phenotype, SKIPPED, 0.0, reason=slot.skip,
                                                    limit=slot.limit or 0.0), False)
        elif self.replay or self.waiting:  # behind the replayed candidates that have not started yet
            self.waiting.append(slot)
        else:
            key, split = self.loop.view(slot.step, slot.resample, slot.seed)  # an older view for a resumed slot
            rungs = self.loop.rungs(key, split, slot.seed)
            handle = self.loop.engine.submit(
                slot.individual.tree, self.loop.grammar, rungs[slot.rung][1], split_key=slot.key,
                fitness=self.cfg.fitness, random_state=self.cfg.seed, deadline=self.loop.search_deadline(),
                timeout=slot.limit)
            self.running[handle] = slot

    # -- finishing candidates ----------------------------------------------------------------------
    def _done(self) -> list[tuple[Slot, EvaluationResult | None, bool]]:
        if self.replay:
            slot, record = self.replay.next(self.waiting)
            if slot is None:
                slot = self._foreign(record)
            self.clock = float(record.get("time", self.clock))
            return [(slot, result_from_record(record), True)]
        done = self.loop.engine.wait(list(self.running), WAIT_SECONDS)
        if not done and time.time() > self.loop.search_deadline() + DEADLINE_GRACE_SECONDS:
            self.loop.engine.cancel(list(self.running))  # a cluster that does not answer: give up the rest
            return [(self.running.pop(h), None, False) for h in list(self.running)]
        return [(self.running.pop(h), r, False) for h, r in done]

    def _foreign(self, record: dict) -> Slot:
        """A logged evaluation no replayed candidate asked for: booked anyway (see the module docstring)."""
        try:
            trees = all_parses(record["phenotype"], self.st.method.variation.bound)
        except PhenotypeError:  # too many partial parses
            trees = []
        ind = Individual(trees[0], record.get("species")) if len(trees) == 1 else None
        key = record["split"]
        rung = int(key.rsplit("|r", 1)[1]) if "|r" in key else len(self.view()[1]) - 1
        return Slot(ind, key, rung, self.st.step, self.st.resample, self.st.split_seed)

    def _finish(self, slot: Slot, result: EvaluationResult | None, restored: bool) -> None:
        self.ahead.settle()  # no tell, prediction or checkpoint while the method is asking
        twins = self.twins.pop(slot.id, [])
        if result is None:  # cut by the deadline: for the search it did not happen
            return
        species = slot.individual.species if slot.individual is not None else None
        self.loop.finished(result, slot.key, "search", self.st.generation, species, self._level(slot),
                           (slot.step, slot.rung), self.st.window_stats, restored=restored)
        if not restored:
            self.clock = self.loop.now()
        self._route(slot, result)
        for twin in twins:
            self.loop.cached(self.st.window_stats)
            self._route(twin, result)

    def _route(self, slot: Slot, result: EvaluationResult) -> None:
        """Where a result goes: a lower rung's to ASHA, a full-fidelity one on this view to the method."""
        self.ahead.settle()
        key, rungs = self.view()
        if slot.individual is None or base_view(slot.key) != key:
            return  # an old view's result, or a record whose tree cannot be rebuilt: booked, not told
        if slot.rung < len(rungs) - 1:
            self._promotions(key, len(rungs)).record(slot.rung, slot.individual, result.fitness, result.ok)
            self.method.tell_screened(slot.individual.with_fitness(result.fitness, self._level(slot)))
            return
        told = slot.individual.with_fitness(result.fitness)
        self.method.tell_one(told)
        self.st.window.append(told)
        if len(self.st.window) >= self.method.generation_size:
            self._end_generation(key)

    def _end_generation(self, key: str) -> None:
        st, loop = self.st, self.loop
        loop.log_generation(st.generation, key, st.window, st.window_stats)
        st.window, st.window_stats = [], new_stats()
        period = self.method.resample_period
        resample = bool(period) and st.generation % period == 0
        if resample:
            st.resample += 1
            st.split_seed = draw_seed(st.rng)
        step = loop.period(self.clock)
        if resample or step != st.step:
            st.step = step
            st.cache.use_view(self.view()[0])
            self.method.new_view()
        if not self.replay:  # mid-replay (resumed with other workers) the state is not one to restart from
            st.in_flight = list(self.running.values()) + self.waiting + [s for ss in self.twins.values() for s in ss]
            loop.checkpoint()
            st.in_flight = []

    # -- the loop ---------------------------------------------------------------------------------
    def run(self) -> None:
        self.st.cache.use_view(self.view()[0])
        in_flight, self.st.in_flight = self.st.in_flight, []
        try:
            for slot in in_flight:
                self._start(slot)
            while True:
                self._fill()
                if not self.running and not self.replay and not self.waiting:
                    break
                for slot, result, restored in self._done():
                    self._finish(slot, result, restored)
            self.ahead.settle()  # the end of the search: the method is the final stage's
        finally:
            if self.running:  # an exception (Ctrl-C): nothing may outlive the search
                self.loop.engine.cancel(list(self.running))
            self.ahead.settle(quiet=True)  # nor an ask (a second Ctrl-C does not wait for it)


def run_async(loop: SearchLoop) -> None:
    AsyncDriver(loop).run()

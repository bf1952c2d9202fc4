"""Asking ahead (issue 25, item 7): a costly method's next ask runs in a background thread while the
workers evaluate, by a fixed rule — the proposal for candidate k+1 is made from the tells known once
candidate k was handed out — so one worker still gives one run per seed whatever the timing, no tell
ever runs beside an ask, and a checkpoint keeps the candidate asked ahead (search/asynchronous.py)."""
from __future__ import annotations

import json
import random
import threading
import time

import pytest
from ggp_automl.search import RunConfig, asynchronous, resume, start
from ggp_automl.search.individual import Individual
from ggp_automl.search.loop import SearchLoop, SearchState
from ggp_automl.search.methods.base import SteadyStateMethod, by_rank
from ggp_automl.search.methods.bo import BO
from ggp_automl.search.methods.tpe import TPE
from ggp_automl.search.run import search
from ggp_automl.search.rundir import RunDirectory

from .test_search import FakeEngine, Killed, _loop, data, fake_world, small  # noqa: F401 - fixtures

AHEAD = "ggp-ask-ahead"


class JitteryEngine(FakeEngine):
    """The fake engine, with a result that takes ``delay()`` seconds to come back: the background ask is
    sometimes still running when it does, sometimes long done."""

    def __init__(self, delay=lambda: 0.0, **kwargs):
        super().__init__(**kwargs)
        self.delay = delay

    def wait(self, handles, timeout=None):
        time.sleep(self.delay())
        return super().wait(handles, timeout)


def jitter(most: float):
    draws = random.Random()  # unseeded on purpose: the timing must not matter
    return lambda: draws.uniform(0.0, most)


class SlowAsk(SteadyStateMethod):
    """A costly method that notes every call made while it is asking, the thread of each ask, and how
    many tells each ask had seen (its proposals do not depend on them, the protocol is what is checked)."""

    name = "slow-ask"
    ask_is_costly = True

    def __init__(self, config, pause: float = 0.004):
        super().__init__(config)
        self.pause = pause
        self.asking = False
        self.clashes: list[str] = []
        self.threads: list[str] = []
        self.seen: list[int] = []
        self.told: list[Individual] = []

    def _check(self, call: str) -> None:
        if self.asking:
            self.clashes.append(call)

    def ask_one(self, rng):
        self._check("ask_one")
        self.asking = True
        try:
            self.threads.append(threading.current_thread().name)
            self.seen.append(len(self.told))
            time.sleep(self.pause)  # long enough for the driver to get ahead of it, were it allowed to
            return Individual(self.variation.generator().grow(rng, self.config.max_depth))
        finally:
            self.asking = False

    def tell_one(self, evaluated):
        self._check("tell_one")
        time.sleep(self.pause / 4)
        self.told.append(evaluated)

    def tell_screened(self, evaluated):
        self._check("tell_screened")

    def new_view(self):
        self._check("new_view")

    def stats(self):
        self._check("stats")
        return super().stats()

    def archive(self):
        self._check("archive")
        return by_rank(self.told)[: self.config.archive_size]


def _slow_run(small, data, engine, **config):  # noqa: F811
    config = RunConfig(**{"method": "random", "population": 8, "batch_size": 8, "max_generations": 5,
                          "budget_seconds": 3600, "seed": 11, "mode": "async", **config})
    method = SlowAsk(config).attach(small, data.train.meta)
    loop = SearchLoop(config=config, grammar=small, train=data.train, engine=engine,
                      state=SearchState.initial(method, config, engine.workers))
    search(loop)
    return method


@pytest.mark.parametrize("workers", [1, 3])
def test_a_costly_ask_runs_in_the_background_and_never_beside_another_call(small, data, workers):  # noqa: F811
    for _ in range(2):  # two timings: results that wait for the ask, and results slower than it
        engine = JitteryEngine(jitter(0.01), workers=workers, order="lifo")
        method = _slow_run(small, data, engine)
        assert method.clashes == []
        assert len(method.told) >= 40
        # the first ask is made when no candidate is out yet; every later one is made ahead
        assert method.threads[0] == "MainThread" and set(method.threads[1:]) == {AHEAD}


def test_the_run_is_the_one_where_each_ask_ahead_was_made_at_once(small, data, monkeypatch):  # noqa: F811
    """In the background or in the foreground (as a replay asks), the same asks see the same tells and
    propose the same candidates: with one worker the proposal for candidate k+1 sees the results of
    candidates 1..k-1, never k's, however long k's evaluation takes."""
    runs, start_ahead = [], asynchronous.AskAhead.start
    for background in (True, False):
        if not background:
            monkeypatch.setattr(asynchronous.AskAhead, "start", lambda self, background: start_ahead(self, False))
        engine = JitteryEngine(jitter(0.01))
        method = _slow_run(small, data, engine)
        runs.append((engine.calls, method.seen, [(i.phenotype, i.score) for i in method.told]))
        assert set(method.threads[1:]) == ({AHEAD} if background else {"MainThread"})
    assert runs[0] == runs[1]
    seen = runs[0][1]
    assert seen[:3] == [0, 0, 1]  # candidates 1 and 2 are asked before any result, 3 after candidate 1's
    assert seen == sorted(seen) and seen[-1] < len(runs[0][2])  # the last ask did not see the last result


def test_an_error_in_an_ask_ahead_reaches_the_driver(small, data):  # noqa: F811
    class Failing(SlowAsk):
        def ask_one(self, rng):
            if len(self.threads) == 5:
                raise RuntimeError("the surrogate broke")
            return super().ask_one(rng)

    config = RunConfig(method="random", population=8, batch_size=8, max_generations=5, budget_seconds=3600,
                       seed=11, mode="async")
    engine = FakeEngine()
    method = Failing(config).attach(small, data.train.meta)
    loop = SearchLoop(config=config, grammar=small, train=data.train, engine=engine,
                      state=SearchState.initial(method, config, 1))
    with pytest.raises(RuntimeError, match="the surrogate broke"):
        search(loop)
    assert method.clashes == []


@pytest.mark.parametrize("method", ["random", "ggp", "pbil"])
def test_cheap_methods_ask_when_a_worker_frees_as_before(small, data, method, monkeypatch):  # noqa: F811
    started = []
    monkeypatch.setattr(asynchronous.AskAhead, "start", lambda self, background: started.append(background))
    config = RunConfig(method=method, population=8, batch_size=8, max_generations=3, budget_seconds=3600, seed=3,
                       mode="async")
    loop = _loop(config, small, data, FakeEngine(workers=2))
    search(loop)
    assert started == [] and loop.state.method.asked_ahead is None


def _threads_of(monkeypatch, cls) -> list[str]:
    """Record the thread of every ask of ``cls``."""
    threads: list[str] = []
    ask = cls.ask_one

    def recording(self, rng):
        threads.append(threading.current_thread().name)
        return ask(self, rng)
    monkeypatch.setattr(cls, "ask_one", recording)
    return threads


@pytest.mark.parametrize("method", ["bo", "tpe"])
def test_one_worker_same_seed_same_evaluations_whatever_the_timing(small, data, tmp_path, fake_world,  # noqa: F811
                                                                   monkeypatch, method):
    """BO and TPE ask ahead; two runs of one seed log the same evaluations (evaluations.jsonl) and the
    same method report, whether each result came back before its successor's ask was done or long after."""
    config = (RunConfig(method="bo", max_generations=4, budget_seconds=3600, seed=5, mode="async",
                        method_params={"population": 6, "initial": 4, "challengers": 50}) if method == "bo" else
              RunConfig(method="tpe", max_generations=4, budget_seconds=3600, seed=7, mode="async",
                        method_params={"population": 6, "n_startup_trials": 5}))
    threads = _threads_of(monkeypatch, BO if method == "bo" else TPE)
    runs = []
    for most in (0.0, 0.3):
        monkeypatch.setattr("ggp_automl.search.run.make_engine",
                            lambda workers, limits, scheduler=None, plugins=(), most=most:
                            JitteryEngine(jitter(most), limits=limits))
        start(config, small, data, tmp_path / f"run{most}", argv=[])
        run = RunDirectory(tmp_path / f"run{most}")
        final = json.loads((run.path / "final.json").read_text())
        runs.append(([(r["split"], r["phenotype"], r["fitness"]) for r in run.evaluations()],
                     final["method_report"], final["winner"]["phenotype"]))
    assert runs[0] == runs[1] and len(runs[0][0]) >= 24
    assert threads.count(AHEAD) >= 2 * 20  # every ask but each run's first was made ahead


def test_the_checkpoint_keeps_the_candidate_asked_ahead(small, data, tmp_path, fake_world):  # noqa: F811
    """Killed right after the first checkpoint: the resumed run starts with the candidate that was asked
    ahead before the kill, and the whole is the uninterrupted run."""
    config = RunConfig(method="tpe", method_params={"population": 8, "n_startup_trials": 4}, max_generations=4,
                       budget_seconds=3600, seed=3, mode="async")
    start(config, small, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"kill_after": 8}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "killed", argv=[])
    killed = fake_world.engines[-1].calls
    state = RunDirectory(tmp_path / "killed").load_checkpoint()
    assert state.generation == 1 and state.method.asked_ahead is not None
    fake_world.engine_kwargs = {}
    resume(tmp_path / "killed")
    resumed = fake_world.engines[-1].calls
    assert resumed[0][1] == state.method.asked_ahead.phenotype
    assert killed + resumed == whole

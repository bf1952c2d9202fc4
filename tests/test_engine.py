"""Evaluation engines: aligned, reproducible results; callbacks in the calling thread; deadlines; Dask."""
from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from ggp_automl.evaluation.candidate import Split
from ggp_automl.evaluation.default_data import META, load_default
from ggp_automl.evaluation.engine import MIN_START_SECONDS, DaskEngine, EngineError, LocalEngine, make_engine
from ggp_automl.evaluation.isolation import ERROR, OK, TIMEOUT, Limits
from ggp_automl.evaluation.splits import holdout_split
from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.phenotype import parse_phenotype
from ggp_automl.spaces.registry import load_all
from .conftest import GRAMMARS

LIMITS = Limits(timeout=60.0, memory_bytes=1024 * 2**20)
FAST = "BR NaiveBayes PCut1"
#: about 11 s on the development machine (12 label sets x 256 trees): always cut by a short limit
SLOW = "RAkEL 12 3 0 1 RandomForest 256 32 20 PCut1"

load_all()  # imported once here, not inside a deadline-bound first evaluation


@pytest.fixture(scope="module")
def grammar():
    return load_grammar(GRAMMARS / "small.bnf")


@pytest.fixture(scope="module")
def bound(grammar):
    return grammar.bind(META)


@pytest.fixture(scope="module")
def split():
    X, Y = load_default()
    learn, valid = holdout_split(Y, np.random.default_rng(0))
    return Split(X[learn], Y[learn], X[valid], Y[valid])


@pytest.fixture(scope="module")
def trees(bound):
    """Cheap random candidates of the Small space (no forests or networks: those take seconds)."""
    gen, rng, out = TreeGenerator(bound), np.random.default_rng(3), [parse_phenotype(FAST, bound)]
    while len(out) < 5:
        tree = gen.grow(rng)
        if not any(slow in tree.phenotype for slow in ("RandomForest", "BPNN")):
            out.append(tree)
    return out


@pytest.fixture(scope="module")
def local_results(trees, grammar, split):
    with LocalEngine(workers=1, limits=LIMITS) as engine:
        return engine.evaluate(trees, grammar, split, split_key="s0", random_state=7)


def comparable(r):
    return r.phenotype, r.status, r.fitness, r.measures


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, i, result):
        self.calls.append((i, result.phenotype, threading.get_ident()))


def test_results_are_aligned_and_equal_for_one_and_two_workers(trees, grammar, split, local_results):
    assert [r.phenotype for r in local_results] == [t.phenotype for t in trees]
    assert all(r.status == OK and r.fitness > 0 for r in local_results), local_results
    recorder = Recorder()
    with LocalEngine(workers=2, limits=LIMITS) as engine:
        assert engine.workers == 2
        parallel = engine.evaluate(trees, grammar, split, split_key="s0", random_state=7, on_result=recorder)
    assert [comparable(r) for r in parallel] == [comparable(r) for r in local_results]
    assert sorted(i for i, _, _ in recorder.calls) == list(range(len(trees)))          # once per result
    assert all(ph == trees[i].phenotype for i, ph, _ in recorder.calls)
    assert {ident for _, _, ident in recorder.calls} == {threading.get_ident()}        # the calling thread


@pytest.mark.parametrize("workers", [1, 2])
def test_deadline_cuts_and_skips_candidates_and_the_call_ends_on_time(bound, grammar, split, workers):
    trees = [parse_phenotype(p, bound) for p in (FAST, SLOW, SLOW, FAST)]
    recorder = Recorder()
    deadline = time.time() + 2.0
    with LocalEngine(workers=workers, limits=LIMITS) as engine:
        results = engine.evaluate(trees, grammar, split, split_key="s0", deadline=deadline, on_result=recorder)
        assert time.time() <= deadline + 1.0
    assert results[0] is not None and results[0].status == OK
    assert results[1:] == [None, None, None]  # slow ones cut by the deadline, the last one never started
    assert [i for i, _, _ in recorder.calls] == [0]


def test_no_candidate_starts_with_less_than_the_minimum_left(trees, grammar, split):
    recorder = Recorder()
    t0 = time.perf_counter()
    with LocalEngine(workers=2, limits=LIMITS) as engine:
        results = engine.evaluate(trees, grammar, split, split_key="s0", deadline=time.time() + MIN_START_SECONDS / 2,
                                  on_result=recorder)
    assert results == [None] * len(trees) and recorder.calls == []
    assert time.perf_counter() - t0 < 0.5


def test_own_time_limit_is_a_result_not_a_skipped_candidate(bound, grammar, split):
    recorder = Recorder()
    with LocalEngine(workers=1, limits=Limits(timeout=1.0)) as engine:
        [result] = engine.evaluate([parse_phenotype(SLOW, bound)], grammar, split, split_key="s0",
                                   deadline=time.time() + 60, on_result=recorder)
    assert result.status == TIMEOUT and result.fitness == 0.0 and result.wall_time < 3.0
    assert [i for i, _, _ in recorder.calls] == [0]


@pytest.fixture(scope="module")
def broken_grammar():
    """A grammar whose second algorithm has no estimator: its candidates fail inside the child."""
    return parse_grammar("<Start> ::= BR <slc> <t>\n<slc> ::= NaiveBayes | NoSuchAlgorithm\n"
                         "<t> ::= PCut1    #@ type=cat default=PCut1\n", "broken.bnf")


def test_a_failing_candidate_is_an_error_result_not_an_exception(broken_grammar, split):
    bound = broken_grammar.bind(META)
    trees = [parse_phenotype(p, bound) for p in ("BR NoSuchAlgorithm PCut1", "BR NaiveBayes PCut1")]
    with LocalEngine(workers=2, limits=LIMITS) as engine:
        bad, good = engine.evaluate(trees, broken_grammar, split, split_key="s0")
        with pytest.raises(ValueError, match="unknown fitness"):
            engine.evaluate(trees, broken_grammar, split, split_key="s0", fitness="no-such-fitness")
    assert bad.status == ERROR and bad.fitness == 0.0 and "NoSuchAlgorithm" in bad.reason
    assert good.status == OK


def test_make_engine_and_defaults():
    with make_engine(3, LIMITS) as engine:
        assert isinstance(engine, LocalEngine) and engine.workers == 3 and engine.limits == LIMITS
    assert LocalEngine().workers >= 1
    with pytest.raises(ValueError):
        LocalEngine(0)


# -- Dask ----------------------------------------------------------------------------------------------

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    import logging

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as c:
        yield c


def _daemonic() -> bool:
    import multiprocessing

    return bool(multiprocessing.current_process()._config.get("daemon"))


def test_dask_gives_the_same_results_as_local(client, trees, grammar, split, local_results):
    # The pitfall this engine handles: worker processes are daemonic, and daemonic processes
    # may not start children with multiprocessing.
    assert all(client.run(_daemonic).values())
    engine = DaskEngine(client, LIMITS)
    assert engine.workers == 2
    recorder = Recorder()
    results = engine.evaluate(trees, grammar, split, split_key="s0", random_state=7, on_result=recorder)
    assert [comparable(r) for r in results] == [comparable(r) for r in local_results]
    assert sorted(i for i, _, _ in recorder.calls) == list(range(len(trees)))
    assert {ident for _, _, ident in recorder.calls} == {threading.get_ident()}
    # the split is shipped once per key, the grammar once
    scattered = engine._split_future.key, engine._grammars[id(grammar)][1].key
    engine.evaluate(trees[:2], grammar, split, split_key="s0", random_state=7)
    assert (engine._split_future.key, engine._grammars[id(grammar)][1].key) == scattered
    engine.evaluate(trees[:1], grammar, split, split_key="s1", random_state=7)
    assert engine._split_future.key != scattered[0]
    engine.close()
    assert client.status == "running"  # a client passed in is the caller's to close


def test_dask_enforces_the_time_limit_and_reports_failures_on_the_worker(client, broken_grammar, bound, grammar,
                                                                         split):
    engine = DaskEngine(client, Limits(timeout=1.0))
    t0 = time.perf_counter()
    [slow] = engine.evaluate([parse_phenotype(SLOW, bound)], grammar, split, split_key="s0")
    assert slow.status == TIMEOUT and "time limit" in slow.reason and slow.wall_time < 3.0
    assert time.perf_counter() - t0 < 5.0
    broken = broken_grammar.bind(META)
    [bad] = engine.evaluate([parse_phenotype("BR NoSuchAlgorithm PCut1", broken)], broken_grammar, split,
                            split_key="s0")
    assert bad.status == ERROR and "NoSuchAlgorithm" in bad.reason


def test_dask_deadline_is_applied_on_the_worker(client, bound, grammar, split):
    engine = DaskEngine(client, LIMITS)
    trees = [parse_phenotype(p, bound) for p in (SLOW, SLOW, FAST)]
    deadline = time.time() + 2.0
    results = engine.evaluate(trees, grammar, split, split_key="s0", deadline=deadline)
    assert time.time() <= deadline + 1.5
    assert results == [None, None, None]  # both workers busy with cut candidates until the deadline


def test_unreachable_scheduler_is_a_clear_error_quickly():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with pytest.raises(EngineError, match=f"cannot reach the Dask scheduler at 'tcp://127.0.0.1:{port}'"):
        DaskEngine(f"tcp://127.0.0.1:{port}", connect_timeout=1.0)
    assert time.perf_counter() - t0 < 5.0
    assert issubclass(EngineError, ConnectionError)


@pytest.mark.parametrize("address, ok", [
    ("tcp://127.0.0.1:8786", True), ("10.0.0.5:8786", True), ("tcp://[::1]:8786", True), ("tls://a.b-c:1", True),
    ("not a url", False), ("tcp://host", False), ("tcp://h:0", False), ("tcp://h:99999", False),
    ("http://h:80", False), (" tcp://h:1", False), ("tcp://h:1/x", False), ("", False),
])
def test_scheduler_addresses_are_checked_before_connecting(address, ok):
    from ggp_automl.evaluation.engine import check_scheduler_address
    from ggp_automl.search import RunConfig

    if ok:
        assert check_scheduler_address(address) == address
        RunConfig(scheduler=address)
    else:
        with pytest.raises(ValueError, match="expected a Dask scheduler address such as tcp://10.0.0.5:8786"):
            check_scheduler_address(address)
        with pytest.raises(ValueError, match="expected a Dask scheduler address"):
            RunConfig(scheduler=address)
        t0 = time.perf_counter()
        with pytest.raises(ValueError):
            DaskEngine(address)
        assert time.perf_counter() - t0 < 1.0

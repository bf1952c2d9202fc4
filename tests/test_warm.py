"""The warm child (evaluation/warm.py): reused while healthy, replaced after anything that could
leave it in another state than a fresh one, and every fault still comes back as a status."""
from __future__ import annotations

import os
import random
import signal
import threading
import time

import numpy as np
from ggp_automl.evaluation import warm
from ggp_automl.evaluation.isolation import (
    CRASHED,
    ERROR,
    MEMORY,
    OK,
    TIMEOUT,
    Limits,
    kill_running_children,
)
from ggp_automl.evaluation.warm import run_warm
from ggp_automl.spaces.deadline import check_deadline

LIMITS = Limits(timeout=10, memory_bytes=300 * 2 ** 20)


def _pid():
    return os.getpid()


def _raise():
    raise KeyError("no such thing")


def _hang():
    time.sleep(60)


def _cooperative_overrun():
    while True:
        time.sleep(0.01)
        check_deadline()


def _allocate():
    return len(bytearray(2 * 2 ** 30))


def _crash():
    os.kill(os.getpid(), signal.SIGSEGV)


def _draws():
    return float(np.random.random()), random.random()


def _sum(array, extra):
    return float(array.sum()) + extra


def _write(array):
    array[0] = 99.0


def test_reused_while_healthy():
    first = run_warm(_pid, (), LIMITS)
    second = run_warm(_pid, (), LIMITS)
    assert first.status == second.status == OK
    assert first.value == second.value != os.getpid()


def test_an_exception_is_an_error_and_the_child_stays():
    pid = run_warm(_pid, (), LIMITS).value
    out = run_warm(_raise, (), LIMITS)
    assert out.status == ERROR and "KeyError" in out.reason and "_raise" in out.reason
    assert run_warm(_pid, (), LIMITS).value == pid


def test_a_hang_is_killed_and_replaced():
    pid = run_warm(_pid, (), LIMITS).value
    out = run_warm(_hang, (), Limits(timeout=1.0))
    assert out.status == TIMEOUT and "killed" in out.reason and out.wall_time < 5
    after = run_warm(_pid, (), LIMITS)
    assert after.status == OK and after.value != pid


def test_the_cooperative_deadline_stops_a_candidate_and_keeps_the_child():
    pid = run_warm(_pid, (), LIMITS).value
    out = run_warm(_cooperative_overrun, (), Limits(timeout=0.5))
    assert out.status == TIMEOUT
    # the child's own deadline and the parent's kill fall due together; on a busy machine the kill may win
    stopped_itself = "deadline" in out.reason
    assert stopped_itself or "killed" in out.reason
    assert (run_warm(_pid, (), LIMITS).value == pid) == stopped_itself


def test_memory_beyond_the_limit_then_a_fresh_child():
    pid = run_warm(_pid, (), LIMITS).value
    out = run_warm(_allocate, (), LIMITS)
    assert out.status == MEMORY
    after = run_warm(_pid, (), LIMITS)
    assert after.status == OK and after.value != pid


def test_a_crash_is_crashed_then_a_fresh_child():
    out = run_warm(_crash, (), LIMITS)
    assert out.status == CRASHED and "SIGSEGV" in out.reason
    assert run_warm(_pid, (), LIMITS).status == OK


def test_every_candidate_sees_the_same_global_random_states():
    """As a fresh fork would: a library drawing from the global generators gets the same numbers."""
    first, second = run_warm(_draws, (), LIMITS), run_warm(_draws, (), LIMITS)
    assert first.status == OK and first.value == second.value


def test_shared_objects_are_inherited_read_only_and_a_new_one_forks_anew():
    data = np.arange(10.0)
    first = run_warm(_sum, (data, 1.0), LIMITS, shared=(0,))
    pid = run_warm(_pid, (), LIMITS).value
    again = run_warm(_sum, (data, 2.0), LIMITS, shared=(0,))
    assert (first.value, again.value) == (46.0, 47.0)
    assert run_warm(_pid, (), LIMITS).value == pid  # known: the same child
    written = run_warm(_write, (data,), LIMITS, shared=(0,))
    assert written.status == ERROR and "read-only" in written.reason
    assert data[0] == 0.0
    other = np.ones(4)  # registered after the child was forked: a new child inherits it
    assert run_warm(_sum, (other, 0.0), LIMITS, shared=(0,)).value == 4.0
    assert run_warm(_pid, (), LIMITS).value != pid


def test_killed_with_the_others_on_ctrl_c_and_replaced():
    pid = run_warm(_pid, (), LIMITS).value
    kill_running_children()  # what an interrupted search calls: idle warm children die too
    time.sleep(0.2)
    after = run_warm(_pid, (), LIMITS)
    assert after.status == OK and after.value != pid


def test_one_child_per_thread():
    pids = []

    def work():
        pids.append(run_warm(_pid, (), LIMITS).value)
        pids.append(run_warm(_pid, (), LIMITS).value)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(pids)) == 2 and pids.count(pids[0]) == 2


def test_replaced_after_max_tasks(monkeypatch):
    monkeypatch.setattr(warm, "MAX_TASKS", 2)
    warm._retire()
    pids = [run_warm(_pid, (), LIMITS).value for _ in range(4)]
    assert pids[0] == pids[1] != pids[2] == pids[3]


def test_evaluate_candidate_gives_the_same_result_warm_or_fresh():
    """The same candidates, the same measures, whichever way they run."""
    from ggp_automl.evaluation.candidate import Split, evaluate_candidate
    from ggp_automl.evaluation.default_data import META, load_default
    from ggp_automl.evaluation.splits import holdout_split
    from ggp_automl.gp.bnf_parser import load_grammar
    from ggp_automl.gp.generate import TreeGenerator

    from .conftest import GRAMMARS

    grammar = load_grammar(GRAMMARS / "small.bnf")
    X, Y = load_default()
    learn, valid = holdout_split(Y, np.random.default_rng(0))
    split = Split(X[learn], Y[learn], X[valid], Y[valid])
    generator, rng, trees = TreeGenerator(grammar.bind(META)), np.random.default_rng(3), []
    while len(trees) < 4:
        tree = generator.grow(rng)
        if not any(slow in tree.phenotype for slow in ("RandomForest", "BPNN")):
            trees.append(tree)
    warm_results = [evaluate_candidate(t, grammar, split, Limits(timeout=20)) for t in trees]
    fresh = [evaluate_candidate(t, grammar, split, Limits(timeout=20, warm=False)) for t in trees]
    assert [r.status for r in warm_results] == [r.status for r in fresh]
    assert [r.measures for r in warm_results] == [r.measures for r in fresh]

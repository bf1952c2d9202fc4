"""The isolated runner: every way a candidate can go wrong comes back as a status."""
from __future__ import annotations

import os
import time

import numpy as np
import psutil
import pytest

from ggp_automl.evaluation.isolation import CRASHED, ERROR, MEMORY, OK, TIMEOUT, Limits, run_isolated

LIMITS = Limits(timeout=2.0, memory_bytes=400 * 2**20)


def double(x):
    return 2 * x


def raises():
    raise ValueError("bad hyper-parameter")


def sleeps_forever():
    while True:
        time.sleep(10)


def allocates_gradually():
    chunks = []
    while True:
        chunks.append(np.ones(50 * 2**20 // 8))  # 50 MB at a time, touched


def allocates_at_once():
    return float(np.ones(4 * 2**30 // 8).sum())


def aborts():
    os.abort()


def spawns_a_sleeping_grandchild():
    import subprocess

    subprocess.Popen(["sleep", "60"])
    time.sleep(60)


def thread_count():
    from threadpoolctl import threadpool_info

    return max(p["num_threads"] for p in threadpool_info()), os.environ.get("OMP_NUM_THREADS")


def no_leftovers(before: set[int] = frozenset()):
    """Children started since ``before`` (pids) that are still alive, and zombies.

    Processes that existed before the call (e.g. multiprocessing's resource tracker, started
    once per session by an earlier test's Dask cluster) are not the candidate's leftovers.
    """
    me = psutil.Process()
    children = [c for c in me.children(recursive=True) if c.pid not in before]
    return [c for c in children if c.status() != psutil.STATUS_ZOMBIE], \
        [c for c in children if c.status() == psutil.STATUS_ZOMBIE]


def existing_children() -> set[int]:
    return {c.pid for c in psutil.Process().children(recursive=True)}


# Memory cases get a longer time limit so that a loaded machine cannot turn them into timeouts.
ROOMY = Limits(timeout=15.0, memory_bytes=400 * 2**20)


@pytest.mark.parametrize("fn, limits, status, fragment", [
    (raises, LIMITS, ERROR, "ValueError: bad hyper-parameter"),
    (sleeps_forever, LIMITS, TIMEOUT, "time limit"),
    (allocates_gradually, ROOMY, MEMORY, "emory"),  # RLIMIT_AS or the watchdog, whichever first
    (allocates_at_once, ROOMY, MEMORY, "MemoryError"),
    (aborts, LIMITS, CRASHED, "SIGABRT"),
    (spawns_a_sleeping_grandchild, LIMITS, TIMEOUT, "time limit"),
])
def test_failures_come_back_as_statuses_within_the_limit(fn, limits, status, fragment):
    before = existing_children()
    t0 = time.perf_counter()
    outcome = run_isolated(fn, (), limits)
    elapsed = time.perf_counter() - t0
    assert outcome.status == status, outcome
    assert fragment in outcome.reason
    assert elapsed <= limits.timeout + 2.0
    alive, zombies = no_leftovers(before)
    assert not alive and not zombies, (alive, zombies)


def test_result_and_low_overhead():
    assert run_isolated(double, (21,), LIMITS).value == 42
    t0 = time.perf_counter()
    for _ in range(10):
        assert run_isolated(double, (1,), LIMITS).status == OK
    assert (time.perf_counter() - t0) / 10 < 0.25  # generous: the benchmark measures the real figure


def test_thread_pools_are_limited_to_one():
    outcome = run_isolated(thread_count, (), LIMITS)
    assert outcome.value == (1, "1")


def open_files() -> list[str]:
    return [os.readlink(f"/proc/self/fd/{fd}") for fd in os.listdir("/proc/self/fd")
            if os.path.islink(f"/proc/self/fd/{fd}")]


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="needs /proc")
def test_a_worker_does_not_hold_its_parents_run_directory_lock(tmp_path):
    """flock is shared by a forked child: a worker that outlived a killed search would keep the run locked."""
    from ggp_automl.search.lock import LOCK_NAME, RunLock

    with RunLock(tmp_path):
        assert str(tmp_path / LOCK_NAME) in open_files()
        outcome = run_isolated(open_files, (), LIMITS)
    assert outcome.status == OK, outcome
    assert str(tmp_path / LOCK_NAME) not in outcome.value


def allocates_16_mb():
    return float(np.ones(16 * 2**20 // 8).sum())


def test_the_memory_limit_counts_what_the_candidate_adds_not_what_it_inherits():
    """A child starts with its parent's pages (code, libraries, the data): 150 MB more in the parent must
    not use up a 64 MB limit."""
    ballast = np.ones(150 * 2**20 // 8)
    outcome = run_isolated(allocates_16_mb, (), Limits(timeout=15.0, memory_bytes=64 * 2**20))
    assert outcome.status == OK, outcome
    assert outcome.peak_rss == 0 or outcome.peak_rss > 64 * 2**20  # the total is above the limit; the growth is not
    del ballast


def test_a_memory_limit_beyond_what_the_platform_can_set_limits_nothing():
    outcome = run_isolated(double, (2,), Limits(timeout=5.0, memory_bytes=2**80))
    assert outcome.status == OK and outcome.value == 4, outcome

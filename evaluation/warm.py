"""Candidates in a warm child process, reused while it stays healthy (issue 25's floor).

:func:`~evaluation.isolation.run_isolated` forks a fresh child for every call. That keeps every
fault of a candidate away from the search, but a fresh child starts cold: the fork copies the
page tables of a process of several hundred megabytes, and every page the candidate then touches
(the interpreter's objects, the libraries, the data) is a page fault and a copy. On Flags a
`LC ZeroR` candidate whose fit and predict take a few milliseconds in a warm process took
150 ms that way, and the run's cheapest candidates were four fifths overhead.

:func:`run_warm` keeps the isolation and drops the cold start: each thread that evaluates
candidates (a :class:`~evaluation.engine.LocalEngine` worker, a Dask worker thread) keeps one
child, forked on first use, and hands it one candidate after another over a pipe. The same limits
hold, enforced the same way: the parent kills the child's process group at the time limit or when
its resident memory has grown past the memory limit *during this candidate*; the child sets its
own address-space limit (current size + the limit) before each candidate and its cooperative
deadline (:mod:`spaces.deadline`). A child that was killed, raised ``MemoryError``, grew by more
than a quarter of the memory limit since it started (memory that a candidate leaves behind must
not count against the next), ran :data:`MAX_TASKS` candidates, or lacks an object the next
candidate needs, is ended and the next candidate gets a new one — so a candidate sees what a
fresh child would: the same data, the same global random states (restored before each
candidate; the project seeds nothing globally, a library might still draw), one BLAS thread.

Big objects (the data split, the grammar) are not sent: :func:`run_warm` registers them
(:func:`_share`) before a child is forked, and the child inherits them copy-on-write; only the
tree and a few numbers cross the pipe. The registry holds the last :data:`SHARED_OBJECTS` objects.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import random
import resource
import threading
import time
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import psutil

from ggp_automl.spaces.deadline import BudgetExceeded, set_deadline

from .isolation import (
    _LIVE,
    _LIVE_LOCK,
    ERROR,
    MEMORY,
    OK,
    TIMEOUT,
    Limits,
    Outcome,
    _group_rss,
    _kill_group,
    _thread_pools,
    death_of,
    enter_child,
    memory_reason,
    reap,
)

#: candidates one child runs before it is replaced (bounds what a slow leak can accumulate)
MAX_TASKS = 500
#: the memory watchdog counts the child's own processes every this many polls (the child itself: every poll)
GROUP_EVERY = 10
#: objects (splits, grammars) kept for children to inherit
SHARED_OBJECTS = 6

_shared: OrderedDict[int, Any] = OrderedDict()   # key -> object
_keys: dict[int, int] = {}                       # id(object) -> key, checked against _shared
_next_key = 0
_shared_lock = threading.Lock()
_local = threading.local()


@dataclass(frozen=True)
class _Ref:
    """An argument the child takes from the objects it inherited."""

    key: int


def _share(obj: Any) -> int:
    """The registry key of ``obj``, registering it (and forgetting the oldest) if it is new."""
    global _next_key
    with _shared_lock:
        key = _keys.get(id(obj))
        if key is not None and _shared.get(key) is obj:
            _shared.move_to_end(key)
            return key
        _next_key += 1
        key = _next_key
        _shared[key] = obj
        _keys[id(obj)] = key
        while len(_shared) > SHARED_OBJECTS:
            old_key, old = _shared.popitem(last=False)
            if _keys.get(id(old)) == old_key:
                del _keys[id(old)]
        return key


class _WarmChild:
    """One reusable child: its process, its end of the pipe, what it inherited, how much it has done."""

    def __init__(self, limits: Limits):
        ctx = mp.get_context("fork")
        self.conn, child_end = ctx.Pipe(duplex=True)
        with _shared_lock:
            self.known = frozenset(_shared)
        self.quiet, self.threads = limits.quiet, limits.threads
        self.proc = ctx.Process(target=_serve, args=(child_end, limits, os.getpid()), daemon=True)
        self.proc.start()
        child_end.close()
        with _LIVE_LOCK:
            _LIVE[self.proc.pid] = self.proc
        self.tasks = 0
        try:
            self.ps: psutil.Process | None = psutil.Process(self.proc.pid)
            self.start_rss = self.ps.memory_info().rss
        except psutil.Error:
            self.ps, self.start_rss = None, 0

    def suits(self, limits: Limits, keys) -> bool:
        return (self.proc.is_alive() and self.tasks < MAX_TASKS and self.quiet == limits.quiet
                and self.threads == limits.threads and all(k in self.known for k in keys))

    def rss(self, group: bool = True) -> int:
        """Resident memory of the child and (``group``) every process it started; the child alone is a
        read of one /proc file, the group a scan of every process on the machine (milliseconds)."""
        if self.ps is None:
            return 0
        if group:
            return _group_rss(self.ps)
        try:
            return self.ps.memory_info().rss
        except psutil.Error:
            return 0

    def end(self) -> None:
        _kill_group(self.proc)
        reap(self.proc)
        self.conn.close()
        with _LIVE_LOCK:
            _LIVE.pop(self.proc.pid, None)


def _serve(conn, limits: Limits, parent: int) -> None:
    """The child: set up once like an isolated child, then run candidates until told to stop."""
    enter_child(limits, parent)
    inherited = dict(_shared)
    for obj in inherited.values():
        _freeze(obj)
    np_state, py_state = np.random.get_state(), random.getstate()
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    me = psutil.Process()
    with _thread_pools().limit(limits=limits.threads):
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                os._exit(0)
            if message is None:
                os._exit(0)
            fn, args, timeout, memory_bytes = message
            args = tuple(inherited[a.key] if isinstance(a, _Ref) else a for a in args)
            np.random.set_state(np_state)
            random.setstate(py_state)
            fatal = False
            try:
                soft = me.memory_info().vms + memory_bytes
                if hard != resource.RLIM_INFINITY:
                    soft = min(soft, hard)
                resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
                set_deadline(timeout)
                value = fn(*args)
                set_deadline(None)
                conn.send((OK, value, ""))
            except MemoryError:
                fatal = True
                _send(conn, (MEMORY, None, "MemoryError: allocation beyond the memory limit"))
            except BaseException as exc:  # noqa: BLE001 - everything must come back as a status
                if isinstance(exc, BudgetExceeded):
                    _send(conn, (TIMEOUT, None, "stopped at its deadline"))
                else:
                    frame = traceback.extract_tb(exc.__traceback__)[-1]
                    where = f"{os.path.basename(frame.filename)}:{frame.lineno} in {frame.name}"
                    _send(conn, (ERROR, None, f"{type(exc).__name__}: {str(exc)[:400]} (at {where})"))
            finally:
                set_deadline(None)
                try:  # back to no limit between candidates; the next one sets its own
                    resource.setrlimit(resource.RLIMIT_AS, (hard, hard))
                except (ValueError, OSError):  # nothing to undo where the platform refused the limit itself
                    pass
            if fatal:  # the heap may be in any state after a failed allocation
                conn.close()
                os._exit(0)


def _freeze(obj: Any) -> None:
    """Make the arrays of an inherited object read-only in this child: a candidate that wrote into
    its data would otherwise change it for every later candidate of the child."""
    for value in ([obj] if isinstance(obj, np.ndarray) else list(getattr(obj, "__dict__", {}).values())):
        if isinstance(value, np.ndarray):
            value.flags.writeable = False


def _send(conn, message) -> None:
    try:
        conn.send(message)
    except Exception:  # noqa: BLE001 - the parent then sees a child that ended without a result
        os._exit(0)


def _child_for(limits: Limits, keys) -> _WarmChild:
    child: _WarmChild | None = getattr(_local, "child", None)
    if child is not None and not child.suits(limits, keys):
        child.end()
        child = None
    if child is None:
        child = _local.child = _WarmChild(limits)
    return child


def _retire() -> None:
    child = getattr(_local, "child", None)
    if child is not None:
        child.end()
        _local.child = None


def run_warm(fn: Callable, args: tuple = (), limits: Limits = Limits(), shared: tuple[int, ...] = ()) -> Outcome:
    """Call ``fn(*args)`` in this thread's warm child under ``limits``; never raises.

    ``shared``: positions of ``args`` that are big and used again (the split, the grammar): the
    child inherits them instead of receiving a copy. ``fn`` must be picklable by reference (a
    module-level function)."""
    _thread_pools()
    sent = tuple(_Ref(_share(a)) if i in shared else a for i, a in enumerate(args))
    keys = [a.key for a in sent if isinstance(a, _Ref)]
    start = time.perf_counter()
    child = _child_for(limits, keys)
    try:
        child.conn.send((fn, sent, limits.timeout, limits.memory_bytes))
    except (OSError, ValueError):  # it died while idle (killed with the others, say): a new one
        _retire()
        child = _child_for(limits, keys)
        child.conn.send((fn, sent, limits.timeout, limits.memory_bytes))
    task_rss = child.rss(group=False)
    status, value, reason, peak = None, None, "", 0
    deadline = start + limits.timeout
    polls = 0
    try:
        while True:
            polls += 1
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                status, reason = TIMEOUT, f"killed after the {limits.timeout:g} s time limit"
                break
            if child.conn.poll(min(limits.poll_interval, remaining)):
                try:
                    status, value, reason = child.conn.recv()
                except (EOFError, OSError):
                    status = None
                break
            if not child.proc.is_alive() and not child.conn.poll(0):
                break
            rss = child.rss(group=polls % GROUP_EVERY == 0)  # a candidate's own processes: checked less often
            peak = max(peak, rss)
            if rss - task_rss > limits.memory_bytes:
                status, reason = MEMORY, memory_reason(rss, task_rss, limits)
                break
    except BaseException:  # Ctrl-C in the caller: the child must not outlive it
        _retire()
        raise
    child.tasks += 1
    healthy = status in (OK, ERROR, TIMEOUT) and child.proc.is_alive() and not (
        status == TIMEOUT and reason.startswith("killed"))
    if healthy and child.rss(group=False) - child.start_rss > limits.memory_bytes / 4:
        healthy = False  # what earlier candidates left behind must not count against the next
    if not healthy:
        if status is None:  # it ended by itself: how, before it is reaped by the kill below
            child.proc.join(0.5)
            status, reason = death_of(child.proc.exitcode)
        _retire()
    return Outcome(status, value, reason, time.perf_counter() - start, peak)

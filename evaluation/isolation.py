"""Run one function in a child process that is killed, not asked, when it overruns.

A candidate pipeline can hang in C code, allocate without bound or crash the
interpreter; none of that may reach the search. :func:`run_isolated` forks a child
per call (fork: the data and code are inherited copy-on-write, so nothing is
pickled on the way in and start-up costs a few milliseconds), and

* the wall-clock limit is enforced by the parent, which kills the child's whole
  process group with SIGKILL and reaps it (no orphans, no zombies);
* the memory limit counts what the candidate *adds* to the child's starting memory, and
  is enforced twice: ``RLIMIT_AS`` in the child (starting address space + the cap, so
  large allocations fail fast with ``MemoryError``; clamped to what the platform allows)
  and a resident-set watchdog in the parent that kills the group once it has grown past
  the cap. Why growth and not the total: a forked child starts with its parent's pages
  (the code, the libraries, the loaded data: about 100 MB on the embedded dataset, more
  on a large one), so an absolute limit would mean less room for the model the larger the
  dataset, and a small limit would kill every candidate before it starts;
* BLAS/OpenMP pools in the child are limited to one thread, so parallel workers do
  not oversubscribe the cores;
* every way of ending — result, exception, timeout, memory, death by signal — comes
  back as an :class:`Outcome`; nothing raises into the caller.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import resource
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable

import psutil
from threadpoolctl import ThreadpoolController

from ggp_automl.spaces.deadline import BudgetExceeded, set_deadline

OK, ERROR, TIMEOUT, MEMORY, CRASHED = "ok", "error", "timeout", "memory", "crashed"

_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS",
                "NUMEXPR_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


@dataclass(frozen=True)
class Limits:
    """Per-candidate limits (thesis defaults: 180 s and 2 GB; the memory is what the candidate may add
    to the child's starting memory)."""

    timeout: float = 180.0
    memory_bytes: int = 2 * 1024 ** 3
    threads: int = 1
    #: how often the parent samples the child's resident memory
    poll_interval: float = 0.05
    #: silence the child's stdout/stderr
    quiet: bool = True
    #: evaluate candidates in the thread's reusable child (:mod:`evaluation.warm`), not a fresh fork each
    warm: bool = True


@dataclass(frozen=True)
class Outcome:
    status: str           # ok | error | timeout | memory | crashed
    value: Any = None     # the function's return value when ok
    reason: str = ""      # why it failed, one line (plus a traceback tail for errors)
    wall_time: float = 0.0
    peak_rss: int = 0


_CONTROLLER: ThreadpoolController | None = None

#: children running right now (pid -> process), so that an interrupted search can stop them
_LIVE: dict[int, mp.Process] = {}
_LIVE_LOCK = threading.Lock()


def kill_running_children() -> int:
    """Kill every isolated child still running in this process (Ctrl-C, shutdown); returns how many.

    Children run in their own process groups (a candidate's own children must die with
    it), so a terminal's Ctrl-C does not reach them; whoever stops the search calls this.
    """
    with _LIVE_LOCK:
        procs = list(_LIVE.values())
    for proc in procs:
        _kill_group(proc)
    return len(procs)


def machine_memory() -> int:
    """This machine's physical memory, bytes (a memory limit above it limits nothing)."""
    return int(psutil.virtual_memory().total)


def _address_space_limit(start: int, memory_bytes: int) -> int:
    """``RLIMIT_AS`` for a child that starts with ``start`` bytes of address space: start + the cap,
    but never above the hard limit this process may set (``setrlimit`` would fail with
    ``ValueError``, or ``OverflowError`` past the platform's largest value, and fail every candidate)."""
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    ceiling = (2 ** 63 - 1) if hard == resource.RLIM_INFINITY else hard
    wanted = start + memory_bytes
    if wanted >= ceiling:
        return hard
    return wanted


def _thread_pools() -> ThreadpoolController:
    """The BLAS/OpenMP pools, found once in the parent so that children need not search."""
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def one_blas_thread():
    """A context in which this process's BLAS/OpenMP pools use one thread (the search process while its
    threads fork candidates' children: see :func:`ggp_automl.search.run.run_loop`)."""
    return _thread_pools().limit(limits=1)


def _die_with_parent() -> None:
    """Linux: the kernel kills this child when its parent dies (a ``kill -9`` of the search
    must not leave candidates running for minutes with nobody waiting for them)."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the parent's own cleanup still applies
        pass


def enter_child(limits: Limits, parent: int) -> None:
    """What every candidate's child does first (a fresh one here, a warm one in :mod:`evaluation.warm`):
    its own process group, death with its parent, silence, ``limits.threads`` BLAS threads."""
    os.setsid()  # own process group: the parent can kill everything the candidate starts
    _die_with_parent()
    if os.getppid() != parent:  # the parent died before the line above took effect
        os._exit(1)
    if limits.quiet:  # a candidate's warnings and prints must not garble the search's display
        import faulthandler

        faulthandler.disable()
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
    for var in _THREAD_VARS:
        os.environ[var] = str(limits.threads)


def _child(conn, fn: Callable, args: tuple, limits: Limits, parent: int) -> None:
    enter_child(limits, parent)
    try:
        cap = _address_space_limit(psutil.Process().memory_info().vms, limits.memory_bytes)
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        set_deadline(limits.timeout)
        with _thread_pools().limit(limits=limits.threads):
            value = fn(*args)
        conn.send((OK, value, ""))
    except MemoryError:
        conn.send((MEMORY, None, "MemoryError: allocation beyond the memory limit"))
    except BaseException as exc:  # noqa: BLE001 - everything must come back as a status
        if isinstance(exc, BudgetExceeded):
            conn.send((TIMEOUT, None, "stopped at its deadline"))
        else:
            frame = traceback.extract_tb(exc.__traceback__)[-1]
            where = f"{os.path.basename(frame.filename)}:{frame.lineno} in {frame.name}"
            conn.send((ERROR, None, f"{type(exc).__name__}: {str(exc)[:400]} (at {where})"))
    finally:
        conn.close()
        os._exit(0)  # skip atexit handlers inherited from the parent


#: how long the caller waits for a killed child to be reaped before a reaper thread takes over
REAP_SECONDS = 0.5


def reap(proc: mp.Process) -> None:
    """Wait for ``proc`` (killed) to end, but not for long: a killed process can take seconds to
    release a large memory, and that time must not count against the candidate's limit or the
    run's budget; a daemon thread reaps it then (no zombie is left)."""
    proc.join(REAP_SECONDS)
    if proc.is_alive() or proc.exitcode is None:
        threading.Thread(target=proc.join, name="ggp-reaper", daemon=True).start()


def _group_rss(root: psutil.Process) -> int:
    total = 0
    try:
        procs = [root] + root.children(recursive=True)
    except psutil.Error:
        return 0
    for p in procs:
        try:
            total += p.memory_info().rss
        except psutil.Error:
            pass
    return total


def _kill_group(proc: mp.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.kill()
    except (OSError, ValueError):
        pass


def death_of(code: int | None) -> tuple[str, str]:
    """Status and reason of a child that ended without a result, from its exit code."""
    if code is not None and code < 0:
        name = signal.Signals(-code).name
        return (MEMORY if name == "SIGKILL" else CRASHED), f"the process died with signal {name}"  # OOM killer
    return CRASHED, f"the process exited with code {code} without a result"


def memory_reason(rss: int, start_rss: int, limits: Limits) -> str:
    """Why a child was killed for its memory, in one line."""
    return (f"killed at {rss / 2**20:.0f} MB resident memory, {(rss - start_rss) / 2**20:.0f} MB above its start: "
            f"past the {limits.memory_bytes / 2**20:.0f} MB memory limit")


def run_isolated(fn: Callable, args: tuple = (), limits: Limits = Limits()) -> Outcome:
    """Call ``fn(*args)`` in a forked child under ``limits``; never raises."""
    _thread_pools()
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    start = time.perf_counter()
    proc = ctx.Process(target=_child, args=(send, fn, args, limits, os.getpid()), daemon=True)
    proc.start()
    with _LIVE_LOCK:
        _LIVE[proc.pid] = proc
    send.close()
    status, value, reason, peak = None, None, "", 0
    try:
        ps = psutil.Process(proc.pid)
        start_rss = ps.memory_info().rss  # the pages it shares with this process since the fork
    except psutil.Error:
        ps, start_rss = None, 0
    deadline = start + limits.timeout
    try:
        while True:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                status, reason = TIMEOUT, f"killed after the {limits.timeout:g} s time limit"
                break
            if recv.poll(min(limits.poll_interval, remaining)):
                try:
                    status, value, reason = recv.recv()
                except (EOFError, OSError):
                    status = None  # died while sending, or without sending
                break
            if not proc.is_alive() and not recv.poll(0):
                break
            if ps is not None:
                rss = _group_rss(ps)
                peak = max(peak, rss)
                if rss - start_rss > limits.memory_bytes:
                    status, reason = MEMORY, memory_reason(rss, start_rss, limits)
                    break
    finally:
        if status != OK or proc.is_alive():
            _kill_group(proc)
            reap(proc)
        else:
            proc.join(5)  # it has sent its result and is exiting by itself
        recv.close()
        with _LIVE_LOCK:
            _LIVE.pop(proc.pid, None)
    if status is None:
        status, reason = death_of(proc.exitcode)
    return Outcome(status, value, reason, time.perf_counter() - start, peak)

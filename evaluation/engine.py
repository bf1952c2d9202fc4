"""Evaluation engines: how the search loop runs batches of candidates, locally or on a Dask cluster.

The search loop never calls :func:`~evaluation.candidate.evaluate_candidate` itself; it hands a
batch of trees to an :class:`EvaluationEngine` and gets back one result per tree, in input order:

* :class:`LocalEngine` — ``workers`` isolated children at a time on this machine. Threads only
  wait on their forked children (:mod:`evaluation.isolation`); the work happens in the children,
  which inherit the data copy-on-write, so nothing is pickled.
* :class:`DaskEngine` — one Dask task per candidate on a ``distributed`` cluster
  (``--scheduler tcp://HOST:PORT``). The split is scattered (broadcast) once per ``split_key`` and
  the grammar once; each task runs ``evaluate_candidate`` on its worker, i.e. forks an isolated
  child *there*, so a hang, a crash or a memory blow-up kills the child, never the worker.

The same limits apply everywhere (``Limits``: time, memory, one BLAS thread per candidate), and
the same seed gives the same results: the list is aligned with the input whatever the completion
order, and a candidate's evaluation is deterministic for a given ``random_state``.

Two ways to use an engine: :meth:`EvaluationEngine.evaluate` runs a whole batch (the generational
search), :meth:`~EvaluationEngine.submit` / :meth:`~EvaluationEngine.wait` run candidates one at a
time, so that a worker that frees up gets the next candidate at once (the asynchronous search).
``evaluate`` is written once, on top of ``submit``/``wait``. :func:`evaluate_all` is the one-call
form: a :class:`LocalEngine` for a single batch.

Time limits. Every candidate runs under ``limits.timeout`` (the run's hard cap) or a smaller
``timeout`` given with it — a number, or a function called when the candidate *starts* (the
search's adaptive limit, which learns while a batch waits in the queue). The limit a candidate
ran under is returned in :attr:`EvaluationResult.limit`. The engine also adds up the
worker-seconds it spent (:attr:`EvaluationEngine.busy_seconds`), finished or not.

Deadlines. ``deadline`` is an absolute ``time.time()`` epoch. A candidate is started only if at
least :data:`MIN_START_SECONDS` remain, and it runs with ``timeout = min(limits.timeout,
deadline - now)`` computed when it *starts* (on the worker, for Dask), so every candidate ends by
the deadline and so does the run. A candidate that was not started, or that the deadline (not its
own time limit) cut short, comes back as ``None``: for the caller that evaluation did not happen
(it is neither logged nor cached). With Dask the deadline is compared with the workers' clocks,
so the machines' clocks must agree (NTP).

Running a cluster. Remote workers unpickle the candidates and run this package's code, so **every
worker machine needs this package installed** (``pip install -e .`` in a checkout of the same
version) and the same Python environment; then ``dask scheduler`` on one machine and ``dask worker
tcp://HOST:8786 --nthreads K`` on each worker machine (K = concurrent candidates there, usually
its core count), and ``--scheduler tcp://HOST:8786`` for the search. Dask worker processes are
daemonic, and ``multiprocessing`` refuses to start children from a daemonic process; the task
lifts that flag while it evaluates (see :func:`_children_allowed`), so ``LocalCluster(processes=
True)`` and ``dask worker`` processes work as they are.
"""
from __future__ import annotations

import multiprocessing as mp
import os
import re
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, CancelledError, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.tree import Node

from .candidate import EvaluationResult, Split, evaluate_candidate
from .isolation import CRASHED, TIMEOUT, Limits, kill_running_children
from .metrics import get_fitness
from ..gp.errors import InputError

if TYPE_CHECKING:  # pragma: no cover
    import distributed

__all__ = ["MIN_START_SECONDS", "DaskEngine", "EngineError", "EvaluationEngine", "LocalEngine", "OnResult",
           "check_scheduler_address", "evaluate_one", "make_engine"]

#: a candidate is not started with less time than this left before the deadline
MIN_START_SECONDS = 1.0
#: how long the Dask engine waits past the deadline for results before giving the rest up as None
DEADLINE_GRACE_SECONDS = 2.0
#: how long the Dask engine tries to reach the scheduler (and to see a worker) before giving up; a
#: live scheduler answers in well under a second, so a wrong or dead address costs only seconds
CONNECT_TIMEOUT_SECONDS = 5.0
#: ``[PROTOCOL://]HOST:PORT`` as ``dask worker`` and ``distributed.Client`` take it (IPv6 in brackets)
_ADDRESS = re.compile(r"(?:(tcp|tls|ws|wss|ucx)://)?([A-Za-z0-9._-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})")


def check_scheduler_address(address: str) -> str:
    """``address`` if it is a Dask scheduler address, else ``ValueError``; checked before connecting, as
    ``distributed`` takes any string and fails only after its timeout (and again at exit)."""
    m = _ADDRESS.fullmatch(address) if isinstance(address, str) else None
    if m is None or not 1 <= int(m[3]) <= 65535:
        raise ValueError(f"expected a Dask scheduler address such as tcp://10.0.0.5:8786 (tcp, tls, ws, wss or "
                         f"ucx://HOST:PORT), got {address!r}")
    return address

OnResult = Callable[[int, EvaluationResult], None]


class EngineError(InputError, ConnectionError):
    """The engine itself cannot run (scheduler unreachable, no workers, workers lack this package)."""


# -- the per-candidate task (runs in a LocalEngine thread or on a Dask worker) -----------------------

_daemon_lock = threading.Lock()
_daemon_users = 0
_daemon_saved: Any = None


@contextmanager
def _children_allowed():
    """Let this process start children even if it is daemonic (Dask worker processes are).

    ``multiprocessing`` asserts ``not current_process()._config['daemon']`` in
    ``Process.start``. The flag is cleared while at least one evaluation runs in this process
    (a reference count, since a worker runs several tasks in threads) and restored afterwards.
    The isolated children are themselves started with ``daemon=True`` and killed by their
    parent, so the worker still leaves no orphans.
    """
    global _daemon_users, _daemon_saved
    config = mp.current_process()._config
    with _daemon_lock:
        if _daemon_users == 0:
            _daemon_saved = config.get("daemon")
            if _daemon_saved:
                config["daemon"] = False
        _daemon_users += 1
    try:
        yield
    finally:
        with _daemon_lock:
            _daemon_users -= 1
            if _daemon_users == 0 and _daemon_saved:
                config["daemon"] = _daemon_saved


def _prepare_process(plugins: Sequence[str] = ()) -> None:
    """Import every algorithm module once, the run's plug-ins included (:mod:`spaces.plugins`), and the
    reference grammars' defaults (:func:`spaces.params.reference_defaults`), so
    that forked children inherit them (and the import time is not charged to a candidate's
    deadline-derived timeout). On a Dask worker this is where a plug-in enters that interpreter."""
    from ggp_automl.spaces.params import reference_defaults
    from ggp_automl.spaces.plugins import load_plugins
    from ggp_automl.spaces.registry import load_all
    from ggp_automl.spaces.slc.trees import preload_tree_grower

    load_all()
    load_plugins(plugins)
    reference_defaults()  # parsed once here (65 ms for two grammars), not in every forked child that needs it
    preload_tree_grower()  # the compiled tree grower (about a second), inherited by the children


def evaluate_one(tree: Node, grammar: Grammar, split: Split, limits: Limits, fitness: str = "fitness",
                 random_state: int = 0, deadline: float | None = None,
                 timeout: float | Callable[[], float] | None = None, plugins: Sequence[str] = ()
                 ) -> EvaluationResult | None:
    """One candidate under ``limits``, its own ``timeout`` and the deadline rule; ``None`` if not
    started or cut by the deadline. The result's ``limit`` is the time limit it ran under.
    ``plugins``: the run's plug-in modules, imported first where this runs."""
    _prepare_process(plugins)
    own = timeout() if callable(timeout) else timeout
    if own is not None:
        limits = replace(limits, timeout=max(min(limits.timeout, float(own)), MIN_START_SECONDS))
    cut_by_deadline = False
    if deadline is not None:
        remaining = deadline - time.time()
        if remaining < MIN_START_SECONDS:
            return None
        if remaining < limits.timeout:
            limits = replace(limits, timeout=remaining)
            cut_by_deadline = True
    with _children_allowed():
        result = evaluate_candidate(tree, grammar, split, limits, fitness, random_state)
    if cut_by_deadline and result.status == TIMEOUT:
        return None
    return replace(result, limit=round(limits.timeout, 3))


# -- engines -------------------------------------------------------------------------------------------

class EvaluationEngine(ABC):
    """Runs candidate trees, in batches or one at a time; the search loop's only way to run candidates."""

    workers: int
    limits: Limits
    #: worker-seconds spent in evaluations so far (finished, failed or cut by the deadline)
    busy_seconds: float = 0.0

    @abstractmethod
    def submit(self, tree: Node, grammar: Grammar, split: Split, *, split_key: str, fitness: str = "fitness",
               random_state: int = 0, deadline: float | None = None,
               timeout: float | Callable[[], float] | None = None) -> Any:
        """Start evaluating one candidate (queued if every worker is busy); returns a handle for :meth:`wait`.

        ``timeout`` is the candidate's own limit (never above ``limits.timeout``); a function is
        called when the candidate starts (on a Dask cluster: now). ``deadline`` as in :meth:`evaluate`.
        """

    @abstractmethod
    def wait(self, handles: Sequence[Any], timeout: float | None = None) -> list[tuple[Any, EvaluationResult | None]]:
        """Block until at least one of ``handles`` has finished (or ``timeout`` seconds passed);
        the finished ones with their results (``None``: not started, or cut by the deadline)."""

    @abstractmethod
    def cancel(self, handles: Sequence[Any]) -> None:
        """Give up ``handles``: queued ones never start, running ones are killed."""

    def evaluate(self, trees: Sequence[Node], grammar: Grammar, split: Split, *, split_key: str,
                 fitness: str = "fitness", random_state: int = 0, deadline: float | None = None,
                 on_result: OnResult | None = None,
                 timeout: float | Callable[[], float] | Sequence[float] | None = None
                 ) -> list[EvaluationResult | None]:
        """Results aligned with ``trees``; ``timeout``: every candidate's own limit, or one per tree.

        ``deadline`` is an absolute ``time.time()`` epoch: a candidate is started only if at least
        :data:`MIN_START_SECONDS` remain, and runs with ``timeout = min(its limit, deadline - now)``
        computed when it starts, so every candidate ends before the deadline and the run ends on
        time. A candidate that was not started, or that was killed because the deadline (not its
        own limit) cut it short, gives ``None``: for the caller that evaluation did not happen.
        ``on_result(i, result)`` is called for every finished (non-``None``) result as soon as it
        finishes, always from the calling thread. ``split_key`` names the split (a new key means
        new data; the Dask engine ships each split once). Candidates start in input order. Never
        raises for a candidate's failure; an unknown ``fitness`` raises ValueError up front.
        """
        get_fitness(fitness)
        results: list[EvaluationResult | None] = [None] * len(trees)
        pending = {}
        try:
            per_tree = isinstance(timeout, Sequence)
            for i, tree in enumerate(trees):
                handle = self.submit(tree, grammar, split, split_key=split_key, fitness=fitness,
                                     random_state=random_state, deadline=deadline,
                                     timeout=timeout[i] if per_tree else timeout)
                pending[handle] = i
            while pending:
                done = self.wait(list(pending), None if deadline is None
                                 else max(deadline - time.time(), 0.0) + DEADLINE_GRACE_SECONDS)
                if not done:  # past the deadline and its grace: what has not come back did not happen
                    break
                for handle, result in sorted(done, key=lambda hr: pending[hr[0]]):
                    i = pending.pop(handle)
                    results[i] = result
                    if result is not None and on_result is not None:
                        on_result(i, result)
        except BaseException:  # an exception from on_result, or Ctrl-C: stop everything now
            self.cancel(list(pending))
            raise
        if pending:
            self.cancel(list(pending))
        return results

    def close(self) -> None:
        """Release threads, connections and scattered data; the engine is unusable afterwards."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class LocalEngine(EvaluationEngine):
    """``workers`` concurrent isolated children on this machine, started in submission order."""

    def __init__(self, workers: int | None = None, limits: Limits = Limits(), plugins: Sequence[str] = ()):
        workers = (os.cpu_count() or 1) if workers is None else int(workers)
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        self.workers = workers
        self.limits = limits
        self.plugins = tuple(plugins)
        self.busy_seconds = 0.0
        self._lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    def __repr__(self) -> str:
        return f"LocalEngine(workers={self.workers}, limits={self.limits})"

    def _timed(self, *args) -> EvaluationResult | None:
        t0 = time.perf_counter()
        try:
            return evaluate_one(*args)  # looked up at call time: a benchmark may wrap it
        finally:
            with self._lock:
                self.busy_seconds += time.perf_counter() - t0

    def submit(self, tree, grammar, split, *, split_key, fitness="fitness", random_state=0, deadline=None,
               timeout=None) -> Future:
        _prepare_process(self.plugins)  # in the calling thread, before any fork
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="ggp-eval")
        # The executor's queue is FIFO: candidates start in submission order, each computing its
        # limit and deadline-derived timeout when a thread picks it up.
        return self._pool.submit(self._timed, tree, grammar, split, self.limits, fitness, random_state, deadline,
                                 timeout, self.plugins)

    def wait(self, handles, timeout=None):
        try:
            done, _ = wait(handles, timeout=timeout, return_when=FIRST_COMPLETED)
        except BaseException:  # Ctrl-C while waiting: the children must not outlive the search
            kill_running_children()
            raise
        return [(f, f.result()) for f in done]  # evaluate_one never raises for a candidate

    def cancel(self, handles) -> None:
        for future in handles:
            future.cancel()
        if any(not f.done() for f in handles):
            kill_running_children()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None


class DaskEngine(EvaluationEngine):
    """One task per candidate on a ``distributed`` cluster; each task forks an isolated child on its worker.

    ``address`` is a scheduler address (``tcp://HOST:PORT``; the engine owns that client and
    closes it) or an existing ``distributed.Client`` (left open by :meth:`close`). Workers need
    this package installed (see the module docstring). ``busy_seconds`` counts each task's
    wall time as seen from here (queueing on the cluster included).
    """

    def __init__(self, address: str | "distributed.Client", limits: Limits = Limits(), *,
                 connect_timeout: float = CONNECT_TIMEOUT_SECONDS, plugins: Sequence[str] = ()):
        import distributed

        self.limits = limits
        self.plugins = tuple(plugins)  # sent with every task: a worker that joins later imports them too
        self.busy_seconds = 0.0
        self._submitted: dict[str, tuple[float, str]] = {}  # task key -> (submitted at, phenotype)
        self._split_key: str | None = None
        self._split_future = None
        self._grammars: dict[int, tuple[Grammar, Any]] = {}  # id(grammar) -> (grammar, its scattered future)
        self._owns_client = False
        self._order = 0
        if isinstance(address, distributed.Client):
            self._client, self._owns_client = address, False
            self.address = getattr(address.scheduler, "address", None) or str(address)
        else:
            self.address = check_scheduler_address(address)
            try:
                self._client = distributed.Client(self.address, timeout=connect_timeout, set_as_default=False)
            except Exception as exc:  # noqa: BLE001 - whatever distributed raises, the scheduler is not usable
                raise EngineError(f"cannot reach the Dask scheduler at {self.address!r} within {connect_timeout:g} s "
                                  f"({type(exc).__name__}: {exc}); start one with `dask scheduler` and workers with "
                                  f"`dask worker {self.address}`") from None
            self._owns_client = True
        try:
            self._client.wait_for_workers(1, timeout=connect_timeout)
        except (OSError, TimeoutError) as exc:
            self.close()
            raise EngineError(f"no Dask worker joined the scheduler at {self.address!r} within {connect_timeout:g} s "
                              f"({type(exc).__name__}); start workers with `dask worker {self.address}`") from None

    @property
    def workers(self) -> int:  # type: ignore[override]
        """Total worker threads of the cluster now (= candidates evaluated at a time)."""
        return max(1, sum(self._client.nthreads().values()))

    @property
    def client(self) -> "distributed.Client":
        return self._client

    def __repr__(self) -> str:
        return f"DaskEngine({self.address!r}, limits={self.limits})"

    def _scattered(self, grammar: Grammar, split: Split, split_key: str):
        if split_key != self._split_key or self._split_future is None:
            self._split_future = None  # release the previous split on the workers
            self._split_future = self._client.scatter(split, broadcast=True, hash=False)
            self._split_key = split_key
        entry = self._grammars.get(id(grammar))
        if entry is None or entry[0] is not grammar:
            entry = (grammar, self._client.scatter(grammar, broadcast=True, hash=False))
            self._grammars[id(grammar)] = entry
        return entry[1], self._split_future

    def submit(self, tree, grammar, split, *, split_key, fitness="fitness", random_state=0, deadline=None,
               timeout=None):
        grammar_f, split_f = self._scattered(grammar, split, split_key)
        own = timeout() if callable(timeout) else timeout  # the task runs remotely: fixed now
        self._order += 1
        future = self._client.submit(evaluate_one, tree, grammar_f, split_f, self.limits, fitness, random_state,
                                     deadline, own, self.plugins, pure=False,
                                     priority=-self._order)  # earlier ones first
        self._submitted[future.key] = (time.time(), tree.phenotype)
        return future

    def _result(self, future) -> EvaluationResult | None:
        ours = future.key in self._submitted  # cancel() forgets the futures it cancels
        started, phenotype = self._submitted.pop(future.key, (time.time(), ""))
        self.busy_seconds += time.time() - started
        if future.status == "error":
            exc = future.exception()
            if isinstance(exc, ImportError):
                raise EngineError(f"a Dask worker cannot import this package ({exc}); install it on every "
                                  f"worker machine (pip install -e .)") from None
            from ggp_automl.spaces.plugins import PluginError

            if isinstance(exc, PluginError):
                raise EngineError(f"a Dask worker cannot load the run's plug-in: {exc}; every worker needs the "
                                  "plug-in at the same path (or installed)") from None
            return EvaluationResult(phenotype, CRASHED, 0.0,
                                    reason=f"the Dask task failed: {type(exc).__name__}: {exc}"[:600])
        if future.status == "cancelled":
            if not ours:
                return None
            return self._lost(phenotype)
        try:
            return future.result()
        except CancelledError:  # cancelled between the status check and here (distributed's FutureCancelledError)
            return None if not ours else self._lost(phenotype)

    def _lost(self, phenotype: str) -> EvaluationResult:
        """Not cancelled by us: the workers holding the scattered data died (a candidate that kills its
        worker, retried by Dask on the next one, can take them all). Recorded as crashed, never dropped
        (issue 24); the data are scattered again for the next candidate."""
        self._split_future, self._split_key = None, None
        self._grammars.clear()
        return EvaluationResult(phenotype, CRASHED, 0.0,
                                reason="the Dask worker evaluating it died (killed, or out of memory), and the "
                                       "cluster lost the data it needed; the candidate was not finished")

    def wait(self, handles, timeout=None):
        import distributed

        # as_completed on this engine's client (distributed.wait would look for a default client)
        finished = distributed.as_completed(list(handles), loop=self._client.loop, timeout=timeout)
        try:
            first = next(finished)
        except (StopIteration, TimeoutError):  # distributed.TimeoutError is the builtin
            return []
        return [(f, self._result(f)) for f in handles if f is first or f.done()]

    def cancel(self, handles) -> None:
        if handles:
            self._client.cancel(list(handles))
            for f in handles:
                self._submitted.pop(f.key, None)

    def close(self) -> None:
        self._split_future = None
        self._split_key = None
        self._grammars.clear()
        if self._owns_client:
            try:
                self._client.close()
            except Exception:  # noqa: BLE001 - closing a dead connection must not fail the caller
                pass


def make_engine(workers: int | None, limits: Limits, scheduler: str | None = None,
                plugins: Sequence[str] = ()) -> EvaluationEngine:
    """A :class:`DaskEngine` on ``scheduler`` if given (``workers`` is then the cluster's), else a :class:`LocalEngine`;
    either imports the run's ``plugins`` (:mod:`spaces.plugins`) wherever candidates are compiled."""
    if scheduler:
        return DaskEngine(scheduler, limits, plugins=plugins)
    return LocalEngine(workers, limits, plugins)


def evaluate_all(trees: list[Node], grammar: Grammar, split: Split, limits: Limits = Limits(),
                 fitness: str = "fitness", workers: int = 1, random_state: int = 0) -> list[EvaluationResult]:
    """Evaluate several candidates, ``workers`` isolated children at a time, in input order."""
    with LocalEngine(workers, limits) as engine:
        return engine.evaluate(trees, grammar, split, split_key="evaluate_all", fitness=fitness,
                               random_state=random_state)

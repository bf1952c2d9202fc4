"""Cooperative deadlines for long Python loops inside estimators.

The evaluation engine kills a candidate that overruns its wall-clock limit, but a
custom loop (chain search, Gibbs sweeps, lazy per-row fits, epochs) can stop much
sooner and cleanly by calling :func:`check_deadline`. The engine sets the deadline
in the worker process; outside an evaluation there is none and the check is free.
"""
from __future__ import annotations

import time

_deadline: float | None = None


class BudgetExceeded(RuntimeError):
    """Raised by :func:`check_deadline` once the evaluation's time is up."""


def set_deadline(seconds_from_now: float | None) -> None:
    global _deadline
    _deadline = None if seconds_from_now is None else time.monotonic() + seconds_from_now


def check_deadline() -> None:
    if _deadline is not None and time.monotonic() > _deadline:
        raise BudgetExceeded("evaluation time limit reached")

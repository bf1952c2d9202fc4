"""What a running grid shows: runs done / running / left, and an estimate of the time left.

Why an estimate from the runs themselves: a run's wall time is its budget plus start-up and the
final refit, which differ by dataset and method; the mean wall time of the runs finished in this
session (before any finishes: the budget plus 10 %) times the runs left, divided by the runs at a
time, is honest about both. On a terminal it is a live table (rich); otherwise one line a run.
"""
from __future__ import annotations

import sys
import time


class GridProgress:
    """An observer for :class:`~ggp_automl.experiments.grid.Grid` (``observer(event, **info)``)."""

    def __init__(self, budget_seconds: float, parallel: int, live: bool | None = None, stream=None):
        self.budget, self.parallel = budget_seconds, parallel
        self.stream = stream or sys.stdout
        self.live_wanted = self.stream.isatty() if live is None else live
        self.total = self.left = self.pending = self.done = self.failed = 0
        self.walls: list[float] = []
        self.running: list = []
        self._live = None
        self.t0 = time.time()

    def __call__(self, event: str, **info) -> None:
        getattr(self, f"on_{event}")(**info)

    def on_start(self, total: int, pending: int) -> None:
        self.total, self.left, self.pending = total, pending, pending
        print(f"{total} runs in the grid, {total - pending} already finished, {pending} to run", file=self.stream)
        if self.live_wanted and pending:
            from rich.console import Console
            from rich.live import Live

            self._live = Live(self._table(), console=Console(file=self.stream), refresh_per_second=1)
            self._live.start()

    def on_started(self, run) -> None:
        self.left -= 1

    def on_finished(self, outcome) -> None:
        if outcome.state == "done":
            self.done += 1
            if outcome.seconds > 1.0:  # a run finished by an earlier grid says nothing about wall times
                self.walls.append(outcome.seconds)
        else:
            self.failed += 1
        line = (f"[{self.done + self.failed}/{self.pending}] "
                f"{outcome.run.id}: {outcome.state} in {outcome.seconds:.0f} s"
                + (f" — {outcome.detail}" if outcome.detail else ""))
        if self._live is not None:
            self._live.console.print(line)
        else:
            print(line, file=self.stream, flush=True)

    def on_tick(self, running) -> None:
        self.running = running
        if self._live is not None:
            self._live.update(self._table())
            if not running and self.left <= 0:
                self._live.stop()
                self._live = None

    def eta_seconds(self) -> float:
        per_run = sum(self.walls) / len(self.walls) if self.walls else self.budget * 1.1
        now = time.time()
        in_flight = sum(max(per_run - (now - started), 0.0) for _, started in self.running)
        return (self.left * per_run + in_flight) / max(self.parallel, 1)

    def _table(self):
        from rich.table import Table

        t = Table(title=f"grid: {self.done} done, {self.failed} failed, {len(self.running)} running, "
                        f"{self.left} left — about {_clock(self.eta_seconds())} to go", title_justify="left")
        t.add_column("running")
        t.add_column("for", justify="right")
        for run, started in self.running:
            t.add_row(run.id, _clock(time.time() - started))
        return t


def _clock(seconds: float) -> str:
    seconds = int(max(seconds, 0))
    h, rest = divmod(seconds, 3600)
    return f"{h}h{rest // 60:02d}m" if h else f"{rest // 60}m{rest % 60:02d}s"

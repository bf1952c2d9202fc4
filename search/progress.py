"""The live progress display of ``cli.py evolve`` (a :class:`SearchObserver`).

On a terminal: a rich panel redrawn in place — elapsed and remaining time, phase,
generation, best validation fitness and its phenotype, evaluations done / failed /
cached, evaluations per minute. Elsewhere (a log file, CI): one plain line per
generation, so logs stay readable.
"""
from __future__ import annotations

import time

from rich.console import Console, Group
from rich.live import Live
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .observer import SearchObserver


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class RichProgress(SearchObserver):
    def __init__(self, console: Console | None = None, refresh_per_second: float = 4.0):
        self.console = console or Console(stderr=True)
        self.refresh = refresh_per_second
        self.live: Live | None = None
        self.info: dict = {}
        self.phase = "starting"
        self.detail = ""
        self.generation = 0
        self.best = (0.0, "")
        self.counts = {"evaluations": 0, "failed": 0, "cached": 0}
        self.session_evaluations = 0
        self.started = time.time()
        self.used_at_start = 0.0

    # -- hooks -------------------------------------------------------------------------
    def on_start(self, info):
        self.info = info
        self.generation = info.get("generation", 0)
        self.counts = dict(info.get("counts") or self.counts)
        self.started = time.time()
        resumed = " (resumed)" if info.get("resumed") else ""
        where = info.get("scheduler") or f"{info.get('workers')} local worker(s)"
        self.console.print(f"[bold]evolve[/]{resumed}: {info.get('method')} ({info.get('mode', '')}) on "
                           f"{info.get('data_name')}, "
                           f"grammar {info.get('grammar')}, budget {_clock(info.get('budget', 0))}, {where}",
                           highlight=False)
        if info.get("run_dir"):
            self.console.print(f"run directory: {info['run_dir']}", highlight=False)
        if self.console.is_terminal:
            self.live = Live(self._render(), console=self.console, refresh_per_second=self.refresh,
                             transient=False)
            self.live.start()

    def on_evaluation(self, record):
        self.counts["evaluations"] += 1
        self.session_evaluations += 1
        if record.get("status") != "ok":
            self.counts["failed"] += 1
        if record.get("phase") == "search" and record.get("fitness", 0.0) > self.best[0]:
            self.best = (record["fitness"], record["phenotype"])
        self._update()

    def on_generation(self, record):
        self.generation = record["generation"] + 1
        self.counts = dict(record.get("counts") or self.counts)
        if record["best_fitness"] >= self.best[0]:
            self.best = (record["best_fitness"], record["best_phenotype"])
        if self.live is None:
            self.console.print(
                f"gen {record['generation']:>4}  {_clock(record['time'])}  best {record['best_fitness']:.4f}  "
                f"mean {record['mean_fitness']:.4f}  evaluated {record['evaluated']}  failed {record['failed']}  "
                f"cached {record['cached']}  {record['best_phenotype'][:90]}", highlight=False, markup=False,
                soft_wrap=True)
        self._update()

    def on_phase(self, phase, detail=""):
        self.phase, self.detail = phase, detail
        if self.live is None and phase in ("final", "refit", "ensemble"):
            self.console.print(f"{phase}: {detail}", highlight=False, markup=False)
        self._update()

    def on_end(self, summary):
        winner = summary.get("winner")
        if winner:  # show the chosen model, re-scored on the fresh split, not the search's best
            self.phase, self.detail = "done", "(best = the winner, re-evaluated on a fresh split)"
            self.best = (winner["valid_fitness"], winner["phenotype"])
        if self.live is not None:
            self.live.update(self._render())
            self.live.stop()
            self.live = None

    # -- display -----------------------------------------------------------------------
    def _elapsed(self) -> float:
        """Run time used, earlier sessions of a resumed run included."""
        return self.info.get("used", 0.0) + (time.time() - self.started)

    def _update(self) -> None:
        if self.live is not None:
            self.live.update(self._render())

    def _render(self):
        elapsed = self._elapsed()
        budget = self.info.get("budget", 0.0)
        minutes = max((time.time() - self.started) / 60.0, 1e-9)
        table = Table.grid(padding=(0, 2))
        table.add_column(style="bold")
        table.add_column()
        table.add_row("phase", f"{self.phase} {self.detail}".strip())
        table.add_row("time", f"{_clock(elapsed)} elapsed, {_clock(budget - elapsed)} remaining "
                                   f"(budget {_clock(budget)})")
        table.add_row("generation", str(self.generation))
        table.add_row("best validation fitness", f"{self.best[0]:.4f}")
        table.add_row("evaluations", f"{self.counts['evaluations']} done, {self.counts['failed']} failed, "
                                     f"{self.counts['cached']} cached")
        table.add_row("evaluations / minute", f"{self.session_evaluations / minutes:.1f}")
        best = Text(self.best[1] or "—", overflow="fold")
        return Panel(Group(table, Text("best phenotype:", style="bold"), best),
                     title=f"{self.info.get('method', '')} · {self.info.get('data_name', '')}", expand=True)

"""Run an experiment's grid: whole runs, a few at a time, here or on a Dask cluster, resumable.

Why whole runs as ``evolve`` processes: a run owns its time budget, its evaluation workers and its
run directory; starting it as a process of its own keeps runs from sharing anything (a crash, a
leak, a stuck BLAS pool), makes a finished run exactly what ``evolve`` writes, and makes resuming
the grid a matter of looking at directories:

* ``final.json`` present — finished, kept as it is (a run that found no model is finished too);
* ``config.json`` without ``final.json`` — interrupted: continued with ``evolve --resume``, which
  loses and repeats no finished evaluation;
* anything else (killed before it wrote its settings) — removed and started again.

So the grid survives ``kill -9`` at any moment. The run processes die with the grid process
(``PR_SET_PDEATHSIG``), so a killed grid leaves no run behind holding its directory's lock; one
that is still locked (a run on a cluster worker that outlived its client) is waited for.

On a cluster (``--scheduler tcp://HOST:PORT``) each run is one Dask task that starts the same
process on a worker: the workers need the project and the data at the same paths (a shared file
system), and each Dask worker thread should have ``workers`` cores for the run's evaluations.
"""
from __future__ import annotations

import ctypes
import json
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from .spec import Experiment, ExperimentError, Run

#: where the runs start (the checkout, or the installed package): relative evolve options are read from here
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
RUNS, LOGS, STORED, MANIFEST = "runs", "logs", "experiment.toml", "experiment.json"
#: seconds between looks at a run directory another process still holds
LOCK_POLL = 2.0


@dataclass
class Outcome:
    run: Run
    state: str              # done | failed
    seconds: float
    detail: str = ""        # why it failed (the run's last line of error output)


def prepare(experiment: Experiment, out: str | Path) -> Path:
    """The experiment directory: made (with a copy of the file and the grid), or checked to be this
    experiment's when it exists, so that a resumed grid is the grid that was started."""
    out = Path(out)
    stored = out / STORED
    if stored.exists():
        if stored.read_text(encoding="utf-8") != experiment.text:
            raise ExperimentError(f"{out} holds another experiment (its {STORED} differs from {experiment.path}); "
                                  "give --out for a new experiment directory, or restore the file to resume")
    elif out.exists() and any(out.iterdir()):
        raise ExperimentError(f"{out} exists and is not an experiment directory; give --out for a new one")
    (out / RUNS).mkdir(parents=True, exist_ok=True)
    (out / LOGS).mkdir(exist_ok=True)
    if not stored.exists():
        manifest = {"name": experiment.name, "source": str(experiment.path), "budget": experiment.budget,
                    "workers": experiment.workers, "parallel": experiment.parallel,
                    "description": experiment.description, "report": experiment.report,
                    "runs": [{"id": r.id, "directory": r.directory, "config": r.config, "method": r.method,
                              "grammar": r.grammar, "dataset": r.dataset, "fold": r.fold, "seed": r.seed,
                              "args": list(r.args)} for r in experiment.runs]}
        (out / MANIFEST).write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        stored.write_text(experiment.text, encoding="utf-8")  # last: its presence means the directory is complete
    return out


def load_directory(out: str | Path) -> Experiment:
    """The experiment an experiment directory holds, as its grid was first expanded (the copy of its
    file cannot be re-read: its relative paths were relative to where the file was)."""
    from .spec import Run

    out = Path(out)
    try:
        text = (out / STORED).read_text(encoding="utf-8")
        manifest = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
        runs = tuple(Run(r["id"], r["config"], r["method"], r["grammar"], r["dataset"], r["fold"], r["seed"],
                         tuple(r["args"])) for r in manifest["runs"])
        return Experiment(manifest["name"], Path(manifest["source"]), text, manifest["budget"], manifest["workers"],
                          manifest["parallel"], runs, manifest.get("description", ""),
                          report=manifest.get("report") or {})
    except FileNotFoundError:
        raise ExperimentError(f"{out} is not an experiment directory (no {STORED} and {MANIFEST}); start one with "
                              "`python cli.py bench EXPERIMENT.toml`") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ExperimentError(f"{out / MANIFEST} is damaged ({type(exc).__name__}: {exc}); start the experiment "
                              "again into a new directory") from None


def state_of(run_dir: Path) -> str:
    """done (final.json), interrupted (config.json only) or new."""
    if (run_dir / "final.json").exists():
        return "done"
    return "interrupted" if (run_dir / "config.json").exists() else "new"


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the run gets SIGKILL when the grid process dies, so no orphan holds a run directory."""
    try:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:  # no glibc here: the runs outlive a killed grid, and run_one waits for their locks
        pass


def run_one(args: list[str], run_dir: str, log: str, workers: int) -> dict:
    """Make (or finish) one run; runs in the grid process's thread or on a Dask worker."""
    from ggp_automl.search.lock import in_use

    run_dir_p = Path(run_dir)
    t0 = time.time()
    while run_dir_p.exists() and in_use(run_dir_p):  # a run that outlived an earlier grid: let it finish
        time.sleep(LOCK_POLL)
    state = state_of(run_dir_p)
    if state == "done":
        return {"state": "done", "seconds": 0.0, "detail": "finished before"}
    if state == "new" and run_dir_p.exists():
        shutil.rmtree(run_dir_p)  # killed before it wrote its settings: nothing finished in it
    command = [sys.executable, "-m", "ggp_automl", "evolve", "--quiet", "--workers", str(workers)]
    command += ["--resume", run_dir] if state == "interrupted" else [*args, "--out", run_dir]
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(command)}\n")
        out.flush()
        proc = subprocess.run(command, stdout=out, stderr=subprocess.STDOUT, cwd=str(PACKAGE_ROOT),
                              preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None)
    seconds = time.time() - t0
    if state_of(run_dir_p) == "done":
        return {"state": "done", "seconds": seconds, "detail": ""}
    return {"state": "failed", "seconds": seconds, "detail": f"exit {proc.returncode}: {last_line(log) or 'no output'}"}


def last_line(log: str | Path) -> str | None:
    """The last non-empty line of a run's log (what ``evolve`` said last: its error, when it failed)."""
    try:
        lines = [line for line in Path(log).read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return None
    return lines[-1][:300] if lines else None


class Grid:
    """Runs the experiment's pending runs, ``parallel`` at a time, telling ``observer`` as they go."""

    def __init__(self, experiment: Experiment, out: Path, scheduler: str | None = None, observer=None):
        self.experiment, self.out, self.scheduler = experiment, out, scheduler
        self.observer = observer or (lambda event, **info: None)

    def pending(self) -> list[Run]:
        return [r for r in self.experiment.runs if state_of(self.out / RUNS / r.directory) != "done"]

    def run(self) -> list[Outcome]:
        todo = self.pending()
        self.observer("start", total=len(self.experiment.runs), pending=len(todo))
        if not todo:
            return []
        client = None
        if self.scheduler:
            from distributed import Client

            client = Client(self.scheduler, timeout="20s")
            executor = client.get_executor(pure=False)
        else:
            executor = ThreadPoolExecutor(self.experiment.parallel, thread_name_prefix="run")
        try:
            return self._drive(executor, todo)
        finally:
            executor.shutdown(wait=False)
            if client is not None:
                client.close()

    def _drive(self, executor, todo: list[Run]) -> list[Outcome]:
        outcomes, running = [], {}
        queue = list(todo)
        while queue or running:
            while queue and len(running) < self.experiment.parallel:
                run = queue.pop(0)
                future = executor.submit(run_one, list(run.args), str(self.out / RUNS / run.directory),
                                         str(self.out / LOGS / f"{run.directory}.log"), self.experiment.workers)
                running[future] = (run, time.time())
                self.observer("started", run=run)
            done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
            for future in done:
                run, _started = running.pop(future)
                outcome = self._outcome(run, future)
                outcomes.append(outcome)
                self.observer("finished", outcome=outcome)
            self.observer("tick", running=[(r, t) for r, t in running.values()])
        return outcomes

    @staticmethod
    def _outcome(run: Run, future: Future) -> Outcome:
        try:
            r = future.result()
        except Exception as exc:  # noqa: BLE001 - a worker lost or a launch failure: this run failed, not the grid
            return Outcome(run, "failed", 0.0, f"{type(exc).__name__}: {str(exc)[:300]}")
        return Outcome(run, r["state"], r["seconds"], r["detail"])


def default_out(experiment: Experiment) -> Path:
    return Path("runs") / experiment.name

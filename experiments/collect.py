"""One record per run of an experiment, read off its run directory: what the report is made from.

Why from the directories and not from a results file the grid keeps: the run directory is the
record of a run (``final.json``: the returned model's validation and test measures;
``evaluations.jsonl``: every evaluation with its time), so the report can never disagree with
``inspect``, and a grid that was killed, resumed or partly run elsewhere needs no bookkeeping of
its own. A run without ``final.json`` is a record without numbers: "unfinished" (running, or
interrupted: ``bench`` continues it), "failed" (it ended before it wrote its settings; its log
says why) or "missing" (not started).
"""
from __future__ import annotations

import json
from pathlib import Path

from ggp_automl.evaluation.task import task_of_record
from ggp_automl.search.rundir import read_jsonl

from .grid import LOGS, MANIFEST, RUNS, last_line


def read_manifest(out: str | Path) -> dict:
    path = Path(out) / MANIFEST
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise FileNotFoundError(f"{out} is not an experiment directory (no {MANIFEST}); make one with "
                                "`python cli.py bench EXPERIMENT.toml`") from None


def collect(out: str | Path) -> list[dict]:
    """The records of every run the experiment names, in the grid's order."""
    out = Path(out)
    manifest = read_manifest(out)
    return [run_record(out, r, manifest) for r in manifest["runs"]]


def run_record(out: Path, run: dict, manifest: dict) -> dict:
    run_dir = out / RUNS / run["directory"]
    record = {k: run[k] for k in ("id", "config", "method", "grammar", "dataset", "fold", "seed")}
    record["budget"] = _seconds(manifest["budget"])
    final_path = run_dir / "final.json"
    if not final_path.exists():  # running or interrupted; failed if it never wrote its settings; or not run yet
        log = out / LOGS / f"{run['directory']}.log"
        status = "unfinished" if (run_dir / "config.json").exists() else "failed" if log.exists() else "missing"
        record.update(status=status, error=last_line(log) if status == "failed" else None)
        return record
    final = json.loads(final_path.read_text(encoding="utf-8"))
    evaluations = read_jsonl(run_dir / "evaluations.jsonl") if (run_dir / "evaluations.jsonl").exists() else []
    task = task_of_record(final.get("task"))  # multi-label for a run written before the field existed
    winner = final.get("winner") or {}
    counts = final.get("counts") or {}
    search = [e for e in evaluations if e.get("phase") == "search"]
    search_end = min((e["time"] for e in evaluations if e.get("phase") == "final"), default=final.get("time") or 0.0)
    curve, test_curve = curves(search)
    record.update(
        status="done" if winner else "failed",
        error=None if winner else f"no model: {final.get('status')}",
        task=task.name, fitness_name=final.get("fitness") or task.default_fitness,
        valid_fitness=winner.get("valid_fitness"),
        test=dict(((final.get("test") or {}).get("measures")) or {}),
        time=final.get("time"), overrun=final.get("overrun_seconds", 0.0),
        evaluations=len(search), failed=sum(1 for e in search if e.get("status") != "ok"),
        cached=counts.get("cached", 0),
        evals_per_minute=round(len(search) / (search_end / 60), 2) if search_end else 0.0,
        curve=curve, test_curve=test_curve,
        ensemble_size=(final.get("ensemble") or {}).get("size"),
    )
    return record


def curves(search: list[dict]) -> tuple[list, list]:
    """The anytime curves of one run: ``(time, best full-data validation fitness so far)`` at each
    improvement, and ``(time, test fitness of that incumbent)`` where the run traced its test set."""
    best, curve, test_curve = None, [], []
    for e in search:
        if e.get("status") != "ok" or (e.get("level") or 0) != 0:
            continue  # a screening rung's fitness is on a third of the rows: not comparable
        if best is None or e["fitness"] > best:
            best = e["fitness"]
            curve.append([e["time"], best])
            if e.get("test_fitness") is not None:
                test_curve.append([e["time"], e["test_fitness"]])
    return curve, test_curve


def _seconds(budget: str) -> float:
    from ..search.options import duration

    return duration(budget)

"""Benchmark of issue 12: the single best vs post-hoc Caruana selection vs EO vs DivBO (not a test).

    python benchmarks/bench_ensembles.py            # the grid (48 runs of 2 minutes, about 105 minutes), resumable
    python benchmarks/bench_ensembles.py --table    # rewrite results/ensembles.md from the records

Cells: four UCI sets of ``../shared/datasets/slc`` (car-evaluation, semeion, statlog-german-credit,
statlog-image-segmentation: the four of 001's 18 that are here), outer stratified 3-fold (seed 0), in
``grammars/ensembles.bnf``; and the fixed folds 1 and 2 of Flags and Emotions
(``../shared/datasets/mlc-folds``) in ``grammars/large.bnf``. Per cell three runs of 2 minutes with 2
workers, seed = fold: ``bo --ensemble caruana`` (the single best and the Caruana ensemble, both from
this run: BO-best and BO-ES of the papers), ``eo`` (its own ensemble, majority vote) and ``divbo``
(ending with Caruana selection). One run at a time (the machine has 2 cores); every finished run is
appended to ``benchmarks/results/ensembles.jsonl``, so an interrupted benchmark resumes.

Measured: test error (single-label) or test fitness (multi-label, Eq. 5.1) of the returned model,
ensemble size (distinct members), the seconds the ensemble step added at the end, and search
evaluations. Targets: post-hoc selection never worse than the single best on average, and divbo at
least as good as Caruana on average.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ggp_automl.evaluation.task import task_of_record

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SHARED = ROOT.parent / "shared" / "datasets"
RESULTS = ROOT / "benchmarks" / "results"
RECORDS = RESULTS / "ensembles.jsonl"
SLC = ("car-evaluation", "semeion", "statlog-german-credit", "statlog-image-segmentation")
MLC = {"flags": "Flags", "emotions": "Emotions"}
VARIANTS = {"bo+caruana": ("bo", "caruana"), "eo": ("eo", None), "divbo": ("divbo", None)}
BUDGET_SECONDS, WORKERS, OUTER = 120.0, 2, 3


def cells() -> list[tuple[str, int]]:
    return [(d, k) for d in SLC for k in range(1, OUTER + 1)] + [(d, k) for d in MLC for k in (1, 2)]


def specs() -> list[dict]:
    return [{"dataset": d, "fold": k, "variant": v} for d, k in cells() for v in VARIANTS]


def key(r: dict) -> tuple:
    return (r["dataset"], r["fold"], r["variant"])


def run_data(dataset: str, fold: int):
    """The run's training and test data: an outer 3-fold of a UCI set, or a fixed fold pair."""
    import numpy as np

    from ggp_automl.evaluation.data import load_dataset
    from ggp_automl.search.run import describe_data, load_run_data

    if dataset in MLC:
        folder = MLC[dataset]
        return load_run_data(SHARED / "mlc-folds" / folder / f"{folder}-train{fold}.arff",
                             SHARED / "mlc-folds" / folder / f"{folder}-test{fold}.arff")
    path = SHARED / "slc" / f"{dataset}.arff"
    data = load_dataset(path).labelled()
    train, test = data.task.kfold(data.Y, OUTER, np.random.default_rng(0))[fold - 1]
    return describe_data(data.subset(train), data.subset(test), path, None, None, f"{dataset} outer fold {fold}")


def run_one(spec: dict, out: Path) -> dict:
    """One run, in this process (the benchmark starts one process per run)."""
    from ggp_automl.search import RunConfig, start

    method, ensemble = VARIANTS[spec["variant"]]
    grammar = ROOT / "grammars" / ("large.bnf" if spec["dataset"] in MLC else "ensembles.bnf")
    config = RunConfig(method=method, budget_seconds=BUDGET_SECONDS, workers=WORKERS, seed=spec["fold"],
                       ensemble=ensemble)
    t0 = time.time()
    outcome = start(config, grammar, run_data(spec["dataset"], spec["fold"]), out=out, argv=["bench_ensembles"])
    return summarise({**spec, "wall": round(time.time() - t0, 1)}, outcome.final, out)


def _measure(measures: dict | None, task: str) -> float | None:
    if not measures:
        return None
    return measures.get("error_rate" if task_of_record(task).single_label else "fitness")


def summarise(record: dict, final: dict, out: Path) -> dict:
    task = final.get("task")
    ensemble = final.get("ensemble") or {}
    logged = [json.loads(line) for line in (out / "evaluations.jsonl").read_text().splitlines() if line.strip()]
    record.update({
        "task": task, "measure": "error" if task_of_record(task).single_label else "fitness",
        "single_test": _measure((final.get("test") or {}).get("measures"), task),
        "single_valid": (final.get("winner") or {}).get("valid_fitness"),
        "ensemble_returned": bool(ensemble.get("returned")),
        "ensemble_test": _measure(ensemble.get("test"), task) if ensemble.get("returned") else None,
        "ensemble_valid": ensemble.get("valid_fitness"),
        "ensemble_size": len(ensemble.get("members") or []),
        "ensemble_seconds": ensemble.get("seconds"),
        "ensemble_reason": ensemble.get("reason"),
        "evaluations": sum(1 for e in logged if e["phase"] == "search"),
        "overrun": final.get("overrun_seconds", 0.0),
    })
    # the returned model's test measure: the ensemble when one was built, else the single best
    record["returned_test"] = record["ensemble_test"] if record["ensemble_returned"] else record["single_test"]
    return record


def load() -> list[dict]:
    return [json.loads(line) for line in RECORDS.read_text().splitlines() if line.strip()] if RECORDS.exists() else []


def _fmt(x, digits=4) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def table(records: list[dict]) -> str:
    by = {key(r): r for r in records if "error" not in r}
    lines = ["# Issue 12: ensembles from the search (`python benchmarks/bench_ensembles.py`)", "",
             f"{BUDGET_SECONDS / 60:g}-minute runs, {WORKERS} workers, seed = fold, one run at a time on the 2-core "
             "machine with nothing else running. Single-label cells: test **error** (lower is better), outer "
             "stratified 3-fold, `ensembles.bnf`; multi-label cells: test **fitness** (Eq. 5.1, higher is better), "
             "fixed folds, `large.bnf`. *single* and *caruana* come from the same `bo --ensemble caruana` run; "
             "eo returns its own majority-vote ensemble; divbo ends with Caruana selection. size: distinct members; "
             "s: seconds the ensemble step added at the end (selection and refits).", "",
             "| cell | single | caruana | eo | divbo | size c/eo/d | s c/eo/d | evals c/eo/d |", "|---" * 8 + "|"]
    sums: dict[str, list[float]] = {"single": [], "caruana": [], "eo": [], "divbo": []}
    wins = {"caruana>=single": 0, "divbo>=caruana": 0, "cells": 0}
    for d, k in cells():
        runs = [by.get((d, k, v)) for v in VARIANTS]
        if not all(runs):
            continue
        bo, eo, dv = runs
        errors = task_of_record(bo["task"]).single_label  # single-label cells compare error rates
        better = (lambda a, b: a <= b) if errors else (lambda a, b: a >= b)
        sign = -1.0 if errors else 1.0  # averaged as "higher is better"
        values = {"single": bo["single_test"], "caruana": bo["returned_test"], "eo": eo["returned_test"],
                  "divbo": dv["returned_test"]}
        for name, v in values.items():
            sums[name].append(sign * v)
        wins["cells"] += 1
        wins["caruana>=single"] += better(values["caruana"], values["single"])
        wins["divbo>=caruana"] += better(values["divbo"], values["caruana"])
        lines.append(f"| {d} f{k} ({bo['measure']}) | " + " | ".join(_fmt(values[n]) for n in values)
                     + f" | {bo['ensemble_size']}/{eo['ensemble_size']}/{dv['ensemble_size']}"
                     + f" | {_fmt(bo['ensemble_seconds'], 1)}/{_fmt(eo['ensemble_seconds'], 1)}/"
                       f"{_fmt(dv['ensemble_seconds'], 1)}"
                     + f" | {bo['evaluations']}/{eo['evaluations']}/{dv['evaluations']} |")
    if wins["cells"]:
        means = {n: statistics.mean(v) for n, v in sums.items()}
        gain1, gain2 = means["caruana"] - means["single"], means["divbo"] - means["caruana"]
        lines += ["", f"Mean over {wins['cells']} cells of the test measure as *higher is better* (single-label "
                  "cells enter as −error): " + ", ".join(f"{n} {_fmt(m)}" for n, m in means.items()) + ".", "",
                  f"* Target 1, post-hoc selection never worse than the single best on average: caruana − single = "
                  f"{gain1:+.4f} → **{'met' if gain1 >= 0 else 'not met'}** (caruana at least as good in "
                  f"{wins['caruana>=single']} of {wins['cells']} cells).",
                  f"* Target 2, divbo at least as good as Caruana on average: divbo − caruana = "
                  f"{gain2:+.4f} → **{'met' if gain2 >= 0 else 'not met'}** (divbo at least as good in "
                  f"{wins['divbo>=caruana']} of {wins['cells']} cells)."]
    failed = [r for r in records if "error" in r]
    if failed:
        lines += ["", "Runs that failed: " + ", ".join(f"{r['dataset']} f{r['fold']} {r['variant']}" for r in failed)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="only rewrite the table from the records")
    ap.add_argument("--runs", type=Path, default=ROOT / "runs" / "bench-ensembles", help="run directories")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # a JSON spec: run it in this process
    args = ap.parse_args(argv)
    if args.one:
        spec = json.loads(args.one)
        out = args.runs / f"{spec['dataset']}-f{spec['fold']}-{spec['variant']}"
        print(json.dumps(run_one(spec, out)))
        return 0
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.table:
        if not SHARED.exists():
            print(f"skipped: {SHARED} is not there")
            return 0
        done = {key(r) for r in load()}
        for spec in specs():
            if key(spec) in done:
                continue
            out = args.runs / f"{spec['dataset']}-f{spec['fold']}-{spec['variant']}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            proc = subprocess.run([sys.executable, __file__, "--runs", str(args.runs), "--one", json.dumps(spec)],
                                  capture_output=True, text=True)
            try:
                record = json.loads(proc.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                record = {**spec, "error": (proc.stderr or proc.stdout)[-800:]}
            with RECORDS.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(json.dumps({k: record.get(k) for k in ("dataset", "fold", "variant", "single_test",
                                                         "returned_test", "ensemble_size", "error")}), flush=True)
    (RESULTS / "ensembles.md").write_text(table(load()))
    print(table(load()))
    return 0


if __name__ == "__main__":
    sys.exit(main())

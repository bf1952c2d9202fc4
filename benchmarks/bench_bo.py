"""Benchmark of issue 11: BO, TPE, GA against PBIL, GGP and random search in the Large space (not a test).

    python benchmarks/bench_bo.py            # the grid (36 runs of 3 minutes, about 115 minutes), resumable
    python benchmarks/bench_bo.py --table    # rewrite results/bo.md and the anytime plots from the records

The grid: ``cli.py evolve --grammar grammars/large.bnf`` with ``--method`` bo, tpe, ga, pbil, ggp and
random, on the fixed folds 1 and 2 of Flags and Emotions (``../shared/datasets/mlc-folds``; seed k on
fold k), a 3-minute budget and 2 workers each (24 runs); then bo with each remedy of the BO thesis —
``--reshuffle``, ``--final-choice posterior-mean`` — and with the GP surrogate (``--surrogate gp``),
12 runs. One run at a time (the machine has 2 cores). Every finished run is appended to
``benchmarks/results/bo.jsonl`` (an interrupted benchmark resumes where it stopped); the table goes
to ``benchmarks/results/bo.md`` and one anytime plot per dataset (best validation fitness of the
search against time, mean over the folds) to ``benchmarks/results/bo-anytime-<dataset>.png``.

The issue's target: on average over the cells (dataset × fold), bo and tpe reach random search's
final validation fitness in at most half the budget. Per cell, the time at which a method's best
search fitness first reaches random search's best (a method that never does counts the whole
budget); the table gives each cell's time and the mean.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDS = ROOT.parent / "shared" / "datasets" / "mlc-folds"
RESULTS = ROOT / "benchmarks" / "results"
RECORDS = RESULTS / "bo.jsonl"
DATASETS = {"flags": "Flags", "emotions": "Emotions"}
METHODS = ("bo", "tpe", "ga", "pbil", "ggp", "random")
VARIANTS = {"bo-reshuffle": ["--method", "bo", "--reshuffle"],
            "bo-posterior-mean": ["--method", "bo", "--final-choice", "posterior-mean"],
            "bo-gp": ["--method", "bo", "--surrogate", "gp"]}
BUDGET, BUDGET_SECONDS, WORKERS, SEEDS = "3m", 180.0, 2, (1, 2)


def specs() -> list[dict]:
    out = []
    for variants in (list(METHODS), list(VARIANTS)):
        for dataset in DATASETS:
            for seed in SEEDS:
                out += [{"dataset": dataset, "seed": seed, "variant": v} for v in variants]
    return out


def run_one(spec: dict, runs: Path) -> dict:
    folder, k = DATASETS[spec["dataset"]], spec["seed"]
    out = runs / f"{spec['dataset']}-{spec['variant']}-s{k}"
    if out.exists():
        subprocess.run(["rm", "-rf", str(out)], check=True)
    args = VARIANTS.get(spec["variant"], ["--method", spec["variant"]])
    cmd = [sys.executable, str(ROOT / "cli.py"), "evolve", "--grammar", str(ROOT / "grammars" / "large.bnf"),
           "--data", str(FOLDS / folder / f"{folder}-train{k}.arff"),
           "--test", str(FOLDS / folder / f"{folder}-test{k}.arff"), *args,
           "--budget", BUDGET, "--workers", str(WORKERS), "--seed", str(k), "--out", str(out), "--quiet"]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    record = {**spec, "wall": round(time.time() - t0, 1), "returncode": proc.returncode}
    if not (out / "final.json").exists():
        record["error"] = (proc.stderr or proc.stdout)[-800:]
        return record
    return summarise(record, out)


def summarise(record: dict, out: Path) -> dict:
    final = json.loads((out / "final.json").read_text())
    log = out / "evaluations.jsonl"
    logged = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    search = [e for e in logged if e["phase"] == "search"]
    finals = [e["time"] for e in logged if e["phase"] == "final"]
    minutes = (min(finals) if finals else final["time"]) / 60
    best, curve = 0.0, []  # the anytime curve: (time, best full-fidelity search fitness) at each improvement
    for e in search:
        if e["status"] == "ok" and (e.get("level") or 0) == 0 and e["fitness"] > best:
            best = e["fitness"]
            curve.append((e["time"], round(best, 5)))
    walls = [e["wall_time"] for e in search if e["status"] == "ok"]
    record.update({
        "winner": (final.get("winner") or {}).get("phenotype"),
        "valid_fitness": (final.get("winner") or {}).get("valid_fitness"),
        "test_fitness": ((final.get("test") or {}).get("measures") or {}).get("fitness"),
        "search_best": best, "curve": curve,
        "evaluations": len(search), "evals_per_minute": round(len(search) / minutes, 1) if minutes else 0.0,
        "median_eval_seconds": round(statistics.median(walls), 3) if walls else None,
        "overrun": final.get("overrun_seconds", 0.0),
    })
    return record


def load(path: Path = RECORDS) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def key(r: dict) -> tuple:
    return (r["dataset"], r["seed"], r["variant"])


def reach_time(curve: list, target: float) -> float:
    """When a curve first reaches ``target`` (the whole budget if never)."""
    return next((t for t, f in curve if f >= target - 1e-12), BUDGET_SECONDS)


def table(records: list[dict]) -> str:
    by = {key(r): r for r in records if "error" not in r}
    variants = [v for v in (*METHODS, *VARIANTS) if any(k[2] == v for k in by)]
    cells = [(d, s) for d in DATASETS for s in SEEDS]
    lines = ["# Issue 11: BO, TPE and GA in the Large space (`python benchmarks/bench_bo.py`)", "",
             f"Fixed folds 1 and 2 of Flags and Emotions, a {BUDGET} budget and {WORKERS} workers per run, "
             "seed = fold, "
             "one run at a time on the 2-core machine with nothing else running. Test fitness: the winner refit on "
             "the training fold and scored on the test fold (Eq. 5.1). Validation: the winner's fitness on the final "
             "re-evaluation split. evals/min: search evaluations per minute of the search phase.", "",
             "| method | " + " | ".join(f"{d} test (f1, f2)" for d in DATASETS) + " | mean test | mean valid "
             "| evals/min | median eval s |", "|---" * (len(DATASETS) + 5) + "|"]
    for v in variants:
        row, tests, valids, speeds, medians = [v], [], [], [], []
        for d in DATASETS:
            rs = [by.get((d, s, v)) for s in SEEDS]
            ts = [r["test_fitness"] for r in rs if r and r.get("test_fitness") is not None]
            tests += ts
            valids += [r["valid_fitness"] for r in rs if r and r.get("valid_fitness") is not None]
            speeds += [r["evals_per_minute"] for r in rs if r]
            medians += [r["median_eval_seconds"] for r in rs if r and r.get("median_eval_seconds")]
            row.append(f"{statistics.mean(ts):.3f} ({', '.join(f'{t:.3f}' for t in ts)})" if ts else "–")
        row += [f"{statistics.mean(tests):.3f}" if tests else "–", f"{statistics.mean(valids):.3f}" if valids else "–",
                f"{statistics.mean(speeds):.1f}" if speeds else "–",
                f"{statistics.median(medians):.2f}" if medians else "–"]
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "Time (s) at which the best search fitness first reaches random search's best of the same cell "
              f"(never: {BUDGET_SECONDS:.0f}); target: mean ≤ {BUDGET_SECONDS / 2:.0f} s for bo and tpe.", "",
              "| method | " + " | ".join(f"{d} f{s}" for d, s in cells) + " | mean | target met |",
              "|---" * (len(cells) + 3) + "|"]
    for v in variants:
        if v == "random":
            continue
        times = []
        for d, s in cells:
            r, rnd = by.get((d, s, v)), by.get((d, s, "random"))
            times.append(reach_time(r["curve"], rnd["search_best"]) if r and rnd else None)
        known = [t for t in times if t is not None]
        mean = statistics.mean(known) if known else None
        met = "–" if mean is None or v not in ("bo", "tpe") else ("yes" if mean <= BUDGET_SECONDS / 2 else "no")
        lines.append(f"| {v} | " + " | ".join("–" if t is None else f"{t:.0f}" for t in times)
                     + f" | {'–' if mean is None else f'{mean:.0f}'} | {met} |")
    return "\n".join(lines) + "\n"


def plots(records: list[dict]) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    out = []
    grid = np.linspace(0, BUDGET_SECONDS, 361)
    for d in DATASETS:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for v in (*METHODS, *VARIANTS):
            rs = [r for r in records if r["dataset"] == d and r["variant"] == v and "error" not in r]
            if not rs:
                continue
            ys = []
            for r in rs:
                t = [p[0] for p in r["curve"]]
                f = [p[1] for p in r["curve"]]
                idx = np.searchsorted(t, grid, side="right") - 1
                ys.append(np.where(idx >= 0, np.asarray(f + [0.0])[idx], np.nan))
            ax.step(grid, np.nanmean(np.vstack(ys), axis=0), where="post", label=v,
                    linestyle="--" if v in VARIANTS else "-")
        ax.set(title=f"{d}: best validation fitness of the search (mean over folds 1, 2)", xlabel="seconds",
               ylabel="best fitness so far")
        ax.legend(fontsize=8)
        path = RESULTS / f"bo-anytime-{d}.png"
        fig.tight_layout()
        fig.savefig(path, dpi=110)
        plt.close(fig)
        out.append(path)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--table", action="store_true", help="only rewrite the table and plots from the records")
    ap.add_argument("--runs", type=Path, default=ROOT / "runs" / "bench-bo", help="where the run directories go")
    args = ap.parse_args(argv)
    RESULTS.mkdir(parents=True, exist_ok=True)
    if not args.table:
        if not FOLDS.exists():
            print(f"skipped: {FOLDS} is not there")
            return 0
        done = {key(r) for r in load()}
        for spec in specs():
            if key(spec) in done:
                continue
            record = run_one(spec, args.runs)
            with RECORDS.open("a") as f:
                f.write(json.dumps(record) + "\n")
            print(json.dumps({k: record.get(k) for k in ("dataset", "seed", "variant", "test_fitness",
                                                         "evals_per_minute", "error")}), flush=True)
    records = load()
    (RESULTS / "bo.md").write_text(table(records))
    plots(records)
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

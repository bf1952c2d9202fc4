"""Benchmark the search methods: test fitness and evaluations per minute (not a test).

    python benchmarks/bench_search.py                      # the full grid (about 75 min on 2 cores)
    python benchmarks/bench_search.py --scaling            # 1 vs 2 workers (about 8 min, run it alone)
    python benchmarks/bench_search.py --budget 30s --seeds 1 --datasets flags   # a quick look

The grid: GGP, spGGP, random and beam search on the Small and Large spaces, on flags,
emotions and yeast, with the Auto-MEKA experiments' fixed folds (``../shared/datasets/
mlc-folds``; seed k runs on fold k), each run a real ``cli.py evolve`` with a 2-minute budget.
By default two runs go at a time with one evaluation worker each (2 cores). Every finished
run is appended to ``benchmarks/results/methods.jsonl``, so an interrupted benchmark resumes
where it stopped; the tables go to ``benchmarks/results/methods.md``. (Issue 8's benchmark of
time limits, modes and screening is ``bench_throughput.py``; it writes ``results/search.md``.)
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDS = ROOT.parent / "shared" / "datasets" / "mlc-folds"
RESULTS = ROOT / "benchmarks" / "results"
DATASETS = {"flags": "Flags", "emotions": "Emotions", "yeast": "Yeast"}


def _seconds(text: str) -> float:
    units = {"s": 1, "m": 60, "h": 3600}
    return float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)


def run_one(spec: dict, runs_dir: Path) -> dict:
    folder = DATASETS[spec["dataset"]]
    k = spec["seed"]
    out = runs_dir / f"{spec['space']}-{spec['dataset']}-{spec['method']}-s{k}-w{spec['workers']}-{spec['budget']}"
    if out.exists():
        subprocess.run(["rm", "-rf", str(out)], check=True)
    cmd = [sys.executable, str(ROOT / "cli.py"), "evolve", "--grammar", str(ROOT / "grammars" / f"{spec['space']}.bnf"),
           "--data", str(FOLDS / folder / f"{folder}-train{k}.arff"),
           "--test", str(FOLDS / folder / f"{folder}-test{k}.arff"),
           "--method", spec["method"], "--budget", spec["budget"], "--workers", str(spec["workers"]),
           "--seed", str(k), "--out", str(out), "--quiet"]
    t0 = time.time()
    proc = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.time() - t0
    record = {**spec, "wall": round(wall, 1), "returncode": proc.returncode}
    if not (out / "final.json").exists():
        record["error"] = (proc.stderr or proc.stdout)[-500:]
        return record
    return _summarise(record, out)


def _summarise(record: dict, out: Path) -> dict:
    final = json.loads((out / "final.json").read_text())
    log = out / "evaluations.jsonl"  # absent when not one candidate finished in the budget
    logged = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    search = [e for e in logged if e["phase"] == "search"]
    # the search phase lasts until the first final re-evaluation (or the end of the run)
    finals = [e["time"] for e in logged if e["phase"] == "final"]
    search_minutes = (min(finals) if finals else final["time"]) / 60
    record.update({
        "status": final["status"],
        "winner": (final.get("winner") or {}).get("phenotype"),
        "valid_fitness": (final.get("winner") or {}).get("valid_fitness"),
        "test": (final.get("test") or {}).get("measures"),
        "evaluations": final["counts"]["evaluations"], "failed": final["counts"]["failed"],
        "cached": final["counts"]["cached"], "generations": final["counts"]["generations"],
        "search_evaluations": len(search),
        "evals_per_minute": round(len(search) / search_minutes, 1) if search_minutes > 0 else 0.0,
        "overrun": final.get("overrun_seconds", 0.0),
    })
    return record


def _reread(record: dict, runs_dir: Path) -> dict:
    """``record`` with its numbers read again from its run directory (same wall time)."""
    folder = runs_dir / (f"{record['space']}-{record['dataset']}-{record['method']}-s{record['seed']}"
                         f"-w{record['workers']}-{record['budget']}")
    if not (folder / "final.json").exists():
        return record
    fresh = _summarise(record, folder)
    return fresh


def load_done(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def key(spec: dict) -> tuple:
    return (spec["space"], spec["dataset"], spec["method"], spec["seed"], spec["workers"], spec["budget"])


def _mean_sd(values: list[float]) -> str:
    values = [v for v in values if v is not None]
    if not values:
        return "—"
    if len(values) == 1:
        return f"{values[0]:.3f}"
    return f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}"


def grid_table(records: list[dict], budget: str) -> str:
    rows = [r for r in records if r["workers"] == 1 and r["budget"] == budget]
    lines = [f"Test fitness (Eq. 5.1; mean ± sd over seeds = folds) and search evaluations per minute; "
             f"budget {budget}, one worker per run, two runs at a time on 2 cores.", "",
             "| space | dataset | method | runs | test fitness | evaluations / min | failed % | no model |",
             "|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault((r["space"], r["dataset"], r["method"]), []).append(r)
    for (space, dataset, method), rs in sorted(groups.items()):
        fitness = [r["test"]["fitness"] for r in rs if r.get("test")]
        epm = [r["evals_per_minute"] for r in rs if "evals_per_minute" in r]
        failed = sum(r.get("failed", 0) for r in rs) / max(sum(r.get("evaluations", 0) for r in rs), 1)
        no_model = sum(1 for r in rs if not r.get("test"))
        lines.append(f"| {space} | {dataset} | {method} | {len(rs)} | {_mean_sd(fitness)} | "
                     f"{statistics.mean(epm) if epm else 0:.1f} | {100 * failed:.0f} | {no_model} |")
    return "\n".join(lines)


def scaling_table(records: list[dict]) -> str:
    rows = [r for r in records if r.get("scaling")]
    lines = ["Evaluations per minute with 1 and 2 workers (GGP, seed 1, each run alone on the machine).", "",
             "| space | dataset | workers | search evaluations | evaluations / min | test fitness |",
             "|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: (r["space"], r["dataset"], r["workers"])):
        fit = r["test"]["fitness"] if r.get("test") else float("nan")
        lines.append(f"| {r['space']} | {r['dataset']} | {r['workers']} | {r.get('search_evaluations', 0)} | "
                     f"{r.get('evals_per_minute', 0):.1f} | {fit:.3f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--budget", default="2m")
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    p.add_argument("--spaces", nargs="+", default=["small", "large"])
    p.add_argument("--methods", nargs="+", default=["ggp", "spggp", "random", "beam"])
    p.add_argument("--parallel", type=int, default=2, help="runs at a time")
    p.add_argument("--scaling", action="store_true", help="1 vs 2 workers instead of the grid")
    p.add_argument("--runs-dir", default="/tmp/ggp-bench-runs")
    p.add_argument("--results", default=str(RESULTS / "methods.jsonl"))
    p.add_argument("--retabulate", action="store_true", help="recompute the records from the kept run directories")
    args = p.parse_args(argv)
    if not FOLDS.exists():
        print(f"benchmark skipped: {FOLDS} not found (the fixed folds of ../shared are needed)", file=sys.stderr)
        return 1
    runs_dir = Path(args.runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    results = Path(args.results)
    results.parent.mkdir(parents=True, exist_ok=True)
    done = {key(r): r for r in load_done(results) if "error" not in r}
    if args.retabulate:
        records = []
        for r in load_done(results):
            fresh = _reread(r, runs_dir)
            records.append(fresh)
        results.write_text("".join(json.dumps(r) + "\n" for r in records))
        done = {key(r): r for r in records}

    if args.scaling:
        specs = [{"space": s, "dataset": "emotions", "method": "ggp", "seed": 1, "workers": w,
                  "budget": args.budget, "scaling": True} for s in args.spaces for w in (1, 2)]
        parallel = 1
    else:
        specs = [{"space": s, "dataset": d, "method": m, "seed": k, "workers": 1, "budget": args.budget}
                 for s in args.spaces for d in args.datasets for k in args.seeds for m in args.methods]
        parallel = args.parallel
    todo = [s for s in specs if key(s) not in done or (args.scaling and not done[key(s)].get("scaling"))]
    print(f"{len(specs)} runs, {len(specs) - len(todo)} already done, {len(todo)} to go "
          f"(~{len(todo) * _seconds(args.budget) / 60 / parallel:.0f} min)", flush=True)

    def work(spec):
        record = run_one(spec, runs_dir)
        with open(results, "a") as f:
            f.write(json.dumps(record) + "\n")
        fit = record.get("test", {}) or {}
        print(f"{spec['space']:6s} {spec['dataset']:9s} {spec['method']:7s} seed {spec['seed']} "
              f"w{spec['workers']}: test {fit.get('fitness', float('nan')):.3f}  "
              f"{record.get('evals_per_minute', 0):6.1f} evals/min  {record.get('error', '')[:80]}", flush=True)
        return record

    with ThreadPoolExecutor(parallel) as pool:
        list(pool.map(work, todo))

    records = load_done(results)
    md = RESULTS / "methods.md"
    sections = ["# Search methods benchmark", "", "Reproduce: `python benchmarks/bench_search.py` (grid) and "
                "`python benchmarks/bench_search.py --scaling`; raw records: `methods.jsonl`.", "",
                grid_table(records, args.budget if not args.scaling else "2m"), "", scaling_table(records), ""]
    md.write_text("\n".join(sections))
    print(f"tables written to {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

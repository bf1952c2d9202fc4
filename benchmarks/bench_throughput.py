"""Benchmark of issue 8: does every worker-second do useful work? (not a test)

    python benchmarks/bench_throughput.py --variant before --tree /tmp/ggp-before   # a worktree of the old commit
    python benchmarks/bench_throughput.py --variant after                           # this checkout, its defaults
    python benchmarks/bench_throughput.py --variant random --methods random
    python benchmarks/bench_throughput.py --variant after-generational -- --mode generational   # ablations
    python benchmarks/bench_throughput.py --table                                   # rewrite results/throughput.md

The grid: the Large space on Flags, Emotions and Yeast, folds 1 and 2 of the Auto-MEKA
experiments' fixed folds (``../shared/datasets/mlc-folds``; seed = fold), 3-minute budgets,
2 evaluation workers, one run at a time (the machine has 2 cores). Each run is a real
``cli.py evolve`` started through ``benchmarks/_instrumented.py``, which times every candidate
evaluation from the outside, identically for every version of the code, and gives per run:

* test fitness (Eq. 5.1 on the fold's test file, of the refit winner);
* search evaluations per minute (finished evaluations of the search phase ÷ its minutes);
* generations completed;
* worker utilisation: busy worker-seconds ÷ available worker-seconds (workers × search phase);
* useful work: worker-seconds of evaluations that ended with a fitness ÷ busy worker-seconds
  (a candidate killed by its time limit, a crash, or a start cut short by the deadline is busy
  but not useful).

Records are appended to ``benchmarks/results/throughput.jsonl`` (an interrupted benchmark
resumes where it stopped); ``--table`` writes ``benchmarks/results/throughput.md``.
"""
from __future__ import annotations

import argparse
import json
import zlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDS = ROOT.parent / "shared" / "datasets" / "mlc-folds"
RESULTS = ROOT / "benchmarks" / "results"
DATASETS = {"flags": "Flags", "emotions": "Emotions", "yeast": "Yeast"}


def run_one(spec: dict, tree: Path, runs_dir: Path, extra: list[str]) -> dict:
    folder, k = DATASETS[spec["dataset"]], spec["fold"]
    name = f"{spec['variant']}-{spec['dataset']}-{spec['method']}-f{k}"
    out, timing = runs_dir / name, runs_dir / f"{name}.timing.json"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    argv = ["evolve", "--grammar", str(tree / "grammars" / "large.bnf"),
            "--data", str(FOLDS / folder / f"{folder}-train{k}.arff"),
            "--test", str(FOLDS / folder / f"{folder}-test{k}.arff"),
            "--method", spec["method"], "--budget", spec["budget"], "--workers", str(spec["workers"]),
            "--seed", str(k), "--out", str(out), "--quiet", *extra]
    env = {**os.environ, "PYTHONPATH": str(tree)}
    t0 = time.time()
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "_instrumented.py"), str(timing), *argv],
                          capture_output=True, text=True, cwd=tree, env=env)
    record = {**spec, "extra": extra, "tree": str(tree), "wall": round(time.time() - t0, 1),
              "returncode": proc.returncode}
    if not (out / "final.json").exists():
        record["error"] = (proc.stderr or proc.stdout)[-800:]
        return record
    return summarise(record, out, timing)


def _overlap(a0: float, a1: float, b0: float, b1: float) -> float:
    return max(0.0, min(a1, b1) - max(a0, b0))


def summarise(record: dict, out: Path, timing_path: Path) -> dict:
    final = json.loads((out / "final.json").read_text())
    timing = json.loads(timing_path.read_text())
    s0 = timing["phases"]["search_start"]
    s1 = timing["phases"].get("search_end", max((e["end"] for e in timing["events"]), default=s0))
    minutes = max(s1 - s0, 1e-9) / 60
    busy = sum(_overlap(e["start"], e["end"], s0, s1) for e in timing["events"])
    useful = sum(_overlap(e["start"], e["end"], s0, s1) for e in timing["events"] if e["status"] == "ok")
    finished = [e for e in timing["events"] if e["status"] is not None and e["end"] <= s1 + 1e-6]
    counts = final.get("counts", {})
    logged = [json.loads(line) for line in (out / "evaluations.jsonl").read_text().splitlines() if line.strip()] \
        if (out / "evaluations.jsonl").exists() else []
    record.update({
        "status": final["status"],
        "winner": (final.get("winner") or {}).get("phenotype"),
        "valid_fitness": (final.get("winner") or {}).get("valid_fitness"),
        "test_fitness": ((final.get("test") or {}).get("measures") or {}).get("fitness"),
        "search_minutes": round(minutes, 3),
        "search_evaluations": len(finished),
        "evals_per_minute": round(len(finished) / minutes, 2),
        "generations": counts.get("generations"),
        "utilisation": round(busy / (record["workers"] * (s1 - s0)), 4) if s1 > s0 else None,
        "useful_work": round(useful / busy, 4) if busy > 0 else None,
        "busy_seconds": round(busy, 1), "useful_seconds": round(useful, 1),
        "timeouts": sum(1 for e in finished if e["status"] == "timeout"),
        "capped": (final.get("limits") or {}).get("capped"),
        "capped_saved_seconds": (final.get("limits") or {}).get("saved_seconds"),
        "overrun": final.get("overrun_seconds", 0.0),
        "skipped": sum(1 for r in logged if r.get("status") == "skipped"),
        # which candidates the search evaluated, in order (crc32 of the phenotype): to see where two
        # methods evaluated the same candidates
        "search_candidates": [zlib.crc32(r["phenotype"].encode()) for r in logged if r.get("phase") == "search"],
    })
    return record


def resummarise(results: Path, runs_dir: Path) -> None:
    """Recompute every record from its run directory (kept under ``runs_dir``)."""
    records = []
    for r in load(results):
        name = f"{r['variant']}-{r['dataset']}-{r['method']}-f{r['fold']}"
        out, timing = runs_dir / name, runs_dir / f"{name}.timing.json"
        records.append(summarise(dict(r), out, timing) if (out / "final.json").exists() and timing.exists() else r)
    results.write_text("".join(json.dumps(r) + "\n" for r in records))


def shared_candidates(records: list[dict], a: str = "after", b: str = "random") -> str:
    """Per dataset and fold: how many search candidates variants ``a`` and ``b`` both evaluated, and
    how long their sequences of evaluated candidates agree from the start."""
    index = {(r["variant"], r["dataset"], r["fold"]): r for r in records if "search_candidates" in r}
    lines = [f"| dataset | fold | {a} evaluated | {b} evaluated | in common | same first |", "|---|---|---|---|---|---|"]
    for (variant, dataset, fold), ra in sorted(index.items(), key=lambda kv: (list(DATASETS).index(kv[0][1]),
                                                                             kv[0][2])):
        rb = index.get((b, dataset, fold))
        if variant != a or rb is None:
            continue
        ca, cb = ra["search_candidates"], rb["search_candidates"]
        prefix = next((i for i, (x, y) in enumerate(zip(ca, cb)) if x != y), min(len(ca), len(cb)))
        lines.append(f"| {dataset} | {fold} | {len(ca)} | {len(cb)} | {len(set(ca) & set(cb))} | {prefix} |")
    return "\n".join(lines)


def load(path: Path) -> list[dict]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _key(r: dict) -> tuple:
    return (r["variant"], r["dataset"], r["method"], r["fold"], r["budget"], r["workers"])


def _mean(values) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.mean(values) if values else None


def _fmt(x, spec=".3f") -> str:
    return "—" if x is None else format(x, spec)


def table(records: list[dict]) -> str:
    lines = ["| variant | dataset | method | runs | test fitness | evaluations / min | generations | "
             "utilisation | useful work | time-outs | capped (saved s) |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        if "error" not in r:
            groups.setdefault((r["variant"], r["dataset"], r["method"]), []).append(r)
    order = {v: i for i, v in enumerate(dict.fromkeys(r["variant"] for r in records))}
    for (variant, dataset, method), rs in sorted(groups.items(), key=lambda kv: (list(DATASETS).index(kv[0][1]),
                                                                                 order[kv[0][0]])):
        fits = ", ".join(_fmt(r.get("test_fitness")) for r in sorted(rs, key=lambda r: r["fold"]))
        capped = [r.get("capped") for r in rs]
        saved = [r.get("capped_saved_seconds") for r in rs]
        capped_text = "—" if all(c is None for c in capped) else \
            f"{sum(c or 0 for c in capped)} ({sum(s or 0 for s in saved):.0f})"
        lines.append(
            f"| {variant} | {dataset} | {method} | {len(rs)} | {_fmt(_mean(r.get('test_fitness') for r in rs))} "
            f"({fits}) | {_fmt(_mean(r['evals_per_minute'] for r in rs), '.1f')} | "
            f"{_fmt(_mean(r['generations'] for r in rs), '.1f')} | "
            f"{_fmt(_mean(r['utilisation'] for r in rs), '.1%')} | {_fmt(_mean(r['useful_work'] for r in rs), '.1%')} | "
            f"{sum(r.get('timeouts', 0) for r in rs)} | {capped_text} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--variant", default="after", help="a label for this code and these settings")
    p.add_argument("--tree", default=str(ROOT), help="the source tree to run (e.g. a git worktree of an old commit)")
    p.add_argument("--methods", nargs="+", default=["ggp"])
    p.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=list(DATASETS))
    p.add_argument("--folds", type=int, nargs="+", default=[1, 2])
    p.add_argument("--budget", default="3m")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--runs-dir", default="/tmp/ggp-throughput-runs")
    p.add_argument("--results", default=str(RESULTS / "throughput.jsonl"))
    p.add_argument("--table", action="store_true", help="only write the table of the recorded runs")
    p.add_argument("--out", default=str(RESULTS / "throughput.md"), help="where --table writes the table")
    p.add_argument("--resummarise", action="store_true", help="recompute the records from the kept run directories")
    p.add_argument("extra", nargs="*", help="more evolve options, after --")
    args = p.parse_args(argv)
    results = Path(args.results)
    if args.resummarise:
        resummarise(results, Path(args.runs_dir))
    if args.table or args.resummarise:
        text = table(load(results)) + "\n\n" + shared_candidates(load(results))
        Path(args.out).write_text(text + "\n")
        print(text)
        return 0
    if not FOLDS.exists():
        print(f"benchmark skipped: {FOLDS} not found (the fixed folds of ../shared are needed)", file=sys.stderr)
        return 1
    runs_dir = Path(args.runs_dir)
    runs_dir.mkdir(parents=True, exist_ok=True)
    results.parent.mkdir(parents=True, exist_ok=True)
    done = {_key(r) for r in load(results) if "error" not in r}
    specs = [{"variant": args.variant, "dataset": d, "method": m, "fold": k, "budget": args.budget,
              "workers": args.workers} for d in args.datasets for k in args.folds for m in args.methods]
    todo = [s for s in specs if _key(s) not in done]
    print(f"{len(specs)} runs, {len(todo)} to go, one at a time", flush=True)
    for spec in todo:
        record = run_one(spec, Path(args.tree).resolve(), runs_dir, list(args.extra))
        with open(results, "a") as f:
            f.write(json.dumps(record) + "\n")
        print(f"{spec['variant']:12s} {spec['dataset']:9s} {spec['method']:7s} fold {spec['fold']}: "
              f"test {_fmt(record.get('test_fitness'))}  {_fmt(record.get('evals_per_minute'), '.1f')} evals/min  "
              f"gens {record.get('generations')}  util {_fmt(record.get('utilisation'), '.1%')}  "
              f"useful {_fmt(record.get('useful_work'), '.1%')}  {record.get('error', '')[-200:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

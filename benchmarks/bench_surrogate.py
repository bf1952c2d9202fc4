"""Cost of one BO ask (surrogate refit + acquisition) at 100, 1,000 and 5,000 observations, Large space.

Issue 11 asks that a suggestion cost less than the median evaluation of the space, or that what the
surrogate sees be capped. This script tells a BO method N synthetic observations (configurations
sampled from the flat Large space, a deterministic pseudo-fitness per configuration) and times the
next asks, for each surrogate, with the default cap (``--surrogate-cap``, 1,000) and without it.
The median evaluation time to compare with comes from run directories (``--runs DIR...``: every
ok evaluation in their ``evaluations.jsonl``), e.g. the random-search runs of ``bench_bo.py``.

    python benchmarks/bench_surrogate.py [--sizes 100 1000 5000] [--asks 5] [--runs DIR ...]

Writes ``benchmarks/results/surrogate-cost.md``.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ggp_automl.gp.binding import DatasetMeta  # noqa: E402
from ggp_automl.gp.bnf_parser import load_grammar  # noqa: E402
from ggp_automl.search import RunConfig  # noqa: E402
from ggp_automl.search.methods import make_method  # noqa: E402

EMOTIONS = DatasetMeta(6, 72, 474)  # labels, features, rows of a learning split of Emotions


def ask_cost(surrogate: str, n: int, asks: int, cap: int | None) -> tuple[float, float]:
    """(seconds to tell n observations, median seconds per ask after them)."""
    params = {"surrogate": surrogate, "surrogate_cap": cap if cap is not None else 1_000_000}
    config = RunConfig(method="bo", budget_seconds=3600, seed=1, method_params=params)
    method = make_method(config, load_grammar(ROOT / "grammars" / "large.bnf"), EMOTIONS)
    rng = np.random.default_rng(1)
    for _ in range(method.params["initial"] + 1):  # builds SMAC; its initial design is asked first
        method.ask_one(rng)
    method.pending.clear()
    space = method.flat.space
    space.seed(2)
    t0 = time.perf_counter()
    for config_ in space.sample_configuration(n):
        values = dict(config_)
        fitness = (zlib.crc32(repr(sorted(values.items())).encode()) % 1000) / 1000
        method.observations.append((values, 1.0 - fitness, str(len(method.observations))))
        method._tell(values, 1.0 - fitness)
    told = time.perf_counter() - t0
    times = []
    for _ in range(asks):
        t = time.perf_counter()
        method.ask_one(rng)
        times.append(time.perf_counter() - t)
    return told, statistics.median(times)


def median_evaluation(runs: list[Path]) -> float | None:
    walls = []
    for run in runs:
        for line in (run / "evaluations.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r.get("status") == "ok" and r.get("phase") != "final" and r.get("wall") is not None:
                walls.append(float(r["wall"]))
    return statistics.median(walls) if walls else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 1000, 5000])
    ap.add_argument("--asks", type=int, default=5)
    ap.add_argument("--runs", type=Path, nargs="*", default=[])
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results" / "surrogate-cost.md")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rows = []
    for surrogate in ("rf", "gp"):
        for cap in (1000, None):
            for n in args.sizes:
                if cap is None and n <= 1000:  # the cap does not bind: the same run as with it
                    continue
                told, ask = ask_cost(surrogate, n, args.asks, cap)
                rows.append((surrogate, cap, n, told, ask))
                print(f"{surrogate} cap={cap} n={n}: tell all {told:.1f} s, ask {ask:.3f} s", flush=True)
    median = median_evaluation(args.runs) if args.runs else None
    lines = ["# Cost of one BO ask in the Large space (`python benchmarks/bench_surrogate.py`)", "",
             "Synthetic observations (configurations sampled from the flat Large space, 1,917 hyper-parameters); "
             "median of the next asks (surrogate refit + acquisition: SMAC's local search and 1,000 random "
             "challengers). One process on the 2-core machine, nothing else running.", "",
             "| surrogate | cap | observations | seconds per ask | seconds to tell all |", "|---|---|---|---|---|"]
    lines += [f"| {s} | {c if c is not None else 'none'} | {n} | {a:.3f} | {t:.1f} |" for s, c, n, t, a in rows]
    if median is not None:
        lines += ["", f"Median evaluation time in the Large space ({len(args.runs)} run directories): {median:.3f} s."]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()

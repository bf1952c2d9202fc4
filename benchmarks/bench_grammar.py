"""Grammar-engine timings: `check` (load + validate + analyse) and tree generation.

Run:  python benchmarks/bench_grammar.py [--repeat 5]

Prints, per shipped grammar: median wall time of a cold `python cli.py check` (new
process, so imports and Lark's parser construction are included), median in-process
load+analysis time, and generation and parse-back throughput (trees per second).
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from ggp_automl.gp.binding import DatasetMeta  # noqa: E402
from ggp_automl.gp.bnf_parser import load_grammar  # noqa: E402
from ggp_automl.gp.generate import TreeGenerator  # noqa: E402
from ggp_automl.gp.phenotype import parse_phenotype  # noqa: E402

YEAST = DatasetMeta(14, 103, 2417)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--trees", type=int, default=2000)
    args = ap.parse_args()
    print(f"{'grammar':8s} {'cli check (cold)':>17s} {'load+analyse':>13s} {'grow trees/s':>13s} {'parse-back/s':>13s}")
    for name in ("small", "medium", "large"):
        path = ROOT / "grammars" / f"{name}.bnf"
        cold = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, str(ROOT / "cli.py"), "check", "--grammar", str(path),
                            "--labels", "14", "--features", "103"], check=True, capture_output=True)
            cold.append(time.perf_counter() - t0)
        warm = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            g = load_grammar(path)
            g.analysis.summary(YEAST)
            warm.append(time.perf_counter() - t0)
        gen = TreeGenerator(g.bind(YEAST))
        rng = np.random.default_rng(0)
        t0 = time.perf_counter()
        trees = [gen.grow(rng) for _ in range(args.trees)]
        t_gen = time.perf_counter() - t0
        bound = g.bind(YEAST)
        t0 = time.perf_counter()
        for t in trees:
            parse_phenotype(t.phenotype, bound)
        t_parse = time.perf_counter() - t0
        print(f"{name:8s} {statistics.median(cold) * 1000:14.0f} ms {statistics.median(warm) * 1000:10.0f} ms "
              f"{args.trees / t_gen:13.0f} {args.trees / t_parse:13.0f}")


if __name__ == "__main__":
    main()

"""Benchmark of issue 25: the candidates that cost a run most, evaluated again (not a test).

    python benchmarks/bench_stragglers.py RUN_DIR [RUN_DIR ...] [--limit 30] [--top 12] [--tree OLD]

Takes from each run directory the search candidates that were stopped at their time limit and the
slowest ones that finished (``--top`` of each, in the order the run met them), and evaluates each
with :func:`evaluate_candidate` on a hold-out of the run's training rows (seed 1, as a run makes
it) under ``--limit`` seconds, one at a time. Prints the run's wall time beside the wall time now,
so a change to a learner shows what it does to the candidates the search actually meets. With
``--tree`` a checkout of another commit (a folder named ``ggp_automl``) is timed instead. Run it
alone: a second process on a 2-core machine changes every figure.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def stragglers(run: Path, top: int) -> list[dict]:
    """The run's ``top`` timed-out and ``top`` slowest finished search candidates, in run order."""
    records = [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines() if line.strip()]
    search = [r for r in records if r.get("phase") == "search" and r.get("status") in ("ok", "timeout")]
    timeouts = [r for r in search if r["status"] == "timeout"][:top]
    slow = sorted((r for r in search if r["status"] == "ok"), key=lambda r: -r["wall_time"])[:top]
    return sorted(timeouts + slow, key=lambda r: r["n"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("runs", nargs="+", type=Path)
    ap.add_argument("--limit", type=float, default=30.0)
    ap.add_argument("--top", type=int, default=12)
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose code is timed")
    args = ap.parse_args()
    if args.tree.resolve() != ROOT:
        if args.tree.resolve().name != "ggp_automl":
            sys.exit("--tree must be a folder named ggp_automl (git worktree add /tmp/x/ggp_automl COMMIT)")
        sys.path.insert(0, str(args.tree.resolve().parent))
    import numpy as np

    mod = lambda name: importlib.import_module(f"ggp_automl.{name}")
    mod("spaces.registry").load_all()
    candidate = mod("evaluation.candidate")
    limits = mod("evaluation.isolation").Limits(timeout=args.limit)
    print(f"code: {args.tree}; limit {args.limit:g} s\n")
    print("| run | candidate | run: status, wall (s) | now: status, wall (s) |")
    print("|---|---|---|---|")
    for run in args.runs:
        config = json.loads((run / "config.json").read_text())
        grammar = mod("gp.bnf_parser").load_grammar(args.tree / "grammars" / Path(config["grammar"]).name)
        ds = mod("evaluation.data").load_dataset(config["data"]["path"])
        X, Y = np.asarray(ds.X, dtype=float), np.asarray(ds.Y)
        bound = grammar.bind(mod("gp.binding").DatasetMeta(Y.shape[1], X.shape[1], len(X)))
        learn, valid = mod("evaluation.splits").holdout_split(Y, np.random.default_rng(1))
        split = candidate.Split(X[learn], Y[learn], X[valid], Y[valid], tuple(ds.categorical_features))
        for record in stragglers(run, args.top):
            tree = mod("gp.phenotype").parse_phenotype(record["phenotype"], bound)
            t0 = time.perf_counter()
            result = candidate.evaluate_candidate(tree, grammar, split, limits)
            wall = time.perf_counter() - t0
            shown = record["phenotype"] if len(record["phenotype"]) <= 90 else record["phenotype"][:87] + "..."
            print(f"| {run.name} | `{shown}` | {record['status']}, {record['wall_time']:.1f} "
                  f"(limit {record.get('limit') or 0:.0f}) | {result.status}, {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()

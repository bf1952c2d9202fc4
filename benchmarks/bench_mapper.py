"""Per-algorithm cost on yeast, and the evaluation engine's overhead per candidate.

Run:  python benchmarks/bench_mapper.py [--data ../shared/datasets/mlc/yeast.arff] [--out benchmarks/results/mapper.md]

1. For every registered algorithm, fit+predict time at default hyper-parameters inside
   its minimal chain (spaces/showcase.py), on yeast's learning/validation split of
   the thesis protocol (one 80 % fold, then 80/20: 1546 learning and 387 validation
   rows), each in an isolated worker with the thesis's 180 s limit. Median of
   --repeat runs (1 by default: the slow ones take minutes).
2. Engine overhead: wall time of evaluate_candidate minus fit and predict (process
   start, data hand-over, scoring) for a cheap candidate and for a ≥ 1 s candidate.
   Targets: ≤ 50 ms per candidate and ≤ 5 % for candidates that take ≥ 1 s.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from ggp_automl.evaluation.candidate import Split, evaluate_candidate  # noqa: E402
from ggp_automl.evaluation.data import load_dataset  # noqa: E402
from ggp_automl.evaluation.isolation import Limits, run_isolated  # noqa: E402
from ggp_automl.gp.bnf_parser import parse_grammar  # noqa: E402
from ggp_automl.gp.phenotype import parse_phenotype  # noqa: E402
from ggp_automl.spaces.model import MultiLabelModel  # noqa: E402
from ggp_automl.spaces.registry import load_all  # noqa: E402
from ggp_automl.spaces.showcase import minimal_chain  # noqa: E402


def fit_predict(name: str, split: Split) -> tuple[float, float]:
    model = MultiLabelModel(minimal_chain(name), "PCut1", list(split.categorical_features) or None)
    X_learn = np.abs(split.X_learn) if name == "NaiveBayesMultinomial" else split.X_learn
    X_valid = np.abs(split.X_valid) if name == "NaiveBayesMultinomial" else split.X_valid
    t0 = time.perf_counter()
    model.fit(X_learn, split.Y_learn)
    t1 = time.perf_counter()
    model.predict(X_valid)
    return t1 - t0, time.perf_counter() - t1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=str(ROOT.parent / "shared" / "datasets" / "mlc" / "yeast.arff"))
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--only", nargs="*", help="algorithm names (default: all)")
    ap.add_argument("--overhead-only", action="store_true", help="skip the per-algorithm table")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "mapper.md"))
    args = ap.parse_args()

    ds = load_dataset(args.data)
    rng = np.random.default_rng(0)
    order = rng.permutation(len(ds.X))
    train = order[: int(0.8 * len(order))]
    learn, valid = train[: int(0.8 * len(train))], train[int(0.8 * len(train)):]
    split = Split(ds.X[learn], ds.Y[learn], ds.X[valid], ds.Y[valid], tuple(ds.categorical_features))
    limits = Limits(timeout=args.timeout)
    lines = [f"# Mapper benchmark on {Path(args.data).name}: {len(learn)} learning / {len(valid)} validation rows",
             "", "| algorithm | kind | fit+predict (s) | status |", "|---|---|---|---|"]
    registry = load_all()
    for name in [] if args.overhead_only else sorted(args.only or registry):
        times, status = [], "ok"
        for _ in range(args.repeat):
            out = run_isolated(fit_predict, (name, split), limits)
            if out.status != "ok":
                status = f"{out.status}: {out.reason[:80]}"
                break
            times.append(sum(out.value))
        shown = f"{statistics.median(times):.2f}" if times else f"> {args.timeout:g}" if "timeout" in status else "–"
        lines.append(f"| {name} | {registry[name].kind} | {shown} | {status} |")
        print(lines[-1], flush=True)

    grammar = parse_grammar("<Start> ::= BR <slc> <pred_tshd>\n<slc> ::= NaiveBayes <nb> | RandomForest <nt>\n"
                            "<nb> ::= EMPTY\n<nt> ::= RANDOM-INT(2, 256)  #@ type=int default=100\n"
                            "<pred_tshd> ::= PCut1 | PCutL  #@ type=cat default=PCut1\n", "bench.bnf")
    bound = grammar.bind()
    lines += ["", "| candidate | runs | median fit+predict (s) | median overhead (ms) | overhead / total |",
              "|---|---|---|---|---|"]
    for phenotype, runs in (("BR NaiveBayes PCut1", 30), ("BR RandomForest 60 PCut1", 5)):
        tree = parse_phenotype(phenotype, bound)
        results = [evaluate_candidate(tree, grammar, split, limits) for _ in range(runs)]
        if not all(r.ok for r in results):      # a failed candidate has no fit to measure overhead against
            raise SystemExit(f"{phenotype}: {next(r for r in results if not r.ok).reason}")
        work = statistics.median(r.fit_time + r.predict_time for r in results)
        over = statistics.median(r.overhead for r in results)
        lines.append(f"| {phenotype} | {runs} | {work:.3f} | {over * 1000:.1f} | {over / (over + work):.1%} |")
        print(lines[-1], flush=True)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(lines) + "\n")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()

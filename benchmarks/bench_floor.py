"""Benchmark of issue 25, item 1: the fixed cost around one evaluation (not a test).

    python benchmarks/bench_floor.py                       # this checkout
    python benchmarks/bench_floor.py --tree /tmp/old/ggp_automl   # a worktree of another commit (same API)

For the cheapest candidates of the Large space on Flags (fold 1 of the Auto-MEKA folds, a
hold-out of its learning rows as a run makes it), it times

* *bare*: the compiled model fitted and used to predict in this process, warm (what the
  candidate itself costs: preprocessing, fit, predict);
* *evaluation*: :func:`evaluate_candidate` as the search calls it (isolation, limits,
  measures), wall time seen by the caller;

each the median of ``--repeats`` calls, and prints the table with the overhead (evaluation
wall time minus the fit and predict time the evaluation reports) and the ratio
evaluation / bare. Run it alone: a second process on a 2-core machine changes every figure.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ROOT.parent / "shared" / "datasets" / "mlc-folds" / "Flags" / "Flags-train1.arff"
CHEAP = ["LC ZeroR PCut1", "BRq 0.3932508124483616 ZeroR PCut1", "FW NaiveBayesMultinomial PCutL",
         "PSt 3 2 OneR 19 PCutL", "BRq 0.44879009668474923 NaiveBayes PCut1", "PCC NaiveBayesMultinomial PCutL"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tree", type=Path, default=ROOT, help="checkout whose code is timed")
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    if not FLAGS.exists():
        sys.exit(f"{FLAGS} not found: this benchmark needs ../shared/datasets/mlc-folds")
    if args.tree.resolve() != ROOT:  # another checkout, in a folder named ggp_automl: import it first
        if args.tree.resolve().name != "ggp_automl":
            sys.exit("--tree must be a folder named ggp_automl (git worktree add /tmp/x/ggp_automl COMMIT)")
        sys.path.insert(0, str(args.tree.resolve().parent))
    package = "ggp_automl"
    import importlib

    import numpy as np

    mod = lambda name: importlib.import_module(f"{package}.{name}")
    grammar = mod("gp.bnf_parser").load_grammar(args.tree / "grammars" / "large.bnf")
    ds = mod("evaluation.data").load_dataset(FLAGS)
    X, Y = np.asarray(ds.X, dtype=float), np.asarray(ds.Y)
    bound = grammar.bind(mod("gp.binding").DatasetMeta(Y.shape[1], X.shape[1], len(X)))
    learn, valid = mod("evaluation.splits").holdout_split(Y, np.random.default_rng(1))
    candidate = mod("evaluation.candidate")
    split = candidate.Split(X[learn], Y[learn], X[valid], Y[valid], tuple(ds.categorical_features))
    limits = mod("evaluation.isolation").Limits(timeout=30)
    mod("spaces.registry").load_all()
    compile_tree = mod("spaces.compiler").compile_tree
    print(f"code: {args.tree}; Flags fold 1, {len(learn)} learning and {len(valid)} validation rows; "
          f"median of {args.repeats}\n")
    print("| candidate | bare fit+predict (ms) | evaluation wall (ms) | overhead (ms) | evaluation / bare |")
    print("|---|---|---|---|---|")
    for phenotype in CHEAP:
        tree = mod("gp.phenotype").parse_phenotype(phenotype, bound)
        bare = []
        for _ in range(args.repeats + 2):
            model = compile_tree(tree, grammar, random_state=0,
                                 categorical_features=list(split.categorical_features) or None, task=split.task)
            t0 = time.perf_counter()
            model.fit(split.X_learn, split.Y_learn)
            split.task.outputs(model, split.X_valid)
            bare.append(time.perf_counter() - t0)
        walls, overheads = [], []
        for _ in range(args.repeats + 2):
            t0 = time.perf_counter()
            r = candidate.evaluate_candidate(tree, grammar, split, limits)
            walls.append(time.perf_counter() - t0)
            overheads.append(walls[-1] - r.fit_time - r.predict_time)
            assert r.ok, r.reason
        b, w, o = (statistics.median(v[2:]) * 1000 for v in (bare, walls, overheads))
        print(f"| `{phenotype}` | {b:.1f} | {w:.1f} | {o:.1f} | {w / b:.1f}× |")


if __name__ == "__main__":
    main()

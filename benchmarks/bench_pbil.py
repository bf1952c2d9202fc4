"""Benchmark of issue 10: PBIL and random search on ensembles.bnf against a default RandomForest (not a test).

    python benchmarks/bench_pbil.py                  # the grid (about 75 minutes), resumable
    python benchmarks/bench_pbil.py --table          # rewrite results/pbil-ens.md from the records

PBIL-Auto-Ens's Table 7 protocol, scaled down: 6 of the UCI sets of ``../shared/datasets/slc``
(the smaller ones), an outer stratified 3-fold cross-validation (``SingleLabel.kfold`` with
seed 1; the paper: 5 folds × 5 seeds), and in each training part

* ``pbil``: ``cli.py evolve --grammar grammars/ensembles.bnf --method pbil`` with the defaults
  (population 50, learning rate 0.5, the best half; fitness 1 − error rate by internal 10-fold
  CV), a 2-minute budget (the paper: 60 minutes), 2 workers, seed = fold;
* ``random``: the same run with ``--method random``;
* ``rf``: scikit-learn's ``RandomForestClassifier()`` with its defaults (seed = fold) after the
  project's preprocessing (mean/mode imputation, one-hot nominal features), as the paper's
  "WEKA RandomForest with default settings".

Reported: the test error rate of each method per dataset (mean over the 3 folds), the average
ranks over the datasets (1 = lowest error; ties share the mean rank) and the Friedman test
(``scipy.stats.friedmanchisquare``). One run at a time (the machine has 2 cores). Records are
appended to ``benchmarks/results/pbil-ens.jsonl`` (an interrupted benchmark resumes where it
stopped); the table goes to ``benchmarks/results/pbil-ens.md``.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SLC = ROOT.parent / "shared" / "datasets" / "slc"
RESULTS = ROOT / "benchmarks" / "results"
RECORDS = RESULTS / "pbil-ens.jsonl"
DATASETS = ("glass", "ecoli", "dermatology", "connectionist-mines-vs-rocks", "flags-religion",
            "statlog-german-credit")
METHODS = ("pbil", "random", "rf")
FOLDS, OUTER_SEED, BUDGET, WORKERS = 3, 1, "2m", 2


def outer_folds(data):
    import numpy as np

    return data.task.kfold(data.Y, FOLDS, np.random.default_rng(OUTER_SEED))


def run_one(spec: dict, runs: Path) -> dict:
    """One cell in this process (called in a fresh subprocess by the grid)."""
    import numpy as np

    from evaluation.data import load_dataset
    from gp.search import RunConfig, start
    from gp.search.run import describe_data

    data = load_dataset(SLC / f"{spec['dataset']}.arff")
    train_rows, test_rows = outer_folds(data)[spec["fold"] - 1]
    train, test = data.subset(train_rows), data.subset(test_rows)
    t0 = time.time()
    if spec["method"] == "rf":
        from sklearn.ensemble import RandomForestClassifier

        from spaces.model import make_preprocessor

        prep = make_preprocessor(train.n_features, train.categorical_features).fit(train.X)
        rf = RandomForestClassifier(random_state=spec["fold"]).fit(prep.transform(train.X), train.Y)
        predictions = rf.predict(prep.transform(test.X))
        proba = np.zeros((test.n_instances, len(data.classes)))
        proba[:, rf.classes_] = rf.predict_proba(prep.transform(test.X))
        measures = data.task.measures(test.Y, predictions, proba)
        return {**spec, "test": measures, "wall": round(time.time() - t0, 1), "phenotype": "RandomForest (sklearn)"}
    out = runs / f"{spec['method']}-{spec['dataset']}-f{spec['fold']}"
    subprocess.run(["rm", "-rf", str(out)], check=True)
    config = RunConfig(method=spec["method"], budget_seconds=120.0, workers=WORKERS, seed=spec["fold"])
    outcome = start(config, ROOT / "grammars" / "ensembles.bnf",
                    describe_data(train, test, SLC / f"{spec['dataset']}.arff", None, None, spec["dataset"]),
                    out=out, argv=["bench_pbil", json.dumps(spec)])
    final = outcome.final
    return {**spec, "test": (final.get("test") or {}).get("measures"), "wall": round(time.time() - t0, 1),
            "phenotype": (final.get("winner") or {}).get("phenotype"), "status": final["status"],
            "valid": (final.get("winner") or {}).get("valid_fitness"), "counts": final.get("counts"),
            "generations": final.get("counts", {}).get("generations"), "run": str(out)}


def grid(runs: Path) -> None:
    done = {(r["dataset"], r["method"], r["fold"]) for r in read_records()}
    RESULTS.mkdir(parents=True, exist_ok=True)
    for dataset in DATASETS:
        for fold in range(1, FOLDS + 1):
            for method in METHODS:
                if (dataset, method, fold) in done:
                    continue
                spec = {"dataset": dataset, "method": method, "fold": fold, "budget": BUDGET, "workers": WORKERS}
                print(f"{time.strftime('%H:%M:%S')} {dataset} fold {fold} {method}", flush=True)
                proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(spec), "--runs", str(runs)],
                                      capture_output=True, text=True, cwd=ROOT)
                lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
                record = json.loads(lines[-1]) if lines else {**spec, "error": (proc.stderr or proc.stdout)[-800:]}
                with RECORDS.open("a") as f:
                    f.write(json.dumps(record) + "\n")
                print(f"  test error {((record.get('test') or {}).get('error_rate'))}  {record.get('phenotype')}",
                      flush=True)


def read_records() -> list[dict]:
    if not RECORDS.exists():
        return []
    return [json.loads(line) for line in RECORDS.read_text().splitlines() if line.strip()]


def table() -> str:
    import numpy as np
    from scipy.stats import friedmanchisquare, rankdata

    records = [r for r in read_records() if r.get("test")]
    errors = {(d, m): [r["test"]["error_rate"] for r in records if r["dataset"] == d and r["method"] == m]
              for d in DATASETS for m in METHODS}
    complete = [d for d in DATASETS if all(len(errors[d, m]) == FOLDS for m in METHODS)]
    lines = ["# PBIL-Auto-Ens protocol, scaled down: test error rate (mean over the outer folds)", "",
             "`python benchmarks/bench_pbil.py` (then `--table`). Outer stratified 3-fold CV (seed 1); PBIL and "
             "random search on `grammars/ensembles.bnf` with the defaults (internal 10-fold CV fitness, population "
             "50, learning rate 0.5), 2-minute budget per fold, 2 workers, search seed = fold; RF = scikit-learn's "
             "`RandomForestClassifier()` defaults. The paper's budget is 60 minutes per run.", "",
             "| dataset | " + " | ".join(METHODS) + " | PBIL generations (per fold) | PBIL winners |",
             "|---|" + "---|" * len(METHODS) + "---|---|"]
    mean = {}
    for d in DATASETS:
        cells = []
        for m in METHODS:
            e = errors[d, m]
            mean[d, m] = float(np.mean(e)) if e else float("nan")
            cells.append(f"{mean[d, m]:.4f}" if e else "—")
        best = min((mean[d, m] for m in METHODS), default=None)
        cells = [f"**{c}**" if c != "—" and abs(float(c) - best) < 5e-5 else c for c in cells]
        pbil = [r for r in records if r["dataset"] == d and r["method"] == "pbil"]
        generations = ", ".join(str(r.get("generations")) for r in sorted(pbil, key=lambda r: r["fold"]))
        winners = "; ".join(str(r.get("phenotype", ""))[:40] for r in sorted(pbil, key=lambda r: r["fold"]))
        lines.append(f"| {d} | " + " | ".join(cells) + f" | {generations} | {winners} |")
    if len(complete) >= 2:
        matrix = np.array([[mean[d, m] for m in METHODS] for d in complete])
        ranks = np.array([rankdata(row) for row in matrix]).mean(axis=0)
        lines += ["", f"Average ranks over {len(complete)} datasets (1 = lowest error): "
                  + ", ".join(f"{m} {r:.2f}" for m, r in zip(METHODS, ranks))]
        if len(complete) >= 3:
            stat, p = friedmanchisquare(*matrix.T)
            lines.append(f"Friedman test: chi² = {stat:.3f}, p = {p:.4f} ({len(complete)} datasets, "
                         f"{len(METHODS)} methods)")
        target = ranks[METHODS.index("pbil")] < ranks[METHODS.index("rf")]
        lines.append(f"Target (PBIL's average rank better than RandomForest's): {'MET' if target else 'NOT MET'}")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--table", action="store_true", help="only rewrite the table from the records")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    parser.add_argument("--runs", default="/tmp/ggp-bench-pbil", help="where the run directories go")
    args = parser.parse_args()
    runs = Path(args.runs)
    if args.one:
        print(json.dumps(run_one(json.loads(args.one), runs)))
        return
    if not args.table:
        if not SLC.exists():
            sys.exit(f"{SLC} not found: the benchmark needs ../shared/datasets/slc")
        runs.mkdir(parents=True, exist_ok=True)
        grid(runs)
    text = table()
    (RESULTS / "pbil-ens.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()

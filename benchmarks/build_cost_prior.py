"""Build the cost model's prior (``search/cost_prior.json``) from the evaluations of real runs.

The cost model (:mod:`ggp_automl.search.cost_model`) predicts a candidate's wall time from its tree
and the data view's shape, learned online during a run; it starts from the weights this script
fits on benchmark runs. Every evaluation record that carries the view's ``shape`` (written by the
search loop since the cost model exists) is an observation: an ok one of its time, a time-out a
censored one (at least its limit), exactly as during a run.

Reproduce the shipped prior (about six minutes per set of runs on two cores; the runs go to ``OUT``)::

    python benchmarks/build_cost_prior.py --generate /tmp/cost_prior_runs2 --seed 0
    python benchmarks/build_cost_prior.py --generate /tmp/cost_prior_runs3 --seed 1
    python benchmarks/build_cost_prior.py /tmp/cost_prior_runs2/*/ /tmp/cost_prior_runs3/*/ --write

``--generate`` runs one-minute random searches (``nice -n 19``) on the multi-label folds Flags,
Emotions and Yeast with grammars/large.bnf and on two single-label sets with grammars/ensembles.bnf
(``../shared/datasets`` beside the checkout, or ``--datasets``). Without ``--write`` the fit is only
reported: observations, features, and a leave-one-run-out check (each run predicted by the prior
fitted on the others: Spearman rank correlation and median predicted/actual over its ok evaluations).
"""
from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

from ggp_automl.search.cost_model import (PRIOR_FILE, PRIOR_SIGMA, PRIOR_STRENGTH, CostModel, Shape, features,
                                          spearman)

#: (run name, grammar, data file relative to the datasets folder)
RUNS = (
    ("flags", "grammars/large.bnf", "mlc-folds/Flags/Flags-train1.arff"),
    ("emotions", "grammars/large.bnf", "mlc-folds/Emotions/Emotions-train1.arff"),
    ("yeast", "grammars/large.bnf", "mlc-folds/Yeast/Yeast-train1.arff"),
    ("german", "grammars/ensembles.bnf", "slc/statlog-german-credit.arff"),
    ("segment", "grammars/ensembles.bnf", "slc/statlog-image-segmentation.arff"),
)
#: the prior is fitted with this ridge pull towards 0 (per unit feature, in observations' worth)
FIT_STRENGTH = 1.0


def generate(out: Path, datasets: Path, budget: str, seed: int) -> list[Path]:
    """One random search per entry of RUNS into ``out/NAME`` (an existing finished run is kept)."""
    out.mkdir(parents=True, exist_ok=True)
    done = []
    for name, grammar, data in RUNS:
        run = out / name
        if not (run / "final.json").is_file():
            cmd = ["nice", "-n", "19", sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "random",
                   "--budget", budget, "--seed", str(seed), "--quiet", "--grammar", str(ROOT / grammar),
                   "--data", str(datasets / data), "--out", str(run)]
            print(" ".join(cmd), flush=True)
            subprocess.run(cmd, check=True)
        done.append(run)
    return done


def observations(run: Path) -> list[tuple[dict, str, float, float | None]]:
    """(features, status, wall time, limit) of a run's search evaluations that logged their view's shape."""
    from ggp_automl.spaces.registry import load_all

    names = set(load_all())
    out = []
    path = run / "evaluations.jsonl"
    for line in path.read_text().splitlines() if path.is_file() else []:
        try:
            r = json.loads(line)
        except ValueError:
            continue
        shape = Shape.from_record(r.get("shape"))
        if shape is None or r.get("phase", "search") != "search" or r.get("status") not in ("ok", "timeout"):
            continue
        x = features(str(r.get("phenotype", "")), shape, names)
        out.append((x, r["status"], float(r.get("wall_time") or 0.0), r.get("limit")))
    return out


def fit(data: list[tuple[dict, str, float, float | None]]) -> CostModel:
    model = CostModel({"strength": FIT_STRENGTH, "sigma": PRIOR_SIGMA})
    for x, status, wall, limit in data:
        model.observe(x, status, wall, limit)
    return model


def check(per_run: dict[str, list]) -> list[float]:
    """Leave one run out: how well the prior fitted on the others predicts each run's ok evaluations;
    returns the held-out residuals (log predicted − log actual)."""
    residuals = []
    for name, held in per_run.items():
        rest = [o for other, obs in per_run.items() if other != name for o in obs]
        if not rest:
            continue
        model = fit(rest)
        model.strength = PRIOR_STRENGTH
        ok = [(model.predict_seconds(x), wall) for x, status, wall, _ in held if status == "ok" and wall > 0]
        if len(ok) < 3:
            continue
        predicted, actual = zip(*ok)
        residuals += [math.log(p / max(a, 0.01)) for p, a in ok]
        rho = spearman(predicted, actual)
        ratio = float(np.median(np.array(predicted) / np.array(actual)))
        print(f"  {name:28s} {len(ok):4d} ok   Spearman {rho:.2f}   median predicted/actual {ratio:.2f}")
    return residuals


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", type=Path, help="run directories whose evaluations.jsonl to fit")
    ap.add_argument("--generate", type=Path, metavar="OUT", help="first make the benchmark runs in OUT")
    ap.add_argument("--datasets", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--budget", default="60s")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true", help=f"write the prior to {PRIOR_FILE}")
    args = ap.parse_args(argv)
    runs = list(args.runs)
    if args.generate is not None:
        runs += generate(args.generate, args.datasets, args.budget, args.seed)
    per_run = {f"{run.parent.name}/{run.name}": observations(run) for run in runs}
    data = [o for obs in per_run.values() for o in obs]
    if not data:
        print("no evaluation records with a view shape: make runs with this version (--generate)")
        return 1
    model = fit(data)
    weights = {n: round(w, 5) for n, w in sorted(model.weights().items()) if abs(w) >= 1e-5}
    print(f"{len(data)} observations ({model.n_ok} ok, {len(model.censored)} time-outs) from {len(runs)} runs, "
          f"{len(weights)} features, residual spread {model.sigma:.2f} (log seconds)")
    print("leave one run out:")
    residuals = check(per_run)
    # the spread a run assumes before it has its own: the held-out one (the in-sample spread flatters)
    sigma = math.sqrt(float(np.mean(np.square(residuals)))) if residuals else model.sigma
    print(f"held-out spread {sigma:.2f} (log seconds) over {len(residuals)} ok evaluations")
    if args.write:
        prior = {"about": "cost model prior: ridge weights of log wall time (search/cost_model.py); "
                          "written by benchmarks/build_cost_prior.py",
                 "sigma": round(max(sigma, 0.25), 4), "strength": PRIOR_STRENGTH,
                 "source": {name: len(obs) for name, obs in per_run.items()},
                 "weights": weights}
        PRIOR_FILE.write_text(json.dumps(prior, indent=1, sort_keys=False) + "\n")
        print(f"wrote {PRIOR_FILE} ({math.ceil(PRIOR_FILE.stat().st_size / 1024)} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

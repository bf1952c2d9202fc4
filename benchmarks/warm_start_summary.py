"""Issue 26's targets, read off the warm-start experiments' directories (not a test).

    python cli.py bench benchmarks/experiments/warm-start-1m.toml
    python cli.py bench benchmarks/experiments/warm-start-5m.toml
    python benchmarks/warm_start_summary.py runs/warm-start-1m runs/warm-start-5m --out benchmarks/results/warm-start.md
    python cli.py bench benchmarks/experiments/warm-start-ensembles.toml
    python benchmarks/warm_start_summary.py runs/warm-start-ensembles --out benchmarks/results/warm-start-ensembles.md

Why a script beside ``cli.py report``: the targets compare configurations across experiments of different
budgets (the 1-minute runs with a warm start against the 5-minute runs without one) and compare two
anytime curves point by point, which a one-experiment report does not. Each configuration is named
``LABEL@BUDGET`` (``ggp-warm@1m``); ``METHOD-warm`` is compared with ``METHOD-cold``.

* Target 1: for each method, the mean over datasets of the test fitness of ``METHOD-warm`` at the
  smallest budget against ``METHOD-cold`` at the largest (met when not lower), with the Wilcoxon
  signed-rank test over the datasets, and Friedman over every configuration.
* Target 2: the mean anytime curve of normalised validation fitness against time (per dataset and fold,
  min-max over both runs' curves; mean over the blocks; grid 0..budget) of ``METHOD-warm`` against
  ``METHOD-cold`` at each budget: met when it lies above at every point where either is defined (a curve
  that has not started yet counts as 0).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import numpy as np

from ggp_automl.experiments.collect import collect, read_manifest
from ggp_automl.experiments.curves import step_values
from ggp_automl.experiments.stats import rank_test, wilcoxon_test
from ggp_automl.search.options import duration

POINTS = 100


def records_of(directories: list[str]) -> list[dict]:
    """Every finished run of the experiments, its config named ``LABEL@BUDGET``."""
    out = []
    for d in directories:
        budget = read_manifest(d)["budget"]
        for r in collect(d):
            if r["status"] == "done":
                out.append({**r, "config": f"{r['config']}@{budget}", "budget_text": budget})
    return out


def test_fitness(r: dict) -> float:
    return float((r.get("test") or {}).get(r.get("fitness_name") or "fitness", np.nan))


def by_dataset(records: list[dict], config: str) -> dict[str, float]:
    values: dict[str, list[float]] = {}
    for r in records:
        if r["config"] == config:
            values.setdefault(r["dataset"], []).append(test_fitness(r))
    return {d: float(np.nanmean(v)) for d, v in values.items()}


def normalised_curves(warm: list[dict], cold: list[dict], budget: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean over the (dataset, fold) blocks both configs ran of each one's normalised anytime curve."""
    grid = np.linspace(0.0, budget, POINTS)
    pairs = {(r["dataset"], r["fold"], r["seed"]): [r] for r in warm}
    for r in cold:
        if (r["dataset"], r["fold"], r["seed"]) in pairs:
            pairs[(r["dataset"], r["fold"], r["seed"])].append(r)
    rows_w, rows_c = [], []
    for runs in pairs.values():
        if len(runs) != 2:
            continue
        w, c = (step_values(run["curve"], grid) for run in runs)
        values = np.concatenate([[v for _, v in run["curve"]] for run in runs] or [[0.0]])
        lo, hi = (float(np.min(values)), float(np.max(values))) if len(values) else (0.0, 1.0)
        scale = (hi - lo) or 1.0
        rows_w.append(np.nan_to_num((w - lo) / scale, nan=0.0))  # not started yet: the bottom
        rows_c.append(np.nan_to_num((c - lo) / scale, nan=0.0))
    if not rows_w:
        return grid, np.full(POINTS, np.nan), np.full(POINTS, np.nan)
    return grid, np.mean(rows_w, axis=0), np.mean(rows_c, axis=0)


def above_everywhere(warm: np.ndarray, cold: np.ndarray) -> tuple[bool, float, float]:
    """Whether ``warm`` lies above ``cold`` at every point either has left 0, the share of grid points where
    it is strictly above, and the smallest gap (warm − cold) over those points."""
    live = (warm > 0) | (cold > 0)
    if not live.any():
        return False, 0.0, float("nan")
    gap = warm[live] - cold[live]
    return bool((gap > 0).all()), float((gap > 0).mean()), float(gap.min())


def summary(records: list[dict]) -> list[str]:
    configs = list(dict.fromkeys(r["config"] for r in records))
    datasets = list(dict.fromkeys(r["dataset"] for r in records))
    table = {c: by_dataset(records, c) for c in configs}
    md = ["| dataset | " + " | ".join(configs) + " |", "|---|" + "---|" * len(configs)]
    for d in datasets:
        md.append(f"| {d} | " + " | ".join(f"{table[c].get(d, np.nan):.4f}" for c in configs) + " |")
    md.append("| **mean** | " + " | ".join(f"**{np.nanmean(list(table[c].values())):.4f}**" for c in configs) + " |")
    md += ["", "Test fitness, mean over folds (seed = fold).", ""]
    matrix = np.array([[table[c].get(d, np.nan) for c in configs] for d in datasets])
    if len(configs) > 2 and len(datasets) > 1:
        test = rank_test(matrix, configs)
        ranks = ", ".join(f"{c} {r:.2f}" for c, r in sorted(test.average_ranks.items(), key=lambda x: x[1]))
        md += [f"Friedman over {test.n_blocks} datasets: chi2 = {test.friedman_chi2:.2f}, p = {test.friedman_p:.3g}; "
               f"average ranks {ranks}.", ""]
    budgets = sorted({r["budget_text"] for r in records}, key=duration)
    methods = sorted({m.group(1) for c in configs if (m := re.match(r"(.+)-(warm|cold)@", c))})
    md += ["## Target 1: warm at the smallest budget against cold at the largest", ""]
    for m in methods:
        warm, cold = f"{m}-warm@{budgets[0]}", f"{m}-cold@{budgets[-1]}"
        if warm not in table or cold not in table:
            continue
        a = np.array([table[warm].get(d, np.nan) for d in datasets])
        b = np.array([table[cold].get(d, np.nan) for d in datasets])
        pair = wilcoxon_test(a, b, warm, cold)
        met = np.nanmean(a) >= np.nanmean(b)
        md.append(f"- {m}: {warm} {np.nanmean(a):.4f} against {cold} {np.nanmean(b):.4f} — "
                  f"**{'met' if met else 'NOT met'}**; Wilcoxon over {pair.n} datasets: {pair.wins} wins, "
                  f"{pair.losses} losses, {pair.ties} ties, p = {pair.p:.3g}")
    md += ["", "## Target 2: the warm anytime curve above the cold one at every point", ""]
    for budget in budgets:
        for m in methods:
            warm = [r for r in records if r["config"] == f"{m}-warm@{budget}"]
            cold = [r for r in records if r["config"] == f"{m}-cold@{budget}"]
            if not warm or not cold:
                continue
            grid, w, c = normalised_curves(warm, cold, duration(budget))
            ok, share, gap = above_everywhere(w, c)
            quarters = ", ".join(f"{grid[i]:.0f} s: {w[i]:.3f} vs {c[i]:.3f}" for i in (9, 24, 49, 74, 99))
            md.append(f"- {m}, {budget}: **{'met' if ok else 'NOT met'}** (above at {share:.0%} of the points where "
                      f"either has started; smallest gap {gap:+.3f}); warm vs cold at {quarters}")
    return md


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("experiments", nargs="+", help="experiment directories (cli.py bench)")
    p.add_argument("--out", help="also write the summary to this Markdown file")
    args = p.parse_args()
    records = records_of(args.experiments)
    text = "\n".join([f"# Warm start: {', '.join(args.experiments)}", "",
                      "Made by `python benchmarks/warm_start_summary.py " + " ".join(args.experiments) + "`.", ""]
                     + summary(records)) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

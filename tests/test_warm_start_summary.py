"""benchmarks/warm_start_summary.py: issue 26's targets read off experiment records (synthetic ones here)."""
from __future__ import annotations

import importlib.util

import numpy as np

from .conftest import ROOT

SPEC = importlib.util.spec_from_file_location("warm_start_summary", ROOT / "benchmarks" / "warm_start_summary.py")
summary = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(summary)


def run(config, budget, dataset, fold, test, curve):
    return {"config": f"{config}@{budget}", "budget_text": budget, "dataset": dataset, "fold": fold, "seed": fold,
            "status": "done", "fitness_name": "fitness", "test": {"fitness": test}, "curve": curve}


def test_a_curve_that_starts_higher_and_stays_higher_is_above_everywhere():
    warm = [run("ggp-warm", "1m", "A", 1, 0.6, [[1, 0.5], [30, 0.6]])]
    cold = [run("ggp-cold", "1m", "A", 1, 0.5, [[5, 0.3], [40, 0.55]])]
    grid, w, c = summary.normalised_curves(warm, cold, 60.0)
    ok, share, gap = summary.above_everywhere(w, c)
    assert ok and share == 1.0 and gap > 0
    assert np.isclose(w[-1], 1.0) and np.isclose(c[-1], (0.55 - 0.3) / 0.3)


def test_a_crossing_curve_is_not_above_everywhere():
    warm = [run("ggp-warm", "1m", "A", 1, 0.6, [[1, 0.5]])]
    cold = [run("ggp-cold", "1m", "A", 1, 0.5, [[5, 0.3], [40, 0.7]])]
    ok, share, gap = summary.above_everywhere(*summary.normalised_curves(warm, cold, 60.0)[1:])
    assert not ok and 0 < share < 1 and gap < 0


def test_target_one_compares_warm_at_the_small_budget_with_cold_at_the_large():
    records = []
    for d, (w1, c5) in {"A": (0.70, 0.65), "B": (0.50, 0.52), "C": (0.80, 0.70)}.items():
        records += [run("ggp-warm", "1m", d, 1, w1, [[1, w1]]), run("ggp-cold", "5m", d, 1, c5, [[1, c5]]),
                    run("ggp-cold", "1m", d, 1, c5 - 0.05, [[2, c5 - 0.05]]),
                    run("ggp-warm", "5m", d, 1, w1 + 0.01, [[1, w1 + 0.01]])]
    text = "\n".join(summary.summary(records))
    assert "ggp-warm@1m 0.6667 against ggp-cold@5m 0.6233 — **met**" in text
    assert "2 wins, 1 losses" in text
    assert "Friedman over 3 datasets" in text

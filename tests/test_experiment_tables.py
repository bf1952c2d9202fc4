"""The experiment report's tables and anytime curves, on hand-made run records with known answers."""
from __future__ import annotations

import math

import numpy as np
import pytest

from ggp_automl.experiments.curves import anytime_curves, anytime_png
from ggp_automl.experiments.tables import (
    LOWER_IS_BETTER,
    cell_table,
    effort_table,
    higher_is_better,
    latex_table,
    markdown_table,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def rec(config, dataset, fold, seed, fitness=None, hl=None, valid=None, status="done", **extra):
    r = {"id": f"{config}/{dataset}/f{fold}/s{seed}", "config": config, "dataset": dataset, "fold": fold,
         "seed": seed, "status": status, "task": "multilabel", "fitness_name": "fitness",
         "valid_fitness": valid, "test": {}, "budget": 60.0, "time": 58.0, "evaluations": 100, "failed": 0,
         "evals_per_minute": 100.0, "curve": [], "test_curve": []}
    if fitness is not None:
        r["test"]["fitness"] = fitness
    if hl is not None:
        r["test"]["hamming_loss"] = hl
    if status != "done":
        r["error"] = "boom"
    r.update(extra)
    return r


@pytest.fixture
def grid():
    """2 configs × 2 datasets × 2 folds; on Yeast 'ga' has one fold only (the other failed)."""
    return [
        rec("ggp", "Flags", 1, 1, fitness=0.60, hl=0.20, valid=0.62),
        rec("ggp", "Flags", 2, 1, fitness=0.70, hl=0.30, valid=0.66),
        rec("ga", "Flags", 1, 1, fitness=0.50, hl=0.10, valid=0.55),
        rec("ga", "Flags", 2, 1, fitness=0.40, hl=0.20, valid=0.57),
        rec("ggp", "Yeast", 1, 1, fitness=0.30, hl=0.25, valid=0.31),
        rec("ggp", "Yeast", 2, 1, fitness=0.30, hl=0.25, valid=0.33),
        rec("ga", "Yeast", 1, 1, fitness=0.30, hl=0.25, valid=0.30),
        rec("ga", "Yeast", 2, 1, fitness=0.99, hl=0.01, valid=0.99, status="failed"),
    ]


def test_direction_of_measures():
    assert {"hamming_loss", "ranking_loss", "one_error", "coverage", "error_rate", "log_loss"} == LOWER_IS_BETTER
    assert not higher_is_better("hamming_loss") and not higher_is_better("log_loss")
    assert higher_is_better("fitness") and higher_is_better("f1_macro")


def test_means_sds_and_n(grid):
    t = cell_table(grid, "fitness")
    assert t.measure == "fitness" and t.higher_is_better
    assert t.configs == ("ggp", "ga") and t.datasets == ("Flags", "Yeast")
    mean, sd, n = t.cells[("Flags", "ggp")]
    assert mean == pytest.approx(0.65) and sd == pytest.approx(np.std([0.6, 0.7], ddof=1)) and n == 2
    assert sd == pytest.approx(0.0707106781)
    # The failed run (0.99) is skipped: one value left, sd 0.0.
    assert t.cells[("Yeast", "ga")] == (pytest.approx(0.30), 0.0, 1)
    assert t.runs_per_cell == 2


def test_valid_source_is_named_and_maximised(grid):
    t = cell_table(grid, "hamming_loss", source="valid")
    assert t.measure == "valid fitness" and t.higher_is_better
    assert t.cells[("Flags", "ggp")][0] == pytest.approx(0.64)
    assert t.best("Flags") == {"ggp"}
    with pytest.raises(ValueError):
        cell_table(grid, "fitness", source="train")


def test_best_in_both_directions_and_ties(grid):
    up = cell_table(grid, "fitness")
    assert up.best("Flags") == {"ggp"}
    assert up.best("Yeast") == {"ggp", "ga"}          # 0.30 each: both bold
    down = cell_table(grid, "hamming_loss")
    assert not down.higher_is_better
    assert down.best("Flags") == {"ga"}                 # 0.15 < 0.25: the lower loss wins
    assert down.best("Yeast") == {"ggp", "ga"}
    assert down.best("Nowhere") == set()


def test_ties_survive_float_noise():
    recs = [rec("a", "D", 1, 1, fitness=0.1), rec("a", "D", 2, 1, fitness=0.2), rec("a", "D", 3, 1, fitness=0.3),
            rec("b", "D", 1, 1, fitness=0.3), rec("b", "D", 2, 1, fitness=0.2), rec("b", "D", 3, 1, fitness=0.1)]
    assert cell_table(recs, "fitness").best("D") == {"a", "b"}


def test_missing_cells_and_block_matrix():
    recs = [rec("a", "D1", 1, 1, fitness=0.5), rec("b", "D1", 1, 1, fitness=0.6),
            rec("a", "D2", 1, 1, fitness=0.7), rec("b", "D2", 1, 1, status="failed"),
            rec("c", "D2", 1, 1, status="failed")]
    t = cell_table(recs, "fitness")
    assert t.configs == ("a", "b", "c")     # an all-failed config still gets its (empty) column
    assert ("D2", "b") not in t.cells and ("D1", "c") not in t.cells
    m = t.block_matrix()
    assert m.shape == (2, 3)
    np.testing.assert_allclose(m[0, :2], [0.5, 0.6])
    assert m[1, 0] == pytest.approx(0.7)
    assert np.isnan(m[1, 1]) and np.isnan(m[0, 2]) and np.isnan(m[1, 2])
    md = markdown_table(t)
    assert "| D2 | **0.7000 ± 0.0000** | — | — |" in md
    assert md.strip().splitlines()[-1] == "| n | 2/2 | 1/2 | 0/2 |"


def test_runs_without_the_measure_are_missing_not_zero():
    recs = [rec("a", "D", 1, 1, fitness=0.5), rec("a", "D", 2, 1), rec("a", "D", 3, 1, fitness=float("nan"))]
    assert cell_table(recs, "fitness").cells[("D", "a")] == (0.5, 0.0, 1)


def test_markdown_layout_bold_and_ranks(grid):
    t = cell_table(grid, "fitness")
    lines = markdown_table(t, digits=2, ranks={"ggp": 1.25, "ga": 1.75}).strip().splitlines()
    assert lines[0] == "| dataset | ggp | ga |"
    assert lines[1] == "| --- | ---: | ---: |"
    assert lines[2] == "| Flags | **0.65 ± 0.07** | 0.45 ± 0.07 |"
    assert lines[3] == "| Yeast | **0.30 ± 0.00** | **0.30 ± 0.00** |"
    assert lines[4] == "| average rank | **1.25** | 1.75 |"
    assert lines[5] == "| n | 4/4 | 3/4 |"        # Yeast/ga lost a run to a failure


def test_markdown_has_no_n_row_when_complete(grid):
    complete = [r for r in grid if r["dataset"] == "Flags"]
    md = markdown_table(cell_table(complete, "hamming_loss"))
    assert "| n |" not in md and "average rank" not in md
    assert "| Flags | 0.2500 ± 0.0707 | **0.1500 ± 0.0707** |" in md


def test_latex_booktabs_bold_and_escaping():
    recs = [rec("ggp_large", "Flags&Co", 1, 1, fitness=0.6), rec("ggp_large", "Flags&Co", 2, 1, fitness=0.8),
            rec("50%#x", "Flags&Co", 1, 1, fitness=0.5), rec("50%#x", "Flags&Co", 2, 1, fitness=0.5)]
    tex = latex_table(cell_table(recs, "fitness"), caption="Test fitness", label="tab:fit", digits=3,
                      ranks={"ggp_large": 1.0, "50%#x": 2.0})
    lines = tex.strip().splitlines()
    for cmd in (r"\toprule", r"\midrule", r"\bottomrule", r"\caption{Test fitness}", r"\label{tab:fit}",
                r"\begin{tabular}{lrr}"):
        assert cmd in lines
    assert lines.index(r"\toprule") < lines.index(r"\midrule") < lines.index(r"\bottomrule")
    assert r"Dataset & ggp\_large & 50\%\#x \\" in lines
    assert r"Flags\&Co & \textbf{0.700 $\pm$ 0.141} & 0.500 $\pm$ 0.000 \\" in lines
    assert r"Average rank & \textbf{1.00} & 2.00 \\" in lines
    assert "$n$" not in tex
    assert lines[0].startswith(r"\begin{table}") and lines[-1] == r"\end{table}"


def test_latex_missing_cell_and_n_row():
    recs = [rec("a", "D", 1, 1, fitness=0.5), rec("b", "D", 1, 1, status="failed")]
    tex = latex_table(cell_table(recs, "fitness"), caption="c", label="l")
    assert r"D & \textbf{0.5000 $\pm$ 0.0000} & -- \\" in tex
    assert r"$n$ & 1/1 & 0/1 \\" in tex


def test_effort_table():
    recs = [rec("ggp", "D", 1, 1, evaluations=100, failed=10, evals_per_minute=100.0, time=59.0, budget=60.0),
            rec("ggp", "D", 2, 1, evaluations=200, failed=10, evals_per_minute=200.0, time=64.0, budget=60.0),
            rec("ggp", "D", 3, 1, status="failed", evaluations=None, failed=None, evals_per_minute=None,
                time=12.0, budget=60.0),
            rec("ga", "D", 1, 1, evaluations=0, failed=0, evals_per_minute=0.0, time=30.0, budget=30.0)]
    lines = effort_table(recs).strip().splitlines()
    assert lines[0] == ("| config | runs | failed runs | mean evaluations | mean evaluations/min | mean failure rate"
                        " | mean time / budget (s) | over budget |")
    # failure rate: (10/100 + 10/200) / 2 = 7.5 %; time (59 + 64 + 12) / 3 = 45.0; one overrun of 4 s.
    assert lines[2] == "| ggp | 3 | 1 | 150.0 | 150.0 | 7.5% | 45.0 / 60.0 | 1 (max +4.0 s) |"
    # No evaluation, no failure rate; time exactly on budget is not an overrun.
    assert lines[3] == "| ga | 1 | 0 | 0.0 | 0.0 | — | 30.0 / 30.0 | 0 |"


# -- anytime curves -----------------------------------------------------------------------


@pytest.fixture
def curved():
    return [
        rec("ggp", "Flags", 1, 1, curve=[[1.0, 0.4], [3.0, 0.6]], test_curve=[[1.0, 0.35], [3.0, 0.5]]),
        rec("ggp", "Flags", 2, 1, curve=[[2.0, 0.5]], test_curve=[]),
        rec("ga", "Flags", 1, 1, curve=[[0.5, 0.2]]),
        rec("ga", "Flags", 2, 1, curve=[[0.5, 0.9]], status="failed"),   # skipped
        rec("ggp", "Yeast", 1, 1, curve=[[0.1, 0.99]]),                    # other dataset
        rec("rs", "Flags", 1, 1, curve=[]),                                # no curve: no line
    ]


def test_anytime_step_averaging(curved):
    out = anytime_curves(curved, "Flags", budget=4.0, points=5)
    assert list(out) == ["ggp", "ga"]
    x, y = out["ggp"]
    np.testing.assert_allclose(x, [0, 1, 2, 3, 4])
    # t=0: no run has a value -> NaN; t=1: only run 1 has one -> still NaN (a mean of the started runs
    # would fall when run 2 starts lower); t=2: (0.4+0.5)/2; t>=3: (0.6+0.5)/2.
    assert math.isnan(y[0]) and math.isnan(y[1])
    np.testing.assert_allclose(y[2:], [0.45, 0.55, 0.55])
    np.testing.assert_allclose(out["ga"][1], [np.nan, 0.2, 0.2, 0.2, 0.2])


def test_anytime_between_grid_points_and_last_point_wins():
    recs = [rec("a", "D", 1, 1, curve=[[2.5, 0.3], [0.0, 0.1], [2.5, 0.7]])]
    x, y = anytime_curves(recs, "D", budget=5.0, points=11)["a"]   # grid step 0.5
    assert y[0] == pytest.approx(0.1)                # a point at t=0 counts at t=0
    assert y[4] == pytest.approx(0.1)                # t=2.0, before 2.5
    assert y[5] == pytest.approx(0.7)                # t=2.5: of the two points at 2.5 the later one
    assert y[-1] == pytest.approx(0.7)               # held to the budget


def test_anytime_test_curves(curved):
    out = anytime_curves(curved, "Flags", budget=4.0, which="test", points=5)
    assert list(out) == ["ggp"]                      # only one run has a test curve
    np.testing.assert_allclose(out["ggp"][1], [np.nan, 0.35, 0.35, 0.5, 0.5])
    with pytest.raises(ValueError):
        anytime_curves(curved, "Flags", budget=4.0, which="train")


def test_anytime_png_written(curved, tmp_path):
    path = anytime_png(curved, "Flags", tmp_path / "sub" / "flags.png", budget=4.0, title="Flags, valid")
    assert path == tmp_path / "sub" / "flags.png"
    data = path.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 1000
    import matplotlib.image as mpimg
    img = mpimg.imread(path)
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert anytime_png(curved, "Flags", tmp_path / "t.png", budget=4.0, which="test").exists()


def test_anytime_png_none_without_curves(curved, tmp_path):
    assert anytime_png(curved, "Emotions", tmp_path / "e.png", budget=4.0) is None
    assert anytime_png(curved, "Yeast", tmp_path / "y.png", budget=4.0, which="test") is None
    assert not list(tmp_path.iterdir())

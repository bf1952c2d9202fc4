"""The run-directory reader (``inspect``) and the pictures, on hand-written run directories.

The run directories are written here from the fixed schema, not by a search, so the report
is tested independently of the search methods (and quickly): one finished unspeciated run,
and one interrupted speciated run whose logs end with a half-written line.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rich.console import Console

from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.search.plots import convergence_png, read_jsonl, tree_png
from ggp_automl.results.report import ReportError, summarise
from ggp_automl.results.render import render_inspect

from .conftest import GRAMMARS, YEAST

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

WINNER = "BR J48 2 0.25 PCut1"
RUNNER_UP = "CC NaiveBayes PCut1"
CRASHER = "RAkEL SMO 1.0 PCut1"


def _measures(f: float) -> dict:
    return {"exact_match": f - 0.2, "hamming_loss": 0.2, "f1_macro": f - 0.1, "ranking_loss": 0.15,
            "fitness": f}


def _evaluation(n: int, phenotype: str, fitness: float, *, status: str = "ok", generation: int = 0,
                species=None, phase: str = "search", split: str = "s0", reason: str = "") -> dict:
    ok = status == "ok"
    return {"n": n, "time": 6.0 * n, "generation": generation, "species": species, "phase": phase,
            "split": split, "phenotype": phenotype, "status": status, "fitness": fitness if ok else 0.0,
            "measures": _measures(fitness) if ok else {}, "fit_time": 0.5 + n / 100, "predict_time": 0.01,
            "wall_time": 0.6, "reason": reason}


def _write(run: Path, config: dict, evaluations: list, generations: list, final: dict | None,
           truncated_tail: bool = False) -> Path:
    run.mkdir(parents=True)
    (run / "config.json").write_text(json.dumps(config))
    tail = '{"n": 99, "time": 1.0, "phen' if truncated_tail else ""
    (run / "evaluations.jsonl").write_text("".join(json.dumps(e) + "\n" for e in evaluations) + tail)
    (run / "generations.jsonl").write_text("".join(json.dumps(g) + "\n" for g in generations)
                                           + ('{"generation": 3, "ti' if truncated_tail else ""))
    if final is not None:
        (run / "final.json").write_text(json.dumps(final))
    return run


def _config(method: str) -> dict:
    return {"method": method,
            "config": {"population": 10, "budget_seconds": 600, "eval_timeout": 60, "memory_bytes": 2**30,
                       "workers": 2, "seed": 7, "fitness": "fitness", "max_depth": 100},
            "grammar": "grammars/large.bnf",
            "data": {"name": "yeast", "path": "data/yeast.arff", "n_instances": 2417, "n_features": 103,
                     "n_labels": 14, "test": None},
            "versions": {"python": "3.11.2", "numpy": "1.26.4"}, "argv": ["evolve"],
            "started": "2024-05-01T12:00:00"}


@pytest.fixture
def finished_run(tmp_path: Path) -> Path:
    evaluations = [
        _evaluation(1, RUNNER_UP, 0.60),
        _evaluation(2, WINNER, 0.70),
        _evaluation(3, CRASHER, 0.0, status="error", reason="ValueError: bad input\nTraceback (most recent call)"),
        _evaluation(4, RUNNER_UP, 0.62, generation=1, split="s1"),   # same phenotype: counted once
        _evaluation(5, CRASHER, 0.0, status="error", generation=1, reason="ValueError: bad input\nmore"),
        _evaluation(6, "MLkNN 10 PCut1", 0.0, status="timeout", generation=1, reason="killed after 60 s"),
        _evaluation(7, WINNER, 0.66, phase="final", split="full"),
    ]
    generations = [
        {"generation": 0, "time": 20.0, "split": "s0", "evaluated": 3, "failed": 1, "cached": 0,
         "best_fitness": 0.70, "mean_fitness": 0.43, "best_phenotype": WINNER, "restarts": 0, "species": None},
        {"generation": 1, "time": 40.0, "split": "s1", "evaluated": 3, "failed": 2, "cached": 1,
         "best_fitness": 0.70, "mean_fitness": 0.5, "best_phenotype": WINNER, "restarts": 0, "species": None},
    ]
    final = {"status": "finished", "time": 60.0,
             "winner": {"phenotype": WINNER, "species": None, "valid_fitness": 0.66,
                        "valid_measures": _measures(0.66)},
             "archive": [{"phenotype": WINNER, "species": None, "search_fitness": 0.7, "final_fitness": 0.66,
                          "status": "ok"}],
             "test": {"measures": {"exact_match": 0.2345, "hamming_loss": 0.1987}, "n_instances": 917,
                      "source": "yeast-test.arff"},
             "refit_time": 1.5, "counts": {"evaluations": 7, "failed": 3, "cached": 1, "generations": 2}}
    run = _write(tmp_path / "finished", _config("ggp"), evaluations, generations, final)
    (run / "best").mkdir()
    (run / "best" / "tree.txt").write_text("<Start>\n  <MLC> BR\n  <thr> PCut1\n")
    (run / "best" / "phenotype.txt").write_text(WINNER + "\n")
    return run


@pytest.fixture
def species_run(tmp_path: Path) -> Path:
    evaluations = [
        _evaluation(1, "BR ZeroR PCut1", 0.40, species=1),
        _evaluation(2, "BR J48 2 0.25 PCut1", 0.55, species=1),
        _evaluation(3, "CC SMO 1.0 PCut1", 0.0, status="memory", species=2, reason="killed at 2100 MB"),
        _evaluation(4, "CC NaiveBayes PCut1", 0.50, species=2, generation=1),
        _evaluation(5, "CC KNN 3 PCut1", 0.30, species=2, generation=1),
    ]
    sp = {"1": {"best_fitness": 0.55, "mean_fitness": 0.47, "best_phenotype": "BR J48 2 0.25 PCut1", "restarts": 0},
          "2": {"best_fitness": 0.50, "mean_fitness": 0.40, "best_phenotype": "CC NaiveBayes PCut1", "restarts": 1}}
    generations = [
        {"generation": 0, "time": 18.0, "split": "s0", "evaluated": 3, "failed": 1, "cached": 0,
         "best_fitness": 0.55, "mean_fitness": 0.32, "best_phenotype": "BR J48 2 0.25 PCut1", "restarts": 0,
         "species": sp},
        {"generation": 1, "time": 30.0, "split": "s0", "evaluated": 2, "failed": 0, "cached": 2,
         "best_fitness": 0.55, "mean_fitness": 0.45, "best_phenotype": "BR J48 2 0.25 PCut1", "restarts": 1,
         "species": sp},
    ]
    return _write(tmp_path / "species", _config("spggp"), evaluations, generations, None, truncated_tail=True)


def _inspect(run: Path) -> str:
    console = Console(record=True, width=160)
    render_inspect(run, console)
    return console.export_text()


# -- read_jsonl ---------------------------------------------------------------------------

def test_read_jsonl_skips_a_truncated_last_line_and_tolerates_a_missing_file(species_run: Path, tmp_path: Path):
    assert [r["n"] for r in read_jsonl(species_run / "evaluations.jsonl")] == [1, 2, 3, 4, 5]
    assert [r["generation"] for r in read_jsonl(species_run / "generations.jsonl")] == [0, 1]
    assert read_jsonl(tmp_path / "nope.jsonl") == []


# -- summarise ----------------------------------------------------------------------------

def test_summarise_a_finished_run(finished_run: Path):
    s = summarise(finished_run)
    assert s["method"] == "ggp" and s["config"]["seed"] == 7 and s["data"]["n_labels"] == 14
    assert s["status"]["state"] == "finished" and s["status"]["resume"] is None
    assert s["best"]["phenotype"] == WINNER and s["best"]["fitness"] == pytest.approx(0.66)
    assert s["best"]["source"] == "final.json"
    # distinct phenotypes of the search phase, each at its best; the final-phase 0.66 is not in it
    assert [(t["phenotype"], t["fitness"]) for t in s["top"]] == [(WINNER, 0.70), (RUNNER_UP, 0.62)]
    assert s["top"][1]["generation"] == 1
    assert s["failures"][0] == {"status": "error", "reason": "ValueError: bad input", "count": 2}
    assert s["failures"][1]["status"] == "timeout" and len(s["failures"]) == 2
    c = s["counts"]
    assert (c["evaluations"], c["failed"], c["cached"], c["generations"]) == (7, 3, 1, 2)
    assert c["evaluations_per_minute"] == pytest.approx(7.0)
    assert s["species"] == {}
    assert s["test"]["n_instances"] == 917
    assert {"best/tree.txt", "best/phenotype.txt", "final.json", "evaluations.jsonl"} <= set(s["files"])
    assert "best/model.joblib" not in s["files"]


def test_summarise_an_interrupted_species_run(species_run: Path):
    s = summarise(species_run)
    assert s["status"]["state"] == "interrupted" and s["status"]["last_generation"] == 1
    assert s["status"]["resume"] == f"python cli.py evolve --resume {species_run}"
    assert s["best"]["phenotype"] == "BR J48 2 0.25 PCut1" and s["best"]["source"] == "evaluations.jsonl"
    c = s["counts"]
    assert (c["evaluations"], c["failed"], c["cached"], c["generations"]) == (5, 1, 2, 2)
    assert c["elapsed_seconds"] == pytest.approx(30.0)
    assert c["evaluations_per_minute"] == pytest.approx(10.0)
    assert set(s["species"]) == {1, 2}
    sp2 = s["species"][2]
    assert (sp2["evaluations"], sp2["failures"]) == (3, 1)
    assert sp2["best_fitness"] == pytest.approx(0.5) and sp2["mean_fitness"] == pytest.approx(0.4)
    assert sp2["best_phenotype"] == "CC NaiveBayes PCut1"
    assert s["test"] is None


# -- render_inspect -----------------------------------------------------------------------

def test_inspect_a_finished_run(finished_run: Path):
    text = _inspect(finished_run)
    for piece in ("ggp", "grammars/large.bnf", "yeast", "2417 instances", "14 labels", "seed", "600",
                  "numpy 1.26.4", "finished", WINNER, "0.6600", "<Start>", "<MLC> BR",
                  "Top 10", "EM", "HL", "FM", "RL", RUNNER_UP, "0.6200",
                  "ValueError: bad input", "killed after 60 s", "evaluations per minute", "7.0",
                  "Test set", "yeast-test.arff", "0.2345", "best/tree.txt"):
        assert piece in text, piece
    assert "Traceback" not in text          # only the first line of a reason
    assert "interrupted" not in text and "Species" not in text


def test_inspect_an_interrupted_species_run(species_run: Path):
    text = _inspect(species_run)
    assert "interrupted at generation 1" in text
    assert f"python cli.py evolve --resume {species_run}" in text
    assert "none yet" in text               # no best/tree.txt
    assert "Species" in text and "CC NaiveBayes PCut1" in text and "0.4000" in text
    assert "killed at 2100 MB" in text and "memory" in text
    assert "Test set" not in text


def test_inspect_a_run_with_only_a_config(tmp_path: Path):
    run = tmp_path / "fresh"
    run.mkdir()
    (run / "config.json").write_text(json.dumps(_config("random")))
    text = _inspect(run)
    assert "before the first generation" in text and "none yet" in text


@pytest.mark.parametrize("make", ["missing", "no_config"])
def test_report_error_for_a_non_run_directory(tmp_path: Path, make: str):
    run = tmp_path / "run"
    if make == "no_config":
        run.mkdir()
    with pytest.raises(ReportError, match="config.json" if make == "no_config" else "no such"):
        summarise(run)
    with pytest.raises(ValueError):
        render_inspect(run, Console(record=True, width=160))


def test_a_damaged_config_is_named_and_the_logs_are_still_shown(finished_run: Path):
    (finished_run / "config.json").write_text('{"method": "gg')
    (finished_run / "final.json").write_text("[]")
    s = summarise(finished_run)
    assert s["problems"] == [
        "config.json is corrupted (not valid JSON: Unterminated string starting at: line 1 column 12 (char 11)): "
        "the run's settings are unknown and it cannot be resumed",
        "final.json is corrupted (a JSON list, not an object): the run's final results are unknown"]
    assert s["status"]["state"] == "damaged" and s["best"]["phenotype"] == WINNER
    text = _inspect(finished_run)
    assert "damaged: config.json is corrupted" in text and "unknown (final.json is damaged)" in text
    assert "Top 10" in text and "method   unknown" in text


def test_a_run_without_config_is_still_a_run(species_run: Path):
    (species_run / "config.json").unlink()
    s = summarise(species_run)
    assert s["problems"] == ["config.json is missing: the run's settings are unknown and it cannot be resumed"]
    assert s["status"] == {"state": "interrupted", "last_generation": 1, "resume": None}
    assert "it cannot be resumed (see above): start a fresh run" in _inspect(species_run)


@pytest.mark.parametrize("content, reason", [
    (b"", "empty"), (b"junk", "not a pickle"), (b"\x80\x05\x95junk.", "a pickle of something else than a search state"),
    (b"\x80\x05\x95 ggp_automl.search.loop SearchState \x94", "truncated pickle"),   # before search.state
    (b"\x80\x05\x95 ggp_automl.search.state SearchState \x94", "truncated pickle"),
    (b"\x80\x05\x95 ggp_automl.search.cache SearchState \x94", "a pickle of something else than a search state")])
def test_a_damaged_checkpoint_of_an_interrupted_run_is_named(species_run: Path, content: bytes, reason: str):
    (species_run / "checkpoint.pkl").write_bytes(content)
    s = summarise(species_run)
    assert s["problems"] == [f"checkpoint.pkl is corrupted ({reason}): the run cannot be resumed"]
    assert s["status"]["resume"] is None


def test_records_and_final_json_of_the_wrong_types_do_not_break_the_report(finished_run: Path):
    odd = [{"n": "x", "phenotype": ["a"], "status": "ok", "fitness": "0.9", "measures": [1, 2], "species": [1],
            "generation": {"g": 1}, "fit_time": "slow", "phase": 3},
           {"n": 2.5, "status": None, "fitness": True, "reason": {"why": 1}, "species": {"s": 2}},
           {"n": 1, "phenotype": "Z", "status": "ok", "fitness": float("nan"), "level": "low", "capped": 1,
            "limit": "x"}]
    with open(finished_run / "evaluations.jsonl", "a") as f:
        f.write("".join(json.dumps(r) + "\n" for r in odd) + "[1, 2]\n7\n")
    (finished_run / "final.json").write_text(json.dumps({
        "status": "finished", "time": "long", "counts": [1], "winner": {"phenotype": 5, "valid_measures": [1]},
        "limits": {"hard_cap": "x", "adaptive_limits": {"a": "b", "c": 2}}, "work": {"utilisation": "high"},
        "screening": {"active": True, "fractions": ["a", 0.5]}, "test": {"measures": [1], "n_instances": None}}))
    s = summarise(finished_run)
    assert s["best"]["phenotype"] == "5" and s["limits"]["adaptive_limits"] == {"c": 2.0}
    text = _inspect(finished_run)
    assert "Top 10" in text and "Test set" in text


# -- pictures -----------------------------------------------------------------------------

def _is_png(path: Path, min_size: int = 5000) -> bool:
    data = path.read_bytes()
    return data[:8] == PNG_SIGNATURE and len(data) > min_size


def test_tree_png_draws_a_generated_tree(tmp_path: Path):
    generator = TreeGenerator(load_grammar(GRAMMARS / "large.bnf").bind(YEAST))
    rng = np.random.default_rng(3)
    trees = [generator.grow(rng) for _ in range(30)]
    tree = max((t for t in trees if t.size <= 80), key=lambda t: t.size)
    out = tree_png(tree, tmp_path / "best" / "tree.png")
    assert out == tmp_path / "best" / "tree.png" and _is_png(out)
    small = min(trees, key=lambda t: t.size)
    assert _is_png(tree_png(small, tmp_path / "small.png", show_synthetic=True, title="smallest"), 2000)


def test_convergence_png(tmp_path: Path, finished_run: Path, species_run: Path):
    for run in (finished_run, species_run):
        out = convergence_png(read_jsonl(run / "generations.jsonl"), run / "convergence.png", title=run.name)
        assert _is_png(out)
    assert _is_png(convergence_png([], tmp_path / "empty.png"))
    assert "convergence.png" in summarise(species_run)["files"]


def test_tree_png_folds_synthetic_nodes(tmp_path: Path):
    from ggp_automl.search.plots import _all_boxes, _layout
    from ggp_automl.gp.tree import Leaf, Node

    tree = Node("Start", 0, (Node("Start~group1", 0, (Leaf("BR"), Node("k", 0, (Leaf(3),)))), Leaf(0.123456789)))
    folded = [b.label for b in _all_boxes(_layout(tree, show_synthetic=False))]
    assert folded == ["<Start>", "BR", "<k>", "3", "0.123457"]
    shown = [b.label for b in _all_boxes(_layout(tree, show_synthetic=True))]
    assert "<Start~group1>" in shown
    assert _is_png(tree_png(tree, tmp_path / "t.png"), 1000)

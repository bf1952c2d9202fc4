"""Bayesian optimisation over the grammar: the flat space (grammar -> ConfigSpace -> tree) and --method bo."""
from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.search.run import search
from ggp_automl.gp.flatten import FlatSpace, FlattenError
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.search import RunConfig, resume, start
from ggp_automl.search.methods.bo import BO
from ggp_automl.search.methods import make_method
from ggp_automl.search.run import load_run_data
from ggp_automl.search.rundir import RunDirectory
from ggp_automl.gp.tree import Leaf, Node
from ggp_automl.gp.validity import tree_problems

from .conftest import GRAMMARS, ROOT
from .test_search import FakeEngine, Killed, _loop, data, fake_fitness, fake_world, small  # noqa: F401

SHIPPED = ["small.bnf", "medium.bnf", "large.bnf", "ensembles.bnf"] + [
    # species files: two in the fast suite, the rest with -m slow (CI's 20 minutes)
    f"species/{p.name}" if p.stem in ("large-1", "large-trees") else
    pytest.param(f"species/{p.name}", marks=pytest.mark.slow) for p in sorted((GRAMMARS / "species").glob("*.bnf"))]
RECURSIVE = """<e> ::= <e> + <e> | <n>
<n> ::= x | RANDOM-INT(1, 9)
"""
#: two occurrences of one rule, a grid, an open real range, a log integer
TWICE = """<S> ::= v <k> <k> <r> | w <g> | u
<k> ::= p | q RANDOM-INT(1, 4) | s RANDOM-INT(2, 64, log)
<r> ::= RANDOM-REAL(>0.0, <1.0)
<g> ::= RANDOM-REAL(0.1, 1.0, step=0.1)
"""


def _meta(grammar_file: str):
    task = "singlelabel" if "ensembles" in grammar_file else "multilabel"
    return load_run_data(None, task=task).train.meta


def _close(a, b) -> bool:
    """Same tree; reals equal up to ConfigSpace's unit-scale rounding."""
    if isinstance(a, Leaf) and isinstance(b, Leaf):
        if isinstance(a.value, float) or isinstance(b.value, float):
            return math.isclose(float(a.value), float(b.value), rel_tol=1e-9, abs_tol=1e-12)
        return a.value == b.value
    return (isinstance(a, Node) and isinstance(b, Node) and (a.rule, a.alt) == (b.rule, b.alt)
            and len(a.children) == len(b.children) and all(map(_close, a.children, b.children)))


# -- the flat space --------------------------------------------------------------------------------

@pytest.mark.parametrize("grammar_file", [pytest.param(g, marks=pytest.mark.slow) if g == "large.bnf" else g
                                          for g in SHIPPED])  # large.bnf: 16 s, with the slow suite
def test_grammar_to_configspace_to_tree_round_trip(grammar_file):
    bound = load_grammar(GRAMMARS / grammar_file).bind(_meta(grammar_file))
    flat = FlatSpace(bound, seed=3)
    flat.space.seed(3)
    for config in flat.space.sample_configuration(20):
        tree = flat.decode(config)
        assert tree_problems(tree, bound) == []
        # configuration -> tree -> the same configuration: the same values (BO makes Configuration compare
        # by vector once it has run in this process, and a value's vector may differ in its last bit)
        assert dict(flat.configuration(tree)) == dict(config)
    rng = np.random.default_rng(3)
    for _ in range(20):  # and the generator's own trees survive the trip the other way
        tree = TreeGenerator(bound).grow(rng)
        assert _close(flat.decode(flat.configuration(tree)), tree)


def test_every_site_is_one_hyper_parameter_with_its_condition():
    flat = FlatSpace(parse_grammar(TWICE).bind(None))
    names = set(flat.space)
    assert names == {"<S>", "S.0.1/<k>", "S.0.2/<k>", "S.0.1/<k>/1/1", "S.0.1/<k>/2/1", "S.0.2/<k>/1/1",
                     "S.0.2/<k>/2/1", "S.0.3/<r>/0/0", "S.1.1/<g>/0/0"}
    assert flat.space["S.0.2/<k>/2/1"].log and flat.space["S.1.1/<g>/0/0"].upper == 9  # a grid: its index
    parents = {c.child.name: (c.parent.name, c.value) for c in flat.space.conditions}
    assert parents["S.0.2/<k>/2/1"] == ("S.0.2/<k>", 2) and parents["S.0.3/<r>/0/0"] == ("<S>", 0)
    tree = flat.decode({"<S>": 0, "S.0.1/<k>": 1, "S.0.1/<k>/1/1": 3, "S.0.2/<k>": 0, "S.0.3/<r>/0/0": 1.0})
    assert tree.phenotype.split()[:4] == ["v", "q", "3", "p"]
    assert 0.0 < tree.children[3].children[0].value < 1.0  # a closed ConfigSpace bound stays inside an open range
    grid = flat.decode({"<S>": 1, "S.1.1/<g>/0/0": 2})
    assert grid.phenotype == "w 0.3"


def test_a_recursive_grammar_is_refused_with_a_message(tmp_path):
    with pytest.raises(FlattenError, match=r"recursive grammar \(<e> can derive itself\).*--method tpe"):
        FlatSpace(parse_grammar(RECURSIVE, "rec.bnf").bind(None))
    path = tmp_path / "rec.bnf"  # Large with a meta-learner that may wrap itself
    text = (GRAMMARS / "large.bnf").read_text()
    assert "| <META3> <ALG-TYPE> @auto" in text
    path.write_text(text.replace("| <META3> <ALG-TYPE> @auto", "| <META3> <ALGS-SLC> @ 2"))
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "bo", "--grammar", str(path),
                        "--budget", "10s", "--quiet", "--out", str(tmp_path / "run")],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert r.returncode == 1 and "Traceback" not in r.stderr and "recursive grammar" in r.stderr
    assert not (tmp_path / "run").exists()


# -- the method --------------------------------------------------------------------------------------

def _config(mode="async", **params):
    return RunConfig(method="bo", max_generations=4, budget_seconds=3600, seed=5, mode=mode,
                     method_params={"population": 6, "initial": 4, "challengers": 50, **params})


@pytest.mark.parametrize("mode", ["generational", "async"])
def test_same_seed_same_bo_search(small, data, mode):  # noqa: F811
    runs = []
    for _ in range(2):
        engine = FakeEngine()
        search(_loop(_config(mode), small, data, engine))
        runs.append(engine.calls)
    assert runs[0] == runs[1] and len(set(runs[0])) > 15
    engine = FakeEngine()
    search(_loop(_config(mode).replace(seed=6), small, data, engine))
    assert engine.calls != runs[0]


def _modelable(phenotype: str) -> float:
    """A fitness a surrogate can learn: Random forests are good, and better with more trees."""
    words = phenotype.split()
    if "RandomForest" not in words:
        return 0.2
    return 0.5 + 0.4 * min(int(words[words.index("RandomForest") + 1]), 500) / 500


def _near(phenotype: str) -> float:
    """Alternative a is better, the nearer its number to 0.7."""
    word, x = phenotype.split()
    return 1.0 - abs(float(x) - 0.7) if word == "a" else 0.3


@pytest.mark.parametrize("surrogate, grammar", [("rf", "small"), ("rf", "toy"), ("gp", "toy")])
def test_bo_learns_on_a_fitness_it_can_model(small, data, surrogate, grammar):  # noqa: F811
    """After the initial design, SMAC's proposals score better than random derivations do. (The
    conditional kernel shares nothing between structures, so on Small, with hundreds of them, the
    GP explores structures for longer than 48 evaluations: notes bo-and-ensembles.md §7.18.)"""
    # no random interleaving: after the initial design every proposal is the surrogate's
    config = _config("generational", surrogate=surrogate, random_every=0).replace(max_generations=8)
    fitness = _modelable
    if grammar == "toy":
        small, fitness = parse_grammar("<S> ::= a RANDOM-REAL(0.0, 1.0) | b RANDOM-REAL(0.0, 1.0)\n"), _near
    loop = _loop(config, small, data, FakeEngine(fitness=fitness))
    search(loop)
    told = [1.0 - cost for _, cost, _ in loop.state.method.observations]
    rng = np.random.default_rng(0)
    random = [fitness(TreeGenerator(small.bind(data.train.meta)).grow(rng).phenotype) for _ in range(200)]
    assert len(told) == 48 and np.mean(told[24:]) > np.mean(random) + 0.1


@pytest.mark.parametrize("surrogate", ["rf", "gp"])
def test_resume_after_a_kill_loses_and_repeats_nothing(small, data, tmp_path, fake_world, surrogate):  # noqa: F811
    """SMAC is rebuilt from the checkpoint's observations: no finished evaluation is lost or run
    again, and every one of them is in the resumed SMAC's run history."""
    config = _config(surrogate=surrogate).replace(max_generations=5)
    fake_world.engine_kwargs = {"kill_after": 17}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "run", argv=[])
    before = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    fake_world.engine_kwargs = {}
    outcome = resume(tmp_path / "run")
    after = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    assert after[: len(before)] == before and len(set(after)) == len(after) and len(after) > len(before)
    assert not set(fake_world.engines[-1].calls) & {ph for _, ph in before}
    assert outcome.final["method_report"]["title"].startswith(f"BO ({surrogate} surrogate): 30 observations")


def test_reshuffle_draws_a_new_split_every_generation(small, data):  # noqa: F811
    loop = _loop(_config("generational", reshuffle=True), small, data, FakeEngine())
    search(loop)
    keys = [r["split"] for r in loop.history]
    assert len(keys) == 4 and len(set(keys)) == 4
    loop = _loop(_config("generational"), small, data, FakeEngine())
    search(loop)
    assert len({r["split"] for r in loop.history}) == 1  # BO does not resample by default (the thesis)


def test_posterior_mean_selection_orders_the_final_candidates_by_the_surrogate(small, data):  # noqa: F811
    loop = _loop(_config(final_choice="posterior-mean"), small, data, FakeEngine())
    search(loop)
    method = loop.state.method
    means = method.posterior_means()
    archive = method.archive()
    assert method.keeps_final_order and len(archive) > 1
    assert [means[i.phenotype] for i in archive] == sorted(means[i.phenotype] for i in archive)
    assert [c.phenotype for c in loop.candidates()] == [i.phenotype for i in archive][: len(loop.candidates())]
    best = _loop(_config(), small, data, FakeEngine())
    search(best)
    scores = [i.score for i in best.state.method.archive()]
    assert scores == sorted(scores, reverse=True)  # by default: the observed fitness


def test_bo_runs_on_the_single_label_ensemble_space():
    g = load_grammar(GRAMMARS / "ensembles.bnf")
    run_data = load_run_data(None, task="singlelabel")
    loop = _loop(_config(surrogate="gp").replace(max_generations=3), g, run_data, FakeEngine())
    search(loop)
    assert len(loop.state.method.observations) == 18


def test_bo_is_registered_with_its_parameters():
    names = {p.name for p in BO.parameters}
    assert {"surrogate", "initial", "random_every", "surrogate_cap", "final_choice", "reshuffle"} <= names
    method = make_method(_config(surrogate="gp"), load_grammar(GRAMMARS / "small.bnf"), _meta("small.bnf"))
    assert method.params["surrogate"] == "gp" and len(method.flat) == 27


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_cli_evolve_bo_end_to_end(tmp_path):
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "bo", "--grammar",
                        "grammars/small.bnf", "--budget", "20s", "--workers", "2", "--quiet", "--out", str(out),
                        "--surrogate", "gp", "--reshuffle", "--final-choice", "posterior-mean"],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    final = json.loads((out / "final.json").read_text())
    assert final["method"] == "bo" and final["winner"]["phenotype"]
    config = json.loads((out / "config.json").read_text())["config"]["method_params"]
    assert config["surrogate"] == "gp" and config["reshuffle"] is True and config["final_choice"] == "posterior-mean"
    assert Path(out / "best" / "phenotype.txt").exists()


def test_reshuffle_is_a_parameter_of_the_methods_where_it_makes_sense():
    """GGP and spGGP redraw the split every 5 generations (the thesis), every generation with --reshuffle;
    random and beam search compare nothing across splits and do not declare it."""
    from ggp_automl.search.methods import METHODS, known_methods

    known_methods()
    declared = {name for name, cls in METHODS.items() if any(p.name == "reshuffle" for p in cls.parameters)}
    assert declared == {"bo", "tpe", "ga", "pbil", "ggp", "spggp"}
    small_meta = _meta("small.bnf")
    grammar = load_grammar(GRAMMARS / "small.bnf")
    for method, plain in (("ggp", 5), ("spggp", 5), ("pbil", 0), ("bo", 0)):
        for on in (False, True):
            config = RunConfig(method=method, method_params={"reshuffle": on})
            assert make_method(config, grammar, small_meta).resample_period == (1 if on else plain)


def test_with_screening_smac_learns_every_screened_candidate_and_the_full_result_overwrites(small, data,  # noqa: F811
                                                                                          monkeypatch):
    monkeypatch.setattr("ggp_automl.search.loop.DIRECT_SECONDS", 0.0)   # every new candidate is screened first
    config = _config().replace(screening=True, screening_min_rows=20)
    engine = FakeEngine(workers=2)
    loop = _loop(config, small, data, engine)
    search(loop)
    method = loop.state.method
    rung0 = {p for k, p in engine.calls if k.endswith("|r0")}
    full = {p for k, p in engine.calls if "|r" not in k}
    assert rung0 and full and full <= rung0
    history = method._smac.runhistory
    costs = {method.flat.decode(dict(c)).phenotype: history.get_cost(c) for c in history.get_configs()}
    assert rung0 - set(method.provisional) <= full  # what is still provisional was screened out (or is in flight)
    for ph in full:  # a promoted candidate's cost in SMAC is its full-fidelity one
        assert costs[ph] == pytest.approx(1.0 - fake_fitness(next(k for k, p in engine.calls if p == ph
                                                                   and "|r" not in k), ph))
    for ph in set(method.provisional) & rung0:
        key = next(k for k, p in engine.calls if p == ph)
        assert costs[ph] == pytest.approx(1.0 - fake_fitness(key, ph))


def test_building_the_method_counts_against_the_budget(small, data, tmp_path, fake_world, monkeypatch):  # noqa: F811
    """The flat configuration space takes seconds to build for the Large space: the budget's clock runs
    from the start of the run, not from the first evaluation (a 20 s BO run took 59 s)."""
    import time

    attach = BO.attach

    def slow_attach(self, grammar, meta):
        time.sleep(1.0)
        return attach(self, grammar, meta)

    monkeypatch.setattr(BO, "attach", slow_attach)
    outcome = start(_config().replace(max_generations=1), small, data, tmp_path / "run", argv=[])
    first = RunDirectory(tmp_path / "run").evaluations()[0]
    assert first["time"] >= 1.0 and outcome.final["time"] >= 1.0

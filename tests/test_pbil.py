"""PBIL as a grammar-sampling policy (search/methods/pbil.py) and methods owning their parameters."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from ggp_automl.gp.bnf_parser import parse_grammar
from ggp_automl.search.run import search
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.phenotype import parse_phenotype
from ggp_automl.search import RunConfig, resume, start
from ggp_automl.search.config import METHODS as METHOD_NAMES
from ggp_automl.search.methods import METHODS, make_method
from ggp_automl.search.methods.pbil import PBIL, ProbabilityVectors
from ggp_automl.search.run import load_run_data

from .conftest import GRAMMARS
from .test_search import FakeEngine, Killed, _loop, fake_world  # noqa: F401 - fixture

TOY = """<S> ::= a <x> | b <x> <y> | c
<x> ::= RANDOM-INT(1, 4)
<y> ::= RANDOM-REAL(0.1, 1.0, step=0.1) | EMPTY
"""


@pytest.fixture
def toy():
    g = parse_grammar(TOY, "toy.bnf")
    policy = ProbabilityVectors(learning_rate=0.5)
    policy.bind(g)
    generator = TreeGenerator(g.bind(), policy)
    rng = np.random.default_rng(0)
    for _ in range(200):  # every location is met (vectors are made on first use), none is learnt yet
        generator.grow(rng)
    return g, policy, generator


def trees(g, *phenotypes):
    return [parse_phenotype(p, g.bind()) for p in phenotypes]


def test_the_update_on_a_hand_computed_example(toy):
    g, policy, _ = toy
    assert set(policy.vectors) == {"<S>", "<x>/0/0", "<y>", "<y>/0/0"}
    assert np.allclose(policy.vectors["<S>"].p, [1 / 3] * 3) and np.allclose(policy.vectors["<x>/0/0"].p, 0.25)
    policy.learn(trees(g, "a 1", "a 2", "b 2 0.3"))
    # <S>: a twice, b once of 3 uses -> RelFreq (2/3, 1/3, 0); p = 0.5 * 1/3 + 0.5 * RelFreq
    assert np.allclose(policy.vectors["<S>"].p, [0.5, 1 / 3, 1 / 6])
    # <x> is shared by a and b (the paper's level-4 sharing): 1, 2, 2 of 3 uses
    assert np.allclose(policy.vectors["<x>/0/0"].p, [0.125 + 1 / 6, 0.125 + 1 / 3, 0.125, 0.125])
    # <y> was used once (present, value 0.3): a PV's denominator is the uses of that PV, not the selected count
    assert np.allclose(policy.vectors["<y>"].p, [0.75, 0.25])
    grid = policy.vectors["<y>/0/0"]
    assert len(grid.p) == 10 and grid.p[2] == pytest.approx(0.05 + 0.5) and grid.p[0] == pytest.approx(0.05)
    assert all(math.isclose(v.p.sum(), 1.0) for v in policy.vectors.values())
    assert policy.entropy_history and 0 < policy.entropy_history[-1] < 1


def test_a_vector_no_selected_tree_used_is_left_unchanged(toy):
    g, policy, _ = toy
    before = policy.vectors["<x>/0/0"].p.copy()
    policy.learn(trees(g, "c"))
    assert np.array_equal(policy.vectors["<x>/0/0"].p, before)
    assert np.allclose(policy.vectors["<S>"].p, [1 / 6, 1 / 6, 2 / 3])


def test_a_location_used_twice_in_one_tree_counts_twice():
    g = parse_grammar("<S> ::= v <k> <k>\n<k> ::= p | q\n", "twice.bnf")
    policy = ProbabilityVectors(learning_rate=1.0)
    policy.bind(g)
    TreeGenerator(g.bind(), policy).grow(np.random.default_rng(0))
    policy.learn(trees(g, "v p q", "v p p"))
    assert np.allclose(policy.vectors["<k>"].p, [0.75, 0.25])


def test_sampling_follows_the_vectors(toy):
    g, policy, generator = toy
    policy.vectors["<S>"].p = np.array([0.0, 1.0, 0.0])
    policy.vectors["<x>/0/0"].p = np.array([0.0, 0.0, 0.0, 1.0])
    rng = np.random.default_rng(1)
    assert all(t.phenotype.startswith("b 4") for t in (generator.grow(rng) for _ in range(50)))


def test_numbers_are_binned_over_the_range_or_the_grid():
    g = parse_grammar("<S> ::= v <a> <b> <c> <d>\n<a> ::= RANDOM-REAL(0.0, 1.0)\n<b> ::= RANDOM-REAL(0.001, 10.0, log)"
                      "\n<c> ::= RANDOM-INT(1, 5000)\n<d> ::= RANDOM-INT(1, 100, log)\n", "bins.bnf")
    policy = ProbabilityVectors(real_bins=5)
    policy.bind(g)
    generator = TreeGenerator(g.bind(), policy)
    rng = np.random.default_rng(0)
    values = [generator.grow(rng) for _ in range(300)]
    v = policy.vectors
    assert len(v["<a>/0/0"].p) == 5 and np.allclose(v["<a>/0/0"].edges, np.linspace(0, 1, 6))
    assert v["<b>/0/0"].log and np.allclose(np.exp(v["<b>/0/0"].edges), np.geomspace(0.001, 10.0, 6))
    assert len(v["<c>/0/0"].p) == 5  # 5,000 values: binned
    assert len(v["<d>/0/0"].p) == 100 and v["<d>/0/0"].p[0] > v["<d>/0/0"].p[-1]  # log range: log-uniform start
    for tree in values:
        a, b, c, d = (leaf.value for leaf in list(tree.leaves())[1:])
        assert 0 <= a <= 1 and 0.001 <= b <= 10 and 1 <= c <= 5000 and 1 <= d <= 100


def test_pbil_selects_the_best_share_of_those_that_worked(small_world):
    method, g = small_world
    inds = method.ask(np.random.default_rng(0))
    for i, ind in enumerate(inds):
        ind.fitness.values = (0.0, 0.0 if i % 2 else 0.1 + i / 100)  # odd ones failed
    learned = []
    method.policy.learn = lambda selected: learned.extend(selected)
    method.tell(inds)
    ok = sorted((ind for ind in inds if ind.score > 0), key=lambda i: -i.score)
    assert [t.phenotype for t in learned] == [i.phenotype for i in ok[: len(inds) // 2]]
    assert method.archive()[0].phenotype == ok[0].phenotype


@pytest.fixture
def small_world(grammars):
    config = RunConfig(method="pbil", method_params={"population": 10})
    meta = load_run_data(None).train.meta
    return make_method(config, grammars["small"], meta), grammars["small"]


# -- in the loop: determinism, resume, artefacts -------------------------------------------------

@pytest.fixture(scope="module")
def sl_data():
    return load_run_data(None, task="singlelabel")


def test_same_seed_same_pbil_search(sl_data):
    from ggp_automl.gp.bnf_parser import load_grammar

    g = load_grammar(GRAMMARS / "ensembles.bnf")
    config = RunConfig(method="pbil", method_params={"population": 12}, max_generations=4, budget_seconds=3600,
                       seed=5, mode="async")
    runs = []
    for _ in range(2):
        engine = FakeEngine()
        search(_loop(config, g, sl_data, engine))
        runs.append(engine.calls)
    assert runs[0] == runs[1] and len(runs[0]) > 30
    engine = FakeEngine()
    search(_loop(config.replace(seed=6), g, sl_data, engine))
    assert engine.calls != runs[0]


@pytest.mark.parametrize("mode", ["async", "generational"])
def test_pbil_resumes_after_a_kill_with_its_vectors(sl_data, tmp_path, fake_world, mode):  # noqa: F811
    config = RunConfig(method="pbil", method_params={"population": 12, "learning_rate": 0.3}, max_generations=6,
                       budget_seconds=3600, seed=3, mode=mode)
    grammar = GRAMMARS / "ensembles.bnf"
    start(config, grammar, sl_data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"kill_after": 30}
    with pytest.raises(Killed):
        start(config, grammar, sl_data, tmp_path / "killed", argv=[])
    first = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {}
    resume(tmp_path / "killed")
    assert first + fake_world.engines[-1].calls == whole
    vectors = [json.loads((tmp_path / run / "pbil-vectors.json").read_text()) for run in ("whole", "killed")]
    assert vectors[0] == vectors[1] and vectors[0]["learning_rate"] == 0.3
    saved = json.loads((tmp_path / "killed" / "config.json").read_text())["config"]
    assert saved["method_params"] == {"population": 12, "learning_rate": 0.3, "selection": 0.5, "real_bins": 10,
                                      "reshuffle": False}
    final = json.loads((tmp_path / "killed" / "final.json").read_text())
    assert final["method_report"]["rows"] and (tmp_path / "killed" / "pbil-entropy.png").stat().st_size > 1000
    entropies = [g["method"]["entropy"] for g in map(json.loads, (tmp_path / "killed" / "generations.jsonl")
                                                     .read_text().splitlines())]
    assert len(entropies) == 6 and entropies[-1] < entropies[0]


# -- a method owns its parameters --------------------------------------------------------------------

def test_pbil_is_registered_with_its_declared_parameters():
    assert "pbil" in METHOD_NAMES and METHODS["pbil"] is PBIL
    assert {p.name: p.default for p in PBIL.parameters} == {"population": 50, "learning_rate": 0.5,
                                                            "selection": 0.5, "real_bins": 10, "reshuffle": False}
    assert RunConfig(method="pbil").params["learning_rate"] == 0.5
    with pytest.raises(ValueError, match="learning_rate must be in \\[0, 1\\], got 2"):
        RunConfig(method="pbil", method_params={"learning_rate": 2.0})
    with pytest.raises(ValueError, match="ggp has no parameter 'learning_rate'; its parameters are reshuffle"):
        RunConfig(method="ggp", method_params={"learning_rate": 0.2})
    assert RunConfig.from_dict(RunConfig(method="pbil", method_params={"selection": 0.3}).to_dict()).params[
        "selection"] == 0.3


@pytest.mark.slow  # end to end, 8-16 s: with the slow suite (the developer suite's 15 minutes)
def test_method_parameters_reach_the_command_line(tmp_path):
    from ggp_automl.cli import main

    out = tmp_path / "run"
    code = main(["evolve", "--grammar", str(GRAMMARS / "ensembles.bnf"), "--method", "pbil", "--learning-rate", "0.25",
                 "--population", "6", "--selection", "0.4", "--budget", "12s", "--workers", "1", "--generations", "1",
                 "--out", str(out), "--quiet"])
    assert code == 0
    saved = json.loads((out / "config.json").read_text())["config"]["method_params"]
    assert saved == {"population": 6, "learning_rate": 0.25, "selection": 0.4, "real_bins": 10,
                     "reshuffle": False}
    assert main(["evolve", "--method", "ggp", "--learning-rate", "0.3", "--quiet"]) == 2  # not ggp's
    assert main(["evolve", "--resume", str(out), "--learning-rate", "0.3"]) == 2
    assert main(["evolve", "--method", "pbil", "--learning-rate", "1.5", "--quiet"]) == 2


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_inspect_shows_the_learned_vectors(tmp_path, capsys):
    from ggp_automl.cli import main

    out = tmp_path / "run"
    assert main(["evolve", "--grammar", str(GRAMMARS / "ensembles.bnf"), "--method", "pbil", "--population", "4",
                 "--budget", "15s", "--workers", "1", "--generations", "2", "--out", str(out), "--quiet"]) == 0
    capsys.readouterr()
    assert main(["inspect", str(out)]) == 0
    text = capsys.readouterr().out
    assert "PBIL probability vectors" in text and "<Start>" in text and "pbil-entropy.png" in text


@pytest.mark.parametrize("grammar", ["small.bnf", "large.bnf", "species/large-3.bnf", "species/ensembles-4.bnf"])
def test_pbil_samples_every_grammar_and_species_grammar(grammar):
    """The multi-label spaces, the ensemble space and species grammars (annotated values held at their
    defaults) are all sets of grammar locations to PBIL."""
    from ggp_automl.gp.bnf_parser import load_grammar

    g = load_grammar(GRAMMARS / grammar)
    task = "singlelabel" if "ensembles" in grammar else "multilabel"
    config = RunConfig(method="pbil", method_params={"population": 10}, max_generations=3, budget_seconds=3600,
                       seed=2)
    engine = FakeEngine()
    loop = _loop(config, g, load_run_data(None, task=task), engine)
    search(loop)
    policy = loop.state.method.policy
    assert len(engine.calls) >= 10 and len(policy.entropy_history) == 3 and "<Start>" in policy.vectors

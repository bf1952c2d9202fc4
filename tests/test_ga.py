"""GA-Auto-MLC (search/methods/ga.py): genome decoding, its length, DEAP under the run's Generator, the method."""
from __future__ import annotations

import json
import random
import subprocess
import sys

import numpy as np
import pytest

from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.search.run import search
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import NonTerminal, Sampler
from ggp_automl.gp.policy import SamplingPolicy
from ggp_automl.search import RunConfig, make_method, resume, start
from ggp_automl.search.methods.ga import GA, decisions_needed, decode, encode, genome_length, int_value, make_toolbox
from ggp_automl.search.methods.ga import python_random_from, real_value
from ggp_automl.search.rundir import RunDirectory
from ggp_automl.gp.validity import tree_problems

from .conftest import GRAMMARS, ROOT, YEAST, run_config
from .test_search import FakeEngine, Killed, _loop, data, fake_world, small  # noqa: F401 - fixtures

SHIPPED = sorted(GRAMMARS.glob("*.bnf")) + [  # species files: two in the fast suite, the rest with -m slow
    p if p.stem in ("large-1", "large-trees") else pytest.param(p, marks=pytest.mark.slow, id=p.stem)
    for p in sorted((GRAMMARS / "species").glob("*.bnf"))]

TOY = """<S> ::= a <x> | b <x> <y> | c
<x> ::= RANDOM-INT(1, 4)
<y> ::= RANDOM-REAL(0.1, 1.0, step=0.1) | EMPTY
"""
RECURSIVE = "<e> ::= ( <e> + <e> ) | x\n"


# -- decoding ---------------------------------------------------------------------------------------
def test_a_hand_decoded_genome():
    b = parse_grammar(TOY, "toy.bnf").bind()
    assert genome_length(b.grammar) == 4  # <S> 1 + (<x> 1 + <y> (1 + 1))
    # S: floor(0.5·3) = 1 -> b; x: 1 + floor(0.3·4) = 2; y: floor(0.2·2) = 0 -> present; grid: the 10th of 10
    assert decode([0.5, 0.3, 0.2, 0.95], b, 100)[0].phenotype == "b 2 1.0"
    assert decode([0.5, 0.3, 0.2, 0.95], b, 100)[1] == 4
    tree, used = decode([0.0, 0.0, 0.7, 0.7], b, 100)
    assert (tree.phenotype, used) == ("a 1", 2)  # unused genes are ignored
    assert decode([1.0] * 4, b, 100)[0].phenotype == "c"  # g = 1 is the last alternative


def test_weighted_alternatives_keep_their_shares():
    b = parse_grammar("<S> ::= a @ 3 | b @ 1\n", "w.bnf").bind()
    assert [decode([g], b, 100)[0].phenotype for g in (0.0, 0.74, 0.76, 1.0)] == ["a", "a", "b", "b"]


def test_numbers_map_to_their_ranges():
    assert [int_value(g, 2, 5, False) for g in (0.0, 0.249, 0.25, 0.999, 1.0)] == [2, 2, 3, 5, 5]
    assert int_value(0.0, 1, 1000, True) == 1 and int_value(1.0, 1, 1000, True) == 1000
    assert int_value(0.5, 1, 999, True) in (31, 32)  # the middle of the log range
    assert 0.0 < real_value(0.0, 0.0, 1.0, True, True, False) < 1e-300
    assert 1.0 > real_value(1.0, 0.0, 1.0, True, True, False) > 0.9999999
    assert real_value(0.5, 0.001, 10.0, False, False, True) == pytest.approx(0.1)
    assert real_value(0.0, 0.05, 5.0, False, False, False, step=0.05) == 0.05
    assert real_value(1.0, 0.05, 5.0, False, False, False, step=0.05) == 5.0


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_every_shipped_grammar_decodes_any_genome_into_a_valid_tree(path):
    bound = load_grammar(path).bind(YEAST)
    length = genome_length(bound.grammar)
    rng = np.random.default_rng(0)
    genomes = [list(rng.random(length)) for _ in range(100)] + [[0.0] * length, [1.0] * length]
    for genome in genomes:
        tree, used = decode(genome, bound, 100)
        assert not tree_problems(tree, bound), genome
        assert used <= length
        assert decode(list(genome), bound, 100)[0] == tree  # the same genome, the same tree
        again = decode(encode(tree, bound, length), bound, 100)[0]  # re-encoded: the same tree (reals to 1e-9)
        assert [n.rule for _, n in again.nodes()] == [n.rule for _, n in tree.nodes()]
        for a, b in zip(again.leaves(), tree.leaves(), strict=True):
            assert a == b or isinstance(b.value, float) and a.value == pytest.approx(b.value, rel=1e-9)


class _Longest(SamplingPolicy):
    """Takes the alternative that needs the most decisions; counts the decisions."""

    def __init__(self, grammar):
        self.grammar, self.need, self.count = grammar, decisions_needed(grammar), 0

    def _cost(self, rule, a):
        return sum(self.need[i.name] if isinstance(i, NonTerminal) else isinstance(i, Sampler)
                   for i in self.grammar[rule].alternatives[a].items)

    def choose(self, ctx, candidates, weights, rng):
        self.count += 1
        return max(candidates, key=lambda a: self._cost(ctx.rule, a))

    def sample_int(self, ctx, lo, hi, log, rng):
        self.count += 1
        return lo

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        self.count += 1
        return (lo + hi) / 2


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_the_genome_length_is_the_longest_derivation(path):
    grammar = load_grammar(path)
    policy = _Longest(grammar)
    TreeGenerator(grammar.bind(YEAST), policy).grow(np.random.default_rng(0))
    assert policy.count == genome_length(grammar)


def test_genome_lengths_of_the_spaces():
    lengths = {name: genome_length(load_grammar(GRAMMARS / f"{name}.bnf"))
               for name in ("small", "medium", "large", "ensembles")}
    assert lengths == {"small": 13, "medium": 20, "large": 35, "ensembles": 14}


def test_a_recursive_grammar_is_refused_with_a_message():
    grammar = parse_grammar(RECURSIVE, "expr.bnf")
    with pytest.raises(ValueError, match=r"GA needs a non-recursive grammar: expr.bnf is recursive.*<e>"):
        make_method(RunConfig(method="ga"), grammar, YEAST)


def test_the_cli_refuses_a_recursive_grammar_with_exit_1(tmp_path):
    text = (GRAMMARS / "large.bnf").read_text().replace("| <META3> <ALG-TYPE> @auto", "| <META3> <ALGS-SLC> @ 2")
    assert "<ALGS-SLC> @ 2" in text
    (tmp_path / "rec.bnf").write_text(text)
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "ga", "--grammar",
                        str(tmp_path / "rec.bnf"), "--budget", "20s", "--workers", "1", "--quiet", "--out",
                        str(tmp_path / "run")], capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert r.returncode == 1, r.stderr
    assert "GA needs a non-recursive grammar" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "run").exists()  # refused before the run directory is made


# -- DEAP under the run's Generator ------------------------------------------------------------------
def test_deap_draws_depend_only_on_the_generator_and_leave_random_alone():
    """The GA's operators take the run's Generator last, as GGP's do; DEAP's are seeded from it."""
    toolbox = make_toolbox(2)

    def operate(seed, global_seed):
        random.seed(global_seed)
        before = random.getstate()
        a, b = [0.0] * 8, [1.0] * 8
        rng = np.random.default_rng(seed)
        toolbox.mate(a, b, rng)
        toolbox.mutate(a, rng)
        with python_random_from(rng):
            draws = (a, b, random.random())
        assert random.getstate() == before  # nothing else in the process sees a change
        return draws

    assert operate(1, 10) == operate(1, 99)
    assert operate(1, 10) != operate(2, 10)
    a, b, _ = operate(3, 0)
    assert sum(x not in (0.0, 1.0) for x in a) == 1  # one gene redrawn
    assert sum(x == 1.0 for x in b) + sum(x == 0.0 for x in b) == 8  # crossover only swaps genes


def test_the_elite_keeps_its_genome(small, data):  # noqa: F811
    config = RunConfig(method="ga", population=10, budget_seconds=3600, mode="generational")
    ga = make_method(config, small, data.train.meta)
    rng = np.random.default_rng(0)
    batch = ga.ask(rng)
    genomes = [list(ga.genome_of[i.phenotype]) for i in batch]
    told = [ind.with_fitness(i / 10) for i, ind in enumerate(batch)]
    ga.tell(told)
    nxt = ga.ask(rng)
    assert nxt[0].phenotype == batch[-1].phenotype and ga.genome_of[nxt[0].phenotype] == genomes[-1]
    assert all(not tree_problems(i.tree, ga.variation.bound) for i in nxt)


def test_a_told_candidate_without_a_genome_is_re_encoded(small, data):  # noqa: F811
    """Asynchronous mode: a candidate of a resumed run's log that no genome of the method produced."""
    config = RunConfig(method="ga", population=4, budget_seconds=3600, mode="async")
    ga = make_method(config, small, data.train.meta)
    stranger = make_method(config, small, data.train.meta).ask_one(np.random.default_rng(5))
    assert stranger.phenotype not in ga.genome_of
    ga.tell_one(stranger.with_fitness(0.5))
    genome = ga.genome_of[stranger.phenotype]
    assert len(genome) == ga.length == 13 and all(0 <= g <= 1 for g in genome)
    again = decode(genome, ga.variation.bound, 100)[0]
    assert [n.rule for _, n in again.nodes()] == [n.rule for _, n in stranger.tree.nodes()]
    assert ga.resample_period == 5
    assert make_method(config.replace(method_params={"reshuffle": True}), small, data.train.meta).resample_period == 1


# -- the method in the search loop --------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["generational", "async"])
def test_same_seed_same_search(small, data, mode):  # noqa: F811
    config = run_config(method="ga", population=16, max_generations=6, budget_seconds=3600, seed=7, mode=mode,
                       restart_min_generations=3, restart_patience=2)
    runs = []
    for _ in range(2):
        engine = FakeEngine()
        random.seed(len(runs))  # the global random state does not matter
        loop = _loop(config, small, data, engine)
        search(loop)
        runs.append(engine.calls)
    assert runs[0] == runs[1] and len(runs[0]) > 40
    engine = FakeEngine()
    search(_loop(config.replace(seed=8), small, data, engine))
    assert engine.calls != runs[0]
    assert isinstance(loop.state.method, GA) and loop.state.method.archive()


@pytest.mark.parametrize("mode", ["generational", "async"])
def test_resume_after_a_kill_repeats_and_loses_nothing(small, data, tmp_path, fake_world, mode):  # noqa: F811
    config = run_config(method="ga", population=16, max_generations=7, resample_every=3, budget_seconds=3600,
                       seed=3, mode=mode, restart_min_generations=3, restart_patience=2)
    start(config, small, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"kill_after": 40}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "killed", argv=[])
    first = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"kill_after": 7}
    with pytest.raises(Killed):
        resume(tmp_path / "killed")
    second = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {}
    outcome = resume(tmp_path / "killed")
    third = fake_world.engines[-1].calls
    assert first + second + third == whole
    logged = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "killed").evaluations()]
    assert logged == [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "whole").evaluations()]
    assert [g["generation"] for g in RunDirectory(tmp_path / "killed").generations()] == list(range(7))
    assert outcome.winner.phenotype == (tmp_path / "whole" / "best" / "phenotype.txt").read_text().strip()
    assert outcome.final["method_report"]["genome_length"] == 13


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_evolve_with_ga_end_to_end(tmp_path):
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "ga", "--grammar",
                        "grammars/small.bnf", "--budget", "20s", "--workers", "1", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "best:" in r.stdout and "Traceback" not in r.stderr
    final = json.loads((out / "final.json").read_text())
    assert final["method"] == "ga" and final["method_report"]["genome_length"] == 13
    assert json.loads((out / "config.json").read_text())["config"]["method"] == "ga"

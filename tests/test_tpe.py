"""TPE on Optuna, define-by-run over the grammar (search/methods/tpe.py).

Every decision of a derivation is one ``suggest_*`` call keyed by its unrolled grammar
location; trees stay valid on every shipped grammar and on a recursive one; TPE concentrates
on what pays after its startup trials; same seed same run and exact resume, in both modes.
"""
from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import optuna
import pytest

from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.search.run import search
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import NonTerminal, Sampler
from ggp_automl.gp.policy import unrolled_key
from ggp_automl.search import RunConfig, resume, start
from ggp_automl.search.methods import METHODS, make_method
from ggp_automl.search.run import load_run_data
from ggp_automl.search.rundir import RunDirectory
from ggp_automl.search.methods.tpe import TPE, TPEPolicy, quiet
from ggp_automl.gp.validity import tree_problems

from .conftest import GRAMMARS, ROOT
from .test_search import FakeEngine, Killed, _loop, data, fake_world, small  # noqa: F401 - fixtures

TWICE = """<S> ::= v <k> <k> <r> | w <g> | u
<k> ::= p | q RANDOM-INT(1, 4) | s RANDOM-INT(2, 64, log)
<r> ::= RANDOM-REAL(>0.0, <1.0) | RANDOM-REAL(0.001, 10.0, log)
<g> ::= RANDOM-REAL(0.1, 1.0, step=0.1)
"""
#: a recursive rule whose deepest alternatives the depth limit removes near the leaves
RECURSIVE = """<e> ::= <e> + <e> | <n> | y | z
<n> ::= x | RANDOM-INT(1, 9)
"""
FOUR = """<S> ::= a <x> | b <x> | c <x> | d <x>
<x> ::= RANDOM-REAL(0.0, 1.0)
"""
SHIPPED = ["small.bnf", "medium.bnf", "large.bnf", "ensembles.bnf"] + [
    # species files: two in the fast suite, the rest with -m slow (CI's 20 minutes)
    f"species/{p.name}" if p.stem in ("large-1", "large-trees") else
    pytest.param(f"species/{p.name}", marks=pytest.mark.slow) for p in sorted((GRAMMARS / "species").glob("*.bnf"))]


def decisions(tree, bound) -> dict:
    """What the tree decided, by unrolled location, as Optuna parameters (a grid's value as its index)."""
    g, out = bound.grammar, {}

    def visit(node, site):
        rule = g[node.rule]
        if len(rule.alternatives) > 1:
            out[unrolled_key(site, node.rule)] = node.alt
        for i, (item, child) in enumerate(zip(rule.alternatives[node.alt].items, node.children)):
            if isinstance(item, NonTerminal):
                visit(child, site + ((node.rule, node.alt, i),))
            elif isinstance(item, Sampler):
                grid = bound.grid_of((node.rule, node.alt, i))
                value = child.value if grid is None else grid.index(child.value)
                out[unrolled_key(site, node.rule, node.alt, i)] = value

    visit(tree, ())
    return out


class Spy:
    """An Optuna trial that records every suggest call."""

    def __init__(self, trial):
        self.trial, self.calls = trial, []

    def _record(self, kind, name, *args, **kwargs):
        value = getattr(self.trial, f"suggest_{kind}")(name, *args, **kwargs)
        self.calls.append((name, value))
        return value

    def suggest_categorical(self, name, choices):
        return self._record("categorical", name, choices)

    def suggest_int(self, name, low, high, log=False):
        return self._record("int", name, low, high, log=log)

    def suggest_float(self, name, low, high, log=False):
        return self._record("float", name, low, high, log=log)


def tpe_method(grammar, task="multilabel", **params):
    config = RunConfig(method="tpe", method_params=params)
    return make_method(config, grammar, load_run_data(None, task=task).train.meta)


# -- the policy: one suggest call per decision -------------------------------------------------------

def test_every_decision_is_one_suggest_call_keyed_by_its_unrolled_location():
    g = parse_grammar(TWICE, "twice.bnf")
    bound = g.bind()
    policy = TPEPolicy()
    policy.bind(g)
    generator = TreeGenerator(bound, policy)
    with quiet():
        sampler = optuna.samplers.TPESampler(seed=0, n_startup_trials=4)
        study = optuna.create_study(direction="maximize", sampler=sampler)
        seen = set()
        for i in range(30):
            spy = Spy(study.ask())
            with policy.suggesting(spy):
                tree = generator.grow(np.random.default_rng(i))
            assert dict(spy.calls) == decisions(tree, bound) and len(spy.calls) == len(dict(spy.calls))
            assert tree_problems(tree, bound) == []
            study.tell(spy.trial, 1.0 if tree.phenotype.startswith("v") else 0.0)
            assert study.trials[-1].params == decisions(tree, bound)  # a trial's parameters are its tree's decisions
            seen |= set(dict(spy.calls))
    # two occurrences of <k> in one tree are two parameters; a grid is suggested by its index
    assert {"S.0.1/<k>", "S.0.2/<k>", "S.0.1/<k>/1/1", "S.0.2/<k>/1/1", "S.1.1/<g>/0/0"} <= seen
    grids = [t.params["S.1.1/<g>/0/0"] for t in study.trials if "S.1.1/<g>/0/0" in t.params]
    assert grids and all(isinstance(k, int) and 0 <= k <= 9 for k in grids)  # 0.1 + k·0.1


@pytest.mark.parametrize("grammar", SHIPPED)
def test_trees_are_valid_on_every_shipped_grammar(grammar):
    """Startup (the grammar's weights) and TPE trees alike: valid, and exactly their trials' parameters."""
    g = load_grammar(GRAMMARS / grammar)
    method = tpe_method(g, "singlelabel" if "ensembles" in grammar else "multilabel", n_startup_trials=3)
    bound = method.variation.bound
    rng = np.random.default_rng(1)
    for i in range(7):
        ind = method.ask_one(rng)
        assert tree_problems(ind.tree, bound, method.config.max_depth) == []
        trial = method.study.get_trials(deepcopy=False)[-1]
        assert trial.params == decisions(ind.tree, bound)
        method.tell_one(ind.with_fitness(float(rng.random())))
    assert method.finished_trials() == 7


def test_a_recursive_grammar_keys_a_depth_limited_choice_by_its_candidates(data):  # noqa: F811
    g = parse_grammar(RECURSIVE, "recursive.bnf")
    method = make_method(RunConfig(method="tpe", max_depth=5, method_params={"n_startup_trials": 5}), g,
                         data.train.meta)
    bound = method.variation.bound
    rng = np.random.default_rng(0)
    for _ in range(40):
        ind = method.ask_one(rng)
        assert tree_problems(ind.tree, bound, 5) == []
        method.tell_one(ind.with_fitness(ind.phenotype.count("x") / len(ind.phenotype.split())))
    names = {n for t in method.study.get_trials(deepcopy=False) for n in t.params}
    assert any(n.endswith("<e>{2,3}") for n in names) and any(n.endswith("<e>") for n in names)
    assert method.finished_trials() == 40


# -- the method in the loop ----------------------------------------------------------------------

@pytest.mark.parametrize("mode", ["generational", "async"])
def test_after_its_startup_tpe_concentrates_on_what_pays(data, mode):  # noqa: F811
    g = parse_grammar(FOUR, "four.bnf")
    fitness = lambda p: 0.9 if p.startswith("c") else 0.2

    def share_of_c(method, **params):
        config = RunConfig(method=method, batch_size=10, max_generations=6, budget_seconds=3600, seed=1,
                           mode=mode, method_params=params)
        engine = FakeEngine(fitness=fitness)
        search(_loop(config, g, data, engine))
        later = [p for _, p in engine.calls[10:]]
        assert len(later) == 50  # continuous numbers: no candidate is a cache hit
        return sum(p.startswith("c") for p in later) / len(later)

    tpe, random = share_of_c("tpe", population=10, n_startup_trials=10), share_of_c("random")
    assert tpe > 0.6 and random < 0.4, (tpe, random)


@pytest.mark.parametrize("grammar", ["small", "ensembles"])
@pytest.mark.parametrize("mode", ["generational", "async"])
def test_same_seed_same_tpe_search(grammars, data, mode, grammar):  # noqa: F811
    if grammar == "ensembles":
        g, data = load_grammar(GRAMMARS / "ensembles.bnf"), load_run_data(None, task="singlelabel")
    else:
        g = grammars[grammar]
    config = RunConfig(method="tpe", method_params={"population": 8, "n_startup_trials": 5}, max_generations=4,
                       budget_seconds=3600, seed=7, mode=mode)
    runs = []
    for _ in range(2):
        engine = FakeEngine()
        search(_loop(config, g, data, engine))
        runs.append(engine.calls)
    assert runs[0] == runs[1] and len(runs[0]) > 20
    engine = FakeEngine()
    search(_loop(config.replace(seed=8), g, data, engine))
    assert engine.calls != runs[0]


@pytest.mark.parametrize("mode, workers", [("generational", 1), ("async", 1), ("async", 3)])
def test_resume_after_a_kill_is_the_uninterrupted_run(small, data, tmp_path, fake_world, mode, workers):  # noqa: F811
    """Killed twice, resumed: the same evaluations in the same order (the checkpoint holds the
    study, its pending trials and its sampler's random state)."""
    config = RunConfig(method="tpe", method_params={"population": 12, "n_startup_trials": 8}, max_generations=6,
                       budget_seconds=3600, seed=3, mode=mode)
    fake_world.engine_kwargs = {"workers": workers, "order": "lifo"}
    start(config, small, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    calls = []
    for kill_after in (29, 17):
        fake_world.engine_kwargs = {"workers": workers, "order": "lifo", "kill_after": kill_after}
        with pytest.raises(Killed):
            (start(config, small, data, tmp_path / "killed", argv=[]) if not calls else resume(tmp_path / "killed"))
        calls.append(fake_world.engines[-1].calls)
    fake_world.engine_kwargs = {"workers": workers, "order": "lifo"}
    outcome = resume(tmp_path / "killed")
    assert calls[0] + calls[1] + fake_world.engines[-1].calls == whole  # nothing repeated, nothing lost
    run = RunDirectory(tmp_path / "killed")
    logged = [(r["split"], r["phenotype"]) for r in run.evaluations()]
    assert logged == [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "whole").evaluations()]
    assert [g["generation"] for g in run.generations()] == list(range(6))
    finals = [json.loads((tmp_path / r / "final.json").read_text()) for r in ("whole", "killed")]
    assert finals[0]["method_report"] == finals[1]["method_report"]
    assert outcome.winner.phenotype == (tmp_path / "whole" / "best" / "phenotype.txt").read_text().strip()


def test_resumed_with_other_workers_every_logged_evaluation_reaches_the_study(
        small, data, tmp_path, fake_world):  # noqa: F811
    """Another number of workers after the kill: the run goes another way, but nothing logged is lost
    or run again, and evaluations no replayed trial asked for are added to the study from their trees."""
    config = RunConfig(method="tpe", method_params={"population": 12, "n_startup_trials": 8}, max_generations=5,
                       budget_seconds=3600, seed=2, mode="async")
    fake_world.engine_kwargs = {"workers": 3, "order": "lifo", "kill_after": 31}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "run", argv=[])
    before = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    fake_world.engine_kwargs = {"workers": 1, "order": "fifo"}
    outcome = resume(tmp_path / "run", workers=1)
    after = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    assert after[: len(before)] == before and len(set(after)) == len(after)
    assert not set(fake_world.engines[-1].calls) & set(before)
    rows = {r[0]: r[1] for r in outcome.final["method_report"]["rows"]}
    assert int(rows["added from a tree after a resume"]) > 0 and int(rows["not learnt (tree not retraceable)"]) == 0
    assert int(rows["told with a fitness"]) == 5 * 12


def test_a_candidate_without_a_pending_trial_is_added_from_its_tree(small):  # noqa: F811
    asker, teller = tpe_method(small), tpe_method(small)
    rng = np.random.default_rng(4)
    teller.ask_one(np.random.default_rng(5))  # the teller's own study exists, one trial pending
    ind = asker.ask_one(rng)
    teller.tell_one(ind.with_fitness(0.75))
    added = teller.study.get_trials(deepcopy=False)[-1]
    assert added.state == optuna.trial.TrialState.COMPLETE and added.value == 0.75
    last = asker.study.get_trials(deepcopy=False)[-1]
    assert added.params == last.params == decisions(ind.tree, asker.variation.bound)
    stranger = tpe_method(parse_grammar(FOUR, "four.bnf")).ask_one(rng)  # a tree of another grammar
    teller.tell_one(stranger.with_fitness(0.5))
    assert teller.counts["added"] == 1 and teller.counts["lost"] == 1


def test_screened_out_candidates_are_pruned_trials_and_stay_out_of_the_archive(small):  # noqa: F811
    method = tpe_method(small, population=6)
    batch = method.ask(np.random.default_rng(0))
    told = [ind.with_fitness(0.1 * (i + 1), level=0 if i % 2 else -1) for i, ind in enumerate(batch)]
    method.tell(told)
    states = [t.state for t in method.study.get_trials(deepcopy=False)]
    assert states == [optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.COMPLETE] * 3
    assert [i.score for i in method.archive()] == pytest.approx([0.6, 0.4, 0.2])
    assert not method.pending and method.best_trial().value == pytest.approx(0.6)


def test_tpe_is_registered_with_its_parameters():
    assert METHODS["tpe"] is TPE and RunConfig(method="tpe").effective_mode == "async"
    assert {p.name: p.default for p in TPE.parameters} == {"population": 20, "n_startup_trials": 10,
                                                           "multivariate": False, "reshuffle": False}
    assert TPE(RunConfig(method="tpe", method_params={"reshuffle": True})).resample_period == 1


def test_multivariate_groups_run_too(small):  # noqa: F811
    method = tpe_method(small, n_startup_trials=3, multivariate=True)
    rng = np.random.default_rng(0)
    for _ in range(8):
        ind = method.ask_one(rng)
        assert tree_problems(ind.tree, method.variation.bound, method.config.max_depth) == []
        method.tell_one(ind.with_fitness(float(rng.random())))
    assert method.study.sampler._group  # Optuna's grouped multivariate TPE


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_cli_evolve_tpe_end_to_end(tmp_path):
    out = tmp_path / "run"
    t0 = time.time()
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "tpe", "--grammar",
                        "grammars/small.bnf", "--budget", "20s", "--workers", "2", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and time.time() - t0 < 20 + 15
    final = json.loads((out / "final.json").read_text())
    assert final["method"] == "tpe" and final["winner"]["phenotype"]
    rows = {row[0]: row[1] for row in final["method_report"]["rows"]}
    assert int(rows["trials asked"]) > 0 and "best value" in rows
    assert Path(out / "best" / "phenotype.txt").exists()

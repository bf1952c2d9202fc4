"""Search methods and the search loop, with a fake engine (no model is fitted here).

The fake engine scores a phenotype by a hash of (view, phenotype), so runs are fast
and deterministic, and it records every call, so cache hits, resampling and resumes
can be checked exactly. The real engine is exercised in test_engine.py and
test_evolve.py.
"""
from __future__ import annotations

import zlib
from collections import Counter

import numpy as np
import pytest

from ggp_automl.evaluation.candidate import EvaluationResult
from ggp_automl.search.run import search
from ggp_automl.evaluation.engine import EvaluationEngine
from ggp_automl.evaluation.final import FinalFit
from ggp_automl.evaluation.isolation import Limits
from ggp_automl.gp.species import make_species
from ggp_automl.gp.validity import tree_problems, tree_problems_in_any
from ggp_automl.search import RunConfig, make_method, resume, start
from ggp_automl.search.methods.evolutionary import Convergence
from ggp_automl.search.individual import Individual
from ggp_automl.search.loop import SearchLoop, SearchState
from ggp_automl.search.methods.base import best_of, elites, tournament
from ggp_automl.search.run import describe_data, default_dataset

from .conftest import GRAMMARS, run_config


def fake_fitness(key: str, phenotype: str) -> float:
    return (zlib.crc32(f"{key}|{phenotype}".encode()) % 10_000) / 10_000


class Killed(Exception):
    """Stands in for kill -9 in the middle of a generation."""


class FakeEngine(EvaluationEngine):
    """Scores by hash (or ``fitness(phenotype)``); ``order`` says which running candidate finishes
    first ("fifo", "lifo").

    ``cost(phenotype)`` (default: ``wall``) is a candidate's run time: one whose cost exceeds
    its time limit comes back as a time-out under that limit, as a real engine would.
    """

    def __init__(self, kill_after: int | None = None, constant: float | None = None, wall: float = 0.02,
                 workers: int = 1, order: str = "fifo", cost=None, limits: Limits = Limits(), fitness=None):
        self.limits = limits
        self.workers = workers
        self.busy_seconds = 0.0
        self.wall = wall
        self.cost = cost
        self.fitness = fitness
        self.order = order
        self.calls: list[tuple[str, str]] = []
        self.limits_seen: list[float] = []
        self.kill_after = kill_after
        self.constant = constant
        self._pending: dict[int, tuple] = {}
        self._next = 0

    def _run(self, tree, split_key, timeout):
        if self.kill_after is not None and len(self.calls) >= self.kill_after:
            raise Killed
        self.calls.append((split_key, tree.phenotype))
        limit = min(self.limits.timeout, timeout() if callable(timeout) else (timeout or self.limits.timeout))
        self.limits_seen.append(limit)
        cost = self.cost(tree.phenotype) if self.cost is not None else self.wall
        self.busy_seconds += min(cost, limit)
        if cost > limit:
            return EvaluationResult(tree.phenotype, "timeout", 0.0, wall_time=limit, reason="killed", limit=limit)
        f = self.constant if self.constant is not None else fake_fitness(split_key, tree.phenotype)
        f = self.fitness(tree.phenotype) if self.fitness is not None else f
        return EvaluationResult(tree.phenotype, "ok", f, {"fitness": f}, 0.01, 0.01, cost, limit=limit)

    def submit(self, tree, grammar, split, *, split_key, fitness="fitness", random_state=0, deadline=None,
               timeout=None):
        self._next += 1
        self._pending[self._next] = (tree, split_key, timeout)
        return self._next

    def wait(self, handles, timeout=None):
        h = min(handles) if self.order == "fifo" else max(handles)
        return [(h, self._run(*self._pending.pop(h)))]

    def cancel(self, handles):
        for h in handles:
            self._pending.pop(h, None)


@pytest.fixture(scope="module")
def data():
    return describe_data(default_dataset(), None, None, None, None, "synthetic default")


@pytest.fixture(scope="module")
def small(grammars):
    return grammars["small"]


@pytest.fixture
def fake_world(monkeypatch):
    """start()/resume() with the fake engine and a refit that fits nothing."""
    engines: list[FakeEngine] = []

    def engine_factory(workers, limits, scheduler=None, plugins=()):
        engines.append(FakeEngine(limits=limits, **fake_world.engine_kwargs))
        return engines[-1]

    def fake_fit(tree, grammar, X, Y, categorical_features=(), X_test=None, Y_test=None, limits=None, task=None,
                 random_state=0):
        return FinalFit("ok", model={"phenotype": tree.phenotype}, test_measures={}, fit_time=0.0, wall_time=0.0)

    fake_world.engine_kwargs = {}
    fake_world.engines = engines
    monkeypatch.setattr("ggp_automl.search.run.make_engine", engine_factory)
    monkeypatch.setattr("ggp_automl.search.finish.fit_final", fake_fit)
    return fake_world


def _loop(config, grammar, data, engine, run=None):
    method = make_method(config, grammar, data.train.meta)
    return SearchLoop(config=config, grammar=grammar, train=data.train, engine=engine,
                      state=SearchState.initial(method, config, engine.workers), run=run)


# -- selection, elitism, restarts -----------------------------------------------------------

def test_tournament_of_two_picks_the_better_of_two_draws(small):
    from ggp_automl.gp.tree import Leaf, Node

    pool = [Individual(Node("x", i, (Leaf(str(i)),)), fitness=i / 10) for i in range(10)]
    rng = np.random.default_rng(0)
    wins = Counter(tournament(pool, 2, rng).score for _ in range(20_000))
    # P(the best wins) = 1 - (1 - 1/n)^2 = 0.19; P(the worst wins) = 1/n^2 = 0.01
    assert wins[0.9] / 20_000 == pytest.approx(0.19, abs=0.015)
    assert wins[0.0] / 20_000 == pytest.approx(0.01, abs=0.005)


def test_best_of_and_elites_break_ties_by_position():
    from ggp_automl.gp.tree import Leaf, Node

    pool = [Individual(Node("x", i, (Leaf(str(i)),)), fitness=f) for i, f in enumerate([0.5, 0.9, 0.9, 0.1])]
    assert best_of(pool) is pool[1]
    assert elites(pool, 3) == [pool[1], pool[2], pool[0]]


def test_convergence_restarts_only_after_the_minimum_and_a_stable_best():
    c = Convergence(patience=5, min_generations=20)
    fired = []
    for g in range(1, 41):
        c.record("same best")
        fired.append(c.step())
    # the best never changes: the first restart comes at generation 20, the next 20 later
    assert [g for g, f in enumerate(fired, start=1) if f] == [20, 40]
    c = Convergence(patience=5, min_generations=20)
    for g in range(30):
        c.record(f"best {g % 2}")  # keeps changing
        assert not c.step()


def test_ggp_keeps_its_elite_and_restarts_a_converged_population(small, data):
    config = run_config(method="ggp", population=12, restart_patience=2, restart_min_generations=3,
                       resample_every=0, max_generations=12, budget_seconds=3600, mode="generational")
    engine = FakeEngine(constant=0.5)  # nothing ever improves: the best phenotype stays the first one
    loop = _loop(config, small, data, engine)
    batches = []
    original_ask = loop.state.method.ask

    def spy(rng):
        batch = original_ask(rng)
        batches.append(batch)
        return batch

    loop.state.method.ask = spy
    search(loop)
    method = loop.state.method
    assert method.restarts >= 2
    assert len(method.restart_archive) == method.restarts
    # elitism: the best of a bred generation's parents is the first of the next batch
    for before, after in zip(batches, batches[1:]):
        if after[0].phenotype != before[0].phenotype and len(set(i.phenotype for i in after)) == 12:
            continue  # a restart: a fresh population
        assert after[0].phenotype == before[0].phenotype


def test_ggp_children_are_valid_and_bounded(grammars, data):
    for space in ("small", "large"):
        g = grammars[space]
        config = run_config(method="ggp", population=20, max_generations=6, resample_every=2, budget_seconds=3600,
                           mode="generational")
        loop = _loop(config, g, data, FakeEngine())
        search(loop)
        bound = g.bind(data.train.meta)
        for ind in loop.state.method.populations[None]:
            assert tree_problems(ind.tree, bound, config.max_depth) == []


def test_spggp_species_have_their_own_populations_and_valid_trees(small, data):
    config = run_config(method="spggp", species_size=4, max_generations=6, budget_seconds=3600,
                       restart_min_generations=2, restart_patience=2, mode="generational")
    loop = _loop(config, small, data, FakeEngine())
    search(loop)
    method = loop.state.method
    assert sorted(method.populations) == list(range(1, 9))
    bounds = [make_species(small, s).bind(data.train.meta) for s in range(1, 9)]
    for s, pool in method.populations.items():
        assert len(pool) == 4 and all(i.species == s for i in pool)
        for ind in pool:
            assert tree_problems_in_any(ind.tree, bounds, config.max_depth) == []
    stats = method.stats()
    assert set(stats["species"]) == {str(s) for s in range(1, 9)}


def test_spggp_species_1_trees_hold_defaults_until_inter_species_crossover(small, data):
    config = run_config(method="spggp", species_size=6, inter_species_rate=0.0, mutation_rate=1.0,
                       max_generations=4, budget_seconds=3600, mode="generational")
    loop = _loop(config, small, data, FakeEngine())
    search(loop)
    species_1 = make_species(small, 1).bind(data.train.meta)
    for ind in loop.state.method.populations[1]:  # no inter-species crossover: species 1 stays species 1
        assert tree_problems(ind.tree, species_1) == []


def test_random_search_batches_are_distinct_and_the_archive_is_the_best(small, data):
    config = RunConfig(method="random", batch_size=15, max_generations=4, budget_seconds=3600)
    engine = FakeEngine()
    loop = _loop(config, small, data, engine)
    search(loop)
    assert len(engine.calls) == len(set(engine.calls))
    archive = loop.state.method.archive()
    assert archive and archive[0].score == max(fake_fitness(k, p) for k, p in engine.calls)


def test_beam_search_moves_only_to_strictly_better_neighbours(small, data):
    config = RunConfig(method="beam", batch_size=10, max_generations=6, budget_seconds=3600)
    loop = _loop(config, small, data, FakeEngine())
    seen = []
    method = loop.state.method
    original_tell = method.tell

    def spy(evaluated):
        before = method.incumbent
        original_tell(evaluated)
        seen.append((before, evaluated, method.incumbent))

    method.tell = spy
    search(loop)
    for before, evaluated, after in seen[1:]:
        assert evaluated[0].phenotype == before.phenotype  # the incumbent leads every batch
        neighbours = evaluated[1:]
        assert len({n.phenotype for n in neighbours}) == len(neighbours)
        assert before.phenotype not in {n.phenotype for n in neighbours}
        best = max(n.score for n in neighbours)
        if best > before.score:
            assert after.score == best
        else:
            assert after.phenotype == before.phenotype


# -- the loop: cache, resampling, determinism, resume ---------------------------------------

@pytest.mark.parametrize("mode", ["generational", "async"])
def test_cache_hits_cost_nothing_and_are_counted(small, data, mode):
    config = run_config(method="ggp", population=16, max_generations=8, resample_every=5, budget_seconds=3600,
                       mode=mode)
    engine = FakeEngine()
    loop = _loop(config, small, data, engine)
    search(loop)
    assert len(engine.calls) == len(set(engine.calls))  # nothing evaluated twice on one view
    st = loop.state
    assert st.counts["evaluations"] == len(engine.calls)
    assert st.counts["cached"] > 0
    assert st.counts["evaluations"] + st.counts["cached"] == 16 * 8


@pytest.mark.parametrize("mode", ["generational", "async"])
def test_the_split_is_redrawn_every_five_generations(small, data, mode):
    config = run_config(method="ggp", population=8, max_generations=11, resample_every=5, budget_seconds=3600,
                       mode=mode)
    loop = _loop(config, small, data, FakeEngine())
    search(loop)
    keys = [r["split"] for r in loop.history]
    assert len(set(keys[:5])) == 1 and len(set(keys[5:10])) == 1 and keys[10] != keys[9] != keys[4]
    config = config.replace(method="random", method_params={})  # resample_every is the GGP family's
    loop = _loop(config, small, data, FakeEngine())
    search(loop)
    assert len({r["split"] for r in loop.history}) == 1  # random search never resamples


@pytest.mark.parametrize("method, mode", [("ggp", "generational"), ("spggp", "generational"),
                                          ("random", "generational"), ("beam", "generational"),
                                          ("pbil", "generational"), ("ggp", "async"), ("spggp", "async"),
                                          ("random", "async"), ("pbil", "async")])
def test_same_seed_same_search(small, data, method, mode):
    config = run_config(method=method, population=16, species_size=2, batch_size=16, max_generations=5,
                       budget_seconds=3600, seed=7, mode=mode,
                       method_params={"population": 16} if method == "pbil" else {})
    runs = []
    for _ in range(2):
        engine = FakeEngine()
        search(_loop(config, small, data, engine))
        runs.append(engine.calls)
    assert runs[0] == runs[1]
    engine = FakeEngine()
    search(_loop(config.replace(seed=8), small, data, engine))
    assert engine.calls != runs[0]


@pytest.mark.parametrize("method, mode", [("ggp", "generational"), ("spggp", "generational"),
                                          ("ggp", "async"), ("spggp", "async"), ("pbil", "async")])
def test_resume_after_a_kill_repeats_and_loses_nothing(small, data, tmp_path, fake_world, method, mode):
    """One worker: the resumed run is the uninterrupted run, in both modes."""
    config = run_config(method=method, population=16, species_size=2, max_generations=7, resample_every=3,
                       budget_seconds=3600, seed=3, mode=mode,
                       method_params={"population": 16} if method == "pbil" else {})
    # the uninterrupted run
    start(config, small, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    # the same run killed in the middle of generation 4, then resumed (several times)
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
    assert first + second + third == whole  # nothing repeated, nothing skipped, same order
    from ggp_automl.search.rundir import RunDirectory

    logged = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "killed").evaluations()]
    reference = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "whole").evaluations()]
    assert logged == reference
    assert [r["n"] for r in RunDirectory(tmp_path / "killed").evaluations()] == list(range(len(logged)))
    generations = RunDirectory(tmp_path / "killed").generations()
    assert [g["generation"] for g in generations] == list(range(7))
    assert outcome.final["counts"]["evaluations"] == len(logged)
    assert outcome.winner.phenotype == (tmp_path / "whole" / "best" / "phenotype.txt").read_text().strip()


def test_resume_rejects_a_finished_run_and_a_changed_grammar(small, data, tmp_path, fake_world):
    from ggp_automl.search import RunError

    grammar_file = tmp_path / "g.bnf"
    grammar_file.write_text((GRAMMARS / "small.bnf").read_text())
    config = RunConfig(method="random", batch_size=4, max_generations=1, budget_seconds=3600)
    start(config, str(grammar_file), data, tmp_path / "done", argv=[])
    with pytest.raises(RunError, match="already finished"):
        resume(tmp_path / "done")
    fake_world.engine_kwargs = {"kill_after": 2}
    with pytest.raises(Killed):
        start(config, str(grammar_file), data, tmp_path / "cut", argv=[])
    grammar_file.write_text(grammar_file.read_text() + "\n# edited\n")
    with pytest.raises(RunError, match="has changed"):
        resume(tmp_path / "cut")
    with pytest.raises(RunError, match="not a run directory"):
        resume(tmp_path / "nowhere")


def test_a_registered_method_runs_in_the_same_loop(small, data):
    """The README's seam example: a new method needs ask/tell/archive and nothing else."""
    from ggp_automl.search.methods.base import SearchMethod
    from ggp_automl.search.methods import register_method

    class FirstFound(SearchMethod):
        name = "first-found-test"

        def ask(self, rng):
            return [Individual(t) for t in self.variation.population(self.config.batch_size, rng)]

        def tell(self, evaluated):
            self.policy.update([i.tree for i in evaluated], [i.score for i in evaluated])
            self.best = best_of(evaluated + ([self.best] if getattr(self, "best", None) else []))

        def archive(self):
            return [self.best]

    register_method(FirstFound)
    config = RunConfig(method="first-found-test", batch_size=5, max_generations=3, budget_seconds=3600)
    engine = FakeEngine()
    loop = _loop(config, small, data, engine)
    search(loop)
    assert len(engine.calls) == 15 and loop.candidates()[0].score == max(fake_fitness(*c) for c in engine.calls)


@pytest.mark.parametrize("wall, end", [(0.02, 85.0), (10.0, 73.0), (40.0, 42.5)])
def test_a_slow_best_candidate_ends_the_search_early(small, data, wall, end):
    """The search leaves 1.2x (re-evaluation) + 1.5x (refit) the best candidate's time for the
    final stage (never less than the budget's last 15 %, never taking more than half the search)."""
    config = RunConfig(method="random", batch_size=3, max_generations=1, budget_seconds=100, eval_timeout=60)
    loop = _loop(config, small, data, FakeEngine(wall=wall))
    assert loop.keeper.search_end() == pytest.approx(85.0)
    search(loop)
    assert loop.keeper.search_end() == pytest.approx(end)


def test_the_final_stage_re_evaluates_in_order_of_search_fitness(small, data):
    """The best candidates are re-evaluated first, and a candidate that was not re-evaluated never
    outranks one that was (the README's 2-minute run lost its 0.759 candidate that way)."""
    config = RunConfig(method="random", batch_size=20, max_generations=3, budget_seconds=3600, mode="generational")
    engine = FakeEngine()
    loop = _loop(config, small, data, engine)
    search(loop)
    ranked = loop.candidates()
    searched = len(engine.calls)
    pairs = loop.choose()
    final_calls = [p for _, p in engine.calls[searched:]]
    assert final_calls == [c.phenotype for c in ranked][: len(final_calls)]
    assert final_calls and final_calls[0] == ranked[0].phenotype
    evaluated = [r is not None for _, r in pairs]
    assert evaluated == sorted(evaluated, reverse=True)

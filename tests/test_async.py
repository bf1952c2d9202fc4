"""The asynchronous (steady-state) mode: no idle workers, same seed same run with one worker,
and a kill at any moment loses and repeats nothing, with one worker or several."""
from __future__ import annotations

import zlib

import pytest

from .conftest import run_config
from ggp_automl.search import RunConfig, resume, start
from ggp_automl.search.run import search
from ggp_automl.search.individual import Individual
from ggp_automl.search.methods.population import SteadyPopulation
from ggp_automl.search.rundir import RunDirectory
from ggp_automl.gp.validity import tree_problems

from .test_search import FakeEngine, Killed, _loop, data, fake_fitness, fake_world, small  # noqa: F401 - fixtures


def _ind(name: str, fitness: float | None = None) -> Individual:
    from ggp_automl.gp.tree import Leaf, Node

    return Individual(Node("x", 0, (Leaf(name),)), fitness=fitness)


def test_the_steady_population_keeps_its_size_and_its_best():
    pop = SteadyPopulation(3)
    completed = [pop.insert(_ind(str(i), f)) for i, f in enumerate([0.5, 0.9, 0.1, 0.7, 0.3, 0.2])]
    assert completed == [False, False, True, False, False, True]  # a generation = 3 insertions
    assert sorted(i.score for i in pop.members) == [0.5, 0.7, 0.9]  # the worst leave, the best stays
    assert pop.best().score == 0.9


def test_new_data_freezes_the_parents_until_the_new_population_is_full():
    pop = SteadyPopulation(2)
    for i, f in enumerate([0.4, 0.8]):
        pop.insert(_ind(str(i), f))
    pop.new_view(elitism=1)
    # the elite is re-evaluated first; selection draws from the old members meanwhile
    assert [i.phenotype for i in pop.queue] == ["1"] and not pop.queue[0].fitness.valid
    assert [i.score for i in pop.selection_pool()] == [0.4, 0.8]
    pop.insert(_ind("1", 0.3))
    assert [i.score for i in pop.selection_pool()] == [0.4, 0.8]  # fitness values of two views never mix
    pop.insert(_ind("2", 0.6))
    assert pop.parents is None and [i.score for i in pop.selection_pool()] == [0.3, 0.6]


@pytest.mark.parametrize("method", ["ggp", "spggp", "random"])
def test_async_children_are_valid_and_every_worker_stays_busy(small, data, method):  # noqa: F811
    config = run_config(method=method, population=12, species_size=2, batch_size=12, max_generations=5,
                       budget_seconds=3600, mode="async", resample_every=0)
    engine = FakeEngine(workers=3, order="lifo")
    loop = _loop(config, small, data, engine)
    submitted = []
    original = engine.submit

    def spy(*args, **kwargs):
        handle = original(*args, **kwargs)
        submitted.append(len(engine._pending))
        return handle

    engine.submit = spy
    search(loop)
    assert loop.state.generation == 5
    # until the last generation winds down, a finished candidate is replaced at once: 3 in flight
    assert max(submitted) == 3 and submitted.count(3) >= len(submitted) - 6
    bound = small.bind(data.train.meta)
    if method == "ggp":
        assert len(loop.state.method.steady[None].members) == 12
        for ind in loop.state.method.steady[None].members:
            assert tree_problems(ind.tree, bound, config.max_depth) == []


def test_async_ggp_breeds_from_its_population(small, data):  # noqa: F811
    """After the first generation most candidates are children, not fresh derivations."""
    config = run_config(method="ggp", population=10, max_generations=6, budget_seconds=3600, mode="async",
                       crossover_rate=1.0, mutation_rate=0.0, resample_every=0)
    engine = FakeEngine(workers=2)
    loop = _loop(config, small, data, engine)
    search(loop)
    first = {p for _, p in engine.calls[:10]}
    later = [p for _, p in engine.calls[10:]]
    assert later and loop.state.method.convergence[None].generations >= 5
    # every later candidate shares its algorithm skeleton (first token) with an earlier one
    skeletons = {p.split()[0] for p in first}
    assert all(p.split()[0] in skeletons for p in later)


@pytest.mark.parametrize("method", ["ggp", "spggp", "random"])
@pytest.mark.parametrize("workers", [1, 3])
def test_async_resume_repeats_and_loses_nothing(small, data, tmp_path, fake_world, method, workers):  # noqa: F811
    """Killed twice at arbitrary moments, then resumed: the same evaluations in the same order as
    the uninterrupted run (the fake engine finishes candidates in a fixed order)."""
    config = run_config(method=method, population=12, species_size=2, batch_size=12, max_generations=6,
                       resample_every=2, budget_seconds=3600, seed=5, mode="async")
    fake_world.engine_kwargs = {"workers": workers, "order": "lifo"}
    start(config, small, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"workers": workers, "order": "lifo", "kill_after": 29}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "killed", argv=[])
    fake_world.engine_kwargs = {"workers": workers, "order": "lifo", "kill_after": 17}
    with pytest.raises(Killed):
        resume(tmp_path / "killed")
    fake_world.engine_kwargs = {"workers": workers, "order": "lifo"}
    outcome = resume(tmp_path / "killed")
    run = RunDirectory(tmp_path / "killed")
    logged = [(r["split"], r["phenotype"]) for r in run.evaluations()]
    reference = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "whole").evaluations()]
    assert logged == reference == whole
    assert [r["n"] for r in run.evaluations()] == list(range(len(logged)))
    assert [g["generation"] for g in run.generations()] == list(range(6))
    assert outcome.final["counts"]["evaluations"] == len(logged)


def test_async_resume_with_other_workers_loses_and_repeats_nothing(small, data, tmp_path, fake_world):  # noqa: F811
    """Resumed with another number of workers (and another completion order) the run goes another
    way, but every evaluation logged before the kill is kept and none is run again."""
    config = run_config(method="ggp", population=12, max_generations=6, resample_every=2, budget_seconds=3600,
                       seed=2, mode="async")
    fake_world.engine_kwargs = {"workers": 3, "order": "lifo", "kill_after": 31}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "run", argv=[])
    before = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    fake_world.engine_kwargs = {"workers": 1, "order": "fifo"}
    outcome = resume(tmp_path / "run", workers=1)
    after = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    assert after[: len(before)] == before  # nothing lost
    assert len(set(after)) == len(after)  # nothing evaluated twice on one view
    assert not set(fake_world.engines[-1].calls) & set(before)  # the resumed session re-ran none of them
    assert outcome.final["counts"]["evaluations"] == len(after)
    assert outcome.winner is not None


def test_async_kill_before_the_first_checkpoint(small, data, tmp_path, fake_world):  # noqa: F811
    config = RunConfig(method="ggp", population=12, max_generations=3, budget_seconds=3600, seed=4, mode="async")
    fake_world.engine_kwargs = {"workers": 2}
    start(config, small, data, tmp_path / "whole", argv=[])
    fake_world.engine_kwargs = {"workers": 2, "kill_after": 5}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "early", argv=[])
    assert not (tmp_path / "early" / "checkpoint.pkl").exists()
    fake_world.engine_kwargs = {"workers": 2}
    resume(tmp_path / "early")
    logged = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "early").evaluations()]
    assert logged == [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "whole").evaluations()]


def test_adaptive_limits_stop_slow_candidates_and_inspect_reports_them(small, data, tmp_path, fake_world):  # noqa: F811
    """Candidates whose cost is far above the successful ones' are stopped below the hard cap;
    each such record says which limit stopped it, and inspect adds them up."""
    from ggp_automl.results.report import summarise

    def is_slow(phenotype: str) -> bool:  # one in seven, and mediocre
        return zlib.crc32(phenotype.encode()) % 7 == 0

    config = RunConfig(method="random", batch_size=20, max_generations=4, budget_seconds=3600, seed=1)
    fake_world.engine_kwargs = {"workers": 2, "cost": lambda p: 50.0 if is_slow(p) else 0.5,
                                "fitness": lambda p: 0.1 if is_slow(p) else 0.2 + fake_fitness("", p) / 2}
    outcome = start(config, small, data, tmp_path / "run", argv=[])
    records = RunDirectory(tmp_path / "run").evaluations()
    capped = [r for r in records if r.get("capped")]
    assert capped, "some slow candidates should have been stopped by the adaptive limit"
    hard = outcome.final["limits"]["hard_cap"]
    assert hard == 360.0
    assert all(r["status"] == "timeout" and r["limit"] < hard for r in capped)
    timed_out = [r for r in records if r["status"] == "timeout"]
    assert all(r["limit"] in (hard, *(c["limit"] for c in capped)) for r in timed_out)
    summary = summarise(tmp_path / "run")
    assert summary["limits"]["capped"] == len(capped) == outcome.final["limits"]["capped"]
    assert summary["limits"]["saved_seconds"] == pytest.approx(sum(hard - r["limit"] for r in capped))
    assert outcome.final["work"]["useful_work"] < 1.0


def _slow_rakel(phenotype: str) -> float:
    return 60.0 if "RAkEL" in phenotype.split() else 0.5


@pytest.mark.parametrize("mode", ["async", "generational"])
def test_candidates_that_would_time_out_are_skipped_and_resume_replays_it(small, data, tmp_path, fake_world,  # noqa: F811
                                                                          mode):
    """Every RAkEL candidate takes 60 s: once RAkEL has run past the adaptive limit often enough,
    RAkEL candidates are logged as skipped without using a worker; a killed and resumed run makes
    the same decisions (the probes and the screen replay)."""
    config = RunConfig(method="random", batch_size=20, max_generations=6, budget_seconds=3600, seed=3, mode=mode)
    fake_world.engine_kwargs = {"workers": 2, "cost": _slow_rakel, "fitness": lambda p: 0.1 if "RAkEL" in p else 0.5}
    start(config, small, data, tmp_path / "whole", argv=[])
    ran = set(fake_world.engines[-1].calls)
    records = RunDirectory(tmp_path / "whole").evaluations()
    skipped = [r for r in records if r["status"] == "skipped"]
    assert skipped and all("RAkEL" in r["phenotype"].split() and "RAkEL" in r["reason"] for r in skipped)
    assert not {(r["split"], r["phenotype"]) for r in skipped} & ran  # a skipped candidate never ran
    assert all(r["wall_time"] == 0.0 for r in skipped)
    fake_world.engine_kwargs = {**fake_world.engine_kwargs, "kill_after": 50}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "killed", argv=[])
    fake_world.engine_kwargs.pop("kill_after")
    resume(tmp_path / "killed")
    again = RunDirectory(tmp_path / "killed").evaluations()
    assert [(r["phenotype"], r["status"]) for r in again] == [(r["phenotype"], r["status"]) for r in records]

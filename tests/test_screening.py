"""Screening: rung sizes, the promotion rules (ASHA and successive halving), and that a search
only ever compares fitness values measured at the same fidelity."""
from __future__ import annotations

import numpy as np
import pytest

from .conftest import run_config
from ggp_automl.evaluation.candidate import Split
from ggp_automl.search.run import search
from ggp_automl.search import RunConfig
from ggp_automl.search.individual import Individual
from ggp_automl.search.methods.base import best_of, tournament
from ggp_automl.search.screening import Promotions, Screening, subsample, survivors

from .test_search import FakeEngine, _loop, data, fake_fitness, small  # noqa: F401 - fixtures


def _ind(name: str, fitness: float | None = None, level: int = 0) -> Individual:
    from ggp_automl.gp.tree import Leaf, Node

    return Individual(Node("x", 0, (Leaf(name),)), fitness=fitness, level=level)


def test_rungs_drop_subsamples_too_small_to_say_anything():
    s = Screening(eta=3, rungs=3, min_rows=100)
    assert s.fractions(2000) == [1 / 9, 1 / 3, 1.0]
    assert s.fractions(500) == [1 / 3, 1.0]  # 500/9 = 55 rows is below 100
    assert s.fractions(120) == [1.0]  # screening switches itself off on small data


def test_a_subsample_is_stratified_and_keeps_the_validation_rows():
    rng = np.random.default_rng(0)
    Y = (rng.random((900, 4)) < [0.5, 0.2, 0.1, 0.05]).astype(int)
    X = rng.normal(size=(900, 3))
    split = Split(X, Y, X[:50], Y[:50])
    sub = subsample(split, 1 / 3, seed=1)
    assert len(sub.Y_learn) == pytest.approx(300, abs=3) and sub.X_valid is split.X_valid
    assert np.allclose(sub.Y_learn.mean(axis=0), Y.mean(axis=0), atol=0.02)
    assert np.array_equal(subsample(split, 1 / 3, seed=1).Y_learn, sub.Y_learn)  # same seed, same rows


def test_successive_halving_keeps_the_top_third_that_worked():
    results = [(0, True, 0.5), (1, False, 0.0), (2, True, 0.9), (3, True, 0.7), (4, True, 0.1), (5, True, 0.6)]
    assert survivors(results, eta=3) == [2, 3]
    assert survivors([(0, False, 0.0), (1, True, 0.2)], eta=3) == [1]


def test_asha_promotes_the_top_of_a_rung_once():
    p = Promotions(n_rungs=2, eta=3)
    a, b, c, d = (_ind(x) for x in "abcd")
    p.record(0, a, 0.5, True)
    p.record(0, b, 0.9, True)
    assert p.next() is None  # 2 results: the top floor(2/3) = 0
    p.record(0, c, 0.1, True)
    assert p.next() == (b, 1)  # 3 results: the best one goes up ...
    assert p.next() is None  # ... once
    p.record(0, d, 0.0, False)
    p.record(0, _ind("e"), 0.2, True)
    p.record(0, _ind("f"), 0.3, True)
    assert p.next() == (a, 1)  # 6 results: the top 2 are b (promoted) and a
    p.record(1, b, 0.95, True)  # results of the top rung are not kept
    assert p.counts() == [6, 0]


def test_levels_are_compared_before_fitness_values():
    promoted, screened_out = _ind("p", 0.3, level=0), _ind("s", 0.99, level=-1)
    assert best_of([screened_out, promoted]) is promoted
    rng = np.random.default_rng(0)
    wins = [tournament([screened_out, promoted], 2, rng) for _ in range(200)]
    # the screened-out one wins only when drawn twice (1/4 of tournaments)
    assert 0.15 < sum(w is screened_out for w in wins) / 200 < 0.35


def _screening_config(mode: str, **kw) -> RunConfig:
    return run_config(method="ggp", population=12, max_generations=4, budget_seconds=3600, mode=mode,
                     screening=True, screening_min_rows=20, resample_every=0, **kw)


@pytest.mark.parametrize("mode", ["generational", "async"])
def test_screening_runs_new_candidates_on_the_small_rung_first(small, data, mode, monkeypatch):  # noqa: F811
    monkeypatch.setattr("ggp_automl.search.loop.DIRECT_SECONDS", 0.0)   # no candidate is cheap enough to skip it
    engine = FakeEngine(workers=2)
    loop = _loop(_screening_config(mode), small, data, engine)
    search(loop)
    rung0 = [p for k, p in engine.calls if k.endswith("|r0")]
    full = [p for k, p in engine.calls if "|r" not in k]
    assert rung0 and full
    assert set(full) <= set(rung0)  # nothing reaches full fidelity without passing the screen
    assert len(full) <= len(rung0) / 3 + 12  # about a third is promoted (plus elites on the full rung)


def test_a_candidate_predicted_cheap_starts_on_the_full_view(small, data, monkeypatch):  # noqa: F811
    """Asynchronous search: the cost model's cheap candidates skip the screening rungs (issue 25), the
    others start on the smallest one."""
    from ggp_automl.search import loop as loop_module
    predicted = {}

    def choose(model, phenotype, shapes, limit, names):
        cheap = len(phenotype) % 2 == 0            # a stand-in for the cost model's verdict
        predicted[phenotype] = cheap
        return len(shapes) - 1 if cheap else 0
    monkeypatch.setattr(loop_module, "choose_rung", choose)
    engine = FakeEngine(workers=2)
    loop = _loop(_screening_config("async"), small, data, engine)
    search(loop)
    rung0 = {p for k, p in engine.calls if k.endswith("|r0")}
    full = {p for k, p in engine.calls if "|r" not in k}
    assert any(predicted.values()) and not all(predicted.values())
    assert {p for p, cheap in predicted.items() if cheap} <= full
    assert not {p for p, cheap in predicted.items() if cheap} & rung0
    assert {p for p, cheap in predicted.items() if not cheap} <= rung0


def test_an_async_method_is_told_only_full_fidelity_results(small, data):  # noqa: F811
    engine = FakeEngine(workers=2)
    loop = _loop(_screening_config("async"), small, data, engine)
    told = []
    method = loop.state.method
    original = method.tell_one
    method.tell_one = lambda ind: (told.append(ind), original(ind))
    search(loop)
    full_keys = {k for k, _ in engine.calls if "|r" not in k}
    assert told and all(i.level == 0 for i in told)
    assert all(i.score == fake_fitness(next(iter(full_keys)), i.phenotype) for i in told)


def test_a_generation_ranks_screened_out_candidates_below_promoted_ones(small, data):  # noqa: F811
    engine = FakeEngine(workers=1)
    loop = _loop(_screening_config("generational").replace(max_generations=1), small, data, engine)
    told = []
    method = loop.state.method
    original = method.tell
    method.tell = lambda batch: (told.extend(batch), original(batch))
    search(loop)
    full = [i for i in told if i.level == 0]
    screened = [i for i in told if i.level < 0]
    assert len(full) == 4 and len(screened) == 8  # ceil(12 / 3) promoted
    assert min(i.rank for i in full) > max(i.rank for i in screened)
    assert loop.history[0]["best_fitness"] == max(i.score for i in full)


@pytest.mark.parametrize("mode", ["generational", "async"])
def test_screening_composes_with_a_multi_fidelity_schedule(small, data, mode):  # noqa: F811
    """PAS-PIS narrows the view by period; the rungs subsample whichever view the period gives, and
    a rung's key names its view, so the cache and the promotions never mix periods."""
    config = _screening_config(mode, fidelity="PAS-PIS").replace(max_generations=None, budget_seconds=3600)
    engine = FakeEngine(workers=2)
    loop = _loop(config, small, data, engine)
    periods = iter([0.0] * 30 + [700.0] * 10_000)  # the first generations in period 1, the rest in period 2
    loop.now = lambda: next(periods)
    loop.config = loop.config.replace(max_generations=6)
    search(loop)
    views = {k.split("|")[0] for k, _ in engine.calls}
    assert any(":1of5" in v for v in views) and any(":2of5" in v for v in views)
    for k, p in engine.calls:
        if "|r" in k:  # every rung-0 key belongs to a view that was searched
            assert k.split("|")[0] in views


def test_the_run_says_whether_screening_ran_on_its_data(small, data):  # noqa: F811
    """On by default, screening switches itself off on small data; final.json and inspect say which."""
    from ggp_automl.results.report import _screening

    loop = _loop(_screening_config("async"), small, data, FakeEngine(workers=2))
    search(loop)
    summary = loop.screening_summary()
    assert summary["active"] and summary["fractions"][-1] == 1.0 and len(summary["fractions"]) == 2
    line = _screening([{"phase": "search", "level": -1}, {"phase": "search", "level": 0}], {"screening": summary})
    assert line.startswith("rungs at 33 %, 100 %") and "1 screened fits, 1 at full fidelity" in line

    loop = _loop(_screening_config("async").replace(screening_min_rows=10_000), small, data, FakeEngine(workers=2))
    search(loop)
    summary = loop.screening_summary()
    assert summary["active"] is False
    assert _screening([], {"screening": summary}).startswith("off for this data (1/3 of ")
    assert _loop(_screening_config("async").replace(screening=False), small, data,
                 FakeEngine(workers=2)).screening_summary() is None

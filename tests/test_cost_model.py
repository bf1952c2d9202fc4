"""The cost model (issue 25, item 6): features read off a tree, online learning with censored time-outs,
candidates predicted far above their limit not started, every record's prediction, inspect's accuracy
line, and the same run from the same seed. No assertion on real time: the fake engine's costs."""
from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest

from ggp_automl.gp.tree import Leaf, Node
from ggp_automl.search import RunConfig, resume, start
from ggp_automl.search import cost_model as cm
from ggp_automl.search import runtime
from ggp_automl.search.cost_model import CostModel, Shape, accuracy, choose_rung, features, order_by_cost
from ggp_automl.search.rundir import RunDirectory

from .test_search import Killed, data, fake_world, small  # noqa: F401 - fixtures

SHAPE = Shape(rows=500, features=50, targets=5)


def _tree() -> Node:
    """Bagging of 30 RandomForests with 100 trees: the shape of an ensembles.bnf tree."""
    forest = Node("RF", 0, (Leaf("RandomForest"), Node("nt", 0, (Leaf(100),)), Node("md", 0, (Leaf(0.5),))))
    return Node("Start", 0, (Node("BA", 0, (Leaf("Bagging"), Node("ni", 0, (Leaf(30),)),
                                            Node("opt", 0, (Leaf("coob"),)), forest)),))


# -- features ----------------------------------------------------------------------------------------
def test_features_count_algorithms_and_read_hyper_parameters_off_the_tree():
    x = features(_tree(), Shape(rows=1000, features=20, targets=3, fits=5))  # the registry names the algorithms
    assert x["alg:Bagging"] == x["alg:RandomForest"] == 1.0
    assert x["hp:Bagging#0"] == pytest.approx(math.log1p(30))
    assert x["opt:Bagging=coob"] == 1.0
    assert x["hp:RandomForest#0"] == pytest.approx(math.log1p(100))  # numbers belong to the last algorithm named
    assert x["hp:RandomForest#1"] == pytest.approx(math.log1p(0.5))
    assert x["rows"] == pytest.approx(math.log(1000 / cm.REF_ROWS))
    assert x["alg:RandomForest*rows"] == pytest.approx(x["rows"])
    assert x["alg:RandomForest*targets"] == pytest.approx(math.log(3 / cm.REF_TARGETS))
    assert x["fits"] == pytest.approx(math.log(5))
    # the tree's leaves are its phenotype's tokens: a logged record gives the very same features
    assert features(_tree().phenotype, Shape(1000, 20, 3, 5)) == x
    # twice the same algorithm counts twice; grammar-agnostic: any names may be the algorithms
    y = features("A 3 B A 7 x", SHAPE, algorithms={"A", "B"})
    assert y["alg:A"] == 2.0 and y["alg:B"] == 1.0
    assert y["hp:A#0"] == pytest.approx(math.log1p(3) + math.log1p(7)) and y["opt:A=x"] == 1.0
    assert cm.owner_of("hp:A#0") == cm.owner_of("alg:A*rows") == "A" and cm.owner_of("rows") is None


def _synthetic(rng: np.random.Generator, n: int):
    """Candidates ``ALG k`` on views of 50-2000 rows: time = base(ALG) × k/100 × rows/500 × noise."""
    base = {"A": 0.1, "B": 1.0, "C": 5.0, "D": 0.3}
    out = []
    for _ in range(n):
        alg = str(rng.choice(sorted(base)))
        k, rows = int(rng.integers(10, 500)), int(rng.integers(50, 2000))
        out.append((f"{alg} {k}", Shape(rows, 20, 4), base[alg] * k / 100 * rows / 500 * math.exp(rng.normal(0, 0.2))))
    return out


def _error(model: CostModel, cases) -> float:
    return float(np.median([abs(math.log(model.predict_seconds(features(p, s, "ABCD"))) - math.log(t))
                            for p, s, t in cases]))


def test_online_learning_reduces_the_error_on_a_synthetic_cost():
    rng = np.random.default_rng(0)
    held_out = _synthetic(rng, 200)
    model = CostModel()
    before = _error(model, held_out)
    for p, s, t in _synthetic(rng, 150):
        model.observe(features(p, s, "ABCD"), "ok", t, None)
    after = _error(model, held_out)
    assert after < before / 3 and after < 0.3  # within a factor 1.35 on the median candidate


def test_censored_time_outs_push_predictions_up():
    rng = np.random.default_rng(1)
    fast = [(f"A {int(rng.integers(10, 100))}", SHAPE, 0.5) for _ in range(40)]
    slow = [f"C {int(rng.integers(10, 100))}" for _ in range(8)]
    ignored, censored = CostModel(), CostModel()
    for model in (ignored, censored):
        for p, s, t in fast:
            model.observe(features(p, s, "AC"), "ok", t, None)
    for p in slow:  # every C ran past its 10 s limit
        censored.observe(features(p, SHAPE, "AC"), "timeout", 10.0, 10.0)
        ignored.observe(features(p, SHAPE, "AC"), "error", 0.1, 10.0)  # an error says nothing about time
    x = features("C 50", SHAPE, "AC")
    assert ignored.evidence == 40 and censored.evidence == 48
    assert censored.predict_seconds(x) > 10.0 > ignored.predict_seconds(x)
    # more time-outs at a higher limit push further up
    for p in slow:
        censored.observe(features(p, SHAPE, "AC"), "timeout", 100.0, 100.0)
    assert censored.predict_seconds(x) > 100.0


def test_a_checkpointed_model_is_the_same_model():
    """The checkpoint keeps the observations, not the d×d sums: rebuilt in the same order, bit for bit."""
    import pickle

    model = CostModel()
    x = features("C 300", SHAPE, "ABCD")
    for p, s, t in _synthetic(np.random.default_rng(3), 120):
        model.observe(features(p, s, "ABCD"), "timeout" if t > 3 else "ok", min(t, 3.0), 3.0)
    fitted = model.predict_log(x)
    # two more since the fit at 120 observations: fewer than REFIT_SHARE of them, the fit stays
    model.observe(features("C 400", SHAPE, "ABCD"), "timeout", 3.0, 3.0)
    model.observe(features("E 4", SHAPE, "ABCDE"), "ok", 1.0, 3.0)  # a feature the fit has not met
    assert model.predict_log(x) == fitted and model.predict_seconds(features("E 9", SHAPE, "ABCDE")) > 0
    again = pickle.loads(pickle.dumps(model))
    assert np.array_equal(again.xtx, model.xtx) and np.array_equal(again.xty, model.xty) and again.yy == model.yy
    assert again.predict_log(x) == model.predict_log(x) == fitted and again.evidence == model.evidence == 122
    assert "xtx" not in model.__getstate__()
    for i in range(10):  # then both refit at the same observation
        for m in (model, again):
            m.observe(features(f"B {i + 5}", SHAPE, "ABCD"), "ok", 0.7, 3.0)
        assert again.predict_log(x) == model.predict_log(x)
    assert model.predict_log(x) != fitted


def test_the_prior_is_shipped_and_fitted_weights_move_from_it():
    prior = json.loads(cm.PRIOR_FILE.read_text())
    assert prior["weights"] and prior["sigma"] > 0
    model = CostModel.from_prior()
    assert model.prior_weights == {k: float(v) for k, v in prior["weights"].items()}
    assert CostModel.from_prior(cm.PRIOR_FILE.with_name("missing.json")).prior_weights == {}


def test_no_verdict_before_enough_evidence_then_only_far_above_the_limit():
    model = CostModel()
    slow, fast = features("C 50", SHAPE, "AC"), features("A 50", SHAPE, "AC")
    for i in range(cm.MIN_EVIDENCE - 1):
        model.observe(slow if i % 3 == 0 else fast, "ok", 60.0 if i % 3 == 0 else 0.5, None)
    assert model.verdict(slow, 5.0) is None  # not enough evidence yet
    model.observe(fast, "ok", 0.5, None)
    reason = model.verdict(slow, 5.0)
    assert reason.startswith("skipped: the cost model predicts") and "mostly C" in reason and model.skipped == 1
    assert model.verdict(fast, 5.0) is None and model.verdict(slow, 500.0) is None


def test_the_verdict_is_at_the_predicted_median_whatever_the_spread():
    """Skipped when more likely than not to be stopped (the median above the limit), started below it,
    however uncertain the prediction: an uncertain candidate above its limit would still hold a worker
    for about the whole limit."""
    model = CostModel()
    slow, fast = features("C 50", SHAPE, "AC"), features("A 50", SHAPE, "AC")
    for i in range(cm.MIN_EVIDENCE):
        model.observe(slow if i % 3 == 0 else fast, "ok", 8.0 if i % 3 == 0 else 0.5, None)
    median, spread = model.predict_seconds(slow), model.predict_log(slow)[1]
    assert spread > 0.25  # not a confident prediction
    assert model.verdict(slow, 1.1 * median) is None
    reason = model.verdict(slow, 0.9 * median)
    assert reason is not None and "spread of" in reason and "mostly C" in reason


def test_ordering_and_rung_helpers():
    model = CostModel()
    for p, s, t in _synthetic(np.random.default_rng(2), 150):
        model.observe(features(p, s, "ABCD"), "ok", t, None)
    assert order_by_cost(model, ["C 400", "A 20", "B 100"], SHAPE, "ABCD") == [1, 2, 0]
    rungs = [Shape(100, 20, 4), Shape(300, 20, 4), Shape(900, 20, 4)]
    assert choose_rung(model, "A 20", rungs, 10.0, "ABCD") == 2     # cheap everywhere: the full rung
    assert choose_rung(model, "C 400", rungs, 2.0, "ABCD") == 0      # too slow everywhere: the cheapest
    assert choose_rung(model, "B 100", rungs, 1.0, "ABCD") == 1      # about 0.2, 0.6 and 1.8 s


def test_accuracy_of_the_predictions():
    records = [{"status": "ok", "predicted": p, "wall_time": t} for p, t in [(1, 2), (2, 4), (3, 6), (4, 7)]]
    records += [{"status": "timeout", "predicted": 9.0, "wall_time": 1.0}, {"status": "ok", "predicted": None},
                {"status": "skipped", "reason": "skipped: the cost model predicts 99 s", "predicted": 99.0}]
    acc = accuracy(records)
    assert acc["n"] == 4 and acc["spearman"] == pytest.approx(1.0) and acc["skipped"] == 1
    assert acc["median_ratio"] == pytest.approx(0.5)
    assert accuracy([{"status": "ok", "wall_time": 1.0}]) is None
    assert cm.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)


# -- in a run (the fake engine's costs) ----------------------------------------------------------------
def _slow_rakel(phenotype: str) -> float:
    return 200.0 if "RAkEL" in phenotype.split() else 0.5


@pytest.fixture
def no_screen(monkeypatch):
    """The runtime screen never skips: what is skipped is the cost model's doing."""
    monkeypatch.setattr(runtime, "MIN_EVIDENCE", 10 ** 6)


@pytest.fixture
def world(small, data, fake_world, no_screen):  # noqa: F811
    """start() with the fake engine: every RAkEL candidate takes 200 s, every other 0.5 s."""
    fake_world.engine_kwargs = {"workers": 1, "cost": _slow_rakel, "fitness": lambda p: 0.1 if "RAkEL" in p else 0.5}
    return fake_world, small, data


def _run(tmp_path, name, world, mode="async", **config):
    fake, grammar, data = world  # noqa: F811
    cfg = RunConfig(method="random", batch_size=20, max_generations=6, budget_seconds=3600, seed=3, mode=mode,
                    **config)
    start(cfg, grammar, data, tmp_path / name, argv=[])
    return RunDirectory(tmp_path / name).evaluations(), set(fake.engines[-1].calls)


@pytest.mark.parametrize("mode", ["async", "generational"])
def test_a_candidate_predicted_far_above_its_limit_is_not_started(tmp_path, world, mode):
    records, ran = _run(tmp_path, "run", world, mode=mode)
    skipped = [r for r in records if r["status"] == "skipped"]
    assert skipped, "RAkEL candidates should have been predicted too slow"
    assert all(r["reason"].startswith("skipped: the cost model predicts") for r in skipped)
    assert all("RAkEL" in r["phenotype"].split() and "mostly RAkEL" in r["reason"] for r in skipped)
    assert not {(r["split"], r["phenotype"]) for r in skipped} & ran  # a skipped candidate never ran
    assert all(r["wall_time"] == 0.0 and r["predicted"] > r["limit"] for r in skipped)
    # every record carries the prediction made before the model learnt from it, and the view's shape
    assert all("predicted" in r for r in records)
    assert all(r["predicted"] > 0 and len(r["shape"]) == 4 for r in records if r["status"] == "ok")


def test_no_cost_model_verdict_without_adaptive_limits(tmp_path, world):
    records, _ = _run(tmp_path, "run", world, adaptive_timeout=False)
    assert not [r for r in records if r["status"] == "skipped"]
    assert all(r["predicted"] is not None for r in records if r["phase"] == "search")


def test_inspect_shows_the_cost_models_accuracy(tmp_path, world):
    from rich.console import Console

    from ggp_automl.results.render import render_inspect
    from ggp_automl.results.report import summarise

    _run(tmp_path, "run", world)
    acc = summarise(tmp_path / "run")["cost_model"]
    assert acc["n"] > 10 and acc["skipped"] > 0 and acc["median_ratio"] > 0
    out = io.StringIO()
    render_inspect(tmp_path / "run", Console(file=out, width=200))
    line = next(ln for ln in out.getvalue().splitlines() if "cost model (predicted vs actual time)" in ln)
    assert "Spearman" in line and "median predicted/actual" in line and f"over {acc['n']} ok evaluations" in line


def test_same_seed_same_evaluations_with_one_worker(tmp_path, world):
    first, _ = _run(tmp_path, "a", world)
    second, _ = _run(tmp_path, "b", world)
    keys = ("split", "phenotype", "status", "limit", "predicted", "reason")
    assert [tuple(r.get(k) for k in keys) for r in first] == [tuple(r.get(k) for k in keys) for r in second]
    assert any(r["status"] == "skipped" for r in first)


@pytest.mark.parametrize("mode", ["async", "generational"])
def test_a_killed_and_resumed_run_makes_the_same_decisions(tmp_path, world, mode):
    """The model is in the checkpoint (its observations) and the records logged after it are observed
    again in their order: the resumed run skips and runs what the uninterrupted one did."""
    whole, _ = _run(tmp_path, "whole", world, mode=mode)
    fake = world[0]
    fake.engine_kwargs = {**fake.engine_kwargs, "kill_after": 60}
    with pytest.raises(Killed):
        _run(tmp_path, "killed", world, mode=mode)
    fake.engine_kwargs.pop("kill_after")
    resume(tmp_path / "killed")
    again = RunDirectory(tmp_path / "killed").evaluations()
    keys = ("phenotype", "status", "limit", "predicted")
    assert [tuple(r.get(k) for k in keys) for r in again] == [tuple(r.get(k) for k in keys) for r in whole]
    assert any(r["status"] == "skipped" for r in whole)

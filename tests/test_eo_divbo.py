"""Ensemble optimisation (``--method eo``) and DivBO (``--method divbo``).

The machinery is tested with a scoring fake engine (validation scores from a hash of the phenotype,
so the runs are fast and deterministic): EO's slots, refill and labels, DivBO's weight schedule and
diversity, determinism with one worker and resume after a kill for both; then one real run of each
through the CLI, on both tasks.
"""
from __future__ import annotations

import json
import subprocess
import sys
import zlib

import numpy as np
import pytest

from ggp_automl.evaluation.ensemble_losses import diversity
from ggp_automl.evaluation.predictions import PredictionStore
from ggp_automl.search import RunConfig, make_method, resume, start
from ggp_automl.search.methods.divbo import DivBO
from ggp_automl.search.rundir import RunDirectory

from .conftest import ROOT
from .test_search import FakeEngine, Killed, data, fake_world, small  # noqa: F401


def _scores(phenotype: str, Y: np.ndarray) -> np.ndarray:
    """Deterministic pseudo scores of a phenotype on targets ``Y``: right with a phenotype's own accuracy."""
    rng = np.random.default_rng(zlib.crc32(phenotype.encode()))
    skill = rng.uniform(0.3, 0.9)
    if Y.ndim == 2:
        right = rng.random(Y.shape) < skill
        return np.where(right, Y, 1 - Y) * rng.uniform(0.5, 1.0, Y.shape) + rng.uniform(0, 0.3, Y.shape) * (1 - Y)
    k = int(Y.max()) + 1
    p = rng.dirichlet(np.ones(k), size=len(Y))
    right = rng.random(len(Y)) < skill
    p[right, Y[right]] += 1.0
    return p / p.sum(axis=1, keepdims=True)


class ScoringEngine(FakeEngine):
    """The fake engine, with validation scores when the split keeps them."""

    def submit(self, tree, grammar, split, *, split_key, fitness="fitness", random_state=0, deadline=None,
               timeout=None):
        handle = super().submit(tree, grammar, split, split_key=split_key, fitness=fitness,
                                random_state=random_state, deadline=deadline, timeout=timeout)
        self._splits = {**getattr(self, "_splits", {}), handle: split}
        return handle

    def wait(self, handles, timeout=None):
        out = []
        for h, r in super().wait(handles, timeout):
            split = self._splits.pop(h)
            if r is not None and r.ok and split.keep_scores:
                from dataclasses import replace

                r = replace(r, scores=_scores(r.phenotype, split.scored_targets).astype(np.float32))
            out.append((h, r))
        return out


@pytest.fixture
def scoring_world(fake_world, monkeypatch):  # noqa: F811
    """The fake world with the scoring engine, and refits that fit a cheap real model (so that an
    ensemble of them can be built)."""
    from sklearn.tree import DecisionTreeClassifier

    from ggp_automl.evaluation.final import FinalFit
    from ggp_automl.spaces.mlc.transform import BR
    from ggp_automl.spaces.model import MultiLabelModel, SingleLabelModel

    def engine_factory(workers, limits, scheduler=None, plugins=()):
        fake_world.engines.append(ScoringEngine(limits=limits, **fake_world.engine_kwargs))
        return fake_world.engines[-1]

    def cheap_fit(tree, grammar, X, Y, categorical_features=(), X_test=None, Y_test=None, limits=None, task=None,
                  random_state=0):
        tree_model = DecisionTreeClassifier(max_depth=1 + zlib.crc32(tree.phenotype.encode()) % 3, random_state=0)
        model = MultiLabelModel(BR(tree_model)) if np.ndim(Y) == 2 else SingleLabelModel(tree_model)
        return FinalFit("ok", model=model.fit(X, Y), test_measures={}, fit_time=0.0, wall_time=0.0)

    monkeypatch.setattr("ggp_automl.search.run.make_engine", engine_factory)
    monkeypatch.setattr("ggp_automl.search.finish.fit_final", cheap_fit)
    monkeypatch.setattr("ggp_automl.search.ensemble.fit_final", cheap_fit)
    return fake_world


def _config(method, **kw):
    params = {"eo": {"slots": 5, "initial": 4, "challengers": 60, "population": 6},
              "divbo": {"initial": 4, "challengers": 60, "population": 6, "diversity_models": 2, "pair_cap": 200,
                        "ensemble_size": 8}}
    return RunConfig(method=method, method_params=params[method], max_generations=4, budget_seconds=3600, seed=4,
                     screening=False, **kw)


# -- EO -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method", ["eo", pytest.param("divbo", marks=pytest.mark.slow)])  # divbo: 16 s
@pytest.mark.parametrize("mode", ["generational", pytest.param("async", marks=pytest.mark.slow)])
def test_same_seed_same_search(small, data, tmp_path, scoring_world, method, mode):  # noqa: F811
    runs = []
    for k in range(2):
        start(_config(method, mode=mode), small, data, tmp_path / f"run{k}", argv=[])
        runs.append(scoring_world.engines[-1].calls)
    assert runs[0] == runs[1] and len(set(runs[0])) > 12
    start(_config(method, mode=mode).replace(seed=5), small, data, tmp_path / "other", argv=[])
    assert scoring_world.engines[-1].calls != runs[0]


@pytest.mark.parametrize("method", ["eo", "divbo"])
def test_resume_after_a_kill_loses_and_repeats_nothing(small, data, tmp_path, scoring_world, method):  # noqa: F811
    config = _config(method, mode="async")
    scoring_world.engine_kwargs = {"kill_after": 17}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "run", argv=[])
    before = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    store = PredictionStore(path=tmp_path / "run" / "predictions.pkl").load()
    assert len(store) == len(before)  # every finished evaluation's scores are on disk
    scoring_world.engine_kwargs = {}
    resume(tmp_path / "run")
    after = [(r["split"], r["phenotype"]) for r in RunDirectory(tmp_path / "run").evaluations()]
    assert after[: len(before)] == before
    assert not set(scoring_world.engines[-1].calls) & set(before)  # nothing finished ran again
    final = json.loads((tmp_path / "run" / "final.json").read_text())
    assert final["method"] == method and final["counts"]["generations"] == 4


def test_eo_fills_its_slots_without_duplicates_and_labels_the_pool(small, data, tmp_path, scoring_world):  # noqa: F811
    outcome = start(_config("eo", mode="generational"), small, data, tmp_path / "run", argv=[])
    final = outcome.final
    report = final["method_report"]
    assert "5 of 5 slots filled" in report["title"]
    members = [row[0] for row in report["rows"]]
    assert len(members) == len(set(members)) == 5
    assert final["ensemble"]["returned"], final["ensemble"]
    assert final["ensemble"]["kind"] == "eo" and {m["phenotype"] for m in final["ensemble"]["members"]} == set(members)
    assert final["ensemble"]["voting"] == "hard" and final["ensemble"]["valid_fitness"] is not None


def _eo_with_pool(Y, pool: dict[str, np.ndarray], fitness: dict[str, float], slots=3):
    """An EO whose pool holds hand-made scores."""
    from ggp_automl.gp.bnf_parser import parse_grammar

    config = RunConfig(method="eo", method_params={"slots": slots}, fitness="accuracy")
    method = make_method(config, parse_grammar("<S> ::= a | b | c\n"), None)
    store = PredictionStore()
    store.set_targets("v", Y)
    for ph, scores in pool.items():
        store.put("v", ph, fitness[ph], scores)
        method.observations.append(({}, ph, fitness[ph]))
    method.use_predictions(store)
    return method


def test_eo_refill_breaks_0_1_ties_by_the_smooth_loss_then_by_fitness():
    y = np.array([0, 0, 0, 1, 1])
    onehot = np.eye(2)
    votes = {"A": [0, 0, 1, 1, 1], "B": [0, 1, 0, 1, 0], "C": [1, 0, 0, 0, 1], "D": [0, 0, 1, 1, 1]}
    pool = {ph: onehot[v] for ph, v in votes.items()}
    method = _eo_with_pool(y, pool, {"A": 0.8, "B": 0.6, "C": 0.6, "D": 0.8})
    method.slots = ["B", "C", None]
    method.refill(2)
    # with B and C, adding A or D (equal votes) fixes the vote on every row: 0-1 and smooth losses tie,
    # the fitness ties too, so the earlier evaluated A fills the slot; never a member already in it
    assert method.slots[2] == "A"
    method.slots = ["A", None, None]
    method.refill(1)
    assert method.slots[1] in ("B", "C", "D") and method.slots[1] != "A"
    values, labels = method.labels(1)
    assert len(labels) == 3  # A (in the ensemble) is left out of the labels
    assert np.all((0 <= labels) & (labels <= 1))


def test_eo_ensemble_measures_are_the_majority_vote():
    y = np.array([0, 1, 1, 0])
    onehot = np.eye(2)
    pool = {"A": onehot[[0, 1, 0, 0]], "B": onehot[[0, 1, 1, 1]], "C": onehot[[1, 1, 1, 0]]}
    method = _eo_with_pool(y, pool, {"A": 0.75, "B": 0.75, "C": 0.75})
    method.slots = ["A", "B", "C"]
    assert method.ensemble_measures()["error_rate"] == 0.0


# -- DivBO ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("t, w", [(1, 0.0025), (2, 0.0049), (3, 0.0073), (5, 0.0116), (10, 0.0190), (15, 0.0226),
                                  (20, 0.0241), (30, 0.0249), (50, 0.0250)])
def test_divbo_weight_schedule(t, w):
    method = DivBO(RunConfig(method="divbo"))
    assert method.weight(t) == pytest.approx(w, abs=6e-5)
    assert method.weight(t) < 0.05 / 2  # saturates at β/2, not β


def test_diversity_of_probabilities():
    a = np.array([[1.0, 0.0], [0.0, 1.0]])
    assert diversity(a, a, False) == 0.0
    assert diversity(a, a[::-1], False) == pytest.approx(1.0)
    s = np.array([[0.2, 0.9], [0.5, 0.5]])
    assert diversity(s, s, True) == 0.0
    assert diversity(s, 1 - s, True) == pytest.approx(np.mean(np.abs(s - (1 - s))))


def test_divbo_defaults_to_a_caruana_ensemble_and_eo_to_its_own():
    assert RunConfig(method="divbo").ensemble_spec == "caruana"
    assert RunConfig(method="divbo", ensemble="caruana:9").ensemble_spec == "caruana:9"
    assert RunConfig(method="eo").ensemble_spec is None
    assert RunConfig(method="divbo").archive_size == 50


# -- a real run ------------------------------------------------------------------------------------

@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_cli_eo_run_returns_its_majority_vote_ensemble(tmp_path):
    """EO's ensemble needs no final re-evaluation, so a short budget shows it (DivBO's real run, which ends
    with Caruana selection, is in test_ensemble_run.py)."""
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--method", "eo", "--grammar",
                        "grammars/small.bnf", "--budget", "2m", "--workers", "2", "--seed", "1", "--fold", "1",
                        "--population", "8", "--generations", "3", "--initial", "4", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    ensemble = json.loads((out / "final.json").read_text())["ensemble"]
    assert ensemble["kind"] == "eo" and ensemble["returned"], ensemble.get("reason")
    assert ensemble["voting"] == "hard" and len(ensemble["members"]) >= 2 and ensemble["test"]
    assert len({m["phenotype"] for m in ensemble["members"]}) == len(ensemble["members"])  # no duplicates
    from ggp_automl.spaces.model import load_model

    model = load_model(out / "best" / "model.joblib")
    assert model.voting == "hard" and len(model.members_) == len(ensemble["members"])

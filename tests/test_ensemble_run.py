"""`--ensemble caruana` end to end: a run returns an ensemble of what it evaluated, for both tasks.

The ensemble is the run's model — ``best/model.joblib`` reloads and predicts, ``best/model.py``
rebuilds it, ``inspect`` shows its members and its measures beside the single best's, and the
Python estimators return it — and the prediction store survives a resume.
"""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from sklearn.datasets import make_classification

from ggp_automl.evaluation.default_data import load_default
from ggp_automl.evaluation.predictions import FILE as PREDICTIONS_FILE
from ggp_automl.evaluation.predictions import PredictionStore
from ggp_automl.search.automl import GrammarAutoMLClassifier
from ggp_automl.spaces.ensemble import EnsembleModel
from ggp_automl.spaces.model import load_model
from .conftest import ROOT


def cli(*args: str, timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=timeout)


@pytest.mark.slow  # about a minute; selection itself is tests/test_ensemble_selection.py
def test_multilabel_run_returns_a_caruana_ensemble(tmp_path):
    # a few generations, then the final stage has the rest of the budget for the re-evaluated pool
    out = tmp_path / "run"
    r = cli("evolve", "--grammar", "grammars/small.bnf", "--method", "random", "--budget", "2m", "--workers", "2",
            "--population", "12", "--generations", "3", "--seed", "3", "--fold", "1", "--ensemble", "caruana:10",
            "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    final = json.loads((out / "final.json").read_text())
    ensemble = final["ensemble"]
    assert ensemble["kind"] == "caruana" and ensemble["size"] == 10
    assert ensemble["pool"] >= 2 and ensemble["predictions"]["kept"] >= ensemble["pool"]
    assert ensemble["returned"], ensemble.get("reason")
    members = ensemble["members"]
    assert len(members) >= 2 and sum(m["weight"] for m in members) == pytest.approx(1.0, abs=1e-5)
    assert sum(m["picks"] for m in members) <= 10
    assert ensemble["valid_fitness"] >= ensemble["single_best"]["valid_fitness"]
    assert set(ensemble["test"]) >= {"fitness", "exact_match", "hamming_loss"}
    assert ensemble["thresholds"]["strategy"] in ("PCut1", "PCutL") and len(ensemble["thresholds"]["values"]) == 6
    assert (out / PREDICTIONS_FILE).stat().st_size > 0

    model = load_model(out / "best" / "model.joblib")
    assert isinstance(model, EnsembleModel) and len(model.members_) == len(members)
    X, Y = load_default("multilabel")
    predictions = model.predict(X)
    assert predictions.shape == Y.shape and set(np.unique(predictions)) <= {0, 1}
    namespace: dict = {}
    exec(compile((out / "best" / "model.py").read_text(), "model.py", "exec"), namespace)
    rebuilt = namespace["model"]
    assert isinstance(rebuilt, EnsembleModel) and len(rebuilt.members) == len(members)
    rebuilt.fit(X[:200], Y[:200]).predict(X[200:])

    r = cli("inspect", str(out))
    assert r.returncode == 0, r.stderr
    assert "Ensemble (caruana" in r.stdout and "Ensemble vs single best" in r.stdout

    store = PredictionStore(path=out / PREDICTIONS_FILE).load()  # what a resumed run reads back
    assert len(store.phenotypes("final")) == ensemble["pool"]


@pytest.mark.slow  # DivBO end to end is in the fast suite through test_eo_divbo.py; this one adds the estimator
def test_singlelabel_divbo_estimator_returns_a_caruana_ensemble(tmp_path):
    """DivBO (a real run: LightGBM diversity surrogate, temporary pools) ends with Caruana selection."""
    X, y = make_classification(n_samples=240, n_features=8, n_informative=4, n_classes=3, random_state=1)
    labels = np.array(["x", "y", "z"])[y]
    clf = GrammarAutoMLClassifier(grammar=str(ROOT / "grammars" / "ensembles.bnf"), method="divbo",
                                  time_budget=120, n_jobs=2, cv=3, random_state=2, population=8, max_generations=3,
                                  method_params={"initial": 4}, output_dir=tmp_path / "run").fit(X[:180], labels[:180])
    ensemble = clf.final_["ensemble"]
    assert ensemble["kind"] == "caruana" and clf.final_["method"] == "divbo"
    assert clf.final_["method_report"]["title"].startswith("DivBO")
    assert ensemble["returned"], ensemble.get("reason")
    assert isinstance(clf.best_model_, EnsembleModel)
    assert ensemble["valid_fitness"] >= ensemble["single_best"]["valid_fitness"]
    proba = clf.predict_proba(X[180:])
    np.testing.assert_allclose(proba.sum(axis=1), 1.0)
    assert set(clf.predict(X[180:])) <= set(labels)
    assert clf.score(X[180:], labels[180:]) > 0.4
    r = cli("inspect", str(tmp_path / "run"))
    assert r.returncode == 0 and "Ensemble vs single best" in r.stdout and "error_rate" in r.stdout


def test_a_bad_ensemble_option_is_a_usage_error(tmp_path):
    r = cli("evolve", "--ensemble", "caruana:0", "--budget", "10s", "--out", str(tmp_path / "run"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and "whole number from 1" in r.stderr
    assert not (tmp_path / "run").exists()

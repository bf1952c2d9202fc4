"""The scikit-learn estimator: clone, fit, predict, score, and cross_val_score."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.model_selection import KFold, cross_val_score

from ggp_automl.evaluation.default_data import load_default
from ggp_automl import GrammarAutoML
from .conftest import GRAMMARS


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_grammar_automl_is_a_well_behaved_estimator(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # nothing may be written without output_dir
    X, Y = load_default()
    est = GrammarAutoML(grammar=GRAMMARS / "small.bnf", time_budget=8, population=4, n_jobs=2, random_state=3,
                        eval_timeout=10)
    assert clone(est).get_params() == est.get_params()
    scores = cross_val_score(est, X, Y, cv=KFold(2))
    assert scores.shape == (2,) and np.all((scores > 0) & (scores <= 1))
    assert list(tmp_path.iterdir()) == []

    fitted = clone(est).fit(X[:200], Y[:200])
    assert fitted.best_phenotype_ and fitted.history_ and 0 < fitted.best_validation_fitness_ <= 1
    P = fitted.predict(X[200:])
    S = fitted.predict_proba(X[200:])
    assert P.shape == S.shape == (100, Y.shape[1]) and set(np.unique(P)) <= {0, 1}
    assert 0 < fitted.score(X[200:], Y[200:]) <= 1


def test_output_dir_keeps_a_run_directory(tmp_path):
    X, Y = load_default()
    est = GrammarAutoML(grammar=GRAMMARS / "small.bnf", method="random", time_budget=10, population=3,
                        n_jobs=1, max_generations=1, output_dir=tmp_path / "run").fit(X, Y)
    assert est.run_dir_ == tmp_path / "run"
    assert (tmp_path / "run" / "final.json").exists() and (tmp_path / "run" / "best" / "model.joblib").exists()

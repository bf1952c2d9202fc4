"""Every run that evaluated a candidate successfully returns a model (issue 25).

The final re-evaluation keeps the model it fitted for its best candidate; when the winner cannot be
refit on all the rows within the budget (or every refit fails), that model is the run's, and
``final.json``, the command line and ``inspect`` say which rows it saw. The final stage's plan gives
the winner's refit its time whichever candidate wins the re-evaluation. No timing assertion here can
fail on a busy machine: refits are made to fail, clocks are set, plans are computed.
"""
from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from ggp_automl.evaluation.final import FinalFit
from ggp_automl.search import timekeeper as tk
from ggp_automl.search.finish import ALL_ROWS, LEARNING_ROWS
from ggp_automl.search.timekeeper import TimeKeeper

from .conftest import SHARED
from .test_search import FakeEngine

FLAGS = SHARED / "datasets" / "mlc-folds" / "Flags"


# -- the time-keeper's plan ----------------------------------------------------------------------

def test_a_runner_up_is_re_evaluated_only_if_its_own_refit_would_still_fit():
    keeper = TimeKeeper(100, eval_timeout=100, workers=2)
    # the best (10 s) alone: its re-evaluation ends at 62 s, its refit needs 15 s. The 20 s runner-up would
    # end at 74 s, and if it won, its refit would need 30 s: 104 s. It is not re-evaluated.
    chosen, end = keeper.final_plan([10.0, 20.0], now=50.0)
    assert chosen == [0] and end == pytest.approx(85.0)
    # with time enough for the slower one's refit too, both are, and the deadline leaves its refit's time
    chosen, end = keeper.final_plan([10.0, 20.0], now=40.0)
    assert chosen == [0, 1] and end == pytest.approx(70.0)


def test_the_best_alone_is_re_evaluated_when_only_its_re_evaluation_fits():
    keeper = TimeKeeper(100, eval_timeout=100, workers=1)
    # 14 s left: a refit (15 s) would not end, a re-evaluation (12 s) does; its model is the run's
    assert keeper.final_plan([10.0, 1.0], now=86.0) == ([0], 100.0)
    # 16 s left: the refit fits, and goes first (no re-evaluation: it would eat the refit's time)
    chosen, _ = keeper.final_plan([10.0, 1.0], now=84.0)
    assert chosen == []


def test_a_time_not_measured_is_planned_at_the_hard_cap():
    keeper = TimeKeeper(1000, eval_timeout=40, workers=1)
    assert keeper.refit_wall([None]) == 40.0  # it was 0: a 5 s refit reserve for a candidate of unknown time
    chosen, end = keeper.final_plan([None], now=800.0)  # 48 s to re-evaluate, 60 s to refit
    assert chosen == [0] and end == pytest.approx(1000 - tk.REFIT_FACTOR * 40)


def test_the_search_ends_early_enough_for_the_slowest_candidate_that_could_win():
    keeper = TimeKeeper(300, workers=2)
    keeper.observe_full(0.9, 10.0, keep=keeper.kept)
    keeper.observe_full(0.8, 30.0, keep=keeper.kept)
    need = tk.REEVAL_MARGIN * 30 + tk.REFIT_FACTOR * 30
    assert keeper.final_need() == pytest.approx(need)
    assert keeper.search_end() == pytest.approx(300 - need)
    # the plan made at that moment re-evaluates both, and leaves the slower one's refit its time
    chosen, end = keeper.final_plan([10.0, 30.0], now=keeper.search_end())
    assert chosen == [0, 1] and end == pytest.approx(300 - tk.REFIT_FACTOR * 30)


def test_a_refit_leaves_the_time_to_measure_the_model_the_run_already_has():
    keeper = TimeKeeper(100, eval_timeout=20)
    assert keeper.refit_timeout(10.0, 2.0, keep=3.0) == 7.0
    assert keeper.refit_timeout(10.0, 8.0, keep=3.0) is None  # 7 s would not do for a candidate that took 8 s
    assert keeper.test_reserve(2.0, 100, 0) == 0.0  # no test set: nothing to keep
    # 2 s to predict 100 rows: 400 test rows are planned at twice the 8 s, plus a process start
    assert keeper.test_reserve(2.0, 100, 400) == pytest.approx(tk.MIN_REFIT_SECONDS + 16.0)


# -- the kept model comes back from the isolated child ------------------------------------------

def test_an_evaluation_keeps_its_fitted_model_only_when_asked():
    from ggp_automl.evaluation.candidate import Split, _pickled, evaluate_candidate
    from ggp_automl.evaluation.default_data import META, load_default
    from ggp_automl.evaluation.isolation import Limits
    from ggp_automl.evaluation.splits import holdout_split
    from ggp_automl.gp.bnf_parser import load_grammar
    from ggp_automl.gp.phenotype import parse_phenotype

    from .conftest import GRAMMARS

    grammar = load_grammar(GRAMMARS / "small.bnf")
    X, Y = load_default()
    learn, valid = holdout_split(Y, np.random.default_rng(0))
    split = Split(X[learn], Y[learn], X[valid], Y[valid], keep_model=True)
    tree = parse_phenotype("BR NaiveBayes PCut1", grammar.bind(META))
    kept = evaluate_candidate(tree, grammar, split, Limits(timeout=60))
    plain = evaluate_candidate(tree, grammar, dataclasses.replace(split, keep_model=False), Limits(timeout=60))
    assert kept.ok and plain.ok and plain.model is None and plain.fitted_model() is None
    assert kept.fitness == plain.fitness  # keeping it changes nothing else
    model = kept.fitted_model()
    assert split.model_rows == len(learn) and model.predict(X).shape == Y.shape
    assert _pickled(lambda: 0) is None  # a model that cannot be pickled is not kept; its result still comes back


# -- finish() with a fake engine ----------------------------------------------------------------

class Fitted:
    """A stand-in fitted model (picklable: a module-level class)."""

    def __init__(self, phenotype: str):
        self.phenotype = phenotype

    def predict(self, X):
        return np.zeros((len(X), 6), dtype=int)


class KeepingEngine(FakeEngine):
    """The fake engine, returning a fitted model when the split asks to keep it, as the real one does."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._keep: dict[int, bool] = {}

    def submit(self, tree, grammar, split, **kwargs):
        handle = super().submit(tree, grammar, split, **kwargs)
        self._keep[handle] = split.keep_model
        return handle

    def wait(self, handles, timeout=None):
        out = []
        for handle, r in super().wait(handles, timeout):
            if self._keep.pop(handle, False) and r.ok:
                r = dataclasses.replace(r, model=pickle.dumps(Fitted(r.phenotype)))
            out.append((handle, r))
        return out


def searched(grammars, budget: float, left: float, **engine):
    """A random search with the keeping fake engine, its clock then set ``left`` seconds before the end."""
    from .test_timekeeper import searched_loop

    return searched_loop(grammars, budget, left, engine_class=KeepingEngine, **engine)[0]


@pytest.fixture
def failing_refits(monkeypatch):
    """Every refit fails (as a time-out would); the phenotypes whose refit was started."""
    started = []

    def fail(tree, grammar, X, Y, categorical_features=(), X_test=None, Y_test=None, limits=None, task=None,
             random_state=0):
        started.append(tree.phenotype)
        return FinalFit("timeout", wall_time=0.0, reason="killed after the time limit (forced by the test)")

    monkeypatch.setattr("ggp_automl.search.finish.fit_final", fail)
    return started


def test_when_no_refit_succeeds_the_re_evaluation_s_model_is_returned(grammars, failing_refits):
    from ggp_automl.search.finish import finish

    loop = searched(grammars, 600, 100.0)
    outcome = finish(loop)
    final = outcome.final
    assert failing_refits  # refits were tried, and all failed
    assert outcome.winner is not None and final["status"] == "finished"
    assert isinstance(outcome.model, Fitted) and outcome.model.phenotype == outcome.winner.phenotype
    assert final["winner"]["phenotype"] == outcome.winner.phenotype
    first = next(a for a in final["archive"] if a["status"] == "ok")  # the re-evaluation's best is returned
    assert first["phenotype"] == outcome.winner.phenotype
    n = len(loop.train.Y)
    assert final["model"] == {"fitted_on": LEARNING_ROWS, "rows": loop.kept_model.rows, "of": n, "refit": False,
                              "refit_failure": "timeout: killed after the time limit (forced by the test)"}
    assert 0 < final["model"]["rows"] < n
    assert final["refit_failure"].startswith("timeout")
    # the kept models are never cached (nor, with the cache, checkpointed), nor left on the pairs
    assert all(r.model is None for r in loop.state.cache._entries.values())


def test_a_refit_that_succeeds_says_it_saw_every_row(grammars, monkeypatch):
    from ggp_automl.search.finish import finish

    monkeypatch.setattr("ggp_automl.search.finish.fit_final",
                        lambda tree, *a, **k: FinalFit("ok", model=Fitted("refit " + tree.phenotype)))
    loop = searched(grammars, 600, 100.0)
    outcome = finish(loop)
    n = len(loop.train.Y)
    assert outcome.model.phenotype.startswith("refit ")
    assert outcome.final["model"] == {"fitted_on": ALL_ROWS, "rows": n, "of": n, "refit": True}


def test_no_time_for_any_refit_still_returns_the_re_evaluation_s_model(grammars, failing_refits, monkeypatch):
    from ggp_automl.search.finish import finish

    loop = searched(grammars, 600, 100.0)
    monkeypatch.setattr(loop.keeper, "refit_timeout", lambda *a, **k: None)  # as if the budget had run out
    outcome = finish(loop)
    assert failing_refits == []  # none started
    assert outcome.final["status"] == "finished" and isinstance(outcome.model, Fitted)
    assert outcome.final["model"]["refit"] is False
    assert "give a larger --budget" in outcome.final["model"]["refit_failure"]


def test_without_a_re_evaluated_model_a_failed_refit_leaves_no_model(grammars, failing_refits):
    """Nothing was fitted that could be returned: the one case left without a model, and it says why."""
    from ggp_automl.search.finish import finish

    # 1.15 s left: the re-evaluation (1.2 s) does not fit, a refit (1.0 s measured) may: it is started, and fails
    loop = searched(grammars, 600, 1.15, cost=lambda p: 1.0)
    outcome = finish(loop)
    assert failing_refits and outcome.winner is None and outcome.model is None
    assert outcome.final["status"] == "no candidate could be refit" and outcome.final["model"] is None


# -- end to end: a real run whose refit fails still returns a model that predicts ---------------

#: fast candidates only (naive Bayes under BR or CC): a real run of a few seconds
FAST_GRAMMAR = """\
<Start>         ::= <MLC-PT> <pred_tshd>
<MLC-PT>        ::= <ALGS-PT> <NaiveBayes>
<ALGS-PT>       ::= BR | CC
<NaiveBayes>    ::= NaiveBayes <NB-Parameters>
<NB-Parameters> ::= uke @ 1 | usd @ 1 | EMPTY @ 2                #@ type=cat default=EMPTY
<pred_tshd>     ::= PCut1 | PCutL                                #@ type=cat default=PCut1
"""


@pytest.mark.slow  # a real run, inspect and predict: about ten seconds
def test_a_real_run_whose_refit_fails_exits_0_with_a_model_that_predicts(tmp_path, failing_refits, capsys):
    import joblib

    from ggp_automl.cli import main
    from ggp_automl.results.report import summarise

    out, grammar = tmp_path / "run", tmp_path / "fast.bnf"
    grammar.write_text(FAST_GRAMMAR)
    data = (["--data", str(FLAGS / "Flags-train1.arff"), "--test", str(FLAGS / "Flags-test1.arff")]
            if FLAGS.exists() else ["--fold", "1"])
    code = main(["evolve", "--grammar", str(grammar), *data, "--population", "4", "--generations", "1",
                 "--budget", "2m", "--eval-timeout", "20s", "--workers", "1", "--seed", "5", "--quiet",
                 "--out", str(out)])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert failing_refits  # the refit was started, and failed
    final = json.loads((out / "final.json").read_text())
    assert final["status"] == "finished" and final["model"]["refit"] is False
    assert final["model"]["fitted_on"] == LEARNING_ROWS and 0 < final["model"]["rows"] < final["model"]["of"]
    assert "fitted on:" in printed.out and f"{final['model']['rows']} of {final['model']['of']}" in printed.out
    assert final["test"]["measures"]["fitness"] > 0  # measured on the test set like a refit model
    if not FLAGS.exists():  # the embedded data's held-out fold: the model predicts its rows
        from ggp_automl.evaluation.default_data import load_default

        X, _ = load_default()
        assert len(joblib.load(out / "best" / "model.joblib").predict(X)) == len(X)
    summary = summarise(out)
    assert summary["status"]["state"] == "finished" and summary["model"]["refit"] is False
    if FLAGS.exists():
        predictions = tmp_path / "p.csv"
        assert main(["predict", str(out), "--data", str(FLAGS / "Flags-test1.arff"), "--out", str(predictions)]) == 0
        assert len(predictions.read_text().splitlines()) == 1 + final["test"]["n_instances"]
    assert main(["inspect", str(out)]) == 0
    shown = " ".join(capsys.readouterr().out.split())  # rich wraps lines at the console's width
    assert f"returned model: fitted on {final['model']['rows']} of {final['model']['of']} training rows (learning " \
           "rows of the final re-evaluation); not refit on all rows" in shown

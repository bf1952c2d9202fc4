"""Nothing silently wrong (issue 24): inputs that were accepted and gave a wrong answer with exit 0.

Each case goes through a public entry point (``cli.main`` in this process, ``results.predict_run``, the
estimators) and fails on the code before issue 24:

* features by name wherever a model meets new data (``predict``, ``evolve --test``, the estimators and
  the models we ship): reordered columns give the same predictions, other names are refused naming the
  missing and the unexpected ones, text in a numeric column is refused at its line, nominal values are
  coded as in training whatever order a file lists them in;
* a run knows its own files: a checkpoint, an evaluation log or a prediction file of another run is
  refused by ``--resume`` (and ``inspect`` says so) naming the run it belongs to; ``predict`` refuses a
  model file whose checksum is not the one the run recorded;
* a plug-in that calls ``sys.exit`` while it is imported is an input error (exit 1) with a message.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import time
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ggp_automl import cli
from ggp_automl.results import predict_run

#: a single-label space of fast classifiers (the run itself is not what is tested)
GRAMMAR = "<S> ::= J48 | NaiveBayes | KNN\n"
PROPERTY = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow,
                                                                         HealthCheck.function_scoped_fixture])


@contextlib.contextmanager
def chdir(path: Path):
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def call(argv: list[str], cwd: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    text = out.getvalue() + err.getvalue()
    assert "Traceback" not in text and "internal error" not in text, text[-3000:]
    return code, out.getvalue(), err.getvalue()


def rows(n: int, seed: int) -> list[dict]:
    """A class that depends on a number and a colour (so that swapped columns or codes change predictions)."""
    rng = np.random.default_rng(seed)
    colours = ["red", "green", "blue"]
    out = []
    for _ in range(n):
        a, b, c = float(rng.normal()), float(rng.normal()), colours[int(rng.integers(3))]
        label = "yes" if (a > 0) != (c == "blue") else "no"
        out.append({"a": round(a, 4), "b": round(b, 4), "colour": c, "size": round(float(rng.uniform(1, 9)), 3),
                    "class": label})
    return out


def write_csv(path: Path, records: list[dict], columns: list[str], rename: dict | None = None) -> Path:
    rename = rename or {}
    lines = [",".join(rename.get(c, c) for c in columns)]
    lines += [",".join(str(r[c]) for c in columns) for r in records]
    path.write_text("\n".join(lines) + "\n")
    return path


COLUMNS = ["a", "b", "colour", "size", "class"]


def evolve(ws: Path, out: str, seed: int) -> None:
    code, _, err = call(["evolve", "--grammar", "g.bnf", "--data", "train.csv", "--target", "class", "--population",
                         "4", "--generations", "1", "--budget", "20s", "--workers", "1", "--seed", seed, "--cv", "0",
                         "--quiet", "--out", out], ws)
    assert code == 0, err


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """Two finished runs of different seeds on ``train.csv``, and ``unfinished``: run A as if killed after
    its first generation (no final.json, no best/ files)."""
    ws = tmp_path_factory.mktemp("silently-wrong")
    (ws / "g.bnf").write_text(GRAMMAR)
    write_csv(ws / "train.csv", rows(120, 0), COLUMNS)
    write_csv(ws / "new.csv", rows(60, 1), COLUMNS)
    evolve(ws, "A", 1)
    evolve(ws, "B", 2)
    return ws


@contextlib.contextmanager
def scratch(workspace: Path):
    """A copy of the workspace, with ``unfinished`` made from run A."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        for name in ("A", "B"):
            shutil.copytree(workspace / name, here / name)
        for name in ("g.bnf", "train.csv", "new.csv"):
            shutil.copy(workspace / name, here / name)
        shutil.copytree(here / "A", here / "unfinished")
        for name in ("final.json", "convergence.png"):
            (here / "unfinished" / name).unlink(missing_ok=True)
        shutil.rmtree(here / "unfinished" / "best")
        (here / "unfinished" / "best").mkdir()
        yield here


# -- features by name ------------------------------------------------------------------------------------------

@settings(max_examples=6, **PROPERTY)
@given(order=st.permutations(COLUMNS))
def test_predict_matches_columns_by_name_whatever_their_order(workspace, order):
    """Before: the columns were taken by position (a UCI set's accuracy fell from 0.96 to 0.36)."""
    with scratch(workspace) as here:
        expected = predict_run(here / "A", here / "new.csv").predictions
        shuffled = write_csv(here / "shuffled.csv", rows(60, 1), list(order))
        np.testing.assert_array_equal(predict_run(here / "A", shuffled).predictions, expected)


@settings(max_examples=5, **PROPERTY)
@given(column=st.sampled_from(["a", "b", "colour", "size"]), new=st.sampled_from(["A", "width", "colour2", "x_1"]))
def test_predict_refuses_other_feature_names_naming_them(workspace, column, new):
    with scratch(workspace) as here:
        write_csv(here / "renamed.csv", rows(20, 1), COLUMNS, rename={column: new})
        code, out, err = call(["predict", "A", "--data", "renamed.csv"], here)
        assert code == 1 and not out, err
        assert err.startswith("error: renamed.csv: its features do not match those of the run's training data") \
            and f"missing '{column}'" in err and f"unexpected '{new}'" in err, err


def test_predict_refuses_text_in_a_numeric_column_at_its_line(workspace):
    with scratch(workspace) as here:
        records = rows(10, 1)
        records[6]["size"] = "large"
        write_csv(here / "text.csv", records, COLUMNS)
        code, out, err = call(["predict", "A", "--data", "text.csv"], here)
        assert code == 1 and not out
        assert err.startswith("error: text.csv:8: column 'size' holds text ('large'), but the training data held "
                              "numbers in it"), err


def test_nominal_values_are_coded_as_in_training_whatever_a_file_lists(workspace):
    """A file without 'blue' codes green 0 and red 1 by itself; training coded blue 0, green 1, red 2."""
    with scratch(workspace) as here:
        records = rows(60, 1)
        everything = predict_run(here / "A", here / "new.csv").predictions
        kept = [i for i, r in enumerate(records) if r["colour"] != "blue"]
        write_csv(here / "no-blue.csv", [records[i] for i in kept], COLUMNS)
        np.testing.assert_array_equal(predict_run(here / "A", here / "no-blue.csv").predictions, everything[kept])


def test_evolve_test_set_with_reordered_columns_is_matched_by_name(workspace):
    """Before: a test set in another column order was refused ("or a different order")."""
    with scratch(workspace) as here:
        write_csv(here / "test.csv", rows(40, 3), ["class", "size", "colour", "b", "a"])
        code, _, err = call(["evolve", "--grammar", "g.bnf", "--data", "train.csv", "--target", "class", "--test",
                             "test.csv", "--population", "4", "--generations", "1", "--budget", "15s", "--workers",
                             "1", "--seed", "1", "--cv", "0", "--quiet", "--out", "T"], here)
        assert code == 0, err
        final = json.loads((here / "T" / "final.json").read_text())
        assert final["test"]["measures"]["accuracy"] > 0.6, final["test"]


def test_the_models_we_ship_match_data_frames_by_name():
    import pandas as pd
    from sklearn.naive_bayes import GaussianNB
    from sklearn.tree import DecisionTreeClassifier

    from ggp_automl.spaces.ensemble import EnsembleModel
    from ggp_automl.spaces.mlc.transform import BR
    from ggp_automl.spaces.model import MultiLabelModel, SingleLabelModel

    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(80, 4)), columns=["w", "x", "y", "z"])
    y = (X["w"] + 0.2 * X["z"] > 0).astype(int).to_numpy()
    Y = np.column_stack([y, (X["x"] > 0).astype(int)])
    models = [(SingleLabelModel(DecisionTreeClassifier(random_state=0)), y),
              (MultiLabelModel(BR(GaussianNB())), Y),
              (EnsembleModel([SingleLabelModel(GaussianNB()), SingleLabelModel(DecisionTreeClassifier(max_depth=2))],
                             [1, 1]), y)]
    reordered = X[["z", "y", "x", "w"]]
    for model, target in models:
        model.fit(X, target)
        np.testing.assert_array_equal(model.predict(reordered), model.predict(X))
        with pytest.raises(ValueError, match=r"missing \['w'\], unexpected \['v'\]"):
            model.predict(X.rename(columns={"w": "v"}))
        with warnings.catch_warnings():  # scikit-learn's "X does not have valid feature names": by position
            warnings.simplefilter("ignore", UserWarning)
            np.testing.assert_array_equal(model.predict(X.to_numpy()), model.predict(X))


def test_the_estimator_matches_data_frames_by_name_and_codes_text_as_in_fit(tmp_path):
    import pandas as pd

    from ggp_automl import GrammarAutoMLClassifier

    (tmp_path / "g.bnf").write_text(GRAMMAR)
    frame = pd.DataFrame(rows(80, 0))
    X, y = frame.drop(columns="class"), frame["class"]
    model = GrammarAutoMLClassifier(grammar=str(tmp_path / "g.bnf"), time_budget=8, n_jobs=1, population=4,
                                    max_generations=1, cv=0)
    X_numeric = X.assign(colour=X["colour"].map({"red": 0, "green": 1, "blue": 2}))
    model.fit(X_numeric, y)
    np.testing.assert_array_equal(model.predict(X_numeric[["size", "colour", "b", "a"]]), model.predict(X_numeric))
    with pytest.raises(ValueError, match="Feature names"):
        model.predict(X_numeric.rename(columns={"a": "alpha"}))


# -- a run knows its own files ---------------------------------------------------------------------------------

def run_id(run: Path) -> str:
    return json.loads((run / "config.json").read_text())["run_id"]


def test_resume_refuses_another_runs_checkpoint_naming_it(workspace):
    """Before: resumed with exit 0, reporting the other run's counts, generations and winner."""
    with scratch(workspace) as here:
        shutil.copy(here / "B" / "checkpoint.pkl", here / "unfinished" / "checkpoint.pkl")
        code, out, err = call(["evolve", "--resume", "unfinished", "--quiet"], here)
        assert code == 1, err
        assert err.startswith(f"error: unfinished/checkpoint.pkl belongs to another run ({run_id(here / 'B')}), "
                              f"not to this one ({run_id(here / 'A')}, config.json)"), err
        assert not (here / "unfinished" / "final.json").exists()


def test_resume_and_inspect_refuse_another_runs_evaluation_log(workspace):
    with scratch(workspace) as here:
        shutil.copy(here / "B" / "evaluations.jsonl", here / "unfinished" / "evaluations.jsonl")
        code, out, err = call(["evolve", "--resume", "unfinished", "--quiet"], here)
        assert code == 1 and err.startswith(f"error: unfinished/evaluations.jsonl belongs to another run "
                                            f"({run_id(here / 'B')})"), err
        n = len((here / "B" / "evaluations.jsonl").read_text().splitlines())
        code, out, err = call(["inspect", "unfinished"], here)
        assert code == 0 and f"evaluations.jsonl holds {n} records of another run ({run_id(here / 'B')})" \
            in " ".join(out.split()), out


def test_a_prediction_file_of_another_run_is_refused():
    import tempfile

    from ggp_automl.evaluation.predictions import PredictionStore
    from ggp_automl.search.rundir import RunDirectory

    with tempfile.TemporaryDirectory() as tmp:
        run = RunDirectory(Path(tmp) / "run")
        run.create({"method": "ggp"})
        try:
            PredictionStore(path=Path(tmp) / "other.pkl", run_id="0123456789abcdef").set_targets("v", np.zeros(3))
            store = PredictionStore(path=Path(tmp) / "other.pkl", run_id=run.run_id).load()
            assert store.owner == "0123456789abcdef"
            error = run.foreign("predictions.pkl", store.owner)
            assert error is not None and "belongs to another run (0123456789abcdef)" in str(error)
            assert run.foreign("predictions.pkl", run.run_id) is None
            assert run.foreign("predictions.pkl", None) is None  # a file older than run ids
        finally:
            run.release()


def test_predict_refuses_a_model_file_the_run_did_not_write(workspace):
    with scratch(workspace) as here:
        shutil.copy(here / "B" / "best" / "model.joblib", here / "A" / "best" / "model.joblib")
        code, out, err = call(["predict", "A", "--data", "new.csv"], here)
        assert code == 1 and not out
        assert err.startswith("error: A/best/model.joblib is corrupted (its checksum differs from the one final.json "
                              f"recorded when the run wrote it: it belongs to another run ({run_id(here / 'B')})"), err


@pytest.mark.slow  # a third run of the fixture's: with the slow suite
def test_same_seed_same_evaluations_whatever_the_run_id(workspace):
    """The run id comes from the operating system, not from the run's Generator."""
    with scratch(workspace) as here:
        evolve(here, "A2", 1)
        keys = ("phenotype", "fitness", "status")
        a = [{k: json.loads(line)[k] for k in keys} for line in (here / "A" / "evaluations.jsonl").open()]
        a2 = [{k: json.loads(line)[k] for k in keys} for line in (here / "A2" / "evaluations.jsonl").open()]
        assert a == a2 and run_id(here / "A") != run_id(here / "A2")


# -- exit codes ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["check", "--grammar", "g.bnf"], ["evolve", "--grammar", "g.bnf", "--data",
                                                                      "train.csv", "--target", "class"]])
def test_a_plugin_that_calls_sys_exit_while_imported_is_an_input_error(tmp_path, command):
    (tmp_path / "g.bnf").write_text(GRAMMAR)
    write_csv(tmp_path / "train.csv", rows(40, 0), COLUMNS)
    (tmp_path / "leaving.py").write_text("import sys\nsys.exit(7)\n")
    t0 = time.perf_counter()
    code, out, err = call(command + ["--plugin", "leaving.py", "--out", "run"] if command[0] == "evolve"
                          else command + ["--plugin", "leaving.py"], tmp_path)
    assert code == 1, (code, err)
    assert "leaving.py calls sys.exit(7) while it is imported" in err and "leaving.py:2" in err, err
    assert time.perf_counter() - t0 < 60


def test_a_time_limit_below_the_floor_is_said_once_and_recorded(workspace):
    """Before: `--eval-timeout 0.2s` ran every candidate with 1 s without a word."""
    with scratch(workspace) as here:
        code, _, err = call(["evolve", "--grammar", "g.bnf", "--data", "train.csv", "--target", "class", "--population",
                             "4", "--generations", "1", "--budget", "15s", "--eval-timeout", "0.2s", "--workers", "1",
                             "--quiet", "--out", "T"], here)
        assert code == 0, err
        said = "the evaluation timeout 0.2 s is below the 1 s a candidate is given at least"
        assert err.count(said) == 1, err
        config = json.loads((here / "T" / "config.json").read_text())
        assert config["config"]["eval_timeout"] == 1.0 and said in config["adjusted"][0]


# -- grammar tokens that were read as something else -------------------------------------------------------------

@pytest.mark.parametrize("text, message", [
    ("<S> ::= BR <c>\n<c> ::= KNN <k>\n<k> ::= RANDOM-INT(1, \u0663)    #@ type=int default=1\n",
     "3:23: error: unexpected '\u0663'"),
    ("<S> ::= BR <c>\n<c> ::= KNN <k>\n<k> ::= 1 | 3    #@ type=cat default=1 default=3\n",
     "'default' is given twice in one annotation"),
    ("<S> ::= BR <c>\n<c> ::= KNN <k>\n<k> ::= RANDOM-INT(1, 5)    #@ type=int default=\uff13\n",
     "is not a valid integer"),
])
def test_grammar_tokens_that_were_silently_read_are_errors(tmp_path, text, message):
    """Digits of other scripts were read as numbers; of a key given twice, one silently won."""
    (tmp_path / "g.bnf").write_text(text, encoding="utf-8")
    code, out, err = call(["check", "--grammar", "g.bnf"], tmp_path)
    assert code == 1 and message in err, err


def test_a_meka_label_count_that_is_not_a_number_is_refused(tmp_path):
    """Before: read as a single-label file (its last attribute the class)."""
    (tmp_path / "d.arff").write_text("@relation 'd: -C six'\n@attribute a {0,1}\n@attribute b {0,1}\n"
                                     "@attribute x numeric\n@data\n" + "0,1,0.5\n1,0,0.25\n" * 10)
    (tmp_path / "g.bnf").write_text(GRAMMAR)
    code, out, err = call(["check", "--grammar", "g.bnf", "--data", "d.arff"], tmp_path)
    assert code == 1 and "d.arff: the relation name's -C six is not a number of labels" in err, err


def test_data_with_one_row_per_class_is_refused_before_a_search(tmp_path):
    """Before: the run "finished" with fitness 0."""
    (tmp_path / "g.bnf").write_text(GRAMMAR)
    write_csv(tmp_path / "d.csv", [{**r, "class": f"c{i}"} for i, r in enumerate(rows(12, 0))], COLUMNS)
    code, out, err = call(["evolve", "--grammar", "g.bnf", "--data", "d.csv", "--target", "class", "--budget", "10s",
                           "--out", "run"], tmp_path)
    assert code == 1 and "every class occurs once in the training data" in err, err
    assert not (tmp_path / "run").exists()


@pytest.mark.slow  # five interrupted runs: about twenty seconds
@pytest.mark.parametrize("delay", [0.05, 0.3, 1.0, 2.5, 6.0])
def test_ctrl_c_at_any_moment_ends_with_130_and_no_traceback(tmp_path, delay):
    """While the program loads, parses, checks, starts its workers, searches or refits."""
    import signal
    import subprocess
    import sys

    from .conftest import ROOT

    (tmp_path / "g.bnf").write_text(GRAMMAR)
    write_csv(tmp_path / "train.csv", rows(120, 0), COLUMNS)
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "evolve", "--grammar", "g.bnf", "--data",
                             "train.csv", "--target", "class", "--budget", "20s", "--workers", "1", "--quiet",
                             "--out", "run"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(delay)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (130, 0), (proc.returncode, err[-2000:])
    assert "Traceback" not in out + err and "internal error" not in err, err[-3000:]
    if proc.returncode == 130:
        assert err.strip().splitlines()[-1].startswith("interrupted"), err


# -- a hostile-input run over predict, --resume and grammar tokens: no answer that is silently wrong -------------

def _variant(records: list[dict], draw) -> tuple[list[dict], list[str], bool]:
    """A predict file made from the new rows: (rows, columns, whether its predictions must be the true ones)."""
    columns = list(draw(st.permutations(COLUMNS)))
    changed = [dict(r) for r in records]
    kind = draw(st.sampled_from(["reorder", "drop", "extra", "rename", "text", "blank class"]))
    if kind == "drop":
        columns.remove(draw(st.sampled_from(["a", "b", "colour", "size"])))
    elif kind == "extra":
        columns.append("noise")
        for r in changed:
            r["noise"] = 1.0
    elif kind == "rename":
        old = draw(st.sampled_from(["a", "b", "colour", "size"]))
        columns[columns.index(old)] = old.upper() + "_"
        for r in changed:
            r[old.upper() + "_"] = r[old]
    elif kind == "text":
        changed[draw(st.integers(0, len(changed) - 1))][draw(st.sampled_from(["a", "b", "size"]))] = "n/a?x"
    elif kind == "blank class":
        for r in changed:
            r["class"] = "?"
    return changed, columns, kind in ("reorder", "blank class")


@settings(max_examples=25, **PROPERTY)
@given(data=st.data())
def test_hostile_predict_files_are_refused_or_predicted_right(workspace, data):
    with scratch(workspace) as here:
        truth = predict_run(here / "A", here / "new.csv").predictions
        changed, columns, right = _variant(rows(60, 1), data.draw)
        write_csv(here / "hostile.csv", changed, columns)
        code, out, err = call(["predict", "A", "--data", "hostile.csv", "--out", "p.csv"], here)
        if right:
            assert code == 0, err
            np.testing.assert_array_equal(predict_run(here / "A", here / "hostile.csv").predictions, truth)
        else:
            assert code == 1 and err.startswith("error: hostile.csv") and not (here / "p.csv").exists(), err


@settings(max_examples=12, **PROPERTY)
@given(files=st.sets(st.sampled_from(["checkpoint.pkl", "evaluations.jsonl", "config.json"]), min_size=1))
def test_hostile_resumes_with_another_runs_files_are_refused(workspace, files):
    with scratch(workspace) as here:
        for name in files:
            shutil.copy(here / "B" / name, here / "unfinished" / name)
        code, out, err = call(["evolve", "--resume", "unfinished", "--quiet"], here)
        if len(files) == 3:  # config, checkpoint and log all B's: B's own run, resumed
            return
        assert code == 1 and "belongs to another run" in err, (files, err)
        assert not (here / "unfinished" / "final.json").exists()


@settings(max_examples=30, **PROPERTY)
@given(data=st.data())
def test_a_stray_token_anywhere_beside_an_algorithm_is_refused(tmp_path_factory, data):
    """Insert a word into an alternative of a shipped grammar that names an algorithm: `check` refuses it."""
    from ggp_automl.gp.bnf_parser import load_grammar
    from ggp_automl.gp.grammar import Terminal
    from ggp_automl.spaces.registry import load_all

    from .conftest import GRAMMARS

    name = data.draw(st.sampled_from(["small.bnf", "medium.bnf", "ensembles.bnf"]))
    grammar = load_grammar(GRAMMARS / name)
    algorithms = load_all()
    spots = [item.location for rule in grammar if rule.kind == "alg" for alt in rule.alternatives
             for item in alt.items if isinstance(item, Terminal) and item.text in algorithms]
    spot = data.draw(st.sampled_from(spots))
    word = data.draw(st.sampled_from(["bogus", "fast", "KNN", "0.5", "-U", "PCut1"]))
    lines = (GRAMMARS / name).read_text().splitlines()
    line, column = spot.line - 1, spot.column - 1
    lines[line] = lines[line][:column] + word + " " + lines[line][column:]
    path = tmp_path_factory.mktemp("stray") / name
    path.write_text("\n".join(lines) + "\n")
    code, out, err = call(["check", "--grammar", path.name], path.parent)
    assert code == 1 and (f"'{word}' beside" in err or "follows" in err), err[-1500:]

"""The task seam: single-label and multi-label data through the same loaders, splits, models, measures
and search loop (evaluation/task.py)."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, log_loss, precision_score, recall_score

from ggp_automl.evaluation.candidate import Split, evaluate_candidate
from ggp_automl.evaluation.data import from_arrays, load_dataset, load_split
from ggp_automl.evaluation.default_data import load_default
from ggp_automl.evaluation.isolation import Limits
from ggp_automl.evaluation.metrics import singlelabel_measures
from ggp_automl.evaluation.splits import class_folds
from ggp_automl.evaluation.task import MultiLabel, SingleLabel, task_of
from ggp_automl.gp.bnf_parser import parse_grammar
from ggp_automl.gp.errors import DataError
from ggp_automl.gp.phenotype import parse_phenotype
from ggp_automl.search import RunConfig, start
from ggp_automl.search.run import RunError, describe_data, load_run_data
from ggp_automl.spaces.compiler import MappingError, compile_tree
from ggp_automl.spaces.model import MultiLabelModel, SingleLabelModel

from .conftest import GRAMMARS, SHARED, requires_shared

SLC = SHARED / "datasets" / "slc"
SL_GRAMMAR = """<S> ::= J48 <mno_c45> | NaiveBayes <NB-Parameters> | Bagging <ni_bagging> <b>
<b> ::= J48 <mno_c45> | NaiveBayes <NB-Parameters>
<mno_c45> ::= RANDOM-INT(1, 20)  #@ type=int default=2
<ni_bagging> ::= RANDOM-INT(2, 5)  #@ type=int default=3
<NB-Parameters> ::= usd | uke | EMPTY  #@ type=cat default=EMPTY
"""


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return p


# -- detection -------------------------------------------------------------------------------------

def test_an_arff_with_a_nominal_last_attribute_is_single_label(tmp_path):
    p = write(tmp_path, "d.arff", "@relation r\n@attribute a numeric\n@attribute c {x,y,z}\n@data\n1,y\n2,z\n3,?\n")
    d = load_dataset(p)
    assert d.task == SingleLabel(("x", "y", "z"))
    assert d.Y.tolist() == [1, 2, -1] and d.label_names == ("c",) and d.meta.n_labels == 3
    assert d.labelled().n_instances == 2


def test_target_names_the_class_or_the_labels(tmp_path):
    text = ("@relation r\n@attribute a {p,q}\n@attribute l1 {0,1}\n@attribute l2 {0,1}\n@attribute n numeric\n"
            "@data\np,0,1,1\nq,1,1,2\np,1,0,3\n")
    p = write(tmp_path, "d.arff", text)
    single = load_dataset(p, target="a")
    assert single.task.name == "singlelabel" and single.classes == ("p", "q") and single.n_features == 3
    multi = load_dataset(p, target="l1,l2")
    assert multi.task == MultiLabel(("l1", "l2")) and multi.Y.tolist() == [[0, 1], [1, 1], [1, 0]]
    with pytest.raises(DataError, match="'l3' is not an attribute of the file.*did you mean 'l[12]'"):
        load_dataset(p, target="l3")
    with pytest.raises(DataError, match="the last attribute 'n' is numeric"):
        load_dataset(p)


def test_csv_needs_a_target_and_a_numeric_class_must_be_whole_numbers(tmp_path):
    p = write(tmp_path, "d.csv", "x,y,c\n1.5,2,0\n2.5,3,2\n3.5,1,2\n")
    d = load_dataset(p, target="c")
    assert d.classes == ("0", "2") and d.Y.tolist() == [0, 1, 1]
    with pytest.raises(DataError, match="label 'y' has value 2"):
        load_dataset(p, target="y,c")
    with pytest.raises(DataError, match="has the value 1.5: a numeric class must hold whole numbers"):
        load_dataset(p, target="x")
    with pytest.raises(DataError, match="does not say which columns are the targets"):
        load_dataset(p)


@requires_shared(SLC / "glass.arff")
def test_the_shared_single_label_sets_load_as_single_label():
    for name in ("glass", "ecoli", "car-evaluation", "dermatology"):
        d = load_dataset(SLC / f"{name}.arff")
        assert d.task.name == "singlelabel" and len(d.classes) >= 2 and (d.Y >= 0).all()


@requires_shared(SHARED / "datasets" / "mlc" / "emotions.arff")
def test_multi_label_files_stay_multi_label():
    assert load_dataset(SHARED / "datasets" / "mlc" / "emotions.arff").task.name == "multilabel"


def test_a_test_file_is_recoded_to_the_training_classes(tmp_path):
    tr = write(tmp_path, "tr.arff", "@relation r\n@attribute a numeric\n@attribute c {x,y}\n@data\n1,x\n2,y\n")
    te = write(tmp_path, "te.arff", "@relation r\n@attribute a numeric\n@attribute c {y,x,w}\n@data\n1,x\n2,?\n")
    train, test = load_split(tr, te)
    assert test.classes == ("x", "y") and test.Y.tolist() == [0, -1]
    write(tmp_path, "te.arff", "@relation r\n@attribute a numeric\n@attribute c {y,x,w}\n@data\n1,w\n")
    with pytest.raises(DataError, match="class 'w' does not occur among the training classes"):
        load_split(tr, te)


def test_unlabelled_rows_are_left_out_of_training_with_a_warning(tmp_path):
    rows = "".join(f"{i},{'x' if i % 2 else 'y'}\n" for i in range(30)) + "99,?\n"
    p = write(tmp_path, "d.arff", f"@relation r\n@attribute a numeric\n@attribute c {{x,y}}\n@data\n{rows}")
    data = load_run_data(p, task="singlelabel")
    assert data.train.n_instances == 30 and data.description["unlabelled_dropped"]["train"] == 1


# -- splitting -------------------------------------------------------------------------------------

def test_class_folds_stratify_and_tolerate_rare_classes():
    y = np.array([0] * 50 + [1] * 30 + [2] * 3)
    folds = class_folds(y, [0.1] * 10, np.random.default_rng(0))
    assert sorted(np.concatenate(folds).tolist()) == list(range(len(y)))
    for f in folds:
        counts = np.bincount(y[f], minlength=3)
        assert counts[0] == 5 and counts[1] == 3 and counts[2] <= 1
    again = class_folds(y, [0.1] * 10, np.random.default_rng(0))
    assert all(np.array_equal(a, b) for a, b in zip(folds, again))
    learn, valid = SingleLabel(("a", "b", "c")).holdout(y, np.random.default_rng(1))
    assert len(valid) == round(0.2 * len(y)) and set(y[valid]) == {0, 1, 2}


def test_the_task_of_a_target_array():
    assert task_of(np.array([0, 1, 1])).name == "singlelabel"
    assert task_of(np.zeros((3, 2))).name == "multilabel"


# -- models and measures ---------------------------------------------------------------------------

def test_single_label_measures_equal_scikit_learn():
    rng = np.random.default_rng(0)
    for _ in range(30):
        k, n = int(rng.integers(2, 6)), int(rng.integers(5, 40))
        t, p = rng.integers(0, k, n), rng.integers(0, k, n)
        P = rng.random((n, k)) + 0.01
        P /= P.sum(axis=1, keepdims=True)
        m = singlelabel_measures(t, p, P, k)
        assert m["log_loss"] == pytest.approx(log_loss(t, P, labels=range(k)))
        assert m["balanced_accuracy"] == pytest.approx(balanced_accuracy_score(t, p))
        prec = precision_score(t, p, average="macro", zero_division=0)
        rec = recall_score(t, p, average="macro", zero_division=0)
        assert m["macro_precision"] == pytest.approx(prec) and m["macro_recall"] == pytest.approx(rec)
        assert m["macro_f_measure"] == pytest.approx(0 if prec + rec == 0 else 2 * prec * rec / (prec + rec))
        assert m["error_rate"] == pytest.approx(np.mean(t != p)) and m["accuracy"] == pytest.approx(1 - m["error_rate"])


def test_a_tree_compiles_to_the_model_of_the_task():
    g = parse_grammar(SL_GRAMMAR, "sl.bnf")
    tree = parse_phenotype("Bagging 3 J48 2", g.bind())
    model = compile_tree(tree, g, task=SingleLabel(("a", "b")))
    assert isinstance(model, SingleLabelModel)
    with pytest.raises(MappingError, match="is a single-label classifier, but the data need a multi-label method"):
        compile_tree(tree, g, task=MultiLabel(("l1", "l2")))
    X, y = load_default("singlelabel")
    predictions, scores = SingleLabel(("c0", "c1", "c2")).outputs(model.fit(X[:200], y[:200]), X[200:])
    assert scores.shape == (100, 3) and np.allclose(scores.sum(axis=1), 1) and set(predictions) <= {0, 1, 2}
    assert (predictions == np.argmax(scores, axis=1)).all()


def test_cross_validation_averages_the_measures_of_its_folds():
    X, y = load_default("singlelabel")
    task = SingleLabel(("c0", "c1", "c2"))
    g = parse_grammar(SL_GRAMMAR, "sl.bnf")
    tree = parse_phenotype("J48 2", g.bind())
    folds = tuple(task.kfold(y, 5, np.random.default_rng(0)))
    r = evaluate_candidate(tree, g, Split(X, y, X[:0], y[:0], (), task, folds), Limits(timeout=60),
                           fitness="accuracy")
    by_hand = []
    for train, test in folds:
        model = compile_tree(tree, g, task=task).fit(X[train], y[train])
        by_hand.append(np.mean(model.predict(X[test]) == y[test]))
    assert r.ok and r.fitness == pytest.approx(np.mean(by_hand))


def test_multi_label_models_keep_their_threshold_cut():
    X, Y = load_default()
    g = parse_grammar("<S> ::= <m> <pred_tshd>\n<m> ::= BR <c>\n<c> ::= NaiveBayes\n"
                      "<pred_tshd> ::= 0.3 | PCut1  #@ type=cat default=PCut1\n", "ml.bnf")
    model = compile_tree(parse_phenotype("BR NaiveBayes 0.3", g.bind()), g).fit(X, Y)
    assert isinstance(model, MultiLabelModel)
    predictions, scores = MultiLabel(tuple("abcdef")).outputs(model, X)
    assert (predictions == (scores >= 0.3)).all()


# -- both tasks through the same loop --------------------------------------------------------------

@pytest.mark.parametrize("task", ["singlelabel", "multilabel"])
def test_both_tasks_run_through_the_same_loop(tmp_path, task):
    grammar = write(tmp_path, "g.bnf", SL_GRAMMAR) if task == "singlelabel" else GRAMMARS / "small.bnf"
    data = load_run_data(None, task=task)
    config = RunConfig(method="random", budget_seconds=20, population=4, batch_size=4, workers=1,
                       max_generations=1, eval_timeout=10, screening=False)
    outcome = start(config, grammar, data, out=tmp_path / "run", argv=["test"])
    final = outcome.final
    assert final["status"] == "finished" and final["task"] == task
    assert final["fitness"] == ("accuracy" if task == "singlelabel" else "fitness")
    cfg = (tmp_path / "run" / "config.json").read_text()
    assert f'"cv": {10 if task == "singlelabel" else 0}' in cfg and f'"task": "{task}"' in cfg
    X = data.train.X[:5]
    assert outcome.model.predict(X).shape == ((5,) if task == "singlelabel" else (5, 6))


def test_a_grammar_of_the_other_task_is_refused(tmp_path):
    X, y = load_default("singlelabel")
    data = describe_data(from_arrays(X, y, classes=("a", "b", "c")), None, None, None, None, "sl")
    with pytest.raises(RunError, match="builds multi-label methods, but sl is single-label data .3 classes.; use "
                                       "a grammar of single-label classifiers"):
        start(RunConfig(method="random", budget_seconds=5), GRAMMARS / "small.bnf", data, write=False)
    with pytest.raises(RunError, match="fitness 'fitness' is for multilabel data"):
        start(RunConfig(method="random", budget_seconds=5, fitness="fitness"), write(tmp_path, "g.bnf", SL_GRAMMAR),
              data, write=False)


def test_cli_evolve_and_predict_class_labels_with_unlabelled_rows(tmp_path, capsys):
    from ggp_automl.cli import main

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    classes = np.where(X[:, 0] > 0, "yes", "no")
    rows = "".join(f"{a:.4f},{b:.4f},{c:.4f},{k}\n" for (a, b, c), k in zip(X, classes))
    header = "@relation r\n@attribute a numeric\n@attribute b numeric\n@attribute c numeric\n@attribute k {no,yes}\n"
    train = write(tmp_path, "train.arff", header + "@data\n" + rows)
    new = write(tmp_path, "new.arff", header + "@data\n0.5,0,0,?\n-0.5,0,0,?\n1.5,0,0,yes\n")
    out, grammar = tmp_path / "run", write(tmp_path, "g.bnf", SL_GRAMMAR)
    assert main(["evolve", "--grammar", str(grammar), "--data", str(train), "--method", "random", "--budget", "12s",
                 "--workers", "1", "--population", "3", "--generations", "1", "--cv", "3", "--out", str(out),
                 "--quiet"]) == 0
    capsys.readouterr()
    assert main(["predict", str(out), "--data", str(new), "--scores", "--out", str(tmp_path / "p.csv")]) == 0
    text = capsys.readouterr().out
    assert "1 of 3 rows have them" in text
    lines = (tmp_path / "p.csv").read_text().splitlines()
    assert lines[0] == "k,P(no),P(yes)" and len(lines) == 4
    assert all(line.split(",")[0] in ("no", "yes") for line in lines[1:])
    assert all(abs(float(a) + float(b) - 1) < 1e-5 for _, a, b in (line.split(",") for line in lines[1:]))

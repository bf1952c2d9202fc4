"""Hostile datasets (issue 9): a clear DataError or a usable dataset, never a traceback, in bounded time.

Two halves. Property tests generate small ARFF files — valid and broken: 0-12 rows, infinite,
missing and huge values, constant labels, undeclared values, wrong types, sparse rows, truncated
or spliced lines, random bytes — and drive them through the public entry points: the loader
(``load_dataset``), the checks the run makes before its search (``check_fold_rows``,
``check_learnable``) and the splits those checks vouch for, and ``cli.py check --data``. Then one
test per class of bug the hostile-user report found, with the message it now gets.
"""
from __future__ import annotations

import contextlib
import gzip
import io
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ggp_automl.evaluation.data import from_arrays, load_dataset
from ggp_automl.evaluation.fidelity import FidelitySchedule
from ggp_automl.evaluation.learnable import check_fold_rows, check_learnable, fold_min_rows
from ggp_automl.evaluation.splits import holdout_split, kfold_splits, stratified_folds
from ggp_automl.gp.errors import DataError

from .conftest import GRAMMARS

NUMBERS = ["0", "1", "-2.5", "1e308", "3", "0.001", "-0"]
HOSTILE = ["?", "nan", "NaN", "inf", "-inf", "Infinity", "1e400", "-1e999", "", "abc", "'q'", "'", '"', "{", "}",
           "2001-04-03", "²", "--1", "1_0", "0x1", " ", "ü", "\\"]
NOMINAL = ("r", "g", "'b b'")


DEFECTS = ("value", "label", "type", "-C", "sparse", "edit", "xml")


@st.composite
def arff_texts(draw) -> tuple[str, str | None]:
    """An ARFF text (and maybe a MULAN XML): well formed but for up to two kinds of defect."""
    defects = draw(st.sets(st.sampled_from(DEFECTS), max_size=2))
    n_labels, n_rows = draw(st.integers(1, 3)), draw(st.integers(0, 12))
    n_features = draw(st.integers(0 if "type" in defects else 1, 3))  # no feature: -C takes every attribute
    kinds = [draw(st.sampled_from(["numeric", "numeric", "nominal", "string", "date", "integer"]
                                  + (["numerik", "relational"] if "type" in defects else [])))
             for _ in range(n_features)]
    label_type = draw(st.sampled_from(["{0,1}", "{0,1}", "numeric", "{FALSE,TRUE}"]
                                      + (["{no,yes}", "string"] if "type" in defects else [])))
    labels_first = draw(st.booleans())
    declared = {"nominal": "{" + ",".join(NOMINAL) + "}", "date": 'date "yyyy-MM-dd"'}
    features = [f"@attribute f{j} {declared.get(k, k)}" for j, k in enumerate(kinds)]
    label_lines = [f"@attribute y{k} {label_type}" for k in range(n_labels)]
    q = n_labels if labels_first else -n_labels
    if "-C" in defects:
        q = draw(st.sampled_from([0, n_labels + n_features, 99, -99, -q]))
    header = [f"@relation 't: -C {q}'"] + (label_lines + features if labels_first else features + label_lines)
    constant = draw(st.sampled_from(["none", "all", "some"]))
    no, yes = ("FALSE", "TRUE") if label_type == "{FALSE,TRUE}" else ("0", "1")
    label_values = [no, yes] + (["?", "2"] if "label" in defects else [])
    rows = []
    for _ in range(n_rows):
        ys = [draw(st.sampled_from(label_values)) if constant == "none" or (constant == "some" and k) else yes
              for k in range(n_labels)]
        xs = []
        for kind in kinds:
            if "value" in defects and draw(st.integers(0, 3)) == 0:
                xs.append(draw(st.sampled_from(HOSTILE)))
            elif kind == "nominal":
                xs.append(draw(st.sampled_from(NOMINAL)))
            elif kind == "date":
                xs.append("2001-04-03")
            else:
                xs.append(draw(st.sampled_from(NUMBERS + ["?"])))
        values = ys + xs if labels_first else xs + ys
        if "sparse" in defects and draw(st.booleans()):  # a sparse row, its indices maybe wrong
            picks = draw(st.lists(st.integers(-1, len(values)), max_size=3))
            rows.append("{" + ", ".join(f"{i} {values[i] if 0 <= i < len(values) else '1'}" for i in picks) + "}")
        else:
            rows.append(",".join(values))
    text = "\n".join(header + ["@data"] + rows) + "\n"
    for _ in range(2 if "edit" in defects else 0):  # truncate, splice junk, drop a line
        cut = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["truncate", "insert", "dropline"]))
        if edit == "truncate":
            text = text[:cut]
        elif edit == "insert":
            text = text[:cut] + draw(st.sampled_from([",", "\n", "{", "'", "@data\n", "@attribute z numeric\n",
                                                      "%", "\x00", "inf"])) + text[cut:]
        else:
            lines = text.split("\n")
            del lines[cut % max(len(lines), 1)]
            text = "\n".join(lines)
    xml = None
    if "xml" in defects:
        names = [f"y{k}" for k in range(n_labels)] + draw(st.sampled_from([[], ["zz"], ["f0"]]))
        xml = draw(st.sampled_from(["<labels>" + "".join(f'<label name="{n}"/>' for n in names) + "</labels>",
                                    "<labels><label", "<x/>"]))
    return text, xml


files = st.one_of(
    arff_texts().map(lambda tx: ("data.arff", tx[0].encode("utf-8"), tx[1])),
    arff_texts().map(lambda tx: ("data.arff", tx[0].encode("utf-8"), tx[1])),
    arff_texts().map(lambda tx: ("data.arff.gz", gzip.compress(tx[0].encode("utf-8"), mtime=0), tx[1])),
    st.tuples(st.sampled_from(["data.arff", "data.arff.gz", "data.csv", "data.txt"]), st.binary(max_size=200),
              st.none()),
)


@contextlib.contextmanager
def written(name: str, content: bytes, xml: str | None):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / name
        path.write_bytes(content)
        if xml is not None:
            (Path(tmp) / "data.xml").write_text(xml)
        yield path


def loaded(path: Path):
    """The dataset, or the DataError; any other exception fails the test."""
    try:
        return load_dataset(path)
    except DataError as exc:
        assert str(exc).startswith(str(path.parent)), f"the message does not say where: {exc}"
        return exc


@settings(max_examples=500, deadline=2000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(files, st.integers(1, 5))
def test_generated_files_load_cleanly_and_the_checks_vouch_for_the_splits(file, fold):
    with written(*file) as path:
        ds = loaded(path)
        if isinstance(ds, DataError):
            event("refused by the loader")
            return
        event("loaded")
        assert ds.n_instances >= 1 and not np.isinf(ds.X).any() and set(np.unique(ds.Y)) <= {0, 1}
        for schedule in (None, FidelitySchedule("PAS-PIS", 5)):
            try:
                warnings = check_learnable(ds, schedule=schedule)
            except DataError as exc:
                assert str(exc).startswith(str(path)), exc
                event(f"refused by check_learnable ({'rows' if 'too few' in str(exc) else 'labels'})")
                continue
            event(f"learnable ({'PIS' if schedule else 'hold-out'})")
            assert all(isinstance(w, str) and w.startswith(str(path)) for w in warnings)
            assert not (ds.Y == ds.Y[0]).all(axis=0).all()  # every label constant is refused
            learn, valid = holdout_split(ds.Y, np.random.default_rng(fold))
            assert len(learn) and len(valid)  # what the check vouched for: no empty part
            if schedule is not None:
                assert all(len(f) for f in stratified_folds(ds.Y, [1 / 6] * 6, np.random.default_rng(fold)))
        try:
            check_fold_rows(ds, 5)
        except DataError:
            assert ds.n_instances < fold_min_rows(5)
            return
        train, test = kfold_splits(ds.Y, 5, np.random.default_rng(0))[fold - 1]
        event("cut for --fold")
        assert len(test) >= 1 and len(train) >= 5  # enough for the hold-out inside the fold's training part
        with contextlib.suppress(DataError):  # refused only for constant labels in that part, if at all
            check_learnable(ds.subset(train), what=f"the training part of fold {fold}")


@settings(max_examples=80, deadline=3000, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
@given(files)
def test_cli_check_data_exits_with_a_documented_code_and_no_traceback(file):
    from ggp_automl import cli

    with written(*file) as path:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = cli.main(["check", "--grammar", str(GRAMMARS / "large.bnf"), "--data", str(path)])
        text = out.getvalue() + err.getvalue()
        assert rc in (0, 1, 2), text
        assert "Traceback" not in text and "internal error" not in text, text
        if isinstance(loaded(path), DataError):
            assert rc == 1 and "error: " in err.getvalue()


ELEMENTS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([0.0, 1.0, 1e308, -1e308]))


@settings(max_examples=150, deadline=2000, derandomize=True)
@given(st.integers(0, 14), st.integers(0, 3), st.integers(1, 3), st.data())
def test_generated_arrays_for_fit_are_refused_or_usable(n, m, q, data):
    """``GrammarAutoML.fit(X, Y)`` goes through ``from_arrays`` and the same checks."""
    X = np.array(data.draw(st.lists(st.lists(ELEMENTS, min_size=m, max_size=m), min_size=n, max_size=n)),
                 dtype=float).reshape(n, m)
    Y = np.array(data.draw(st.lists(st.lists(st.sampled_from([0, 1, 1, 0, 2]), min_size=q, max_size=q),
                                    min_size=n, max_size=n)), dtype=float).reshape(n, q)
    try:
        ds = from_arrays(X, Y)
        check_learnable(ds)
    except DataError as exc:
        assert str(exc).startswith("arrays: ")
        event("refused")
    else:
        event("learnable")
        assert not np.isinf(ds.X).any() and ds.n_instances >= 5


# -- one test per class of bug ---------------------------------------------------------------------

def arff(tmp_path: Path, rows: list[str], name: str = "d", labels: int = 2, features: str = "ab") -> Path:
    head = [f"@relation 'd: -C {labels}'"] + [f"@attribute y{k} {{0,1}}" for k in range(labels)] \
        + [f"@attribute {f} numeric" for f in features] + ["@data"]
    path = tmp_path / f"{name}.arff"
    path.write_text("\n".join(head + rows) + "\n")
    return path


def varied(n: int) -> list[str]:
    return [f"{i % 2},{(i // 2) % 2},{i},{i * i % 7}" for i in range(n)]


@pytest.mark.parametrize("n", [1, 2, 4])
def test_too_few_rows_for_the_learning_validation_split_are_refused_with_the_minimum(tmp_path, n):
    """A one-row file passed check and then evolve failed with 'cannot split 1 instances into 2 folds'."""
    ds = load_dataset(arff(tmp_path, varied(n)))
    with pytest.raises(DataError, match=rf"d\.arff: the training data has {n} instances?, too few for the "
                                        r"learning/validation split: it needs at least 5"):
        check_learnable(ds)
    assert check_learnable(load_dataset(arff(tmp_path, varied(5), "five")))  # 5 rows: allowed, with a warning


def test_a_pis_schedule_and_fold_k_need_more_rows(tmp_path):
    ds = load_dataset(arff(tmp_path, varied(5)))
    with pytest.raises(DataError, match=r"too few for the PAS-PIS schedule's 6 folds: it needs at least 6"):
        check_learnable(ds, schedule=FidelitySchedule("PAS-PIS", 5))
    assert fold_min_rows(5) == 7  # 5 rows for the hold-out inside 4/5 of the rows
    with pytest.raises(DataError, match=r"six\.arff: 6 instances are too few for --fold of 5 folds: it needs "
                                        r"at least 7"):
        check_fold_rows(load_dataset(arff(tmp_path, varied(6), "six")), 5)
    check_fold_rows(load_dataset(arff(tmp_path, varied(7), "seven")), 5)


@pytest.mark.parametrize("value", ["inf", "-Infinity", "1e400"])
def test_an_infinite_feature_is_refused_with_file_line_attribute_and_row(tmp_path, value):
    """An inf passed check, and then every candidate failed."""
    rows = varied(6)
    rows[2] = f"0,1,2,{value}"
    with pytest.raises(DataError, match=r"d\.arff:9: attribute 'b' is -?inf in data row 3: feature values must "
                                        r"be finite numbers \(write \? for a missing value"):
        load_dataset(arff(tmp_path, rows))
    with pytest.raises(DataError, match=r"arrays: attribute 'x1' is inf in data row 2"):
        from_arrays(np.array([[0.0, 1.0], [1.0, np.inf]]), np.array([[0], [1]]))


def test_missing_values_stay_legitimate(tmp_path):
    rows = varied(60)
    rows[3], rows[4] = "0,1,?,1", "1,0,NaN,2"  # Weka stores a missing value as NaN too
    ds = load_dataset(arff(tmp_path, rows))
    assert np.isnan(ds.X[3, 0]) and np.isnan(ds.X[4, 0]) and check_learnable(ds) == []


@pytest.mark.parametrize("value", [0, 1])
def test_every_label_constant_is_refused(tmp_path, value):
    """Constant labels gave a 'winner' of fitness 1.0 or 0.75 without a word."""
    ds = load_dataset(arff(tmp_path, [f"{value},{value},{i},{i % 3}" for i in range(20)]))
    with pytest.raises(DataError, match=rf"every label is constant in the training data \('y0' always {value}, "
                                        rf"'y1' always {value}\).*check which attributes are the labels"):
        check_learnable(ds)


def test_some_labels_constant_small_data_and_uninformative_features_are_warnings(tmp_path):
    warnings = check_learnable(load_dataset(arff(tmp_path, [f"{i % 2},0,{i},1" for i in range(60)])))
    assert len(warnings) == 1 and "d.arff: 1 of the 2 labels are constant in the training data ('y1' always 0)" \
        in warnings[0]
    warnings = check_learnable(load_dataset(arff(tmp_path, [f"{i % 2},{i // 2 % 2},1,?" for i in range(20)], "flat")))
    assert len(warnings) == 2 and "flat.arff: the training data has 20 instances, so about 4 validate" in warnings[0]
    assert "flat.arff: every feature is constant or missing in the training data" in warnings[1]


def test_the_shared_datasets_pass_without_warnings():
    shared = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mlc"
    if not shared.exists():
        pytest.skip(f"{shared} not available (../shared is optional)")
    for name in ("flags", "emotions", "yeast", "CAL500"):
        assert check_learnable(load_dataset(shared / f"{name}.arff")) == []


def test_malformed_sparse_indices_are_data_errors(tmp_path):
    for index in ("²", "--1", "99999999999999999999999"):
        with pytest.raises(DataError, match=rf"d\.arff:7: sparse index '{index}' is not an attribute number"):
            load_dataset(arff(tmp_path, [f"{{0 1, {index} 2}}"]))


def test_unreadable_paths_are_data_errors(tmp_path):
    with pytest.raises(DataError, match=r"cannot look the file up: File name too long"):
        load_dataset(tmp_path / ("x" * 5000 + ".arff"))
    fifo = tmp_path / "pipe.arff"
    os.mkfifo(fifo)  # reading it would block for ever
    with pytest.raises(DataError, match=r"pipe\.arff: not a regular file"):
        load_dataset(fifo)
    (tmp_path / "dir.arff").mkdir()
    with pytest.raises(DataError, match=r"dir\.arff: is a directory"):
        load_dataset(tmp_path / "dir.arff")

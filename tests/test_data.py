"""Dataset loaders: the shared benchmark files, the MEKA fold files, every format quirk and every error."""
from __future__ import annotations

import gzip
import time
import types
from pathlib import Path
from urllib.error import URLError

import numpy as np
import pytest

from ggp_automl.evaluation.data import (
    ID_MIN_ROWS,
    Dataset,
    from_arrays,
    load_arff,
    load_csv,
    load_dataset,
    load_openml,
    load_split,
)
from ggp_automl.gp.errors import DataError

SHARED = Path(__file__).resolve().parents[2] / "shared"
MLC = SHARED / "datasets" / "mlc"
FOLDS = SHARED / "datasets" / "mlc-folds"
needs_mlc = pytest.mark.skipif(not MLC.exists(), reason=f"{MLC} not available (../shared is optional)")
needs_folds = pytest.mark.skipif(not FOLDS.exists(), reason=f"{FOLDS} not available (../shared is optional)")

# (files, n, m, q, card, categorical features, dropped) from ../shared/datasets/mlc/README.md; m excludes the
# dropped identifier (genbase's 'protein': README m = 1186 includes it).
DOCUMENTED = [
    (("emotions.arff",), 593, 72, 6, 1.868, 0, ()),
    (("yeast.arff",), 2417, 103, 14, 4.237, 0, ()),
    (("scene.arff",), 2407, 294, 6, 1.074, 0, ()),
    (("flags.arff",), 194, 19, 7, 3.392, 9, ()),
    (("birds.arff",), 645, 260, 19, 1.014, 2, ()),
    (("CHD_49.arff",), 555, 49, 6, 2.580, 0, ()),
    (("water-quality.arff",), 1060, 16, 14, 5.073, 0, ()),
    (("GpositivePseAAC.arff",), 519, 440, 4, 1.008, 0, ()),
    (("VirusPseAAC.arff",), 207, 440, 6, 1.217, 0, ()),
    (("PlantPseAAC.arff",), 978, 440, 12, 1.079, 0, ()),
    (("genbase.arff",), 662, 1185, 27, 1.252, 1185, ("protein",)),
    (("medical.arff",), 978, 1449, 45, 1.245, 1449, ()),
    (("enron.arff",), 1702, 1001, 53, 3.378, 1001, ()),
    (("3sources_reuters1000-train.arff", "3sources_reuters1000-test.arff"), 294, 1000, 6, 1.126, 0, ()),
    (("GpositiveGO-train.arff", "GpositiveGO-test.arff"), 519, 912, 4, 1.008, 0, ()),
    (("HumanPseAAC.arff",), 3106, 440, 14, 1.185, 0, ()),
    (("langlog.arff",), 1460, 1004, 75, 1.180, 0, ()),
    (("CAL500.arff",), 502, 68, 174, 26.044, 0, ()),
    (("bibtex.arff",), 7395, 1836, 159, 2.402, 1836, ()),
]

_LOAD_TIMES: dict[str, float] = {}


def _timed_load(path: Path) -> Dataset:
    t0 = time.perf_counter()
    ds = load_arff(path)
    _LOAD_TIMES[path.name] = time.perf_counter() - t0
    return ds


@needs_mlc
@pytest.mark.parametrize("files, n, m, q, card, n_categorical, dropped", DOCUMENTED, ids=lambda v: str(v))
def test_shared_dataset_shapes(files, n, m, q, card, n_categorical, dropped):
    parts = [_timed_load(MLC / f) for f in files]
    assert sum(p.n_instances for p in parts) == n
    for p in parts:
        assert (p.n_features, p.n_labels) == (m, q)
        assert len(p.categorical_features) == n_categorical
        assert p.dropped_features == dropped
        assert p.X.dtype == np.float64 and p.Y.dtype == np.int8
        assert set(np.unique(p.Y)) <= {0, 1}
        assert p.Y.shape == (p.n_instances, q)
    Y = np.vstack([p.Y for p in parts])
    assert Y.sum(axis=1).mean() == pytest.approx(card, abs=5e-4)
    for p in parts:                                          # labels are in ARFF column order, never features
        assert not set(p.label_names) & set(p.feature_names)


@needs_mlc
def test_whole_collection_loads_fast():
    missing = [f for files, *_ in DOCUMENTED for f in files if f not in _LOAD_TIMES]
    for f in missing:                                        # when run alone, time the loads here
        _timed_load(MLC / f)
    assert sum(_LOAD_TIMES.values()) < 60.0, _LOAD_TIMES


@needs_mlc
def test_xml_overrides_stale_meka_flag_in_medical():
    ds = load_arff(MLC / "medical.arff")                     # relation name says '-C 45' (first 45)
    from ggp_automl.evaluation.data import _xml_labels
    assert set(ds.label_names) == set(_xml_labels(MLC / "medical.xml"))
    meka_reading = load_arff(MLC / "medical.arff", labels=45)
    assert set(meka_reading.label_names).isdisjoint(ds.label_names)


@needs_mlc
def test_label_order_is_arff_column_order_and_names_unescaped():
    yeast = load_arff(MLC / "yeast.arff")
    assert yeast.label_names == tuple(f"Class{i}" for i in range(1, 15))   # the XML lists them in another order
    birds = load_arff(MLC / "birds.arff")
    assert "Swainson's Thrush" in birds.label_names and "Stellar's Jay" in birds.label_names
    langlog = load_arff(MLC / "langlog.arff")               # labels are the first 75 attributes
    assert langlog.n_labels == 75 and langlog.label_names[0] == "Errors"


@needs_mlc
def test_values_agree_with_liac_arff():
    import arff

    for name, mode in (("flags.arff", arff.DENSE), ("medical.arff", arff.COO)):
        with open(MLC / name) as fh:
            raw = arff.load(fh, return_type=mode)
        attrs = raw["attributes"]
        names = [a[0].replace("\\'", "'") for a in attrs]
        if mode == arff.COO:
            vals, rows, cols = raw["data"]
            n = max(rows) + 1
            M = np.empty((n, len(attrs)), dtype=object)
            for j, a in enumerate(attrs):
                M[:, j] = a[1][0] if isinstance(a[1], list) else 0.0
            for v, i, j in zip(vals, rows, cols):
                M[i, j] = v
        else:
            M = np.array(raw["data"], dtype=object)
        ds = load_arff(MLC / name)
        for k, feature in enumerate(ds.feature_names):
            a = attrs[names.index(feature)]
            col = M[:, names.index(feature)]
            expected = [np.nan if v is None else (a[1].index(v) if isinstance(a[1], list) else float(v)) for v in col]
            np.testing.assert_array_equal(ds.X[:, k], np.array(expected, dtype=float))
        for k, label in enumerate(ds.label_names):
            np.testing.assert_array_equal(ds.Y[:, k], [int(v) for v in M[:, names.index(label)]])


# ---------------------------------------------------------------------------------------------------------------
# MEKA fold files (../shared/datasets/mlc-folds)
# ---------------------------------------------------------------------------------------------------------------

FOLD_TABLE = [
    ("Flags", 194, 19, 7, [153, 155, 157, 157, 154]),
    ("Emotions", 593, 72, 6, [477, 475, 471, 475, 474]),
    ("CHD_49", 555, 49, 6, [442, 445, 446, 442, 445]),
    ("Birds", 645, 260, 19, [516] * 5),
    ("GpositivePseAAC", 519, 440, 4, [415, 415, 416, 415, 415]),
    ("Water-quality", 1060, 16, 14, [849, 849, 848, 850, 844]),
    ("Yeast", 2417, 103, 14, [1927, 1936, 1936, 1943, 1926]),
]


@needs_folds
@pytest.mark.parametrize("folder, n, m, q, train_sizes", FOLD_TABLE, ids=[t[0] for t in FOLD_TABLE])
def test_meka_fold_files_load(folder, n, m, q, train_sizes):
    d = FOLDS / folder
    for k, n_train in enumerate(train_sizes, start=1):
        train, test = load_split(d / f"{folder}-train{k}.arff", d / f"{folder}-test{k}.arff")
        assert (train.n_labels, test.n_labels) == (q, q)
        assert (train.n_features, test.n_features) == (m, m)
        assert (train.n_instances, test.n_instances) == (n_train, n - n_train)
        assert train.label_names == test.label_names
    whole = d / f"{folder}.arff"
    if whole.exists():
        ds = load_arff(whole)
        assert (ds.n_instances, ds.n_features, ds.n_labels) == (n, m, q)


@needs_folds
@needs_mlc
def test_meka_fold_labels_are_the_last_attributes():
    """'-C -q' means the last q attributes: the fold labels are the MULAN labels of the same dataset."""
    folds = load_arff(FOLDS / "Yeast" / "Yeast.arff")
    mulan = load_arff(MLC / "yeast.arff")
    assert folds.label_names == mulan.label_names
    assert folds.label_cardinality == pytest.approx(mulan.label_cardinality)


# ---------------------------------------------------------------------------------------------------------------
# Format quirks, on small synthetic files
# ---------------------------------------------------------------------------------------------------------------

def _arff(path: Path, relation: str, attributes: list[str], rows: list[str]) -> Path:
    path.write_text(f"@relation {relation}\n" + "".join(f"@attribute {a}\n" for a in attributes)
                    + "@data\n" + "".join(r + "\n" for r in rows))
    return path


NUMERIC4 = ["a numeric", "b numeric", "c {0,1}", "d {0,1}"]


@pytest.mark.parametrize("q, labels, features", [(2, ("a", "b"), ("c", "d")), (-2, ("c", "d"), ("a", "b"))])
def test_meka_positive_and_negative_q(tmp_path, q, labels, features):
    attrs = ["a {0,1}", "b {0,1}", "c {0,1}", "d {0,1}"]
    p = _arff(tmp_path / "m.arff", f"'m: -C {q} -split'", attrs, ["1,0,0,1", "0,1,1,1"])
    ds = load_arff(p)
    assert ds.label_names == labels and ds.feature_names == features
    cols = {"a": 0, "b": 1, "c": 2, "d": 3}
    raw = np.array([[1, 0, 0, 1], [0, 1, 1, 1]])
    np.testing.assert_array_equal(ds.Y, raw[:, [cols[x] for x in labels]])


def test_xml_precedence_escaped_quotes_and_column_order(tmp_path):
    p = _arff(tmp_path / "x.arff", "'x: -C 2'",
              ["'it\\'s' numeric", "f numeric", "\"q\\\"2\" {0,1}", "'z y' {0,1}"],
              ["0.5,1,1,0", "1.5,2,0,1", "?,3,1,1"])
    # the XML lists the labels in the opposite order of the ARFF columns
    (tmp_path / "x.xml").write_text('<?xml version="1.0"?><labels xmlns="http://mulan.sourceforge.net/labels">'
                                    '<label name="z y"></label><label name=\'q"2\'></label></labels>')
    ds = load_arff(p)
    assert ds.label_names == ('q"2', "z y")                    # ARFF column order, names unescaped
    assert ds.feature_names == ("it's", "f")
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1], [1, 1]])
    assert np.isnan(ds.X[2, 0]) and ds.X[1, 0] == 1.5


def test_xml_found_for_train_and_test_files(tmp_path):
    for part in ("train", "test"):
        _arff(tmp_path / f"s-{part}.arff", "s", ["f numeric", "l {0,1}"], ["1,1", "2,0"])
    (tmp_path / "s.xml").write_text('<labels><label name="l"/></labels>')
    train, test = load_split(tmp_path / "s-train.arff", tmp_path / "s-test.arff")
    assert train.label_names == test.label_names == ("l",)


def test_sparse_rows_and_nominal_encoding(tmp_path):
    attrs = ["colour {red,green,blue}", "w numeric", "flag {0,1}", "l1 {0,1}", "l2 {0,1}"]
    rows = ["{0 blue,1 2.5,3 1}", "{}", "{0 ?,2 1,4 1}", "{1 -1e-3, 3 1 , 4 1}"]
    ds = load_arff(_arff(tmp_path / "s.arff", "'s: -C -2'", attrs, rows))
    # omitted values are 0: numeric 0, or the first declared value of a nominal attribute
    np.testing.assert_array_equal(ds.X[:, 0], [2, 0, np.nan, 0])
    np.testing.assert_array_equal(ds.X[:, 1], [2.5, 0, 0, -1e-3])
    np.testing.assert_array_equal(ds.X[:, 2], [0, 0, 1, 0])
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 0], [0, 1], [1, 1]])
    assert ds.categorical_features == (0, 2)
    assert ds.categories[0] == ("red", "green", "blue")


def test_dense_quoted_values_dates_and_strings(tmp_path):
    attrs = ["'name with space' {'a, b', 'c\\'d', plain}", "when date \"yyyy-MM-dd'T'HH:mm:ss\"",
             "note string", "x real", "l {0,1}"]
    rows = ["'a, b', 1970-01-01T00:01:00, 'hello', 1, 1", "'c\\'d', ?, \"bye\", 2, 0", "plain,1970-01-02,hello,3,1"]
    ds = load_arff(_arff(tmp_path / "q.arff", "'q: -C -1'", attrs, rows), drop_ids=False)
    np.testing.assert_array_equal(ds.X[:, 0], [0, 1, 2])
    np.testing.assert_array_equal(ds.X[:, 1], [60, np.nan, 86400])
    assert ds.categories[2] == ("bye", "hello")
    np.testing.assert_array_equal(ds.X[:, 2], [1, 0, 1])
    assert ds.categorical_features == (0, 2)


def test_compressed_arff(tmp_path):
    text = "@relation 'g: -C 1'\n@attribute l {0,1}\n@attribute x numeric\n@data\n1,0.5\n0,0.25\n"
    with gzip.open(tmp_path / "g.arff.gz", "wt") as fh:
        fh.write(text)
    ds = load_dataset(tmp_path / "g.arff.gz")
    np.testing.assert_array_equal(ds.X[:, 0], [0.5, 0.25])
    assert ds.name == "g"


def _id_rows(n: int) -> list[str]:
    return [f"P{i:03d},{i % 3},{i % 2},{(i // 2) % 2}" for i in range(n)]


def test_identifier_columns_are_dropped(tmp_path):
    n = ID_MIN_ROWS + 5
    ids = ",".join(f"P{i:03d}" for i in range(n))
    attrs = [f"protein {{{ids}}}", "kind {0,1,2}", "l1 {0,1}", "l2 {0,1}"]
    p = _arff(tmp_path / "g.arff", "'g: -C -2'", attrs, _id_rows(n))
    ds = load_arff(p)
    assert ds.dropped_features == ("protein",) and ds.feature_names == ("kind",)
    assert ds.categorical_features == (0,)
    kept = load_arff(p, drop_ids=False)
    assert kept.feature_names == ("protein", "kind") and kept.X[3, 0] == 3


def test_identifier_rule_by_name_spares_binary_words(tmp_path):
    attrs = ["sample_id {s1,s2,s3}", "id {0,1}", "rowId {1,2,3}", "x numeric", "l {0,1}"]
    rows = ["s1,1,1,0.5,1", "s2,0,2,0.1,0", "s3,1,3,0.7,1", "s1,0,1,0.2,0"]
    ds = load_arff(_arff(tmp_path / "w.arff", "'w: -C -1'", attrs, rows))
    assert ds.dropped_features == ("sample_id", "rowId")
    assert ds.feature_names == ("id", "x")                     # a {0,1} word feature called 'id' is kept


def test_small_nominal_file_keeps_distinct_values(tmp_path):
    """Fewer than ID_MIN_ROWS rows: a categorical with a different value per row is not an identifier."""
    attrs = ["colour {r,g,b,y}", "l {0,1}"]
    ds = load_arff(_arff(tmp_path / "c.arff", "'c: -C -1'", attrs, ["r,1", "g,0", "b,1"]))
    assert ds.feature_names == ("colour",)


def test_load_split_applies_train_decisions_to_test(tmp_path):
    n = ID_MIN_ROWS + 5
    ids = ",".join(f"P{i:03d}" for i in range(n))
    attrs = [f"protein {{{ids}}}", "kind {0,1,2}", "note string", "l1 {0,1}", "l2 {0,1}"]
    train_rows = [f"P{i:03d},{i % 3},{'ab'[i % 2]},{i % 2},{(i // 2) % 2}" for i in range(n)]
    test_rows = ["P000,1,b,0,1", "P001,2,zz,1,1"]             # too few rows for the distinct-per-row rule
    tr = _arff(tmp_path / "d-train.arff", "'d: -C -2'", attrs, train_rows)
    te = _arff(tmp_path / "d-test.arff", "'d: -C -2'", attrs, test_rows)
    train, test = load_split(tr, te)
    assert train.dropped_features == test.dropped_features == ("protein",)
    assert train.feature_names == test.feature_names == ("kind", "note")
    assert train.categories[1] == ("a", "b") == test.categories[1]
    np.testing.assert_array_equal(test.X[:, 1], [1, np.nan])     # 'zz' was never seen in training
    alone = load_arff(te)                                        # loaded alone, the test file keeps 'protein'
    assert "protein" in alone.feature_names


def test_csv_with_named_labels(tmp_path):
    p = tmp_path / "d.csv"
    p.write_text("x, colour ,y1,y2,x2\n1.5,red,1,0,NA\n2, blue,0,1,3\n?,red,1,1,4\n")
    ds = load_csv(p, ["y1", "y2"])
    assert ds.label_names == ("y1", "y2") and ds.feature_names == ("x", "colour", "x2")
    np.testing.assert_array_equal(ds.X, [[1.5, 1, np.nan], [2, 0, 3], [np.nan, 1, 4]])
    assert ds.categorical_features == (1,) and ds.categories[1] == ("blue", "red")
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1], [1, 1]])
    assert load_dataset(p, label_columns=["y2", "y1"]).label_names == ("y1", "y2")   # column order


def test_from_arrays_numpy_and_objects():
    X = np.array([[1.0, "a", None], [2.0, "b", 3], [np.nan, "a", 4]], dtype=object)
    Y = np.array([[True, False], [False, True], [True, True]])
    ds = from_arrays(X, Y, feature_names=["num", "cat", "mixed"], label_names=["p", "q"])
    np.testing.assert_array_equal(ds.X, [[1, 0, np.nan], [2, 1, 3], [np.nan, 0, 4]])
    assert ds.categorical_features == (1,) and ds.categories[1] == ("a", "b")
    assert ds.Y.dtype == np.int8 and ds.label_names == ("p", "q")
    ds2 = from_arrays(np.array([[0, 1.5], [2, 2.5]]), np.array([1, 0]), categorical_features=[0])
    assert ds2.categorical_features == (0,) and ds2.categories[0] == ("0", "1", "2") and ds2.n_labels == 1
    with pytest.raises(DataError, match="integer codes"):
        from_arrays(np.array([[0.5], [1.0]]), np.array([1, 0]), categorical_features=[0])


def test_from_arrays_copies_and_freezes():
    X = np.arange(6, dtype=float).reshape(3, 2)
    ds = from_arrays(X, np.array([[1, 0], [0, 1], [1, 1]]))
    X[0, 0] = 99.0
    assert ds.X[0, 0] == 0.0                                   # the caller's array is not shared
    with pytest.raises(ValueError):
        ds.X[0, 0] = 1.0
    with pytest.raises(AttributeError):
        ds.name = "other"                                      # type: ignore[misc]
    sub = ds.subset([2, 0])
    np.testing.assert_array_equal(sub.Y, [[1, 1], [1, 0]])
    assert sub.feature_names == ds.feature_names


def test_from_arrays_pandas():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"n": [1.0, None, 3.0], "c": pd.Categorical(["u", "v", None], categories=["v", "u"]),
                      "s": ["x", "y", "x"], "i": pd.array([1, None, 3], dtype="Int64")})
    Y = pd.DataFrame({"l1": [1, 0, 1], "l2": [False, True, True]})
    ds = from_arrays(X, Y)
    assert ds.feature_names == ("n", "c", "s", "i") and ds.label_names == ("l1", "l2")
    np.testing.assert_array_equal(ds.X, [[1, 1, 0, 1], [np.nan, 0, 1, np.nan], [3, np.nan, 0, 3]])
    assert ds.categorical_features == (1, 2) and ds.categories[1] == ("v", "u")
    np.testing.assert_array_equal(ds.Y, [[1, 0], [0, 1], [1, 1]])


def test_openml_conversion(monkeypatch):
    import sklearn.datasets

    def fake_fetch(**kwargs):
        assert kwargs["name"] == "toy" and kwargs["as_frame"] is False
        data = np.array([[0.5, 1, 0, 1], [1.5, 0, 1, 1], [np.nan, 2, 1, 0]])
        return types.SimpleNamespace(data=data, feature_names=["x", "colour", "L1", "L2"],
                                     categories={"colour": ["r", "g", "b"], "L1": ["FALSE", "TRUE"], "L2": ["0", "1"]},
                                     details={"name": "toy", "default_target_attribute": "L1,L2"})

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", fake_fetch)
    ds = load_openml("toy")
    assert ds.source == "openml:toy" and ds.label_names == ("L1", "L2")
    np.testing.assert_array_equal(ds.Y, [[0, 1], [1, 1], [1, 0]])
    assert ds.categorical_features == (1,) and ds.categories[1] == ("r", "g", "b")
    assert load_dataset("openml:toy").n_instances == 3


def test_openml_without_network_is_a_data_error(monkeypatch):
    import sklearn.datasets

    def offline(**kwargs):
        raise URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(sklearn.datasets, "fetch_openml", offline)
    with pytest.raises(DataError, match=r"openml:yeast: cannot download .*network"):
        load_openml("yeast")
    with pytest.raises(DataError, match=r"openml:40597"):
        load_dataset("openml:40597")


# ---------------------------------------------------------------------------------------------------------------
# Errors: a DataError naming the file (and the line where one applies)
# ---------------------------------------------------------------------------------------------------------------

ERROR_CASES = [
    ("no-labels", "@relation x\n@attribute a numeric\n@attribute b numeric\n@data\n1,0\n", None,
     r"no-labels\.arff: the last attribute .b. is numeric, so it is not a class"),
    ("not-01", "@relation 'x: -C -1'\n@attribute a numeric\n@attribute l numeric\n@data\n1,0\n2,2\n", None,
     r"not-01\.arff:6: label 'l' has value 2"),
    ("nominal-label", "@relation 'x: -C -1'\n@attribute a numeric\n@attribute l {no,yes}\n@data\n1,no\n", None,
     r"nominal-label\.arff:5: label 'l' has value 'no'"),
    ("missing-label", "@relation 'x: -C -1'\n@attribute a numeric\n@attribute l {0,1}\n@data\n1,1\n1,?\n", None,
     r"missing-label\.arff:6: label 'l' is missing"),
    ("xml-mismatch", "@relation x\n@attribute a numeric\n@attribute l {0,1}\n@data\n1,1\n",
     '<labels><label name="zz"/></labels>', r"xml-mismatch\.xml: .*does not match"),
    ("bad-xml", "@relation x\n@attribute a numeric\n@attribute l {0,1}\n@data\n1,1\n", "<labels><label",
     r"bad-xml\.xml: cannot read the MULAN label file"),
    ("empty", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n% nothing\n", None,
     r"empty\.arff: the dataset has no instances"),
    ("no-data", "@relation x\n@attribute a numeric\n", None, r"no-data\.arff: not an ARFF file"),
    ("ragged", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n1,2\n1,2,3\n", None,
     r"ragged\.arff:6: 3 values, but 2 attributes"),
    ("undeclared", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute c {r,g}\n@data\n1,r\n0,b\n", None,
     r"undeclared\.arff:6: value 'b' is not declared for nominal attribute 'c'"),
    ("not-number", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n1,2\n0,abc\n", None,
     r"not-number\.arff:6: attribute 'a' is numeric but the value is 'abc'"),
    ("bad-attribute", "@relation x\n@attribute\n@data\n", None, r"bad-attribute\.arff:2: malformed @attribute"),
    ("bad-type", "@relation x\n@attribute a numerik\n@data\n", None, r"bad-type\.arff:2: .*unknown type"),
    ("sparse-range", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n{0 1,5 2}\n", None,
     r"sparse-range\.arff:5: sparse index 5 is out of range"),
    ("sparse-bad", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n{0 1,1}\n", None,
     r"sparse-bad\.arff:5: malformed sparse row"),
    ("sparse-twice", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute a numeric\n@data\n{1 2,1 3}\n", None,
     r"sparse-twice\.arff:5: sparse index 1 appears twice"),
    ("header-junk", "@relation x\nhello\n@data\n", None, r"header-junk\.arff:2: unexpected line"),
    ("all-labels", "@relation 'x: -C 2'\n@attribute l {0,1}\n@attribute m {0,1}\n@data\n1,0\n", None,
     r"all-labels\.arff: -C 2 with 2 attributes"),
    ("duplicate", "@relation 'x: -C 1'\n@attribute l {0,1}\n@attribute l numeric\n@data\n1,0\n", None,
     r"duplicate\.arff:3: attribute 'l' is declared twice"),
]


@pytest.mark.parametrize("stem, arff_text, xml_text, pattern", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_error_names_file_and_line(tmp_path, stem, arff_text, xml_text, pattern):
    p = tmp_path / f"{stem}.arff"
    p.write_text(arff_text)
    if xml_text is not None:
        (tmp_path / f"{stem}.xml").write_text(xml_text)
    with pytest.raises(DataError, match=pattern):
        load_arff(p)


def test_file_level_errors(tmp_path):
    with pytest.raises(DataError, match=r"nothere\.arff: no such file"):
        load_arff(tmp_path / "nothere.arff")
    (tmp_path / "bin.arff").write_bytes(b"\x00\x01\x02@relation")
    with pytest.raises(DataError, match=r"bin\.arff: not a text file"):
        load_arff(tmp_path / "bin.arff")
    (tmp_path / "broken.arff.gz").write_bytes(b"not gzip at all")
    with pytest.raises(DataError, match=r"broken\.arff\.gz: cannot read"):
        load_dataset(tmp_path / "broken.arff.gz")
    (tmp_path / "x.parquet").write_text("")
    with pytest.raises(DataError, match=r"x\.parquet: unsupported format"):
        load_dataset(tmp_path / "x.parquet")
    with pytest.raises(DataError, match=r"labels\.xml: no such label file"):
        _arff(tmp_path / "ok.arff", "x", ["a numeric", "l {0,1}"], ["1,1"])
        load_arff(tmp_path / "ok.arff", labels=str(tmp_path / "labels.xml"))
    with pytest.raises(DataError, match=r"ok\.arff: .*labels argument.*'nope'"):
        load_arff(tmp_path / "ok.arff", labels=["nope"])


def test_csv_errors(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text("a,l\n1,0\n2,1,3\n")
    with pytest.raises(DataError, match=r"c\.csv:3: 3 fields, but the header has 2"):
        load_csv(p, ["l"])
    p.write_text("a,l\n1,0\n2,5\n")
    with pytest.raises(DataError, match=r"c\.csv:3: label 'l' has value 5"):
        load_csv(p, ["l"])
    with pytest.raises(DataError, match=r"c\.csv: 'zz' is not an attribute of the file"):
        load_csv(p, ["zz"])
    p.write_text("a,l\n")
    with pytest.raises(DataError, match=r"c\.csv: the dataset has no instances"):
        load_csv(p, ["l"])
    p.write_text("")
    with pytest.raises(DataError, match=r"c\.csv: empty file"):
        load_csv(p, ["l"])
    with pytest.raises(DataError, match=r"c\.csv: a CSV file does not say which columns are the targets"):
        load_dataset(p)


def test_array_errors():
    with pytest.raises(DataError, match=r"arrays: X has 3 rows but Y has 2"):
        from_arrays(np.zeros((3, 2)), np.zeros((2, 1)))
    with pytest.raises(DataError, match=r"mine: label column 0 has value 2"):
        from_arrays(np.zeros((2, 2)), np.array([[1], [2]]), source="mine")
    with pytest.raises(DataError, match=r"arrays: the dataset has no instances"):
        from_arrays(np.zeros((0, 2)), np.zeros((0, 1)))

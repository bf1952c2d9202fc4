"""Dataset meta-data read from file headers (the full loaders come with the mapper issue)."""
from __future__ import annotations

import pytest

from evaluation import default_data
from evaluation.metadata import read_meta
from gp.errors import DataError
from tests.conftest import MLC_DATA, requires_shared

# (file, q, m, n) as documented in ../shared/datasets/mlc/README.md
DOCUMENTED = [
    ("emotions.arff", 6, 72, 593), ("yeast.arff", 14, 103, 2417), ("flags.arff", 7, 19, 194),
    ("birds.arff", 19, 260, 645), ("medical.arff", 45, 1449, 978), ("langlog.arff", 75, 1004, 1460),
    ("VirusPseAAC.arff", 6, 440, 207), ("GpositiveGO-train.arff", 4, 912, 347), ("CAL500.arff", 174, 68, 502),
]


@requires_shared(MLC_DATA)
@pytest.mark.parametrize("name, q, m, n", DOCUMENTED)
def test_shared_datasets_meta(name, q, m, n):
    meta = read_meta(MLC_DATA / name)
    assert (meta.n_labels, meta.n_features, meta.n_instances) == (q, m, n)


def test_meka_header_negative_and_positive_q(tmp_path):
    for q in (2, -2):
        p = tmp_path / f"d{q}.arff"
        p.write_text(f"@relation 'x: -C {q}'\n" + "".join(f"@attribute a{i} numeric\n" for i in range(5))
                     + "@data\n" + "1,2,3,4,5\n" * 3)
        meta = read_meta(p)
        assert (meta.n_labels, meta.n_features, meta.n_instances) == (2, 3, 3)


def test_xml_takes_precedence_over_minus_c(tmp_path):
    p = tmp_path / "d.arff"
    p.write_text("@relation 'x: -C 3'\n@attribute 'it\\'s' numeric\n@attribute b numeric\n@attribute c numeric\n"
                 "@data\n1,2,3\n")
    (tmp_path / "d.xml").write_text('<labels xmlns="http://mulan.sourceforge.net/labels">'
                                    '<label name="it\'s"></label></labels>')
    assert read_meta(p).n_labels == 1


@pytest.mark.parametrize("content, fragment", [
    ("@relation x\n@attribute a numeric\n@attribute b numeric\n@data\n1,2\n", "no labels found"),
    ("@relation 'x -C 1'\n@attribute a numeric\n@attribute b numeric\n@data\n", "no instances"),
    ("@relation 'x -C 2'\n@attribute a numeric\n@attribute b numeric\n@data\n1,0\n", "need 1 ≤ labels < attributes"),
    ("just text\n", "no @data section"),
])
def test_bad_headers(tmp_path, content, fragment):
    p = tmp_path / "bad.arff"
    p.write_text(content)
    with pytest.raises(DataError, match=fragment):
        read_meta(p)


def test_label_file_that_does_not_match(tmp_path):
    p = tmp_path / "d.arff"
    p.write_text("@relation x\n@attribute a numeric\n@attribute b numeric\n@data\n1,0\n")
    (tmp_path / "d.xml").write_text('<labels><label name="zz"></label></labels>')
    with pytest.raises(DataError, match="not attributes of d.arff"):
        read_meta(p)


def test_unsupported_and_missing_files(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        read_meta(tmp_path / "x.arff")
    (tmp_path / "x.csv").write_text("a,b\n")
    with pytest.raises(DataError, match="unsupported format"):
        read_meta(tmp_path / "x.csv")


def test_default_dataset_matches_its_meta():
    X, Y = default_data.load_default()
    assert X.shape == (default_data.N_INSTANCES, default_data.N_FEATURES)
    assert Y.shape == (default_data.N_INSTANCES, default_data.N_LABELS)
    assert set(Y.ravel()) <= {0, 1}
    X2, _ = default_data.load_default()
    assert (X == X2).all()

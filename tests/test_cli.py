"""The command line: output, exit codes and clear messages (never a traceback)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from ggp_automl.cli import main
from .conftest import GRAMMARS, MLC_DATA, ROOT, requires_shared


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120)


def test_check_prints_the_analysis():
    r = run("check", "--grammar", "grammars/small.bnf")
    assert r.returncode == 0, r.stderr
    assert "grammars/small.bnf: OK" in r.stdout
    assert "algorithm combinations                 21" in r.stdout
    assert "configurations (reals = 100 values)" in r.stdout
    assert "Traceback" not in r.stderr


def test_check_large_with_dataset_shape():
    r = run("check", "--grammar", "grammars/large.bnf", "--labels", "14", "--features", "103", "--rules")
    assert r.returncode == 0, r.stderr
    assert "23,499" in r.stdout
    assert "<JRip>  2,000" in r.stdout


def test_sample_is_deterministic_and_prints_trees():
    a = run("sample", "--grammar", "grammars/large.bnf", "-n", "3", "--seed", "7")
    b = run("sample", "--grammar", "grammars/large.bnf", "-n", "3", "--seed", "7")
    assert a.returncode == 0, a.stderr
    assert a.stdout == b.stdout
    assert a.stdout.count("\n[") == 3 and "<Start>" in a.stdout
    c = run("sample", "--grammar", "grammars/large.bnf", "-n", "3", "--seed", "8", "--phenotypes", "--quiet")
    assert len(c.stdout.splitlines()) == 3


def test_sample_rhh_and_full(capsys):
    assert main(["sample", "--grammar", str(GRAMMARS / "medium.bnf"), "-n", "4", "--method", "rhh",
                 "--phenotypes", "--quiet"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 4
    assert main(["sample", "--grammar", str(GRAMMARS / "medium.bnf"), "-n", "2", "--method", "full"]) == 0


@requires_shared(MLC_DATA / "emotions.arff")
def test_sample_with_a_dataset():
    r = run("sample", "--grammar", "grammars/small.bnf", "-n", "2", "--data", str(MLC_DATA / "emotions.arff"))
    assert r.returncode == 0, r.stderr
    assert "L=6, M=72, N=593" in r.stdout


def test_grammar_error_exit_code_and_message(tmp_path):
    bad = tmp_path / "bad.bnf"
    bad.write_text("<a> ::= <b> x\n<c> ::= y\n")
    r = run("check", "--grammar", str(bad))
    assert r.returncode == 1
    assert f"{bad}:1:9: error: undefined non-terminal <b>" in r.stderr
    assert "^" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.parametrize("args, code, fragment", [
    (["check"], 2, "the following arguments are required: --grammar"),
    (["check", "--grammar", "nope.bnf"], 1, "cannot read grammar file nope.bnf"),
    (["sample", "--grammar", "grammars/small.bnf", "-n", "0"], 2, "expected a number ≥ 1"),
    (["sample", "--grammar", "grammars/small.bnf", "--seed", "x"], 2, "expected an integer seed"),
    (["sample", "--grammar", "grammars/small.bnf", "--labels", "3"], 2, "--labels and --features go together"),
    (["sample", "--grammar", "grammars/small.bnf", "--data", "missing.arff"], 1, "missing.arff: no such file"),
    (["sample", "--grammar", "grammars/small.bnf", "--max-depth", "2"], 2, "below the grammar's minimum depth"),
    (["frobnicate"], 2, "invalid choice"),
])
def test_bad_arguments(args, code, fragment):
    r = run(*args)
    assert r.returncode == code, (r.stdout, r.stderr)
    assert fragment in r.stderr
    assert "Traceback" not in r.stderr


def test_empty_range_on_a_dataset_names_the_bound(tmp_path):
    g = tmp_path / "g.bnf"
    g.write_text("<s> ::= BR <a>\n<a> ::= KNN <n>\n<n> ::= RANDOM-INT(2, L)    #@ type=int default=2\n")
    r = run("sample", "--grammar", str(g), "--labels", "1", "--features", "4")
    assert r.returncode == 1
    assert f"{g}:3:9: error: <n>: empty range: lower bound 2 > upper bound 1" in r.stderr


def test_bad_dataset_file(tmp_path):
    data = tmp_path / "d.arff"
    data.write_text("@relation plain\n@attribute a numeric\n@attribute b numeric\n@data\n1,0\n")
    r = run("sample", "--grammar", "grammars/small.bnf", "--data", str(data))
    assert r.returncode == 1
    assert "the last attribute 'b' is numeric, so it is not a class" in r.stderr


def test_output_into_a_closed_pipe_is_not_a_traceback():
    cmd = f"{sys.executable} cli.py sample --grammar grammars/large.bnf -n 200 | head -1"
    r = subprocess.run(cmd, shell=True, capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert "Traceback" not in r.stderr

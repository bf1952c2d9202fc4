"""benchmarks/bench_weka.py: the harness's output parser, the summary and the table on fabricated records,
the fold files, and (when java, javac, weka.jar and ../shared are all there) one tiny WEKA job. Nothing slow,
no timing assertions."""
from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("bench_weka", ROOT / "benchmarks" / "bench_weka.py")
bench = importlib.util.module_from_spec(SPEC)
sys.modules["bench_weka"] = bench
SPEC.loader.exec_module(bench)

GLASS = bench.SLC_DIR / "glass.arff"


def cell(side, learner, dataset, fold, acc=None, time_s=None, status="ok", **extra):
    rec = {"kind": "cell", "side": side, "learner": learner, "dataset": dataset, "fold": fold, "status": status}
    if status == "ok":
        rec.update(acc=acc, time_s=time_s)
    return {**rec, **extra}


RECORDS = [
    {"kind": "jvm", "dataset": "glass", "fold": 1, "startup_s": 0.5, "java": "17", "weka": "3.9.7"},
    {"kind": "jvm", "dataset": "glass", "fold": 2, "startup_s": 0.7, "java": "17", "weka": "3.9.7"},
    # J48: ours 2 points worse on average, 4x slower
    cell("ours", "J48", "glass", 1, 0.60, 0.4), cell("weka", "J48", "glass", 1, 0.62, 0.1),
    cell("ours", "J48", "glass", 2, 0.70, 0.8), cell("weka", "J48", "glass", 2, 0.72, 0.2),
    # NaiveBayes: ours better and faster; a timeout on our side is left out of the means
    cell("ours", "NaiveBayes", "glass", 1, 0.50, 0.01), cell("weka", "NaiveBayes", "glass", 1, 0.45, 0.02),
    cell("ours", "NaiveBayes", "car-evaluation", 1, status="timeout", reason="killed"),
    cell("weka", "NaiveBayes", "car-evaluation", 1, 0.85, 0.05),
    # SGD: WEKA refuses multi-class data; a later record of the same side replaces an earlier one
    cell("ours", "SGD", "glass", 1, 0.40, 0.3), cell("weka", "SGD", "glass", 1, status="error", reason="binary only"),
    cell("ours", "Bagging", "glass", 1, 0.30, 9.0), cell("ours", "Bagging", "glass", 1, 0.66, 0.2),
    cell("weka", "Bagging", "glass", 1, 0.66, 0.1),
]


def test_parse_harness_line():
    assert bench.parse_harness_line('{"ready":1,"java":"17","weka":"3.9.7"}\n')["weka"] == "3.9.7"
    assert bench.parse_harness_line('{"begin":"J48|glass|1"}') == {"begin": "J48|glass|1"}
    rec = bench.parse_harness_line('{"id":"a","status":"ok","acc":0.5,"build_ms":[1.0],"test_ms":[2.0]}')
    assert rec["acc"] == 0.5 and rec["build_ms"] == [1.0]
    for chatter in ("", "Refreshing GOE props...", "{not json", '{"other": 1}', "[1, 2]"):
        assert bench.parse_harness_line(chatter) is None


def test_summary_on_fabricated_records():
    rows = {r["learner"]: r for r in bench.summarise(RECORDS)}
    j48 = rows["J48"]
    assert (j48["cells"], j48["both"]) == (2, 2)
    assert j48["ours_acc"] == pytest.approx(65.0) and j48["weka_acc"] == pytest.approx(67.0)
    assert j48["delta"] == pytest.approx(-2.0) and j48["ratio"] == pytest.approx(4.0)
    assert bench.flags(j48["delta"], j48["ratio"]) == "ACC T>3"
    nb = rows["NaiveBayes"]
    assert (nb["cells"], nb["both"]) == (2, 1) and nb["delta"] == pytest.approx(5.0)
    assert nb["ratio"] == pytest.approx(0.5) and nb["fails"] == {"ours": {"timeout": 1}, "weka": {}}
    assert bench.flags(nb["delta"], nb["ratio"]) == ""
    sgd = rows["SGD"]
    assert sgd["both"] == 0 and sgd["delta"] is None and sgd["fails"]["weka"] == {"error": 1}
    bag = rows["Bagging"]  # the second "ours" record replaced the first
    assert bag["delta"] == pytest.approx(0.0) and bag["ratio"] == pytest.approx(2.0)
    assert bench.flags(bag["delta"], bag["ratio"]) == "T>1"
    assert list(rows) == ["J48", "NaiveBayes", "SGD", "Bagging"]  # the order of LEARNERS


def test_table_from_records(tmp_path):
    records = tmp_path / "weka.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in RECORDS) + '{"kind": "cell", "side"')  # a cut last line
    out = tmp_path / "weka.md"
    bench.main(["--table", "--records", str(records), "--out", str(out)])
    text = out.read_text()
    assert "median 0.60 s over 2 JVMs" in text
    row = next(line for line in text.splitlines() if line.startswith("| J48 | trees.J48 |"))
    assert "| 2 (2) | 65.0 | 67.0 | -2.0 | 4.00 |" in row and "ACC T>3" in row
    assert "ours 1 timeout" in next(line for line in text.splitlines() if line.startswith("| NaiveBayes | bayes"))
    assert "weka 1 error" in next(line for line in text.splitlines() if line.startswith("| SGD |"))
    assert "| NaiveBayes | car-evaluation | 1 (0) |" in text
    assert "Learners flagged: ACC 1, T>1 2 (of which T>3 1), of 3 with finished cells." in text


def test_learners_are_registered_single_label_algorithms():
    from ggp_automl.spaces.registry import load_all

    registry = load_all()
    for name, learner in bench.LEARNERS.items():
        assert registry[name].kind in ("slc", "meta-slc"), name
        assert learner.weka.startswith("weka.classifiers.")
        assert bool(learner.base) == (registry[name].kind == "meta-slc"), name
        if learner.base:
            assert registry[learner.base].kind == "slc"
    for name in ("J48", "Bagging", "Stacking"):  # each builds, wrapped, at the defaults
        assert hasattr(bench.build_ours(bench.LEARNERS[name]), "fit")


@pytest.mark.skipif(not GLASS.exists(), reason="../shared/datasets/slc is absent")
def test_fold_files_partition_the_rows(tmp_path):
    pairs = bench.fold_files(GLASS, tmp_path)
    assert len(pairs) == bench.OUTER

    def rows(path):
        lines = path.read_text().splitlines()
        at = next(i for i, x in enumerate(lines) if x.lower().startswith("@data"))
        return lines[at + 1:]

    tests = [rows(te) for _, te in pairs]
    assert sum(map(len, tests)) == 214
    for (tr, te), held in zip(pairs, tests):
        assert len(rows(tr)) + len(held) == 214
    assert bench.fold_files(GLASS, tmp_path) == pairs  # written once, then reused


def _weka_ready():
    if not GLASS.exists() or not shutil.which("java") or not shutil.which("javac"):
        return None
    for jar in (bench.CACHE / "weka.jar", Path("/tmp/wekadl/python_weka_wrapper3-0.3.3/python/weka/lib/weka.jar")):
        if jar.exists():
            return jar
    return None


@pytest.mark.skipif(_weka_ready() is None, reason="java, javac, weka.jar (cache) or ../shared is absent")
def test_harness_runs_one_job(tmp_path):
    jar = _weka_ready()
    classes = bench.compile_harness(tmp_path, jar)
    jobs = tmp_path / "jobs.tsv"
    jobs.write_text(f"z|glass|1\tweka.classifiers.rules.ZeroR\t\t{GLASS}\t{GLASS}\n"
                    f"s|glass|1\tweka.classifiers.functions.SGD\t\t{GLASS}\t{GLASS}\n")
    out = subprocess.run(bench.java_command(jar, classes, jobs, 1, 10.0), capture_output=True, text=True, timeout=120)
    recs = [r for r in map(bench.parse_harness_line, out.stdout.splitlines()) if r]
    assert "ready" in recs[0] and recs[1] == {"begin": "z|glass|1"}
    zero = recs[2]
    assert zero["status"] == "ok" and zero["n_test"] == 214 and len(zero["build_ms"]) == 1
    assert zero["acc"] == pytest.approx(76 / 214)  # the majority class of glass
    assert recs[4]["status"] == "error" and "nominal class" in recs[4]["reason"]  # SGD is binary-only

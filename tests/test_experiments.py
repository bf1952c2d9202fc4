"""Experiments: the TOML file and its checks, the grid (resume after kill -9, a Dask LocalCluster), the report.

The smoke experiment CI runs is ``benchmarks/experiments/smoke.toml`` (6 runs of 12 s, 2 at a time):
the module runs it once, killing the grid with SIGKILL part-way and resuming it, and the report
tests read the directory it leaves.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ggp_automl.experiments import load_experiment, make_report, run_experiment
from ggp_automl.experiments.grid import RUNS, load_directory, prepare, state_of
from ggp_automl.experiments.spec import ExperimentError
from ggp_automl.search.lock import in_use
from ggp_automl.search.rundir import read_jsonl

ROOT = Path(__file__).resolve().parents[1]
SMOKE = ROOT / "benchmarks" / "experiments" / "smoke.toml"
SMALL = ROOT / "grammars" / "small.bnf"


def cli(*args: str, timeout: float = 300, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=cwd)


def write(tmp_path: Path, text: str, name: str = "exp.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


BASE = f"""[experiment]
name = "t"
budget = "10s"
seeds = [0, 1]

[grammars]
small = "{SMALL}"

[methods.ggp]
method = "ggp"
population = 8

[methods.rs]
method = "random"

[datasets.synthetic]
data = "default"
outer_folds = 3
"""


# -- the experiment file ----------------------------------------------------------------------

def test_grid_expands_every_combination(tmp_path):
    exp = load_experiment(write(tmp_path, BASE))
    assert len(exp.runs) == 3 * 2 * 2  # folds × seeds × methods
    ids = [r.id for r in exp.runs]
    assert len(set(ids)) == len(ids) and ids[0] == "synthetic/f1/s0/ggp"
    run = exp.runs[0]
    assert run.args[:2] == ("--grammar", str(SMALL))
    assert "--fold" in run.args and run.args[run.args.index("--fold") + 1] == "1/3"
    assert "--trace-test" in run.args and run.args[run.args.index("--budget") + 1] == "10s"
    assert exp.runs[2].id == "synthetic/f1/s1/ggp" and exp.runs[2].args[exp.runs[2].args.index("--seed") + 1] == "1"


def test_several_grammars_label_the_configurations(tmp_path):
    text = BASE.replace('[grammars]\n', f'[grammars]\nmedium = "{ROOT / "grammars" / "medium.bnf"}"\n')
    configs = {r.config for r in load_experiment(write(tmp_path, text)).runs}
    assert configs == {"ggp@small", "ggp@medium", "rs@small", "rs@medium"}


@pytest.mark.parametrize("change, where, message", [
    (("population = 8", "population = 8\nsed = 3"), "exp.toml:12:", "unrecognized arguments: --sed"),
    (("population = 8", "population = 8\nseed = 3"), "exp.toml:12:", "seed is set by experiment.seeds"),
    (('method = "ggp"\npopulation = 8', 'method = "spggp"\npopulation = 12'), "exp.toml:11:", "multiple of the 8"),
    (('budget = "10s"', 'budget = "ten"'), "exp.toml:3:", "budget"),
    (('seeds = [0, 1]', 'seeds = [0, 0]'), "exp.toml:4:", "distinct"),
    (('outer_folds = 3', 'outer_folds = 1'), "exp.toml:18:", "outer_folds"),
    (('outer_folds = 3', 'outer_folds = 3\ncolour = 1'), "exp.toml:19:", "unknown dataset setting 'colour'"),
    (('name = "t"', 'name = "a b"'), "exp.toml:2:", "not a usable name"),
    ((f'small = "{SMALL}"', 'small = "nowhere.bnf"'), "exp.toml:7:", "does not exist"),
    (('budget = "10s"', 'budget = "10s"\nworkers = 0'), "exp.toml:4:", "workers is a whole number"),
])
def test_bad_files_say_where(tmp_path, change, where, message):
    path = write(tmp_path, BASE.replace(*change))
    with pytest.raises(ExperimentError) as info:
        load_experiment(path)
    assert where in str(info.value) and message in str(info.value), str(info.value)


def test_not_toml_gives_line_and_column(tmp_path):
    with pytest.raises(ExperimentError, match=r"exp\.toml:3:\d+: not valid TOML"):
        load_experiment(write(tmp_path, '[experiment]\nname = "t"\nbudget = \n'))


def test_cli_refuses_a_bad_file_without_a_traceback(tmp_path):
    r = cli("bench", str(write(tmp_path, BASE.replace("population = 8", "populaton = 8"))), "--dry-run")
    assert r.returncode == 1 and "exp.toml:" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = cli("bench", str(tmp_path / "missing.toml"))
    assert r.returncode == 1 and "cannot read the experiment file" in r.stderr
    r = cli("report", str(tmp_path))
    assert r.returncode == 1 and "not an experiment directory" in r.stderr and "Traceback" not in r.stderr


def test_fold_files_with_a_placeholder(tmp_path):
    for k in (1, 2):
        for part in ("train", "test"):
            (tmp_path / f"d-{part}{k}.arff").write_text("x")
    text = BASE.replace('data = "default"\nouter_folds = 3',
                        'data = "d-train{fold}.arff"\ntest = "d-test{fold}.arff"\nfolds = [1, 2]')
    exp = load_experiment(write(tmp_path, text))
    args = exp.runs[0].args
    assert args[args.index("--data") + 1] == str(tmp_path / "d-train1.arff")
    assert args[args.index("--test") + 1] == str(tmp_path / "d-test1.arff")
    with pytest.raises(ExperimentError, match="d-train3.arff does not exist"):
        load_experiment(write(tmp_path, text.replace("folds = [1, 2]", "folds = [3]")))


def test_a_directory_holds_one_experiment(tmp_path):
    exp = load_experiment(write(tmp_path, BASE))
    out = prepare(exp, tmp_path / "out")
    assert load_directory(out).runs == exp.runs
    other = load_experiment(write(tmp_path, BASE.replace('budget = "10s"', 'budget = "20s"'), "other.toml"))
    with pytest.raises(ExperimentError, match="holds another experiment"):
        prepare(other, out)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "file").write_text("x")
    with pytest.raises(ExperimentError, match="not an experiment directory"):
        prepare(exp, tmp_path / "junk")


# -- the smoke grid, killed and resumed; then its report ---------------------------------------

@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """Run the smoke experiment, kill -9 the grid once its first run has finished, resume it."""
    out = tmp_path_factory.mktemp("smoke") / "grid"
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "bench", str(SMOKE), "--out", str(out), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=ROOT)
    exp = load_experiment(SMOKE)
    dirs = [out / RUNS / r.directory for r in exp.runs]
    deadline = time.time() + 180
    while time.time() < deadline and not (any(state_of(d) == "done" for d in dirs)
                                          and any(state_of(d) == "interrupted" for d in dirs)):
        time.sleep(0.2)
    finished = {d: (d / "final.json").stat().st_mtime for d in dirs if state_of(d) == "done"}
    interrupted = [d for d in dirs if state_of(d) == "interrupted"]
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert finished and interrupted, "the grid never had a finished and a running run at once"
    time.sleep(1.0)
    assert not any(in_use(d) for d in interrupted), "a run outlived the killed grid"
    partial = cli("report", str(out), "--out", str(out.parent / "partial-report"))  # issue 24: half a grid
    partial_md = (out.parent / "partial-report" / "report.md").read_text() if partial.returncode == 0 else ""
    again = cli("bench", str(out), "--quiet")
    return {"out": out, "exp": exp, "finished": finished, "interrupted": interrupted, "again": again,
            "partial": partial, "partial_md": partial_md}


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_report_of_a_killed_grid_reports_what_finished_and_names_what_did_not(smoke):
    partial, md = smoke["partial"], smoke["partial_md"]
    assert partial.returncode == 0, partial.stdout + partial.stderr
    assert "Traceback" not in partial.stderr and "internal error" not in partial.stderr
    done = len(smoke["finished"])
    assert f"{done} done" in md, md[:2000]
    runs = {r.directory: r.id for r in smoke["exp"].runs}
    for d in smoke["interrupted"]:
        assert f"`{runs[d.name]}` (unfinished)" in md, md[:2000]
    assert "continues the unfinished ones and runs the missing ones" in md


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_killed_grid_resumes_without_repeating_work(smoke):
    again = smoke["again"]
    assert again.returncode == 0, again.stdout + again.stderr
    assert "python cli.py report" in again.stdout
    for d, mtime in smoke["finished"].items():  # finished runs are kept as they were
        assert (d / "final.json").stat().st_mtime == mtime
    for d in smoke["interrupted"]:  # the interrupted run was continued, not started again
        assert state_of(d) == "done"
        log = (smoke["out"] / "logs" / f"{d.name}.log").read_text()
        assert "--resume" in log
        numbers = [e["n"] for e in read_jsonl(d / "evaluations.jsonl")]
        assert numbers == list(range(len(numbers)))  # no evaluation logged twice
    assert all(state_of(smoke["out"] / RUNS / r.directory) == "done" for r in smoke["exp"].runs)


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_runs_of_a_grid_are_ordinary_run_directories(smoke):
    run = smoke["out"] / RUNS / smoke["exp"].runs[0].directory
    r = cli("inspect", str(run))
    assert r.returncode == 0 and "ggp" in r.stdout
    traced = [e for e in read_jsonl(run / "evaluations.jsonl") if e.get("test_fitness") is not None]
    assert traced, "--trace-test wrote no test fitness"
    assert all(0.0 <= e["test_fitness"] <= 1.0 for e in traced)
    config = json.loads((run / "config.json").read_text())
    assert config["data"]["fold"] == 1 and config["data"]["folds"] == 3


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_report_of_the_smoke_grid(smoke):
    r = cli("report", str(smoke["out"]), "--blocks", "fold")
    assert r.returncode == 0, r.stderr
    report = smoke["out"] / "report"
    md = (report / "report.md").read_text()
    assert "# Experiment smoke" in md and "6 done" in md
    assert "| dataset | ggp | random | beam |" in md and "**" in md
    assert "Friedman χ²_F" in md and "average rank" in md
    assert "What the runs cost" in md
    tex = (report / "report.tex").read_text()
    assert "\\toprule" in tex and "\\textbf" in tex
    pngs = {p.name for p in report.glob("*.png")}
    assert "anytime-synthetic-valid.png" in pngs and "anytime-synthetic-test.png" in pngs
    assert any(name.startswith("cd-") for name in pngs)
    for name in pngs:
        assert (report / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    other = smoke["out"] / "other-report"
    r = cli("report", str(smoke["out"]), "--measure", "accuracy", "--out", str(other))
    assert r.returncode == 0
    assert "No run of this grid has a test measure `accuracy`" in (other / "report.md").read_text()


# -- a Dask LocalCluster ----------------------------------------------------------------------

@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_grid_on_a_dask_cluster(tmp_path):
    from distributed import LocalCluster

    text = BASE.replace('seeds = [0, 1]', 'seeds = [0]\nparallel = 2').replace(
        'outer_folds = 3', 'outer_folds = 3\nfolds = [1]').replace('budget = "10s"', 'budget = "6s"')
    text = text.replace("population = 8", "population = 8\ngenerations = 1")
    path = write(tmp_path, text.replace('method = "random"', 'method = "random"\ngenerations = 1'))
    events = []
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        out = run_experiment(path, tmp_path / "grid", scheduler=cluster.scheduler_address,
                             observer=lambda event, **info: events.append((event, info)))
    exp = load_experiment(path)
    assert all(state_of(out / RUNS / r.directory) == "done" for r in exp.runs)
    finished = [info["outcome"] for event, info in events if event == "finished"]
    assert len(finished) == 2 and all(o.state == "done" for o in finished)
    assert make_report(out).exists()


def test_grid_process_leaves_no_orphans(tmp_path):
    """The run processes die with the grid (PR_SET_PDEATHSIG): a killed grid leaves nothing running."""
    if not sys.platform.startswith("linux"):
        pytest.skip("PR_SET_PDEATHSIG is Linux's")
    text = BASE.replace('seeds = [0, 1]', 'seeds = [0]').replace('budget = "10s"', 'budget = "60s"')
    path = write(tmp_path, text.replace('outer_folds = 3', 'outer_folds = 3\nfolds = [1]'))
    proc = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "bench", str(path), "--out", str(tmp_path / "g"),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ROOT)
    run = tmp_path / "g" / RUNS / "synthetic-f1-s0-ggp"
    deadline = time.time() + 60
    while time.time() < deadline and not in_use(run):
        time.sleep(0.1)
    assert in_use(run)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    while time.time() < deadline and in_use(run):
        time.sleep(0.1)
    assert not in_use(run)


def test_fold_of_an_outer_k_fold_on_the_command_line():
    import argparse

    from ggp_automl.search.options import fold_spec

    assert fold_spec("2") == (2, 5) and fold_spec("2/3") == (2, 3)
    for bad in ("4/3", "1/1", "0/3", "x/3", "1/x"):
        with pytest.raises(argparse.ArgumentTypeError):
            fold_spec(bad)


def test_an_outer_fold_holds_out_its_share():
    from ggp_automl.search.run import load_run_data

    parts = [load_run_data(None, None, k, None, "multilabel", folds=3) for k in (1, 2, 3)]
    total = parts[0].train.n_instances + parts[0].test.n_instances
    assert sum(p.test.n_instances for p in parts) == total
    assert all(abs(p.test.n_instances - total / 3) <= 0.1 * total / 3 for p in parts)  # iterative stratification
    assert parts[1].description["folds"] == 3 and parts[1].description["fold"] == 2


@pytest.mark.skipif(not (ROOT.parent / "shared" / "datasets").exists(), reason="../shared is optional")
@pytest.mark.parametrize("name", ["thesis-small", "pbil-ens", "methods"])
def test_shipped_experiments_load(name):
    exp = load_experiment(ROOT / "benchmarks" / "experiments" / f"{name}.toml")
    assert exp.runs and len({r.id for r in exp.runs}) == len(exp.runs)


def test_progress_lines_and_time_left():
    import io

    from ggp_automl.experiments.grid import Outcome
    from ggp_automl.experiments.live import GridProgress
    from ggp_automl.experiments.spec import Run

    runs = [Run(f"d/f1/s0/m{i}", f"m{i}", "ggp", "small", "d", 1, 0, ()) for i in range(4)]
    out = io.StringIO()
    progress = GridProgress(60.0, 2, live=False, stream=out)
    progress("start", total=5, pending=4)
    for run in runs[:2]:
        progress("started", run=run)
    progress("tick", running=[(runs[1], time.time())])
    progress("finished", outcome=Outcome(runs[0], "done", 70.0))
    assert progress.eta_seconds() == pytest.approx((2 * 70 + 70) / 2, abs=1)  # 2 to start, 1 running
    progress("finished", outcome=Outcome(runs[1], "failed", 3.0, "exit 1: error: bad data"))
    text = out.getvalue()
    assert "5 runs in the grid, 1 already finished, 4 to run" in text
    assert "[1/4] d/f1/s0/m0: done in 70 s" in text
    assert "[2/4] d/f1/s0/m1: failed in 3 s — exit 1: error: bad data" in text


def test_published_numbers_sit_beside_ours_and_holm_adjusts():
    from ggp_automl.experiments import report, tables

    records = [{"id": f"{d}/{c}", "config": c, "dataset": d, "fold": 1, "seed": 1, "status": "done",
                "test": {"fitness": v}} for d, vals in (("A", (0.6, 0.5)), ("B", (0.7, 0.65))) for c, v in
               zip(("GGP", "RS"), vals)]
    published = {"source": "thesis T6.17", "fitness": {"GGP": [0.626, 2.25], "RS": [0.628, 2.536]}}
    lines = report._published(tables.cell_table(records, "fitness"), "fitness", published)
    text = "\n".join(lines)
    assert "| this grid | 0.650 (1.000) | 0.575 (2.000) |" in text
    assert "| published | 0.626 (2.250) | 0.628 (2.536) |" in text and "thesis T6.17" in text
    assert report._holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])

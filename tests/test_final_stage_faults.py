"""Faults in the final stage of a run (issue 24): kill -9 at each of its steps, then ``--resume``.

The final stage re-evaluates the archive on a fresh split, refits the winner on all the training data,
builds the ensemble and writes ``best/`` and ``final.json``. A run killed at any of these steps and
resumed must lose nothing, repeat no logged evaluation, and return the same model as the same run left
alone (one worker, the same seed). The kill is real: a child process runs ``cli.main`` with an observer
hook that kills its whole process group (its evaluation workers too) when the run reaches the step.
"""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import joblib
import numpy as np
import pytest

from .conftest import ROOT

ARGS = ["--grammar", "grammars/small.bnf", "--population", "4", "--generations", "2", "--budget", "5m",
        "--eval-timeout", "60s", "--workers", "1", "--seed", "3", "--ensemble", "caruana:5", "--quiet"]

#: the child: cli.main with a hook that kill -9s the process group at a step of the final stage
CHILD = textwrap.dedent("""
    import os, signal, sys
    from ggp_automl.search import observer

    step = sys.argv[1]

    def die():
        os.killpg(os.getpgid(0), signal.SIGKILL)

    phase, evaluation = observer.Observers.on_phase, observer.Observers.on_evaluation

    def on_phase(self, name, detail=""):
        if name == step:
            die()
        phase(self, name, detail)

    def on_evaluation(self, record):
        evaluation(self, record)
        if step == "final-evaluation" and record.get("phase") == "final":
            die()

    observer.Observers.on_phase, observer.Observers.on_evaluation = on_phase, on_evaluation
    from ggp_automl.cli import main
    sys.exit(main(sys.argv[2:]))
""")


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("final-stage") / "reference"
    r = cli("evolve", *ARGS, "--out", str(out))
    assert r.returncode == 0, r.stderr
    return out


def _same_model(a: Path, b: Path) -> None:
    from ggp_automl.evaluation.default_data import load_default

    X, _ = load_default()
    first, second = joblib.load(a / "best" / "model.joblib"), joblib.load(b / "best" / "model.joblib")
    np.testing.assert_array_equal(first.predict(X), second.predict(X))
    np.testing.assert_allclose(first.predict_proba(X), second.predict_proba(X))


@pytest.mark.slow  # a reference run and, per step, a killed run and its resumption: about two minutes
@pytest.mark.parametrize("step", ["final", "final-evaluation", "refit", "ensemble"])
def test_kill_9_at_a_step_of_the_final_stage_then_resume_is_the_uninterrupted_run(reference, tmp_path, step):
    out = tmp_path / "run"
    killed = subprocess.run([sys.executable, "-c", CHILD, step, "evolve", *ARGS, "--out", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=600, start_new_session=True)
    assert killed.returncode == -9, (killed.returncode, killed.stderr[-2000:])
    assert not (out / "final.json").exists()
    before = records(out / "evaluations.jsonl")

    r = cli("evolve", "--resume", str(out), "--quiet")
    assert r.returncode == 0, r.stdout + r.stderr
    after = records(out / "evaluations.jsonl")
    assert after[:len(before)] == before  # nothing lost or rewritten
    assert [e["n"] for e in after] == list(range(len(after)))
    logged = [(e["phase"], e["split"], e["phenotype"]) for e in after]
    assert len(logged) == len(set(logged))  # nothing evaluated twice
    mine, theirs = json.loads((out / "final.json").read_text()), json.loads((reference / "final.json").read_text())
    assert mine["winner"] == theirs["winner"] and mine["status"] == theirs["status"] == "finished"
    assert [m["phenotype"] for m in mine["ensemble"]["members"]] == \
        [m["phenotype"] for m in theirs["ensemble"]["members"]]
    _same_model(out, reference)


KILLER = textwrap.dedent('''
    """An algorithm whose fit kills the Dask worker process that runs it (a segfault in a C library, the OOM killer)."""
    import multiprocessing
    import os
    import signal

    from sklearn.tree import DecisionTreeClassifier

    from ggp_automl.spaces.registry import register


    class WorkerKiller(DecisionTreeClassifier):
        def fit(self, X, y, sample_weight=None):
            # an isolated candidate runs in a child of the worker: the worker is its parent
            victim = os.getppid() if multiprocessing.parent_process() is not None else os.getpid()
            os.kill(victim, signal.SIGKILL)
            return super().fit(X, y, sample_weight)


    @register("WorkerKiller", kind="slc")
    def worker_killer(p):
        return WorkerKiller(random_state=p.random_state)
''')


@pytest.mark.slow  # a cluster whose workers die and are restarted: about half a minute
def test_a_dask_worker_killed_during_an_evaluation_leaves_the_run_going(tmp_path):
    from distributed import LocalCluster

    (tmp_path / "killer.py").write_text(KILLER)
    (tmp_path / "g.bnf").write_text("<S> ::= BR <c> <t>\n<c> ::= J48 | WorkerKiller | NaiveBayes\n"
                                    "<t> ::= PCut1    #@ type=cat default=PCut1\n")
    out = tmp_path / "run"
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        r = cli("evolve", "--grammar", str(tmp_path / "g.bnf"), "--plugin", str(tmp_path / "killer.py"), "--method",
                "random", "--population", "6", "--generations", "1", "--budget", "3m", "--eval-timeout", "60s",
                "--scheduler", cluster.scheduler_address, "--seed", "1", "--quiet", "--out", str(out))
    assert r.returncode == 0, r.stdout + r.stderr
    logged = records(out / "evaluations.jsonl")
    killed = [e for e in logged if "WorkerKiller" in e["phenotype"]]
    assert killed, [e["phenotype"] for e in logged]
    # Dask retries the task on another worker, which it kills too; then the task fails (KilledWorker) or the
    # data it needed die with the workers: either way the candidate is recorded as crashed, with why
    assert all(e["status"] == "crashed" and ("KilledWorker" in e["reason"] or "worker evaluating it died" in
                                             e["reason"]) for e in killed), [e["reason"] for e in killed]
    final = json.loads((out / "final.json").read_text())
    assert final["status"] == "finished" and "WorkerKiller" not in final["winner"]["phenotype"]

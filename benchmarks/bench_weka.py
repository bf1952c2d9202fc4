"""Issue 25, item 2: our WEKA-named single-label learners against WEKA 3.9.7 itself (not a test).

    python benchmarks/bench_weka.py                     # the grid: 30 learners x 16 UCI sets x 3 folds, resumable
    python benchmarks/bench_weka.py --table             # rewrite results/weka.md from results/weka.jsonl
    python benchmarks/bench_weka.py --quick             # smoke: 4 learners on glass, fold 1 (records in the cache dir)
    python benchmarks/bench_weka.py --learners J48 Bagging --datasets glass car-evaluation --folds 1

Cells: every registered single-label algorithm named after a WEKA classifier (``spaces/slc``; the base
and the ensemble learners of ``grammars/ensembles.bnf`` among them: BayesNet, NaiveBayes,
MultilayerPerceptron, SMO, KNN = IBk, KStar, J48, DecisionTable, RandomTree, RandomForest, Bagging,
AdaBoostM1, RandomCommittee, Stacking, Vote; see ``LEARNERS``) x the 16 UCI sets of
``../shared/datasets/slc`` x an outer stratified 3-fold, the folds of ``evolve --fold k/3`` (the
single-label task's class-stratified folds, seed 0): train on two thirds, test on the third. The folds
are written as ARFF files (the original header, the rows of the fold) into the cache directory, never
into the project; both sides read the same two files.

Both sides at default options. Ours: the registry's builder with no tree (``Params(name)``: the
reference grammars' ``#@ default=`` values, seed 1 = WEKA's ``-S 1``), a meta learner around WEKA's
default base (Bagging over REPTree, AdaBoostM1 over DecisionStump, ...), wrapped in
``spaces.model.SingleLabelModel`` (mean/mode imputation and one-hot encoding of nominal attributes
included, as in a run), data read by ``load_split`` (test columns and codes in the train file's order).
WEKA: the same algorithm's class at its defaults; where the project's defaults differ, WEKA is given the
project's configuration and the ``defaults`` column says so (Stacking and Vote: WEKA's defaults are
ZeroR and would compare nothing).

Measured per cell: test accuracy of both; time of a warm build: one warm-up fit+predict (which gives the
accuracy), then the median of ``--repeats`` (3) more, unless the warm-up took ``--long`` (10 s) or more,
when the warm-up alone is the time. WEKA runs in one JVM per fold (``weka/WekaTimer.java``, compiled into
the cache directory): build on the train file, ``distributionForInstance`` on every test row. The JVM
start-up (process start to ``main``) is reported separately. Ours runs in an isolated worker per cell
(``evaluation.isolation.run_isolated``, 1 thread). A cell whose warm-up exceeds ``--timeout`` (120 s) is
a timeout on that side (the worker or the JVM is killed at timeout + repeats x long; a killed JVM is
restarted for the fold's remaining learners).

WEKA: ``weka.jar`` 3.9.7 from the PyPI sdist ``python-weka-wrapper3==0.3.3``
(``pip download --no-deps`` into ``~/.cache/ggp-automl/weka``, or ``--weka-jar``); Java 17 (``java``,
``javac``) on the PATH. Records: one JSON line per side and cell in ``results/weka.jsonl`` (plus one per
JVM start), so an interrupted grid resumes where it stopped. Run it alone on the machine, under nice.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import tarfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
SLC_DIR = ROOT.parent / "shared" / "datasets" / "slc"
RESULTS = ROOT / "benchmarks" / "results"
RECORDS = RESULTS / "weka.jsonl"
TABLE = RESULTS / "weka.md"
HARNESS = Path(__file__).resolve().parent / "weka" / "WekaTimer.java"
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "ggp-automl" / "weka"
WEKA_SDIST = ("python-weka-wrapper3", "0.3.3")
JAR_MEMBER = "python/weka/lib/weka.jar"  # inside the sdist's top directory
OUTER, FOLD_SEED = 3, 0
QUICK_LEARNERS = ("ZeroR", "J48", "NaiveBayes", "Bagging")
QUICK_DATASETS = ("glass",)
W = "weka.classifiers."


@dataclass(frozen=True)
class Learner:
    name: str            # registry name
    weka: str            # WEKA class
    options: str = ""    # WEKA options ("" = WEKA's defaults)
    base: str = ""       # registry name of the base of a meta learner (WEKA's default base)
    defaults: str = "same"  # how the project's defaults differ from WEKA's (shown in the table)


#: every registered single-label algorithm, in the order of the table
LEARNERS = {learner.name: learner for learner in (
    Learner("ZeroR", W + "rules.ZeroR"),
    Learner("OneR", W + "rules.OneR"),
    Learner("DecisionTable", W + "rules.DecisionTable"),
    Learner("JRip", W + "rules.JRip"),
    Learner("PART", W + "rules.PART"),
    Learner("DecisionStump", W + "trees.DecisionStump"),
    Learner("J48", W + "trees.J48"),
    Learner("REPTree", W + "trees.REPTree"),
    Learner("RandomTree", W + "trees.RandomTree"),
    Learner("RandomForest", W + "trees.RandomForest"),
    Learner("LMT", W + "trees.LMT"),
    Learner("KNN", W + "lazy.IBk"),
    Learner("KStar", W + "lazy.KStar"),
    Learner("NaiveBayes", W + "bayes.NaiveBayes"),
    Learner("NaiveBayesMultinomial", W + "bayes.NaiveBayesMultinomial",
            defaults="same; WEKA refuses nominal attributes, both refuse negative values"),
    Learner("BayesNet", W + "bayes.BayesNet", f"-Q {W}bayes.net.search.local.K2 -- -P 2",
            defaults="ours: K2 with at most 2 parents (search-space notes §1.1.6; WEKA's default -P 1 is naive "
                     "Bayes); WEKA given ours"),
    Learner("LogisticRegression", W + "functions.Logistic"),
    Learner("SimpleLogistic", W + "functions.SimpleLogistic"),
    Learner("MultilayerPerceptron", W + "functions.MultilayerPerceptron",
            defaults="same options; ours updates per mini-batch (decision 10)"),
    Learner("SMO", W + "functions.SMO",
            "-C 1.0 -L 0.001 -P 1.0E-12 -N 0 -V -1 -W 1 -K \"" + W + "functions.supportVector.PolyKernel -E 1.0 -L\"",
            defaults="ours -L (lower-order terms, large.bnf's <ulo>; ensembles.bnf's default is off, as WEKA's)"),
    Learner("SGD", W + "functions.SGD", defaults="same; WEKA is binary-only, ours one-vs-rest"),
    Learner("VotedPerceptron", W + "functions.VotedPerceptron", defaults="same; WEKA is binary-only"),
    Learner("LWL", W + "lazy.LWL", base="DecisionStump"),
    Learner("ASC", W + "meta.AttributeSelectedClassifier", base="J48"),
    Learner("AdaBoostM1", W + "meta.AdaBoostM1", base="DecisionStump",
            defaults="same options; ours is SAMME with more than 2 classes (WEKA stops at a round of error >= 1/2)"),
    Learner("Bagging", W + "meta.Bagging", base="REPTree"),
    Learner("RandomCommittee", W + "meta.RandomCommittee", base="RandomTree"),
    Learner("RandomSubSpace", W + "meta.RandomSubSpace", base="REPTree"),
    Learner("Stacking", W + "meta.Stacking",
            f"-X 10 -M \"{W}functions.Logistic -R 1.0E-8 -M -1\" -S 1 -B {W}trees.J48 -B {W}bayes.NaiveBayes",
            base="J48", defaults="ours: base + NaiveBayes, Logistic meta (WEKA's default: ZeroR, -M ZeroR); "
                                 "WEKA given ours"),
    Learner("Vote", W + "meta.Vote", f"-S 1 -R AVG -B {W}trees.J48 -B {W}bayes.NaiveBayes",
            base="J48", defaults="ours: base + NaiveBayes, AVG (WEKA's default: ZeroR); WEKA given ours"),
)}


# ---------------------------------------------------------------------------------------------- WEKA side
def weka_jar(cache: Path, given: str | None) -> Path:
    """weka.jar: ``given``, else the cached copy, else extracted from the sdist that pip downloads."""
    if given:
        return Path(given)
    jar = cache / "weka.jar"
    if jar.exists():
        return jar
    cache.mkdir(parents=True, exist_ok=True)
    name, version = WEKA_SDIST
    sdist = cache / f"{name.replace('-', '_')}-{version}.tar.gz"
    if not sdist.exists():
        print(f"downloading {name}=={version} (the sdist holds weka.jar) into {cache}", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        f"{name}=={version}", "-d", str(cache)], check=True)
    with tarfile.open(sdist) as tar:
        member = tar.getmember(f"{name.replace('-', '_')}-{version}/{JAR_MEMBER}")
        with tar.extractfile(member) as src, open(jar.with_suffix(".part"), "wb") as dst:
            shutil.copyfileobj(src, dst)
    jar.with_suffix(".part").replace(jar)
    return jar


def compile_harness(cache: Path, jar: Path) -> Path:
    classes = cache / "classes"
    target = classes / "WekaTimer.class"
    if not target.exists() or target.stat().st_mtime < HARNESS.stat().st_mtime:
        classes.mkdir(parents=True, exist_ok=True)
        subprocess.run(["javac", "-nowarn", "-cp", str(jar), "-d", str(classes), str(HARNESS)], check=True)
    return classes


def java_command(jar: Path, classes: Path, jobs: Path, repeats: int, long_s: float) -> list[str]:
    return ["nice", "-n", "19", "java", "-Xmx2g", "-XX:ActiveProcessorCount=1",
            "--add-opens", "java.base/java.lang=ALL-UNNAMED", "-cp", f"{jar}{os.pathsep}{classes}",
            "WekaTimer", str(jobs), str(repeats), str(long_s * 1000)]


def parse_harness_line(line: str) -> dict | None:
    """One line of WekaTimer's output as a dict; None for anything else (WEKA's own chatter)."""
    line = line.strip()
    if not line.startswith("{"):
        return None
    try:
        out = json.loads(line)
    except json.JSONDecodeError:
        return None
    return out if isinstance(out, dict) and ({"ready", "begin", "id"} & out.keys()) else None


def run_weka_fold(jobs: list[tuple[str, Learner, Path, Path]], jar: Path, classes: Path, cache: Path,
                  args, emit) -> None:
    """Run ``jobs`` (id, learner, train, test) of one fold in one JVM (another after a kill), emitting records."""
    pending = list(jobs)
    first = True
    while pending:
        jobfile = cache / "jobs.tsv"
        jobfile.write_text("".join(f"{i}\t{ln.weka}\t{ln.options}\t{tr}\t{te}\n" for i, ln, tr, te in pending))
        log = open(cache / "jvm.log", "a")
        t0 = time.perf_counter()
        proc = subprocess.Popen(java_command(jar, classes, jobfile, args.repeats, args.long),
                                stdout=subprocess.PIPE, stderr=log, text=True)
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(x) for x in proc.stdout] + [lines.put(None)], daemon=True).start()

        def next_record(deadline: float) -> dict | None:
            while True:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    return None
                try:
                    line = lines.get(timeout=remaining)
                except queue.Empty:
                    return None
                if line is None:
                    return {"eof": True}
                rec = parse_harness_line(line)
                if rec is not None:
                    return rec

        ready = next_record(time.perf_counter() + 120)
        if ready is None or "ready" not in ready:
            proc.kill()
            proc.wait()
            raise RuntimeError(f"the JVM did not start (see {cache / 'jvm.log'})")
        if first:
            emit({"kind": "jvm", "dataset": pending[0][0].split("|")[1], "fold": int(pending[0][0].split("|")[2]),
                  "startup_s": round(time.perf_counter() - t0, 3), "java": ready.get("java"), "weka": ready.get("weka")})
            first = False
        while pending:
            job_id, learner, _, _ = pending[0]
            _, dataset, fold = job_id.split("|")
            key = {"kind": "cell", "side": "weka", "learner": learner.name, "dataset": dataset, "fold": int(fold),
                   "weka": f"{learner.weka} {learner.options}".strip()}
            begin = next_record(time.perf_counter() + 600)
            limit = args.timeout + args.repeats * args.long + 15  # + loading the fold's ARFF pair
            rec = next_record(time.perf_counter() + limit) if begin and begin.get("begin") == job_id else begin
            pending.pop(0)
            if rec is None or rec.get("eof"):
                why = (f"killed after {limit:g} s" if rec is None else "the JVM died")
                emit({**key, "status": "timeout" if rec is None else "crashed", "reason": why})
                proc.kill()
                proc.wait()
                break
            if rec.get("id") != job_id:
                raise RuntimeError(f"WekaTimer answered {rec} for job {job_id}")
            if rec["status"] != "ok":
                emit({**key, "status": "error", "reason": rec.get("reason", "")[:300]})
                continue
            times = [(b + t) / 1000 for b, t in zip(rec["build_ms"], rec["test_ms"])]
            warm = (rec["warm_build_ms"] + rec["warm_test_ms"]) / 1000
            emit({**key, "status": "ok" if warm <= args.timeout else "timeout", "acc": rec["acc"],
                  "n_test": rec["n_test"], "time_s": round(statistics.median(times), 6),
                  "fit_s": round(statistics.median(rec["build_ms"]) / 1000, 6),
                  "predict_s": round(statistics.median(rec["test_ms"]) / 1000, 6),
                  "warm_s": round(warm, 6), "timed": len(times)})
        else:
            proc.wait(timeout=60)
        log.close()


# ---------------------------------------------------------------------------------------------- our side
def build_ours(learner: Learner):
    from ggp_automl.spaces.params import Params
    from ggp_automl.spaces.registry import load_all

    registry = load_all()
    spec = registry[learner.name]
    params = Params(learner.name, random_state=1)
    if spec.kind == "meta-slc":
        return spec.build(params, registry[learner.base].build(Params(learner.base, random_state=1)))
    return spec.build(params)


def fit_predict_ours(learner: Learner, train: str, test: str, repeats: int, long_s: float) -> dict:
    """Runs in the isolated worker: warm-up fit+predict (the accuracy), then the timed repeats."""
    import numpy as np

    from ggp_automl.evaluation.data import load_split
    from ggp_automl.spaces.model import SingleLabelModel

    tr, te = load_split(train, test)

    def once():
        model = SingleLabelModel(build_ours(learner), list(tr.categorical_features) or None)
        t0 = time.perf_counter()
        model.fit(tr.X, tr.Y)
        t1 = time.perf_counter()
        pred = model.predict(te.X)
        return t1 - t0, time.perf_counter() - t1, float(np.mean(pred == te.Y))

    fit, predict, acc = once()
    runs = [(fit, predict)]
    if fit + predict < long_s:
        runs = [once()[:2] for _ in range(repeats)]
    return {"acc": acc, "n_test": int(len(te.Y)), "warm_s": fit + predict, "timed": len(runs),
            "time_s": statistics.median(f + p for f, p in runs),
            "fit_s": statistics.median(f for f, _ in runs), "predict_s": statistics.median(p for _, p in runs)}


def run_ours(learner: Learner, train: Path, test: Path, dataset: str, fold: int, args) -> dict:
    from ggp_automl.evaluation.isolation import Limits, run_isolated

    limit = args.timeout + args.repeats * args.long + 15
    out = run_isolated(fit_predict_ours, (learner, str(train), str(test), args.repeats, args.long),
                       Limits(timeout=limit, threads=1))
    key = {"kind": "cell", "side": "ours", "learner": learner.name, "dataset": dataset, "fold": fold}
    if out.status != "ok":
        return {**key, "status": out.status, "reason": out.reason.strip().splitlines()[-1][:300] if out.reason else ""}
    v = out.value
    return {**key, "status": "ok" if v["warm_s"] <= args.timeout else "timeout", "acc": v["acc"],
            "n_test": v["n_test"], **{k: round(v[k], 6) for k in ("time_s", "fit_s", "predict_s", "warm_s")},
            "timed": v["timed"]}


# ---------------------------------------------------------------------------------------------- folds
def fold_files(arff: Path, cache: Path) -> list[tuple[Path, Path]]:
    """The outer 3-fold of ``arff`` as (train, test) ARFF files in ``cache/folds``; written once."""
    import numpy as np

    from ggp_automl.evaluation.data import load_dataset

    out = [(cache / "folds" / f"{arff.stem}-{k}of{OUTER}-train.arff", cache / "folds" / f"{arff.stem}-{k}of{OUTER}-test.arff")
           for k in range(1, OUTER + 1)]
    if all(p.exists() for pair in out for p in pair):
        return out
    ds = load_dataset(arff)
    text = arff.read_text()
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.strip().lower().startswith("@data"))
    header = "\n".join(lines[: at + 1]) + "\n"
    rows = [line for line in lines[at + 1:] if line.strip() and not line.lstrip().startswith("%")]
    if len(rows) != len(ds.Y) or any(r.lstrip().startswith("{") for r in rows[:5]):
        raise RuntimeError(f"{arff}: {len(rows)} data lines for {len(ds.Y)} rows (or sparse rows): cannot cut it")
    (cache / "folds").mkdir(parents=True, exist_ok=True)
    # the folds of ``evolve --fold k/3`` (search/run.py): the task's stratified k-fold, seed 0
    for (learn, held_out), (train, test) in zip(ds.task.kfold(ds.Y, OUTER, np.random.default_rng(FOLD_SEED)), out):
        for idx, path in ((learn, train), (held_out, test)):
            part = path.with_suffix(".part")
            part.write_text(header + "".join(rows[i] + "\n" for i in sorted(idx)))
            part.replace(path)
    return out


# ---------------------------------------------------------------------------------------------- table
def read_records(path: Path) -> list[dict]:
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut by a kill
            continue
    return out


def cells(records: list[dict]) -> dict[tuple[str, str, int], dict[str, dict]]:
    """(learner, dataset, fold) -> {"ours": record, "weka": record}; the last record of a side wins."""
    out: dict = {}
    for r in records:
        if r.get("kind") == "cell":
            out.setdefault((r["learner"], r["dataset"], r["fold"]), {})[r["side"]] = r
    return out


def _fmt(x: float | None, spec: str = ".1f") -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else format(x, spec)


def flags(delta: float | None, ratio: float | None) -> str:
    out = []
    if delta is not None and delta < -1.0:
        out.append("ACC")
    if ratio is not None and ratio > 3.0:
        out.append("T>3")
    elif ratio is not None and ratio > 1.0:
        out.append("T>1")
    return " ".join(out)


def summarise(records: list[dict]) -> list[dict]:
    """One row per learner: mean accuracies over the cells both sides finished, median time ratio."""
    by_learner: dict[str, list[dict[str, dict]]] = {}
    for (learner, _, _), sides in cells(records).items():
        by_learner.setdefault(learner, []).append(sides)
    order = [n for n in LEARNERS if n in by_learner] + sorted(n for n in by_learner if n not in LEARNERS)
    rows = []
    for name in order:
        group = by_learner[name]
        both = [s for s in group if s.get("ours", {}).get("status") == "ok" and s.get("weka", {}).get("status") == "ok"]
        ours = [100 * s["ours"]["acc"] for s in both]
        weka = [100 * s["weka"]["acc"] for s in both]
        ratios = [s["ours"]["time_s"] / s["weka"]["time_s"] for s in both if s["weka"]["time_s"] > 0]
        fails = {side: {} for side in ("ours", "weka")}
        for s in group:
            for side in fails:
                st = s.get(side, {}).get("status", "missing")
                if st != "ok":
                    fails[side][st] = fails[side].get(st, 0) + 1
        mo, mw = (statistics.fmean(ours), statistics.fmean(weka)) if both else (None, None)
        rows.append({"learner": name, "cells": len(group), "both": len(both), "ours_acc": mo, "weka_acc": mw,
                     "delta": None if mo is None else mo - mw,
                     "ratio": statistics.median(ratios) if ratios else None,
                     "ours_s": statistics.median(s["ours"]["time_s"] for s in both) if both else None,
                     "weka_s": statistics.median(s["weka"]["time_s"] for s in both) if both else None,
                     "fails": fails})
    return rows


def _fails(f: dict) -> str:
    parts = [f"{side} {n} {st}" for side in ("ours", "weka") for st, n in sorted(f[side].items())]
    return ", ".join(parts) if parts else "–"


def write_table(records: list[dict], out: Path, command: str = "") -> str:
    rows = summarise(records)
    jvms = [r for r in records if r.get("kind") == "jvm"]
    lines = ["# Our WEKA-named learners against WEKA 3.9.7", ""]
    if command:
        lines += [f"`{command}` (`benchmarks/bench_weka.py`; the protocol is in its docstring); "
                  f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
                  + (f", Java {jvms[0].get('java')}, WEKA {jvms[0].get('weka')}" if jvms else "") + ".", ""]
    lines += ["Outer stratified 3-fold of each UCI set (the folds of `evolve --fold k/3`), both sides on the same "
              "train/test ARFF files, default options. Time = median of 3 warm fit+predict (ours, isolated "
              "worker, 1 thread) / build+test (WEKA, one warm JVM per fold), or the warm-up alone when it took "
              "≥ 10 s. Accuracy means and the time ratio are over the cells both sides finished. "
              "Flags: ACC = ours more than 1 point less accurate; T>1 / T>3 = median time ratio ours/WEKA "
              "above 1 / 3.", ""]
    if jvms:
        starts = [r["startup_s"] for r in jvms]
        lines += [f"JVM start-up (process start to `main`, not in any time below): median "
                  f"{statistics.median(starts):.2f} s over {len(starts)} JVMs (min {min(starts):.2f}, "
                  f"max {max(starts):.2f}).", ""]
    lines += ["| learner | WEKA class | cells (both ok) | acc ours % | acc WEKA % | Δ points | time ratio ours/WEKA "
              "(median) | ours s (median) | WEKA s (median) | flags | failures | defaults |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ln = LEARNERS.get(r["learner"])
        weka = (ln.weka.replace(W, "") + (f" ({ln.base})" if ln.base else "")) if ln else "?"
        lines.append(f"| {r['learner']} | {weka} | {r['cells']} ({r['both']}) | {_fmt(r['ours_acc'])} | "
                     f"{_fmt(r['weka_acc'])} | {_fmt(r['delta'], '+.1f')} | {_fmt(r['ratio'], '.2f')} | "
                     f"{_fmt(r['ours_s'], '.3f')} | {_fmt(r['weka_s'], '.3f')} | {flags(r['delta'], r['ratio'])} | "
                     f"{_fails(r['fails'])} | {ln.defaults if ln else ''} |")
    both = [r for r in rows if r["both"]]
    if both:
        lines += ["", f"Learners flagged: ACC {sum(r['delta'] < -1 for r in both)}, "
                      f"T>1 {sum(r['ratio'] is not None and r['ratio'] > 1 for r in both)} "
                      f"(of which T>3 {sum(r['ratio'] is not None and r['ratio'] > 3 for r in both)}), "
                      f"of {len(both)} with finished cells."]
    lines += ["", "Common to every row: ours imputes and one-hot encodes nominal attributes before the learner "
                  "(`SingleLabelModel`), WEKA's learners take them as they are (most trees, rules and Bayes "
                  "split on nominal values directly), so sets with nominal attributes (car-evaluation, "
                  "kr-vs-kp, nursery, dermatology, flags-religion, statlog-german-credit, abalone) also compare "
                  "the encodings.", "",
              "## Per learner and data set (mean over folds; time ratio: median over folds)", "",
              "| learner | data set | folds (both ok) | acc ours % | acc WEKA % | Δ points | time ratio | ours s | WEKA s | flags | failures |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    grouped: dict[tuple[str, str], list[dict]] = {}
    for (learner, dataset, _), sides in sorted(cells(records).items()):
        grouped.setdefault((learner, dataset), []).append(sides)
    order = {n: i for i, n in enumerate(LEARNERS)}
    for (learner, dataset), group in sorted(grouped.items(), key=lambda kv: (order.get(kv[0][0], 99), kv[0])):
        sub = summarise([s[side] for s in group for side in s])[0]
        lines.append(f"| {learner} | {dataset} | {sub['cells']} ({sub['both']}) | {_fmt(sub['ours_acc'])} | "
                     f"{_fmt(sub['weka_acc'])} | {_fmt(sub['delta'], '+.1f')} | {_fmt(sub['ratio'], '.2f')} | "
                     f"{_fmt(sub['ours_s'], '.3f')} | {_fmt(sub['weka_s'], '.3f')} | "
                     f"{flags(sub['delta'], sub['ratio'])} | {_fails(sub['fails'])} |")
    text = "\n".join(lines) + "\n"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    return text


# ---------------------------------------------------------------------------------------------- main
def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--learners", nargs="+", metavar="NAME", help=f"registry names (default: all {len(LEARNERS)})")
    ap.add_argument("--datasets", nargs="+", metavar="STEM", help="file stems of ../shared/datasets/slc (default: all)")
    ap.add_argument("--folds", nargs="+", type=int, choices=range(1, OUTER + 1), default=list(range(1, OUTER + 1)))
    ap.add_argument("--repeats", type=int, default=3, help="timed builds after the warm-up (default 3)")
    ap.add_argument("--long", type=float, default=10.0, help="a warm-up this long (s) is the time itself (default 10)")
    ap.add_argument("--timeout", type=float, default=120.0, help="per cell and side (s, default 120)")
    ap.add_argument("--table", action="store_true", help="only rewrite the table from the records")
    ap.add_argument("--quick", action="store_true",
                    help=f"smoke: {', '.join(QUICK_LEARNERS)} on {', '.join(QUICK_DATASETS)}, fold 1, "
                         "records and table in the cache directory")
    ap.add_argument("--cache", type=Path, default=CACHE, help=f"weka.jar, the compiled harness, the fold files (default {CACHE})")
    ap.add_argument("--weka-jar", help="use this weka.jar instead of downloading one")
    ap.add_argument("--records", type=Path, help="default: results/weka.jsonl (--quick: CACHE/quick/weka.jsonl)")
    ap.add_argument("--out", type=Path, help="default: results/weka.md (--quick: CACHE/quick/weka.md)")
    args = ap.parse_args(argv)
    if args.quick:
        args.learners = args.learners or list(QUICK_LEARNERS)
        args.datasets = args.datasets or list(QUICK_DATASETS)
        args.folds = [1]
    records_path = args.records or (args.cache / "quick" / "weka.jsonl" if args.quick else RECORDS)
    out = args.out or (args.cache / "quick" / "weka.md" if args.quick else TABLE)
    command = "python benchmarks/bench_weka.py" + (" " + " ".join(argv if argv is not None else sys.argv[1:])).rstrip()
    if args.table:
        write_table(read_records(records_path), out, command.replace(" --table", ""))
        print(f"written {out}")
        return

    unknown = [n for n in args.learners or () if n not in LEARNERS]
    if unknown:
        ap.error(f"unknown learners {unknown}; known: {', '.join(LEARNERS)}")
    learners = [LEARNERS[n] for n in (args.learners or LEARNERS)]
    files = {p.stem: p for p in sorted(SLC_DIR.glob("*.arff"))}
    if not files:
        ap.error(f"no data sets in {SLC_DIR}")
    missing = [d for d in args.datasets or () if d not in files]
    if missing:
        ap.error(f"unknown data sets {missing}; known: {', '.join(files)}")
    datasets = args.datasets or list(files)
    for tool in ("java", "javac"):
        if shutil.which(tool) is None:
            sys.exit(f"{tool} is not on the PATH (Java 17 is needed for WEKA)")
    args.cache.mkdir(parents=True, exist_ok=True)
    jar = weka_jar(args.cache, args.weka_jar)
    classes = compile_harness(args.cache, jar)

    records_path.parent.mkdir(parents=True, exist_ok=True)
    done = {(r["side"], r["learner"], r["dataset"], r["fold"]) for r in read_records(records_path) if r.get("kind") == "cell"}
    sink = open(records_path, "a")

    def emit(record: dict) -> None:
        sink.write(json.dumps(record) + "\n")
        sink.flush()
        if record.get("kind") == "cell":
            shown = (f"acc {100 * record['acc']:.1f} time {record['time_s']:.3f} s" if "acc" in record
                     else record.get("reason", ""))
            print(f"{record['dataset']} {record['fold']} {record['learner']:<22} {record['side']:<4} "
                  f"{record['status']:<7} {shown}", flush=True)
        else:
            print(f"{record['dataset']} {record['fold']} JVM start-up {record['startup_s']:.2f} s", flush=True)

    # imported once here, so that every forked worker has them (importing the registry takes seconds)
    from ggp_automl.evaluation.data import load_split  # noqa: F401
    from ggp_automl.spaces.model import SingleLabelModel  # noqa: F401
    from ggp_automl.spaces.registry import load_all
    load_all()

    start = time.perf_counter()
    for dataset in datasets:
        pairs = fold_files(files[dataset], args.cache)
        for fold in args.folds:
            train, test = pairs[fold - 1]
            jobs = [(f"{ln.name}|{dataset}|{fold}", ln, train, test) for ln in learners
                    if ("weka", ln.name, dataset, fold) not in done]
            if jobs:
                run_weka_fold(jobs, jar, classes, args.cache, args, emit)
            for ln in learners:
                if ("ours", ln.name, dataset, fold) not in done:
                    emit(run_ours(ln, train, test, dataset, fold, args))
    sink.close()
    write_table(read_records(records_path), out, command)
    print(f"written {out} ({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()

"""Hostile input never ends in a traceback (issue 9): arguments, run directories, crashes.

Two property tests drive generated inputs through the public entry point ``cli.main``, in
this process, and check what every case must satisfy: an exit code in the documented set,
no Python traceback and no internal error in the output, and a bounded time.

* generated argument lists: any subcommand, known options with valid and invalid values,
  unknown options, missing values, unicode, very long strings, negative and huge numbers,
  durations and memory sizes. A search would make each case last its budget, so the search
  loop itself is replaced by a fast path (:func:`_no_search`): everything before it —
  parsing, validation, grammar and data loading, the run directory and its lock, resume's
  reading of a run directory — runs for real;
* damaged run directories: files of a small real run (made once per module by a short
  ``evolve``) truncated, garbled, emptied, replaced or deleted, then ``inspect``,
  ``evolve --resume`` (with the real search loop) and ``predict``.

Then one test per class of bug the hostile-user report found, with the message each prints.
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import pickle
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ggp_automl import cli
from ggp_automl.evaluation import default_data
from .conftest import GRAMMARS, ROOT

SMALL = str(GRAMMARS / "small.bnf")
#: every case must end within this (the slowest legitimate ones load the large grammar and
#: generate a population of up to 10,000 trees; typical cases take well under a second)
BOUND_SECONDS = 30.0
#: fixed examples (derandomize) so that CI is reproducible; each test gives its own max_examples
PROPERTY = dict(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


@contextlib.contextmanager
def chdir(path: Path | str):
    """``contextlib.chdir`` (Python 3.11+), for 3.10."""
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def call(argv: list[str], cwd: Path | str) -> tuple[int, str, str, float]:
    """``cli.main(argv)`` in ``cwd``: (exit code, stdout, stderr, seconds)."""
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with chdir(cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(argv)
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - t0


def assert_clean(code: int, out: str, err: str, seconds: float, codes=(0, 1, 2)) -> None:
    assert code in codes, (code, out[-2000:], err[-2000:])
    assert "Traceback" not in out + err, err[-3000:]
    assert "internal error" not in err, err[-3000:]
    assert seconds < BOUND_SECONDS, seconds


def _no_search(config, grammar, data, state, run, observers=(), restored=(), used=None):
    """The fast path in place of :func:`ggp_automl.search.run.run_loop`: a search that evaluated nothing."""
    from ggp_automl.search.loop import SearchOutcome

    return SearchOutcome(None, {"status": "no candidate evaluated (test fast path)"})


def write_arff(path: Path) -> Path:
    """The embedded default dataset as a MEKA ARFF file (labels first, ``-C 6``)."""
    X, Y = default_data.load_default()
    lines = [f"@relation 'default: -C {Y.shape[1]}'"]
    lines += [f"@attribute label{j} {{0,1}}" for j in range(Y.shape[1])]
    lines += [f"@attribute f{j} numeric" for j in range(X.shape[1])]
    lines.append("@data")
    lines += [",".join([str(int(v)) for v in y] + [f"{v:.6g}" for v in x]) for x, y in zip(X, Y)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    """``data.arff``, ``finished`` (a real finished run) and ``unfinished`` (the same run as if killed
    after its only generation: no final.json, no best/ files), and ``plain.txt``."""
    ws = tmp_path_factory.mktemp("hostile")
    write_arff(ws / "data.arff")
    (ws / "plain.txt").write_text("not a grammar, not a dataset\n")
    code, out, err, _ = call(["evolve", "--grammar", SMALL, "--data", str(ws / "data.arff"), "--population", "4",
                              "--generations", "1", "--budget", "20s", "--workers", "1", "--seed", "1", "--quiet",
                              "--out", "finished"], ws)
    assert code == 0, out + err
    shutil.copytree(ws / "finished", ws / "unfinished")
    for name in ("final.json", "convergence.png"):
        (ws / "unfinished" / name).unlink()
    shutil.rmtree(ws / "unfinished" / "best")
    (ws / "unfinished" / "best").mkdir()
    return ws


def logged(here: Path) -> str:
    """How a damaged-file message counts the unfinished run's log: how many candidates the fixture's
    run finished within its budget depends on the machine (one may sit at its time limit)."""
    n = len((here / "unfinished" / "evaluations.jsonl").read_text().splitlines())
    return f"the {n} evaluation{'s' if n != 1 else ''} logged"


@contextlib.contextmanager
def scratch(workspace: Path):
    """A fresh working directory holding copies of the module's runs and files."""
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        for name in ("finished", "unfinished"):
            shutil.copytree(workspace / name, here / name)
        for name in ("data.arff", "plain.txt"):
            shutil.copy(workspace / name, here / name)
        yield here


# -- property 1: generated argument lists ---------------------------------------------------------

WEIRD = st.one_of(
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=20),
    st.text(alphabet="ab/é_.-", min_size=200, max_size=3000),
    st.integers(-10 ** 15, 10 ** 15).map(str),
    st.sampled_from(["", " ", "-1", "0", "nan", "inf", "1e309", "--", "-", "☃", "\n", "9" * 400, "0.000001",
                     "-5s", "1.5", "..", "/", "/proc/nope/x", "~"]),
).filter(lambda s: not s.startswith("openml:"))  # no network in tests


def mostly(valid: st.SearchStrategy, hostile: st.SearchStrategy = WEIRD) -> st.SearchStrategy:
    """Three valid values for one hostile one, so that cases get past argument parsing."""
    return st.one_of(valid, valid, valid, hostile)


NUMBER = st.one_of(st.integers(-10 ** 18, 10 ** 18).map(str), WEIRD)
SMALL_INT = mostly(st.integers(1, 9).map(str), NUMBER)
DURATION = mostly(st.sampled_from(["1s", "2s", "3s", "0.5s", "0.01s", "1.5", "10m", "1h30m"]),
                  st.one_of(st.builds("{}{}".format, st.integers(-5, 10 ** 12), st.sampled_from(
                      ["", "s", "m", "h", "d", "ms", "x", " s"])), WEIRD))
MEMORY = mostly(st.sampled_from(["64MB", "2GB", "512", "0.5GB", "100mb"]),
                st.one_of(st.sampled_from(["63MB", "1KB", "99999999999GB", "lots", "1TB"]),
                          st.builds("{}{}".format, st.integers(-5, 10 ** 15), st.sampled_from(
                              ["", "MB", "GB", "kb", "TB", "b"])), WEIRD))
PATH = mostly(st.sampled_from(["finished", "unfinished", "data.arff", "new-run", SMALL]),
              st.one_of(st.sampled_from(["plain.txt", "plain.txt/sub", "/proc/nope", ".", "missing.arff",
                                         str(GRAMMARS / "large.bnf"), "finished/config.json"]), WEIRD))
SCHEDULER = st.one_of(st.sampled_from(["not a url", "tcp://", "tcp://h", "tcp://h:0", "tcp://h:99999",
                                       "http://h:80", "h:x"]), WEIRD)  # well-formed ones wait to connect

#: evolve's options with valid values (None: a flag); the hostile cases mix in other values
VALID_EVOLVE = {
    "--grammar": st.sampled_from([SMALL, str(GRAMMARS / "medium.bnf"), str(GRAMMARS / "large.bnf")]),
    "--data": st.just("data.arff"), "--fold": st.integers(1, 5).map(str),
    "--method": st.sampled_from(["ggp", "spggp", "random", "beam"]),
    "--budget": st.sampled_from(["1s", "2s", "3s", "0.5s", "0.01s", "1.5"]),
    "--eval-timeout": st.sampled_from(["0.01s", "0.2s", "1s", "3s", "1h"]),
    "--adaptive-timeout": st.sampled_from(["on", "off"]), "--mode": st.sampled_from(["async", "generational"]),
    "--screening": st.sampled_from(["on", "off"]), "--thesis": None,
    "--memory": st.sampled_from(["64MB", "100mb", "512", "2GB"]), "--workers": st.integers(1, 3).map(str),
    "--seed": st.integers(0, 2 ** 32 - 1).map(str),
    "--fitness": st.sampled_from(["fitness", "exact_match", "hamming_score", "f1_macro", "ranking_score",
                                  "average_precision"]),
    "--population": st.sampled_from(["1", "2", "3", "8", "16"]),
    "--fidelity": st.sampled_from(["NAS-NIS", "PAS-PIS", "EAS-PIS", "NAS-PIS", "PAS-NIS", "EAS-NIS"]),
    "--generations": st.integers(1, 3).map(str), "--quiet": None,
}
EVOLVE = {option: None if valid is None else mostly(valid) for option, valid in VALID_EVOLVE.items()}
EVOLVE.update({"--grammar": PATH, "--data": PATH, "--test": PATH, "--fold": mostly(VALID_EVOLVE["--fold"], NUMBER),
               "--budget": DURATION, "--eval-timeout": DURATION, "--memory": MEMORY, "--workers": SMALL_INT,
               "--scheduler": SCHEDULER, "--seed": mostly(VALID_EVOLVE["--seed"], NUMBER),
               "--population": mostly(VALID_EVOLVE["--population"], NUMBER), "--generations": SMALL_INT,
               "--out": PATH, "--resume": PATH})


def choice(values: list[str]) -> st.SearchStrategy:
    return mostly(st.sampled_from(values))


DATASET = {"--data": PATH, "--labels": SMALL_INT, "--features": SMALL_INT, "--instances": SMALL_INT}
OPTIONS = {
    "evolve": EVOLVE,
    "inspect": {"": PATH},
    "predict": {"": PATH, "--data": PATH, "--out": PATH, "--scores": None},
    "check": {"--grammar": PATH, "--rules": None, **DATASET},
    "sample": {"--grammar": PATH, "-n": SMALL_INT, "--seed": SMALL_INT, "--method": choice(["grow", "full", "rhh"]),
               "--max-depth": SMALL_INT, "--phenotypes": None, "--quiet": None, **DATASET},
    "species": {"--grammar": PATH},
}


@st.composite
def argument_lists(draw) -> list[str]:
    command = draw(st.sampled_from(sorted(OPTIONS) + ["evolve"] * 4)) if draw(st.integers(0, 9)) else draw(WEIRD)
    known = OPTIONS.get(command, {})
    argv = [command]
    for _ in range(draw(st.integers(0, 7))):
        kind = draw(st.sampled_from(["known"] * 8 + ["unknown", "junk", "missing"]))
        if kind == "known" and known:
            option = draw(st.sampled_from(sorted(known)))
            value = known[option]
            argv += ([option] if option else []) + ([draw(value)] if value is not None else [])
        elif kind == "unknown":
            argv.append(draw(st.sampled_from(["--frobnicate", "-x", "--budge", "--memory=", "---", "-n=3"])))
        elif kind == "missing" and any(known):
            argv.append(draw(st.sampled_from(sorted(o for o in known if o))))
        else:
            argv.append(draw(WEIRD))
    if command == "species":  # never write beside the shipped grammars
        argv += ["--out", "species-out"]
    return argv


@settings(max_examples=150, **PROPERTY)
@given(argv=argument_lists())
def test_any_argument_list_ends_cleanly(workspace, argv):
    with scratch(workspace) as here, mock.patch("ggp_automl.search.run.run_loop", _no_search):
        assert_clean(*call(argv, here))


@st.composite
def evolve_settings(draw, hostile: bool = True) -> list[str]:
    """``evolve`` with valid settings — and, when ``hostile``, now and then one hostile value."""
    argv = ["evolve", "--data", "data.arff", "--budget", draw(VALID_EVOLVE["--budget"]), "--quiet"]
    for option in draw(st.sets(st.sampled_from(sorted(VALID_EVOLVE)), max_size=6)):
        valid = VALID_EVOLVE[option]
        argv += [option] + ([] if valid is None else [draw(valid)])
    if hostile and draw(st.booleans()):
        option = draw(st.sampled_from(sorted(o for o in EVOLVE if EVOLVE[o] is not None)))
        argv += [option, draw(EVOLVE[option])]
    return argv


@settings(max_examples=60, **PROPERTY)
@given(argv=evolve_settings())
def test_evolve_settings_end_cleanly(workspace, argv):
    """Valid settings in any combination, and one hostile value among them, up to the search."""
    with scratch(workspace) as here, mock.patch("ggp_automl.search.run.run_loop", _no_search):
        assert_clean(*call(argv, here))


@settings(max_examples=4, **PROPERTY)
@given(argv=evolve_settings(hostile=False))
def test_short_real_searches_with_generated_settings_end_cleanly(workspace, argv):
    """The real search, on the small grammar with a budget of at most 3 s and at most 2 workers."""
    argv = argv + ["--grammar", SMALL, "--budget", "3s", "--workers", str(min(2, os.cpu_count() or 1))]
    with scratch(workspace) as here:
        code, out, err, seconds = call(argv, here)
    assert_clean(code, out, err, seconds)  # 2: settings that do not go together (--population 1 for ggp)
    assert seconds < 3 + 15, seconds  # the budget, the final refit's margin and the start-up


# -- property 2: damaged run directories ----------------------------------------------------------

FILES = ["config.json", "checkpoint.pkl", "evaluations.jsonl", "generations.jsonl", "final.json",
         "best/model.joblib"]
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                      max_size=3), max_leaves=8)
DAMAGE = st.one_of(
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("garble"), st.binary(min_size=1, max_size=40), st.floats(0, 1)),
    st.tuples(st.just("replace"), st.binary(max_size=60)),
    st.tuples(st.just("json"), JSON_VALUES),
    st.tuples(st.just("line"), JSON_VALUES, st.floats(0, 1)),
    st.tuples(st.just("field"), st.text(max_size=20), JSON_VALUES),
    st.tuples(st.just("pickle"), JSON_VALUES),
    st.tuples(st.just("delete")),
)


def damage(path: Path, how: tuple) -> None:
    data = path.read_bytes() if path.exists() else b""
    kind = how[0]
    if kind == "truncate":
        path.write_bytes(data[: int(len(data) * how[1])])
    elif kind == "garble":
        at = int(len(data) * how[2])
        path.write_bytes(data[:at] + how[1] + data[at + len(how[1]):])
    elif kind == "replace":
        path.write_bytes(how[1])
    elif kind == "json":
        path.write_text(json.dumps(how[1]))
    elif kind == "line":  # one record of a log replaced by another JSON value
        lines = data.decode("utf-8", "replace").splitlines()
        at = int(len(lines) * how[2]) if lines else 0
        path.write_text("\n".join(lines[:at] + [json.dumps(how[1])] + lines[at + 1:]) + "\n")
    elif kind == "field":  # a JSON object's field set to another value (a wrong type, a wrong value)
        try:
            record = json.loads(data)
        except ValueError:
            return
        if isinstance(record, dict):
            field = how[1] if how[1] or not record else sorted(record)[len(how[1]) % len(record)]
            record[field] = how[2]
            path.write_text(json.dumps(record))
    elif kind == "pickle":
        path.write_bytes(pickle.dumps(how[1]))
    elif kind == "delete" and path.exists():
        path.unlink()


@pytest.mark.parametrize("command", ["inspect", "inspect-finished", pytest.param("resume", marks=pytest.mark.slow),
                                     "predict"])  # resume runs the real search: 40 s, with the slow suite
@settings(max_examples=12, **PROPERTY)
@given(damages=st.lists(st.tuples(st.sampled_from(FILES), DAMAGE), min_size=1, max_size=3))
def test_a_damaged_run_directory_ends_cleanly(workspace, command, damages):
    """``resume`` and ``inspect`` damage the unfinished run (which resumes when its damage allows),
    ``predict`` and ``inspect-finished`` the finished one."""
    base = "finished" if command in ("predict", "inspect-finished") else "unfinished"
    command = command.split("-")[0]
    with scratch(workspace) as here:
        for name, how in damages:
            damage(here / base / name, how)
        argv = {"inspect": ["inspect", base], "resume": ["evolve", "--resume", base, "--quiet"],
                "predict": ["predict", base, "--data", "data.arff"]}[command]
        code, out, err, seconds = call(argv, here)
        assert_clean(code, out, err, seconds, codes=(0, 1))
        if code == 1:
            assert err.startswith("error: ") and len(err.strip().splitlines()) <= 3, err
        damaged = {name for name, how in damages if how[0] != "truncate" or how[1] < 1}
        if command == "inspect" and damaged <= {"config.json", "final.json", "checkpoint.pkl", "best/model.joblib"}:
            assert code == 0, err  # the logs are intact: inspect shows them, whatever else is damaged


# -- one test per class of bug ----------------------------------------------------------------------


@pytest.fixture
def here(workspace):
    with scratch(workspace) as directory:
        yield directory


def fresh_evolve(out: str) -> list[str]:
    return ["evolve", "--grammar", SMALL, "--data", "data.arff", "--budget", "3s", "--quiet", "--out", out]


@pytest.mark.parametrize("out, code, message", [
    ("plain.txt", 1, "plain.txt is a file, not a directory; choose another --out"),
    ("plain.txt/run", 1, "cannot create the run directory plain.txt/run: Not a directory"),
    ("/proc/nope/run", 1, "cannot create the run directory /proc/nope/run: No such file or directory"),
    ("x" * 300, 1, "File name too long"),
    ("best-of", 1, "best-of is not empty and holds no run; choose a new or empty directory"),
    ("finished", 1, "finished already holds a run; choose another --out, or continue it with"),
    ("", 2, "argument --out: expected a file or directory name, got ''"),
])
def test_an_out_that_cannot_hold_a_new_run_is_refused(here, out, code, message):
    (here / "best-of").mkdir()
    (here / "best-of" / "notes.txt").write_text("someone's files\n")
    with mock.patch("ggp_automl.search.run.run_loop", _no_search):
        result = call(fresh_evolve(out), here)
    assert_clean(*result)
    assert result[0] == code and message in result[2], result[2]
    assert (here / "best-of").exists() and sorted(p.name for p in (here / "best-of").iterdir()) == ["notes.txt"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_an_unwritable_out_is_refused(here):
    (here / "locked").mkdir(mode=0o500)
    result = call(fresh_evolve("locked/run"), here)
    assert result[0] == 1 and "cannot create the run directory locked/run: Permission denied" in result[2]


@pytest.mark.parametrize("argv", [["evolve", "--scheduler", "not a url"], ["evolve", "--resume", "unfinished",
                                                                          "--scheduler", "tcp://h"]])
def test_a_malformed_scheduler_address_is_a_usage_error_at_once(here, argv):
    code, out, err, seconds = call(argv, here)
    assert code == 2 and seconds < 3, (code, seconds)
    assert "expected a Dask scheduler address such as tcp://10.0.0.5:8786" in err


def test_an_unreachable_scheduler_is_an_input_error_within_seconds(here):
    import socket

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out, err, seconds = call(fresh_evolve("run") + ["--scheduler", f"tcp://127.0.0.1:{port}"], here)
    assert_clean(code, out, err, seconds)
    assert code == 1 and seconds < 15, (code, seconds)
    assert f"cannot reach the Dask scheduler at 'tcp://127.0.0.1:{port}'" in err


@pytest.mark.parametrize("argv, message", [
    (["--memory", "99999999999GB"], "is more than this machine's"),
    (["--memory", "9" * 400 + "GB"], "expected a memory size"),
    (["--memory", "63MB"], "the memory limit must be at least 64 MB"),
    (["--budget", "9" * 30 + "h"], "the budget must be positive and at most 30 days"),
    (["--eval-timeout", "9" * 400], "the evaluation timeout must be positive and at most 30 days"),
    (["--seed", str(2 ** 32)], "the seed must be between 0 and 4294967295"),
    (["--population", "100000"], "population must be at most 10,000"),
    (["--workers", "1000000"], "workers must be between 1 and 256"),
])
def test_out_of_range_settings_are_usage_errors(here, argv, message):
    code, out, err, seconds = call(fresh_evolve("run") + argv, here)
    assert_clean(code, out, err, seconds)
    assert code == 2 and message in err, err
    assert not (here / "run").exists()


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_the_smallest_memory_limit_leaves_room_for_models(here):
    """64 MB counts what a candidate adds to its worker: a fresh worker alone is over 100 MB."""
    # 20 s, not fresh_evolve's 3 s: on a slow machine no candidate started within 3 s (the same before issue 23)
    code, out, err, seconds = call(fresh_evolve("run") + ["--memory", "64MB", "--workers", "1", "--budget", "20s"], here)
    assert_clean(code, out, err, seconds)
    records = [json.loads(line) for line in (here / "run" / "evaluations.jsonl").read_text().splitlines()]
    assert records and not [r for r in records if r["status"] == "memory"], records
    assert code == 0, err


CONFIG_DAMAGE = {
    "junk": (b"#!%junk{", "not valid JSON"),
    "truncated": (None, "not valid JSON"),
    "empty": (b"", "(empty)"),
    "wrong shape": (b'[1, 2, 3]', "a JSON list, not an object"),
    "wrong types": ("population", "population is str"),
    "wrong values": ("budget_seconds", "the budget must be positive"),
    "wrong data": ("fold", '"data.fold" is not a fold number'),
}


@pytest.mark.parametrize("variant", sorted(CONFIG_DAMAGE))
def test_a_damaged_config_json_is_reported_and_inspect_still_works(here, variant):
    path = here / "unfinished" / "config.json"
    content, reason = CONFIG_DAMAGE[variant]
    if variant == "truncated":
        path.write_bytes(path.read_bytes()[:200])
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        record = json.loads(path.read_text())
        if content == "fold":
            record["data"]["fold"] = "x"
        else:
            record["config"][content] = "many" if content == "population" else -1
        path.write_text(json.dumps(record))
    code, out, err, seconds = call(["evolve", "--resume", "unfinished", "--quiet"], here)
    assert_clean(code, out, err, seconds)
    assert code == 1 and err.startswith("error: unfinished/config.json is corrupted (") and reason in err, err
    assert "the run cannot be resumed; `python cli.py inspect unfinished` shows " + logged(here) + ", or " \
           "start a fresh run" in err
    code, out, err, seconds = call(["inspect", "unfinished"], here)
    assert_clean(code, out, err, seconds)
    assert code == 0 and "Top 10" in out
    if variant in ("junk", "truncated", "empty", "wrong shape"):
        assert "damaged: config.json is corrupted" in out


CHECKPOINT_DAMAGE = {
    "junk": (lambda data: b"#!%junk" * 10, "not a pickle"),
    "truncated": (lambda data: data[: len(data) // 2], "truncated pickle"),
    "empty": (lambda data: b"", "empty"),
    "another object": (lambda data: pickle.dumps({"generation": 3}), "a pickle of something else"),
    "garbled inside": (lambda data: data[:100] + b"\xff" * 50 + data[150:], "unreadable pickle"),
}


@pytest.mark.parametrize("variant", sorted(CHECKPOINT_DAMAGE))
def test_a_damaged_checkpoint_is_reported_with_what_can_still_be_done(here, variant):
    path = here / "unfinished" / "checkpoint.pkl"
    change, reason = CHECKPOINT_DAMAGE[variant]
    path.write_bytes(change(path.read_bytes()))
    code, out, err, seconds = call(["evolve", "--resume", "unfinished", "--quiet"], here)
    assert_clean(code, out, err, seconds)
    assert code == 1, err
    assert err.startswith(f"error: unfinished/checkpoint.pkl is corrupted ({reason}") and \
        "the run cannot be resumed; `python cli.py inspect unfinished` shows " + logged(here) + ", or " \
        "start a fresh run" in err, err
    code, out, err, seconds = call(["inspect", "unfinished"], here)
    assert code == 0 and "Top 10" in out
    if variant != "garbled inside":  # inspect does not unpickle: bytes that look right pass its check
        assert "damaged: checkpoint.pkl is corrupted" in out and "cannot be resumed" in out


CHECKSUM = "(its checksum differs from the one final.json recorded when the run wrote it"


@pytest.mark.parametrize("recorded", [True, False], ids=["checksum recorded", "run before checksums"])
@pytest.mark.parametrize("content, reason", [
    (b"", "(empty)"), (b"junk" * 20, "(unreadable: "), (None, "(truncated)"),
    (pickle.dumps([1, 2]), "(it holds a list, not a model)"),
])
def test_predict_with_a_damaged_model_says_so(here, content, reason, recorded):
    """Empty and cut files are said so before anything is read; any other file that is not the model the run
    wrote is refused by its checksum before it is unpickled (issue 24), unless the run recorded none."""
    path = here / "finished" / "best" / "model.joblib"
    path.write_bytes(path.read_bytes()[:300] if content is None else content)
    if not recorded:
        final = json.loads((here / "finished" / "final.json").read_text())
        del final["model_sha256"]
        (here / "finished" / "final.json").write_text(json.dumps(final))
    elif reason not in ("(empty)", "(truncated)"):
        reason = CHECKSUM
    code, out, err, seconds = call(["predict", "finished", "--data", "data.arff"], here)
    assert_clean(code, out, err, seconds)
    assert code == 1 and err.startswith("error: finished/best/model.joblib is corrupted " + reason), err
    assert "best/model.py has" in err


def test_damaged_evaluation_records_are_skipped_with_a_warning_and_the_run_resumes(here):
    log = here / "unfinished" / "evaluations.jsonl"
    lines = log.read_text().splitlines()
    lines[3] = json.dumps({"n": "three", "phenotype": 3})
    log.write_text("\n".join(lines) + "\n")
    code, out, err, seconds = call(["evolve", "--resume", "unfinished", "--quiet"], here)
    assert_clean(code, out, err, seconds)
    assert code == 0, err
    assert "unfinished/evaluations.jsonl: 1 damaged record(s) skipped; those evaluations run again" in err


def test_inspect_of_a_damaged_final_json(here):
    (here / "finished" / "final.json").write_text('{"status": "fin')
    code, out, err, seconds = call(["inspect", "finished"], here)
    assert_clean(code, out, err, seconds)
    assert code == 0 and "damaged: final.json is corrupted (not valid JSON" in out
    assert "unknown (final.json is damaged)" in out


def _cli(*args: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "cli.py"), *args], capture_output=True, text=True,
                          timeout=120, **kwargs)


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_a_run_directory_is_locked_by_the_process_that_owns_it(here):
    """Two real processes: the second is refused while the first runs; kill -9 frees the directory."""
    first = subprocess.Popen([sys.executable, str(ROOT / "cli.py"), "evolve", "--grammar", SMALL, "--data",
                              "data.arff", "--budget", "60s", "--workers", "1", "--quiet", "--out", "run"],
                             cwd=here, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        log = here / "run" / "evaluations.jsonl"
        deadline = time.time() + 60
        while time.time() < deadline and not (log.exists() and log.read_text().count("\n") >= 2):
            time.sleep(0.1)
        assert log.exists(), "the first run did not start"
        for argv in (["evolve", "--resume", "run", "--quiet"], fresh_evolve("run")):
            r = _cli(*argv, cwd=here)
            assert r.returncode == 1, r.stderr
            assert r.stderr.startswith(f"error: run is in use by process {first.pid} (started ") and \
                f"wait for it to finish or stop it (kill {first.pid}), then try again" in r.stderr, r.stderr
        os.kill(first.pid, signal.SIGKILL)  # the parent only: its workers must not keep the lock
        first.wait(10)
        from ggp_automl.search.lock import RunLock

        with RunLock(here / "run"):
            pass
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
        first.wait(10)


def test_a_second_run_in_one_directory_from_the_same_process_is_refused(here):
    from ggp_automl.search.lock import DirectoryInUse, RunLock

    with RunLock(here / "unfinished"):
        code, out, err, seconds = call(["evolve", "--resume", "unfinished", "--quiet"], here)
        with pytest.raises(DirectoryInUse, match="in use by this process"):
            RunLock(here / "unfinished").acquire()
    assert code == 1 and "unfinished is in use by this process" in err


def test_an_internal_error_prints_one_line_and_where_the_log_is(here):
    with mock.patch("ggp_automl.results.render.render_inspect", side_effect=RuntimeError("boom\nsecond line")):
        code, out, err, seconds = call(["inspect", "finished"], here)
    assert code == 1 and "Traceback" not in err
    first, second = err.strip().splitlines()
    assert first == "internal error (a bug in ggp-automl, not a problem with your input): RuntimeError: boom"
    log = Path(second.split("the traceback is in ")[1].split(";")[0])
    assert log.parent == Path(tempfile.gettempdir()) and "Traceback" in log.read_text()
    assert "RuntimeError: boom" in log.read_text() and "inspect finished" in log.read_text()
    log.unlink()


def test_an_internal_error_during_a_run_logs_into_the_run_directory(here):
    with mock.patch("ggp_automl.search.run.run_loop", side_effect=KeyError("missing")):
        code, out, err, seconds = call(fresh_evolve("run"), here)
    assert code == 1 and "internal error" in err and "Traceback" not in err
    logs = list((here / "run").glob("ggp-automl-crash-*.log"))
    assert len(logs) == 1 and f"the traceback is in {logs[0]}" in err
    assert "KeyError: 'missing'" in logs[0].read_text()


def test_ctrl_c_is_exit_130_with_how_to_continue(here):
    with mock.patch("ggp_automl.search.run.run_loop", side_effect=KeyboardInterrupt):
        code, out, err, seconds = call(fresh_evolve("run"), here)
    assert code == 130 and err.strip() == "interrupted; continue with: python cli.py evolve --resume run"

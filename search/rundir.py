"""The run directory: what a run leaves behind, written so that nothing is lost.

``config.json`` (every parameter, seed, versions), ``evaluations.jsonl`` (one line
per finished evaluation, appended and flushed as it finishes), ``generations.jsonl``,
``checkpoint.pkl`` (the whole search state after every generation, written to a
temporary file, fsync'ed and renamed, so a kill at any moment leaves either the old
or the new checkpoint, never a torn one), ``final.json`` and the ``best/`` folder.
The file formats are documented in ``search/README.md``.

A process that writes a run directory owns it: ``.lock`` is locked while it runs
(:mod:`ggp_automl.search.lock`), so two processes never append to one log. A file that cannot
be read back is reported by name, with what can still be done (``inspect`` reads what
is left; a fresh run always works), never as a traceback: :meth:`RunDirectory.damaged`.
"""
from __future__ import annotations

import datetime as _dt
import json
import os
import pickle
import platform
import sys
from pathlib import Path
from typing import Any

from .health import checkpoint_problem, json_object
from .lock import LOCK_NAME, RunLock
from ..gp.errors import InputError

CONFIG, EVALUATIONS, GENERATIONS, CHECKPOINT, FINAL, BEST = (
    "config.json", "evaluations.jsonl", "generations.jsonl", "checkpoint.pkl", "final.json", "best")


def new_run_id() -> str:
    """A run's identity: random from the operating system, never from the run's Generator (the search
    draws exactly what it drew before run ids existed)."""
    import uuid

    return uuid.uuid4().hex[:16]


def default_run_name(method: str) -> str:
    return f"{_dt.datetime.now().strftime('%Y%m%d-%H%M%S')}-{method}"


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {"python": sys.version.split()[0], "platform": platform.platform()}
    for dist in ("ggp-automl", "numpy", "scipy", "scikit-learn", "scikit-multilearn-ng", "deap", "lark",
                 "dask", "distributed", "joblib", "networkx", "matplotlib", "rich", "smac", "ConfigSpace", "optuna"):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _json_default(value: Any):
    import numpy as np

    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (set, tuple, frozenset)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    raise TypeError(f"not JSON serialisable: {type(value).__name__}")


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    try:  # make the rename itself durable
        fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError:
        pass


def read_jsonl(path: str | Path) -> list[dict]:
    """The JSON objects of a ``.jsonl`` file, one a line; [] for a missing file.

    Lines that are blank, not valid JSON (a run killed mid-write leaves a torn last line)
    or not objects are skipped rather than failing the whole read.
    """
    p = Path(path)
    if not p.is_file():
        return []
    records: list[dict] = []
    with p.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            line = line.strip()
            if not line:
                continue
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict):
                records.append(value)
    return records


class RunDirectoryError(InputError, ValueError):
    """A run directory, or a file in it, that cannot be used; the message says which file, why,
    and what can still be done (the CLI exits 1)."""


def _os_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


class RunDirectory:
    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._files: dict[str, Any] = {}
        self._lock = RunLock(self.path)

    # -- creation and ownership ----------------------------------------------------
    def _contents(self) -> list[str]:
        return sorted(p.name for p in self.path.iterdir() if p.name != LOCK_NAME)

    def create(self, config_record: dict) -> None:
        """Make the directory, take its lock, write ``config.json`` with a new :attr:`run_id`; a directory
        that holds anything (a run, or files of something else) is refused, so nothing is ever overwritten."""
        config_record = {"run_id": new_run_id(), **config_record}
        where = self.path
        if where.exists() and not where.is_dir():
            raise RunDirectoryError(f"{where} is a file, not a directory; choose another --out")
        try:
            if where.is_dir() and self._contents() and not (where / LOCK_NAME).exists() \
                    and not (where / CONFIG).exists():
                raise RunDirectoryError(f"{where} is not empty and holds no run; choose a new or empty directory "
                                        "for --out")
            where.mkdir(parents=True, exist_ok=True)
            self.lock()
        except OSError as exc:
            raise RunDirectoryError(f"cannot create the run directory {where}: {_os_reason(exc)}; choose another "
                                    "--out") from None
        try:
            if self._contents():
                raise RunDirectoryError(f"{where} already holds a run; choose another --out, or continue it with "
                                        f"`python cli.py evolve --resume {where}`")
            (where / BEST).mkdir(exist_ok=True)
            _atomic_write(where / CONFIG, json.dumps(config_record, indent=2, default=_json_default).encode())
            self._run_id = config_record["run_id"]
        except BaseException:
            self.release()
            raise

    def lock(self) -> None:
        """Own the directory until :meth:`release` (or the process ends); :class:`~ggp_automl.search.lock.DirectoryInUse`
        when another process owns it."""
        self._lock.acquire()

    def release(self) -> None:
        self.close()
        self._lock.release()

    @property
    def exists(self) -> bool:
        return (self.path / CONFIG).exists()

    def damaged(self, name: str, reason: str, consequence: str = "the run cannot be resumed") -> RunDirectoryError:
        """The error for a file of this directory that cannot be read back, with what can still be done."""
        n = len(self.evaluations())
        logged = f"the {n} evaluation{'s' if n != 1 else ''} logged" if n else "what is left"
        return RunDirectoryError(f"{self.path / name} is corrupted ({reason}): {consequence}; "
                                 f"`python cli.py inspect {self.path}` shows {logged}, or start a fresh run")

    @property
    def run_id(self) -> str | None:
        """The run's identity from ``config.json`` (None for a run written before issue 24): written into
        every evaluation record, checkpoint and prediction file, so that a file copied from another run
        directory is refused by name (:meth:`foreign`) instead of being taken for this run's."""
        if not hasattr(self, "_run_id"):
            run_id = self.config().get("run_id")
            self._run_id = run_id if isinstance(run_id, str) and run_id else None
        return self._run_id

    def foreign(self, name: str, owner) -> RunDirectoryError | None:
        """The error for a file of this directory that another run wrote (``owner``: the run id it
        carries; None, a file older than run ids, passes)."""
        if owner is None or owner == self.run_id:
            return None
        return RunDirectoryError(f"{self.path / name} belongs to another run ({owner}), not to this one "
                                 f"({self.run_id or 'a run without an id'}, config.json): it was copied from another "
                                 f"run directory; put back this run's own file, or start a fresh run")

    def foreign_evaluations(self) -> tuple[int, str | None]:
        """How many records of ``evaluations.jsonl`` another run wrote, and that run's id."""
        others = [r.get("run") for r in self.evaluations() if r.get("run") not in (None, self.run_id)]
        return len(others), (others[0] if others else None)

    def config(self) -> dict:
        """``config.json`` as a JSON object (its fields are checked by whoever uses them)."""
        record, problem = json_object(self.path / CONFIG)
        if problem:
            raise self.damaged(CONFIG, problem)
        if record is None:
            raise RunDirectoryError(f"{self.path} is not a run directory (no {CONFIG})")
        return record

    # -- append-only logs ----------------------------------------------------------
    def _append(self, name: str, record: dict) -> None:
        f = self._files.get(name)
        if f is None:
            self.repair(name)
            f = self._files[name] = open(self.path / name, "a", encoding="utf-8")
        f.write(json.dumps(record, default=_json_default, allow_nan=True) + "\n")
        f.flush()
        os.fsync(f.fileno())

    def repair(self, name: str) -> None:
        """Cut a torn last line (a kill in mid-write) so that appended records stay parseable."""
        p = self.path / name
        if not p.exists():
            return
        data = p.read_bytes()
        if data and not data.endswith(b"\n"):
            cut = data.rfind(b"\n") + 1
            with open(p, "r+b") as f:
                f.truncate(cut)

    def append_evaluation(self, record: dict) -> None:
        self._append(EVALUATIONS, {**record, "run": self.run_id} if self.run_id else record)

    def append_generation(self, record: dict) -> None:
        self._append(GENERATIONS, record)

    def evaluations(self) -> list[dict]:
        return read_jsonl(self.path / EVALUATIONS)

    def generations(self) -> list[dict]:
        return read_jsonl(self.path / GENERATIONS)

    def truncate_generations(self, count: int) -> None:
        """Keep the first ``count`` generation records (those covered by the checkpoint)."""
        records = self.generations()[:count]
        text = "".join(json.dumps(r, default=_json_default) + "\n" for r in records)
        self.close()
        _atomic_write(self.path / GENERATIONS, text.encode())

    # -- checkpoint ----------------------------------------------------------------
    def save_checkpoint(self, state: Any) -> None:
        _atomic_write(self.path / CHECKPOINT, pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))

    def load_checkpoint(self) -> Any | None:
        """The unpickled checkpoint; None when there is none yet. A file that is not a pickle of a search
        state, or that unpickling fails on (a damaged pickle fails in many ways), is reported as damaged."""
        p = self.path / CHECKPOINT
        problem = checkpoint_problem(p)
        if problem:
            raise self.damaged(CHECKPOINT, problem)
        if not p.exists():
            return None
        try:
            return pickle.loads(p.read_bytes())
        except Exception as exc:  # noqa: BLE001 - see the docstring
            raise self.damaged(CHECKPOINT, f"unreadable pickle: {type(exc).__name__}: {str(exc)[:200]}") from None

    # -- results -------------------------------------------------------------------
    def write_json(self, name: str, record: dict) -> None:
        _atomic_write(self.path / name, json.dumps(record, indent=2, default=_json_default).encode())

    def write_text(self, name: str, text: str) -> Path:
        p = self.path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        _atomic_write(p, text.encode())
        return p

    def close(self) -> None:
        for f in self._files.values():
            f.close()
        self._files.clear()


def recorded_plugins(run: Path) -> list[str]:
    """The plug-ins a run directory's config.json names ([] when it names none or cannot be read: the
    reader of config.json says what is wrong with it)."""
    try:
        plugins = json.loads((Path(run) / "config.json").read_text(encoding="utf-8")).get("config", {}).get("plugins")
    except (OSError, ValueError, AttributeError):
        return []
    return list(plugins) if isinstance(plugins, list) and all(isinstance(p, str) for p in plugins) else []

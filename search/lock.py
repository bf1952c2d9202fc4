"""One process at a time in a run directory: an advisory lock held while a process owns it.

Why: two ``evolve --resume`` of one directory would both append to ``evaluations.jsonl``
(duplicated ``n`` values, evaluations run twice) and overwrite each other's checkpoint. So a
process that writes a run directory first takes ``fcntl.flock`` on ``DIR/.lock``; a second
process is refused with who owns the directory (pid, start time, command line, which the owner
writes into the file).

Why ``flock``: the kernel drops the lock when the last descriptor of its open file description
is closed, so it is released on *any* exit of the owner, ``kill -9`` and a power cut included —
no stale lock to clean up. Two cautions follow from those semantics:

* a forked child shares the owner's open file description, so an evaluation worker that
  outlived its parent would keep the lock. :func:`os.register_at_fork` closes the copy in every
  forked child (closing, not unlocking: ``LOCK_UN`` on the copy would release the parent's lock
  too), and ``O_CLOEXEC`` covers programs started with ``exec``;
* the lock file is never deleted: a process that still has the old file open would hold a lock
  on a name that a third process could then create and lock anew.

Within one process the lock is keyed by the directory's real path, so a second run in the
same directory from the same process (a thread, or a loop in a notebook) is refused as well.
"""
from __future__ import annotations

import datetime as _dt
import fcntl
import json
import os
import sys
import threading
from pathlib import Path

from ..gp.errors import InputError

LOCK_NAME = ".lock"

#: real path of a locked directory -> the descriptor holding its lock (this process only)
_HELD: dict[str, int] = {}
_HELD_GUARD = threading.Lock()


class DirectoryInUse(InputError, RuntimeError):
    """Another process (or this one) owns the run directory; the CLI exits 1."""


def _close_inherited() -> None:
    """In a forked child: drop the copies of the parent's lock descriptors (see the module docstring)."""
    for fd in _HELD.values():
        try:
            os.close(fd)
        except OSError:
            pass
    _HELD.clear()


os.register_at_fork(after_in_child=_close_inherited)


def _holder(fd: int) -> tuple[str, str]:
    """Who holds the lock and how to stop it, from what the holder wrote into the file."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode("utf-8", errors="replace"))
        pid, started, command = int(info["pid"]), str(info["started"]), str(info.get("command", ""))
    except (OSError, ValueError, KeyError, TypeError):
        return "another process", "stop it"
    command = command if len(command) <= 120 else command[:119] + "…"
    return f"process {pid} (started {started}" + (f": {command}" if command else "") + ")", f"stop it (kill {pid})"


class RunLock:
    """The lock on one run directory, held until :meth:`release` or the end of the process."""

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)
        self._key = os.path.realpath(self.directory)
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> "RunLock":
        """Take the lock or raise :class:`DirectoryInUse`; ``OSError`` when the file cannot be made."""
        with _HELD_GUARD:
            if self._key in _HELD:
                raise DirectoryInUse(f"{self.directory} is in use by this process (another run in it has not "
                                     "ended); wait for it to end")
            fd = os.open(self.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder, stop = _holder(fd)
                os.close(fd)
                raise DirectoryInUse(f"{self.directory} is in use by {holder}; wait for it to finish or {stop}, "
                                     "then try again") from None
            except BaseException:
                os.close(fd)
                raise
            info = {"pid": os.getpid(), "started": _dt.datetime.now().isoformat(sep=" ", timespec="seconds"),
                    "command": " ".join(sys.argv)}
            os.ftruncate(fd, 0)
            os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)
            _HELD[self._key] = self._fd = fd
        return self

    def release(self) -> None:
        with _HELD_GUARD:
            if self._fd is None:
                return
            _HELD.pop(self._key, None)
            fd, self._fd = self._fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def __enter__(self) -> "RunLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def in_use(directory: str | Path) -> bool:
    """Whether a process holds ``directory``'s lock now: a look, not a claim (the experiment grid waits
    for a run that outlived an earlier grid before it touches the directory)."""
    path = Path(directory) / LOCK_NAME
    if os.path.realpath(directory) in _HELD:
        return True
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock this look took
    return False

"""What loading plug-ins needs beneath the registry: :class:`PluginError`, the lock, and the entry points.

:func:`spaces.registry.load_all` imports the installed packages' entry points (:func:`load_entry_points`),
and :func:`spaces.plugins.load_plugins` loads the shipped algorithms through ``load_all`` before a
run's own plug-ins. Living here, beneath both, these keep that a one-way street: ``plugins`` imports
``registry``, and both import this module. :mod:`spaces.plugins` is the public face (it re-exports
everything here).
"""
from __future__ import annotations

import threading
import traceback
from pathlib import Path

from ..gp.errors import InputError

#: the entry-point group a package uses to register algorithms without being named
ENTRY_POINT_GROUP = "ggp_automl.algorithms"

#: held while plug-ins are imported (``load_plugins``) and while the entry points are (``load_entry_points``)
lock = threading.Lock()
_entry_points_loaded = False


class PluginError(InputError, ValueError):
    """A plug-in that cannot be found or fails while it is imported; the message says which and where."""


def load_entry_points() -> None:
    """Import the modules installed packages declare in :data:`ENTRY_POINT_GROUP` (once per process)."""
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    from importlib.metadata import entry_points

    with lock:
        if _entry_points_loaded:
            return
        _entry_points_loaded = True
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            try:
                ep.load()
            except (Exception, SystemExit) as exc:  # noqa: BLE001 - a broken package is the user's input, said plainly
                raise PluginError(f"the {ENTRY_POINT_GROUP} entry point {ep.name} = {ep.value} of an installed "
                                  f"package fails: {where(exc)}") from None


def where(exc: BaseException) -> str:
    """``file:line: Type: message`` of the innermost frame of the user's code (or the syntax error's place)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{exc.filename}:{exc.lineno}:{exc.offset or 0}: SyntaxError: {exc.msg}"
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [Path(__file__).resolve().parent, Path(__file__).resolve().parent.parent / "gp"]
    user = [f for f in frames if "importlib" not in f.filename and not f.filename.startswith("<frozen")
            and not any(Path(f.filename).resolve().is_relative_to(d) for d in ours)]
    frame = (user or frames or [None])[-1]
    place = f"{frame.filename}:{frame.lineno}: " if frame is not None else ""
    return f"{place}{type(exc).__name__}: {exc}"

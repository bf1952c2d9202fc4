"""Plug-in algorithms: a user's own estimators join the search space from a module of their own.

A plug-in is an ordinary Python module whose import registers builders with
:func:`spaces.registry.register` (and, if it likes, search operators: :mod:`ggp_automl.search.methods.toolbox`).
The user adds one grammar alternative per algorithm and names the module where the run starts:

* ``python cli.py evolve --plugin my_algorithms.py …`` (a file) or ``--plugin mypackage.algorithms``
  (an importable module name), repeatable; also ``check`` and ``sample``;
* ``GGPAutoML(plugins=["my_algorithms.py"])`` in Python;
* or, for a package, an entry point in the ``ggp_automl.algorithms`` group, loaded by every
  process that loads the registry (nothing to name).

Why a list of names and not "import it yourself first": candidates are compiled in worker
processes, on this machine (forked, so they inherit what the parent imported) and on Dask workers
(separate interpreters that import only what they are told). The run records the plug-ins in its
``config.json`` (files as absolute paths), every evaluation task carries them, and
:func:`load_plugins` imports each one once per process — so ``--resume``, ``predict`` (unpickling a
model that holds a plug-in estimator needs its class) and a Dask worker all see the same algorithms.

A file plug-in is imported under its stem (``my_algorithms.py`` → module ``my_algorithms``), the name
its classes are pickled under; a stem that names another module already loaded is refused rather than
silently shadowing it.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable
from pathlib import Path

from ._plugins import ENTRY_POINT_GROUP, PluginError, load_entry_points
from ._plugins import lock as _lock
from ._plugins import where as _where
from .registry import load_all

__all__ = ["ENTRY_POINT_GROUP", "PluginError", "load_entry_points", "load_plugins", "normalise"]

#: spec as recorded -> module name, for the plug-ins this process has imported
_loaded: dict[str, str] = {}


def normalise(spec: str) -> str:
    """How a plug-in is recorded: a ``.py`` file as an absolute path (a resumed run or a Dask worker may
    start elsewhere), a module name as given. Refuses what is neither."""
    if not isinstance(spec, str) or not spec.strip():
        raise PluginError(f"a plug-in is a .py file or a module name, got {spec!r}")
    spec = spec.strip()
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        path = Path(spec).expanduser()
        if not path.is_file():
            raise PluginError(f"plug-in {spec}: no such file")
        if path.suffix != ".py":
            raise PluginError(f"plug-in {spec}: a plug-in file is a Python module ending in .py")
        return str(path.resolve())
    if not all(part.isidentifier() for part in spec.split(".")):
        raise PluginError(f"plug-in {spec!r} is neither a .py file nor a module name (such as mypackage.algorithms)")
    return spec


def load_plugins(specs: Iterable[str]) -> tuple[str, ...]:
    """Import every plug-in once in this process (idempotent; thread-safe); returns the specs normalised.

    :class:`PluginError` when one cannot be found or raises while importing; the message names the file
    and line of the failure, and the registration error for a name registered twice."""
    normalised = tuple(normalise(s) for s in specs)
    if not normalised:
        return normalised
    load_all()  # the shipped algorithms first: a plug-in reusing one of their names is refused, not them
    with _lock:
        for spec in normalised:
            if spec not in _loaded:
                _loaded[spec] = _import(spec)
    return normalised


def _import(spec: str) -> str:
    if spec.endswith(".py"):
        path = Path(spec)
        name = path.stem
        if not name.isidentifier():
            raise PluginError(f"plug-in {spec}: the file name must be a valid module name (letters, digits, _)")
        existing = sys.modules.get(name)
        if existing is not None:
            if Path(getattr(existing, "__file__", "") or "").resolve() == path:
                return name
            raise PluginError(f"plug-in {spec}: a module named {name!r} is already loaded "
                              f"({getattr(existing, '__file__', None) or 'built in'}); rename the file")
        module_spec = importlib.util.spec_from_file_location(name, path)
        if module_spec is None or module_spec.loader is None:
            raise PluginError(f"plug-in {spec}: cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[name] = module  # before executing it: pickling its classes needs the name
        try:
            module_spec.loader.exec_module(module)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - whatever the user's module raises, with its place
            del sys.modules[name]
            raise _failed(spec, exc) from None
        return name
    try:
        importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name and spec.startswith(exc.name):
            raise PluginError(f"plug-in {spec!r}: no module of that name can be imported (give a .py file, or "
                              "install the package / add its folder to PYTHONPATH)") from None
        raise _failed(spec, exc) from None
    except (Exception, SystemExit) as exc:  # noqa: BLE001
        raise _failed(spec, exc) from None
    return spec


def _failed(spec: str, exc: BaseException) -> PluginError:
    """A plug-in that raised, or called ``sys.exit`` (which would end the program with an exit code of the
    plug-in's choosing and no word), while it was imported: an input error naming it (exit 1)."""
    if isinstance(exc, SystemExit):
        return PluginError(f"plug-in {spec} calls sys.exit({exc.code!r}) while it is imported ({_where(exc)}); a "
                           "plug-in must only define and register its algorithms or methods")
    return PluginError(f"plug-in {spec} fails while it is imported: {_where(exc)}")

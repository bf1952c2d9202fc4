"""The search methods by name: one declared table of the built-ins, installed methods' entry points,
and the methods that plug-in files register.

Why a module that imports no method: ``RunConfig``, the evolve options, the run's start and resume and
both estimators look a method up by name, and every method module imports the seam beneath it
(:mod:`.base`, the run's config). Naming the built-ins as ``"module:Class"`` strings, imported when
first asked for, keeps that one-way — the registry is the only place that reaches up to the methods,
and it does so by name, the way installed plug-ins are reached (Optuna's samplers, scikit-learn's
entry points).

Three ways a method joins, all seen by ``--method``, ``--resume``, ``config.json`` and the estimators:

* the built-ins below (:data:`BUILT_IN`);
* an installed package that declares an entry point in the group ``ggp_automl.methods``
  (``[project.entry-points."ggp_automl.methods"] mymethod = "mypackage.search:MyMethod"``);
* a plug-in module or file (``--plugin my_method.py``, ``plugins=[…]``) that calls
  :func:`register_method` on its class — imported before any method name is checked
  (``commands/main.py``, :func:`~ggp_automl.search.run.resume`, the estimators).
"""
from __future__ import annotations

import functools
import importlib
from collections.abc import Mapping
from importlib.metadata import entry_points
from typing import Iterator

#: a SearchMethod subclass (:mod:`.base`; not imported here: the methods import this module's caller)
MethodClass = type

#: the built-in methods, in the order ``--help`` lists them: name -> "module:class"
BUILT_IN: dict[str, str] = {
    "ggp": "ggp_automl.search.methods.ggp:GGP",
    "spggp": "ggp_automl.search.methods.spggp:SpeciatedGGP",
    "random": "ggp_automl.search.methods.sampling:RandomSearch",
    "beam": "ggp_automl.search.methods.beam:BeamSearch",
    "pbil": "ggp_automl.search.methods.pbil:PBIL",
    "bo": "ggp_automl.search.methods.bo:BO",
    "tpe": "ggp_automl.search.methods.tpe:TPE",
    "ga": "ggp_automl.search.methods.ga:GA",
    "eo": "ggp_automl.search.methods.eo:EO",
    "divbo": "ggp_automl.search.methods.divbo:DivBO",
}
#: the entry-point group of installed methods
ENTRY_POINT_GROUP = "ggp_automl.methods"

#: methods registered by plug-ins (and the built-in classes once imported), by name
_REGISTERED: dict[str, MethodClass] = {}


def register_method(cls: MethodClass) -> MethodClass:
    """Register a :class:`~.base.SearchMethod` subclass under ``cls.name`` (a class decorator). A plug-in
    may not take a built-in's name: a run's config must mean the same method wherever it is resumed."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"{cls.__qualname__} needs a class attribute `name` (its --method name)")
    target = BUILT_IN.get(name)
    if target is not None and target != f"{cls.__module__}:{cls.__qualname__}":
        raise ValueError(f"method name {name!r} is a built-in method's; choose another name for "
                         f"{cls.__module__}.{cls.__qualname__}")
    _REGISTERED[name] = cls
    return cls


@functools.cache
def _entry_points() -> dict[str, object]:
    """The installed methods' entry points, read once a process (a scan of every installed distribution
    costs about 10 ms, and RunConfig looks method names up several times)."""
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def method_names() -> tuple[str, ...]:
    """Every method name known now: the built-ins, installed entry points, then plug-ins' registrations."""
    names = list(BUILT_IN)
    names += [n for n in _entry_points() if n not in names]
    names += [n for n in _REGISTERED if n not in names]
    return tuple(names)


def known_methods() -> tuple[str, ...]:
    """The same as :func:`method_names` (the name the rest of the code has used)."""
    return method_names()


def method_class(name: str) -> MethodClass:
    """The class of the method ``name``; KeyError naming the known ones when there is none."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name in BUILT_IN:
        module, _, attr = BUILT_IN[name].partition(":")
        cls = getattr(importlib.import_module(module), attr)
    else:
        ep = _entry_points().get(name)
        if ep is None:
            raise KeyError(f"unknown method {name!r}; known: {', '.join(method_names())} (a method of your own "
                           "joins with --plugin FILE.py that calls register_method)")
        try:
            cls = ep.load()
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - an installed package's fault, said as input
            from ggp_automl.spaces._plugins import PluginError, where

            raise PluginError(f"the {ENTRY_POINT_GROUP} entry point {ep.name} = {ep.value} of an installed package "
                              f"fails: {where(exc)}") from None
    _REGISTERED[name] = cls
    return cls


def supports_async(name: str) -> bool:
    """Whether the method has an asynchronous (steady-state) form; False for an unknown name."""
    try:
        return bool(getattr(method_class(name), "asynchronous", False))
    except KeyError:
        return False


class _Methods(Mapping):
    """``METHODS[name]`` → class, iterating every known method (imports them when asked)."""

    def __getitem__(self, name: str):
        return method_class(name)

    def __iter__(self) -> Iterator[str]:
        return iter(method_names())

    def __len__(self) -> int:
        return len(method_names())

    def __contains__(self, name) -> bool:
        return name in method_names()


#: every method by name, as a read-only mapping of classes
METHODS: Mapping[str, MethodClass] = _Methods()


def make_method(config, grammar, meta, policy=None) -> object:
    """The run's method, attached to its grammar and data (``config.method`` names it)."""
    try:
        cls = method_class(config.method)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    return cls(config, policy).attach(grammar, meta)

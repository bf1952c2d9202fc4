"""GGP's and spGGP's operators in a DEAP toolbox, so that a user swaps them the DEAP way.

Why: a GP researcher tries a selection, crossover or mutation of their own by registering it in a
``deap.base.Toolbox``. GGP and spGGP (:mod:`ggp_automl.search.methods.ggp`, :mod:`ggp_automl.search.methods.spggp`) select and vary
only through their ``method.toolbox``, whose three operators are called positionally:

* ``toolbox.select(pool, k, rng)`` → a list of ``k`` individuals of ``pool`` (default
  :func:`tournament_select`: ``k`` tournaments of ``tournament_size``, the thesis's 2);
* ``toolbox.mate(ind1, ind2, rng)`` → two new children, or None when these parents cannot be crossed
  (default :func:`whigham_mate`; on None GGP draws another mate, up to 10 times);
* ``toolbox.mutate(ind, rng)`` → one new individual (default :func:`whigham_mutate`, which regrows a
  subtree with the individual's species grammar). Not DEAP's ``(ind,)``: our individuals are values.

Anything else an operator needs is bound when it is registered (``toolbox.register("mutate", fn,
variation=method.variation)``, DEAP's partial application). The algorithm around the operators stays the
thesis's: elitism, P_c and P_m, one population per species, restarts; children are handed back as fresh
(unevaluated) individuals of the pool's species whatever an operator returns.

Who registers: after the defaults, every plug-in module of the run (``RunConfig.plugins``, imported by
:mod:`spaces.plugins`) that defines ``configure_toolbox(toolbox, method)`` is called in the order given,
then the method's own :meth:`ToolboxMixin.configure_toolbox` (a subclass's hook). The plug-ins are
recorded in ``config.json``, and the toolbox is rebuilt, never pickled, whenever the method attaches to
its grammar (start and ``--resume``), so a resumed run breeds with the same operators and a checkpoint
needs no pickled function.

Determinism: ``rng`` is the run's one ``numpy.random.Generator``; an operator draws from it and from
nothing else (not Python's ``random``, not ``np.random``'s global state), so a seed gives one run.
"""
from __future__ import annotations

import functools
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from deap import base

from ggp_automl.spaces.plugins import PluginError

from ..individual import Individual
from .base import tournament

if TYPE_CHECKING:
    from .base import SearchMethod
    from ..variation import Variation

#: what a plug-in module defines to register operators
HOOK = "configure_toolbox"
OPERATORS = ("select", "mate", "mutate")


class OperatorError(PluginError):
    """A user's operator or toolbox hook that fails or returns something else than its signature says;
    the message names it and the file and line (the CLI exits 1; an interrupted run resumes)."""


# -- the defaults: the thesis's operators ---------------------------------------------------------------

def tournament_select(pool: list[Individual], k: int, rng: np.random.Generator,
                      tournsize: int = 2) -> list[Individual]:
    """``k`` tournaments of ``tournsize`` draws with replacement (:func:`ggp_automl.search.methods.base.tournament`)."""
    return [tournament(pool, tournsize, rng) for _ in range(k)]


def whigham_mate(ind1: Individual, ind2: Individual, rng: np.random.Generator,
                 variation: "Variation") -> tuple[Individual, Individual] | None:
    """Whigham crossover (:func:`gp.operators.whigham_crossover`); None when the parents share no rule."""
    return ind1.crossover(ind2, variation, rng)


def whigham_mutate(ind: Individual, rng: np.random.Generator, variation: "Variation") -> Individual:
    """Whigham mutation with the individual's species grammar (:func:`gp.operators.whigham_mutation`)."""
    return ind.mutate(variation, rng)


DEFAULTS = {"select": tournament_select, "mate": whigham_mate, "mutate": whigham_mutate}


def default_toolbox(method: "SearchMethod") -> base.Toolbox:
    toolbox = base.Toolbox()
    toolbox.register("select", tournament_select, tournsize=method.params["tournament_size"])
    toolbox.register("mate", whigham_mate, variation=method.variation)
    toolbox.register("mutate", whigham_mutate, variation=method.variation)
    return toolbox


def build_toolbox(method: "SearchMethod") -> base.Toolbox:
    """The method's toolbox: the defaults, then the run's plug-ins' hooks, then the method's own hook;
    user operators come back wrapped so that a failure says whose it is (:class:`OperatorError`)."""
    toolbox = default_toolbox(method)
    for spec, hook in plugin_hooks(method.config.plugins):
        _run_hook(lambda: hook(toolbox, method), f"{HOOK} of plug-in {spec}")
    if callable(getattr(method, HOOK, None)):
        _run_hook(lambda: method.configure_toolbox(toolbox), f"{type(method).__name__}.{HOOK}")
    for name in OPERATORS:
        operator = getattr(toolbox, name, None)
        if not callable(operator):
            raise OperatorError(f"the toolbox has no {name} operator after the plug-ins' {HOOK}: register one "
                                f"(toolbox.register({name!r}, …)); signatures in search/methods/toolbox.py")
        if not (isinstance(operator, functools.partial) and operator.func is DEFAULTS[name]):
            setattr(toolbox, name, CheckedOperator(name, operator))
    return toolbox


def plugin_hooks(plugins) -> list[tuple[str, object]]:
    """``(spec, configure_toolbox)`` of each plug-in module that defines one, in the run's order."""
    if not plugins:
        return []
    from ggp_automl.spaces.plugins import load_plugins

    hooks = []
    for spec in load_plugins(plugins):  # imported already by the run: this only finds the modules
        module = sys.modules.get(Path(spec).stem if spec.endswith(".py") else spec)
        hook = getattr(module, HOOK, None)
        if hook is None:
            continue
        if not callable(hook):
            raise OperatorError(f"plug-in {spec}: {HOOK} must be a function (toolbox, method), "
                                f"not a {type(hook).__name__}")
        hooks.append((spec, hook))
    return hooks


class ToolboxMixin:
    """The side of GGP and spGGP that holds the toolbox: built by :meth:`build_toolbox` when the method
    attaches to its grammar, dropped from the pickled state (checkpoints hold no functions)."""

    toolbox: base.Toolbox | None = None

    def configure_toolbox(self, toolbox: base.Toolbox) -> None:
        """A subclass's operators: re-register ``select``, ``mate`` or ``mutate`` here (called after the
        plug-ins' hooks, at every start and resume)."""

    def build_toolbox(self) -> None:
        self.toolbox = build_toolbox(self)

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["toolbox"] = None
        return state


class CheckedOperator:
    """A user's operator: called as registered, its exceptions and wrong results turned into an
    :class:`OperatorError` that names it and where it failed."""

    def __init__(self, name: str, operator):
        self.name = name
        self.operator = operator

    @property
    def label(self) -> str:
        func = getattr(self.operator, "func", self.operator)
        return f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(func))}"

    def __call__(self, *args):
        try:
            out = self.operator(*args)
        except OperatorError:
            raise
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code: said with its place, not a traceback
            raise OperatorError(f"the {self.name} operator {self.label} fails: {_where(exc)}") from None
        problem = _result_problem(self.name, out, args)
        if problem:
            raise OperatorError(f"the {self.name} operator {self.label} {problem} (signatures: search/methods/toolbox.py)")
        return out

    def __repr__(self) -> str:
        return f"CheckedOperator({self.name!r}, {self.operator!r})"


def _result_problem(name: str, out, args) -> str | None:
    def individuals(xs) -> bool:
        return all(isinstance(x, Individual) for x in xs)

    if name == "select":
        if not isinstance(out, (list, tuple)) or len(out) != args[1] or not individuals(out):
            return f"must return a list of {args[1]} individuals of the pool, got {type(out).__name__} {out!r:.60}"
    elif name == "mate":
        if out is not None and not (isinstance(out, (list, tuple)) and len(out) == 2 and individuals(out)):
            return f"must return two individuals or None, got {type(out).__name__} {out!r:.60}"
    elif not isinstance(out, Individual):
        hint = " (DEAP's mutations return (ind,): return the individual itself)" \
            if isinstance(out, tuple) and len(out) == 1 else ""
        return f"must return one individual, got {type(out).__name__} {out!r:.60}{hint}"
    return None


def _run_hook(call, what: str) -> None:
    try:
        call()
    except OperatorError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - the user's code
        raise OperatorError(f"{what} fails: {_where(exc)}") from None


def _where(exc: BaseException) -> str:
    """``file:line: Type: message`` of the innermost frame outside this module."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != __file__]
    place = f"{frames[-1].filename}:{frames[-1].lineno}: " if frames else ""
    return f"{place}{type(exc).__name__}: {exc}"

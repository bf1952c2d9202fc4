"""A grammar as a flat conditional configuration space (ConfigSpace), and back.

Why: Bayesian optimisation libraries (SMAC3) search a *box* of named hyper-parameters with
activity conditions, while the project's search space is a grammar the user edits. This module
turns one into the other so that BO samples the same ``.bnf`` file every other method samples:

* the grammar is **unrolled** from its start symbol: every place a rule can occur in a derivation
  is its own *site* (:attr:`gp.policy.ChoiceContext.unrolled`), so the base learners of two
  meta-learners in one tree are two sets of hyper-parameters, not one;
* a rule with several alternatives at a site becomes a ``Categorical`` over the alternative
  indices (weighted by the grammar's weights, so a random configuration is as likely to hold each
  algorithm as a random derivation is; default: the rule's ``#@ default``);
* a ``RANDOM-INT``/``RANDOM-REAL`` becomes an ``Integer``/``Float`` with its range and log flag
  (a real grid ``step=`` an ``Integer`` over the grid's index); a constant range is no
  hyper-parameter at all;
* everything below an alternative is active only when its site's choice takes that
  alternative (``EqualsCondition`` to the nearest choice above; single-alternative rules pass
  their parent's condition down).

A configuration is decoded into a derivation tree **through the sampling-policy seam**
(:class:`ConfigPolicy` answers the generator's decisions from the configuration), so trees come
from :class:`gp.generate.TreeGenerator` with its depth and size rules like every other tree;
:meth:`FlatSpace.encode` is the inverse. A recursive grammar has no finite unrolling: it is
refused with :class:`FlattenError` (use ``--method tpe``, whose define-by-run sampler needs no
flattening). The Large space unrolls to about 1,900 hyper-parameters.
"""
from __future__ import annotations

import math
from typing import Mapping

import numpy as np
from ConfigSpace import Categorical, Configuration, ConfigurationSpace, EqualsCondition, Float, Integer

from .analysis import default_alternative
from .binding import BoundGrammar
from .generate import TreeGenerator
from .grammar import NonTerminal, Sampler
from .policy import ChoiceContext, SamplingPolicy, unrolled_key
from .tree import Leaf, Node

#: unrolled hyper-parameters a grammar may have (the Large space has about 1,900)
MAX_HYPERPARAMETERS = 20_000


class FlattenError(ValueError):
    """The grammar cannot be a flat configuration space (recursion, or too many sites)."""


def _add_conditions(space: ConfigurationSpace, conditions: list) -> None:
    """``space.add(conditions)``, with ConfigSpace's cycle check run once instead of after every
    condition: the check walks the whole space each time, so the Large space's 1,900 conditions took
    half a minute (issue 25: a BO run spent it before its budget's clock started). The conditions of
    an unrolled grammar form a tree (each site's condition names the choice above it), so they cannot
    make a cycle; the check still runs, once, at the end. Where ConfigSpace's internals differ from
    the version this was written for, the plain ``add`` runs."""
    dag = getattr(space, "_dag", None)
    check = getattr(dag, "_check_cyclic_dependancy", None)
    if check is None:
        space.add(conditions)
        return
    dag._check_cyclic_dependancy = lambda: None  # this object only
    try:
        space.add(conditions)
    finally:
        del dag._check_cyclic_dependancy
    check()


class FlatSpace:
    """The configuration space of a bound grammar, with decoding and encoding of trees."""

    def __init__(self, bound: BoundGrammar, seed: int = 0):
        grammar = bound.grammar
        if grammar.analysis.is_recursive:
            rules = ", ".join(f"<{r}>" for r in sorted(grammar.analysis.recursive))
            raise FlattenError(f"{grammar.path}: a recursive grammar ({rules} can derive itself) has no finite "
                               f"flat configuration space for Bayesian optimisation; use --method tpe (which "
                               f"needs no flattening) or another method")
        self.bound = bound
        self.space = ConfigurationSpace(seed=seed)
        self.numeric: dict[str, tuple] = {}  # key -> (kind, lo, hi, lo_open, hi_open, grid)
        self._hps: dict[str, object] = {}
        self._conditions: list[tuple] = []  # (hyper-parameter, (parent key, value))
        # explicit stack instead of recursion: (rule, site, condition as (parent key, value) or None)
        stack: list[tuple[str, tuple, tuple | None]] = [(grammar.start, (), None)]
        while stack:
            name, site, cond = stack.pop()
            rule = grammar[name]
            key = unrolled_key(site, name)
            multi = len(rule.alternatives) > 1
            if multi:
                default = default_alternative(rule)
                n = len(rule.alternatives)
                self._add(Categorical(key, list(range(n)), weights=[a.weight for a in rule.alternatives],
                                      default=default if default is not None and 0 <= default < n else 0), cond)
            for a, alt in enumerate(rule.alternatives):
                below = (key, a) if multi else cond
                for i, item in enumerate(alt.items):
                    if isinstance(item, NonTerminal):
                        stack.append((item.name, site + ((name, a, i),), below))
                    elif isinstance(item, Sampler):
                        self._numeric(unrolled_key(site, name, a, i), (name, a, i), item, below)
        self.space.add(list(self._hps.values()))
        _add_conditions(self.space, [EqualsCondition(hp, self._hps[parent], value)
                                     for hp, (parent, value) in self._conditions])

    def _add(self, hp, cond) -> None:
        if len(self._hps) >= MAX_HYPERPARAMETERS:
            raise FlattenError(f"{self.bound.grammar.path}: the grammar unrolls to more than "
                               f"{MAX_HYPERPARAMETERS} hyper-parameters; too many for a flat configuration space")
        self._hps[hp.name] = hp
        if cond is not None:
            self._conditions.append((hp, cond))

    def _numeric(self, key: str, where: tuple, s: Sampler, cond) -> None:
        lo, hi = self.bound.range_of(where)
        grid = self.bound.grid_of(where)
        if grid is not None:
            if len(grid) > 1:
                self._add(Integer(key, (grid.first, grid.last)), cond)
                self.numeric[key] = ("grid", lo, hi, s.lo_open, s.hi_open, grid)
            return
        if lo == hi:
            return
        log = bool(s.log) and lo > 0
        if s.kind == "int":
            self._add(Integer(key, (int(lo), int(hi)), log=log), cond)
        else:
            self._add(Float(key, (float(lo), float(hi)), log=log), cond)
        self.numeric[key] = (s.kind, lo, hi, s.lo_open, s.hi_open, None)

    def __len__(self) -> int:
        return len(self._hps)

    # -- configuration <-> tree ----------------------------------------------------------------
    def decode(self, config: Configuration | Mapping, max_depth: int = 100) -> Node:
        """The derivation tree of a configuration (through :class:`ConfigPolicy` and the generator)."""
        values = dict(config) if not isinstance(config, dict) else config
        policy = ConfigPolicy(values, self.numeric)
        # the policy decides everything itself; the Generator is only the seam's signature
        return TreeGenerator(self.bound, policy).grow(np.random.default_rng(0), max_depth)

    def encode(self, tree: Node) -> dict:
        """The values of the active hyper-parameters that decode into ``tree``."""
        out: dict = {}
        stack: list[tuple[Node, tuple]] = [(tree, ())]
        while stack:
            node, site = stack.pop()
            key = unrolled_key(site, node.rule)
            if key in self._hps:
                out[key] = node.alt
            for i, child in enumerate(node.children):
                if isinstance(child, Node):
                    stack.append((child, site + ((node.rule, node.alt, i),)))
                elif isinstance(child, Leaf):
                    k = unrolled_key(site, node.rule, node.alt, i)
                    if k in self.numeric:
                        kind, *_, grid = self.numeric[k]
                        out[k] = grid.index(child.value) if grid is not None else child.value
        return out

    def configuration(self, tree: Node) -> Configuration:
        return Configuration(self.space, values=self.encode(tree))


class ConfigPolicy(SamplingPolicy):
    """Answers the generator's decisions from one configuration (keys: unrolled sites).

    A decision whose site is not in the configuration (a constant range, a choice the depth
    limits narrowed to one alternative) takes the first allowed candidate or the range's low end.
    """

    def __init__(self, values: Mapping, numeric: Mapping):
        self.values = values
        self.numeric = numeric

    def choose(self, ctx: ChoiceContext, candidates, weights, rng) -> int:
        value = self.values.get(ctx.unrolled)
        if value is None:
            return candidates[0]
        value = int(value)
        return value if value in candidates else min(candidates, key=lambda c: abs(c - value))

    def sample_int(self, ctx, lo, hi, log, rng) -> int:
        value = self.values.get(ctx.unrolled)
        return int(lo) if value is None else min(max(int(value), int(lo)), int(hi))

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None) -> float:
        value = self.values.get(ctx.unrolled)
        entry = self.numeric.get(ctx.unrolled)
        if entry is not None and entry[-1] is not None:  # a grid: the configuration holds the index
            grid = entry[-1]
            return grid.value(grid.first if value is None else min(max(int(value), grid.first), grid.last))
        v = float(lo) if value is None else min(max(float(value), float(lo)), float(hi))
        # ConfigSpace ranges are closed: keep an open end open
        if lo_open and v <= lo:
            v = math.nextafter(float(lo), math.inf)
        if hi_open and v >= hi:
            v = math.nextafter(float(hi), -math.inf)
        return v


def take_pending(pending: dict[str, list[dict]], tree: Node, flat: FlatSpace, keep: bool = False) -> dict:
    """The configuration a told candidate was asked as: the first of its phenotype's in ``pending`` (asked,
    not told yet; removed unless ``keep``), or its tree's own encoding when none is (in flight at a resume)."""
    waiting = pending.get(tree.phenotype)
    if not waiting:
        return flat.encode(tree)
    if keep:
        return waiting[0]
    values = waiting.pop(0)
    if not waiting:
        del pending[tree.phenotype]
    return values

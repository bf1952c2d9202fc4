"""The hyper-parameters of one algorithm, read off a derivation tree, and their defaults.

The mapper finds each algorithm in a tree by its name terminal (``RandomForest``,
``BR``, ``Bagging`` …). The algorithm *owns* the annotated hyper-parameter nodes
under the node that holds its name, and its builder reads them by rule name:
``p.int("nt")``, ``p.flag("ct")``, ``p.cat("em")``, ``p.has("u")``.
Species grammars replace sampled values by literal defaults; :class:`Params` reads
both forms the same way, so builders never care which species a tree came from.

Defaults are written once, in the grammars: a value absent from the tree is the
``#@ default=`` annotation of the grammar the tree came from (:func:`grammar_defaults`,
which the compiler hands every :class:`Params`), else that of the shipped reference
grammars (:func:`reference_defaults`: ``large.bnf``, then ``ensembles.bnf`` for the
PBIL-Auto-Ens rules it adds), which covers a user's grammar that leaves a rule out and
builders called without a tree (``Params(name)``). A builder that wrote its own copy of a
default could silently disagree with the grammar, and a species tree (which carries the
literal default) would then build a different model from a tree that omits the rule.
A rule no grammar annotates is an error naming the rule and the algorithm, not a silent 0.
"""
from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass, field
from typing import Any, Mapping

from ggp_automl.gp.grammar import Grammar, NonTerminal, Rule, Terminal

#: the shipped grammars whose annotations are the defaults of last resort, first match wins:
#: large.bnf holds every rule of the multi-label spaces (small and medium are subsets of it),
#: ensembles.bnf adds the PBIL-Auto-Ens rules (Stacking/Vote, the WEKA seeds, …)
REFERENCE_GRAMMARS = ("large.bnf", "ensembles.bnf")
from ..gp.shipped import SHIPPED_GRAMMARS as GRAMMAR_DIR  # noqa: E402

#: marks "no default passed" (None is a legitimate categorical default: EMPTY)
_NO_DEFAULT: Any = object()


class UnknownHyperParameter(LookupError):
    """A builder read a rule that neither the tree, its grammar nor the reference grammars define."""


def _typed(kind: str, tokens: tuple) -> tuple:
    """A single-token int/real default as a number (as a sampled leaf would be); text otherwise."""
    if kind not in ("int", "real") or len(tokens) != 1 or not isinstance(tokens[0], str):
        return tokens
    try:
        return (int(tokens[0]) if kind == "int" else float(tokens[0]),)
    except ValueError:  # a literal alternative such as 'auto', which the grammar allows
        return tokens


def _rule_defaults(grammar: Grammar, rule: Rule, out: dict, visiting: set) -> tuple | None:
    """The leaf tokens a tree holds under ``rule`` when it sits at its default (None: undefined).

    A literal default is its tokens; ``#k`` is alternative k with each non-terminal at its own
    default -- exactly the leaves of a species-1 tree -- so ``<w> ::= 0 1 | -1 <d>`` with
    ``default=#2`` and ``<d>`` at 1 gives ``(-1, 1)``. A sampler or a structural rule inside
    the alternative leaves the default undefined.
    """
    if rule.name in out:
        return out[rule.name]
    ann = rule.annotation
    if ann is None or ann.default is None or rule.name in visiting:
        return None
    if isinstance(ann.default, tuple):
        tokens: tuple | None = ann.default
    else:
        visiting.add(rule.name)
        tokens = ()
        for item in rule.alternatives[ann.default].items:
            if isinstance(item, Terminal):
                tokens += (item.text,)
            elif isinstance(item, NonTerminal) and item.name in grammar:
                sub = _rule_defaults(grammar, grammar[item.name], out, visiting)
                tokens = None if sub is None else tokens + sub
            else:  # a sampler, or a reference to a missing rule
                tokens = None
            if tokens is None:
                break
        visiting.discard(rule.name)
    if tokens is not None:
        tokens = _typed(ann.kind, tuple(tokens))
        out[rule.name] = tokens
    return tokens


_BY_GRAMMAR: weakref.WeakKeyDictionary[Grammar, dict[str, tuple]] = weakref.WeakKeyDictionary()


def grammar_defaults(grammar: Grammar) -> Mapping[str, tuple]:
    """Rule name -> the tokens of its annotated default, for every hyper-parameter of ``grammar``.

    The tokens are what :attr:`Params.values` would hold for a tree at that default (ints and
    reals as numbers, ``()`` for EMPTY). Memoised per grammar (a grammar is immutable); the
    mapping is shared, so callers must not change it.
    """
    cached = _BY_GRAMMAR.get(grammar)
    if cached is None:
        cached = {}
        for rule in grammar:
            _rule_defaults(grammar, rule, cached, set())
        _BY_GRAMMAR[grammar] = cached
    return cached


@functools.cache
def reference_defaults() -> Mapping[str, tuple]:
    """The defaults of :data:`REFERENCE_GRAMMARS`, loaded once; the first grammar that annotates a rule wins."""
    from ggp_automl.gp.bnf_parser import load_grammar  # the parser (lark) is only needed once

    merged: dict[str, tuple] = {}
    for name in REFERENCE_GRAMMARS:
        for rule, tokens in grammar_defaults(load_grammar(GRAMMAR_DIR / name)).items():
            merged.setdefault(rule, tokens)
    return merged


@dataclass
class Params:
    """Hyper-parameters of one algorithm occurrence.

    ``values`` maps an annotated rule name to the tokens (str/int/float) of its subtree
    (an empty tuple for EMPTY); ``tokens`` are all terminals the algorithm owns;
    ``defaults`` are the annotated defaults of the tree's grammar (:func:`grammar_defaults`),
    empty when the algorithm is built without a grammar.

    ``int``/``real``/``cat`` take an optional ``default``: a value the builder *computes*
    (from other hyper-parameters or the data) for an absent rule. It wins over the
    grammars' annotations, as it always did for user builders; a shipped builder never
    passes one for a rule a grammar annotates (``tests/test_builder_defaults.py``).
    """

    name: str
    values: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    tokens: tuple[Any, ...] = ()
    random_state: int = 0
    #: where the algorithm sits in the grammar, for error messages
    origin: str = ""
    defaults: Mapping[str, tuple[Any, ...]] = field(default_factory=dict, repr=False)

    def default(self, rule: str) -> tuple[Any, ...]:
        """The tokens of ``rule``'s annotated default: the tree's grammar's, else the reference grammars'."""
        if rule in self.defaults:
            return self.defaults[rule]
        reference = reference_defaults()
        if rule in reference:
            return reference[rule]
        where = f" ({self.origin})" if self.origin else ""
        raise UnknownHyperParameter(
            f"{self.name}{where} reads the hyper-parameter <{rule}>, which neither the tree, its grammar nor "
            f"the reference grammars ({', '.join(REFERENCE_GRAMMARS)}) annotate: add "
            f"'<{rule}> ::= … #@ type=… default=…' to the grammar, or correct the rule name in the builder")

    def _first(self, rule: str, default: Any):
        vals = self.values.get(rule)
        if vals:
            return vals[0]
        if default is not _NO_DEFAULT:
            return default
        vals = self.default(rule)
        return vals[0] if vals else None

    def int(self, rule: str, default: int = _NO_DEFAULT) -> int:
        v = self._first(rule, default)
        if v is None:
            raise ValueError(f"{self.name}: <{rule}> defaults to EMPTY, not to a number ({self.origin})")
        return int(float(v))

    def real(self, rule: str, default: float = _NO_DEFAULT) -> float:
        v = self._first(rule, default)
        if v is None:
            raise ValueError(f"{self.name}: <{rule}> defaults to EMPTY, not to a number ({self.origin})")
        return float(v)

    def flag(self, rule: str) -> bool:
        """Is the switch on? Present and not EMPTY in the tree; when absent, its default is not EMPTY
        (``<ulo>`` defaults to present, decision 9; every other shipped switch to EMPTY)."""
        vals = self.values[rule] if rule in self.values else self.default(rule)
        return bool(vals)

    def cat(self, rule: str, default: str | None = _NO_DEFAULT) -> str | None:
        """The chosen value's text; None when EMPTY was chosen. Absent: the default's text
        (None for an EMPTY default). An explicit ``default`` keeps the old reading: it
        replaces an absent or EMPTY value."""
        vals = self.values.get(rule)
        if not vals:
            if default is not _NO_DEFAULT:
                return default
            if rule in self.values:
                return None
            vals = self.default(rule)
        return " ".join(str(v) for v in vals) if vals else None

    def seed(self, rule: str) -> int:
        """The random seed of this algorithm: the grammar's seed rule when the tree or its grammar has
        one (PBIL-Auto-Ens searches WEKA's ``-S`` like any hyper-parameter), else the run's
        ``random_state``. A phenotype therefore fixes its model completely, as in WEKA. The
        reference grammars are not consulted: without a seed rule of its own, an algorithm is
        seeded by the run."""
        vals = self.values.get(rule) or self.defaults.get(rule)
        return self.random_state if not vals else int(float(vals[0]))

    def has(self, token: str) -> bool:
        """Does the terminal ``token`` occur among this algorithm's own terminals?"""
        return any(str(t) == token for t in self.tokens)

    def __contains__(self, rule: str) -> bool:
        return rule in self.values

"""Can the mapper build the models a grammar describes? Checked before any search.

The grammar engine (``gp/``) knows nothing of algorithms, so a grammar can be valid
BNF and still useless to the search: a misspelt algorithm (``RandomForrest``), a
start rule that derives no algorithm at all, or algorithms nested in an order the
mapper cannot assemble. Each such tree would fail one by one at evolve time; this
module finds them in the grammar, with ``file:line:col``, by reading the grammar the
way :func:`spaces.compiler.algorithm_chain` reads a tree:

* a node whose alternative has a registered terminal is that algorithm (the first
  such terminal), its other terminals are its own tokens;
* otherwise a node of an annotated rule is a value: nothing below it is an algorithm;
* otherwise the node is structural, and a terminal or sampled number in it has no
  estimator — an error.

The algorithms of a tree, in pre-order, form a chain in which each wraps the next
(``build_estimator``): the outermost produces the task's model — a multi-label method for a
multi-label grammar (Auto-MEKA's spaces), a single-label classifier for a single-label one
(``ensembles.bnf``) — and each one's inner algorithm must produce what it takes as a base
(``registry.TAKES_BASE``). A grammar builds one kind: :func:`grammar_produces` says which,
and a grammar whose trees build both is refused. That
is a finite automaton over the kinds, so the chains a rule can derive are summarised,
per state, by the set of states its derivations lead to; a worklist computes these
sets (monotone, at most 12 changes a rule, no recursion, recursive grammars included).
No chain ends well: error. Some chains do not: warning (those trees score 0).
"""
from __future__ import annotations

import difflib
from collections import deque

from ggp_automl.gp.errors import Diagnostic, GrammarError, shorten
from ggp_automl.gp.grammar import Alternative, Grammar, NonTerminal, Rule, Sampler, Terminal

from .registry import TAKES_BASE, AlgorithmSpec, load_all

#: Automaton states: what the next (inner) algorithm must produce; DONE: nothing may follow.
_NEEDS = ("mlc", "slc")
DONE = "done"
BROKEN = "broken"
_STATES = (*_NEEDS, DONE)
#: What the outermost algorithm may produce (spaces.compiler.build_estimator): the grammar's task.
_STARTS = ("mlc", "slc")
_KIND_NAMES = {"mlc": "multi-label methods", "slc": "single-label classifiers"}
#: How close a terminal must be to an algorithm name to be reported as its misspelling.
_TYPO_CUTOFF = 0.85


def check_against_registry(grammar: Grammar) -> list[Diagnostic]:
    """Raise :class:`GrammarError` if no tree of ``grammar`` can be built; return warnings.

    Errors: a terminal or sampled number in a structural rule (no algorithm name, not a
    hyper-parameter), a misspelt algorithm name, a start rule whose trees contain no
    algorithm or never nest them as the mapper assembles them. Warning: some trees do
    not nest their algorithms correctly.
    """
    return registry_check(grammar)[0]


def grammar_produces(grammar: Grammar) -> str:
    """``"mlc"`` or ``"slc"``: whether the grammar's trees build multi-label methods or single-label
    classifiers (the task it is for, :attr:`evaluation.task.Task.produces`); GrammarError if none."""
    return registry_check(grammar)[1]


def registry_check(grammar: Grammar) -> tuple[list[Diagnostic], str]:
    """Both at once: the warnings of :func:`check_against_registry` and :func:`grammar_produces`'s kind."""
    errors, warnings, produced = _check(grammar)
    if errors:
        raise GrammarError(errors)
    return warnings, produced


def _check(grammar: Grammar) -> tuple[list[Diagnostic], list[Diagnostic], str | None]:
    registry = load_all()
    structural = _structural_rules(grammar, registry)
    errors: list[Diagnostic] = []
    for name in structural:
        errors += _terminal_problems(grammar, grammar[name], registry)
    if errors:
        return errors, [], None
    return _chain_problems(grammar, structural, registry)


def _algorithm(alt: Alternative, registry: dict[str, AlgorithmSpec]) -> AlgorithmSpec | None:
    for item in alt.items:
        if isinstance(item, Terminal) and item.text in registry:
            return registry[item.text]
    return None


def _is_value(rule: Rule, alt: Alternative, registry) -> bool:
    return rule.kind != "alg" and _algorithm(alt, registry) is None


def _structural_rules(grammar: Grammar, registry) -> list[str]:
    """Rules that can occur outside any hyper-parameter value, in grammar order."""
    seen, todo = {grammar.start}, deque([grammar.start])
    while todo:
        rule = grammar[todo.popleft()]
        for alt in rule.alternatives:
            if _is_value(rule, alt, registry):
                continue
            for child in alt.nonterminals():
                if child not in seen:
                    seen.add(child)
                    todo.append(child)
    return [rule.name for rule in grammar if rule.name in seen]


def _terminal_problems(grammar: Grammar, rule: Rule, registry) -> list[Diagnostic]:
    names = list(registry)
    owner = rule.name.split("~")[0]
    where = f"<{owner}>" if not rule.synthetic else f"a {rule.synthetic} of <{owner}>"
    fix = (f"make {where} a hyper-parameter (#@ type=cat default=…)" if not rule.synthetic else
           "move the choice into a rule of its own annotated as a hyper-parameter (#@ type=cat default=…)")
    out = []
    for alt in rule.alternatives:
        algorithm = _algorithm(alt, registry)
        if algorithm is not None:  # beside its name: only the options its builder reads (registry.options)
            out += _stray_tokens(grammar, alt, algorithm, where, names)
            continue
        if rule.kind != "alg":
            continue
        for item in alt.items:
            if isinstance(item, Terminal):
                near = difflib.get_close_matches(item.text, names, n=1, cutoff=0.6)
                hint = f" (did you mean {near[0]}?)" if near else ""
                out.append(grammar.source.at(item.location, (
                    f"'{shorten(item.text)}' in {where} is not a registered algorithm{hint}; a terminal outside "
                    f"hyper-parameters must name one: fix the name, register a builder for it (in a module of "
                    f"your own: --plugin FILE.py, grammars/README.md §8), or {fix}")))
            elif isinstance(item, Sampler):
                out.append(grammar.source.at(item.location, (
                    f"the number drawn by {item} in {where} belongs to no algorithm: put it in an alternative "
                    f"that names one, or {fix.replace('cat default=…', 'int|real default=…')}")))
    return out


def _stray_tokens(grammar: Grammar, alt: Alternative, algorithm: AlgorithmSpec, where: str,
                  names: list[str]) -> list[Diagnostic]:
    """The items of an algorithm's alternative that mean nothing: a terminal that is neither its name nor
    an option its builder reads (a second algorithm name among them), a number drawn outside any
    hyper-parameter. The mapper would drop them (:func:`spaces.compiler.algorithm_chain` refuses them too)."""
    out = []
    reads = (f"{algorithm.name} reads the options {', '.join(algorithm.options)}" if algorithm.options else
             f"{algorithm.name} reads no option written beside its name")
    terminals = [item for item in alt.items if isinstance(item, Terminal)]
    stray = {id(terminals[i]) for i in algorithm.stray([t.text for t in terminals])}
    for item in alt.items:
        if id(item) in stray:
            if item.text in names:
                message = (f"'{item.text}' follows {algorithm.name} in one alternative of {where}: an alternative "
                           f"names one algorithm; put {item.text} in an alternative (or a rule) of its own")
            else:
                near = difflib.get_close_matches(item.text, names, n=1, cutoff=_TYPO_CUTOFF)
                hint = f"did you mean {near[0]}? " if near else ""
                message = (f"'{shorten(item.text)}' beside {algorithm.name} in {where} is not a registered "
                           f"algorithm, a hyper-parameter value or an option ({reads}); {hint}remove it, or "
                           f"make it a value of an annotated rule (#@ type=cat default=…)")
            out.append(grammar.source.at(item.location, message))
        elif isinstance(item, Sampler):
            out.append(grammar.source.at(item.location, (
                f"the number drawn by {item} beside {algorithm.name} in {where} belongs to no hyper-parameter: put "
                f"it in a rule of its own annotated #@ type=int|real default=…")))
    return out


def _step(state: str, spec: AlgorithmSpec) -> str:
    if state in _NEEDS and spec.produces == state:
        return TAKES_BASE[spec.kind] or DONE
    return BROKEN


def _chain_problems(grammar: Grammar, structural: list[str], registry
                    ) -> tuple[list[Diagnostic], list[Diagnostic], str | None]:
    """Which automaton states each rule's derivations lead to, from each state (a worklist fixpoint)."""
    effect: dict[str, dict[str, frozenset[str]]] = {n: {s: frozenset() for s in _STATES} for n in structural}
    users: dict[str, set[str]] = {}
    for name in structural:
        for alt in grammar[name].alternatives:
            for child in alt.nonterminals():
                users.setdefault(child, set()).add(name)
    todo, queued = deque(structural), set(structural)
    while todo:
        name = todo.popleft()
        queued.discard(name)
        new = {s: _rule_effect(grammar[name], s, effect, registry) for s in _STATES}
        if new != effect[name]:
            effect[name] = new
            for user in users.get(name, ()):
                if user not in queued:
                    queued.add(user)
                    todo.append(user)
    where = grammar[grammar.start].location
    start = f"<{grammar.start}>"
    ends = {kind: effect[grammar.start][kind] for kind in _STARTS}
    if all(e == {kind} for kind, e in ends.items()):
        return [grammar.source.at(where, f"no tree of {start} contains an algorithm: a terminal outside "
                                         "hyper-parameters must name a registered algorithm (BR, KNN, …)")], [], None
    shape = ("the mapper builds a chain of algorithms, each wrapping the next: meta-MLCs, then an MLC over "
             "meta-SLCs and one SLC, or an algorithm-adaptation MLC alone; or, for single-label data, meta-SLCs "
             "over one SLC")
    working = [kind for kind in _STARTS if DONE in ends[kind]]
    if not working:
        return [grammar.source.at(where, f"no tree of {start} nests its algorithms in a way the mapper can build "
                                         f"({shape})")], [], None
    if len(working) > 1:
        return [grammar.source.at(where, f"some trees of {start} build multi-label methods and others single-label "
                                         "classifiers; a grammar searches one kind (write one grammar per task)")
                ], [], None
    kind = working[0]
    warnings = []
    if kind in ends[kind]:
        warnings.append(grammar.source.at(where, f"some trees of {start} contain no algorithm; those candidates "
                                                 "will fail", "warning"))
    if ends[kind] - {DONE, kind}:
        warnings.append(grammar.source.at(where, f"some trees of {start} nest their algorithms in a way the mapper "
                                                 f"cannot build ({shape}); those candidates will fail", "warning"))
    return [], warnings, kind


def _rule_effect(rule: Rule, state: str, effect, registry) -> frozenset[str]:
    out: set[str] = set()
    for alt in rule.alternatives:
        if _is_value(rule, alt, registry):
            out.add(state)
            continue
        algorithm = _algorithm(alt, registry)
        states = {_step(state, algorithm)} if algorithm is not None else {state}
        for item in alt.items:
            if isinstance(item, NonTerminal):
                states = {t for s in states for t in ((BROKEN,) if s == BROKEN else effect[item.name][s])}
        out |= states
    return frozenset(out)

"""``alt @auto``: an alternative weighted by the number of algorithms it holds.

Decision 6 asks that every algorithm be equally likely. Hand-counted weights get there,
but then adding an algorithm means +1 on every weight on its path from the start rule;
``@auto`` makes the parser do that count, so adding an algorithm is editing one rule.

The count, on the rules after desugaring (``grammars/README.md`` §5 says it for users):

* Only **structural** rules hold algorithms: unannotated (``alg``) rules, and the groups
  and optionals written inside them. A hyper-parameter rule holds none.
* An alternative of a structural rule is read left to right, as the mapper reads a tree:
  hyper-parameters and numbers are skipped; a **terminal** is an algorithm's name and
  counts 1 (every algorithm rule starts with its name, I-7); a structural rule that
  always holds an algorithm counts its own count. Either ends the reading: what follows
  is inside that algorithm (its base learners), not a rival of it.
* A structural rule that may hold no algorithm (``<asc> ::= ASC <sm> | EMPTY``) is an
  optional **wrapper** ``W`` of what follows it. ``W`` and the ``rest`` it wraps count
  ``rest + count(W) · rest / F(W)``, where ``F(W)`` is the count of everything ``W`` wraps in
  the grammar (the distinct continuations after its uses): ``W``'s own algorithms are
  shared among its uses in proportion to what each use wraps. A wrapper with nothing
  after it counts its own algorithms. ``F`` reads the rules reachable from the start
  through structural rules (those a species keeps), or all structural rules for a
  wrapper none of those use; in any other rule, ``F`` is at least what a use wraps.
* A rule counts the sum of its alternatives' counts (whatever weights they are given).
* ``@auto`` gives an alternative its count; an alternative that holds no algorithm (the
  wrapper's ``EMPTY``) gets ``F`` of its rule, so a wrapper is present as often as one
  of the algorithms it wraps would be chosen.

Then, if every rule below is uniform over its algorithms, so is every ``@auto`` rule:
``<asc> <TREES> … <asc> <OTHERS>`` in the Large space count 5·23/22 … 2·23/22 (23 in
all: 22 bases and ASC), ``<asc>`` gets 1 : 22, and ASC and every base end up 1/23. It is
exact whenever a wrapper's uses together wrap each algorithm once (one gate probability
cannot suit two different contexts otherwise). Explicit weights may stand beside
``@auto``: they are compared with the counts as they are. A count that depends on
itself (recursion) has no finite value and is refused.

Everything is evaluated lazily by one driver with an explicit stack (no Python recursion
along the grammar, which may be a chain of 20,000 rules) and memoised, so resolving is
linear in the grammar's size.
"""
from __future__ import annotations

import math
from typing import Callable, Generator, Hashable

from .errors import Diagnostic, SourceLocation, SourceText
from .grammar import Alternative, NonTerminal, Rule, Terminal

#: A lazily computed value: yields the keys it needs, receives their values, returns its own.
Computation = Generator[Hashable, object, object]


class Cycle(Exception):
    """A value needed itself; ``path`` is the chain of keys from it back to it."""

    def __init__(self, path: list):
        super().__init__("cycle")
        self.path = path


def evaluate(key: Hashable, compute: Callable[[Hashable], Computation], memo: dict) -> object:
    """The value of ``key``, computing what it needs on an explicit stack; raises :class:`Cycle`."""
    if key in memo:
        return memo[key]
    stack = [(key, compute(key))]
    active = {key}
    sent = None
    while stack:
        current, gen = stack[-1]
        try:
            need = gen.send(sent)
        except StopIteration as done:
            memo[current] = sent = done.value
            active.discard(current)
            stack.pop()
            continue
        if need in memo:
            sent = memo[need]
        elif need in active:
            keys = [k for k, _ in stack]
            raise Cycle(keys[keys.index(need):] + [need])
        else:
            stack.append((need, compute(need)))
            active.add(need)
            sent = None
    return memo[key]


def is_structural(rules: dict[str, Rule], name: str) -> bool:
    """An ``alg`` rule, or a group/optional written inside one (those inherit their owner's kind)."""
    owner = rules.get(name.split("~")[0])
    return owner is not None and owner.kind == "alg"


class AlgorithmCount:
    """The algorithm count of every structural rule and alternative (see the module docstring)."""

    def __init__(self, rules: dict[str, Rule], start: str):
        self.rules = rules
        self.structural = {name for name in rules if is_structural(rules, name)}
        self.optional = self._may_hold_nothing()
        self.memo: dict = {}
        self.universe = self._universe(start)
        self.uses = self._uses()

    def _may_hold_nothing(self) -> set[str]:
        """Structural rules with a derivation that holds no algorithm (a least fixpoint, linear)."""
        waiting: dict[tuple[str, int], int] = {}
        users: dict[str, list[tuple[str, int]]] = {}
        found: set[str] = set()
        todo: list[str] = []
        for name in self.structural:
            for a, alt in enumerate(self.rules[name].alternatives):
                if any(isinstance(i, Terminal) for i in alt.items):
                    continue  # the reading stops at a terminal at the latest
                needs = {n for n in alt.nonterminals() if n in self.structural}
                waiting[(name, a)] = len(needs)
                for n in needs:
                    users.setdefault(n, []).append((name, a))
                if not needs and name not in found:
                    found.add(name)
                    todo.append(name)
        while todo:
            for user in users.get(todo.pop(), ()):
                waiting[user] -= 1
                if waiting[user] == 0 and user[0] not in found:
                    found.add(user[0])
                    todo.append(user[0])
        return found

    def _universe(self, start: str) -> list[str]:
        """The structural rules reachable from the start through structural rules, in the grammar's order.

        Only these count as uses of a wrapper: a species keeps exactly them (it fixes hyper-parameters
        only), so ``@auto`` resolves to the same weights in it.
        """
        seen, stack = {start}, [start] if start in self.structural else []
        while stack:
            for alt in self.rules[stack.pop()].alternatives:
                for n in alt.nonterminals():
                    if n in self.structural and n not in seen:
                        seen.add(n)
                        stack.append(n)
        return [name for name in self.rules if name in seen and name in self.structural]

    def _uses(self) -> dict[str, list[tuple[str, int, int]]]:
        """Per wrapper, where a continuation starts after each of its uses, one per distinct continuation.

        The uses are those in :meth:`_universe`'s rules; a wrapper that none of them uses (an unreachable
        one, say) has its uses in all structural rules instead. Two continuations are the same when they
        read the same symbols up to where the reading stops (hash-consed right to left, so a long
        alternative costs its length, not its square).
        """
        interned: dict[tuple, int] = {}
        inside, outside = set(self.universe), {}
        uses: dict[str, dict[int, tuple[str, int, int]]] = {}
        for name in (n for n in self.rules if n in self.structural):  # in order: F sums the same way every run
            found = uses if name in inside else outside
            for a, alt in enumerate(self.rules[name].alternatives):
                after = -1  # the id of the reading from position j + 1
                for j in range(len(alt.items) - 1, -1, -1):
                    item = alt.items[j]
                    if isinstance(item, NonTerminal) and item.name in self.optional:
                        found.setdefault(item.name, {}).setdefault(after, (name, a, j + 1))
                    if isinstance(item, Terminal):
                        after = interned.setdefault(("t", item.text), len(interned))
                    elif isinstance(item, NonTerminal) and item.name in self.structural:
                        last = item.name not in self.optional
                        after = interned.setdefault((item.name, -1 if last else after), len(interned))
        for name, found in outside.items():
            if name not in uses:
                uses[name] = found
        return {name: list(found.values()) for name, found in uses.items()}

    # -- the lazy computations ------------------------------------------------------------------------
    def _compute(self, key) -> Computation:
        kind = key[0]
        if kind == "rule":  # a rule: the sum of its alternatives
            total = 0.0
            for a in range(len(self.rules[key[1]].alternatives)):
                total += yield ("from", key[1], a, 0)
            return total
        if kind == "wraps":  # F(W): what a wrapper wraps
            total = 0.0
            for use in self.uses.get(key[1], ()):
                total += yield ("from", *use)
            return total
        _, name, a, j = key  # the reading of an alternative from its item j
        items = self.rules[name].alternatives[a].items
        while j < len(items):
            item = items[j]
            if isinstance(item, Terminal):
                return 1.0
            if isinstance(item, NonTerminal) and item.name in self.structural:
                own = yield ("rule", item.name)
                if item.name not in self.optional:
                    return own
                rest = yield ("from", name, a, j + 1)
                if rest == 0 or own == 0:
                    return rest or own  # nothing wrapped, or a wrapper holding nothing
                wraps = yield ("wraps", item.name)  # at least ``rest``, unless this rule is outside F's rules
                return rest + own * rest / max(wraps, rest)
            j += 1
        return 0.0

    def alternative(self, name: str, a: int) -> float:
        return evaluate(("from", name, a, 0), self._compute, self.memo)

    def rule(self, name: str) -> float:
        return evaluate(("rule", name), self._compute, self.memo)

    def wraps(self, name: str) -> float:
        return evaluate(("wraps", name), self._compute, self.memo)


def describe_cycle(path: list) -> str:
    """``<A> → <B> → <A>`` or ``<S> → what <W> wraps → <S>``: a cycle of keys, for a message."""
    steps: list[str] = []
    for key in path:
        step = f"what <{key[1]}> wraps" if key[0] == "wraps" else f"<{key[1]}>"  # a reading: its rule
        if not steps or steps[-1] != step:
            steps.append(step)
    return " → ".join(steps if len(steps) > 1 else steps * 2)


def auto_weight_misuse(rules: dict[str, Rule], auto_at: dict[tuple[str, int], SourceLocation],
                       weighted: set[tuple[str, int]], src: SourceText) -> list[Diagnostic]:
    """``@auto`` on a hyper-parameter, or beside an alternative without a weight (which would silently be 1)."""
    diags = []
    for name in dict.fromkeys(n for n, _ in auto_at):
        rule = rules[name]
        if not is_structural(rules, name):
            first = min(a for n, a in auto_at if n == name)
            owner = rules[name.split("~")[0]]  # a group or optional is part of the rule it is written in
            what = f"<{name}> is" if owner is rule else f"<{name}> is written inside <{owner.name}>, which is"
            diags.append(src.at(auto_at[(name, first)], f"{what} a hyper-parameter (type={owner.kind}): @auto "
                                "counts algorithms, which only structural (unannotated) rules hold; give its "
                                "alternatives explicit weights"))
            continue
        for a, alt in enumerate(rule.alternatives):
            if (name, a) not in auto_at and (name, a) not in weighted:
                diags.append(src.at(alt.location, f"<{name}>: this alternative has no weight, but others in the "
                                                  "rule have @auto; write @auto (or an explicit weight) on each"))
    return diags


def resolve_auto_weights(rules: dict[str, Rule], start: str, auto_at: dict[tuple[str, int], SourceLocation],
                         src: SourceText, diags: list[Diagnostic]) -> None:
    """Replace every ``@auto`` weight by its count, in place; a count that fails is a diagnostic at its ``@auto``.

    ``auto_at`` maps (rule, alternative index) to where ``@auto`` is written. Runs once every
    other check has passed, :func:`auto_weight_misuse` included (the count needs every
    reference resolved).
    """
    counter = AlgorithmCount(rules, start)
    for name in dict.fromkeys(n for n, _ in auto_at):
        rule = rules[name]
        if len(rule.alternatives) == 1:
            continue  # nothing to weigh it against
        weights = [alt.weight for alt in rule.alternatives]
        for a in range(len(weights)):
            if (name, a) not in auto_at:
                continue
            try:
                weights[a] = counter.alternative(name, a) or counter.wraps(name)
            except Cycle as cycle:
                diags.append(src.at(auto_at[(name, a)], "@auto cannot count the algorithms here: the count depends "
                                    f"on itself ({describe_cycle(cycle.path)}); a rule that contains itself, or a "
                                    "wrapper that wraps itself, has no finite count: give this rule explicit weights"))
                break
            if weights[a] == math.inf:  # 1,100 rules that each hold the next one twice
                diags.append(src.at(auto_at[(name, a)], "@auto: this alternative holds more than 1e308 algorithms "
                                                        "(counted with repetition); give explicit weights"))
            elif weights[a] == 0:
                diags.append(src.at(auto_at[(name, a)], f"<{name}>: this alternative holds no algorithm, and "
                                                        f"<{name}> wraps none (nothing holding one follows it), "
                                                        "so @auto has nothing to count; give an explicit weight"))
        else:
            if not all(0 < w < math.inf for w in weights):
                continue  # reported above
            alts = tuple(Alternative(alt.items, w, alt.location, auto=(name, a) in auto_at)
                         for a, (alt, w) in enumerate(zip(rule.alternatives, weights)))
            rules[name] = Rule(name, alts, rule.annotation, rule.location, rule.synthetic)

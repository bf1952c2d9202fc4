"""The checks of a grammar file beyond its syntax, and the limits that keep loading bounded.

``bnf_parser.py`` parses; this module judges what was parsed: sampler options (``log``,
``step=``), annotations (their text, defaults and the numbers of int/real rules),
references, finite derivations, what the generator can build, unreachable rules. Every
problem is a :class:`Diagnostic` with ``file:line:col``.

A grammar file is untrusted input. The file's size and token count are capped before
Lark sees it (:data:`MAX_CHARS`, :data:`MAX_TOKENS`), nesting before the recursive
transform (:data:`MAX_NESTING`), and each check here is linear or n log n in the
grammar's size. At most :data:`MAX_REPORTED` diagnostics of a kind are kept, so a file
with 10,000 broken references neither floods the terminal nor spends minutes on "did
you mean" hints.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass

import lark

from .binding import number_problem, sampler_range
from .errors import Diagnostic, SourceText, shorten
from .expressions import BoundError, is_well_formed
from .generate import DEFAULT_MAX_DEPTH, MAX_TREE_NODES
from .grammar import KINDS, SIZE_CAP, Annotation, NonTerminal, Rule, Sampler, Terminal, minimum_trees, reachable_from

#: Limits that keep loading bounded (the Large space has 31 KB and about 1,900 tokens).
MAX_CHARS = 1_000_000
MAX_TOKENS = 50_000
#: Groups, optionals, operators and function calls nested inside each other.
MAX_NESTING = 50
#: Diagnostics kept per kind (errors, warnings); the rest are counted in a note.
MAX_REPORTED = 50
_NESTING_NODES = frozenset({"group", "optional", "binop", "neg", "call"})
_TOKEN_ESTIMATE = re.compile(r'#[^\n]*|"[^"\n]*"|<[^<>|\s]+>|[^\s<>|()\[\],@"#]+|\S')


def literal_value(kind: str, text: str) -> tuple[float | None, str | None]:
    """The value of a literal of an int/real hyper-parameter, or why it is not one. Digits are ASCII ones:
    Python's int() and float() also read ``٣`` or ``３`` (issue 24), which no file of numbers means."""
    try:
        if not text.isascii():
            raise ValueError(text)
        value = int(text) if kind == "int" else float(text)
    except ValueError:
        return None, f"'{shorten(text)}' is not a valid {'integer' if kind == 'int' else 'real number'}"
    problem = number_problem(kind, value)
    return (None, problem) if problem else (value, None)


def sampler_options(sampler: str, options, err) -> tuple[bool, float | None]:
    """``(log, step)`` from the options of a ``RANDOM-INT``/``RANDOM-REAL``, as ``(NAME, value tokens)``.

    ``log`` takes no value; ``step=NUMBER`` (a positive finite number) only on ``RANDOM-REAL``
    and never with ``log``; each option at most once, in any order. ``err(token, message)``
    reports a problem at a token; an option in error is left out of the result.
    """
    real = sampler == "RANDOM-REAL"
    allowed = ["log", "step"] if real else ["log"]
    log, step, seen = False, None, {}
    for key, value in options:
        word = str(key)
        if word in seen and word in allowed:
            err(key, f"option '{word}' is given twice")
            continue
        seen[word] = key
        if word == "log":
            if value:
                err(key, "the option 'log' takes no value; write ', log'")
            else:
                log = True
        elif word == "step" and real:
            if not value:
                err(key, "step needs a value: step=NUMBER, e.g. step=0.05")
                continue
            text = "".join(str(t) for t in value)
            number = float(text)
            if not 0 < number < math.inf:  # a grid needs a step it can count in
                err(value[0], f"step must be a positive finite number, got {shorten(text)}")
            else:
                step = number
        elif word == "step":
            err(key, "step is only allowed for RANDOM-REAL; for a grid of integers, list the values "
                     "as alternatives (10 | 20 | 30)")
        else:
            hint = difflib.get_close_matches(word, allowed, n=1)
            extra = f" (did you mean '{hint[0]}'?)" if hint else ""
            options_text = "the options are 'log' and 'step=NUMBER'" if real else "the only option is 'log'"
            err(key, f"unknown option '{shorten(word)}' for {sampler}{extra}; {options_text}")
    if log and "step" in seen and real:
        err(seen["step"], "step and log cannot be combined: a grid's values are evenly spaced, not log-spaced")
        step = None
    return log, step


def check_numeric_terminals(rule: Rule, parts: list[Rule], src: SourceText, diags: list[Diagnostic]) -> None:
    """The terminals of an int/real rule (``parts``: it and its groups) are numbers: algorithms read them so."""
    if rule.kind not in ("int", "real"):
        return
    for part in parts:
        for alt in part.alternatives:
            for item in alt.items:
                problem = literal_value(rule.kind, item.text)[1] if isinstance(item, Terminal) else None
                if problem:
                    diags.append(src.at(item.location, f"<{rule.name}> is a hyper-parameter of type {rule.kind}, "
                                                       f"but {problem}; write numbers or RANDOM-INT/RANDOM-REAL"))


def check_annotation(rule: Rule, ann: Annotation, src: SourceText, diags: list[Diagnostic]) -> None:
    loc = ann.location

    def err(message: str):
        diags.append(src.at(loc, f"<{rule.name}>: {message}"))

    texts = [a.text for a in rule.alternatives]
    if ann.kind == "alg":
        if ann.default is not None:
            err("an 'alg' rule is always evolved and cannot have a default")
        return
    if ann.default is None:
        err(f"a '{ann.kind}' hyper-parameter needs a default (default=VALUE, EMPTY or #k)")
        return
    if isinstance(ann.default, int):
        if ann.default >= len(rule.alternatives):
            err(f"default=#{ann.default + 1} but the rule has {len(rule.alternatives)} alternative(s)")
        return
    default_text = " ".join(ann.default) if ann.default else "EMPTY"
    if default_text in texts:
        return
    if ann.kind in ("cat", "bool"):
        err(f"default '{shorten(default_text)}' is not one of the alternatives ({shorten(' | '.join(texts), 200)}); "
            "use one of them or #k")
        return
    if len(ann.default) != 1:
        err(f"a '{ann.kind}' default must be one number, got '{shorten(default_text)}'")
        return
    value, problem = literal_value(ann.kind, ann.default[0])
    if problem:  # the default is the value a species passes to the algorithm
        err(f"default {problem}")
        return
    samplers = [i for a in rule.alternatives for i in a.items if isinstance(i, Sampler)]
    if ann.sentinel or not all(s.is_constant for s in samplers):
        return  # dataset-dependent ranges are only known once bound

    def within(s: Sampler) -> bool:
        if not (is_well_formed(s.lo) and is_well_formed(s.hi)):
            return True  # unknown names are reported where they are written
        try:
            lo, hi = sampler_range(s, {})
        except BoundError:
            return True  # the bound itself is wrong, and reported where the sampler is checked
        return (lo < value if s.lo_open else lo <= value) and (value < hi if s.hi_open else value <= hi)

    # A grid's default only has to lie within the bounds, not on the grid: a species passes it as written.
    if not any(within(s) for s in samplers):
        ranges = ", ".join(str(s) for s in samplers) or " | ".join(texts)
        err(f"default {value} lies outside {shorten(ranges, 200)}; add 'sentinel' if that is intended")


def at_most(diags: list[Diagnostic], kind: str) -> list[Diagnostic]:
    if len(diags) <= MAX_REPORTED:
        return diags
    rest = len(diags) - MAX_REPORTED
    return diags[:MAX_REPORTED] + [Diagnostic(None, f"{rest:,} more {kind}{'s' if rest > 1 else ''} not shown; "
                                                    "fix the ones above first", "note")]


def size_problem(text: str, src: SourceText) -> Diagnostic | None:
    """The first place where the text passes :data:`MAX_CHARS` or :data:`MAX_TOKENS`, if it does."""
    if len(text) > MAX_CHARS:
        return src.diagnostic(1, 1, f"the grammar has {len(text):,} characters; the limit is {MAX_CHARS:,} "
                                    "(the Large space has 31,000)")
    for count, match in enumerate(_TOKEN_ESTIMATE.finditer(text), start=1):
        if count > MAX_TOKENS:
            line = text.count("\n", 0, match.start()) + 1
            column = match.start() - (text.rfind("\n", 0, match.start()) + 1) + 1
            return src.diagnostic(line, column, f"the grammar has more than {MAX_TOKENS:,} tokens "
                                                "(names, terminals, numbers, operators; the Large space has "
                                                "about 1,900); this is where the limit is reached")
    return None


def nesting_problem(tree: lark.Tree, src: SourceText) -> Diagnostic | None:
    """The first place nested more than :data:`MAX_NESTING` deep, if any (an explicit stack, no recursion)."""
    stack: list[tuple[object, int]] = [(tree, 0)]
    while stack:
        node, level = stack.pop()
        if not isinstance(node, lark.Tree):
            continue
        if node.data in _NESTING_NODES:
            level += 1
            if level > MAX_NESTING:
                line, column = getattr(node.meta, "line", 1), getattr(node.meta, "column", 1)
                return src.diagnostic(line, column, f"nested too deeply: more than {MAX_NESTING} levels of "
                                                    "groups, optionals, operators or function calls (a sum of "
                                                    "n terms counts n - 1); simplify this part")
        stack.extend((child, level) for child in reversed(node.children))
    return None


def check_references(rules: dict[str, Rule], src: SourceText, diags: list[Diagnostic]) -> None:
    visible = [n for n in rules if "~" not in n]
    found = 0
    for rule in rules.values():
        for alt in rule.alternatives:
            for item in alt.items:
                if isinstance(item, NonTerminal) and item.name not in rules:
                    found += 1  # hints cost a pass over every name: only for the reported ones
                    hint = difflib.get_close_matches(item.name, visible, n=1, cutoff=0.6) \
                        if found <= MAX_REPORTED else []
                    extra = f"; did you mean <{hint[0]}>?" if hint else ""
                    diags.append(src.at(item.location, f"undefined non-terminal <{item.name}>{extra}"))


def check_derivations(rules: dict[str, Rule], start: str, src: SourceText, diags: list[Diagnostic]) -> None:
    """Every rule derives a finite tree, and the start one the generator can build within its limits."""
    depth, size = minimum_trees(rules.values())
    for rule in rules.values():
        if rule.name not in depth:
            diags.append(src.at(rule.location, f"<{rule.name}> has no finite derivation: "
                                               "every alternative needs itself or another such rule"))
    where = rules[start].location
    if start not in depth:
        return
    if depth[start] > DEFAULT_MAX_DEPTH:
        diags.append(src.at(where, f"the shallowest tree of <{start}> is {depth[start]:,} levels deep; derivation "
                                   f"trees are limited to {DEFAULT_MAX_DEPTH} levels (shorten the chain of rules)"))
    elif size[start] > MAX_TREE_NODES:
        shown = f"{size[start]:,}" if size[start] < SIZE_CAP else f"more than {SIZE_CAP:.0e}"
        diags.append(src.at(where, f"the shallowest tree of <{start}> has {shown} nodes; derivation trees are "
                                   f"limited to {MAX_TREE_NODES:,} nodes (a rule that uses its sub-rules twice "
                                   "doubles the size at every level)"))


def unreachable_warnings(rules: dict[str, Rule], start: str, src: SourceText) -> list[Diagnostic]:
    seen = reachable_from(rules, start)
    return [src.at(r.location, f"<{r.name}> is never used (unreachable from <{start}>)", "warning")
            for r in rules.values() if r.name not in seen]


# -- annotations ------------------------------------------------------------------------------------------


@dataclass
class RawAnnotation:
    line: int
    column: int  # column of the '#@'
    text: str    # text after '#@'


def lift_annotations(text: str) -> tuple[str, list[RawAnnotation]]:
    """Blank out ``#@ …`` comments (outside quotes) and return them separately."""
    out_lines, found = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        in_quote = False
        for i, ch in enumerate(line):
            if ch == '"':
                in_quote = not in_quote
            elif ch == "#" and not in_quote:
                if line.startswith("#@", i):
                    found.append(RawAnnotation(number, i + 1, line[i + 2:]))
                    line = line[:i]
                break
        out_lines.append(line)
    return "\n".join(out_lines), found


_ANNOTATION_TOKEN = re.compile(r'\s*([A-Za-z_]+)(?:=("[^"]*"|\S+))?')


def parse_annotation(raw: RawAnnotation, src: SourceText, diags: list[Diagnostic]) -> Annotation | None:
    kind, default, sentinel = None, None, False
    seen: set[str] = set()
    pos = 0
    text = raw.text
    ok = True

    def err(offset: int, message: str):
        diags.append(src.diagnostic(raw.line, raw.column + 2 + offset, message))

    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        m = _ANNOTATION_TOKEN.match(text, pos)
        if not m or m.end() == pos:
            err(pos, f"malformed annotation near '{shorten(text[pos:].strip())}'; expected key=value")
            return None
        key, value = m.group(1), m.group(2)
        start = m.start(1)
        if key in seen:  # which one would win is a guess: refuse (issue 24)
            err(start, f"'{key}' is given twice in one annotation; keep one")
            ok = False
        seen.add(key)
        if key == "type":
            if value not in KINDS:
                what = f"unknown hyper-parameter type '{shorten(value)}'" if value else "type needs a value"
                err(start, f"{what}; expected one of {', '.join(KINDS)}")
                ok = False
            kind = value
        elif key == "default":
            if value is None:
                err(start, "default needs a value: default=VALUE")
                ok = False
            elif value.startswith("#"):
                if not (value[1:].isascii() and value[1:].isdigit()) or int(value[1:]) < 1:
                    err(start, f"'{value}' is not an alternative number; write #1, #2, …")
                    ok = False
                else:
                    default = int(value[1:]) - 1
            elif value.startswith('"'):
                if len(value) < 2 or not value.endswith('"'):
                    err(start, "unterminated quoted default")
                    ok = False
                else:
                    default = tuple(value[1:-1].split())
            else:
                default = () if value == "EMPTY" else (value,)
        elif key == "sentinel" and value is None:
            sentinel = True
        elif key == "gate" and value is None:
            pass  # documentation only: gates are recognised from the alternatives
        else:
            hint = difflib.get_close_matches(key, ["type", "default", "sentinel", "gate"], n=1)
            extra = f"; did you mean '{hint[0]}'?" if hint else ""
            err(start, f"unknown annotation key '{shorten(key)}'{extra}")
            ok = False
        pos = m.end()
    if kind is None:
        if ok:
            err(0, "annotation needs type=alg|cat|bool|int|real")
        return None
    if not ok:
        return None
    return Annotation(kind, default, sentinel, src.location(raw.line, raw.column))

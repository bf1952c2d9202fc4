"""Read a ``.bnf`` grammar file into a validated :class:`~gp.grammar.Grammar`.

The file syntax is itself a Lark grammar (``bnf.lark``). Parsing happens in three
steps: lift the ``#@`` annotations out of the text (they attach to the rule whose
lines they sit on), parse the rest with Lark, then build typed rules (desugaring
groups and optionals into synthetic rules) and run the semantic checks
(``bnf_checks.py``); last, ``@auto`` weights are counted (``auto_weights.py``).
Every problem becomes a :class:`~gp.errors.Diagnostic` with ``file:line:col``; all
of them are reported together in one :class:`~gp.errors.GrammarError`.

A grammar file is untrusted input, and every step is bounded: its size and token count
are capped before Lark sees it (parsing costs about 25 µs a token), nesting is capped
before the recursive transform, and the checks after it are linear or n log n in the
grammar's size (see ``bnf_checks.py`` for the limits).
"""
from __future__ import annotations

import bisect
import difflib
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import lark
from lark import Lark, Token, Transformer, v_args

from .auto_weights import auto_weight_misuse, resolve_auto_weights
from .shipped import locate_grammar
from .binding import sampler_range
from .bnf_checks import (MAX_CHARS, at_most, check_annotation, check_derivations, check_numeric_terminals,
                         check_references, lift_annotations, nesting_problem, parse_annotation, sampler_options,
                         size_problem, unreachable_warnings)
from .errors import Diagnostic, GrammarError, SourceLocation, SourceText
from .expressions import FUNCTIONS, VARIABLES, BinOp, BoundError, Call, Neg, Num, Var, is_well_formed
from .grammar import Alternative, Annotation, Grammar, NonTerminal, Rule, Sampler, Terminal

#: Integer literals longer than this are read as floats (see gp/expressions.py).
_MAX_INT_DIGITS = 30


_FRIENDLY = {
    "RULE_START": "a new rule '<name> ::='",
    "NONTERMINAL": "a non-terminal '<name>'",
    "TERMINAL": "a terminal",
    "STRING": "a quoted terminal",
    "EMPTY": "EMPTY",
    "SAMPLER": "RANDOM-INT / RANDOM-REAL",
    "BAR": "'|'",
    "LPAR": "'('",
    "RPAR": "')'",
    "LSQB": "'['",
    "RSQB": "']'",
    "COMMA": "','",
    "EQUAL": "'='",
    "AT": "'@'",
    "AUTO": "auto",
    "NUMBER": "a number",
    "NAME": "a name",
    "OPEN": "'>' or '<'",
    "PLUS": "'+'",
    "MINUS": "'-'",
    "STAR": "'*'",
    "SLASH": "'/'",
    "$END": "end of file",
}


@lru_cache(maxsize=1)
def _meta_parser() -> Lark:
    path = Path(__file__).with_name("bnf.lark")
    return Lark(path.read_text(), parser="lalr", lexer="contextual", propagate_positions=True,
                maybe_placeholders=False, cache=True)


# ----------------------------------------------------------------------------------
# Step 2: Lark parse tree -> raw structures


@dataclass
class _RawItem:
    kind: str      # nt | t | empty | group | opt | sampler
    value: object
    line: int
    column: int


@dataclass
class _RawAlt:
    items: list[_RawItem]
    weight: float
    line: int
    column: int
    empty: bool  # no items at all: reported as an error (EMPTY must be explicit)
    written: tuple[int, int, bool] | None = None  # where its weight is written, and whether it is @auto


@v_args(inline=True)
class _ToRaw(Transformer):
    def __init__(self, src: SourceText, diags: list[Diagnostic]):
        super().__init__()
        self.src, self.diags = src, diags

    def _err(self, tok, msg: str):
        self.diags.append(self.src.diagnostic(tok.line, tok.column, msg))

    def start(self, *rules):
        return list(rules)

    def rule(self, head: Token, alts):
        name = head.split("::=")[0].strip()[1:-1]
        if len(alts) == 1 and alts[0].empty:
            self._err(head, f"<{name}> has no alternatives; write EMPTY for a rule that produces nothing")
        return name, head.line, head.column, alts

    @v_args(inline=False)
    def alternatives(self, children):
        # children alternate: alternative, BAR, alternative, BAR, ...
        alts: list[_RawAlt] = children[0::2]
        bars: list[Token] = children[1::2]
        for i, alt in enumerate(alts):
            if alt.empty and bars:
                bar = bars[i - 1] if i > 0 else bars[0]
                self._err(bar, "empty alternative; write EMPTY for an alternative that produces nothing")
        return alts

    @v_args(inline=False, meta=True)
    def alternative(self, meta, children):
        weight, written = 1.0, None
        items = []
        for c in children:
            if isinstance(c, tuple) and c[0] == "weight":
                weight, written = c[1], c[2]
            else:
                items.append(c)
        line = getattr(meta, "line", 0) if not meta.empty else 0
        col = getattr(meta, "column", 0) if not meta.empty else 0
        return _RawAlt(items, weight, line, col, empty=not items, written=written)

    @v_args(inline=False, meta=True)
    def weight(self, meta, children):
        number = children[0]
        if number.type == "AUTO":  # counted once the whole grammar is known (gp/auto_weights.py); at the '@'
            return ("weight", 1.0, (meta.line, meta.column, True))
        value = float(number)
        if not (0 < value < math.inf):  # the sampling policy divides by the sum of the weights
            self._err(number, f"weight must be a positive finite number, got {number}")
            value = 1.0
        return ("weight", value, (number.line, number.column, False))

    def nonterminal(self, tok):
        return _RawItem("nt", str(tok)[1:-1], tok.line, tok.column)

    def terminal(self, tok):
        return _RawItem("t", str(tok), tok.line, tok.column)

    def quoted(self, tok):
        text = str(tok)[1:-1]
        if not text or any(c.isspace() for c in text):
            self._err(tok, "a quoted terminal must be one non-empty token without spaces "
                           "(phenotypes are space-separated)")
        return _RawItem("t", text, tok.line, tok.column)

    def empty(self, tok):
        return _RawItem("empty", None, tok.line, tok.column)

    def group(self, lpar, alts):
        return _RawItem("group", alts, lpar.line, lpar.column)

    def optional(self, lsqb, alts):
        return _RawItem("opt", alts, lsqb.line, lsqb.column)

    def option(self, key: Token, *value: Token):
        return key, value

    def sampler(self, name: Token, lo, hi, *options):
        kind = "int" if name == "RANDOM-INT" else "real"
        log, step = sampler_options(str(name), options, self._err)
        (lo_open_tok, lo_expr), (hi_open_tok, hi_expr) = lo, hi
        if lo_open_tok is not None and str(lo_open_tok) != ">":
            self._err(lo_open_tok, "an open lower bound is written '>lo'")
        if hi_open_tok is not None and str(hi_open_tok) != "<":
            self._err(hi_open_tok, "an open upper bound is written '<hi'")
        lo_open, hi_open = lo_open_tok is not None, hi_open_tok is not None
        if kind == "int" and (lo_open or hi_open):
            self._err(lo_open_tok or hi_open_tok, "open bounds are only allowed for RANDOM-REAL")
            lo_open = hi_open = False
        loc = self.src.location(name.line, name.column)
        sampler = Sampler(kind, lo_expr, hi_expr, lo_open, hi_open, log, loc, step)
        # Unknown names are already reported where they are written; dataset-dependent
        # bounds are checked when the grammar is bound (gp/binding.py, the same rule).
        if sampler.is_constant and is_well_formed(lo_expr) and is_well_formed(hi_expr):
            try:
                sampler_range(sampler, {})
            except BoundError as exc:
                self._err(name, str(exc))
        return _RawItem("sampler", sampler, name.line, name.column)

    @v_args(inline=False, meta=True)
    def bound(self, meta, children):
        if len(children) == 2:
            return children[0], children[1]
        return None, children[0]

    # expressions --------------------------------------------------------------
    def number(self, tok):
        text = str(tok)
        if text.isdecimal() and len(text) <= _MAX_INT_DIGITS:
            return Num(int(text))
        return Num(float(text))  # may be inf; a bound must be finite, which binding checks

    def variable(self, tok):
        name = str(tok)
        if name not in VARIABLES:
            hint = difflib.get_close_matches(name, list(VARIABLES), n=1)
            extra = f"; did you mean {hint[0]}?" if hint else ""
            known = ", ".join(f"{k} = {v}" for k, v in VARIABLES.items())
            self._err(tok, f"unknown dataset variable '{name}'{extra} (known: {known})")
        return Var(name)

    def call(self, fname, *args):
        name = str(fname)
        if name not in FUNCTIONS:
            hint = difflib.get_close_matches(name, list(FUNCTIONS), n=1)
            extra = f"; did you mean {hint[0]}()?" if hint else ""
            self._err(fname, f"unknown function '{name}'{extra} (known: {', '.join(FUNCTIONS)})")
        else:
            _, lo, hi = FUNCTIONS[name]
            if not lo <= len(args) <= hi:
                want = str(lo) if lo == hi else f"{lo} or more"
                self._err(fname, f"{name}() takes {want} argument(s), got {len(args)}")
        return Call(name, tuple(args))

    def neg(self, _minus, operand):
        if isinstance(operand, Num):
            return Num(-operand.value)
        return Neg(operand)

    def binop(self, left, op, right):
        return BinOp(str(op), left, right)


# ----------------------------------------------------------------------------------
# Step 3: typed rules, desugaring, semantic checks


class _Builder:
    def __init__(self, src: SourceText, diags: list[Diagnostic]):
        self.src, self.diags = src, diags
        self.rules: dict[str, Rule] = {}
        self.synthetic_counter: dict[str, int] = {}
        self.auto_at: dict[tuple[str, int], SourceLocation] = {}  # (rule, alternative) -> where @auto is
        self.weighted: set[tuple[str, int]] = set()  # (rule, alternative) with a number written

    def err(self, line: int, column: int, message: str, severity: str = "error"):
        self.diags.append(self.src.diagnostic(line, column, message, severity))

    def add_rule(self, name: str, line: int, column: int, raw_alts: list[_RawAlt], synthetic: str | None = None):
        if name in self.rules:
            first = self.rules[name].location
            self.err(line, column, f"duplicate rule <{name}>; it is already defined at line {first.line}")
            return
        # Reserve the slot first so that a rule precedes the synthetic rules made from it.
        self.rules[name] = Rule(name, (), None, self.src.location(line, column), synthetic)
        alts = tuple(self.alternative(name, a, line, column) for a in raw_alts)
        for a, raw in enumerate(raw_alts):
            if raw.written and raw.written[2]:
                self.auto_at[(name, a)] = self.src.location(*raw.written[:2])
            elif raw.written:
                self.weighted.add((name, a))
        self.rules[name] = Rule(name, alts, None, self.src.location(line, column), synthetic)

    def alternative(self, owner: str, raw: _RawAlt, rule_line: int, rule_col: int) -> Alternative:
        items: list = []
        kinds = [i.kind for i in raw.items]
        if "empty" in kinds and len(kinds) > 1:
            bad = raw.items[kinds.index("empty")]
            self.err(bad.line, bad.column, "EMPTY must be the only item of its alternative")
        for item in raw.items:
            loc = self.src.location(item.line, item.column)
            if item.kind == "nt":
                items.append(NonTerminal(item.value, loc))
            elif item.kind == "t":
                items.append(Terminal(item.value, loc))
            elif item.kind == "sampler":
                items.append(item.value)
            elif item.kind in ("group", "opt"):
                n = self.synthetic_counter.get(owner.split("~")[0], 0) + 1
                self.synthetic_counter[owner.split("~")[0]] = n
                sub = f"{owner.split('~')[0]}~{n}"
                sub_alts = list(item.value)
                if item.kind == "opt":  # EMPTY is @auto when the written alternatives are ('[' is where)
                    auto = (item.line, item.column, True) if any(a.written and a.written[2] for a in sub_alts) else None
                    sub_alts = sub_alts + [_RawAlt([], 1.0, item.line, item.column, empty=False, written=auto)]
                self.add_rule(sub, item.line, item.column, sub_alts,
                              synthetic="group" if item.kind == "group" else "optional")
                items.append(NonTerminal(sub, loc))
        loc = self.src.location(raw.line, raw.column) if raw.line > 0 else self.src.location(rule_line, rule_col)
        return Alternative(tuple(items), raw.weight, loc, auto=bool(raw.written and raw.written[2]))


def parse_grammar(text: str, filename: str = "<grammar>") -> Grammar:
    """Parse and validate grammar text. Raises :class:`GrammarError` on any error."""
    src = SourceText(text, filename)
    diags: list[Diagnostic] = []
    too_large = size_problem(text, src)
    if too_large:
        raise GrammarError([too_large])
    stripped, raw_annotations = lift_annotations(text)
    try:
        tree = _meta_parser().parse(stripped)
    except lark.exceptions.UnexpectedInput as exc:
        raise GrammarError([_syntax_diagnostic(exc, src)]) from None
    too_deep = nesting_problem(tree, src)
    if too_deep:
        raise GrammarError([too_deep])
    raw_rules = _ToRaw(src, diags).transform(tree)
    if not raw_rules:
        diags.append(src.diagnostic(1, 1, "the grammar has no rules; write at least '<start> ::= …'"))
        raise GrammarError(diags)

    builder = _Builder(src, diags)
    for name, line, col, alts in raw_rules:
        builder.add_rule(name, line, col, alts)
    rules = builder.rules
    start = raw_rules[0][0]

    # Attach annotations to the rule whose lines they sit on (rules are in line order).
    annotated: dict[str, Annotation] = {}
    rule_lines = [line for _, line, _, _ in raw_rules]
    for raw in raw_annotations:
        k = bisect.bisect_right(rule_lines, raw.line) - 1
        owner = raw_rules[k][0] if k >= 0 else None
        if owner is None:
            diags.append(src.diagnostic(raw.line, raw.column, "annotation before the first rule; "
                                        "put '#@ …' on a line of the rule it describes"))
            continue
        ann = parse_annotation(raw, src, diags)
        if ann is None:
            continue
        if owner in annotated:
            diags.append(src.diagnostic(raw.line, raw.column, f"<{owner}> already has an annotation "
                                        f"(line {annotated[owner].location.line})"))
            continue
        annotated[owner] = ann
    parts: dict[str, list[Rule]] = {}  # a rule and the synthetic rules of its groups and optionals
    for rule in rules.values():
        parts.setdefault(rule.name.split("~")[0], []).append(rule)
    for name, ann in annotated.items():
        rule = rules[name]
        rules[name] = Rule(rule.name, rule.alternatives, ann, rule.location, rule.synthetic)
        check_annotation(rules[name], ann, src, diags)
        check_numeric_terminals(rules[name], parts[name], src, diags)

    diags += auto_weight_misuse(rules, builder.auto_at, builder.weighted, src)
    check_references(rules, src, diags)
    warnings: list[Diagnostic] = []
    if not any(d.severity == "error" for d in diags):
        check_derivations(rules, start, src, diags)
        warnings = unreachable_warnings(rules, start, src)
    if builder.auto_at and not any(d.severity == "error" for d in diags):
        resolve_auto_weights(rules, start, builder.auto_at, src, diags)
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise GrammarError(at_most(errors, "error"))
    return Grammar(rules, start, src, at_most(warnings, "warning"))


def load_grammar(path: str | Path) -> Grammar:
    """Read a grammar file; a missing, unreadable or oversized file is a GrammarError too. A path that does not
    exist but names a shipped grammar (``large.bnf``, ``grammars/large.bnf``) reads the shipped one (gp/shipped.py)."""
    path = locate_grammar(path)
    limit = 4 * MAX_CHARS  # UTF-8 takes at most 4 bytes a character
    try:
        with open(path, "rb") as f:  # a bounded read: the path may be a device or a huge file
            data = f.read(limit + 1)
        if len(data) > limit:
            raise GrammarError([Diagnostic(None, f"{path} is larger than {limit:,} bytes; a grammar may have "
                                                 f"at most {MAX_CHARS:,} characters (the Large space has 31,000)")])
        text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads it
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise GrammarError([Diagnostic(None, f"cannot read grammar file {path}: {reason}")]) from None
    return parse_grammar(text, str(path))


def _syntax_diagnostic(exc: lark.exceptions.UnexpectedInput, src: SourceText) -> Diagnostic:
    line, col = getattr(exc, "line", 1) or 1, getattr(exc, "column", 1) or 1
    if isinstance(exc, lark.exceptions.UnexpectedCharacters):
        ch = src.lines[line - 1][col - 1] if line <= len(src.lines) and col <= len(src.lines[line - 1]) else "?"
        reason = f"unexpected character '{ch}'"
        allowed = sorted(exc.allowed or [])
    elif isinstance(exc, lark.exceptions.UnexpectedToken):
        tok = exc.token
        if tok.type == "$END":
            line, col = len(src.lines) or 1, len(src.lines[-1]) + 1 if src.lines else 1
            reason = "unexpected end of file"
        else:
            reason = f"unexpected '{tok}'"
        allowed = sorted(exc.expected or [])
        if tok.type in ("NONTERMINAL", "TERMINAL", "STRING") and "RULE_START" in allowed and len(allowed) == 1:
            reason = "expected a rule definition '<name> ::= …'"
            allowed = []
    else:  # UnexpectedEOF
        line, col = len(src.lines) or 1, (len(src.lines[-1]) + 1) if src.lines else 1
        reason = "unexpected end of file"
        allowed = sorted(getattr(exc, "expected", []) or [])
    names = sorted({_FRIENDLY.get(a, a.strip('"').lower()) for a in allowed if not a.startswith("__")})
    if names and len(names) <= 6:
        reason += "; expected " + ", ".join(names)
    return src.diagnostic(line, col, reason)



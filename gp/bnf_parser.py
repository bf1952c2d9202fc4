"""Read a ``.bnf`` grammar file into a validated :class:`~gp.grammar.Grammar`.

The file syntax is itself a Lark grammar (``bnf.lark``). Parsing happens in three
steps: lift the ``#@`` annotations out of the text (they attach to the rule whose
lines they sit on), parse the rest with Lark, then build typed rules (desugaring
groups and optionals into synthetic rules) and run the semantic checks. Every
problem becomes a :class:`~gp.errors.Diagnostic` with ``file:line:col``; all of
them are reported together in one :class:`~gp.errors.GrammarError`.
"""
from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import lark
from lark import Lark, Token, Transformer, v_args

from .errors import Diagnostic, GrammarError, SourceText
from .expressions import FUNCTIONS, VARIABLES, BinOp, Call, Expr, Neg, Num, Var
from .grammar import KINDS, Alternative, Annotation, Grammar, NonTerminal, Rule, Sampler, Terminal, reachable_from

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
    "AT": "'@'",
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
# Step 1: annotations


@dataclass
class _RawAnnotation:
    line: int
    column: int  # column of the '#@'
    text: str    # text after '#@'


def _lift_annotations(text: str) -> tuple[str, list[_RawAnnotation]]:
    """Blank out ``#@ …`` comments (outside quotes) and return them separately."""
    out_lines, found = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        in_quote = False
        for i, ch in enumerate(line):
            if ch == '"':
                in_quote = not in_quote
            elif ch == "#" and not in_quote:
                if line.startswith("#@", i):
                    found.append(_RawAnnotation(number, i + 1, line[i + 2:]))
                    line = line[:i]
                break
        out_lines.append(line)
    return "\n".join(out_lines), found


_ANNOTATION_TOKEN = re.compile(r'\s*([A-Za-z_]+)(?:=("[^"]*"|\S+))?')


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
        weight = 1.0
        items = []
        for c in children:
            if isinstance(c, tuple) and c[0] == "weight":
                weight = c[1]
            else:
                items.append(c)
        line = getattr(meta, "line", 0) if not meta.empty else 0
        col = getattr(meta, "column", 0) if not meta.empty else 0
        return _RawAlt(items, weight, line, col, empty=not items)

    def weight(self, number: Token):
        value = float(number)
        if value <= 0:
            self._err(number, f"weight must be positive, got {number}")
            value = 1.0
        return ("weight", value)

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

    def sampler(self, name: Token, lo, hi, flag: Token | None = None):
        kind = "int" if name == "RANDOM-INT" else "real"
        log = False
        if flag is not None:
            if str(flag) != "log":
                self._err(flag, f"unknown option '{flag}' for {name}; the only option is 'log'")
            else:
                log = True
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
        sampler = Sampler(kind, lo_expr, hi_expr, lo_open, hi_open, log, loc)
        if sampler.is_constant:
            try:
                lo_v, hi_v = lo_expr.evaluate({}), hi_expr.evaluate({})
            except (ValueError, ZeroDivisionError, OverflowError) as exc:
                self._err(name, f"cannot evaluate the bounds of {name}: {exc}")
            else:
                if lo_v > hi_v:
                    self._err(name, f"lower bound {lo_v} is greater than upper bound {hi_v}")
                if log and lo_v <= 0:
                    self._err(name, f"a log-scale range needs a positive lower bound, got {lo_v}")
                if kind == "int" and not (float(lo_v).is_integer() and float(hi_v).is_integer()):
                    self._err(name, "RANDOM-INT bounds must be integers; use floor(), ceil() or round()")
        return _RawItem("sampler", sampler, name.line, name.column)

    @v_args(inline=False, meta=True)
    def bound(self, meta, children):
        if len(children) == 2:
            return children[0], children[1]
        return None, children[0]

    # expressions --------------------------------------------------------------
    def number(self, tok):
        text = str(tok)
        value = float(text)
        if re.fullmatch(r"\d+", text):
            value = int(text)
        return Num(value)

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
                if item.kind == "opt":
                    sub_alts = sub_alts + [_RawAlt([], 1.0, item.line, item.column, empty=False)]
                self.add_rule(sub, item.line, item.column, sub_alts,
                              synthetic="group" if item.kind == "group" else "optional")
                items.append(NonTerminal(sub, loc))
        loc = self.src.location(raw.line, raw.column) if raw.line > 0 else self.src.location(rule_line, rule_col)
        return Alternative(tuple(items), raw.weight, loc)


def _parse_annotation(raw: _RawAnnotation, src: SourceText, diags: list[Diagnostic]) -> Annotation | None:
    kind, default, sentinel = None, None, False
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
            err(pos, f"malformed annotation near '{text[pos:].strip()}'; expected key=value")
            return None
        key, value = m.group(1), m.group(2)
        start = m.start(1)
        if key == "type":
            if value not in KINDS:
                err(start, f"unknown hyper-parameter type '{value}'; expected one of {', '.join(KINDS)}")
                ok = False
            kind = value
        elif key == "default":
            if value is None:
                err(start, "default needs a value: default=VALUE")
                ok = False
            elif value.startswith("#"):
                if not value[1:].isdigit() or int(value[1:]) < 1:
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
            err(start, f"unknown annotation key '{key}'{extra}")
            ok = False
        pos = m.end()
    if kind is None:
        if ok:
            err(0, "annotation needs type=alg|cat|bool|int|real")
        return None
    if not ok:
        return None
    return Annotation(kind, default, sentinel, src.location(raw.line, raw.column))


def _check_annotation(rule: Rule, ann: Annotation, src: SourceText, diags: list[Diagnostic]) -> None:
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
        err(f"default '{default_text}' is not one of the alternatives ({' | '.join(texts)}); "
            "use one of them or #k")
        return
    if len(ann.default) != 1:
        err(f"a '{ann.kind}' default must be one number, got '{default_text}'")
        return
    try:
        value = int(ann.default[0]) if ann.kind == "int" else float(ann.default[0])
    except ValueError:
        err(f"default '{ann.default[0]}' is not a valid {'integer' if ann.kind == 'int' else 'real number'}")
        return
    samplers = [i for a in rule.alternatives for i in a.items if isinstance(i, Sampler)]
    if ann.sentinel or not all(s.is_constant for s in samplers):
        return  # dataset-dependent ranges are only known once bound

    def within(s: Sampler) -> bool:
        try:
            lo, hi = s.lo.evaluate({}), s.hi.evaluate({})
        except (ValueError, ZeroDivisionError, OverflowError):
            return True  # the bound itself is wrong, and reported where the sampler is checked
        return (lo < value if s.lo_open else lo <= value) and (value < hi if s.hi_open else value <= hi)

    if not any(within(s) for s in samplers):
        ranges = ", ".join(str(s) for s in samplers) or " | ".join(texts)
        err(f"default {value} lies outside {ranges}; add 'sentinel' if that is intended")


def parse_grammar(text: str, filename: str = "<grammar>") -> Grammar:
    """Parse and validate grammar text. Raises :class:`GrammarError` on any error."""
    src = SourceText(text, filename)
    diags: list[Diagnostic] = []
    stripped, raw_annotations = _lift_annotations(text)
    try:
        tree = _meta_parser().parse(stripped)
    except lark.exceptions.UnexpectedInput as exc:
        raise GrammarError([_syntax_diagnostic(exc, src)]) from None
    raw_rules = _ToRaw(src, diags).transform(tree)
    if not raw_rules:
        diags.append(src.diagnostic(1, 1, "the grammar has no rules; write at least '<start> ::= …'"))
        raise GrammarError(diags)

    builder = _Builder(src, diags)
    spans: list[tuple[int, str]] = []
    for name, line, col, alts in raw_rules:
        builder.add_rule(name, line, col, alts)
        spans.append((line, name))
    rules = builder.rules
    start = raw_rules[0][0]

    # Attach annotations to the rule whose lines they sit on.
    annotated: dict[str, Annotation] = {}
    for raw in raw_annotations:
        owner = None
        for line, name in spans:
            if line <= raw.line:
                owner = name
        if owner is None:
            diags.append(src.diagnostic(raw.line, raw.column, "annotation before the first rule; "
                                        "put '#@ …' on a line of the rule it describes"))
            continue
        ann = _parse_annotation(raw, src, diags)
        if ann is None:
            continue
        if owner in annotated:
            diags.append(src.diagnostic(raw.line, raw.column, f"<{owner}> already has an annotation "
                                        f"(line {annotated[owner].location.line})"))
            continue
        annotated[owner] = ann
    for name, ann in annotated.items():
        rule = rules[name]
        rules[name] = Rule(rule.name, rule.alternatives, ann, rule.location, rule.synthetic)
        _check_annotation(rules[name], ann, src, diags)

    _check_references(rules, src, diags)
    warnings: list[Diagnostic] = []
    if not any(d.severity == "error" for d in diags):
        _check_productive(rules, src, diags)
        warnings = _unreachable_warnings(rules, start, src)
    errors = [d for d in diags if d.severity == "error"]
    if errors:
        raise GrammarError(errors)
    return Grammar(rules, start, src, warnings)


def load_grammar(path: str | Path) -> Grammar:
    """Read a grammar file; a missing or unreadable file is a GrammarError too."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
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


def _check_references(rules: dict[str, Rule], src: SourceText, diags: list[Diagnostic]) -> None:
    visible = [n for n in rules if "~" not in n]
    for rule in rules.values():
        for alt in rule.alternatives:
            for item in alt.items:
                if isinstance(item, NonTerminal) and item.name not in rules:
                    hint = difflib.get_close_matches(item.name, visible, n=1, cutoff=0.6)
                    extra = f"; did you mean <{hint[0]}>?" if hint else ""
                    diags.append(src.at(item.location, f"undefined non-terminal <{item.name}>{extra}"))


def _check_productive(rules: dict[str, Rule], src: SourceText, diags: list[Diagnostic]) -> None:
    productive: set[str] = set()
    changed = True
    while changed:
        changed = False
        for rule in rules.values():
            if rule.name in productive:
                continue
            if any(all(n in productive for n in alt.nonterminals()) for alt in rule.alternatives):
                productive.add(rule.name)
                changed = True
    for rule in rules.values():
        if rule.name not in productive:
            diags.append(src.at(rule.location, f"<{rule.name}> has no finite derivation: "
                                               "every alternative needs itself or another such rule"))


def _unreachable_warnings(rules: dict[str, Rule], start: str, src: SourceText) -> list[Diagnostic]:
    seen = reachable_from(rules, start)
    return [src.at(r.location, f"<{r.name}> is never used (unreachable from <{start}>)", "warning")
            for r in rules.values() if r.name not in seen]

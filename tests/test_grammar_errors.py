"""Every class of grammar error gives its message at the right line and column."""
from __future__ import annotations

import pytest

from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.gp.errors import BindingError, GrammarError


def error_of(text: str) -> GrammarError:
    with pytest.raises(GrammarError) as info:
        parse_grammar(text, "g.bnf")
    return info.value


@pytest.mark.parametrize("text, line, col, fragment", [
    ("<a> BR\n", 1, 1, "expected a rule definition"),
    ("<a> ::= ( x | y\n", 1, 16, "unexpected end of file"),
    ("<a> ::= x\n<b> ::= RANDOM-INT(1, 2 $ 3)\n", 2, 25, "unexpected"),
    ("<a> ::= x\n\n  <b> ::= y ]\n", 3, 13, "unexpected ']'"),
])
def test_syntax_errors_point_at_the_offending_character(text, line, col, fragment):
    err = error_of(text)
    d = err.diagnostics[0]
    assert (d.location.line, d.location.column) == (line, col)
    assert fragment in d.message
    rendered = d.render()
    assert rendered.startswith(f"g.bnf:{line}:{col}: error:")
    # the offending line and a caret under the column
    source_line, caret = rendered.splitlines()[1:3]
    assert source_line.strip() == text.splitlines()[line - 1].strip()
    assert caret.index("^") - 4 == col - 1


@pytest.mark.parametrize("text, line, col, fragment", [
    ("<a> ::= <bee> x\n<bea> ::= y\n", 1, 9, "undefined non-terminal <bee>; did you mean <bea>?"),
    ("<a> ::= x\n<a> ::= y\n", 2, 1, "duplicate rule <a>; it is already defined at line 1"),
    ("<a> ::= x | | y\n", 1, 11, "empty alternative"),
    ("<a> ::= x |\n<b> ::= y\n", 1, 11, "empty alternative"),
    ("<a> ::= | y\n", 1, 9, "empty alternative"),
    ("<a> ::= x\n<b> ::=\n", 2, 1, "<b> has no alternatives"),
    ("<a> ::= <b>\n<b> ::= x <b>\n", 2, 1, "<b> has no finite derivation"),
    ("<a> ::= RANDOM-INT(1, Q)\n", 1, 23, "unknown dataset variable 'Q'"),
    ("<a> ::= RANDOM-INT(1, sqr(L))\n", 1, 23, "unknown function 'sqr'; did you mean sqrt()?"),
    ("<a> ::= RANDOM-INT(1, min(L))\n", 1, 23, "min() takes 2 or more argument(s), got 1"),
    ("<a> ::= RANDOM-INT(5, 1)\n", 1, 9, "empty range: lower bound 5 > upper bound 1"),
    ("<a> ::= RANDOM-INT(1, L/2)\n", None, None, None),  # non-integer only once bound: see below
    ("<a> ::= RANDOM-INT(>1, 5)\n", 1, 20, "open bounds are only allowed for RANDOM-REAL"),
    ("<a> ::= RANDOM-REAL(0, 1, lin)\n", 1, 27, "unknown option 'lin'"),
    ("<a> ::= RANDOM-REAL(0, 1, log)\n", 1, 9, "log-scale range needs a positive lower bound"),
    ("<a> ::= RANDOM-REAL(0, 1, stp=0.1)\n", 1, 27, "unknown option 'stp' for RANDOM-REAL (did you mean 'step'?)"),
    ("<a> ::= RANDOM-INT(0, 10, step=2)\n", 1, 27, "step is only allowed for RANDOM-REAL"),
    ("<a> ::= RANDOM-REAL(1, 2, log, step=0.5)\n", 1, 32, "step and log cannot be combined"),
    ("<a> ::= RANDOM-REAL(1, 2, step=0.5, log)\n", 1, 27, "step and log cannot be combined"),
    ("<a> ::= RANDOM-REAL(0, 1, step=0)\n", 1, 32, "step must be a positive finite number, got 0"),
    ("<a> ::= RANDOM-REAL(0, 1, step=0.1, step=0.1)\n", 1, 37, "option 'step' is given twice"),
    ("<a> ::= RANDOM-REAL(>0, <0.1, step=0.1)\n", 1, 9, "empty grid: no value 0.0 + k·0.1 lies in (0.0, 0.1)"),
    ("<a> ::= x EMPTY\n", 1, 11, "EMPTY must be the only item"),
    ("<a> ::= x @ 0 | y\n", 1, 13, "weight must be a positive finite number"),
    ('<a> ::= "x y"\n', 1, 9, "one non-empty token without spaces"),
    ("<a> ::= x | y  #@ type=foo default=x\n", 1, 19, "unknown hyper-parameter type 'foo'"),
    ("<a> ::= x | y  #@ type=cat defualt=x\n", 1, 28, "unknown annotation key 'defualt'; did you mean 'default'?"),
    ("<a> ::= x | y  #@ type=cat default=z\n", 1, 16, "default 'z' is not one of the alternatives"),
    ("<a> ::= x | y  #@ type=cat\n", 1, 16, "needs a default"),
    ("<a> ::= x | y  #@ type=cat default=#3\n", 1, 16, "default=#3 but the rule has 2 alternative(s)"),
    ("<a> ::= RANDOM-INT(2, 32)  #@ type=int default=0\n", 1, 28, "default 0 lies outside RANDOM-INT(2, 32)"),
    ("<a> ::= RANDOM-INT(2, 32)  #@ type=int default=two\n", 1, 28, "is not a valid integer"),
    ("<a> ::= 2 | 3 | 4  #@ type=int default=0\n", 1, 20, "default 0 lies outside 2 | 3 | 4"),
    ("<a> ::= RANDOM-REAL(>0.0, <1.0)  #@ type=real default=0.0\n", 1, 34, "default 0.0 lies outside"),
    ("<a> ::= x  #@ type=alg default=x\n", 1, 12, "cannot have a default"),
    ("#@ type=int default=1\n<a> ::= x\n", 1, 1, "annotation before the first rule"),
    ("<a> ::= x | y  #@ type=cat default=x\n  #@ type=cat default=y\n", 2, 3, "already has an annotation"),
    ("# only a comment\n", 1, 1, "the grammar has no rules"),
])
def test_semantic_errors(text, line, col, fragment):
    if fragment is None:
        parse_grammar(text, "g.bnf")
        return
    err = error_of(text)
    messages = [(d.location.line, d.location.column, d.message) for d in err.diagnostics]
    assert any(m[:2] == (line, col) and fragment in m[2] for m in messages), messages


def test_all_semantic_errors_are_reported_together():
    err = error_of("<a> ::= <b> | <c>\n<a> ::= x\n")
    assert len(err.diagnostics) == 3  # duplicate + two undefined


def test_unreachable_rule_is_a_warning_not_an_error():
    g = parse_grammar("<a> ::= x\n<b> ::= y\n", "g.bnf")
    assert [w.severity for w in g.warnings] == ["warning"]
    assert "<b> is never used" in g.warnings[0].message
    assert g.warnings[0].location.line == 2


def test_bounds_checked_when_bound_to_a_dataset():
    g = parse_grammar("<a> ::= x RANDOM-INT(2, floor(L/2))\n", "g.bnf")
    g.bind(DatasetMeta(6, 10, 100))  # 2..3: fine
    with pytest.raises(BindingError) as info:
        g.bind(DatasetMeta(3, 10, 100))  # 2..1: empty
    d = info.value.diagnostics[0]
    assert (d.location.line, d.location.column) == (1, 11)
    assert "empty range: lower bound 2 > upper bound 1" in d.message
    assert "L=3" in d.message


def test_non_integer_int_bound_reported_at_binding():
    g = parse_grammar("<a> ::= RANDOM-INT(1, L/2)\n", "g.bnf")
    with pytest.raises(BindingError, match="not integers; wrap them in floor"):
        g.bind(DatasetMeta(5, 10, 100))


def test_dataset_variables_need_a_dataset():
    g = parse_grammar("<a> ::= RANDOM-INT(1, L)\n", "g.bnf")
    with pytest.raises(BindingError, match="use L; give a dataset"):
        g.bind(None)


def test_missing_file_is_a_grammar_error(tmp_path):
    with pytest.raises(GrammarError, match="cannot read grammar file"):
        load_grammar(tmp_path / "nope.bnf")


def test_binary_file_is_a_grammar_error(tmp_path):
    p = tmp_path / "bin.bnf"
    p.write_bytes(b"\xff\xfe\x00\x01")
    with pytest.raises(GrammarError):
        load_grammar(p)


@pytest.mark.parametrize("text, line, col, fragment", [
    # constant bounds: one rule (gp.binding.sampler_range) at load and at binding
    ("<a> ::= RANDOM-INT(1, foo(3))\n", 1, 23, "unknown function 'foo'"),
    ("<a> ::= RANDOM-INT(1, 1/0)  #@ type=int default=1\n", 1, 9, "'1 / 0' divides by zero"),
    ("<a> ::= RANDOM-REAL(0, sqrt(-1))  #@ type=real default=0\n", 1, 9, "'sqrt(-1)' has no value"),
    ("<a> ::= RANDOM-REAL(log2(0), 1)  #@ type=real default=1\n", 1, 9, "'log2(0)' has no value"),
    ("<a> ::= RANDOM-INT(1, floor(1e999))  #@ type=int default=1\n", 1, 9, "overflows"),
    ("<a> ::= RANDOM-INT(1, 99999999999999999999999999999999999999)\n", 1, 9, "beyond the 64-bit integers"),
    ("<a> ::= RANDOM-INT(1, 9223372036854775808)\n", 1, 9, "beyond the 64-bit integers"),
    ("<a> ::= RANDOM-REAL(0, 1e999)\n", 1, 9, "the upper bound inf is not a finite number"),
    ("<a> ::= RANDOM-REAL(0, 1e999 - 1e999)\n", 1, 9, "the upper bound nan is not a finite number"),
    ("<a> ::= RANDOM-REAL(-1e308, 1e308)\n", 1, 9, "wider than the largest float"),
    ("<a> ::= RANDOM-REAL(>1, <1.0000000000000002)\n", 1, 9, "no number lies strictly between"),
    ("<a> ::= x @ 1e999 | y\n", 1, 13, "weight must be a positive finite number, got 1e999"),
    ("<a> ::= RANDOM-REAL(0, 1, step=1e999)\n", 1, 32, "step must be a positive finite number, got 1e999"),
    ("<a> ::= RANDOM-REAL(0, 1, step=-1e-320)\n", 1, 32, "step must be a positive finite number, got -1e-320"),
    ("<a> ::= RANDOM-REAL(0, 1, step=5e-324)\n", 1, 9, "the step 4.94066e-324 is too fine for bounds of magnitude 1"),
    ("<a> ::= RANDOM-REAL(-1e308, 1e308, step=1e300)\n", 1, 9, "wider than the largest float"),
    # defaults and the numbers of int/real rules
    ("<a> ::= x | y  #@ type=real default=1e999 sentinel\n", 1, 16, "default inf is not a finite number"),
    ("<a> ::= x | y  #@ type=real default=nan sentinel\n", 1, 16, "default nan is not a finite number"),
    ("<a> ::= RANDOM-INT(1, 2)  #@ type=int default=99999999999999999999 sentinel\n", 1, 27, "64-bit"),
    ("<a> ::= RANOM-REAL(0.2, 0.8)  #@ type=real default=0.5\n", 1, 9,
     "<a> is a hyper-parameter of type real, but 'RANOM-REAL' is not a valid real number"),
    ("<a> ::= 1 | 2.5 | ( 3 | x )  #@ type=int default=1\n", 1, 13, "'2.5' is not a valid integer"),
    ("<a> ::= 1 | 2.5 | ( 3 | x )  #@ type=int default=1\n", 1, 25, "'x' is not a valid integer"),
    # limits
    ("<a> ::= RANDOM-INT(1, " + "+".join(["1"] * 60) + ")\n", 1, 23, "nested too deeply: more than 50 levels"),
    ("<a> ::= " + "( " * 60 + "x" + " )" * 60 + "\n", 1, 109, "nested too deeply"),
    ("<a> ::= <b> <b>\n" + "".join(f"<b{'' if i == 0 else i}> ::= <b{i + 1}> <b{i + 1}>\n" for i in range(14))
     + "<b14> ::= x\n", 1, 1, "the shallowest tree of <a> has 98,303 nodes; derivation trees are limited to 10,000"),
])
def test_hostile_values_and_limits(text, line, col, fragment):
    test_semantic_errors(text, line, col, fragment)


def test_a_bad_bound_is_reported_once():
    err = error_of("<a> ::= RANDOM-INT(1, foo(3)) | RANDOM-REAL(0.5, 0.1)  #@ type=real default=0.25\n")
    assert [d.message.split(";")[0] for d in err.diagnostics] == [
        "unknown function 'foo'", "empty range: lower bound 0.5 > upper bound 0.1"]


def test_bounds_that_overflow_on_a_dataset_are_binding_errors():
    g = parse_grammar("<a> ::= x RANDOM-INT(1, N * N * N)\n", "g.bnf")
    g.bind(DatasetMeta(2, 3, 1000))
    with pytest.raises(BindingError, match="beyond the 64-bit integers .*on dataset"):
        g.bind(DatasetMeta(2, 3, 10 ** 7))


def test_too_many_tokens_are_refused_where_the_limit_is_reached():
    err = error_of("<a> ::= x\n" + "<b> ::= y y y y y y y y\n" * 6000)
    d = err.diagnostics[0]
    assert "more than 50,000 tokens" in d.message and (d.location.line, d.location.column) == (5001, 19)


def test_many_errors_are_summarised():
    err = error_of("<a> ::= " + " ".join(f"<u{i}>" for i in range(120)) + "\n")
    assert len(err.diagnostics) == 51 and err.diagnostics[-1].severity == "note"
    assert err.diagnostics[-1].message.startswith("70 more errors not shown")


def test_lines_are_counted_as_lark_counts_them():
    # A form feed or U+2028 does not end a line: the source line shown is the offending one.
    err = error_of("<a> ::= x \x0c y\n<b> ::= \u2028 z |\n")
    d = err.diagnostics[0]
    assert (d.location.line, d.location.column) == (2, 9) and d.render().split("\n")[1] == "    <b> ::= \u2028 z |"


def test_a_long_line_is_shown_around_the_column():
    err = error_of("<a> ::= " + "x " * 5000 + "<nope>\n")
    _, line, caret = err.diagnostics[0].render().splitlines()
    assert len(line) < 140 and line[caret.index("^")] == "<"

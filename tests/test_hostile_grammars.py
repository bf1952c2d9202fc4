"""Hostile grammars never end in a traceback (issue 9): ``check``, ``sample`` and ``species``.

First one test per class of bug the hostile-user report found, each through the public
entry point ``cli.main`` in this process, with the message it must print. Then three
property tests drive generated input through ``check`` and ``sample`` (and ``species``):

* the shipped grammars (and a toy one) mutated: characters and tokens deleted,
  duplicated, swapped; numbers replaced by extreme values (1e999, nan, -0, 2**70, …);
  unknown names and unbalanced brackets inserted;
* small random grammars: rules, alternatives, groups, optionals, weights, samplers with
  random bound expressions, annotations;
* argument lists for ``check``, ``sample`` and ``species``.

Every case must end with an exit code in {0, 1, 2}, without a traceback or an internal
error, within :data:`BOUND_SECONDS`; a grammar that ``check`` accepts must ``sample``,
and its trees must compile to estimators of registered algorithms.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from ggp_automl import cli
from ggp_automl.evaluation import default_data
from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.generate import MAX_TREE_NODES, TreeGenerator
from ggp_automl.search.run import grammar_task
from ggp_automl.spaces.compiler import algorithm_chain, build_estimator
from ggp_automl.spaces.registry import load_all
from .conftest import GRAMMARS

#: a hang, not a speed: these commands take well under a second on an idle machine, several on a
#: busy one (a 5 s bound failed at 5.09 s with the machine's two cores shared by six processes)
BOUND_SECONDS = 25.0
#: fixed examples, so that CI is reproducible (HOSTILE_RANDOM=1 explores new ones)
PROPERTY = dict(deadline=None, derandomize=os.environ.get("HOSTILE_RANDOM") is None,
                suppress_health_check=[HealthCheck.too_slow])
ALGORITHMS = sorted(load_all())  # imported once here, not inside a timed call
#: examples per property test: about 15 s together on one core (HOSTILE_EXAMPLES=k multiplies them; CI's
#: 20 minutes keep the default small, HOSTILE_EXAMPLES=3 is the earlier, fuller exploration)
_SCALE = int(os.environ.get("HOSTILE_EXAMPLES", "1"))
MUTATED, RANDOM, ARGUMENTS = 200 * _SCALE, 330 * _SCALE, 170 * _SCALE

TOY = """\
<Start> ::= BR <slc> [ <flag> ] <pred> @ 3 | BPNN <hid> <pred>
<hid>   ::= RANDOM-INT(10, 1000)                 #@ type=int default=100
<slc>   ::= KNN <k> | J48 <cf> | NaiveBayes
<flag>  ::= ct | EMPTY                          #@ type=bool default=EMPTY
<k>     ::= RANDOM-INT(1, floor(sqrt(L)) + 1)    #@ type=int default=1
<cf>    ::= RANDOM-REAL(>0.0, <0.5, log)         #@ type=real default=0.25
<pred>  ::= PCut1 | <t>                         #@ type=cat default=#1
<t>     ::= RANDOM-REAL(0.05, min(M, 1), step=0.05)  #@ type=real default=0.5
"""


def run(*args) -> tuple[int, str, str, float]:
    out, err = io.StringIO(), io.StringIO()
    t0 = time.perf_counter()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue(), time.perf_counter() - t0


def assert_clean(code: int, out: str, err: str, seconds: float) -> None:
    assert code in (0, 1, 2), (code, err[-2000:])
    for text in (out, err):
        assert "Traceback" not in text and "internal error" not in text and "Warning:" not in text, err[-2000:]
    assert seconds < BOUND_SECONDS, seconds


def check(path: Path, *extra) -> tuple[int, str]:
    code, out, err, seconds = run("check", "--grammar", path, *extra)
    assert_clean(code, out, err, seconds)
    return code, out + err


@pytest.fixture()
def write(tmp_path):
    def write(text: str, name: str = "g.bnf") -> Path:
        path = tmp_path / name
        path.write_text(text, encoding="utf-8")
        return path
    return write


# -- one test per class of bug -------------------------------------------------------------------------------

HEAD = "<S> ::= BPNN <p>\n"  # BPNN alone is a whole model (algorithm adaptation)


@pytest.mark.parametrize("bound, fragment", [
    ("RANDOM-INT(1, foo(3))", "2:23: error: unknown function 'foo'"),        # was a KeyError
    ("RANDOM-INT(1, 1/0)", "'1 / 0' divides by zero"),
    ("RANDOM-REAL(0, sqrt(-1))", "'sqrt(-1)' has no value (math domain error)"),
    ("RANDOM-REAL(log2(0), 1)", "'log2(0)' has no value"),
    ("RANDOM-INT(1, floor(1e999))", "overflows"),
    ("RANDOM-INT(1, 100000000000000000000000)", "the upper bound 1e+23 is beyond the 64-bit integers"),
    ("RANDOM-REAL(0, 1e999)", "the upper bound inf is not a finite number"),
    ("RANDOM-REAL(-1e308, 1e308)", "wider than the largest float"),
    ("RANDOM-REAL(>1, <1.0000000000000002)", "no number lies strictly between"),
    ("RANDOM-REAL(>0, <0.1, step=0.1)", "empty grid: no value 0.0 + k·0.1 lies in (0.0, 0.1)"),
    ("RANDOM-REAL(0, 1e300, step=5e-324)", "the step 4.94066e-324 is too fine for bounds of magnitude 1e+300"),
])
@pytest.mark.parametrize("annotation", ["", "  #@ type=real default=1 sentinel", "  #@ type=int default=1"])
def test_bad_constant_bounds_are_refused_with_their_location(write, bound, fragment, annotation):
    code, text = check(write(f"{HEAD}<p> ::= {bound}{annotation}\n"))
    assert code == 1 and fragment in text and "g.bnf:2:" in text


@pytest.mark.parametrize("text, fragment", [
    ("<S> ::= BPNN @ 1e999 | BPNN\n", "1:16: error: weight must be a positive finite number, got 1e999"),
    ("<S> ::= BPNN @ nan | BPNN\n", "1:16: error: unexpected 'nan'"),
    ("<S> ::= BPNN <v>\n<v> ::= x | y  #@ type=real default=1e999 sentinel\n", "default inf is not a finite number"),
    ("<S> ::= BPNN <v>\n<v> ::= RANDOM-INT(1, 2)  #@ type=int default=1180591620717411303424 sentinel\n",
     "beyond the 64-bit integers"),
])
def test_weights_and_defaults_must_be_finite(write, text, fragment):
    code, out = check(write(text))
    assert code == 1 and fragment in out


@pytest.mark.parametrize("text, fragment", [
    ("<S> ::= BPNN <p>\n<p> ::= RANDOM-INT(1, " + " + ".join(["1"] * 2000) + ")  #@ type=int default=1\n",
     "2:23: error: nested too deeply: more than 50 levels"),
    ("<S> ::= BPNN <p>\n<p> ::= RANDOM-INT(1, " + "-" * 400 + "3)  #@ type=int default=1\n", "nested too deeply"),
    ("<S> ::= BPNN " + "( " * 200 + "NaiveBayes" + " )" * 200 + "\n", "nested too deeply"),
    ("<S> ::= BPNN " + "[ " * 200 + "NaiveBayes" + " ]" * 200 + "\n", "nested too deeply"),
])
def test_deep_nesting_is_refused_not_a_recursion_error(write, text, fragment):
    code, out = check(write(text))
    assert code == 1 and fragment in out


def test_parenthesised_bounds_do_not_count_as_nesting(write):
    bound = "(" * 200 + "3" + ")" * 200
    code, out = check(write(f"{HEAD}<p> ::= RANDOM-INT(1, {bound})  #@ type=int default=1\n"))
    assert code == 0, out


def test_counts_beyond_the_largest_float_saturate(write):
    rules = "".join(f"<h{i}> ::= RANDOM-INT(1, 1000000000000)  #@ type=int default=1\n" for i in range(40))
    code, out = check(write("<S> ::= BPNN " + " ".join(f"<h{i}>" for i in range(40)) + "\n" + rules))
    assert code == 0 and "more than 1e+300" in out


def test_a_count_that_squares_at_every_rule_is_quick(write):
    rules = "".join(f"<r{i}> ::= <r{i + 1}> <r{i + 1}> | <r{i + 1}> <x>\n" for i in range(30))
    text = "<S> ::= BPNN <r0>\n" + rules + "<r30> ::= <x>\n<x> ::= a | b  #@ type=cat default=a\n"
    code, out = check(write(text))
    assert code == 0 and "configurations (reals = 100 values)    more than 1e+300" in out


@pytest.mark.parametrize("rules, fragment", [
    (20_000, "16667:14: error: the grammar has more than 50,000 tokens"),     # was > 90 s
    (3_000, "1:1: error: the shallowest tree of <r0> is 3,001 levels deep"),  # was a RecursionError
])
def test_long_chains_are_refused_quickly_with_a_limit(write, rules, fragment):
    text = "".join(f"<r{i}> ::= <r{i + 1}>\n" for i in range(rules)) + f"<r{rules}> ::= BPNN\n"
    code, out = check(write(text))
    assert code == 1 and fragment in out


def test_a_long_chain_within_the_limits_is_analysed(write):
    # 7,000 rules, each one level deeper (max depth 7,000): every pass is iterative.
    text = "<S> ::= BPNN <r0>\n" + "".join(f"<r{i}> ::= EMPTY | <r{i + 1}>\n" for i in range(7000)) \
        + "<r7000> ::= EMPTY\n"
    code, out = check(write(text))
    assert code == 0 and re.search(r"max depth\s+7002", out), out


def test_an_oversized_file_is_refused_before_parsing(write):
    code, out = check(write("<S> ::= BR J48\n" + "# padding\n" * 100_001))
    assert code == 1 and "the grammar has 1,000,025 characters; the limit is 1,000,000" in out


def test_ten_thousand_undefined_references_are_summarised(write):
    text = "<S> ::= BPNN " + " ".join(f"<u{i}>" for i in range(10_000)) + "\n"
    code, out = check(write(text))
    assert code == 1 and "9,950 more errors not shown" in out


@pytest.mark.parametrize("text, fragment", [
    ("<S> ::= BR RandomForrest\n", "1:12: error: 'RandomForrest' beside BR in <S> is not a registered algorithm, "
                                    "a hyper-parameter value or an option (BR reads no option written beside its "
                                    "name); did you mean RandomForest?"),
    ("<S> ::= BR <c>\n<c> ::= RandomForrest | J48\n", "2:9: error: 'RandomForrest' in <c> is not a registered "
                                                        "algorithm (did you mean RandomForest?)"),
    ("<S> ::= <a> <a>\n<a> ::= EMPTY\n", "1:1: error: no tree of <S> contains an algorithm"),
    ("<S> ::= KNN | J48\n", None),  # a space of single-label classifiers
    ("<S> ::= KNN | BR <c>\n<c> ::= J48\n",
     "1:1: error: some trees of <S> build multi-label methods and others single-label"),
    ("<S> ::= J48 <c>\n<c> ::= KNN\n", "1:1: error: no tree of <S> nests its algorithms in a way the mapper can build"),
    # issue 24: beside an algorithm's name only the options its builder reads (none of the shipped ones reads any)
    ("<S> ::= BPNN RANDOM-INT(1, 3) | BR <n>\n<n> ::= J48\n", "1:14: error: the number drawn by RANDOM-INT(1, 3) "
                                                              "beside BPNN in <S> belongs to no hyper-parameter"),
    ("<S> ::= BR <n>\n<n> ::= KNN bogus <k>\n<k> ::= 1 | 3    #@ type=cat default=1\n",
     "2:13: error: 'bogus' beside KNN in <n> is not a registered algorithm, a hyper-parameter value or an option"),
    ("<S> ::= junk BR J48\n", "1:9: error: 'junk' beside BR in <S> is not a registered algorithm"),
    ("<S> ::= BR J48 KNN\n", "1:16: error: 'KNN' follows BR in one alternative of <S>: an alternative names one "
                             "algorithm"),
    ("<S> ::= <x> RANDOM-INT(1, 3)\n<x> ::= BR J48\n", "1:13: error: the number drawn by RANDOM-INT(1, 3) in <S> "
                                                        "belongs to no algorithm"),
])
def test_check_knows_the_registry(write, text, fragment):
    code, out = check(write(text))
    assert (code, fragment in out if fragment else True) == (1 if fragment else 0, True), out


STRAY = "<S> ::= BR <n>\n<n> ::= KNN bogus <k>\n<k> ::= 1 | 3    #@ type=cat default=1\n"
STRAY_MESSAGE = "g.bnf:2:13: error: 'bogus' beside KNN in <n> is not a registered algorithm"


@pytest.mark.parametrize("command", [["check"], ["sample", "-n", "2"], ["species", "--out", "species-out"]])
def test_every_command_refuses_a_stray_terminal_where_check_does(write, command):
    """Issue 24: `sample` and `species` took a grammar `check` refuses; one checking path for all."""
    path = write(STRAY)
    extra = [str(path.parent / a) if a == "species-out" else a for a in command[1:]]
    code, out, err, seconds = run(command[0], "--grammar", path, *extra)
    assert_clean(code, out, err, seconds)
    assert code == 1 and STRAY_MESSAGE in err and not out, (code, out, err)
    assert not (path.parent / "species-out").exists()


def test_the_estimator_refuses_a_stray_terminal_before_searching(write):
    from ggp_automl import GrammarAutoML
    from ggp_automl.gp.errors import GrammarError

    X, Y = default_data.load_default()
    with pytest.raises(GrammarError, match="'bogus' beside KNN in <n> is not a registered algorithm"):
        GrammarAutoML(grammar=str(write(STRAY)), time_budget=5, n_jobs=1).fit(X, Y)


def test_the_mapper_refuses_a_tree_with_a_stray_terminal():
    """A tree written by hand (or by a grammar the check did not see) does not compile to the algorithm alone."""
    from ggp_automl.gp.bnf_parser import parse_grammar
    from ggp_automl.gp.tree import Leaf, Node
    from ggp_automl.spaces.compiler import MappingError

    grammar = parse_grammar("<S> ::= BR <n>\n<n> ::= KNN | J48\n", "toy.bnf")
    tree = Node("S", 0, (Leaf("BR"), Node("n", 0, (Leaf("KNN"), Leaf("bogus")))))
    with pytest.raises(MappingError, match="'bogus' beside KNN in <n>"):
        algorithm_chain(tree, grammar)


def test_sampling_trees_that_double_at_every_level_is_bounded_in_output_and_time(write):
    """Issue 24: `sample -n 20` of such a grammar printed for over a minute, tens of thousands of lines."""
    from ggp_automl.commands.sample import TREE_LINES

    path = write("<S> ::= BR <e>\n<e> ::= <e> <e> | J48\n")
    code, out, err, seconds = run("sample", "--grammar", path, "-n", "20", "--method", "full")
    assert_clean(code, out, err, seconds)
    assert code == 0 and len(out.splitlines()) <= 1 + 20 * (TREE_LINES + 4), len(out.splitlines())
    assert "more lines (--phenotypes prints whole trees)" in out


def test_trees_that_may_fail_to_compile_are_a_warning(write):
    code, out = check(write("<S> ::= BR <c> | EMPTY\n<c> ::= J48 | BR <d>\n<d> ::= J48\n"))
    assert code == 0
    assert "warning: some trees of <S> contain no algorithm" in out
    assert "warning: some trees of <S> nest their algorithms in a way the mapper cannot build" in out


@pytest.mark.parametrize("method", ["grow", "full", "rhh"])
def test_sampling_an_exploding_recursive_grammar_stays_within_the_node_limit(write, method):
    path = write("<S> ::= BR <e>\n<e> ::= <e> <e> <e> | J48\n")  # full at depth 100: 3^100 nodes
    code, out, err, seconds = run("sample", "--grammar", path, "-n", "3", "--method", method, "--phenotypes")
    assert_clean(code, out, err, seconds)
    assert code == 0 and all(len(line.split()) < MAX_TREE_NODES for line in out.splitlines()[1:])


def test_sampling_far_below_the_default_depth_limit_does_not_recurse(write):
    path = write("<S> ::= BR <e>\n<e> ::= J48 <e> | J48\n")
    code, out, err, seconds = run("sample", "--grammar", path, "-n", "2", "--method", "full", "--max-depth", "3000")
    assert_clean(code, out, err, seconds)
    assert code == 0 and "depth 3000" in out


@pytest.mark.parametrize("args, fragment", [
    (["-n", "100000000"], "-n is at most 10,000 trees"),
    (["--labels", "100000000000000000000", "--features", "3"], "beyond the 64-bit integers"),
])
def test_sample_refuses_what_cannot_finish(args, fragment):
    code, out, err, seconds = run("sample", "--grammar", GRAMMARS / "large.bnf", *args)
    assert_clean(code, out, err, seconds)
    assert code in (1, 2) and fragment in err


def test_a_device_or_directory_as_grammar_is_an_input_error(tmp_path):
    for path in [tmp_path] + ([Path("/dev/zero")] if Path("/dev/zero").exists() else []):
        code, text = check(path)
        assert code == 1 and ("cannot read grammar file" in text or "is larger than" in text)


# -- property tests ------------------------------------------------------------------------------------------

BASES = {"toy": TOY, **{name: (GRAMMARS / f"{name}.bnf").read_text() for name in ("small", "medium", "large")}}
EXTREMES = ["1e999", "nan", "-0", str(2 ** 70), "0", "-1", "1e-320", "1e308", "-1e308", "9223372036854775808",
            "0.0", "1" * 40, "inf", "5e-324"]
PIECES = ["<", ">", "|", "(", ")", "[", "]", "#@", "@", "::=", '"', "EMPTY", "RANDOM-INT(", "RANDOM-REAL(", ",",
          "L", "Q", "-", "/ 0", "RandomForrest", "<undefined>", "<Start>", "foo(", "sqrt(", "log", ">0", "<1",
          "@ 1e999", "@ 0", "\t", "ü", "\\", "\n", "type=int", "type=cat", "default=#9", "default=nan", "sentinel",
          "\x0c", "\u2028", "\r", "\x00", "#@ type", "#@ default", "=", "::= ::=", "RANDOM-INT(1, 2)", "|",
          ", step=0.05", "step=", ", log, step=1"]
_NUMBER = re.compile(r"(?<![\w.])\d+(\.\d+)?([eE][+-]?\d+)?")

mutation = st.one_of(
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 40)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(PIECES)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.text(max_size=4)),
    st.tuples(st.just("number"), st.floats(0, 1), st.sampled_from(EXTREMES)),
    st.tuples(st.just("token"), st.floats(0, 1), st.floats(0, 1)),
    st.tuples(st.just("dupline"), st.floats(0, 1), st.just(0)),
    st.tuples(st.just("swaplines"), st.floats(0, 1), st.floats(0, 1)),
)


def mutate(text: str, ops) -> str:
    for op, where, arg in ops:
        i = int(where * len(text))
        if op == "delete":
            text = text[:i] + text[i + arg:]
        elif op == "insert":
            text = text[:i] + arg + text[i:]
        elif op == "number":  # replace the number nearest the position
            numbers = list(_NUMBER.finditer(text))
            if numbers:
                m = numbers[int(where * (len(numbers) - 1))]
                text = text[:m.start()] + arg + text[m.end():]
        elif op == "token":  # copy one whitespace-separated token over another
            tokens = list(re.finditer(r"\S+", text))
            if tokens:
                a, b = tokens[int(where * (len(tokens) - 1))], tokens[int(arg * (len(tokens) - 1))]
                text = text[:a.start()] + b.group() + text[a.end():]
        else:
            lines = text.split("\n")
            a = int(where * (len(lines) - 1))
            if op == "dupline":
                lines.insert(a, lines[a])
            else:
                b = int(arg * (len(lines) - 1))
                lines[a], lines[b] = lines[b], lines[a]
            text = "\n".join(lines)
    return text


def check_then_sample(path: Path) -> int:
    """``check``, then ``sample`` when it passes: the sampled trees must compile to registered algorithms."""
    code, out, err, seconds = run("check", "--grammar", path)
    assert_clean(code, out, err, seconds)
    event(f"check exit {code}" + (" with warnings" if "warning:" in err else ""))
    if code == 0:
        s_code, s_out, s_err, s_seconds = run("sample", "--grammar", path, "-n", "3", "--seed", "0", "--phenotypes")
        assert_clean(s_code, s_out, s_err, s_seconds)
        assert s_code == 0, s_err
        grammar = load_grammar(path)  # the same trees as sample's, in this process (on its task's default data)
        generator = TreeGenerator(grammar.bind(default_data.meta(grammar_task(grammar))))
        rng = np.random.default_rng(0)
        trees = [generator.grow(rng) for _ in range(3)]
        assert [t.phenotype for t in trees] == s_out.splitlines()[1:]
        for tree in trees:
            steps, _ = algorithm_chain(tree, grammar)  # no terminal without an estimator
            assert all(step.spec.name in ALGORITHMS for step in steps)
            if "warning: some trees" not in err:  # else a tree may lack an algorithm or nest them wrongly
                try:
                    build_estimator(steps)
                except ValueError as exc:  # a categorical value its builder does not know (a mutated "log usd"):
                    # only the builder knows its vocabulary, so the candidate fails at evolve time with this
                    # message, which must say where the value comes from
                    assert "unknown" in str(exc) and ".bnf:" in str(exc), exc
    return code


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
@settings(max_examples=MUTATED, **PROPERTY)
@given(base=st.sampled_from(sorted(BASES)), ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_shipped_grammars(tmp_path_factory, base, ops):
    path = tmp_path_factory.mktemp("mutated") / f"{base}.bnf"
    path.write_text(mutate(BASES[base], ops), encoding="utf-8", errors="surrogatepass")
    check_then_sample(path)


HEADS = ["S", "A", "B", "C", "D"]
SLC = [name for name, spec in load_all().items() if spec.kind == "slc"]
number = st.one_of(st.integers(0, 50).map(str), st.integers(-3, 300).map(str), st.sampled_from(EXTREMES))
expression = st.recursive(
    st.one_of(number, st.sampled_from(["L", "M", "N", "Q"])),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/"]), inner).map(" ".join),
        st.tuples(st.sampled_from(["sqrt", "floor", "ceil", "round", "log2", "min", "max", "foo"]),
                  st.lists(inner, min_size=1, max_size=3)).map(lambda c: f"{c[0]}({', '.join(c[1])})"),
        inner.map(lambda e: f"({e})"), inner.map(lambda e: f"-{e}")),
    max_leaves=5)
sampler = st.tuples(st.sampled_from(["RANDOM-INT", "RANDOM-REAL"]), st.sampled_from(["", "", ">"]), expression,
                    st.sampled_from(["", "", "<"]), expression,
                    st.sampled_from(["", "", ", log", ", step=0.5", ", step=1e-300", ", step=3, log"])).map(
    lambda s: f"{s[0]}({s[1]}{s[2]}, {s[3]}{s[4]}{s[5]})")
weight = st.sampled_from(["", "", "", " @ 2", " @ 0.5", " @ 1e-300", " @ 1e308", " @ 1e999", " @ 0"])


@st.composite
def random_grammar(draw) -> str:
    """Rules <S>, <A>, … whose start usually names a multi-label method over the other rules."""
    heads = HEADS[:draw(st.integers(1, len(HEADS)))]
    ref = st.sampled_from(heads[1:] or heads).map(lambda n: f"<{n}>") if draw(st.integers(0, 9)) else st.just("<Z>")
    item = st.one_of(ref, st.sampled_from(SLC), st.sampled_from(ALGORITHMS + ["RandomForrest", "x", "PCut1"]),
                     sampler, st.just("EMPTY"))
    alternative = st.lists(st.one_of(item, item, st.lists(item, min_size=1, max_size=2).map(
        lambda i: f"( {' '.join(i)} )"), st.lists(item, min_size=1, max_size=2).map(lambda i: f"[ {' '.join(i)} ]")),
        min_size=1, max_size=3).map(" ".join)
    start = draw(st.lists(st.one_of(st.sampled_from(["BPNN", "BR", "CC", "EnsembleML BR"]).map(
        lambda m: m if m == "BPNN" else f"{m} {draw(ref)}"), alternative), min_size=1, max_size=3))
    lines = [f"<S> ::= {' | '.join(start)}\n"]
    for head in heads[1:]:
        alts = draw(st.lists(st.tuples(st.one_of(st.sampled_from(SLC), alternative), weight).map("".join),
                             min_size=1, max_size=3))
        annotation = draw(st.one_of(st.just(""), st.tuples(
            st.sampled_from(["alg", "cat", "bool", "int", "real", "foo"]),
            st.sampled_from(["#1", "#9", "0", "1", "0.5", "EMPTY", "1e999", "nan", "PCut1", "x"]),
            st.sampled_from(["", " sentinel"])).map(lambda a: f"  #@ type={a[0]} default={a[1]}{a[2]}")))
        lines.append(f"<{head}> ::= {' | '.join(alts)}{annotation}\n")
    return "".join(lines)


@settings(max_examples=RANDOM, **PROPERTY)
@given(text=random_grammar())
def test_random_grammars(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("random") / "g.bnf"
    path.write_text(text, encoding="utf-8")
    check_then_sample(path)


value = st.sampled_from(["0", "1", "-1", "3", "7", "99999999999999999999", "1e3", "abc", "", "nan", "٣"])
option = st.one_of(
    st.tuples(st.sampled_from(["--labels", "--features", "--instances", "-n", "--seed", "--max-depth"]), value),
    st.tuples(st.just("--method"), st.sampled_from(["grow", "full", "rhh", "ramped"])),
    st.tuples(st.sampled_from(["--data", "--out"]), st.sampled_from(["missing.arff", "", "out"])),
    st.tuples(st.sampled_from(["--rules", "--phenotypes", "--quiet", "--bogus", "-h"])),
    st.tuples(st.text(max_size=6)))


@settings(max_examples=ARGUMENTS, **PROPERTY)
@given(command=st.sampled_from(["check", "sample", "species"]),
       grammar=st.sampled_from(["small", "toy", "none", "dir"]), options=st.lists(option, max_size=4))
def test_argument_lists(tmp_path_factory, command, grammar, options):
    folder = tmp_path_factory.mktemp("args")
    path = {"none": folder / "missing.bnf", "dir": folder}.get(grammar, folder / f"{grammar}.bnf")
    if grammar in BASES:
        path.write_text(BASES[grammar], encoding="utf-8")
    args = [command, "--grammar", str(path)] + [str(folder / a) if o[0] in ("--data", "--out") and a else a
                                                 for o in options for a in o]
    if command == "species":  # never next to the shipped grammars
        args += ["--out", str(folder / "species")]
    code, out, err, seconds = run(*args)
    assert_clean(code, out, err, seconds)
    event(f"{command} exit {code}")

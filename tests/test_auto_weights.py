"""``alt @auto`` (issue 14): weights counted from the algorithms an alternative holds.

The shipped grammars used to count their weights by hand (decision 6); they now write
``@auto``. The first tests prove that nothing changed: for every shipped grammar, every
rule and every level, the probability of each algorithm under the old hand-written
weights (kept below, as they stood before the change) equals the one under ``@auto`` to
1e-12, and so it does in every species file. Then the rule itself on small grammars
(wrappers, sequences, hyper-parameters, explicit weights beside ``@auto``), its errors
with file:line:col, and the bounds that keep it linear on hostile grammars.
"""
from __future__ import annotations

import contextlib
import io
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ggp_automl import cli
from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.gp.bnf_writer import format_grammar
from ggp_automl.gp.errors import GrammarError
from ggp_automl.gp.grammar import Alternative, Grammar, Rule
from ggp_automl.gp.selection import Selection, describe_selection
from ggp_automl.gp.species import SPECIES
from .conftest import GRAMMARS

#: The hand-counted weights of the rules that now say @auto, as they were written before (git history:
#: grammars/X.bnf before issue 14). small's <ALGS-SLC> had no weights (one algorithm per family).
HAND = {
    "large": {
        "Start": (18, 1, 7), "ALGS-SLC": (23, 2, 1, 2), "ALG-TYPE": (5, 5, 2, 5, 3, 2), "asc": (1, 22),
        "ALG-WEIGHTED-TYPE": (5, 4, 1, 3, 3), "ALGS-PT": (16, 1, 1), "ALGS-PT1": (1, 1, 1, 1, 1, 5, 1, 1, 4),
        "META-MLC-LEVEL": (2, 3, 2), "BASE-MLC1": (18, 1), "BASE-MLC2": (16, 1, 1), "BASE-MLC3": (16, 1, 1),
    },
    "medium": {
        "Start": (14, 1), "ALG-TYPE": (3, 3, 2, 4, 2, 1), "ALGS-PT": (13, 1), "ALGS-PT1": (1, 1, 1, 1, 1, 2, 1, 1, 4),
    },
    "small": {"Start": (4, 1), "ALGS-SLC": (1, 1, 1, 1, 1)},
    "ensembles": {},
}
#: What decision 6 asks: the outermost MLC and SLC algorithm uniform.
UNIFORM = {"large": {"<Start>": 26, "<ALGS-SLC>": 28}, "medium": {"<Start>": 15, "<ALGS-SLC>": 15},
           "small": {"<Start>": 5, "<ALGS-SLC>": 5}}


def with_weights(grammar: Grammar, weights: dict[str, tuple]) -> Grammar:
    rules = dict(grammar.rules)
    for name, ws in weights.items():
        rule = rules[name]
        assert len(ws) == len(rule.alternatives), name
        alts = tuple(Alternative(a.items, float(w), a.location) for a, w in zip(rule.alternatives, ws))
        rules[name] = Rule(name, alts, rule.annotation, rule.location, rule.synthetic)
    return Grammar(rules, grammar.start, grammar.source)


def assert_same_distribution(d1: dict, d2: dict, where: str) -> None:
    assert set(d1) == set(d2), where
    for key in d1:
        assert abs(d1[key] - d2[key]) <= 1e-12, (where, key, d1[key], d2[key])


def distributions(grammar: Grammar) -> dict[str, dict]:
    """Every structural rule's and every level's probability of each outermost algorithm."""
    sel = Selection(grammar)
    out = {f"rule <{name}>": sel.rule(name) for name in sel.structural}
    for label, (name, a, j) in sel.levels().items():
        out[f"level {label}"] = sel.rule(grammar.start) if a < 0 else sel.reading(name, a, j)
    return out


def parse(text: str) -> Grammar:
    return parse_grammar(text, "g.bnf")


def weights(grammar: Grammar, name: str) -> list[float]:
    return [a.weight for a in grammar[name].alternatives]


# -- the shipped grammars: @auto gives exactly the hand-counted probabilities ---------------------------------


@pytest.mark.parametrize("space", sorted(HAND))
def test_auto_weights_give_the_hand_counted_probabilities(space):
    grammar = load_grammar(GRAMMARS / f"{space}.bnf")
    assert {r.name for r in grammar if any(a.auto for a in r.alternatives)} == set(HAND[space])
    hand = with_weights(grammar, HAND[space])
    for name in HAND[space]:  # the same weights up to a common factor
        new, old = weights(grammar, name), weights(hand, name)
        assert all(abs(n / sum(new) - o / sum(old)) <= 1e-12 for n, o in zip(new, old)), (name, new, old)
    auto, counted = distributions(grammar), distributions(hand)
    assert auto.keys() == counted.keys()
    for where in auto:
        assert_same_distribution(auto[where], counted[where], f"{space} {where}")
    for level, n in UNIFORM.get(space, {}).items():
        dist = auto[f"level {level}"]
        assert len(dist) == n and all(abs(p - 1 / n) <= 1e-12 for p in dist.values()), (level, dist)


def test_the_comparison_has_teeth():
    """One hand weight off (ASC's gate 1 : 21 instead of 1 : 22) is caught, and so is dropping the weights."""
    grammar = load_grammar(GRAMMARS / "large.bnf")
    auto, off = distributions(grammar), distributions(with_weights(grammar, {"asc": (1, 21)}))
    with pytest.raises(AssertionError):
        assert_same_distribution(auto["level <ALGS-SLC>"], off["level <ALGS-SLC>"], "asc")
    plain = with_weights(grammar, {name: (1,) * len(ws) for name, ws in HAND["large"].items()})
    start = distributions(plain)["level <Start>"]
    assert max(start.values()) / min(start.values()) > 10  # P(ML-BPNN) = 1/3 against P(BR) = 1/72 (I-18)


@pytest.mark.parametrize("space", ["large", "medium", "small"])
def test_species_files_keep_the_probabilities(space):
    """Species files say @auto too; read back, they give the full grammar's probabilities."""
    full = distributions(load_grammar(GRAMMARS / f"{space}.bnf"))
    for s in SPECIES:
        path = GRAMMARS / "species" / f"{space}-{s}.bnf"
        assert "@auto" in path.read_text(encoding="utf-8")
        for where, dist in distributions(load_grammar(path)).items():
            assert_same_distribution(dist, full[where], f"{path.name} {where}")


def test_adding_an_algorithm_is_editing_one_rule():
    text = (GRAMMARS / "large.bnf").read_text(encoding="utf-8")
    trees = "<TREES>        ::= <C4.5> | DecisionStump | <RandomForest> | <RandomTree> | <REPTree>\n"
    assert trees in text
    text = text.replace(trees, trees.rstrip("\n") + " | <ExtraTrees>\n<ExtraTrees> ::= ExtraTrees <nt_et>\n"
                        "<nt_et> ::= RANDOM-INT(10, 500)  #@ type=int default=100\n")
    rt = "                 | RT @auto\n"
    text = text.replace(rt, rt + rt.replace("RT", "NewPT"))
    levels = dict(describe_selection(parse_grammar(text, "large+.bnf")))
    assert levels["<Start>"] == "27 algorithms, each 1/27"
    assert levels["<ALGS-SLC>"] == "29 algorithms, each 1/29"  # ASC's gate follows: 1 : 23
    assert levels["<ALG-TYPE>"] == "24 algorithms, each 1/24"
    assert levels["<ALG-WEIGHTED-TYPE>"] == "17 algorithms, each 1/17"
    assert levels["<BASE-MLC2>"] == "19 algorithms, each 1/19"


# -- the rule ----------------------------------------------------------------------------------------------


def test_a_family_counts_its_algorithms_and_a_sequence_its_outermost_one():
    g = parse("<S> ::= <P> <A> @auto | x @auto | <h> <A> @auto\n<P> ::= p | q\n<A> ::= a | b | <B>\n"
              "<B> ::= B1 <h> | B2\n<h> ::= 1 | 2  #@ type=int default=1\n")
    # <P> <A>: the outermost algorithm is P's (A is inside it); <h> <A>: the hyper-parameter is skipped
    assert weights(g, "S") == [2, 1, 4]


def test_an_optional_wrapper_is_as_likely_as_each_algorithm_it_wraps():
    g = parse("<S> ::= <w> <A> @auto | <w> <B> @auto | <C> @auto\n<w> ::= W <h> @auto | EMPTY @auto\n"
              "<A> ::= a1 | a2 | a3\n<B> ::= b1\n<C> ::= c1 | c2\n<h> ::= 1 | 2  #@ type=int default=1\n")
    assert weights(g, "w") == [1, 4]  # EMPTY counts what <w> wraps: <A> and <B>
    dist = Selection(g).rule("S")
    assert set(dist) == {"W", "a1", "a2", "a3", "b1", "c1", "c2"}
    assert all(abs(p - 1 / 7) <= 1e-12 for p in dist.values()), dist


def test_an_optional_written_in_brackets_gets_an_auto_empty():
    g = parse("<S> ::= [ W1 @auto | W2 @auto ] <A> @auto | c @auto\n<A> ::= a1 | a2 | a3\n")
    assert weights(g, "S~1") == [1, 1, 3]
    dist = Selection(g).rule("S")
    assert all(abs(p - 1 / 6) <= 1e-12 for p in dist.values()) and len(dist) == 6, dist


def test_nested_wrappers_and_a_wrapper_shared_by_two_rules_stay_uniform():
    g = parse("<S> ::= <R1> @auto | <R2> @auto\n<R1> ::= <w> <v> <A> @auto | x @auto\n"
              "<R2> ::= <w> <A> @auto | y @auto\n<w> ::= W @auto | EMPTY @auto\n<v> ::= V @auto | EMPTY @auto\n"
              "<A> ::= a1 | a2\n")
    sel = Selection(g)
    # <w> wraps "<v> <A>" (V, a1, a2) and "<A>"; one gate cannot suit both exactly, and the count says so:
    # R1 (w, v, a1, a2, x) is uniform when w's EMPTY counts 3, R2 (w, a1, a2, y) when it counts 2.
    assert weights(g, "v") == [1, 2] and weights(g, "w") == [1, 5]
    r1 = sel.rule("R1")
    assert abs(r1["V"] - r1["a1"]) <= 1e-12 and abs(r1["a1"] - r1["x"]) <= 1e-12
    g = parse("<S> ::= <R1> @auto | <R2> @auto\n<R1> ::= <w> <A> @auto | x @auto\n<R2> ::= <w> <A> @auto\n"
              "<w> ::= W @auto | EMPTY @auto\n<A> ::= a1 | a2\n")
    for rule in ("R1", "R2"):  # the same continuation twice is one: exact in both
        dist = Selection(g).rule(rule)
        assert all(abs(p - 1 / len(dist)) <= 1e-12 for p in dist.values()), (rule, dist)


def test_explicit_weights_stand_beside_auto_and_are_written_back():
    g = parse("<S> ::= <A> @auto | b @ 1 | c @ 2.5\n<A> ::= a1 | a2 | a3\n")
    assert weights(g, "S") == [3, 1, 2.5]
    text = format_grammar(g)
    assert "<S> ::= <A> @auto | b @ 1 | c @ 2.5" in text  # the 1 is written: beside @auto it must be
    assert weights(parse(text), "S") == [3, 1, 2.5]


def test_a_wrapper_in_a_rule_outside_the_count_wraps_at_least_its_own_continuation():
    """<U> is unreachable, so F(<w>) reads only <S>'s use (<A>, 2); <U>'s use wraps 3 and counts 3 + 1.
    An unreachable wrapper (<U~1>) counts its uses wherever they are."""
    g = parse("<S> ::= <w> <A> @auto | x @auto\n<U> ::= <w> <B> @auto | [ V @auto ] <A> @auto\n"
              "<w> ::= W @auto | EMPTY @auto\n<A> ::= a1 | a2\n<B> ::= b1 | b2 | b3\n")
    assert weights(g, "w") == [1, 2] and weights(g, "S") == [3, 1] and weights(g, "U") == [4, 3]
    assert weights(g, "U~1") == [1, 2]


def test_a_single_alternative_and_auto_terminals():
    g = parse("<S> ::= <A> @auto\n<A> ::= auto @auto | b @auto\n")
    assert [a.text for a in g["A"].alternatives] == ["auto", "b"]  # 'auto' elsewhere is a terminal
    assert weights(g, "A") == [1, 1]


# -- errors --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text, line, col, fragment", [
    ("<S> ::= a | b\n<h> ::= 1 @auto | 2 @auto  #@ type=int default=1\n", 2, 11,
     "<h> is a hyper-parameter (type=int): @auto counts algorithms"),
    ("<S> ::= a | b\n<h> ::= ( 1 @auto | 2 @auto ) 3  #@ type=int default=\"1 3\"\n", 2, 13,
     "<h~1> is written inside <h>, which is a hyper-parameter (type=int)"),
    ("<S> ::= <A> @auto | b\n<A> ::= a\n", 1, 21, "this alternative has no weight, but others in the rule have @auto"),
    ("<S> ::= ( a @auto | b ) c\n", 1, 21, "<S~1>: this alternative has no weight"),
    ("<S> ::= <S> x @auto | y @auto\n", 1, 15, "the count depends on itself (<S> → <S>)"),
    ("<S> ::= <A> @auto | y @auto\n<A> ::= <B> | a\n<B> ::= <A> b | c\n", 1, 13,
     "the count depends on itself (<A> → <B> → <A>)"),
    ("<S> ::= <w> <w> <A> @auto | <A> @auto\n<w> ::= W @ 1 | EMPTY @ 2\n<A> ::= a\n", 1, 21,
     "the count depends on itself (<S> → what <w> wraps → <S>)"),
    ("<S> ::= <w> @auto | a @auto\n<w> ::= W @auto | EMPTY @auto\n", 2, 25,
     "<w>: this alternative holds no algorithm, and <w> wraps none"),
    ("<S> ::= a @ autox | b\n", 1, 13, "unexpected 'autox'; expected a number, auto"),
    ("<S> ::= <r0> @auto | b @auto\n" + "".join(f"<r{i}> ::= <r{i + 1}> | <r{i + 1}>\n" for i in range(1100))
     + "<r1100> ::= a\n", 1, 14, "@auto: this alternative holds more than 1e308 algorithms"),
])
def test_misuse_is_a_grammar_error_at_the_auto(text, line, col, fragment):
    with pytest.raises(GrammarError) as info:
        parse(text)
    found = [d for d in info.value.diagnostics if fragment in d.message]
    assert found, [d.message for d in info.value.diagnostics]
    assert (found[0].location.line, found[0].location.column) == (line, col)
    assert found[0].render().startswith(f"g.bnf:{line}:{col}: error:")


def run(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


def test_check_refuses_misuse_with_exit_code_1(tmp_path):
    path = tmp_path / "bad.bnf"
    path.write_text("<S> ::= BR <slc> @auto | BPNN @auto\n<slc> ::= <slc> J48 @auto | KNN @auto\n")
    code, out, err = run("check", "--grammar", path)
    assert code == 1 and "Traceback" not in err and "internal error" not in err
    assert f"{path}:2:21: error: @auto cannot count the algorithms here" in err


def test_check_rules_prints_each_levels_probabilities():
    code, out, err = run("check", "--grammar", GRAMMARS / "large.bnf", "--rules")
    assert code == 0, err
    assert "  P(outermost algorithm) at each level" in out
    lines = {line.split()[0]: " ".join(line.split()[1:]) for line in out.splitlines() if line.startswith("    <")}
    assert lines["<ALGS-SLC>"] == "28 algorithms, each 1/28"
    assert lines["<Start>"] == "26 algorithms, each 1/26"


def test_ensembles_level_one_is_uniform_over_ensemble_types_not_algorithms():
    levels = dict(describe_selection(load_grammar(GRAMMARS / "ensembles.bnf")))
    assert levels["<Start>"].startswith("15 algorithms: 1/7 each AdaBoostM1, Bagging, RandomCommittee, RandomForest, "
                                        "Stacking, Vote; 1/63 each BayesNet")


# -- bounds --------------------------------------------------------------------------------------------


def test_a_long_chain_and_a_long_row_of_wrappers_neither_recurse_nor_take_long():
    n = 4000  # a chain of rules, each holding the next one (the Python stack holds about 1,000 frames)
    chain = "".join(f"<r{i}> ::= <r{i + 1}> @auto | x{i} @auto\n" for i in range(n)) + f"<r{n}> ::= end\n"
    t0 = time.perf_counter()
    g = parse(chain)
    assert weights(g, "r0") == [n, 1]
    # listing every level's algorithms is quadratic on such a chain: check stops and says so
    assert describe_selection(g)[-1][1].startswith("stopped: more than 200,000 steps")
    assert time.perf_counter() - t0 < 20
    wrappers = 300
    row = "<S> ::= " + " ".join(f"<w{i}>" for i in range(wrappers)) + " <A> @auto | y @auto\n<A> ::= a1 | a2\n"
    row += "".join(f"<w{i}> ::= W{i} @auto | EMPTY @auto\n" for i in range(wrappers))
    t0 = time.perf_counter()
    dist = Selection(parse(row)).rule("S")
    assert len(dist) == wrappers + 3 and max(dist.values()) - min(dist.values()) <= 1e-12
    assert time.perf_counter() - t0 < 10


_HEADS = ["S", "A", "B", "C", "w"]


@st.composite
def auto_grammar(draw) -> str:
    """Mostly well-formed: alternatives led by an algorithm or a later rule, maybe after <h> or the wrapper <w>
    (the only rule with EMPTY), then more items; sometimes recursion, annotations, unweighted alternatives."""
    lines = []
    for k, head in enumerate(_HEADS):
        later = [f"<{h}>" for h in _HEADS[k + 1:-1]] or ["J48"]
        anywhere = st.sampled_from([f"<{h}>" for h in _HEADS])
        lead = st.sampled_from(later + ["J48", "KNN"]) if draw(st.integers(0, 19)) else anywhere
        prefix = st.sampled_from(["", "", "<w> " if head != "w" else "", "<h> ", "[ ASC @auto ] ", "( SM | RSML ) "])
        tail = st.sampled_from(["", "", " <h>", " RANDOM-INT(1, 3)", " <C>", " <w> <C>"])
        alternative = st.tuples(prefix, lead, tail).map("".join)
        alts = draw(st.lists(alternative, min_size=1, max_size=3)) + (["EMPTY"] if head == "w" else [])
        weight = draw(st.sampled_from(["auto"] * 8 + ["mixed", "none"]))
        alts = [a + (" @auto" if weight == "auto" else draw(st.sampled_from([" @auto", " @ 2", ""]))
                     if weight == "mixed" else "") for a in alts]
        annotation = "" if draw(st.integers(0, 19)) else "  #@ type=cat default=#1"
        lines.append(f"<{head}> ::= {' | '.join(alts)}{annotation}\n")
    return "".join(lines) + "<h> ::= 1 | 2  #@ type=int default=1\n"


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(text=auto_grammar())
def test_random_auto_grammars_resolve_or_say_where(text):
    """Whatever the grammar, @auto resolves to positive finite weights or is refused at a file:line:col."""
    try:
        g = parse(text)
    except GrammarError as exc:
        assert all(d.location is not None and d.location.line >= 1 for d in exc.diagnostics if d.severity == "error")
        return
    assert all(0 < a.weight < float("inf") for r in g for a in r.alternatives)
    for _, row in describe_selection(g):
        assert row
    reread = parse(format_grammar(g))  # a written grammar (a species) resolves to the same weights
    assert all(weights(reread, r.name) == weights(g, r.name) for r in g)

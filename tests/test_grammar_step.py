"""``RANDOM-REAL(lo, hi, step=s)``: a grid of reals, as published search spaces print them.

Parsing and printing, the errors (file:line:col), binding, counting, uniform sampling on
the grid, species and phenotype round trips, and the unchanged draws of grammars without
a step. The messages of the option errors are also in ``tests/test_grammar_errors.py``.
"""
from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from ggp_automl.gp.binding import DatasetMeta, real_grid
from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.gp.errors import BindingError, GrammarError
from ggp_automl.gp.expressions import BoundError, Num
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import Sampler
from ggp_automl.gp.phenotype import parse_phenotype
from ggp_automl.gp.policy import ChoiceContext, UniformPolicy, grid_values
from ggp_automl.gp.species import SPECIES, evolved_kinds, make_species, species_text
from ggp_automl.gp.tree import Leaf, Node
from ggp_automl.gp.validity import tree_problems
from .conftest import GRAMMARS

#: The PBIL-Auto-Ens grids: J48 confidence, SMO's RBF gamma, MLP learning rate.
PAPER = """\
<S>  ::= J48 <cf> | SMO <g> | MLP <lr> <m>
<cf> ::= RANDOM-REAL(0.05, 5.0, step=0.05)      #@ type=real default=0.25
<g>  ::= RANDOM-REAL(0.001, 1.0, step=0.001)    #@ type=real default=0.01
<lr> ::= RANDOM-REAL(0.1, 1.0, step=0.1)        #@ type=real default=0.3
<m>  ::= RANDOM-REAL(>0.0, <1.0, step=0.25)     #@ type=real default=0.2
"""
META = DatasetMeta(6, 20, 300)


def grid_of(text: str, rule: str = "a", meta: DatasetMeta | None = None) -> list[float]:
    bound = parse_grammar(text, "g.bnf").bind(meta)
    return bound.grid_of((rule, 0, 0)).values()


def error_at(text: str) -> list[tuple[int, int, str]]:
    with pytest.raises(GrammarError) as info:
        parse_grammar(text, "g.bnf")
    return [(d.location.line, d.location.column, d.message) for d in info.value.diagnostics]


# -- parsing and printing ---------------------------------------------------------------------------------------

def test_a_step_is_parsed_and_printed_back():
    g = parse_grammar(PAPER, "paper.bnf")
    cf = g["cf"].alternatives[0].items[0]
    assert isinstance(cf, Sampler) and cf.step == 0.05 and not cf.log
    assert str(cf) == "RANDOM-REAL(0.05, 5.0, step=0.05)"
    assert str(g["m"].alternatives[0].items[0]) == "RANDOM-REAL(>0.0, <1.0, step=0.25)"
    other = parse_grammar("<g> ::= RANDOM-REAL(0.001, 1.0, step=0.002)\n", "o.bnf")["g"].alternatives[0].items[0]
    assert other != g["g"].alternatives[0].items[0]  # the step is part of the sampler's identity


@pytest.mark.parametrize("written, step", [("step=0.05", 0.05), ("step = 5e-2", 0.05), ("step=.5", 0.5),
                                           ("step=2", 2.0), ("step=1e-3", 0.001)])
def test_a_step_is_a_number_literal(written, step):
    s = parse_grammar(f"<a> ::= RANDOM-REAL(0, 10, {written})\n", "g.bnf")["a"].alternatives[0].items[0]
    assert s.step == step and isinstance(s.step, float)
    assert parse_grammar(f"<a> ::= {s}\n", "g.bnf")["a"].alternatives[0].items[0] == s  # round trip


def test_log_still_works_and_options_are_independent_of_order():
    s = parse_grammar("<a> ::= RANDOM-REAL(0.01, 100.0, log)\n", "g.bnf")["a"].alternatives[0].items[0]
    assert s.log and s.step is None and str(s) == "RANDOM-REAL(0.01, 100.0, log)"
    for options in ("step=0.1, log", "log, step=0.1"):
        [(line, col, message)] = error_at(f"<a> ::= RANDOM-REAL(1, 2, {options})\n")
        assert (line, col) == (1, 27 + options.index("step"))
        assert message == "step and log cannot be combined: a grid's values are evenly spaced, not log-spaced"


def test_a_sampler_cannot_be_built_with_a_wrong_step():
    for kind, log, step in [("int", False, 1.0), ("real", True, 0.1), ("real", False, 0.0), ("real", False, math.inf)]:
        with pytest.raises(ValueError):
            Sampler(kind, Num(1), Num(2), log=log, step=step)


# -- errors --------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("text, line, col, message", [
    ("<a> ::= RANDOM-INT(0, 10, step=2)\n", 1, 27,
     "step is only allowed for RANDOM-REAL; for a grid of integers, list the values as alternatives (10 | 20 | 30)"),
    ("<a> ::= RANDOM-REAL(0, 1, step=0)\n", 1, 32, "step must be a positive finite number, got 0"),
    ("<a> ::= RANDOM-REAL(0, 1, step=-0.5)\n", 1, 32, "step must be a positive finite number, got -0.5"),
    ("<a> ::= RANDOM-REAL(0, 1, step=1e999)\n", 1, 32, "step must be a positive finite number, got 1e999"),
    ("<a> ::= RANDOM-REAL(0, 1, step)\n", 1, 27, "step needs a value: step=NUMBER, e.g. step=0.05"),
    ("<a> ::= RANDOM-REAL(0, 1, step=0.1, step=0.2)\n", 1, 37, "option 'step' is given twice"),
    ("<a> ::= RANDOM-REAL(1, 2, log, log)\n", 1, 32, "option 'log' is given twice"),
    ("<a> ::= RANDOM-REAL(1, 2, log=1)\n", 1, 27, "the option 'log' takes no value; write ', log'"),
    ("<a> ::= RANDOM-REAL(0, 1, stp=0.1)\n", 1, 27,
     "unknown option 'stp' for RANDOM-REAL (did you mean 'step'?); the options are 'log' and 'step=NUMBER'"),
    ("<a> ::= x\n<b> ::= RANDOM-INT(0, 1, lin)\n", 2, 26,
     "unknown option 'lin' for RANDOM-INT; the only option is 'log'"),
    ("<a> ::= RANDOM-REAL(>0, <0.1, step=0.1)\n", 1, 9, "empty grid: no value 0.0 + k·0.1 lies in (0.0, 0.1)"),
    ("<a> ::= RANDOM-REAL(>0, 0.05, step=0.1)\n", 1, 9, "empty grid: no value 0.0 + k·0.1 lies in (0.0, 0.05]"),
    ("<a> ::= RANDOM-REAL(1000, 2000, step=1e-10)\n", 1, 9,
     "the step 1e-10 is too fine for bounds of magnitude 2000: a step must be at least 1e-12 times the larger bound, "
     "so that the grid's values are distinct numbers"),
    ("<a> ::= RANDOM-REAL(0, 1, step=5e-324)\n", 1, 9, "the step 4.94066e-324 is too fine"),
])
def test_option_and_grid_errors_point_at_their_place(text, line, col, message):
    found = error_at(text)
    assert any((l, c) == (line, col) and m.startswith(message) for l, c, m in found), found


def test_a_step_that_is_not_a_number_is_a_syntax_error():
    [(line, col, message)] = error_at("<a> ::= RANDOM-REAL(0, 1, step=L)\n")
    assert (line, col) == (1, 32) and message == "unexpected 'L'; expected '-', a number"


def test_all_option_errors_are_reported_together():
    found = error_at("<a> ::= RANDOM-REAL(0, 1, step=0) | RANDOM-INT(1, 2, step=1, foo)\n")
    assert [(c, m.split(";")[0]) for _, c, m in found] == [
        (32, "step must be a positive finite number, got 0"), (54, "step is only allowed for RANDOM-REAL"),
        (62, "unknown option 'foo' for RANDOM-INT")]


def test_a_default_must_lie_in_the_range_but_not_on_the_grid():
    parse_grammar("<a> ::= RANDOM-REAL(0.05, 5.0, step=0.05)  #@ type=real default=0.27\n", "g.bnf")
    parse_grammar("<a> ::= RANDOM-REAL(0.05, 5.02, step=0.05)  #@ type=real default=5.01\n", "g.bnf")
    [(line, col, message)] = error_at("<a> ::= RANDOM-REAL(0.05, 5.0, step=0.05)  #@ type=real default=7\n")
    assert (line, col) == (1, 44)
    assert message.startswith("<a>: default 7.0 lies outside RANDOM-REAL(0.05, 5.0, step=0.05)")
    [(_, _, message)] = error_at("<a> ::= RANDOM-REAL(>0.0, <1.0, step=0.25)  #@ type=real default=1.0\n")
    assert "default 1.0 lies outside" in message
    parse_grammar("<a> ::= RANDOM-REAL(0.05, 5.0, step=0.05)  #@ type=real default=7 sentinel\n", "g.bnf")


# -- binding ------------------------------------------------------------------------------------------------------

def test_a_dataset_dependent_grid_is_checked_when_bound():
    g = parse_grammar("<a> ::= x RANDOM-REAL(>0, <L/10, step=0.1)\n", "g.bnf")
    assert g.bind(DatasetMeta(6, 5, 10)).grid_of(("a", 0, 1)).values() == [0.1, 0.2, 0.3, 0.4, 0.5]
    with pytest.raises(BindingError) as info:
        g.bind(DatasetMeta(1, 5, 10))  # (0, 0.1): no grid point strictly inside
    [d] = info.value.diagnostics
    assert (d.location.line, d.location.column) == (1, 11)
    assert d.message == "<a>: empty grid: no value 0.0 + k·0.1 lies in (0.0, 0.1) (on dataset L=1, M=5, N=10)"


def test_a_step_too_fine_for_a_dataset_is_a_binding_error():
    g = parse_grammar("<a> ::= x RANDOM-REAL(0, N, step=0.000001)\n", "g.bnf")
    assert len(g.bind(DatasetMeta(2, 3, 1000)).grid_of(("a", 0, 1))) == 1_000_000_001
    with pytest.raises(BindingError, match="too fine for bounds of magnitude 1e\\+07.*on dataset"):
        g.bind(DatasetMeta(2, 3, 10 ** 7))


# -- the grid's values --------------------------------------------------------------------------------------------

def test_the_values_print_cleanly_and_the_tolerance_keeps_the_end_point():
    assert grid_of("<a> ::= RANDOM-REAL(0.1, 1.0, step=0.1)\n") == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    cf = grid_of("<a> ::= RANDOM-REAL(0.05, 5.0, step=0.05)\n")
    assert len(cf) == 100 and cf[:3] == [0.05, 0.1, 0.15] and cf[-1] == 5.0
    assert [repr(v) for v in cf] == [repr(round(k * 0.05, 2)) for k in range(1, 101)]  # 0.15, not 0.15000000000000002
    gamma = grid_of("<a> ::= RANDOM-REAL(0.001, 1.0, step=0.001)\n")
    assert len(gamma) == 1000 and all(len(repr(v)) <= 5 for v in gamma) and gamma[-1] == 1.0
    assert grid_of("<a> ::= RANDOM-REAL(-1, 1, step=0.25)\n") == [-1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0]
    assert grid_of("<a> ::= RANDOM-REAL(0, 1, step=0.3)\n") == [0.0, 0.3, 0.6, 0.9]  # hi off the grid
    assert grid_of("<a> ::= RANDOM-REAL(2, 2, step=0.5)\n") == [2.0]
    assert grid_of("<a> ::= RANDOM-REAL(0, 1, step=7)\n") == [0.0]  # a step wider than the range


def test_open_bounds_drop_the_end_points():
    assert grid_of("<a> ::= RANDOM-REAL(>0.1, <1.0, step=0.1)\n") == [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]
    assert grid_of("<a> ::= RANDOM-REAL(>0.0, 1.0, step=0.25)\n") == [0.25, 0.5, 0.75, 1.0]
    assert grid_of("<a> ::= RANDOM-REAL(0.0, <1.0, step=0.25)\n") == [0.0, 0.25, 0.5, 0.75]
    assert grid_of("<a> ::= RANDOM-REAL(0.0, <0.9, step=0.25)\n") == [0.0, 0.25, 0.5, 0.75]  # 0.9 is no grid point


def test_a_grid_point_just_beyond_hi_is_hi():
    # 0.7 - 0.4 = 0.29999999999999993: the point 0.3 lies 7e-17 beyond it and counts, as hi itself.
    assert grid_of("<a> ::= RANDOM-REAL(0, 0.7 - 0.4, step=0.1)\n") == [0.0, 0.1, 0.2, 0.7 - 0.4]
    assert grid_of("<a> ::= RANDOM-REAL(0, <0.7 - 0.4, step=0.1)\n") == [0.0, 0.1, 0.2]


def test_real_grid_refuses_what_binding_refuses():
    with pytest.raises(BoundError, match="positive finite"):
        real_grid(0, 1, False, False, 0.0)
    assert len(real_grid(0, 1, False, False, 0.1)) == 11 and real_grid(-0.0, 1, False, False, 0.5).value(0) == 0.0


# -- counting -----------------------------------------------------------------------------------------------------

def test_a_grid_counts_its_values():
    g = parse_grammar(PAPER, "paper.bnf")
    assert g.analysis.configurations(None, "cf") == 100
    assert g.analysis.configurations(None, "g") == 1000
    assert g.analysis.configurations(None, "lr") == 10
    assert g.analysis.configurations(None, "m") == 3
    assert g.analysis.configurations() == 100 + 1000 + 10 * 3
    assert g.analysis.combinations == 3
    plain = parse_grammar("<a> ::= RANDOM-REAL(0.05, 5.0)  #@ type=real default=1\n", "g.bnf")
    assert plain.analysis.configurations() == 100  # without a step: 100 values, as before


def test_a_dataset_dependent_grid_counts_per_dataset():
    g = parse_grammar("<a> ::= x RANDOM-REAL(0, L, step=0.5)\n", "g.bnf")
    assert g.analysis.configurations(DatasetMeta(2, 1, 1)) == 5
    assert g.analysis.configurations(DatasetMeta(14, 1, 1)) == 29


# -- sampling -----------------------------------------------------------------------------------------------------

def draws(text: str, n: int, seed: int = 0, rule: str = "a") -> Counter:
    bound = parse_grammar(text, "g.bnf").bind(None)
    gen = TreeGenerator(bound)
    rng = np.random.default_rng(seed)
    out: Counter = Counter()
    for _ in range(n):
        tree = gen.grow(rng)
        assert not tree_problems(tree, bound)
        out[tree.children[0].value] += 1
    return out


@pytest.mark.parametrize("text, values", [
    ("<a> ::= RANDOM-REAL(0.1, 1.0, step=0.1)\n", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
    ("<a> ::= RANDOM-REAL(>0.1, <1.0, step=0.1)\n", [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]),
    ("<a> ::= RANDOM-REAL(>-1, 1, step=0.5)\n", [-0.5, 0.0, 0.5, 1.0]),
    ("<a> ::= RANDOM-REAL(3, 3, step=0.5)\n", [3.0]),
])
def test_uniform_draws_reach_every_grid_value_and_nothing_else(text, values):
    counts = draws(text, 400 * len(values))
    assert sorted(counts) == values
    assert all(isinstance(v, float) for v in counts)
    assert min(counts.values()) > 300  # about 400 each


def test_a_thousand_value_grid_is_sampled_on_the_grid():
    counts = draws("<a> ::= RANDOM-REAL(0.001, 1.0, step=0.001)\n", 20_000, seed=4)
    grid = set(grid_of("<a> ::= RANDOM-REAL(0.001, 1.0, step=0.001)\n"))
    assert set(counts) <= grid and len(counts) > 990  # 20 draws a value: ~0 unseen
    assert all(len(repr(v)) <= 5 for v in counts)


def test_the_uniform_policy_draws_the_grid_with_rng_only():
    policy, ctx = UniformPolicy(), ChoiceContext("a", (), 0, 0)
    a = [policy.sample_real(ctx, 0.05, 5.0, False, False, False, np.random.default_rng(9), step=0.05)
         for _ in range(3)]
    rng = np.random.default_rng(9)
    b = [policy.sample_real(ctx, 0.05, 5.0, False, False, False, rng, step=0.05) for _ in range(3)]
    assert a == [a[0]] * 3 and b[0] == a[0] and len(set(b)) > 1


def test_grid_values_lists_what_the_policy_may_return():
    assert grid_values(0.1, 1.0, 0.1, True, True) == (0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
    assert grid_values(0.05, 5.0, 0.05) == tuple(real_grid(0.05, 5.0, False, False, 0.05).values())


class _Naive(UniformPolicy):
    """Draws like a policy that computes ``lo + k·step`` in floats, or any number in the range."""

    def __init__(self, continuous: bool):
        self.continuous = continuous

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        if step is None or self.continuous:
            return float(rng.uniform(lo, hi))
        return lo + int(rng.integers(0, round((hi - lo) / step), endpoint=True)) * step


@pytest.mark.parametrize("continuous", [False, True])
def test_the_generator_keeps_any_policy_on_the_grid(continuous):
    bound = parse_grammar("<a> ::= RANDOM-REAL(0.05, 5.0, step=0.05)\n", "g.bnf").bind(None)
    gen, rng = TreeGenerator(bound, _Naive(continuous)), np.random.default_rng(1)
    grid = set(bound.grid_of(("a", 0, 0)).values())
    values = [gen.grow(rng).children[0].value for _ in range(500)]
    assert set(values) <= grid and len(set(values)) > 90
    assert bound.grid_of(("a", 0, 0)).nearest(0.174) == 0.15 and bound.grid_of(("a", 0, 0)).nearest(9.0) == 5.0


def test_grammars_without_a_step_draw_as_before():
    """The phenotypes documented in grammars/README.md, drawn before grids existed."""
    demo = ("<Start>  ::= [ Bagging <nb> ] <clf> @ 3\n           | \"ZeroR\" @ 1\n"
            "<clf>    ::= KNN <k> ( uniform | distance )\n           | SVC <C>\n"
            "<k>      ::= RANDOM-INT(1, max(1, floor(sqrt(N))))    #@ type=int default=5\n"
            "<C>      ::= RANDOM-REAL(0.01, 100.0, log)             #@ type=real default=1.0\n"
            "<nb>     ::= 10 | 50 | 100\n#@ type=int default=10\n")
    gen, rng = TreeGenerator(parse_grammar(demo, "demo.bnf").bind(META)), np.random.default_rng(3)
    assert [gen.grow(rng).phenotype for _ in range(4)] == [
        "Bagging 100 SVC 0.023796581282805415", "Bagging 10 SVC 0.02848971335587145", "KNN 12 distance", "ZeroR"]
    gen, rng = TreeGenerator(load_grammar(GRAMMARS / "small.bnf").bind(META)), np.random.default_rng(1)
    assert [gen.grow(rng).phenotype for _ in range(2)] == [
        "RAkEL 2 1 4 5 JRip 2.6933057958903026 up 4 PCut1", "LC JRip 4.153714813713617 cer up 3 PCut1"]


# -- phenotypes and validity --------------------------------------------------------------------------------------

def test_phenotypes_of_grid_trees_parse_back():
    bound = parse_grammar(PAPER, "paper.bnf").bind(None)
    gen, rng = TreeGenerator(bound), np.random.default_rng(2)
    for _ in range(300):
        tree = gen.grow(rng)
        assert parse_phenotype(tree.phenotype, bound) == tree, tree.phenotype


@pytest.mark.parametrize("phenotype, ok", [
    ("J48 0.15", True), ("J48 5.0", True), ("J48 0.05", True), ("J48 5", True),
    ("J48 0.15000000000000002", True),   # 0.05 + 2 * 0.05 in floats: within 1e-9 of a step
    ("J48 0.17", False), ("J48 0.0", False), ("J48 5.05", False), ("J48 0.150001", False),
    ("MLP 0.3 0.25", True), ("MLP 0.3 0.0", False), ("MLP 0.3 1.0", False), ("MLP 0.35 0.5", False),
    ("MLP 1.0000000000000002 0.5", False),  # beyond the closed bound: refused, even within the tolerance
])
def test_phenotypes_must_use_grid_values(phenotype, ok):
    bound = parse_grammar(PAPER, "paper.bnf").bind(None)
    if ok:
        tree = parse_phenotype(phenotype, bound)
        assert not tree_problems(tree, bound)
    else:
        with pytest.raises(ValueError, match="is not derivable"):
            parse_phenotype(phenotype, bound)


def test_an_off_grid_value_is_a_tree_problem():
    bound = parse_grammar(PAPER, "paper.bnf").bind(None)
    tree = Node("S", 0, (Leaf("J48"), Node("cf", 0, (Leaf(0.17),))))
    [problem] = tree_problems(tree, bound)
    assert problem == "1.0: 0.17 is not a value of RANDOM-REAL(0.05, 5.0, step=0.05) (= [0.05, 5] in steps of 0.05)"


# -- species ------------------------------------------------------------------------------------------------------

def test_species_keep_the_step_or_fix_the_default():
    g = parse_grammar(PAPER, "paper.bnf")
    for s in SPECIES:
        sp = make_species(g, s)
        text = species_text(g, s)
        if "real" in evolved_kinds(s):
            assert "<cf> ::= RANDOM-REAL(0.05, 5.0, step=0.05)" in text
            assert sp["cf"].alternatives == g["cf"].alternatives
            assert sp.analysis.configurations() == g.analysis.configurations()
        else:
            assert "<cf> ::= 0.25  #@ type=real default=0.25" in text and "step=" not in text
        assert species_text(sp, s).split("\n", 3)[3] == text.split("\n", 3)[3]  # written back identically


def test_a_species_tree_of_grid_values_is_valid_in_the_species():
    sp = make_species(parse_grammar(PAPER, "paper.bnf"), 4)
    bound = sp.bind(None)
    gen, rng = TreeGenerator(bound), np.random.default_rng(0)
    for _ in range(50):
        tree = gen.grow(rng)
        assert not tree_problems(tree, bound) and parse_phenotype(tree.phenotype, bound) == tree

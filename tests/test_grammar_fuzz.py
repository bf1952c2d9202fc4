"""Property test: a mutated grammar file gives a clean GrammarError or a usable grammar.

Never another exception: bad user input must not produce a traceback.
"""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ggp_automl.gp.binding import DatasetMeta
from ggp_automl.gp.bnf_parser import parse_grammar
from ggp_automl.gp.errors import GrammarError
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.species import make_species
from .conftest import GRAMMARS
from .test_hostile_grammars import mutate  # one mutation rule for both fuzzers

TOY = """\
<Start> ::= <A> [ <flag> ] ( x | y @ 2 ) <n> <pred>
<A>     ::= alg1 <r> | alg2 | EMPTY @ 0.5
<flag>  ::= f | EMPTY                       #@ type=bool default=EMPTY
<r>     ::= RANDOM-REAL(>0.0, <1.0)        #@ type=real default=0.5
<n>     ::= RANDOM-INT(1, floor(sqrt(L)) + 1)   #@ type=int default=0 sentinel
<pred>  ::= PCut1 | <t>                    #@ type=cat default=#1
<t>     ::= RANDOM-REAL(0.001, min(M, 10), log)  #@ type=real default=0.5
"""
BASES = [TOY, (GRAMMARS / "small.bnf").read_text()]
PIECES = ["<", ">", "|", "(", ")", "[", "]", "#@", "@", "::=", '"', "EMPTY", "RANDOM-INT(", "RANDOM-REAL(",
          ",", "L", "Q", "-", "0", "1e9", "\n", " ", "type=int", "type=cat", "default=#9", "default=", "sentinel",
          "<A>", "<Start>", "<zz>", "sqrt(", "/", "*", "log", ">0", "<1", "@ -1", "\t", "ü", "\\"]

mutation = st.one_of(
    st.tuples(st.just("delete"), st.floats(0, 1), st.integers(1, 12)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.sampled_from(PIECES)),
    st.tuples(st.just("insert"), st.floats(0, 1), st.text(max_size=4)),
    st.tuples(st.just("dupline"), st.floats(0, 1), st.just(0)),
    st.tuples(st.just("swaplines"), st.floats(0, 1), st.floats(0, 1)),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(base=st.sampled_from(BASES), ops=st.lists(mutation, min_size=1, max_size=4), seed=st.integers(0, 99))
def test_mutated_grammars_fail_cleanly_or_work(base, ops, seed):
    text = mutate(base, ops)
    try:
        grammar = parse_grammar(text, "fuzz.bnf")
        analysis = grammar.analysis
        for meta in (DatasetMeta(6, 20, 100), DatasetMeta(1, 1, 1)):
            analysis.summary(meta)
            bound = grammar.bind(meta)
            gen = TreeGenerator(bound)
            limit = max(analysis.min_depth[grammar.start], 12)
            gen.ramped_half_and_half(4, np.random.default_rng(seed), max_depth=limit)
        for s in (1, 4, 8):
            make_species(grammar, s)
    except GrammarError as exc:
        assert exc.diagnostics
        for d in exc.diagnostics:  # every message points into the file (species files are named fuzz-s.bnf)
            assert d.location is not None and d.location.file.startswith("fuzz"), d.render()
            assert d.location.line >= 1 and d.location.column >= 1

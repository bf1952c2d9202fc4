"""Builders and grammars agree on every default (issue 14: one source for defaults).

A hyper-parameter's default is written once, in its grammar's ``#@ default=`` annotation;
builders read it through :class:`spaces.params.Params` and write none of their own. What is
left that could still disagree with a grammar is checked here:

* a builder's own reading of an absent rule — the gates it reads with ``p.has`` (``u``,
  ``rep``, ``coob``, ``LEAD``, the SMO kernels) and its meaning for EMPTY (``wk``, ``dw``) —
  against the tree of species 1, which carries every hyper-parameter at its literal default:
  both must build the same estimator;
* a shipped builder that passes its own default for a rule a grammar annotates, or reads a
  rule no reference grammar annotates (at run time that is an error naming rule and algorithm);
* two shipped grammars that annotate one rule with different defaults: the tree's grammar wins,
  but a builder called without a grammar gets the reference grammars' value, so every such
  conflict must be listed (and explained) in :data:`KNOWN_CONFLICTS`.

Each check is a function returning its findings, so the last tests can show that a changed
grammar default is caught.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import numpy as np
import pytest

from ggp_automl.gp.binding import BoundGrammar, DatasetMeta
from ggp_automl.gp.bnf_parser import load_grammar, parse_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import Grammar, NonTerminal, Terminal
from ggp_automl.gp.species import make_species
from ggp_automl.gp.tree import Leaf, Node
from ggp_automl.spaces.compiler import algorithm_chain, compile_tree
from ggp_automl.spaces.params import REFERENCE_GRAMMARS, Params, UnknownHyperParameter, grammar_defaults, reference_defaults
from ggp_automl.spaces.registry import load_all

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("small.bnf", "medium.bnf", "large.bnf", "ensembles.bnf")
REGISTRY = load_all()

#: (grammar, rule) whose default differs from the reference grammars' (large.bnf, then
#: ensembles.bnf), with why. A tree of that grammar gets its own grammar's default.
KNOWN_CONFLICTS = {
    ("ensembles.bnf", "ulo"): "WEKA's PolyKernel default (lower-order terms off) in PBIL-Auto-Ens; the Auto-MEKA "
                              "spaces keep App. A's 'ulo present' (decision 9). Only an ensembles tree with a "
                              "Puk/RBF kernel omits <ulo>, where lower_order has no effect.",
    ("ensembles.bnf", "kernel"): "its default alternative '<poly_kernel> <exp> <ulo>' holds <ulo> (above)",
}

#: the Params methods that read a rule by name
READS = ("int", "real", "cat", "flag", "seed", "default")


@functools.cache
def shipped(name: str) -> Grammar:
    return load_grammar(ROOT / "grammars" / name)


@functools.cache
def species_one(grammar: Grammar) -> Grammar:
    return make_species(grammar, 1)


def base_for(kind: str | None):
    """The same small base for both builds of a meta algorithm (its parameters then compare equal)."""
    slc = REGISTRY["ZeroR"].build(Params("ZeroR"))
    return {None: (), "slc": (slc,), "mlc": (REGISTRY["BR"].build(Params("BR"), slc),)}[kind]


def params_of(value):
    """get_params, recursively: estimators (and lists of them) by their own parameters."""
    if hasattr(value, "get_params") and not isinstance(value, type):
        return type(value).__name__, {k: params_of(v) for k, v in value.get_params(deep=False).items()}
    if isinstance(value, (list, tuple)):
        return tuple(params_of(v) for v in value)
    return value


def algorithm_sites(grammar: Grammar) -> list[tuple[str, str, int]]:
    """(algorithm, rule, alternative) for every alternative that names a registered algorithm."""
    sites = []
    for rule in grammar:
        if rule.kind != "alg":
            continue
        for a, alt in enumerate(rule.alternatives):
            names = [i.text for i in alt.items if isinstance(i, Terminal) and i.text in REGISTRY]
            if names:
                sites.append((names[0], rule.name, a))
    return sites


def default_node(grammar: Grammar, rule: str, alt: int, rng) -> Node:
    """The node of ``rule`` that takes alternative ``alt``; its sub-rules derived in ``grammar``
    (a species-1 grammar: every hyper-parameter has its default as the only alternative)."""
    generator = TreeGenerator(BoundGrammar(grammar, DatasetMeta(6, 20, 300)))
    children = []
    for item in grammar[rule].alternatives[alt].items:
        if isinstance(item, Terminal):
            children.append(Leaf(item.text))
        elif isinstance(item, NonTerminal):
            children.append(generator.grow(rng, symbol=item.name))
        else:
            raise AssertionError(f"<{rule}> samples a value outside any hyper-parameter rule")
    return Node(rule, alt, tuple(children))


def builder_grammar_mismatches(grammar: Grammar) -> list[str]:
    """Algorithms of ``grammar`` whose estimator differs between a tree at the species-1 defaults
    and a Params in which every hyper-parameter is absent (read at the grammar's defaults)."""
    species = species_one(grammar)
    defaults = grammar_defaults(grammar)
    rng = np.random.default_rng(0)
    found = []
    for name, rule, alt in algorithm_sites(species):
        steps, _ = algorithm_chain(default_node(species, rule, alt, rng), species, random_state=5)
        assert steps[0].spec.name == name
        spec = REGISTRY[name]
        base = base_for(spec.base_kind)
        at_defaults = params_of(spec.build(steps[0].params, *base))
        absent = params_of(spec.build(Params(name, tokens=(name,), random_state=5, defaults=defaults), *base))
        if at_defaults != absent:
            keys = sorted(k for k in at_defaults[1] if at_defaults[1][k] != absent[1].get(k))
            found.append(f"{name} (<{rule}> of {Path(grammar.path).name}): {keys} differ: species 1 "
                         f"{[at_defaults[1][k] for k in keys]}, rules absent {[absent[1].get(k) for k in keys]}")
    return found


def reference_conflicts(grammar: Grammar) -> set[tuple[str, str]]:
    """(grammar, rule) whose annotated default differs from the reference grammars' default."""
    reference = reference_defaults()
    name = Path(grammar.path).name
    return {(name, rule) for rule, tokens in grammar_defaults(grammar).items()
            if rule in reference and reference[rule] != tokens}


def builder_reads() -> list[tuple[str, int, str, str, bool]]:
    """(file, line, method, rule, explicit default?) of every ``p.<read>("rule", …)`` in the builder modules."""
    found = []
    for path in sorted((ROOT / "spaces").glob("[sm]lc/*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in READS and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "p"):
                continue
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            first = node.args[0] if node.args else None
            assert isinstance(first, ast.Constant) and isinstance(first.value, str), \
                f"{where}: p.{node.func.attr} reads a computed rule name, which this test cannot check"
            explicit = len(node.args) > 1 or any(k.arg == "default" for k in node.keywords)
            found.append((where, node.lineno, node.func.attr, first.value, explicit))
    return found


# ------------------------------------------------------------------------------------ tests
@pytest.mark.parametrize("name", SHIPPED)
def test_builders_read_absent_rules_as_their_grammars_defaults(name):
    assert builder_grammar_mismatches(shipped(name)) == []


@pytest.mark.parametrize("name", SHIPPED)
def test_every_algorithm_of_the_grammar_is_checked(name):
    checked = {site[0] for site in algorithm_sites(species_one(shipped(name)))}
    grammar_terminals = {i.text for r in shipped(name) for a in r.alternatives for i in a.items
                         if isinstance(i, Terminal) and i.text in REGISTRY}
    assert checked == grammar_terminals and len(checked) >= 10


def test_shipped_grammars_agree_on_defaults_except_the_known_conflicts():
    conflicts = set().union(*(reference_conflicts(shipped(name)) for name in SHIPPED))
    assert conflicts == set(KNOWN_CONFLICTS)


def test_builders_read_only_annotated_rules_and_pass_no_default_of_their_own():
    reads = builder_reads()
    assert len(reads) > 80 and {r[3] for r in reads} >= {"nt", "cf_c45", "ulo", "s_st", "i_metamlc"}
    annotated = set().union(*(grammar_defaults(shipped(name)) for name in SHIPPED))
    unknown = [f"{where}: p.{method}({rule!r})" for where, _, method, rule, _ in reads
               if rule not in reference_defaults()]
    assert unknown == [], "rules no reference grammar annotates"
    duplicated = [f"{where}: p.{method}({rule!r}, …)" for where, _, method, rule, explicit in reads
                  if explicit and rule in annotated]
    assert duplicated == [], "a second copy of a grammar default: drop the builder's default"


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_every_algorithm_builds_without_a_grammar(name):
    """``Params(name)`` (showcase, Stacking's B member, tests) reads the reference grammars' defaults."""
    spec = REGISTRY[name]
    spec.build(Params(name, tokens=(name,)), *base_for(spec.base_kind))


def test_an_unknown_rule_is_an_error_naming_rule_and_algorithm():
    p = Params("RandomForest", origin="<RandomForest> in mine.bnf:3:1")
    for read in (p.int, p.real, p.cat, p.flag, p.default):
        with pytest.raises(UnknownHyperParameter, match=r"RandomForest .*mine\.bnf:3:1.*<n_trees>"):
            read("n_trees")
    assert p.seed("n_trees") == p.random_state  # an algorithm without a seed rule is seeded by the run


def test_defaults_come_from_the_trees_grammar_then_the_reference_grammars():
    grammar = parse_grammar("<Start> ::= RandomForest <md_rf> <more>\n"
                            "<more> ::= <nt> | EMPTY\n"
                            "<nt> ::= RANDOM-INT(2, 10)     #@ type=int default=7\n"
                            "<md_rf> ::= RANDOM-INT(1, 5)   #@ type=int default=3\n", "mine.bnf")
    tree = Node("Start", 0, (Leaf("RandomForest"), Node("md_rf", 0, (Leaf(4),)), Node("more", 1, ())))
    (step,), _ = algorithm_chain(tree, grammar)
    rf = step.spec.build(step.params)
    assert (rf.n_estimators, rf.max_depth) == (7, 4)           # <nt> absent: this grammar's default, not 100
    assert rf.n_features == int(reference_defaults()["nf_rf"][0])  # not in this grammar: large.bnf's
    assert compile_tree(tree, grammar).estimator.n_estimators == 7


def test_hash_k_defaults_expand_to_the_leaves_of_a_species_tree():
    large = grammar_defaults(shipped("large.bnf"))
    assert large["w"] == ("-1", 1)                      # '0 1 | -1 <d>' default #2, <d> at 1
    assert large["part_prune"] == ("ebp",)
    assert large["coob"] == (100,) and large["c45_prune"] == (0.25,)
    assert large["kernel"] == ("PolyKernel", 1.0, "ulo")
    assert large["nt"] == (100,) and large["cf_c45"] == (0.25,) and large["wk"] == ()
    assert REFERENCE_GRAMMARS[0] == "large.bnf"


def test_an_explicit_default_is_still_honoured_for_user_builders():
    p = Params("Mine", values={"nt": (12,), "dw": ()})
    assert p.int("nt", 5) == 12 and p.int("absent", 5) == 5 and p.real("absent", 0.5) == 0.5
    assert p.cat("dw", "I") == "I" and p.cat("dw") is None and p.cat("absent", "x") == "x"


# ---------------------------------------------------- the checks catch a changed default
def edited(name: str, old: str, new: str, tmp_path: Path) -> Grammar:
    text = (ROOT / "grammars" / name).read_text(encoding="utf-8")
    assert text.count(old) == 1
    path = tmp_path / name
    path.write_text(text.replace(old, new), encoding="utf-8")
    return load_grammar(path)


def test_a_gate_default_the_builder_does_not_follow_is_caught(tmp_path):
    # J48 reads its pruning gate with p.has("u"): absent means pruned, which must be the default
    gate = "<c45_prune>    ::= <cf_c45> <sr> | u                             #@ type=bool default="
    grammar = edited("ensembles.bnf", gate + "#1", gate + "#2", tmp_path)
    (mismatch,) = builder_grammar_mismatches(grammar)
    assert mismatch.startswith("J48") and "unpruned" in mismatch


def test_a_grammar_default_that_leaves_the_others_is_caught(tmp_path):
    grammar = edited("medium.bnf", "RANDOM-INT(2, 256)                            #@ type=int default=100",
                     "RANDOM-INT(2, 256)                            #@ type=int default=50", tmp_path)
    assert {rule for _, rule in reference_conflicts(grammar)} == {"nt"}

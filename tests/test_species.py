"""Species grammars: generated from annotations, up to date, varying only their kinds."""
from __future__ import annotations

import numpy as np
import pytest

from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import Sampler
from ggp_automl.gp.species import SPECIES, evolved_kinds, make_species, species_path, species_text
from .conftest import GRAMMARS, SPACES, YEAST


@pytest.mark.parametrize("space", SPACES + ("ensembles",))
def test_shipped_species_files_are_up_to_date(grammars, space):
    """Fails when a grammar was edited without `python cli.py species --grammar …`."""
    grammar = grammars[space] if space in grammars else load_grammar(GRAMMARS / f"{space}.bnf")
    for s in SPECIES:
        path = species_path(grammar, s, GRAMMARS / "species")
        assert path.exists(), f"{path} missing: run python cli.py species --grammar grammars/{space}.bnf"
        assert path.read_text() == species_text(grammar, s), (
            f"{path} is out of date: run python cli.py species --grammar grammars/{space}.bnf")
        load_grammar(path)  # and it parses


@pytest.mark.parametrize("space", SPACES)
@pytest.mark.parametrize("species", sorted(SPECIES))
def test_species_vary_only_their_allowed_kinds(grammars, space, species):
    full = grammars[space]
    sp = make_species(full, species)
    kinds = evolved_kinds(species)
    for rule in sp:
        original = full[rule.name]
        if rule.kind in kinds or (rule.kind == "bool" and "cat" in kinds):
            assert rule.alternatives == original.alternatives, rule.name
        else:  # fixed: one alternative, no sampled number
            assert len(rule.alternatives) == 1, rule.name
            assert not any(isinstance(i, Sampler) for i in rule.alternatives[0].items), rule.name
    # every algorithm is still available
    assert sp.analysis.combinations == full.analysis.combinations
    # trees: every node of a non-evolved kind shows its default
    gen = TreeGenerator(sp.bind(YEAST))
    rng = np.random.default_rng(species)
    for _ in range(200):
        for _, node in gen.grow(rng).nodes():
            rule = sp[node.rule]
            if rule.kind not in kinds:
                assert len(rule.alternatives) == 1


def test_species_8_is_the_full_grammar(grammars):
    for space in SPACES:
        full, sp = grammars[space], make_species(grammars[space], 8)
        assert [r.name for r in sp] == [r.name for r in full]
        assert all(sp[r.name].alternatives == r.alternatives for r in full)


def test_species_1_fixes_values_to_their_defaults(grammars):
    sp = make_species(grammars["large"], 1)
    tree = TreeGenerator(sp.bind(YEAST)).grow(np.random.default_rng(0))
    assert all(isinstance(leaf.value, str) for leaf in tree.leaves())  # no sampled numbers left
    assert sp["nf_rf"].alternatives[0].text == "0"  # RF: sentinel 0 = int(log2(M) + 1)
    assert sp["pred_tshd"].alternatives[0].text == "PCut1"


def test_species_fix_gates_to_their_default_alternative(grammars):
    sp4 = make_species(grammars["large"], 4)  # reals only: C4.5 keeps the pruned branch, cf still evolves
    gate = sp4["c45_prune"]
    assert len(gate.alternatives) == 1 and "<cf_c45>" in gate.alternatives[0].text
    assert len(sp4["cf_c45"].alternatives[0].items) == 1
    assert isinstance(sp4["cf_c45"].alternatives[0].items[0], Sampler)


def test_species_cli_writes_eight_files(tmp_path):
    from ggp_automl.cli import main

    assert main(["species", "--grammar", str(GRAMMARS / "small.bnf"), "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"small-{s}.bnf" for s in range(1, 9)]

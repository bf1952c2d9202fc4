"""spGGP with species of one's own (``--species 1,8,FILE.bnf``): a species file evolves beside the generated
species, labelled by its name; a file the run's grammar cannot cross with is refused before the run with
``file:line:col``; the run resumes from anywhere and refuses a changed file; the CLI, RunConfig and the
Python API take the same species."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ggp_automl.cli import build_parser, main
from ggp_automl.search.run import search
from ggp_automl.search.options import run_config as _run_config, species_list as _species

from .conftest import run_config
from ggp_automl.gp.bnf_parser import load_grammar
from ggp_automl.gp.phenotype import all_parses
from ggp_automl.search import RunConfig, RunError, resume, start
from ggp_automl.search.run import default_dataset
from ggp_automl.search.rundir import RunDirectory
from ggp_automl.gp.validity import tree_problems

from .conftest import GRAMMARS, ROOT
from .test_search import FakeEngine, Killed, _loop, data, fake_world  # noqa: F401 - fixtures

LARGE = GRAMMARS / "large.bnf"
TREES = GRAMMARS / "species" / "large-trees.bnf"
TREE_LEARNERS = {"J48", "RandomForest", "RandomTree", "REPTree", "DecisionStump"}


@pytest.fixture(scope="module")
def large():
    return load_grammar(LARGE)


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- the shipped example ---------------------------------------------------------------------------------------

def test_the_shipped_example_is_a_real_restriction_of_large(large):
    trees = load_grammar(TREES)
    assert trees.start == large.start and all(rule.name in large for rule in trees)
    assert len(trees) < len(large) / 4
    assert "hand-written" in TREES.read_text().lower()
    assert trees.analysis.combinations < large.analysis.combinations
    from ggp_automl.gp.generate import TreeGenerator
    from ggp_automl.search.loop import algorithms

    generator = TreeGenerator(trees.bind(default_dataset().meta))
    rng = np.random.default_rng(0)
    for _ in range(50):  # one tree learner under one plain problem transformation
        used = algorithms(generator.grow(rng).phenotype)
        assert len(used & TREE_LEARNERS) == 1 and len(used) == 2


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_a_species_file_evolves_beside_a_generated_species(tmp_path):
    """A real run of a few seconds: the file's candidates are evaluated, labelled by its name."""
    out = tmp_path / "run"
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--grammar", "grammars/large.bnf",
                        "--method", "spggp", "--species", "grammars/species/large-trees.bnf,1", "--population", "4",
                        "--budget", "6s", "--eval-timeout", "3s", "--screening", "off", "--workers", "1", "--mode",
                        "async", "--seed", "2", "--quiet", "--out", str(out)],
                       capture_output=True, text=True, cwd=ROOT, timeout=180)
    assert r.returncode == 0, r.stdout + r.stderr
    config = json.loads((out / "config.json").read_text())
    assert config["config"]["method_params"]["species"] == [str(TREES), 1]  # resolved against the directory it started in
    assert list(config["species_sha256"]) == [str(TREES)]
    search = [e for e in _records(out / "evaluations.jsonl") if e["phase"] == "search"]
    assert {e["species"] for e in search} <= {1, "large-trees"}
    own = [e for e in search if e["species"] == "large-trees"]
    assert own, search
    bound = load_grammar(TREES).bind(_meta())
    first = own[:2]  # the species' initial population: derivations of the file itself
    assert all(all_parses(e["phenotype"], bound) for e in first), first
    r = subprocess.run([sys.executable, str(ROOT / "cli.py"), "inspect", str(out)], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert r.returncode == 0 and "large-trees" in r.stdout, r.stdout + r.stderr


def _meta():
    return default_dataset().meta


def test_without_inter_species_crossover_every_tree_stays_in_the_file(large, data):  # noqa: F811
    config = run_config(method="spggp", species=(8, str(TREES)), species_size=4, inter_species_rate=0.0,
                       mutation_rate=0.5, max_generations=5, budget_seconds=3600, mode="generational", seed=4)
    loop = _loop(config, large, data, FakeEngine())
    search(loop)
    method = loop.state.method
    assert method.species == [8, "large-trees"]
    bound = load_grammar(TREES).bind(data.train.meta)
    pool = method.populations["large-trees"]
    assert len(pool) == 4 and all(i.species == "large-trees" for i in pool)
    assert all(tree_problems(i.tree, bound, config.max_depth) == [] for i in pool)
    assert set(method.stats()["species"]) == {"8", "large-trees"}


def test_inter_species_crossover_mixes_the_file_with_the_others(large, data):  # noqa: F811
    config = run_config(method="spggp", species=(1, str(TREES)), species_size=6, inter_species_rate=1.0,
                       crossover_rate=1.0, max_generations=6, budget_seconds=3600, mode="generational", seed=1)
    loop = _loop(config, large, data, FakeEngine())
    asked = []
    ask = loop.state.method.ask

    def spy(rng):
        batch = ask(rng)
        asked.extend(batch)
        return batch

    loop.state.method.ask = spy
    search(loop)
    from ggp_automl.search.loop import algorithms

    used = {a for i in asked if i.species == "large-trees" for a in algorithms(i.phenotype)}
    assert used - TREE_LEARNERS - {"BR", "CC", "LC", "BRq", "CCq", "FW", "RT"}  # species 1's parts came in


# -- refusals ------------------------------------------------------------------------------------------------------

def _place(text: str, fragment: str) -> str:
    """``line:col`` of ``fragment``'s first occurrence at the start of a rule or inside one."""
    line = next(i for i, line in enumerate(text.splitlines(), start=1) if fragment in line)
    return f"{line}:{text.splitlines()[line - 1].index(fragment) + 1}"


@pytest.mark.parametrize("old, new, where, message", [
    ("<asc>          ::= EMPTY", "<asc>          ::= <no_asc>\n<no_asc>       ::= EMPTY", "<no_asc>       ::=",
     "<no_asc> is not a rule of large.bnf: inter-species crossover swaps subtrees"),
    ("<Start>        ::= <MLC-PT> <pred_tshd>", "<Begin>        ::= <MLC-PT> <pred_tshd>", "<Begin>",
     "this one starts with <Begin>, large.bnf with <Start>"),
    ("| DecisionStump |", "| DecisionStmup |", "DecisionStmup",
     "'DecisionStmup' in <TREES> is not a registered algorithm (did you mean DecisionStump?)"),
    ("<nt>           ::= RANDOM-INT(2, 256)                            #@ type=int default=100",
     "<nt>           ::= RANDOM-INT(2, 256)", "<nt>           ::=",
     "<nt> is a hyper-parameter in large.bnf (#@ type=int default=100) but not here"),
])
def test_a_species_file_is_refused_at_the_offending_rule(tmp_path, capsys, old, new, where, message):
    text = TREES.read_text()
    assert old in text
    bad = tmp_path / "bad-trees.bnf"
    bad.write_text(text.replace(old, new))
    out = tmp_path / "run"
    code = main(["evolve", "--grammar", str(LARGE), "--method", "spggp", "--species", f"1,{bad}", "--budget", "1m",
                 "--quiet", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1, err
    assert f"{bad}:{_place(bad.read_text(), where)}: error: " in err and message in err, err
    assert "Traceback" not in err and not out.exists()


def test_a_species_that_crossover_would_break_is_refused(tmp_path, data):  # noqa: F811
    """Alone the species compiles, but its <inner> (an MLC) put where the run's grammar has <inner> (an SLC)
    does not: found by crossing sampled trees both ways."""
    main_grammar = tmp_path / "toy.bnf"
    main_grammar.write_text("<S> ::= <mlc> <slc>\n<mlc> ::= BR | CC\n<slc> ::= J48 | <inner>\n<inner> ::= NaiveBayes\n")
    species = tmp_path / "toy-odd.bnf"
    species.write_text("<S> ::= <inner> <slc>\n<inner> ::= CC\n<slc> ::= J48\n")
    from ggp_automl.gp.errors import GrammarError

    config = run_config(method="spggp", species=(8, str(species)), species_size=2, budget_seconds=60)
    with pytest.raises(GrammarError) as err:
        start(config, str(main_grammar), data, tmp_path / "run", write=False)
    assert f"{species}:2:1: error: inter-species crossover at <inner>" in str(err.value)


def test_species_options_and_their_usage_errors(capsys):
    assert _species("1,8,grammars/species/large-trees.bnf") == [1, 8, "grammars/species/large-trees.bnf"]
    args = build_parser().parse_args(["evolve", "--method", "spggp", "--species", "1,3", "--species", str(TREES),
                                      "--population", "12"])
    config = _run_config(args)
    assert config.params["species"] == (1, 3, str(TREES)) and config.params["species_size"] == 4
    assert _run_config(build_parser().parse_args(["evolve", "--method", "spggp", "--species", "1,3,8"])).params[
        "species_size"] == 10
    for argv, fragment in [
        (["--method", "ggp", "--species", "1,2"], "--species goes with --method spggp"),
        (["--method", "spggp", "--species", "1,9"], "numbered 1 to 8, got 9"),
        (["--method", "spggp", "--species", "1,,2"], "separated by commas"),
        (["--method", "spggp", "--species", "1,3,8", "--population", "10"], "multiple of the 3 species"),
        (["--method", "spggp", "--species", "1,1"], "each species may be given once"),
        (["--method", "spggp", "--species", "8"], "inter-species crossover needs at least two species"),
        (["--method", "spggp", "--species", "1,a/trees.bnf,b/trees.bnf"], "trees more than once"),
        (["--resume", "runs/x", "--species", "1,2"], "--species"),
    ]:
        assert main(["evolve", *argv]) == 2, argv
        assert fragment in capsys.readouterr().err, argv
    assert main(["evolve", "--method", "spggp", "--population", "12"]) == 2  # the 8 species by default
    assert "multiple of the 8 species" in capsys.readouterr().err


def test_run_config_and_the_python_api_take_the_same_species(tmp_path):
    config = run_config(method="spggp", species=[1, TREES])  # a list and a Path, as Python users write them
    assert config.params["species"] == (1, str(TREES))
    assert RunConfig.from_dict(json.loads(json.dumps(config.to_dict()))) == config
    with pytest.raises(ValueError, match="a species is a number 1..8 or a species grammar file, got 2.5"):
        RunConfig.from_dict({**config.to_dict(), "method_params": {"species": [1, 2.5]}})
    legacy = {k: v for k, v in config.to_dict().items() if k != "method_params"}  # a config.json of before
    assert RunConfig.from_dict({**legacy, "species": [1, str(TREES)], "species_size": 4}).params["species_size"] == 4
    with pytest.raises(ValueError, match="rename the file"):
        run_config(method="spggp", species=(1, "species/3.bnf"))
    from sklearn.base import clone

    from ggp_automl.search.automl import GrammarAutoML, GrammarAutoMLClassifier

    species = [np.int64(1), TREES]
    estimator = GrammarAutoML(method="spggp", species=species, population=6)
    assert estimator.get_params()["species"] is species  # stored unchanged (scikit-learn)
    assert clone(estimator).get_params()["species"] == species
    made = estimator._config()
    assert made.params["species"] == (1, str(TREES)) and made.params["species_size"] == 3
    with pytest.raises(ValueError, match="method='spggp'"):
        GrammarAutoMLClassifier(species=[1, 2])._config()
    with pytest.raises(ValueError, match="multiple of the 2 species"):
        GrammarAutoML(method="spggp", species=[1, 2], population=5)._config()


# -- resume ----------------------------------------------------------------------------------------------------------

def test_resume_with_a_species_file_from_another_directory(  # noqa: F811
        tmp_path, large, data, fake_world, monkeypatch):  # noqa: F811
    (tmp_path / "sp").mkdir()
    (tmp_path / "sp" / "trees.bnf").write_text(TREES.read_text())
    monkeypatch.chdir(tmp_path)  # given relative to where the run starts
    config = run_config(method="spggp", species=(1, "sp/trees.bnf"), species_size=3, max_generations=5,
                       resample_every=2, budget_seconds=3600, seed=3, mode="generational")
    start(config, large, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"kill_after": 14}
    with pytest.raises(Killed):
        start(config, large, data, tmp_path / "killed", argv=[])
    first = fake_world.engines[-1].calls
    recorded = json.loads((tmp_path / "killed" / "config.json").read_text())
    path = str(tmp_path / "sp" / "trees.bnf")
    assert recorded["config"]["method_params"]["species"] == [1, path] and list(recorded["species_sha256"]) == [path]
    monkeypatch.chdir(ROOT)  # resumed elsewhere
    fake_world.engine_kwargs = {}
    outcome = resume(tmp_path / "killed")
    assert first + fake_world.engines[-1].calls == whole
    logged = RunDirectory(tmp_path / "killed").evaluations()
    assert [(r["phenotype"], r["species"]) for r in logged] == \
        [(r["phenotype"], r["species"]) for r in RunDirectory(tmp_path / "whole").evaluations()]
    assert {r["species"] for r in logged if r["phase"] == "search"} == {1, "trees"}
    assert outcome.final["status"] == "finished"

    fake_world.engine_kwargs = {"kill_after": 5}
    with pytest.raises(Killed):
        start(config.replace(method_params={**config.method_params, "species": (1, path)}), large, data, tmp_path / "again", argv=[])
    (tmp_path / "sp" / "trees.bnf").write_text(TREES.read_text() + "\n# edited\n")
    with pytest.raises(RunError, match="trees.bnf has changed since the run started"):
        resume(tmp_path / "again")
    (tmp_path / "sp" / "trees.bnf").unlink()
    with pytest.raises(RunError, match="trees.bnf no longer exists"):
        resume(tmp_path / "again")


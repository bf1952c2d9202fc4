"""README "Extending: five walkthroughs", run as a newcomer would: the files are taken from the README
itself (a block whose first line names the file), so the README cannot drift from what works.

Each search is short and fixed (one worker, a seed, one generation or two) so that it is repeatable;
the seeds are chosen so that the added or edited parts of the space are actually evaluated — if a
change to the grammar or the generator moves them, the assertion says so and another seed is needed.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from ggp_automl.cli import main
from ggp_automl.spaces import plugins
from ggp_automl.spaces.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Extending: five walkthroughs"):README.index("## Python API")]
TREES = "<TREES>        ::= <C4.5> | DecisionStump | <RandomForest> | <RandomTree> | <REPTree>"


def readme_file(name: str) -> str:
    """The README block whose first line is ``# name`` (that line dropped)."""
    for block in re.findall(r"```[a-z]*\n(.*?)```", SECTION, flags=re.S):
        first, _, rest = block.partition("\n")
        if re.fullmatch(rf"# {re.escape(name)}(:.*)?", first.strip()):
            return rest if name.endswith(".py") else block
    raise AssertionError(f"README's Extending section has no block for {name}")


def evaluations(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines() if line.strip()]


@pytest.fixture
def forget_plugins():
    """What a walkthrough's plug-in registers in this process is removed afterwards."""
    before, loaded = set(REGISTRY), dict(plugins._loaded)
    yield
    for name in set(REGISTRY) - before:
        del REGISTRY[name]
    for spec in set(plugins._loaded) - set(loaded):
        __import__("sys").modules.pop(plugins._loaded.pop(spec), None)


def large_with(tmp_path: Path, trees_rule: str) -> Path:
    text = (ROOT / "grammars" / "large.bnf").read_text(encoding="utf-8")
    assert text.count(TREES + "\n") == 1, "large.bnf's <TREES> rule is not the README's any more"
    path = tmp_path / "my-large.bnf"
    path.write_text(text.replace(TREES + "\n", trees_rule + "\n"), encoding="utf-8")
    return path


def test_a_remove_an_algorithm(tmp_path, capsys):
    assert '"| DecisionStump"' in SECTION and "27 algorithms, each 1/27" in SECTION
    grammar = large_with(tmp_path, TREES.replace(" | DecisionStump", ""))
    assert main(["check", "--grammar", str(grammar), "--rules"]) == 0
    assert re.search(r"<ALGS-SLC>\s+27 algorithms, each 1/27", capsys.readouterr().out)
    run = tmp_path / "run"
    assert main(["evolve", "--grammar", str(grammar), "--method", "random", "--population", "6", "--generations",
                 "1", "--budget", "1m", "--workers", "1", "--seed", "1", "--quiet", "--out", str(run)]) == 0
    done = evaluations(run)
    assert len(done) >= 6 and not any("DecisionStump" in r["phenotype"] for r in done)


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_b_add_extra_trees_from_a_module_of_your_own(tmp_path, capsys, forget_plugins):
    line = re.search(r"`(<TREES> ::= [^`]*ExtraTrees <nt>)`", SECTION)[1]
    assert line.split("::=")[1] == TREES.split("::=")[1] + " | ExtraTrees <nt>"
    grammar = large_with(tmp_path, TREES + " | ExtraTrees <nt>")
    module = tmp_path / "my_algorithms.py"
    module.write_text(readme_file("my_algorithms.py"), encoding="utf-8")
    assert main(["check", "--grammar", str(grammar)]) == 1  # without the plug-in: the unknown terminal
    where = re.search(r"refuse the\ngrammar at `my-large.bnf:(\d+:\d+)`", SECTION)[1]
    assert f"my-large.bnf:{where}: error: 'ExtraTrees' in <TREES> is not a registered algorithm" \
        in capsys.readouterr().err
    assert main(["check", "--grammar", str(grammar), "--plugin", str(module), "--rules"]) == 0
    assert re.search(r"<ALGS-SLC>\s+29 algorithms, each 1/29", capsys.readouterr().out)
    run = tmp_path / "run"
    assert main(["evolve", "--grammar", str(grammar), "--plugin", str(module), "--method", "random",
                 "--population", "8", "--generations", "1", "--budget", "1m", "--workers", "1", "--seed", "15",
                 "--quiet", "--out", str(run)]) == 0
    mine = [r for r in evaluations(run) if "ExtraTrees" in r["phenotype"]]
    assert any(r["status"] == "ok" for r in mine), f"seed 15 no longer evaluates an ExtraTrees tree: {mine}"


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_c_a_species_of_your_own_with_spggp(tmp_path, capsys):
    species = tmp_path / "my-forest.bnf"
    species.write_text(readme_file("my-forest.bnf"), encoding="utf-8")
    assert "--species 1,8,my-forest.bnf" in SECTION
    run = tmp_path / "run"
    assert main(["evolve", "--method", "spggp", "--species", f"1,8,{species}", "--population", "6", "--generations",
                 "1", "--budget", "1m", "--workers", "1", "--seed", "0", "--mode", "generational", "--quiet",
                 "--out", str(run)]) == 0, capsys.readouterr().err
    done = [r for r in evaluations(run) if r["phase"] == "search"]
    forest = [r for r in done if r["species"] == "my-forest"]
    assert forest and {r["species"] for r in done} == {1, 8, "my-forest"}
    assert all(re.fullmatch(r"(BR|CC) RandomForest \d+ \d+ \d+ (PCut1|PCutL|[0-9.e-]+)", r["phenotype"])
               for r in forest), [r["phenotype"] for r in forest]


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_d_swap_the_mutation(tmp_path, capsys, forget_plugins):
    module = tmp_path / "my_operators.py"
    module.write_text(readme_file("my_operators.py"), encoding="utf-8")
    common = ["evolve", "--grammar", "grammars/small.bnf", "--method", "ggp", "--mode", "generational",
              "--population", "6", "--generations", "2", "--budget", "2m", "--workers", "1", "--seed", "2",
              "--quiet"]
    assert main([*common, "--out", str(tmp_path / "default")]) == 0, capsys.readouterr().err
    assert main([*common, "--plugin", str(module), "--out", str(tmp_path / "swapped")]) == 0, capsys.readouterr().err
    default, swapped = ([r["phenotype"] for r in evaluations(tmp_path / name) if r["generation"] > 0]
                        for name in ("default", "swapped"))
    assert default and swapped and default != swapped  # the bred generations differ: the operator was used
    config = json.loads((tmp_path / "swapped" / "config.json").read_text())
    assert config["config"]["plugins"] == [str(module.resolve())]


def test_e_a_search_method_from_one_file(tmp_path, capsys, forget_plugins):
    """The README's method file: usable by --method (with its declared --explore), --resume and the estimator."""
    from ggp_automl.search.methods import registry

    module = tmp_path / "my_method.py"
    module.write_text(readme_file("my_method.py"), encoding="utf-8")

    def forget_method():
        registry._REGISTERED.pop("explore", None)
        for spec in [s for s in plugins._loaded if s.endswith("my_method.py")]:
            __import__("sys").modules.pop(plugins._loaded.pop(spec), None)

    assert "--plugin my_method.py --method explore --explore 0.25" in SECTION
    assert main(["evolve", "--method", "explore", "--budget", "1m"]) == 2  # unknown without the plug-in
    assert "invalid choice: 'explore'" in capsys.readouterr().err
    run = tmp_path / "run"
    common = ["--grammar", "small.bnf", "--plugin", str(module), "--method", "explore", "--explore", "0.25",
              "--population", "8", "--budget", "1m", "--workers", "1", "--seed", "1", "--quiet"]
    # a run interrupted after its first generation, then resumed: the plug-in is imported again
    assert main(["evolve", *common, "--generations", "1", "--out", str(run)]) == 0, capsys.readouterr().err
    config = json.loads((run / "config.json").read_text())["config"]
    assert config["method"] == "explore" and config["method_params"] == {"explore": 0.25}
    assert config["plugins"] == [str(module.resolve())]
    done = evaluations(run)
    assert len(done) >= 8 and any(r["status"] == "ok" for r in done if r["phase"] == "search")
    forget_method()  # as a fresh process would be: only the run knows the plug-in
    (run / "final.json").unlink()
    assert main(["evolve", "--resume", str(run), "--workers", "1", "--quiet"]) == 0, capsys.readouterr().err
    assert "explore" in registry.method_names()
    # from Python, with the method's parameter
    from sklearn.datasets import make_multilabel_classification

    from ggp_automl import GrammarAutoML

    forget_method()
    X, Y = make_multilabel_classification(n_samples=120, n_features=8, n_classes=3, random_state=0)
    est = GrammarAutoML(grammar="small.bnf", method="explore", plugins=[str(module)], method_params={"explore": 0.5},
                        time_budget=40, population=6, max_generations=1, n_jobs=1, random_state=0)
    assert est.fit(X, Y).predict(X).shape == Y.shape

"""Plug-in algorithms (spaces/plugins.py): a user's estimator joins the space from a module of their own,
named on the command line, in Python or by an installed package's entry point, and is imported
wherever candidates are compiled — forked local workers, a resumed run, ``predict`` in a fresh
interpreter and Dask worker processes."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ggp_automl.cli import main
from ggp_automl.spaces import plugins
from ggp_automl.spaces.registry import REGISTRY

ROOT = Path(__file__).resolve().parents[1]

PLUGIN = '''\
"""ExtraTrees for the single-label level: the plug-in of the walkthrough."""
from sklearn.ensemble import ExtraTreesClassifier

from ggp_automl.spaces.registry import register


@register("{name}", kind="slc")
def extra_trees(p):
    depth = p.int("md_et", 0)
    return ExtraTreesClassifier(n_estimators=p.int("nt_et", 10), max_depth=depth or None,
                                random_state=p.random_state)
'''

GRAMMAR = '''\
<S>       ::= <ET> | J48 <mno_c45>
<ET>      ::= {name} <nt_et>
<nt_et>   ::= RANDOM-INT(5, 20)      #@ type=int default=10
<mno_c45> ::= RANDOM-INT(1, 5)       #@ type=int default=2
'''


@pytest.fixture
def user_plugin(tmp_path, request):
    """A plug-in file and a grammar using it; whatever the test registers is removed afterwards."""
    name = f"PluginTrees{abs(hash(request.node.name)) % 10_000}"
    stem = f"user_algorithms_{abs(hash(request.node.name)) % 10_000}"
    plugin = tmp_path / f"{stem}.py"
    plugin.write_text(PLUGIN.format(name=name), encoding="utf-8")
    grammar = tmp_path / "user.bnf"
    grammar.write_text(GRAMMAR.format(name=name), encoding="utf-8")
    yield plugin, grammar, name
    REGISTRY.pop(name, None)
    sys.modules.pop(stem, None)
    plugins._loaded.pop(str(plugin.resolve()), None)


def _evaluations(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "evaluations.jsonl").read_text().splitlines() if line.strip()]


def test_a_plugin_file_registers_its_algorithm_once_per_process(user_plugin):
    plugin, _, name = user_plugin
    assert name not in REGISTRY
    recorded = plugins.load_plugins([str(plugin)])
    assert recorded == (str(plugin.resolve()),) and name in REGISTRY
    assert plugins.load_plugins([str(plugin)]) == recorded  # idempotent: no "registered twice"
    assert REGISTRY[name].kind == "slc"


@pytest.mark.parametrize("source, fragment", [
    ("def broken(:\n", ":1:12: SyntaxError"),
    ("import not_a_module_anywhere\n", "ModuleNotFoundError"),
    ("raise RuntimeError('boom')\n", ":1: RuntimeError: boom"),
    ("from ggp_automl.spaces.registry import register\n@register('RandomForest', kind='slc')\ndef rf(p):\n    return None\n",
     "algorithm 'RandomForest' is registered twice"),
])
def test_a_broken_plugin_is_said_with_its_place(tmp_path, source, fragment):
    plugin = tmp_path / "broken_plugin.py"
    plugin.write_text(source, encoding="utf-8")
    with pytest.raises(plugins.PluginError) as err:
        plugins.load_plugins([str(plugin)])
    assert fragment in str(err.value) and "broken_plugin" in str(err.value)
    assert "broken_plugin" not in sys.modules


@pytest.mark.parametrize("spec, fragment", [
    ("missing_file.py", "no such file"),
    ("no_such_module_anywhere", "no module of that name can be imported"),
    ("not a module", "neither a .py file nor a module name"),
])
def test_a_plugin_that_cannot_be_found(spec, fragment):
    with pytest.raises(plugins.PluginError, match=fragment):
        plugins.load_plugins([spec])


def test_a_plugin_file_may_not_shadow_a_loaded_module(tmp_path):
    (tmp_path / "json.py").write_text("", encoding="utf-8")
    with pytest.raises(plugins.PluginError, match="a module named 'json' is already loaded"):
        plugins.load_plugins([str(tmp_path / "json.py")])


def test_cli_errors_for_plugins_are_exit_1_without_traceback(tmp_path, capsys):
    assert main(["check", "--grammar", "grammars/small.bnf", "--plugin", str(tmp_path / "nope.py")]) == 1
    assert "nope.py: no such file" in capsys.readouterr().err
    grammar = tmp_path / "g.bnf"
    grammar.write_text(GRAMMAR.format(name="NotRegisteredAnywhere"), encoding="utf-8")
    assert main(["check", "--grammar", str(grammar)]) == 1  # without the plug-in the terminal is unknown
    assert "NotRegisteredAnywhere" in capsys.readouterr().err


@pytest.mark.slow  # end to end, 8-16 s: with the slow suite (the developer suite's 15 minutes)
def test_evolve_with_a_plugin_then_predict_in_a_fresh_interpreter(tmp_path, user_plugin, capsys):
    plugin, grammar, name = user_plugin
    only_it = GRAMMAR.format(name=name).replace("| J48 <mno_c45>", "").splitlines()[:-1]
    grammar.write_text("\n".join(only_it) + "\n", encoding="utf-8")
    run = tmp_path / "run"
    args = ["evolve", "--grammar", str(grammar), "--plugin", str(plugin), "--method", "random", "--population", "4",
            "--generations", "1", "--budget", "5m", "--workers", "1", "--seed", "1", "--quiet", "--out", str(run)]
    assert main(args) == 0, capsys.readouterr().err
    config = json.loads((run / "config.json").read_text())
    assert config["config"]["plugins"] == [str(plugin.resolve())]
    evaluated = _evaluations(run)
    assert evaluated and all(r["phenotype"].startswith(name) and r["status"] == "ok" for r in evaluated), evaluated
    # a new interpreter knows nothing of the plug-in: predict imports it from config.json to unpickle the model
    from ggp_automl.evaluation.default_data import load_default

    X, _ = load_default("singlelabel")
    data = tmp_path / "new.arff"
    data.write_text("@relation new\n" + "".join(f"@attribute x{i} numeric\n" for i in range(X.shape[1]))
                    + "@attribute class {c0,c1,c2}\n@data\n"
                    + "".join(",".join(f"{v:.6f}" for v in row) + ",?\n" for row in X[:5]))
    done = subprocess.run([sys.executable, str(ROOT / "cli.py"), "predict", str(run), "--data", str(data),
                           "--out", str(tmp_path / "pred.csv")], capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "pred.csv").read_text().splitlines()) == 6
    # a run killed before its end resumes in a fresh interpreter: the final re-evaluation and refit need it
    import shutil

    (run / "final.json").unlink()
    shutil.rmtree(run / "best")
    again = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--resume", str(run), "--quiet"],
                           capture_output=True, text=True, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (run / "best" / "model.joblib").is_file()


@pytest.mark.slow  # minutes-long end to end: with the slow suite (CI runs both; issue 23's 15-minute developer suite)
def test_dask_workers_import_the_plugin_themselves(tmp_path, user_plugin, capsys):
    """LocalCluster worker processes are fresh interpreters (spawned): only the task's plug-in list reaches them."""
    from distributed import LocalCluster

    plugin, grammar, name = user_plugin
    run = tmp_path / "run"
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        args = ["evolve", "--grammar", str(grammar), "--plugin", str(plugin), "--method", "random", "--population",
                "4", "--generations", "1", "--budget", "5m", "--scheduler", cluster.scheduler_address, "--quiet",
                "--out", str(run)]
        assert main(args) == 0, capsys.readouterr().err
    mine = [r for r in _evaluations(run) if r["phenotype"].startswith(name)]
    assert mine and all(r["status"] == "ok" for r in mine), mine


def test_an_installed_package_registers_by_entry_point(tmp_path):
    """A package declaring a ``ggp_automl.algorithms`` entry point needs no --plugin."""
    site = tmp_path / "site"
    (site / "ep_user_algorithms-0.1.dist-info").mkdir(parents=True)
    (site / "ep_user_algorithms.py").write_text(PLUGIN.format(name="EntryPointTrees"), encoding="utf-8")
    (site / "ep_user_algorithms-0.1.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: ep-user-algorithms\nVersion: 0.1\n", encoding="utf-8")
    (site / "ep_user_algorithms-0.1.dist-info" / "entry_points.txt").write_text(
        f"[{plugins.ENTRY_POINT_GROUP}]\ntrees = ep_user_algorithms\n", encoding="utf-8")
    grammar = tmp_path / "g.bnf"
    grammar.write_text(textwrap.dedent(GRAMMAR.format(name="EntryPointTrees")), encoding="utf-8")
    command = [sys.executable, str(ROOT / "cli.py"), "check", "--grammar", str(grammar)]
    without = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path)
    assert without.returncode == 1 and "EntryPointTrees" in without.stderr
    env = {**__import__("os").environ, "PYTHONPATH": str(site)}
    found = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr

"""Warm-start portfolios (search/portfolio.py, experiments/portfolio.py, experiments/_portfolio_selection.py).

Every method evaluates a portfolio's members first and a resumed run keeps them; a portfolio of another
grammar is refused, a broken file is said with its place; the greedy rule picks what auto-sklearn 2.0's
picks; and a leave-one-dataset-out portfolio never sees the held-out dataset's evaluations.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ggp_automl.experiments._portfolio_selection import greedy, normalised, select
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.search import RunConfig, RunError, resume, start
from ggp_automl.search.methods import METHODS
from ggp_automl.search.portfolio import Member, Portfolio, PortfolioError, resolve, sha256, shipped_portfolio

from .conftest import GRAMMARS, ROOT, run_config
from .test_search import Killed, data, fake_world, small  # noqa: F401 - fixtures

SMALL = GRAMMARS / "small.bnf"
NUMBER = re.compile(r"^-?[0-9.]+(e-?[0-9]+)?$")


def members_of(grammar, n: int = 4, seed: int = 5) -> list[str]:
    from ggp_automl.search.run import default_dataset

    generator = TreeGenerator(grammar.bind(default_dataset().meta))
    return [t.phenotype for t in generator.ramped_half_and_half(n, np.random.default_rng(seed), min_depth=2)]


def write_portfolio(path, phenotypes, grammar_file=SMALL, **more):
    return Portfolio(tuple(Member(p) for p in phenotypes), grammar_file.name, sha256(grammar_file), **more).save(path)


def same(a: str, b: str) -> bool:
    """Phenotypes equal up to ConfigSpace's float rounding (BO's configurations hold 13 digits)."""
    x, y = a.split(), b.split()
    return len(x) == len(y) and all(s == t or (NUMBER.match(s) and NUMBER.match(t) and
                                               np.isclose(float(s), float(t), rtol=1e-9)) for s, t in zip(x, y))


def method_config(method, **more):
    sizes = {"spggp": dict(population=16, species_size=2), "pbil": dict(method_params={"population": 8}),
             "tpe": dict(method_params={"population": 8}), "bo": dict(method_params={"population": 8}),
             "eo": dict(method_params={"population": 8}), "divbo": dict(method_params={"population": 8})}
    return run_config(method=method, budget_seconds=3600, seed=2, **{"population": 8, **sizes.get(method, {}),
                                                                     **more})


# -- every method starts from the portfolio ---------------------------------------------------------

@pytest.mark.parametrize("method", sorted(METHODS))
def test_every_method_evaluates_the_portfolio_first(method, small, data, tmp_path, fake_world):
    phenotypes = members_of(small)
    portfolio = write_portfolio(tmp_path / "p.json", phenotypes)
    config = method_config(method, warm_start=str(portfolio), max_generations=1)
    start(config, small, data, tmp_path / "run", argv=[])
    evaluated = list(dict.fromkeys(p for _, p in fake_world.engines[-1].calls))
    if method == "spggp":  # each member goes to the species that derives it: all in the first generation
        assert all(any(same(m, e) for e in evaluated[:16]) for m in phenotypes)
    else:
        assert len(evaluated) >= len(phenotypes)
        assert all(same(m, e) for m, e in zip(phenotypes, evaluated)), (phenotypes, evaluated[:4])
    recorded = json.loads((tmp_path / "run" / "config.json").read_text())
    assert recorded["config"]["warm_start"] == str(portfolio.resolve())
    assert recorded["warm_start_sha256"] == sha256(portfolio)
    from ggp_automl.results.report import summarise

    shown = summarise(tmp_path / "run")["warm_start"]  # inspect's line: how the members fared
    assert shown["members"] == shown["evaluated"] == len(phenotypes) and 1 <= shown["best_rank"] <= shown["of"]


def test_pbil_starts_its_vectors_from_the_members(small, data):
    """PBIL's own representation: one update of its probability vectors towards the members' choices."""
    from ggp_automl.search.methods import make_method
    from ggp_automl.gp.phenotype import parse_phenotype

    config = method_config("pbil")
    method = make_method(config, small, data.train.meta)
    assert not method.policy.vectors  # made as derivations reach them
    trees = [parse_phenotype(p, method.variation.bound) for p in members_of(small)]
    unmoved = make_method(method_config("pbil", method_params={"population": 8, "learning_rate": 0.0}), small,
                          data.train.meta)
    unmoved.warm_start(trees)  # the vectors as first made, which a learning rate of 0 leaves as they are
    before = {loc: v.p for loc, v in unmoved.policy.vectors.items()}
    method.warm_start(trees)
    lr = config.params["learning_rate"]
    used = {}
    for tree in trees:
        for loc, j in method.policy.used(tree):
            used.setdefault(loc, np.zeros(len(before[loc])))[j] += 1
    assert used
    for loc, counts in used.items():
        assert np.allclose(method.policy.vectors[loc].p, (1 - lr) * before[loc] + lr * counts / counts.sum())


def test_without_a_warm_start_the_first_candidates_are_the_methods_own(small, data, tmp_path, fake_world):
    phenotypes = members_of(small)
    write_portfolio(tmp_path / "p.json", phenotypes)
    start(method_config("random", warm_start="none", max_generations=1), small, data, tmp_path / "run", argv=[])
    evaluated = [p for _, p in fake_world.engines[-1].calls]
    assert evaluated[: len(phenotypes)] != phenotypes
    assert json.loads((tmp_path / "run" / "config.json").read_text())["config"]["warm_start"] == "none"


@pytest.mark.parametrize("method,kill_after", [("ggp", 2), ("ggp", 12), ("tpe", 3), ("bo", 3), ("pbil", 11)])
def test_a_resumed_run_keeps_its_warm_start(method, kill_after, small, data, tmp_path, fake_world):
    """Killed before the first checkpoint (the method is rebuilt from config.json and the portfolio) or
    after it (the method's state holds what is left of the warm start): the uninterrupted run's evaluations."""
    portfolio = write_portfolio(tmp_path / "p.json", members_of(small, 6))
    config = method_config(method, warm_start=str(portfolio), max_generations=3, mode="generational")
    start(config, small, data, tmp_path / "whole", argv=[])
    whole = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {"kill_after": kill_after}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "cut", argv=[])
    first = fake_world.engines[-1].calls
    fake_world.engine_kwargs = {}
    resume(tmp_path / "cut")
    assert first + fake_world.engines[-1].calls == whole


def test_a_resume_refuses_a_changed_or_missing_portfolio(small, data, tmp_path, fake_world):
    portfolio = write_portfolio(tmp_path / "p.json", members_of(small))
    config = method_config("random", warm_start=str(portfolio), max_generations=2)
    fake_world.engine_kwargs = {"kill_after": 2}
    with pytest.raises(Killed):
        start(config, small, data, tmp_path / "cut", argv=[])
    fake_world.engine_kwargs = {}
    write_portfolio(portfolio, members_of(small, seed=9))
    with pytest.raises(RunError, match="has changed since the run started"):
        resume(tmp_path / "cut")
    portfolio.unlink()
    with pytest.raises(RunError, match="no longer exists"):
        resume(tmp_path / "cut")


# -- which portfolio, and refusals ----------------------------------------------------------------

def test_the_portfolio_beside_the_grammar_is_the_default(tmp_path, small, data, fake_world):
    grammar = tmp_path / "mine.bnf"
    grammar.write_text(SMALL.read_text())
    beside = write_portfolio(shipped_portfolio(grammar), members_of(small), grammar_file=grammar)
    assert beside.name == "mine.portfolio.json"
    assert resolve("portfolio", grammar) == (beside.resolve(), [])
    assert resolve("none", grammar) == (None, [])
    assert RunConfig().warm_start == "portfolio"
    start(method_config("random", max_generations=1), str(grammar), data, tmp_path / "run", argv=[])
    assert json.loads((tmp_path / "run" / "config.json").read_text())["config"]["warm_start"] == str(beside.resolve())
    grammar.write_text(SMALL.read_text() + "\n# edited\n")  # the shipped portfolio no longer fits: cold, and said
    path, warnings = resolve("portfolio", grammar)
    assert path is None and "another version of mine.bnf" in warnings[0]


def test_a_grammar_without_a_portfolio_starts_cold(tmp_path):
    grammar = tmp_path / "g.bnf"
    grammar.write_text(SMALL.read_text())
    assert resolve("portfolio", grammar) == (None, [])


def test_a_portfolio_of_another_grammar_is_refused(tmp_path, small):
    portfolio = write_portfolio(tmp_path / "p.json", members_of(small))
    with pytest.raises(PortfolioError, match="portfolio of another grammar"):
        resolve(str(portfolio), GRAMMARS / "large.bnf")
    out = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--grammar", str(GRAMMARS / "large.bnf"),
                          "--warm-start", str(portfolio), "--budget", "5s", "--out", str(tmp_path / "run")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    assert "is a portfolio of another grammar (small.bnf" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("text,message", [
    ("{\n  \"format\": ", r"p.json:2:\d+: not a portfolio file \(not valid JSON"),
    ('{"format": "something else"}', 'no "format": "ggp-automl portfolio"'),
    ('{"format": "ggp-automl portfolio", "version": 1, "grammar": "small.bnf", "grammar_sha256": "x", "members": []}',
     '"members" is not a list of candidates'),
    ('{"format": "ggp-automl portfolio", "version": 1, "grammar": "small.bnf", "grammar_sha256": "x", '
     '"members": [{"source": "sample"}]}', r"member\(s\) 1 have no phenotype"),
])
def test_a_broken_portfolio_file_is_said_with_its_place(tmp_path, text, message):
    (tmp_path / "p.json").write_text(text)
    with pytest.raises(PortfolioError, match=message):
        Portfolio.load(tmp_path / "p.json")


def test_members_this_data_rules_out_are_left_out_with_a_warning(small, data, tmp_path, fake_world, recwarn):
    phenotypes = members_of(small)
    portfolio = write_portfolio(tmp_path / "p.json", phenotypes + ["BR NoSuchLearner PCut1"])
    lines = []
    start(method_config("random", warm_start=str(portfolio), max_generations=1), small, data, tmp_path / "run",
          argv=[], warn=lines.append)
    assert any("1 of the portfolio's 5 members cannot be derived" in line for line in lines)
    assert [p for _, p in fake_world.engines[-1].calls][:4] == phenotypes


def test_check_verifies_a_portfolio_against_its_grammar(tmp_path, small):
    good = write_portfolio(tmp_path / "good.json", members_of(small))
    cli = [sys.executable, str(ROOT / "cli.py"), "check"]
    out = subprocess.run(cli + ["--grammar", str(SMALL), "--portfolio", str(good)], capture_output=True, text=True)
    assert out.returncode == 0 and f"{good}: OK (4 members of small.bnf" in out.stdout
    out = subprocess.run(cli + ["--grammar", str(GRAMMARS / "medium.bnf"), "--portfolio", str(good)],
                         capture_output=True, text=True)
    assert out.returncode == 1 and "portfolio of another grammar" in out.stderr and "Traceback" not in out.stderr


def test_both_estimators_take_a_warm_start(tmp_path):
    from ggp_automl.search.automl import GrammarAutoML, GrammarAutoMLClassifier

    assert GrammarAutoML().get_params()["warm_start_from"] == "portfolio"
    assert "warm_start" not in GrammarAutoML().get_params()  # scikit-learn's checks give that name booleans
    assert GrammarAutoMLClassifier(warm_start_from="none")._config().warm_start == "none"
    assert GrammarAutoML(warm_start_from=str(tmp_path / "p.json"))._config().warm_start == str(tmp_path / "p.json")


# -- the greedy rule and leave-one-dataset-out ------------------------------------------------------

def test_normalised_scores_put_failures_with_the_worst_and_average_folds():
    scores = {"A": {1: {"a": 0.5, "b": 0.7, "c": None}, 2: {"a": 0.9, "b": 0.7, "c": 0.8}}}
    table = normalised(scores, ["a", "b", "c"])
    assert np.allclose(table["A"], [(0.0 + 1.0) / 2, (1.0 + 0.0) / 2, (0.0 + 0.5) / 2])


def test_greedy_adds_the_member_that_raises_the_mean_of_the_best_most():
    # a: good everywhere; b: best on D1 only; c: best on D2 and D3
    table = {"D1": np.array([0.8, 1.0, 0.0]), "D2": np.array([0.8, 0.0, 1.0]), "D3": np.array([0.8, 0.0, 1.0])}
    order = greedy(table, 3)
    assert [i for i, *_ in order] == [0, 2, 1]  # a (mean .8) before c (mean .667); then c, then b
    assert np.isclose(order[0][1], 0.8) and np.isclose(order[1][1], (0.8 + 1 + 1) / 3 - 0.8)
    assert np.isclose(order[2][1], 0.2 / 3)


def test_a_tie_goes_to_the_better_mean_then_the_earlier_member():
    table = {"D1": np.array([1.0, 1.0, 1.0]), "D2": np.array([0.2, 0.5, 0.5])}
    assert [i for i, *_ in greedy(table, 3)] == [1, 2, 0]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 4), st.integers(3, 9), st.integers(1, 5), st.integers(0, 2 ** 31 - 1))
def test_the_held_out_datasets_evaluations_never_reach_its_portfolio(n_datasets, n_pool, k, seed):
    """Whatever the held-out dataset's evaluations say, and whatever candidates its runs contributed, its
    leave-one-dataset-out portfolio is the same; and no member of it came from a run on it."""
    rng = np.random.default_rng(seed)
    datasets = [f"D{i}" for i in range(n_datasets)]
    sources = [f"run:{datasets[int(rng.integers(n_datasets))]}" if rng.random() < 0.5 else "sample"
               for _ in range(n_pool)]
    pool = [Member(f"p{i}", s) for i, s in enumerate(sources)]

    def scores(fitness):
        return {d: {1: {m.phenotype: fitness(d, m) for m in pool}} for d in datasets}

    honest = scores(lambda d, m: None if rng.random() < 0.1 else float(rng.random()))
    held_out = datasets[0]
    chosen = select(pool, honest, k, held_out)
    assert all(m.source != f"run:{held_out}" for m in chosen)
    tampered = {**honest, held_out: {1: {m.phenotype: float(rng.random()) for m in pool}}}
    more = pool + [Member("from-D0", f"run:{held_out}")]
    tampered[held_out][1]["from-D0"] = 1.0
    for d in datasets[1:]:
        tampered[d][1]["from-D0"] = 1.0  # the best everywhere, but it came from the held-out dataset's runs
    assert select(more, tampered, k, held_out) == chosen


def test_building_a_portfolio_end_to_end(tmp_path):
    """``cli.py portfolio build``: a search per dataset, the pool, its evaluation on every dataset, the
    portfolio and the leave-one-dataset-out ones; then a run warm-started from one."""
    spec = tmp_path / "build.toml"
    spec.write_text(f"""
[experiment]
budget = "30s"
workers = 1
options = {{ eval_timeout = "4s" }}
[grammars]
small = "{SMALL}"
[methods.random]
method = "random"
population = 4
generations = 1
[datasets.first]
data = "default"
outer_folds = 3
folds = [1]
[datasets.second]
data = "default"
outer_folds = 3
folds = [2]
[portfolio]
size = 3
sample = 3
top = 2
search_budget = "10s"
leave_one_out = true
""")
    cli = [sys.executable, str(ROOT / "cli.py")]
    out = subprocess.run(cli + ["portfolio", "build", str(spec), "--out", str(tmp_path / "b"), "--quiet"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    whole = Portfolio.load(tmp_path / "b" / "portfolio.json")
    assert len(whole.members) == 3 and whole.datasets == ("first", "second") and whole.held_out is None
    assert whole.grammar_sha256 == sha256(SMALL) and "portfolio build" in whole.command
    pool = Portfolio.load(tmp_path / "b" / "pool.portfolio.json")
    assert {m.source for m in pool.members} >= {"run:first", "run:second", "sample"}
    for held_out in ("first", "second"):
        p = Portfolio.load(tmp_path / "b" / f"without-{held_out}.portfolio.json")
        assert p.held_out == held_out and p.datasets == tuple({"first", "second"} - {held_out})
        assert all(m.source != f"run:{held_out}" for m in p.members)
    again = subprocess.run(cli + ["portfolio", "build", str(spec), "--out", str(tmp_path / "b"), "--quiet"],
                           capture_output=True, text=True, cwd=tmp_path)  # resumed: nothing runs again
    assert again.returncode == 0 and "0 to run" in again.stdout
    assert Portfolio.load(tmp_path / "b" / "portfolio.json").members == whole.members
    shown = subprocess.run(cli + ["portfolio", "show", str(tmp_path / "b" / "portfolio.json")], capture_output=True,
                           text=True)
    assert shown.returncode == 0 and whole.members[0].phenotype in shown.stdout


def test_an_experiment_gives_each_dataset_its_own_portfolio(tmp_path, small):
    """``warm_start = "…without-{dataset}…"`` in an experiment: each dataset's leave-one-dataset-out file,
    relative to the experiment file; a missing one fails when the file is read, naming its line."""
    from ggp_automl.experiments import ExperimentError, load_experiment

    (tmp_path / "p").mkdir()
    for d in ("A", "B"):
        write_portfolio(tmp_path / "p" / f"without-{d}.portfolio.json", members_of(small))
    text = f"""[experiment]
budget = "10s"
[grammars]
small = "{SMALL}"
[methods.warm]
method = "random"
warm_start = "p/without-{{dataset}}.portfolio.json"
[datasets.A]
data = "default"
outer_folds = 3
folds = [1]
[datasets.B]
data = "default"
outer_folds = 3
folds = [2]
"""
    (tmp_path / "e.toml").write_text(text)
    runs = load_experiment(tmp_path / "e.toml").runs
    for run in runs:
        given = run.args[run.args.index("--warm-start") + 1]
        assert given == str(tmp_path / "p" / f"without-{run.dataset}.portfolio.json")
    (tmp_path / "p" / "without-B.portfolio.json").unlink()
    with pytest.raises(ExperimentError, match=r"e.toml:7:1: .*without-B.portfolio.json does not exist"):
        load_experiment(tmp_path / "e.toml")


@pytest.mark.skipif(not (ROOT.parent / "shared" / "datasets").exists(), reason="../shared is optional")
@pytest.mark.parametrize("space", ["large", "medium", "small", "ensembles"])
def test_the_shipped_portfolios_build_files_read(space):
    from ggp_automl.experiments.portfolio import read_spec

    spec = read_spec(ROOT / "benchmarks" / "portfolios" / f"{space}.toml")
    assert spec.grammar == (GRAMMARS / f"{space}.bnf").resolve() and spec.leave_one_out
    assert len(spec.datasets) == (16 if space == "ensembles" else 7)


def test_a_resume_cannot_change_the_warm_start(tmp_path):
    out = subprocess.run([sys.executable, str(ROOT / "cli.py"), "evolve", "--resume", str(tmp_path / "run"),
                          "--warm-start", "none"], capture_output=True, text=True)
    assert out.returncode == 2 and "--warm-start cannot be changed" in out.stderr


BUILD = f"""[experiment]
budget = "30s"
[grammars]
small = "{SMALL}"
[datasets.first]
data = "default"
[portfolio]
size = 3
sample = 3
"""


@pytest.mark.parametrize("edit,message", [
    (lambda t: t.replace("[portfolio]\nsize = 3\nsample = 3\n", ""), r"b.toml: a portfolio file needs a \[portfolio\]"),
    (lambda t: t + "sise = 4\n", r"b.toml:10:1: unknown portfolio setting 'sise'"),
    (lambda t: t.replace("size = 3", "size = 0"), r"b.toml:8:1: size is a whole number from 1"),
    (lambda t: t.replace("sample = 3", "sample = 0"), r"the pool would be empty"),
    (lambda t: t + 'runs = ["nowhere"]\n', r"b.toml:10:1: .*nowhere is neither an experiment directory nor a run"),
    (lambda t: t + "leave_one_out = 1\n", r"b.toml:10:1: leave_one_out is true or false"),
    (lambda t: t.replace("[datasets.first]", f'large = "{GRAMMARS / "large.bnf"}"\n[datasets.first]'),
     r"b.toml:3:1: a portfolio belongs to one grammar"),
    (lambda t: t.replace('budget = "30s"', 'budget = "soon"'), r"b.toml:2:1: budget:"),
    (lambda t: t + 'search_budget = "later"\n', r"b.toml:10:1: search_budget:"),
    (lambda t: t + "search_budget = 60\n", r"b.toml:10:1: search_budget:"),
])
def test_a_bad_build_file_is_said_with_its_place(tmp_path, edit, message):
    from ggp_automl.experiments import ExperimentError
    from ggp_automl.experiments.portfolio import read_spec

    (tmp_path / "b.toml").write_text(edit(BUILD))
    with pytest.raises(ExperimentError, match=message):
        read_spec(tmp_path / "b.toml")
    out = subprocess.run([sys.executable, str(ROOT / "cli.py"), "portfolio", "build", str(tmp_path / "b.toml")],
                         capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 1 and "Traceback" not in out.stderr and not (tmp_path / "runs").exists()


@pytest.mark.shipped_portfolios
@pytest.mark.parametrize("space", ["large", "medium", "small", "ensembles"])
def test_a_shipped_portfolio_fits_its_grammar_and_is_the_default(space, tmp_path):
    """The portfolio beside a shipped grammar is of that grammar, every member derives on the embedded data,
    it was made without leakage from a build file that ships, and ``--warm-start portfolio`` finds it."""
    from ggp_automl.gp.bnf_parser import load_grammar
    from ggp_automl.search.portfolio import verify
    from ggp_automl.search.run_data import default_dataset, grammar_task

    grammar_file = GRAMMARS / f"{space}.bnf"
    path = shipped_portfolio(grammar_file)
    if not path.is_file():
        pytest.skip(f"{path.name} is not built yet (benchmarks/portfolios/{space}.toml)")
    grammar = load_grammar(grammar_file)
    assert "OK" in verify(path, grammar, default_dataset(grammar_task(grammar)).meta)
    portfolio = Portfolio.load(path)
    assert portfolio.held_out is None and portfolio.datasets and f"portfolios/{space}.toml" in portfolio.command
    assert resolve("portfolio", grammar_file) == (path.resolve(), [])

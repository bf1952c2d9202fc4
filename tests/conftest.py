"""Shared fixtures: the shipped grammars, and the ../shared datasets when present."""
from __future__ import annotations

import os
from pathlib import Path

# One BLAS/OpenMP thread, as in the evaluation workers: on 2 cores, threaded BLAS inside
# small fits is 10-50x slower once several processes compete.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pytest

ROOT = Path(__file__).resolve().parents[1]

from ggp_automl.gp.binding import DatasetMeta  # noqa: E402
from ggp_automl.gp.bnf_parser import load_grammar  # noqa: E402

GRAMMARS = ROOT / "grammars"
SPACES = ("small", "medium", "large")
SHARED = ROOT.parent / "shared"
MLC_DATA = SHARED / "datasets" / "mlc"

#: yeast's shape (the thesis's running example): L=14 labels, M=103 features.
YEAST = DatasetMeta(14, 103, 2417)
#: a dataset with few labels, where label-dependent ranges are tightest.
TINY = DatasetMeta(2, 3, 20)


def requires_shared(path: Path):
    return pytest.mark.skipif(not path.exists(), reason=f"{path} not available (../shared is optional)")


@pytest.fixture(scope="session")
def grammars():
    return {name: load_grammar(GRAMMARS / f"{name}.bnf") for name in SPACES}


@pytest.fixture(scope="module")
def one_thread():
    """One BLAS thread while a module's small fits run (thread contention makes them many times slower);
    a module asks for it with ``pytestmark = pytest.mark.usefixtures("one_thread", "no_deadline")``."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


@pytest.fixture
def no_deadline():
    """No evaluation deadline left over from another test (spaces.deadline is process-wide)."""
    from ggp_automl.spaces import deadline

    deadline.set_deadline(None)
    yield
    deadline.set_deadline(None)


#: the GGP family's knobs, which are its methods' declared parameters (search/methods/evolutionary.py)
KNOBS = ("tournament_size", "elitism", "crossover_rate", "mutation_rate", "resample_every", "restart_patience",
         "restart_min_generations", "species", "species_size", "inter_species_rate")


def run_config(**settings):
    """A RunConfig with the GGP family's knobs given as settings, as the tests of several methods write them:
    each goes into ``method_params`` when the run's method declares it, and is dropped for a method without it
    (a parametrized test gives every method the same knobs)."""
    from ggp_automl.search.config import RunConfig
    from ggp_automl.search.methods import method_class

    method = settings.get("method", "ggp")
    declared = {p.name for p in method_class(method).parameters}
    params = dict(settings.pop("method_params", {}))
    for name in KNOBS:
        if name in settings:
            value = settings.pop(name)
            if name in declared:
                params[name] = value
    return RunConfig(**settings, method_params=params)


@pytest.fixture(autouse=True)
def cold_shipped_grammars(request, monkeypatch):
    """In this process, runs over the shipped grammars start cold unless a test is marked
    ``shipped_portfolios``: the shipped portfolios change whenever they are rebuilt, and the search's tests
    pin what a run does from its seed. Warm starts are tested with portfolios of their own
    (``tests/test_portfolio.py``); command-line tests in subprocesses see the shipped files as users do."""
    if request.node.get_closest_marker("shipped_portfolios"):
        return
    from ggp_automl.search import portfolio

    real = portfolio.shipped_portfolio

    def beside(grammar_path):
        path = real(grammar_path)
        shipped = Path(grammar_path).resolve().parent == GRAMMARS.resolve()
        return path.with_name(path.name + ".absent-in-tests") if shipped else path

    monkeypatch.setattr(portfolio, "shipped_portfolio", beside)

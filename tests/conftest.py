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

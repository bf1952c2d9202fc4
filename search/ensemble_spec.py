"""What ``--ensemble`` may say, and what an ensemble asks of the run's plan.

Why apart from :mod:`.ensemble` (which builds the ensemble at the end of a run): the run's config checks
the option, methods size their archive by :data:`POOL`, and the loop's time-keeper reserves refit time
for :func:`ensemble_refits` — all before, and beneath, the end of the run that builds it.
"""
from __future__ import annotations

from ggp_automl.evaluation.selection import DEFAULT_SIZE

#: the kinds of ``--ensemble``
KINDS = ("caruana",)
#: candidates re-evaluated on the final split for an ensemble (when the time allows): methods keep
#: this many in their archive (:attr:`RunConfig.archive_size`)
POOL = 50
#: the members the final plan reserves refit time for (Caruana's 25 picks have 5–13 distinct
#: members in practice: notes bo-and-ensembles §6.3)
REFIT_MEMBERS = 10
#: the largest ensemble size
MAX_SIZE = 1000

def parse_ensemble(spec: str) -> tuple[str, int]:
    """``("caruana", size)`` of ``caruana`` or ``caruana:SIZE``; ValueError saying what is expected."""
    kind, colon, size = str(spec).strip().partition(":")
    if kind not in KINDS:
        raise ValueError(f"unknown ensemble {spec!r}; expected {' or '.join(f'{k}[:SIZE]' for k in KINDS)}")
    if not colon:
        return kind, DEFAULT_SIZE
    try:
        n = int(size)
    except ValueError:
        n = 0
    if not 1 <= n <= MAX_SIZE or str(n) != size.strip():
        raise ValueError(f"the ensemble size in {spec!r} must be a whole number from 1 to {MAX_SIZE}")
    return kind, n


def ensemble_refits(spec: str) -> int:
    """Refits the final plan reserves time for."""
    return min(parse_ensemble(spec)[1], REFIT_MEMBERS)

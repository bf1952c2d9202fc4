"""Which candidates will not finish in time: a runtime screen learned during the run.

Why: in a large space the running times are heavy-tailed and mostly decided by *which*
algorithms a tree combines (in the Large space on emotions, 8 in 10 candidates with PMCC,
and every candidate with LWL or EnsembleML, ran longer than 3 s, against 1 in 20 with BRq).
A time limit stops such a candidate, but only after it has used a worker for the whole
limit. The screen learns, from every evaluation of the run, how often a candidate holding
algorithm *a* ran past a given limit, and a candidate whose slowest algorithm did so in at
least :data:`SKIP_SHARE` of at least :data:`MIN_EVIDENCE` known cases is not started: it is
logged as ``skipped`` with fitness 0 and the evidence as its reason, and costs no worker time.

Evidence about a limit L, per algorithm: a successful run of t seconds says "within L" if
t ≤ L and "past L" otherwise; a time-out under a limit l ≥ L says "past L"; a time-out under
a smaller limit says nothing about L. Estimates are Laplace-smoothed, (past + 1)/(known + 2).

It never locks a kind out for good: the time-keeper's probes (every ``PROBE_EVERY``-th
candidate, run under the hard cap) are never skipped, and their outcomes are evidence like
any other, so a slow algorithm that turns out to finish comes back.
"""
from __future__ import annotations

from dataclasses import dataclass, field

#: skip a candidate when its slowest algorithm ran past the limit this often ...
SKIP_SHARE = 0.8
#: ... in at least this many cases whose outcome is known for that limit
MIN_EVIDENCE = 6


@dataclass
class RuntimeScreen:
    #: algorithm name -> [(seconds, finished)]: a finished run's time, or the limit a time-out hit
    outcomes: dict[str, list[tuple[float, bool]]] = field(default_factory=dict)
    skipped: int = 0

    def observe(self, algorithms: set[str], status: str, wall_time: float, limit: float | None) -> None:
        if status == "ok":
            outcome = (float(wall_time), True)
        elif status == "timeout" and limit:
            outcome = (float(limit), False)
        else:
            return  # errors, crashes and memory kills say nothing about time
        for name in algorithms:
            self.outcomes.setdefault(name, []).append(outcome)

    def _share_past(self, name: str, limit: float) -> tuple[float, int, int]:
        past = known = 0
        for seconds, finished in self.outcomes.get(name, ()):
            if finished:
                known += 1
                past += seconds > limit
            elif seconds >= limit:
                known += 1
                past += 1
        return (past + 1) / (known + 2), past, known

    def verdict(self, algorithms: set[str], limit: float) -> str | None:
        """Why a candidate with these algorithms should not be started under ``limit`` (None: start it)."""
        worst = None
        for name in sorted(algorithms):
            share, past, known = self._share_past(name, limit)
            if known >= MIN_EVIDENCE and share >= SKIP_SHARE and (worst is None or share > worst[0]):
                worst = (share, name, past, known)
        if worst is None:
            return None
        _, name, past, known = worst
        self.skipped += 1
        return (f"skipped: {past} of {known} earlier candidates with {name} ran past the {limit:.1f} s "
                f"limit this one would get")

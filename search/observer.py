"""Progress hooks (AutoGOAL-style loggers): the loop reports, observers display.

The loop calls every observer it was given; the CLI's live display, the Python
API's verbose mode and tests are observers. A hook must not raise: an observer
that fails is reported once and then ignored, because a broken display must never
stop a search.
"""
from __future__ import annotations

import sys


class SearchObserver:
    def on_start(self, info: dict) -> None:
        """``info``: method, budget, grammar, data name, workers, resumed (bool), …"""

    def on_evaluation(self, record: dict) -> None:
        """One finished evaluation (the evaluation-log record)."""

    def on_generation(self, record: dict) -> None:
        """One finished generation (the generation-log record, plus running counts)."""

    def on_phase(self, phase: str, detail: str = "") -> None:
        """``search``, ``final`` (re-evaluating the archive), ``refit``, ``done``."""

    def on_end(self, summary: dict) -> None:
        """The final summary (``final.json``'s content)."""


class Observers(SearchObserver):
    """Fan out to several observers, isolating their failures."""

    def __init__(self, observers=()):
        self.observers = [o for o in observers if o is not None]
        self._broken: set[int] = set()

    def _call(self, name: str, *args) -> None:
        for i, o in enumerate(self.observers):
            if i in self._broken:
                continue
            try:
                getattr(o, name)(*args)
            except Exception as exc:  # noqa: BLE001 - a display must not stop the search
                self._broken.add(i)
                print(f"warning: progress observer {type(o).__name__} failed and is disabled: {exc}",
                      file=sys.stderr)

    def on_start(self, info):
        self._call("on_start", info)

    def on_evaluation(self, record):
        self._call("on_evaluation", record)

    def on_generation(self, record):
        self._call("on_generation", record)

    def on_phase(self, phase, detail=""):
        self._call("on_phase", phase, detail)

    def on_end(self, summary):
        self._call("on_end", summary)

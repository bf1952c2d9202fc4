"""The validation predictions of evaluated candidates, kept so that ensembles cost no refitting.

Why: post-hoc ensemble selection, ensemble optimisation and DivBO (notes bo-and-ensembles §0.4)
score thousands of would-be ensembles; with every candidate's scores on the validation rows at
hand, each is a weighted mean of stored arrays — arithmetic, not training. A candidate's scores
come back from its isolated evaluation (``Split.keep_scores``): per-label scores for multi-label
data, class probabilities for single-label data, on the hold-out's validation rows or, under
``--cv``, out of fold on every row. They are stored as float32, per *data view* (the split key):
scores on different rows are never mixed.

Memory is bounded: the store holds at most ``max_bytes`` of scores over all views (default
:data:`DEFAULT_MAX_BYTES`). When a new candidate does not fit, the candidates of lowest fitness in
its view make room for it, or — when it is itself the worst — it is not kept; :meth:`summary`
reports what was kept and dropped (``final.json``). An ensemble is built from the best candidates,
so losing the worst costs nothing in practice: Emotions' 118 validation rows × 6 labels take
2.8 KB per candidate (90,000 candidates in the default 256 MB), Yeast's 484 × 14 take 27 KB.

A run directory keeps the store in an append-only file (:data:`FILE`): one pickle frame per kept
candidate, written when its evaluation finishes, so a resumed run has every finished candidate's
scores again; a frame cut off by a kill is ignored.
"""
from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np

#: the run directory's file of kept scores
FILE = "predictions.pkl"
#: the default bound on kept scores (all views together)
DEFAULT_MAX_BYTES = 256 * 2 ** 20


class PredictionStore:
    """Scores of evaluated candidates by view and phenotype, bounded in bytes, optionally on disk."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES, path: Path | None = None, run_id: str | None = None):
        self.max_bytes = int(max_bytes)
        self.path = None if path is None else Path(path)
        #: the run that writes the file (its first frame); :attr:`owner` is the run the file read back names
        self.run_id = run_id
        self.owner: str | None = None
        self._views: dict[str, dict[str, tuple[float, np.ndarray]]] = {}
        self._targets: dict[str, np.ndarray] = {}
        self.bytes = 0
        self.dropped = 0
        #: the view whose targets were set last (the search's current view)
        self.latest_view: str | None = None

    # -- filling ------------------------------------------------------------------------------
    def set_targets(self, view: str, Y: np.ndarray, search: bool = True) -> None:
        """The true targets of a view's scored rows (once per view; written to disk once); ``search``:
        a view of the search (it becomes :attr:`latest_view`), not the final re-evaluation's."""
        if search:
            self.latest_view = view
        if view in self._targets:
            return
        self._targets[view] = np.asarray(Y)
        self._append(("targets", view, np.asarray(Y), search))

    def put(self, view: str, phenotype: str, fitness: float, scores: np.ndarray) -> bool:
        """Keep one candidate's scores; False when the bound left no room for it."""
        scores = np.ascontiguousarray(scores, dtype=np.float32)
        if self._keep(view, phenotype, float(fitness), scores):
            self._append(("scores", view, phenotype, float(fitness), scores))
            return True
        return False

    def _keep(self, view: str, phenotype: str, fitness: float, scores: np.ndarray) -> bool:
        entries = self._views.setdefault(view, {})
        if phenotype in entries:
            return False
        while self.bytes + scores.nbytes > self.max_bytes:
            if not entries:
                self.dropped += 1
                return False
            worst = min(entries, key=lambda p: entries[p][0])
            if entries[worst][0] >= fitness:
                self.dropped += 1
                return False
            self.bytes -= entries.pop(worst)[1].nbytes
            self.dropped += 1
        entries[phenotype] = (fitness, scores)
        self.bytes += scores.nbytes
        return True

    def _append(self, frame: tuple) -> None:
        if self.path is None:
            return
        with open(self.path, "ab") as f:
            if self.run_id and f.tell() == 0:  # a new file says whose it is
                pickle.dump(("run", self.run_id), f, protocol=pickle.HIGHEST_PROTOCOL)
            pickle.dump(frame, f, protocol=pickle.HIGHEST_PROTOCOL)

    def load(self) -> "PredictionStore":
        """Read the file back (a resumed run); a frame cut off by a kill ends the reading. :attr:`owner`
        is then the run the file names (None for a file older than run ids): the caller refuses another's."""
        if self.path is None or not self.path.exists():
            return self
        with open(self.path, "rb") as f:
            while True:
                try:
                    frame = pickle.load(f)
                except (EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, IndexError):
                    break
                if frame[0] == "run":
                    self.owner = frame[1]
                elif frame[0] == "targets":
                    self._targets.setdefault(frame[1], frame[2])
                    if frame[3]:
                        self.latest_view = frame[1]
                elif frame[0] == "scores":
                    self._keep(*frame[1:])
        return self

    # -- reading ------------------------------------------------------------------------------
    def targets(self, view: str) -> np.ndarray | None:
        return self._targets.get(view)

    def get(self, view: str, phenotype: str) -> np.ndarray | None:
        entry = self._views.get(view, {}).get(phenotype)
        return None if entry is None else entry[1]

    def phenotypes(self, view: str) -> list[str]:
        """The view's kept candidates, best first (ties: the order they were kept)."""
        entries = self._views.get(view, {})
        return sorted(entries, key=lambda p: -entries[p][0])

    def __len__(self) -> int:
        return sum(len(v) for v in self._views.values())

    def summary(self) -> dict:
        return {"kept": len(self), "dropped": self.dropped, "bytes": self.bytes, "max_bytes": self.max_bytes}

"""A cost model: a candidate's wall time predicted before it starts (issue 25, item 6).

Why: the adaptive limit (:mod:`ggp_automl.search.timekeeper`) stops a slow candidate only after it
has used a worker for the whole limit, and the runtime screen (:mod:`ggp_automl.search.runtime`)
judges a candidate by its algorithms alone, not by how many trees, members, iterations or
neighbours it asks for, nor by the data it meets. This model predicts the wall time of a
candidate from its tree and the data view's shape, so that one predicted (its median) above its limit
is not started at all.

**Features** (:func:`features`), grammar-agnostic: the tokens of the tree's leaves (exactly the
tokens of its phenotype, so a logged record gives the same features as the tree) are read left
to right. A token that names a registered algorithm counts once for that algorithm
(``alg:A``), and with the view's shape as per-algorithm terms (``alg:A*rows``, ``alg:A*features``,
``alg:A*targets``: how that algorithm's cost grows with the data). A number is a hyper-parameter
of the algorithm last named before it, by position (``hp:A#0``, ``hp:A#1``, ... as
``sign(v)·log(1+|v|)``: iterations, members, trees, neighbours, ensemble sizes); any other word is an
option of that algorithm (``opt:A=RBFKernel``, ``opt:Vote=AVG``). The view gives ``rows``,
``features`` and ``targets`` (labels, or classes) as logarithms centred on a typical dataset, and
``fits`` (the cross-validation folds). Nothing names a grammar, so the same code reads
large.bnf, ensembles.bnf or a plug-in's grammar.

**Model**: a ridge regression of ``log(wall time)`` on those features, with its weights pulled
towards a *prior* fitted on benchmark runs (``cost_prior.json`` beside this module, written by
``benchmarks/build_cost_prior.py``) — a feature the prior does not know is pulled towards 0. It
is learned online from the run's finished evaluations: a successful one is an observation of its
time; a time-out is a *censored* one, the true time at least its limit, which the fit imputes by
the mean of the predicted distribution above the limit (a few EM rounds of a Tobit model), so
time-outs push predictions up; errors, crashes and memory kills say nothing about time. The
sufficient statistics grow with the features the run meets; a refit (one d×d inverse, d the
features seen) happens before a prediction once :data:`REFIT_SHARE` of the observations are new.
The predictive spread includes the weights' uncertainty, so an algorithm the run has hardly seen
is never judged confidently.

**Records.** Every evaluation record carries ``predicted`` (seconds, the prediction made just before
the model learned from that evaluation; null when the view is unknown) and ``shape`` (``[rows,
features, targets, fits]`` of its view), so a run's log is both a test of the model and data for
the next prior. On held-out runs of this machine (two cores, shared; ``inspect``'s line): Emotions
fold 2, 120 s: Spearman 0.86, median predicted/actual 1.00 over 54 ok evaluations; car-evaluation
with ensembles.bnf, 120 s: 0.88 and 1.04 over 20; Yeast fold 2, 150 s: 0.85 and 1.11 over 27.

**Where it decides** (:meth:`CostModel.verdict`, asked by :meth:`TimeKeeper.assign`): a candidate is not
started — logged as ``skipped`` through the runtime screen's path, the prediction as its reason —
only when all of these hold: the candidate runs under an adaptive limit (never a probe, never
before :data:`~ggp_automl.search.timekeeper.MIN_OBSERVATIONS` successes at its fidelity level, never
with ``--adaptive-timeout off``); the run has :data:`MIN_EVIDENCE` observations of its own; and
the prediction's median, ``exp(mean − SKIP_Z × spread)`` with ``SKIP_Z`` = 0, is above the limit: the
candidate is more likely than not to be stopped, and either way it would hold a worker for about the
whole limit, ten times the typical candidate's time (the adaptive limit's ``SPREAD``). Why the median and
not an optimistic end: replaying a Yeast run's log (fold 1, 3 minutes, 2026-11-28) through the model,
skipping at the median would have saved 52 of the 183 worker-seconds its 19 time-outs cost and skipped
no candidate that finished; ``SKIP_Z`` = 2 (the earlier rule) skipped none of them, and 0.5 *below* the
median would also have skipped 12 that finished, one of them within 0.04 of the run's best.

**Determinism.** The model has no randomness and no clock of its own; it depends on the
measured times of the run's evaluations, in the order they are booked, and on nothing else. It
decides only where the adaptive limit, which already depends on measured times, is in force:
a run whose candidates never meet an adaptive limit (too few successes, ``--adaptive-timeout
off``, probes) evaluates the same candidates whatever the clock says, as before. A resumed run
rebuilds the same model: it is part of the time-keeper in the checkpoint, and the evaluations
logged after the checkpoint are observed again in their logged order.

Helpers for the other stages: :func:`order_by_cost` (the final stage's candidates cheapest
first) and :func:`choose_rung` (the largest screening rung a candidate can afford under a limit:
the asynchronous loop starts a new candidate predicted within ``loop.DIRECT_SECONDS`` on the full
view there, not on the screening rung, which would cost it a second evaluation);
:func:`accuracy` is what ``inspect`` reports (Spearman rank correlation and median
predicted/actual over ok evaluations, from the records' ``predicted`` field).
"""
from __future__ import annotations

import json
import math
import threading
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from ._cost_accuracy import accuracy, spearman  # noqa: F401 (inspect's line)
from ._cost_features import (MIN_SECONDS, REF_FEATURES, REF_ROWS, REF_TARGETS, Shape,  # noqa: F401
                             features, owner_of)

#: the prior shipped with the package (``benchmarks/build_cost_prior.py`` writes it)
PRIOR_FILE = Path(__file__).with_name("cost_prior.json")
#: how strongly the weights are pulled to the prior's (in observations' worth, per unit feature)
PRIOR_STRENGTH = 2.0
#: the log-time residual spread assumed before the run has its own, counted as this many residuals
PRIOR_SIGMA, SIGMA_WEIGHT = 1.0, 10
#: the spread is never taken below this (a factor 1.28 either way)
MIN_SIGMA = 0.25
#: EM rounds imputing the censored (timed-out) observations at each refit
EM_ROUNDS = 5
#: the weights are refit once the observations since the last fit are this share of all (a refit is
#: one d×d inverse, 0.1 s with 600 features: not one per evaluation in a long run), or at least one
REFIT_SHARE = 0.05
#: no candidate is judged before the run has this many observations of its own (ok or time-out)
MIN_EVIDENCE = 30
#: not started only when ``mean − SKIP_Z × spread`` (log seconds) is above the limit's log: 0, the
#: predicted median (the module docstring says why)
SKIP_Z = 0.0

_BLAS = None


def _one_blas_thread():
    """A context in which BLAS runs on the calling thread only. The model's algebra runs in the search's
    process while the evaluation engine's threads fork children: OpenBLAS stops its thread pool at a
    fork, and a threaded call in flight then waits for ever (seen: ``np.linalg.inv`` hung in
    ``exec_blas`` when a warm child was started). Single-threaded calls use no pool."""
    global _BLAS
    if _BLAS is None:
        from threadpoolctl import ThreadpoolController

        _BLAS = ThreadpoolController()
    return _BLAS.limit(limits=1, user_api="blas")


# -- the model ---------------------------------------------------------------------------------------
def _truncated_mean(mu: np.ndarray, sigma: float, c: np.ndarray) -> np.ndarray:
    """E[y | y > c] for y ~ N(mu, sigma²), elementwise (the inverse Mills ratio)."""
    a = (c - mu) / sigma
    out = np.empty_like(a)
    for i, ai in enumerate(a):
        if ai > 8.0:
            mills = ai + 1.0 / ai
        else:
            tail = 0.5 * math.erfc(ai / math.sqrt(2.0))
            mills = math.exp(-0.5 * ai * ai) / math.sqrt(2.0 * math.pi) / max(tail, 1e-300)
        out[i] = mu[i] + sigma * mills
    return np.maximum(out, c)


class CostModel:
    """Ridge regression of log wall time, pulled to a prior, learned online with censored time-outs."""

    def __init__(self, prior: dict | None = None):
        prior = prior or {}
        self.prior_weights: dict[str, float] = {str(k): float(v) for k, v in (prior.get("weights") or {}).items()}
        self.prior_sigma = float(prior.get("sigma", PRIOR_SIGMA))
        self.strength = float(prior.get("strength", PRIOR_STRENGTH))
        #: feature name -> column
        self.index: dict[str, int] = {}
        #: every observation in the order it came: (columns, values, log seconds, ok); a time-out's
        #: seconds are its limit's. The checkpoint keeps these, not the d×d sums rebuilt from them.
        self.seen: list[tuple[np.ndarray, np.ndarray, float, bool]] = []
        self.xtx = np.zeros((0, 0))          # every observation's x xᵀ (ok and censored)
        self.xty = np.zeros(0)               # the ok observations' x y
        self.yy = 0.0
        self.n_ok = 0
        self.skipped = 0
        self._fit: tuple[np.ndarray, np.ndarray, float] | None = None  # weights, inverse, sigma
        #: how many observations the last fit saw (the next one comes after REFIT_SHARE more)
        self._fitted_at = 0
        self._lock = threading.Lock()

    @classmethod
    def from_prior(cls, path: Path | None = None) -> "CostModel":
        """A model starting from the shipped prior (an empty one when the file is missing or unreadable)."""
        try:
            prior = json.loads((path or PRIOR_FILE).read_text())
        except (OSError, ValueError):
            prior = {}
        return cls(prior if isinstance(prior, dict) else {})

    def __getstate__(self):
        state = self.__dict__.copy()
        for name in ("_lock", "xtx", "xty", "yy", "_fit"):  # rebuilt from ``seen``, in the same order
            del state[name]
        state["_fitted_dim"] = None if self._fit is None else len(self._fit[0])
        return state

    def __setstate__(self, state):
        dim = state.pop("_fitted_dim", None)
        self.__dict__.update(state)
        self._lock = threading.Lock()
        seen, done = self.seen, 0
        self._fit = None
        self.xtx, self.xty, self.yy = np.zeros((0, 0)), np.zeros(0), 0.0
        if dim is not None:  # the fit in use when the checkpoint was written, on the observations it saw
            self.seen = seen[: self._fitted_at]
            self._grow(dim)
            for obs in self.seen:
                self._add(*obs)
            with _one_blas_thread():
                self._fit = self._refit()
            self.seen, done = seen, self._fitted_at
        self._grow(len(self.index))
        for obs in seen[done:]:
            self._add(*obs)

    def _grow(self, d: int) -> None:
        grow = d - len(self.xty)
        if grow > 0:
            self.xtx = np.pad(self.xtx, ((0, grow), (0, grow)))
            self.xty = np.pad(self.xty, (0, grow))

    @property
    def censored(self) -> list[tuple[np.ndarray, np.ndarray, float]]:
        """The time-outs: (columns, values, log of the limit)."""
        return [(cols, vals, y) for cols, vals, y, ok in self.seen if not ok]

    @property
    def evidence(self) -> int:
        """Observations of this run: ok evaluations and time-outs."""
        return len(self.seen)

    # -- learning ----------------------------------------------------------------------------------
    def _columns(self, x: dict[str, float]) -> tuple[np.ndarray, np.ndarray]:
        new = [name for name in x if name not in self.index]
        if new:
            for name in new:
                self.index[name] = len(self.index)
            self._grow(len(self.index))
        cols = np.fromiter((self.index[n] for n in x), dtype=np.int64, count=len(x))
        vals = np.fromiter(x.values(), dtype=float, count=len(x))
        return cols, vals

    def observe(self, x: dict[str, float], status: str, wall_time: float, limit: float | None) -> None:
        """Learn from one finished evaluation with features ``x``: an ok one's time, a time-out's limit
        as a lower bound; any other status says nothing about time."""
        if status == "ok":
            y = math.log(max(float(wall_time), MIN_SECONDS))
        elif status == "timeout" and limit:
            y = math.log(max(float(limit), MIN_SECONDS))
        else:
            return
        with self._lock:
            cols, vals = self._columns(x)
            self.seen.append((cols, vals, y, status == "ok"))
            self.n_ok += status == "ok"
            self._add(cols, vals, y, status == "ok")

    def _add(self, cols: np.ndarray, vals: np.ndarray, y: float, ok: bool) -> None:
        self.xtx[np.ix_(cols, cols)] += np.outer(vals, vals)
        if ok:
            self.xty[cols] += vals * y
            self.yy += y * y

    def _refit(self) -> tuple[np.ndarray, np.ndarray, float]:
        """The weights, their inverse Gram matrix and the spread, from the sums (``d`` = their size)."""
        d = len(self.xty)
        names = list(self.index)[:d]
        n_ok = sum(1 for *_, ok in self.seen if ok)
        w0 = np.array([self.prior_weights.get(n, 0.0) for n in names])
        inv = np.linalg.inv(self.xtx + self.strength * np.eye(d)) if d else np.zeros((0, 0))
        base = self.xty + self.strength * w0
        sigma = max(self.prior_sigma, MIN_SIGMA)
        w = inv @ base
        censored = self.censored
        if censored:
            Xc = np.zeros((len(censored), d))
            for i, (cols, vals, _) in enumerate(censored):
                Xc[i, cols] += vals
            c = np.array([y for _, _, y in censored])
        for _ in range(EM_ROUNDS if censored else 1):
            if censored:
                w = inv @ (base + Xc.T @ _truncated_mean(Xc @ w, sigma, c))
            rss = max(self.yy - 2.0 * w @ self.xty + w @ self.xtx_ok(w), 0.0) if n_ok else 0.0
            sigma = max(math.sqrt((rss + SIGMA_WEIGHT * self.prior_sigma ** 2) / (n_ok + SIGMA_WEIGHT)), MIN_SIGMA)
        return w, inv, sigma

    def xtx_ok(self, w: np.ndarray) -> np.ndarray:
        """X_okᵀ X_ok w: the ok observations' part of the Gram matrix applied to ``w``."""
        out = self.xtx @ w
        for cols, vals, _ in self.censored:
            out[cols] -= vals * (vals @ w[cols])
        return out

    def _fitted(self) -> tuple[np.ndarray, np.ndarray, float]:
        """The current fit: refit when REFIT_SHARE of the observations are new since the last one (a
        function of the observation count alone, so a resumed run refits where the uninterrupted one did)."""
        n = len(self.seen)
        if self._fit is None or n - self._fitted_at >= max(1, int(REFIT_SHARE * n)):
            with _one_blas_thread():
                self._fit = self._refit()
            self._fitted_at = n
        return self._fit

    # -- predicting -----------------------------------------------------------------------------------
    def predict_log(self, x: dict[str, float]) -> tuple[float, float]:
        """The predicted log wall time of a candidate with features ``x``, and its spread (log)."""
        with self._lock:
            w, inv, sigma = self._fitted()
            d = len(w)  # features met since the fit are not in it yet
            known = [(self.index[n], v) for n, v in x.items() if self.index.get(n, d) < d]
            unknown = [(n, v) for n, v in x.items() if self.index.get(n, d) >= d]
            cols = np.array([c for c, _ in known], dtype=np.int64)
            vals = np.array([v for _, v in known])
            mu = float(np.dot(vals, w[cols])) if known else 0.0
            mu += sum(self.prior_weights.get(n, 0.0) * v for n, v in unknown)
            var = 1.0 + (float(np.einsum("i,ij,j->", vals, inv[np.ix_(cols, cols)], vals)) if known else 0.0)
            var += sum(v * v for _, v in unknown) / self.strength
        return mu, sigma * math.sqrt(var)

    def predict_seconds(self, x: dict[str, float]) -> float:
        """The predicted wall time (s, the median of the predicted distribution)."""
        return math.exp(min(self.predict_log(x)[0], 50.0))

    def contributions(self, x: dict[str, float]) -> dict[str, float]:
        """Each algorithm's share of the predicted log time (its terms' weight × value)."""
        with self._lock:
            w = self._fitted()[0]
            out: dict[str, float] = {}
            for n, v in x.items():
                owner = owner_of(n)
                if owner is not None:
                    i = self.index.get(n, len(w))
                    weight = w[i] if i < len(w) else self.prior_weights.get(n, 0.0)
                    out[owner] = out.get(owner, 0.0) + float(weight) * v
        return out

    def verdict(self, x: dict[str, float], limit: float) -> str | None:
        """Why a candidate with features ``x`` should not be started under ``limit`` (None: start it): only
        with :data:`MIN_EVIDENCE` observations of the run, and only when ``exp(mean − SKIP_Z × spread)`` (the
        predicted median) is above the limit."""
        if self.evidence < MIN_EVIDENCE or not limit:
            return None
        mu, spread = self.predict_log(x)
        low = mu - SKIP_Z * spread
        if low <= math.log(limit):
            return None
        self.skipped += 1
        shares = self.contributions(x)
        slowest = max(sorted(shares), key=lambda a: shares[a]) if shares else None
        mostly = f", mostly {slowest}" if slowest else ""
        bound = f"at least {math.exp(min(low, 50.0)):.1f} s, " if SKIP_Z > 0 else ""
        return (f"skipped: the cost model predicts {math.exp(min(mu, 50.0)):.1f} s ({bound}a spread of "
                f"{math.exp(min(spread, 50.0)):.1f}x{mostly}) for the {limit:.1f} s limit this one would get")

    def weights(self) -> dict[str, float]:
        """The fitted weights by feature name (what a prior file keeps)."""
        with self._lock:
            w = self._fitted()[0]
            return {n: float(w[i]) for n, i in self.index.items() if i < len(w)}

    @property
    def sigma(self) -> float:
        with self._lock:
            return self._fitted()[2]


# -- helpers for the other stages --------------------------------------------------------------------
def predict(model: CostModel, tree_or_phenotype, shape: Shape, algorithms: Iterable[str] | None = None) -> float:
    """The predicted wall time (s) of one candidate on a view of ``shape``."""
    return model.predict_seconds(features(tree_or_phenotype, shape, algorithms))


def order_by_cost(model: CostModel, candidates: Sequence, shape: Shape,
                  algorithms: Iterable[str] | None = None) -> list[int]:
    """The indices of ``candidates`` (trees or phenotypes; or objects with a ``tree``) cheapest predicted
    first; ties keep the given order. For the final stage: re-evaluate the cheap ones first."""
    names = None if algorithms is None else set(algorithms)
    costs = [predict(model, getattr(c, "tree", c), shape, names) for c in candidates]
    return sorted(range(len(candidates)), key=lambda i: (costs[i], i))


def choose_rung(model: CostModel, tree_or_phenotype, shapes: Sequence[Shape], limit: float,
                algorithms: Iterable[str] | None = None) -> int:
    """The highest screening rung (``shapes`` cheapest first, as :meth:`SearchLoop.rungs` lists them) whose
    predicted time is within ``limit``; 0 when none is."""
    best = 0
    for rung, shape in enumerate(shapes):
        if predict(model, tree_or_phenotype, shape, algorithms) <= limit:
            best = rung
    return best

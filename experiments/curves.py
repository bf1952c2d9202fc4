"""Anytime curves of an experiment grid: how good each method's incumbent is after t seconds.

Why: a final-result table hides *when* a method got there; the thesis compares search
methods by their best-so-far fitness over the time budget. Each run records its curve as
(seconds, value) points at each improvement (``curve``: best validation fitness so far;
``test_curve``: test fitness of the incumbent at each change). Between points the value
holds, so a run's curve is a right-continuous step function; before its first point the
run has no model and no value.

:func:`anytime_curves` averages those step functions over a dataset's runs per config on a
common time grid (pure numpy, testable); :func:`anytime_png` draws them. The mean at t is
over the runs that have a value at t — averaging a "no value yet" as 0 would invent a
fitness, and dropping the whole run would hide its later values.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Mapping, Union

import numpy as np

__all__ = ["anytime_curves", "anytime_png"]

PathLike = Union[str, Path]

_CURVE_KEY = {"valid": "curve", "test": "test_curve"}
_Y_LABEL = {"valid": "best validation fitness", "test": "test fitness of the incumbent"}


def _curve_key(which: str) -> str:
    if which not in _CURVE_KEY:
        raise ValueError(f"which must be 'valid' or 'test', not {which!r}")
    return _CURVE_KEY[which]


def _points(curve: Any) -> tuple[np.ndarray, np.ndarray]:
    """A recorded curve as sorted (times, values); a missing value (None) becomes NaN."""
    pts = [(float(t), math.nan if v is None else float(v)) for t, v in (curve or [])]
    # Stable sort: of points at the same time the later-recorded one wins, as in the run.
    pts.sort(key=lambda p: p[0])
    if not pts:
        return np.empty(0), np.empty(0)
    ts, vs = zip(*pts)
    return np.asarray(ts, dtype=float), np.asarray(vs, dtype=float)


def step_values(curve: Any, grid: np.ndarray) -> np.ndarray:
    """The run's value at each grid time: the last point with time <= t, NaN before the first."""
    ts, vs = _points(curve)
    out = np.full(len(grid), np.nan)
    if len(ts) == 0:
        return out
    idx = np.searchsorted(ts, grid, side="right") - 1   # index of the last point with time <= t
    has = idx >= 0
    out[has] = vs[idx[has]]
    return out


def anytime_curves(records: Iterable[Mapping[str, Any]], dataset: str, budget: float, which: str = "valid",
                   points: int = 300) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per config: (time grid 0..budget, mean over the dataset's runs of their step functions).

    Failed runs are left out (as in the tables), and so are configs none of whose runs on
    ``dataset`` has a curve of this kind. The mean starts where every run of the config has a
    value (NaN before): averaging only the runs that have started would make a curve of
    best-so-far values fall when a weaker run's first value arrives.
    """
    key = _curve_key(which)
    if not budget > 0:
        raise ValueError(f"budget must be positive, not {budget!r}")
    if points < 2:
        raise ValueError(f"points must be at least 2, not {points!r}")
    grid = np.linspace(0.0, float(budget), int(points))
    runs: dict[str, list[np.ndarray]] = {}   # first-seen config order, as in the tables
    for r in records:
        if r.get("dataset") != dataset or r.get("status") != "done" or not r.get(key):
            continue
        runs.setdefault(r["config"], []).append(step_values(r[key], grid))
    out = {}
    for config, rows in runs.items():
        stack = np.vstack(rows)
        have = ~np.isnan(stack)
        count = have.sum(axis=0)
        total = np.where(have, stack, 0.0).sum(axis=0)
        mean = np.full(len(grid), np.nan)
        np.divide(total, count, out=mean, where=count == len(rows))
        out[config] = (grid.copy(), mean)
    return out


def anytime_png(records: Iterable[Mapping[str, Any]], dataset: str, path: PathLike, budget: float,
                which: str = "valid", title: str = "") -> Path | None:
    """Draw :func:`anytime_curves` of ``dataset`` to a PNG at ``path``, one step line per config.

    Returns the path written, or None (and writes nothing) when no run of that dataset has a
    curve of that kind. ``title`` defaults to the dataset's name.
    """
    curves = anytime_curves(records, dataset, budget, which)
    if not curves:
        return None
    # Agg before pyplot: the report runs headless (no display), and importing the module for
    # the numbers alone should not touch matplotlib's global backend.
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.0, 4.2))
    try:
        for config, (x, y) in curves.items():
            # where="post": the value holds from each grid time until the next, as the run's does.
            ax.step(x, y, where="post", label=config)
        ax.set_xlim(0.0, float(budget))
        ax.set_xlabel("seconds")
        ax.set_ylabel(_Y_LABEL[which])
        ax.set_title(title or str(dataset))
        ax.grid(True, alpha=0.3)
        ax.legend(loc="best", fontsize="small")
        fig.tight_layout()
        out = Path(path)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=100, format="png", facecolor="white")
    finally:
        plt.close(fig)   # a report draws one figure per dataset; pyplot would keep them all alive
    return out

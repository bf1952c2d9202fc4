"""Multi-fidelity schedules of Auto-MEKA_spGGP (thesis §5.4, Tables 5.5–5.7, 6.6).

Why: evaluating a candidate is the whole cost of the search. Auto-MEKA's spGGP (in its final
experiments, scenario PAS-PIS) shows the candidates cheaper data early in the run and the real
data at the end: the search budget is cut into ``steps`` equal periods (the thesis: 5 periods,
one per hour of a 5-hour run), and in period ``h = 1..steps`` the candidates see

* **attributes** — ``NAS`` all of them; ``PAS`` (polynomial) the best ``m // (steps + 1 - h)``,
  i.e. m/5, m/4, m/3, m/2, m/1 (Table 5.5); ``EAS`` (exponential) the best ``m // 2**(steps - h)``,
  i.e. m/16, m/8, m/4, m/2, m/1 (Table 5.6);
* **instances** — ``NIS`` the usual 80/20 learning/validation split; ``PIS`` (polynomial) the
  training set cut into ``steps + 1`` iteratively stratified folds, learning on ``h`` of them
  and validating on the other ``steps + 1 - h`` (1/5, 2/4, 3/3, 4/2, 5/1; Table 5.7).

The thesis gives only the divisions; the rounding and the small-m rules follow the authors'
code (``Util.getNonAggressivelyMultFidAttributes`` / ``getAggressivelyMultFidAttributes`` of
Auto-MEKA): Java integer division (floor: m=100 gives PAS 20, 25, 33, 50, 100 and EAS 6, 12,
25, 50, 100); a PAS count below 3 means *all* attributes; an EAS count below 3 falls back to
the PAS count of the same period, and that below 3 to all attributes. So a period never shows
fewer than ``min(3, m)`` attributes, and the count need not grow monotonically for small m
(m=10, PAS: 10, 10, 3, 5, 10 — the authors' behaviour, kept).

Which attributes: the ranking of the label-powerset attribute evaluator with WEKA's
``GainRatioAttributeEval`` (Mulan ``LabelPowersetAttributeEvaluator`` + ``Ranker``, as the
authors' ``Util.featureSelection``): every distinct label set is one class; numeric
attributes are discretised by supervised MDL (Fayyad–Irani, ``useBetterEncoding`` on, as
GainRatioAttributeEval sets it; the project's :func:`spaces.slc._mdl.mdl_cut_points`);
nominal attributes are used as their codes; a missing value is spread over the attribute's
values in proportion to their frequency (WEKA's default ``missingMerge``); gain ratio =
information gain / split entropy, 0 when the split entropy is 0. Ties keep the order WEKA's
``Utils.sort`` quicksort leaves them in, and the sums run in the Java code's order, because
ties are common: with hundreds of label sets MDL may accept no cut, so every numeric
attribute scores 0 (yeast: all 103), or many attributes score exactly 1 (genbase, medical).
Checked against weka.jar 3.8 on 16 of the shared datasets: the same merits to the last bit
and the same ranking. The ranking is computed once per training set (on all its rows, as
the authors rank the training fold before splitting it) and cached; it costs about 5 s on
yeast and 25 s on CAL500 (502 label sets for 502 rows: MDL cuts nearly every value).

One deviation, on purpose: the authors' NIS learns on 5 and validates on 1 of 6 stratified
folds (83/17); here NIS is the project's standard 80/20 :func:`evaluation.splits.holdout_split`,
the same split as the no-multi-fidelity searches, so NAS-NIS is exactly the default protocol.

Randomness: a view draws its split from the caller's ``numpy.random.Generator`` only (the
ranking is deterministic), so the same Generator state gives the same view, and a fresh state
(the resampling every R generations, or a new period) gives a fresh split, as the authors
redraw the split at both. :attr:`Fidelity.key` names the view: resample counter, scenario,
period, and a digest of the kept columns and the row indices, so two views share a key only
when they hold the same data — safe as a fitness-cache key.
"""
from __future__ import annotations

import hashlib
import math
import weakref
from dataclasses import dataclass

import numpy as np

from .candidate import Split
from .data import Dataset

__all__ = [
    "SCENARIOS", "MIN_ATTRIBUTES", "NIS_VALID_FRACTION", "Fidelity", "FidelitySchedule", "attribute_ranking",
    "full_view", "gain_ratio_table", "gain_ratios", "n_attributes_kept", "restrict",
]

#: The six scenarios of thesis Table 6.6 (attribute part - instance part); NAS-NIS is the default.
SCENARIOS: tuple[str, ...] = ("NAS-NIS", "PAS-PIS", "EAS-PIS", "NAS-PIS", "PAS-NIS", "EAS-NIS")
#: Fewer attributes than this after a division means a fallback (see the module docstring).
MIN_ATTRIBUTES = 3
#: Validation share of the NIS (and final) learning/validation split.
NIS_VALID_FRACTION = 0.2

_SMALL = 1e-6  # weka.core.Utils.SMALL, the tolerance of Utils.eq


# --------------------------------------------------------------------------------------------
# How many attributes a period keeps
# --------------------------------------------------------------------------------------------

def n_attributes_kept(mode: str, m: int, step: int, steps: int) -> int:
    """Attributes kept in period ``step`` (1..steps) of ``steps`` by attribute mode NAS, PAS or EAS."""
    if mode not in ("NAS", "PAS", "EAS"):
        raise ValueError(f"unknown attribute mode {mode!r}; choose NAS, PAS or EAS")
    if not 1 <= step <= steps:
        raise ValueError(f"step must lie in 1..{steps}, got {step}")
    m = int(m)
    remaining = steps + 1 - step           # the authors' decreasing 'steps' counter
    polynomial = m // remaining
    if polynomial < MIN_ATTRIBUTES:
        polynomial = m
    if mode == "NAS":
        return m
    if mode == "PAS":
        return polynomial
    exponential = m // 2 ** (remaining - 1)
    return exponential if exponential >= MIN_ATTRIBUTES else polynomial


# --------------------------------------------------------------------------------------------
# Label-powerset gain-ratio ranking (WEKA GainRatioAttributeEval + Ranker)
# --------------------------------------------------------------------------------------------

def _ln_func(a: np.ndarray) -> np.ndarray:
    """WEKA's ``lnFunc``: x·ln(x), 0 for x <= 0."""
    a = np.asarray(a, dtype=np.float64)
    return np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0)


def _sequential_sum(a: np.ndarray) -> float:
    """Left-to-right sum (Java's loop order; numpy's ``sum`` is pairwise and rounds differently)."""
    a = np.asarray(a, dtype=np.float64).ravel()
    return float(np.cumsum(a)[-1]) if a.size else 0.0


def gain_ratio_table(counts: np.ndarray) -> float:
    """``weka.core.ContingencyTables.gainRatio`` of an (attribute values × classes) count table.

    Information gain / split entropy (0 when the split entropy is within 1e-6 of 0), summed in
    the Java code's order: many attributes reach the same merit (e.g. 1.0 on genbase and
    medical), and only the same rounding makes their ties — and so the ranking — WEKA's.
    """
    c = np.asarray(counts, dtype=np.float64)
    columns = np.cumsum(c, axis=0)[-1]
    total = _sequential_sum(columns)
    pre = _sequential_sum(_ln_func(columns)) - float(_ln_func(total))
    rows = np.cumsum(c, axis=1)[:, -1]
    split = _sequential_sum(_ln_func(rows))
    post = _sequential_sum(_ln_func(c)) - split
    split -= float(_ln_func(total))
    if abs(split) < _SMALL:
        return 0.0
    return (pre - post) / split


def _attribute_gain_ratio(values: np.ndarray, n_values: int, classes: np.ndarray, n_classes: int) -> float:
    """Gain ratio of one discrete attribute (codes 0..n_values-1, -1 = missing), WEKA ``missingMerge``."""
    missing = values < 0
    if missing.all():
        return 0.0                 # WEKA: no merge, the lone 'missing' value has zero split entropy
    present = ~missing
    counts = np.bincount(values[present] * n_classes + classes[present],
                         minlength=n_values * n_classes).astype(np.float64).reshape(n_values, n_classes)
    if missing.any():
        rows = counts.sum(axis=1)
        counts += np.outer(rows / rows.sum(), np.bincount(classes[missing], minlength=n_classes))
    return gain_ratio_table(counts)


def gain_ratios(train: Dataset) -> np.ndarray:
    """Label-powerset gain ratio of every feature of ``train`` (float array, one per column)."""
    from ggp_automl.spaces.slc._mdl import mdl_cut_points   # the project's Fayyad–Irani discretiser (heavy import)

    _, classes = np.unique(train.Y, axis=0, return_inverse=True)
    classes = np.asarray(classes, dtype=np.int64).reshape(-1)
    n_classes = int(classes.max()) + 1 if classes.size else 0
    categorical = set(train.categorical_features)
    merits = np.zeros(train.n_features)
    for j in range(train.n_features):
        x = train.X[:, j]
        nan = np.isnan(x)
        if j in categorical:
            values = np.where(nan, -1, np.nan_to_num(x, nan=-1.0)).astype(np.int64)
            n_values = max(len(train.categories.get(j, ())), int(values.max()) + 1, 1)
        else:
            cuts = mdl_cut_points(x, classes, n_classes, better_encoding=True)
            values = np.searchsorted(cuts, np.where(nan, 0.0, x), side="left").astype(np.int64)
            values[nan] = -1
            n_values = cuts.size + 1
        merits[j] = _attribute_gain_ratio(values, n_values, classes, n_classes)
    return merits


def _weka_sort(values: np.ndarray) -> np.ndarray:
    """``weka.core.Utils.sort(double[])`` (WEKA 3.8): indices in ascending order of ``values``.

    A port of its median-of-three quicksort, kept exact because the order it leaves *ties* in
    decides which attributes a period keeps when many gain ratios are equal — with many label
    sets, MDL often accepts no cut at all and every numeric attribute scores 0 (yeast: 198
    label sets, all 103 attributes tie), so the ranking is the tie order.
    """
    a = [float("inf") if np.isnan(v) else float(v) for v in np.asarray(values, dtype=np.float64)]
    idx = list(range(len(a)))

    def cswap(i: int, j: int) -> None:
        if a[idx[i]] > a[idx[j]]:
            idx[i], idx[j] = idx[j], idx[i]

    stack = [(0, len(a) - 1)] if len(a) > 1 else []
    while stack:
        left, right = stack.pop()
        diff = right - left
        if diff <= 0:
            continue
        if diff == 1:
            cswap(left, right)
            continue
        if diff == 2:
            cswap(left, left + 1)
            cswap(left, right)
            cswap(left + 1, right)
            continue
        c = (left + right) // 2                      # sortLeftRightAndCenter
        cswap(left, c)
        cswap(left, right)
        cswap(c, right)
        idx[c], idx[right - 1] = idx[right - 1], idx[c]
        pivot = a[idx[right - 1]]
        lo, hi = left, right - 1                     # partition(array, index, left, right, pivot)
        while True:
            lo += 1
            while a[idx[lo]] < pivot:
                lo += 1
            hi -= 1
            while a[idx[hi]] > pivot:
                hi -= 1
            if lo >= hi:
                break
            idx[lo], idx[hi] = idx[hi], idx[lo]
        idx[lo], idx[right - 1] = idx[right - 1], idx[lo]
        stack.append((left, lo - 1))
        stack.append((lo + 1, right))
    return np.asarray(idx, dtype=np.int64)


_RANKINGS: weakref.WeakKeyDictionary[Dataset, np.ndarray] = weakref.WeakKeyDictionary()


def attribute_ranking(train: Dataset) -> np.ndarray:
    """Column indices of ``train`` by decreasing label-powerset gain ratio, as WEKA's ``Ranker``.

    ``Ranker`` sorts the merits ascending with ``Utils.sort`` and reverses the result, so ties
    come out in that quicksort's order (see :func:`_weka_sort`). Computed once per Dataset
    object and cached while the object lives (read-only array).
    """
    ranking = _RANKINGS.get(train)
    if ranking is None:
        ranking = _weka_sort(gain_ratios(train))[::-1].copy()
        ranking.flags.writeable = False
        _RANKINGS[train] = ranking
    return ranking


# --------------------------------------------------------------------------------------------
# Views and schedules
# --------------------------------------------------------------------------------------------

def _frozen(a: np.ndarray) -> np.ndarray:
    out = np.array(a, dtype=np.int64)
    out.flags.writeable = False
    return out


@dataclass(frozen=True, eq=False)
class Fidelity:
    """The data one period shows the candidates: kept columns, learning and validation rows.

    Indices refer to the training set the view was made from; the arrays are sorted and
    read-only. ``step`` is 0 for :func:`full_view` (the final re-evaluation, outside the
    schedule). Compare views by ``key`` (``eq=False``: ``==`` on array fields is ambiguous).
    A cross-validated view (``--cv K``) learns from all its rows (``valid`` is empty) and
    ``folds`` holds its K ``(train, test)`` parts as positions in ``learn``.
    """

    step: int
    features: np.ndarray
    learn: np.ndarray
    valid: np.ndarray
    key: str
    folds: tuple = ()


def _make(train: Dataset, step: int, features: np.ndarray, learn: np.ndarray, valid: np.ndarray,
          label: str, folds: tuple = ()) -> Fidelity:
    features, learn, valid = _frozen(np.sort(features)), _frozen(np.sort(learn)), _frozen(np.sort(valid))
    folds = tuple((_frozen(np.sort(a)), _frozen(np.sort(b))) for a, b in folds)
    h = hashlib.blake2b(digest_size=5)
    h.update(np.array([train.n_instances, train.n_features, features.size, learn.size], dtype="<i8").tobytes())
    for part in (features, learn, valid, *(b for _, b in folds)):
        h.update(part.astype("<i8").tobytes())
    return Fidelity(step, features, learn, valid, f"{label}{f'/cv{len(folds)}' if folds else ''}#{h.hexdigest()}",
                    folds)


def _rows(train: Dataset, rng: np.random.Generator, cv: int) -> tuple[np.ndarray, np.ndarray, tuple]:
    """``(learn, valid, folds)`` of a view over all the rows: the 80/20 hold-out, or ``cv`` stratified folds."""
    if cv:
        return np.arange(train.n_instances), np.arange(0), tuple(train.task.kfold(train.Y, cv, rng))
    learn, valid = train.task.holdout(train.Y, rng, NIS_VALID_FRACTION)
    return learn, valid, ()


def _check_resample(resample: int) -> int:
    if int(resample) != resample or resample < 0:
        raise ValueError(f"resample must be an integer >= 0, got {resample!r}")
    return int(resample)


def full_view(train: Dataset, resample: int, rng: np.random.Generator, cv: int = 0) -> Fidelity:
    """All attributes, the 80/20 stratified learning/validation split — or, with ``cv``, a stratified
    ``cv``-fold cross-validation of all rows (final re-evaluation, NAS-NIS)."""
    resample = _check_resample(resample)
    learn, valid, folds = _rows(train, rng, cv)
    return _make(train, 0, np.arange(train.n_features), learn, valid, f"r{resample}/full", folds)


class FidelitySchedule:
    """One of :data:`SCENARIOS` over ``steps`` equal periods of the search budget."""

    def __init__(self, scenario: str = "NAS-NIS", steps: int = 5) -> None:
        name = str(scenario).strip().upper()
        if name not in SCENARIOS:
            raise ValueError(f"unknown multi-fidelity scenario {scenario!r}; choose one of {', '.join(SCENARIOS)} "
                             "(attributes: NAS none, PAS polynomial, EAS exponential; "
                             "instances: NIS none, PIS polynomial)")
        if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 1:
            raise ValueError(f"steps must be an integer >= 1, got {steps!r}")
        self.scenario = name
        self.steps = int(steps)
        self.attributes, self.instances = name.split("-")

    def __repr__(self) -> str:
        return f"FidelitySchedule({self.scenario!r}, steps={self.steps})"

    @property
    def is_full(self) -> bool:
        """True for NAS-NIS: every period shows all the data (no multi-fidelity)."""
        return self.scenario == "NAS-NIS"

    def n_features(self, m: int, step: int) -> int:
        """Attributes kept in period ``step`` for a dataset with ``m`` attributes."""
        return n_attributes_kept(self.attributes, m, step, self.steps)

    def n_folds(self, step: int) -> tuple[int, int]:
        """PIS: ``(folds to learn on, folds to validate on)`` of the ``steps + 1`` folds in period ``step``."""
        self._check_step(step)
        return step, self.steps + 1 - step

    def step_at(self, elapsed: float, budget: float) -> int:
        """The period (1..steps) that ``elapsed`` seconds fall in; a boundary starts the next period."""
        if not budget > 0 or not math.isfinite(budget):
            raise ValueError(f"budget must be a positive number, got {budget!r}")
        if math.isnan(elapsed):
            raise ValueError("elapsed is NaN")
        if elapsed <= 0:
            return 1
        if elapsed >= budget:
            return self.steps
        return min(self.steps, int(math.floor(elapsed * self.steps / budget)) + 1)

    def _check_step(self, step: int) -> int:
        if int(step) != step or not 1 <= step <= self.steps:
            raise ValueError(f"step must be an integer in 1..{self.steps}, got {step!r}")
        return int(step)

    def view(self, train: Dataset, step: int, resample: int, rng: np.random.Generator, cv: int = 0) -> Fidelity:
        """The data of period ``step`` for ``train``; the split is drawn from ``rng`` (advances it).
        ``cv``: a stratified ``cv``-fold cross-validation of the rows instead of the NIS hold-out
        (not with PIS, which cuts the rows itself)."""
        step = self._check_step(step)
        resample = _check_resample(resample)
        m = train.n_features
        k = self.n_features(m, step)
        features = np.arange(m) if k >= m else attribute_ranking(train)[:k]
        cv_folds: tuple = ()
        if self.instances == "PIS":
            if cv:
                raise ValueError(f"{self.scenario} cuts the rows into folds itself; cross-validation needs NIS")
            k_folds = self.steps + 1
            if train.n_instances < k_folds:
                raise ValueError(f"PIS needs at least {k_folds} training instances for {k_folds} folds, "
                                 f"got {train.n_instances}")
            folds = train.task.folds(train.Y, [1.0 / k_folds] * k_folds, rng)
            learn, valid = np.concatenate(folds[:step]), np.concatenate(folds[step:])
        else:
            learn, valid, cv_folds = _rows(train, rng, cv)
        return _make(train, step, features, learn, valid, f"r{resample}/{self.scenario}:{step}of{self.steps}",
                     cv_folds)


def restrict(train: Dataset, fidelity: Fidelity) -> Split:
    """The learning/validation arrays of ``fidelity``, with only its columns.

    ``categorical_features`` are renumbered to the kept columns' new positions.
    """
    cols = np.asarray(fidelity.features, dtype=np.int64)
    for name, idx, bound in (("features", cols, train.n_features), ("learn", fidelity.learn, train.n_instances),
                             ("valid", fidelity.valid, train.n_instances)):
        if len(idx) and (int(np.min(idx)) < 0 or int(np.max(idx)) >= bound):
            raise ValueError(f"fidelity {fidelity.key}: {name} index out of range 0..{bound - 1} "
                             "(a view of another training set?)")
    position = {int(c): i for i, c in enumerate(cols)}
    categorical = tuple(sorted(position[c] for c in train.categorical_features if c in position))
    learn, valid = np.asarray(fidelity.learn), np.asarray(fidelity.valid)
    return Split(train.X[np.ix_(learn, cols)], train.Y[learn], train.X[np.ix_(valid, cols)], train.Y[valid],
                 categorical, train.task, fidelity.folds)

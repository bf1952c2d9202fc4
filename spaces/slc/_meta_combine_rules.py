"""Vote's combination rules (WEKA ``weka.classifiers.meta.Vote -R``), on stacked member distributions.

Kept apart from the estimator so the rules can be checked by hand on a toy probability table
(``tests/test_slc_combine.py``). Every rule maps the members' class distributions, an array
``(members, rows, classes)``, to one distribution per row, then applies WEKA's
``Utils.normalize`` — with a uniform row where everything is 0 (WEKA would leave the zeros
and ``classifyInstance`` would then return a missing value, which scikit-learn cannot express):

* ``AVG``  mean of the members' probabilities (``distributionForInstanceAverage``);
* ``PROD`` their product (``distributionForInstanceProduct``), computed in log space: the
  normalised result is the same, but eleven small probabilities no longer underflow to an
  all-zero row;
* ``MAJ``  majority vote (``distributionForInstanceMajorityVoting``): each member votes for
  every class that attains its maximum probability (WEKA's exact-equality tie rule), the
  winner gets probability 1; a tie between classes is broken uniformly at random;
* ``MIN`` / ``MAX`` the per-class minimum / maximum over the members;
* ``MED``  the per-class median (``np.median``: the mean of the two middle values for an even
  number of members). WEKA's ``MED`` is for numeric classes only (its capabilities refuse a
  nominal class); the median of the probabilities is the project's extension of it.

Why the MAJ tie draw is keyed on the row: WEKA draws from one ``java.util.Random(seed)``
stream in prediction order, so a row's answer depends on which rows were predicted before
it. Here the draw comes from the seed *and the row's feature values* (a SplitMix64 hash),
so it is still uniform over the tied classes and fixed by the seed, while a row gets the
same answer in any batch, order or subset (scikit-learn's invariance checks require that).
"""
from __future__ import annotations

import numpy as np

from ._meta_common import normalise_rows

#: WEKA's ``-R`` tags, in its order
RULES = ("AVG", "PROD", "MAJ", "MIN", "MAX", "MED")

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def _splitmix(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function, element-wise on a uint64 array (wrap-around arithmetic)."""
    with np.errstate(over="ignore"):
        z = z + _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * _M1
        z = (z ^ (z >> np.uint64(27))) * _M2
        return z ^ (z >> np.uint64(31))


def row_keys(X: np.ndarray, seed: int) -> np.ndarray:
    """A uint64 key per row of ``X``, a hash of the seed and the row's values (-0.0 = 0.0)."""
    X = np.ascontiguousarray(np.asarray(X, dtype=np.float64) + 0.0)
    bits = X.view(np.uint64).reshape(X.shape[0], -1)
    keys = _splitmix(np.full(X.shape[0], int(seed) % 2**64, dtype=np.uint64))
    for j in range(bits.shape[1]):
        keys = _splitmix(keys ^ bits[:, j])
    return keys


def break_ties(top: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Column index per row among the True entries of ``top`` (n, K): the only one, or a
    uniformly drawn one keyed on ``keys`` (n,) when several tie."""
    n, k = top.shape
    priority = _splitmix(keys[:, None] ^ (np.arange(k, dtype=np.uint64)[None, :] * _M1))
    priority = np.where(top, priority, np.uint64(0))
    # a row's tied classes all carry a non-zero hash with probability 1 - K·2⁻⁶⁴; argmax
    # falls back on the first True entry if not
    choice = np.argmax(priority, axis=1)
    lost = ~top[np.arange(n), choice]
    choice[lost] = np.argmax(top[lost], axis=1)
    return choice


def majority_votes(dists: np.ndarray) -> np.ndarray:
    """(n, K) vote counts: a member votes for every class equal to its maximum probability."""
    return (dists == dists.max(axis=2, keepdims=True)).sum(axis=0).astype(np.float64)


def combine(dists, rule: str, keys: np.ndarray | None = None) -> np.ndarray:
    """Combine member distributions ``dists`` (members, n, K) by ``rule`` into (n, K) rows
    summing to one. ``keys`` (n,) drive MAJ's tie draws (see :func:`row_keys`); without them
    a tie goes to the first tied class."""
    d = np.asarray(dists, dtype=np.float64)
    if d.ndim != 3 or d.shape[0] == 0:
        raise ValueError(f"expected a (members, rows, classes) array, got shape {d.shape}")
    if rule == "AVG":
        out = d.mean(axis=0)
    elif rule == "PROD":
        with np.errstate(divide="ignore"):
            logs = np.log(np.clip(d, 0.0, None)).sum(axis=0)
        top = logs.max(axis=1, keepdims=True)
        out = np.zeros_like(logs)
        alive = np.isfinite(top[:, 0])
        out[alive] = np.exp(logs[alive] - top[alive])
    elif rule == "MAJ":
        votes = majority_votes(d)
        top = votes == votes.max(axis=1, keepdims=True)
        if keys is None:
            winner = np.argmax(top, axis=1)
        else:
            winner = break_ties(top, np.asarray(keys, dtype=np.uint64))
        out = np.zeros(votes.shape)
        out[np.arange(votes.shape[0]), winner] = 1.0
    elif rule == "MIN":
        out = d.min(axis=0)
    elif rule == "MAX":
        out = d.max(axis=0)
    elif rule == "MED":
        out = np.median(d, axis=0)
    else:
        raise ValueError(f"combination_rule must be one of {RULES}, got {rule!r}")
    return normalise_rows(out)

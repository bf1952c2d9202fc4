"""Classifier trellises and dependency networks: CT, CDN, CDT.

A chain links every label to all earlier ones; a *trellis* (Read et al. 2015) lays the
labels out on a grid and links each one only to a few grid neighbours, so the model
stays small as L grows. CT is a directed trellis inferred like MCC; CDN (Guo & Gu
2011) links every label to every other one and infers by Gibbs sampling; CDT is CDN
on a trellis neighbourhood. Where labels go on the grid can be guided by a pairwise
label-dependency matrix, also used by BCC: the grammar's ``<dp_*>`` values, MEKA's
``StatUtils.margDepMatrix`` (:func:`~spaces.mlc.label_dependency.dependency_matrix`).

Shared machinery (:class:`~spaces.mlc.label_network.LabelNetwork`, greedy and Monte-Carlo
inference) comes from ``label_network.py`` and ``network_inference.py``, the dependency
matrices from ``label_dependency.py``. Gibbs sampling runs every sweep on all test rows
at once and checks the evaluation deadline once per sweep.

Grid conventions (MEKA ``Trellis``): width -1 → ⌊√L⌋, width 0 → L (a single row, i.e.
a chain); labels fill the grid row-major in the trellis order. CT parents of a grid
position: density 1 the left and upper neighbours, 2 adds the upper-left diagonal, 3 adds
the second-left and second-up (more is the same as 3). CDT neighbours: density 1 left,
up, right, down; 2 adds the four diagonals (more is the same as 2). Density 0 = no links.
"""
from __future__ import annotations

import math

import numpy as np

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.registry import register

from .label_dependency import dependency_matrix
from .label_network import LabelNetwork, NetworkEstimator, make_rng
from .network_inference import greedy_paths, monte_carlo_search


# ============================================================================ trellis geometry

def trellis_width(width_code: int, L: int) -> int:
    """MEKA's width: -1 (or any negative) → ⌊√L⌋, 0 → L, else as given (clipped to [1, L])."""
    if L <= 0:
        return 1
    if width_code < 0:
        return max(1, int(math.isqrt(L)))
    if width_code == 0:
        return L
    return min(max(1, int(width_code)), L)


def _grid(pos: int, width: int) -> tuple[int, int]:
    return divmod(pos, width)


def ct_parent_positions(pos: int, width: int, density: int, L: int) -> list[int]:
    """Grid positions that are CT parents of ``pos`` (all earlier in row-major order)."""
    r, c = _grid(pos, width)
    out = []
    if density >= 1:
        if c >= 1:
            out.append(pos - 1)
        if r >= 1:
            out.append(pos - width)
    if density >= 2 and c >= 1 and r >= 1:
        out.append(pos - width - 1)
    if density >= 3:
        if c >= 2:
            out.append(pos - 2)
        if r >= 2:
            out.append(pos - 2 * width)
    return out


def cdt_neighbour_positions(pos: int, width: int, density: int, L: int) -> list[int]:
    """Grid positions that are CDT neighbours of ``pos`` (undirected; inside the L labels)."""
    r, c = _grid(pos, width)
    steps = []
    if density >= 1:
        steps += [(0, -1), (-1, 0), (0, 1), (1, 0)]
    if density >= 2:
        steps += [(-1, -1), (-1, 1), (1, -1), (1, 1)]
    out = []
    for dr, dc in steps:
        rr, cc = r + dr, c + dc
        q = rr * width + cc
        if rr >= 0 and 0 <= cc < width and 0 <= q < L:
            out.append(q)
    return out


def order_trellis(order, placed_links, W: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """MEKA ``CT.orderTrellis``: re-place the labels greedily by dependency.

    A random label goes first; position j then takes the unused label with the largest
    summed dependency ``W`` to the labels already at the positions ``placed_links(j)``
    (ties go to the last such label in the list, as MEKA's ``>=``).
    """
    remaining = [int(j) for j in order]
    L = len(remaining)
    if L == 0:
        return np.asarray(order, dtype=np.intp)
    placed = [remaining.pop(int(rng.integers(L)))]
    for pos in range(1, L):
        links = [placed[q] for q in placed_links(pos) if q < pos]
        best, best_w = None, -math.inf
        for cand in remaining:
            w = float(sum(W[a, cand] for a in links))
            if w >= best_w:
                best, best_w = cand, w
        remaining.remove(best)
        placed.append(best)
    return np.asarray(placed, dtype=np.intp)


def _links_to_labels(order, positions_of) -> list[np.ndarray]:
    """Map per-position links to per-label parent/neighbour label arrays."""
    order = np.asarray(order, dtype=np.intp)
    out = [None] * order.size
    for pos, j in enumerate(order):
        out[j] = order[np.asarray(positions_of(pos), dtype=np.intp)]
    return out


# ============================================================================ Gibbs sampling

def gibbs_marginals(net: LabelNetwork, X, iterations: int, collect: int, rng: np.random.Generator):
    """Batched Gibbs sampling over all rows of ``X``; returns (n, L) marginals.

    The state starts at all zeros (MEKA zeroes the test labels). Each sweep visits the
    labels in a fresh random order and samples y_j ~ P(y_j | x, y_neighbours). The last
    ``collect`` sweeps are averaged, and what is averaged is the sampling probability
    P(y_j = 1 | x, y_neighbours) (Rao-Blackwellised: the same expectation as MEKA's
    average of the 0/1 samples, with less variance, and soft even for ``collect`` = 1).
    """
    X = np.asarray(X, dtype=float)
    n, L = X.shape[0], net.n_labels
    iterations = max(1, int(iterations))
    collect = min(max(1, int(collect)), iterations)
    Xa = net.rows_of(X)
    state = np.zeros((n, L), dtype=np.int8)
    total = np.zeros((n, L))
    for sweep in range(iterations):
        check_deadline()
        gather = sweep >= iterations - collect
        for j in rng.permutation(L):
            p = net.proba(j, Xa, state[:, net.parents[j]])
            if gather:
                total[:, j] += p
            state[:, j] = rng.random(n) < p
    return total / collect


# ============================================================================ estimators

class CT(NetworkEstimator):
    """Classifier Trellis (MEKA ``CT``): a directed trellis inferred like MCC.

    Labels are laid out in label order (MEKA's seed 0) on a grid of width ``width``
    (-1 → ⌊√L⌋, 0 → L: then every label's only parent is its predecessor, a chain) and
    linked by ``density``. With ``chain_iterations`` > 0 the layout is re-ordered by
    :func:`order_trellis` on ``dependency_matrix(Y, dependency)``; as in MEKA only
    chi > 0 matters, and ``payoff`` is accepted but never used (I-22). Node j is trained
    on ``[X, true y_parents]``; inference is the greedy path plus ``inference_iterations``
    ancestral samples, keeping the most probable path (batched over rows).

    Scores: P(y_j = 1 | x, ŷ_parents) along the winning path (MEKA: the hard path).
    """

    def __init__(self, base, chain_iterations=0, width=-1, density=1, dependency="Ibf",
                 inference_iterations=10, payoff="Exact_match", random_state=0):
        self.base = base
        self.chain_iterations = chain_iterations
        self.width = width
        self.density = density
        self.dependency = dependency
        self.inference_iterations = inference_iterations
        self.payoff = payoff
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X, Y, sw = self._prepare(X, Y, sample_weight)
        L = Y.shape[1]
        width = trellis_width(int(self.width), L)
        density = int(self.density)
        order = np.arange(L)
        self.dependency_matrix_ = None
        if int(self.chain_iterations) > 0:
            W = dependency_matrix(Y, self.dependency)
            self.dependency_matrix_ = W
            order = order_trellis(order, lambda q: ct_parent_positions(q, width, density, L), W,
                                  make_rng(self.random_state, 41))
        self.width_ = width
        self.order_ = order
        parents = _links_to_labels(order, lambda q: ct_parent_positions(q, width, density, L))
        self.network_ = LabelNetwork(parents, order).fit(self.base, X, Y, sw, self.random_state)
        return self

    def _search(self, X):
        X = self._check_X(X)
        start = greedy_paths(self.network_, X)
        rng = make_rng(self.random_state, 42)
        return monte_carlo_search([self.network_], None, X, int(self.inference_iterations), rng, start)

    def predict_scores(self, X):
        return self._search(X)[1]


class CDN(NetworkEstimator):
    """Conditional Dependency Network (MEKA ``CDN``).

    Node j is trained on ``[X, true y_-j]``; prediction runs ``iterations`` Gibbs sweeps
    over all test rows at once (:func:`gibbs_marginals`).

    Scores: Gibbs marginals over the last ``collection_iterations`` sweeps, averaging
    P(y_j = 1 | x, y_-j). Deviations: MEKA accumulates only ci − 1 sweeps but divides by
    ci (an off-by-one that gives all zeros at ci = 1) and averages the 0/1 samples; its
    per-sweep shuffle is a no-op (it shuffles ``Arrays.asList(int[])``), so MEKA always
    sweeps in label order, while here each sweep uses a fresh random order, as documented.
    """

    def __init__(self, base, iterations=1000, collection_iterations=100, random_state=0):
        self.base = base
        self.iterations = iterations
        self.collection_iterations = collection_iterations
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X, Y, sw = self._prepare(X, Y, sample_weight)
        L = Y.shape[1]
        everyone = np.arange(L)
        parents = [np.delete(everyone, j) for j in range(L)]
        self.network_ = LabelNetwork(parents).fit(self.base, X, Y, sw, self.random_state)
        return self

    def predict_scores(self, X):
        X = self._check_X(X)
        return gibbs_marginals(self.network_, X, self.iterations, self.collection_iterations,
                               make_rng(self.random_state, 51))


class CDT(CDN):
    """Conditional Dependency Trellis (MEKA ``CDT``): CDN on trellis neighbourhoods.

    A random label permutation (from ``random_state``) on a grid of width ``width`` (-1 →
    ⌊√L⌋; 0 → L, a single row, which MEKA cannot run: it divides by the width 0); unless
    ``dependency`` is None the layout is re-ordered as in CT. Node j is trained on ``[X,
    true y_neighbours]`` (left, up, right, down; density ≥ 2 adds the diagonals); Gibbs
    inference and scores as :class:`CDN` (same deviations).
    """

    def __init__(self, base, width=-1, density=1, dependency="None", iterations=1000,
                 collection_iterations=100, random_state=0):
        self.base = base
        self.width = width
        self.density = density
        self.dependency = dependency
        self.iterations = iterations
        self.collection_iterations = collection_iterations
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X, Y, sw = self._prepare(X, Y, sample_weight)
        L = Y.shape[1]
        width = trellis_width(int(self.width), L)
        density = int(self.density)
        rng = make_rng(self.random_state, 61)
        order = rng.permutation(L)
        links = lambda q: cdt_neighbour_positions(q, width, density, L)  # noqa: E731
        self.dependency_matrix_ = None
        if str(self.dependency) != "None":
            W = dependency_matrix(Y, self.dependency)
            self.dependency_matrix_ = W
            order = order_trellis(order, links, W, rng)
        self.width_ = width
        self.order_ = order
        neighbours = _links_to_labels(order, links)
        self.network_ = LabelNetwork(neighbours, order).fit(self.base, X, Y, sw, self.random_state)
        return self


# ============================================================================ builders

def _trellis_gate(p) -> tuple[int, int]:
    """(width code, density) from the ``<w>`` gate: ``0 1`` → (0, 1); ``-1 <d>`` → (-1, d)."""
    # absent (or EMPTY in a user's grammar): the gate's default alternative, at <d>'s default
    vals = p.values.get("w") or p.default("w")
    code = int(float(vals[0]))
    if code == 0:
        return 0, 1
    return code, int(float(vals[1])) if len(vals) > 1 else p.int("d")


@register("CT", kind="mlc")
def build_ct(p, base):
    """CT: trellis (w gate, d), reordered by dp_ct when chi_ct > 0, MCC inference (ii)."""
    width, density = _trellis_gate(p)
    return CT(base=base, chain_iterations=p.int("chi_ct"), width=width, density=density,
              dependency=p.cat("dp_ct"), inference_iterations=p.int("ii"),
              payoff=p.cat("pof"), random_state=p.random_state)


@register("CDN", kind="mlc")
def build_cdn(p, base):
    """CDN: fully connected dependency network, i_cdn_cdt Gibbs sweeps, last ci collected."""
    return CDN(base=base, iterations=p.int("i_cdn_cdt"), collection_iterations=p.int("ci"),
               random_state=p.random_state)


@register("CDT", kind="mlc")
def build_cdt(p, base):
    """CDT: dependency network on a trellis (w gate, d, dp_cdt), Gibbs as CDN."""
    width, density = _trellis_gate(p)
    return CDT(base=base, width=width, density=density, dependency=p.cat("dp_cdt"),
               iterations=p.int("i_cdn_cdt"), collection_iterations=p.int("ci"),
               random_state=p.random_state)

"""Probabilistic classifier chains and their searches: PCC, MCC (M2CC), PMCC, BCC.

All four are classifier chains, so they share one machinery, defined here and reused
by the trellis methods (``spaces/mlc/trellis.py``):

* :class:`LabelNetwork` — one binary base model per label, model j trained on
  ``[X, true Y[:, parents_j]]`` (MEKA trains chains on the true parent labels);
* :func:`greedy_paths` — CC inference, hard argmax down the chain;
* :func:`sample_paths` — ancestral sampling, y_j ~ P(y_j | x, y_parents);
* :func:`monte_carlo_search` — MCC/PMCC/CT inference: start from the greedy path and
  keep, per row, the most probable of ``ii`` sampled paths;
* :func:`pcc_search` — PCC's batched branch-and-bound search for the most probable path;
* :func:`fit_chain`, :func:`chain_payoff` and the swap proposals — the chain-order
  searches of MCC (M2CC) and PMCC, rated by a payoff function (``_payoff.py``).

Everything runs on all rows at once (search-space notes §5: per-row calls to the
base learner would take hours); large batches are cut into blocks of about
``_BLOCK_FLOATS`` floats so memory stays bounded. Every search step, sampling
iteration and node fit calls :func:`spaces.deadline.check_deadline`.

Conventions shared by all chains here (each a documented deviation from MEKA where it
differs):

* A node's parent labels are appended to ``X`` in **label-index order**, so a node's
  model depends only on its parent *set*; chain-order searches reuse the unchanged
  nodes of the current chain instead of rebuilding the whole chain (MEKA rebuilds it).
* Joint probabilities are compared as sums of logs (MEKA multiplies, which underflows
  for large L); ties keep the earlier candidate, as MEKA's strict ``>`` does.
* Output (decision 1): per-label P(y_j = 1 | x, ŷ_parents) along the selected path,
  a probability in [0, 1], where MEKA outputs the hard path.
"""
from __future__ import annotations

import math

import numpy as np
from sklearn import config_context

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.registry import register
from ggp_automl.spaces.slc.base import fit_slc, positive_scores

from ._payoff import get_payoff, raw_payoff, utility
from .base import MLCEstimator

#: a block of augmented rows passed to a base learner holds at most this many floats (~32 MB)
_BLOCK_FLOATS = 1 << 22
#: Monte-Carlo samples are drawn in blocks of at most this many (row, label) cells
_SAMPLE_CELLS = 1 << 21
#: PCC: worst-case node evaluations per test row; sets the beam width for large L
PCC_NODE_BUDGET = 1 << 17


# ============================================================================ helpers

def make_rng(random_state, *tags: int) -> np.random.Generator:
    """A generator derived from ``random_state`` and integer ``tags`` (None: fresh entropy)."""
    if random_state is None:
        return np.random.default_rng()
    return np.random.default_rng([int(t) for t in tags] + [int(random_state) % (1 << 32)])


def node_seed(random_state, label: int) -> int:
    """The seed handed to :func:`fit_slc` for label ``label`` (same in every candidate chain)."""
    return int(make_rng(random_state, 7, label).integers(1 << 31))


def as_features(X) -> np.ndarray:
    """Dense float features, checked finite once (inner base-learner calls then skip the check)."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X contains NaN or infinity; the model imputes before the multi-label method")
    return X


class AugmentedRows:
    """``X`` with room for label columns, so ``[X, parent labels]`` is built without copying X.

    Thousands of base-learner calls (Gibbs sweeps, chain searches on the training set)
    each need ``[X, y_parents]`` for all rows; writing the parent values into a buffer
    that already holds X saves an ``hstack`` per call. The returned view is overwritten
    by the next call. Used only when the buffer fits in ``_BLOCK_FLOATS`` floats.
    """

    def __init__(self, X: np.ndarray, max_parents: int):
        self.X = X
        n, M = X.shape
        self.buffer = None
        if max_parents > 0 and n * (M + max_parents) <= _BLOCK_FLOATS:
            self.buffer = np.empty((n, M + max_parents))
            self.buffer[:, :M] = X

    def with_parents(self, values: np.ndarray) -> np.ndarray:
        k = values.shape[1]
        if k == 0:
            return self.X
        M = self.X.shape[1]
        self.buffer[:, M:M + k] = values
        return self.buffer[:, :M + k]


def _log(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)


class LabelNetwork:
    """L binary base models over ``[X, Y[:, parents[j]]]``; ``order`` is the inference order.

    A fitted helper shared by the chain and trellis estimators (not itself an estimator).
    For directed methods (chains, trellises) ``order`` is topological: every parent of a
    label comes before it. For CDN/CDT the parents are undirected neighbours and ``order``
    is only the order in which the nodes were fitted.
    """

    def __init__(self, parents, order=None):
        self.parents = [np.sort(np.asarray(pa, dtype=np.intp)) for pa in parents]
        L = len(self.parents)
        self.order = np.arange(L) if order is None else np.asarray(order, dtype=np.intp)
        self.models: list = [None] * L

    @property
    def n_labels(self) -> int:
        return len(self.parents)

    @property
    def max_parents(self) -> int:
        return max((pa.size for pa in self.parents), default=0)

    def rows_of(self, X) -> "AugmentedRows":
        """``X`` prepared for repeated full-batch calls (see :class:`AugmentedRows`)."""
        return X if isinstance(X, AugmentedRows) else AugmentedRows(X, self.max_parents)

    def fit(self, base, X, Y, sample_weight=None, random_state=0, reuse: "LabelNetwork | None" = None):
        """Fit every node; nodes whose parent set equals ``reuse``'s are shared, not refitted."""
        for j in self.order:
            check_deadline()
            pa = self.parents[j]
            if reuse is not None and np.array_equal(reuse.parents[j], pa):
                self.models[j] = reuse.models[j]
                continue
            Z = np.hstack([X, Y[:, pa]]) if pa.size else X
            self.models[j] = fit_slc(base, Z, Y[:, j], sample_weight, node_seed(random_state, j))
        return self

    def proba(self, j: int, X: np.ndarray, parent_values: np.ndarray, rows=None) -> np.ndarray:
        """P(y_j = 1) for each row of ``parent_values`` (the values of ``parents[j]``).

        ``rows`` maps those rows to rows of ``X`` (default: aligned with ``X``); work is
        cut into blocks so that no augmented matrix exceeds ``_BLOCK_FLOATS`` floats.
        ``X`` may be an :class:`AugmentedRows` (rows aligned). Base learners skip their
        finiteness check: features are checked once on entry (:func:`as_features`).
        """
        model = self.models[j]
        if isinstance(X, AugmentedRows):
            if X.buffer is not None and rows is None:
                with config_context(assume_finite=True):
                    return np.clip(positive_scores(model, X.with_parents(parent_values)), 0.0, 1.0)
            X = X.X
        count = parent_values.shape[0]
        width = X.shape[1] + parent_values.shape[1]
        step = max(1, _BLOCK_FLOATS // max(1, width))
        out = np.empty(count)
        for start in range(0, count, step):
            stop = min(count, start + step)
            Xb = X[start:stop] if rows is None else X[rows[start:stop]]
            if parent_values.shape[1]:
                Xb = np.hstack([Xb, parent_values[start:stop]])
            with config_context(assume_finite=True):
                out[start:stop] = positive_scores(model, Xb)
        return np.clip(out, 0.0, 1.0)


def chain_parents(order) -> list[np.ndarray]:
    """Classifier-chain parents: every label earlier in ``order``."""
    order = np.asarray(order, dtype=np.intp)
    parents = [None] * order.size
    for pos, j in enumerate(order):
        parents[j] = order[:pos]
    return parents


def fit_chain(base, X, Y, order, sample_weight=None, random_state=0, reuse=None) -> LabelNetwork:
    """A fitted classifier chain (CC) with the given label order."""
    return LabelNetwork(chain_parents(order), order).fit(base, X, Y, sample_weight, random_state, reuse)


# ============================================================================ inference

def path_log_probability(paths: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """log Π_j P(y_j = path_j | ...) from the per-label P(y_j = 1 | ...) along the path."""
    return _log(np.where(paths == 1, scores, 1.0 - scores)).sum(axis=1)


def greedy_paths(net: LabelNetwork, X, resume=None):
    """CC inference: ŷ_j = [P(y_j=1 | x, ŷ_parents) > 0.5] in order (ties → 0, as WEKA's argmax).

    ``resume = (paths, scores, first)`` reuses another network's greedy result for the
    first ``first`` positions of ``net.order``, which must hold the same labels with the
    same parents and models (a chain-order proposal changes nothing before its first
    swapped position). Returns (paths int8 (n, L), scores (n, L), log joint probability (n,)).
    """
    n, L = X.shape[0], net.n_labels
    X = net.rows_of(X)
    if resume is None:
        paths, scores, first = np.zeros((n, L), dtype=np.int8), np.zeros((n, L)), 0
    else:
        paths, scores, first = resume[0].copy(), resume[1].copy(), int(resume[2])
    for j in net.order[first:]:
        check_deadline()
        p = net.proba(j, X, paths[:, net.parents[j]])
        paths[:, j] = p > 0.5
        scores[:, j] = p
    return paths, scores, path_log_probability(paths, scores)


def sample_paths(net: LabelNetwork, X, rows, rng: np.random.Generator):
    """Ancestral sampling: one path per entry of ``rows`` (indices into ``X``)."""
    count = len(rows)
    L = net.n_labels
    paths = np.zeros((count, L), dtype=np.int8)
    scores = np.zeros((count, L))
    logp = np.zeros(count)
    for j in net.order:
        check_deadline()
        p = net.proba(j, X, paths[:, net.parents[j]], rows)
        y = rng.random(count) < p
        paths[:, j] = y
        scores[:, j] = p
        logp += _log(np.where(y, p, 1.0 - p))
    return paths, scores, logp


def path_scores(net: LabelNetwork, X, paths):
    """P(y_j = 1 | x, given path's parents) for every label, and the path's log probability."""
    X = net.rows_of(X)
    scores = np.zeros(paths.shape)
    for j in net.order:
        check_deadline()
        scores[:, j] = net.proba(j, X, paths[:, net.parents[j]])
    return scores, path_log_probability(paths, scores)


def monte_carlo_search(networks, weights, X, n_iter: int, rng: np.random.Generator, start):
    """MCC/PMCC/CT inference: improve ``start`` = (paths, scores, logp) by ``n_iter`` samples.

    Iteration t draws, for every row, a network m ~ ``weights`` (a single network: always
    it) and a path from it; the row keeps the path if its joint probability under m is
    strictly larger than the best so far. Samples are drawn in blocks over all rows.
    """
    paths, scores, logp = (a.copy() for a in start)
    n, L = paths.shape
    if n == 0 or n_iter <= 0:
        return paths, scores, logp
    per_block = max(1, min(n_iter, _SAMPLE_CELLS // max(1, n * L)))
    for begin in range(0, n_iter, per_block):
        check_deadline()
        b = min(per_block, n_iter - begin)
        if len(networks) == 1:
            assign = np.zeros((b, n), dtype=np.intp)
        else:
            assign = rng.choice(len(networks), size=(b, n), p=weights)
        blk_paths = np.zeros((b, n, L), dtype=np.int8)
        blk_scores = np.zeros((b, n, L))
        blk_logp = np.full((b, n), -np.inf)
        for m in np.unique(assign):
            tt, rr = np.nonzero(assign == m)
            sp, ss, sl = sample_paths(networks[m], X, rr, rng)
            blk_paths[tt, rr] = sp
            blk_scores[tt, rr] = ss
            blk_logp[tt, rr] = sl
        for t in range(b):
            better = blk_logp[t] > logp
            paths[better] = blk_paths[t, better]
            scores[better] = blk_scores[t, better]
            logp[better] = blk_logp[t, better]
    return paths, scores, logp


def pcc_beam_width(L: int) -> int:
    """PCC's per-row frontier cap: 2^(L-1) (exhaustive) up to L = 14, then PCC_NODE_BUDGET // L."""
    if L <= 1:
        return 1
    return max(1, min(1 << (L - 1), PCC_NODE_BUDGET // L))


def pcc_search(net: LabelNetwork, X, beam_width: int):
    """The most probable label vector per row under a chain: exact branch and bound.

    Depth by depth (chain order), every surviving prefix of every row is extended by
    both values of the next label in one batched call. A prefix whose probability is
    below the row's greedy path probability is pruned (probabilities only shrink along
    a path, so it cannot win); this keeps the search exact. If a row still has more than
    ``beam_width`` prefixes, only the ``beam_width`` most probable are kept (a beam
    search); the greedy path stays the fallback, so the result is never worse than CC.
    With ``beam_width >= 2^(L-1)`` the cap never binds and the search is exhaustive.

    Returns (paths, scores along the best path, log joint probability).
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    L = net.n_labels
    best_paths, _, best_logp = greedy_paths(net, X)
    if L == 0 or n == 0:
        scores, _ = path_scores(net, X, best_paths)
        return best_paths, scores, best_logp
    beam_width = max(1, int(beam_width))
    # rows are processed in blocks so that a block's frontier (prefixes x labels) stays
    # within about 2^22 cells
    rows_per_block = max(1, (1 << 22) // (2 * beam_width * max(L, 8)))
    for r0 in range(0, n, rows_per_block):
        block = np.arange(r0, min(n, r0 + rows_per_block))
        bound = best_logp[block]
        rows = np.arange(block.size)                          # frontier: row (within block)
        prefix = np.zeros((block.size, L), dtype=np.int8)     # frontier: label values so far
        logp = np.zeros(block.size)                           # frontier: log P(prefix)
        for depth, j in enumerate(net.order):
            check_deadline()
            p = net.proba(j, X, prefix[:, net.parents[j]], block[rows])
            # children: value 0 then value 1 of every prefix (keeps rows sorted)
            rows = np.repeat(rows, 2)
            prefix = np.repeat(prefix, 2, axis=0)
            prefix[1::2, j] = 1
            with np.errstate(divide="ignore"):
                logp = np.repeat(logp, 2) + np.log(np.column_stack([1.0 - p, p]).ravel())
            keep = logp >= bound[rows]
            rows, prefix, logp = rows[keep], prefix[keep], logp[keep]
            if depth < L - 1 and rows.size:
                # per-row beam cap: rank prefixes within a row by probability
                srt = np.lexsort((-logp, rows))
                rows_s = rows[srt]
                first = np.searchsorted(rows_s, rows_s, side="left")
                rank = np.arange(rows_s.size) - first
                sel = np.sort(srt[rank < beam_width])
                rows, prefix, logp = rows[sel], prefix[sel], logp[sel]
        if rows.size:
            srt = np.lexsort((-logp, rows))
            rows_s = rows[srt]
            head = srt[np.r_[True, rows_s[1:] != rows_s[:-1]]]
            better = logp[head] > bound[rows[head]]
            target = block[rows[head][better]]
            best_paths[target] = prefix[head][better]
            best_logp[target] = logp[head][better]
    scores, _ = path_scores(net, X, best_paths)
    return best_paths, scores, best_logp


# ============================================================================ chain-order search

def chain_payoff(net: LabelNetwork, X, Y, payoff: str, resume=None):
    """Rate a chain by its greedy predictions on (X, Y) — MEKA rates on the training set.

    Returns (utility, raw payoff, (paths, scores)); ``resume`` as in :func:`greedy_paths`.
    """
    paths, scores, _ = greedy_paths(net, X, resume)
    return utility(payoff, Y, paths, scores), raw_payoff(payoff, Y, paths, scores), (paths, scores)


def first_difference(order, other) -> int:
    """The first position at which two label orders differ (their length if none)."""
    diff = np.flatnonzero(np.asarray(order) != np.asarray(other))
    return int(diff[0]) if diff.size else len(order)


def swap_proposal(order, rng: np.random.Generator) -> np.ndarray:
    """Swap two distinct random positions (MEKA ``A.swap``; a no-op draw is skipped)."""
    order = np.array(order, copy=True)
    if order.size >= 2:
        i, k = rng.choice(order.size, size=2, replace=False)
        order[i], order[k] = order[k], order[i]
    return order


def temperature_proposal(order, rng: np.random.Generator, t: int, beta: float) -> np.ndarray:
    """PMCC's proposal with temperature (``-O 1``): position j ∝ (1/L)^(beta·t/(1+j)), then k ≠ j."""
    order = np.array(order, copy=True)
    L = order.size
    if L < 2:
        return order
    w = np.power(1.0 / L, beta * t / (1.0 + np.arange(L)))
    w /= w.sum()
    j = rng.choice(L, p=w)
    w[j] = 0.0
    w /= w.sum()
    k = rng.choice(L, p=w)
    order[j], order[k] = order[k], order[j]
    return order


# ============================================================================ estimators

class NetworkEstimator(MLCEstimator):
    """Shared fit-time plumbing: validated arrays and the base learner."""

    def _prepare(self, X, Y, sample_weight):
        X = as_features(X)
        Y = self._validate_Y(Y)
        if X.shape[0] != Y.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but Y has {Y.shape[0]}")
        self.n_features_in_ = X.shape[1]
        sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)
        return X, Y, sw

    def _check_X(self, X):
        X = as_features(X)
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, expected {self.n_features_in_}")
        return X


class PCC(NetworkEstimator):
    """Probabilistic Classifier Chains (MEKA ``PCC``): CC training, Bayes-optimal search.

    Trained exactly as CC (identity order, MEKA's default seed 0; node j on ``[X, true
    y_<j]``). Prediction finds argmax_y Π_j P(y_j | x, y_<j) with :func:`pcc_search`, a
    batched branch-and-bound search that is exact (same argmax as MEKA's enumeration)
    for L ≤ 14. Beyond that the per-row frontier is capped at ``PCC_NODE_BUDGET // L``
    prefixes (beam search, never worse than the greedy CC path), where MEKA enumerates
    only the first 10^6 label vectors. ``beam_width`` overrides the cap.

    Scores: P(y_j = 1 | x, ŷ_<j) along the most probable path (MEKA's later PCC output).
    """

    def __init__(self, base, beam_width=None, random_state=0):
        self.base = base
        self.beam_width = beam_width
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X, Y, sw = self._prepare(X, Y, sample_weight)
        self.order_ = np.arange(Y.shape[1])
        self.network_ = fit_chain(self.base, X, Y, self.order_, sw, self.random_state)
        return self

    def _search(self, X):
        X = self._check_X(X)
        beam = self.beam_width if self.beam_width is not None else pcc_beam_width(self.n_labels_)
        return pcc_search(self.network_, X, beam)

    def predict_scores(self, X):
        return self._search(X)[1]


class MCC(NetworkEstimator):
    """Monte-Carlo Classifier Chains (MEKA ``MCC``; M2CC when ``chain_iterations`` > 0).

    Training: the identity order (MEKA seed 0); with chi > 0, chi proposals each swap two
    random positions of the best order so far, fit a CC and rate its greedy predictions
    on the training set with ``payoff``; a proposal is kept if strictly better. Decision
    4: gains are maximised and losses minimised (MEKA maximises the raw value). The two
    swapped positions are always distinct (MEKA may draw a no-op swap).
    Inference: the greedy CC path, then ``inference_iterations`` ancestral samples per row
    (batched over rows); the most probable path wins.

    Scores: P(y_j = 1 | x, ŷ_parents) along the winning path (MEKA: the hard path).
    Fitted: ``order_``, ``network_``, ``payoff_`` (raw payoff of the kept chain, NaN without
    a search) and ``search_payoffs_`` (raw payoff of every chain rated, in order).
    """

    def __init__(self, base, chain_iterations=0, inference_iterations=10,
                 payoff="Exact_match", random_state=0):
        self.base = base
        self.chain_iterations = chain_iterations
        self.inference_iterations = inference_iterations
        self.payoff = payoff
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X, Y, sw = self._prepare(X, Y, sample_weight)
        get_payoff(self.payoff)
        L = Y.shape[1]
        rng = make_rng(self.random_state, 11)
        order = np.arange(L)
        net = fit_chain(self.base, X, Y, order, sw, self.random_state)
        self.search_payoffs_ = []
        self.payoff_ = math.nan
        if int(self.chain_iterations) > 0:
            best_u, best_raw, state = chain_payoff(net, X, Y, self.payoff)
            self.search_payoffs_.append(best_raw)
            for _ in range(int(self.chain_iterations)):
                check_deadline()
                cand = swap_proposal(order, rng)
                cand_net = fit_chain(self.base, X, Y, cand, sw, self.random_state, reuse=net)
                u, raw, cand_state = chain_payoff(cand_net, X, Y, self.payoff,
                                                  resume=(*state, first_difference(order, cand)))
                self.search_payoffs_.append(raw)
                if u > best_u:
                    order, net, best_u, best_raw, state = cand, cand_net, u, raw, cand_state
            self.payoff_ = best_raw
        self.order_ = order
        self.network_ = net
        return self

    def _search(self, X):
        X = self._check_X(X)
        start = greedy_paths(self.network_, X)
        rng = make_rng(self.random_state, 12)
        return monte_carlo_search([self.network_], None, X, int(self.inference_iterations), rng, start)

    def predict_scores(self, X):
        return self._search(X)[1]


class PMCC(NetworkEstimator):
    """Population of Monte-Carlo Classifier Chains (MEKA ``PMCC``).

    Training: a random first order; ``chain_iterations`` proposals (a random swap of the
    current order, or with ``temperature`` MEKA's cooling proposal with ``beta``), each a
    CC rated by ``payoff`` on the training set. A proposal replaces the weakest of the
    ``population_size`` members if strictly better (empty slots are weakest); accepted
    proposals become the current order. Payoffs are oriented by decision 4 (losses
    minimised) and the member weights are the normalised utilities (``_payoff.utility``).
    MEKA throws when chi < population size; here the population is whatever got filled.
    Inference: the greedy path of the best member, then ``inference_iterations`` rounds in
    which every row draws a member m ~ weights and a path from m; the most probable path
    (under the member that sampled it) wins.

    Scores: P(y_j = 1 | x, ŷ_parents) along the winning path, from the member that produced
    it (MEKA: the hard path). Fitted: ``networks_``, ``orders_``, ``weights_``, ``payoffs_``.
    """

    def __init__(self, base, population_size=10, chain_iterations=50, inference_iterations=10,
                 beta=0.03, temperature=False, payoff="Exact_match", random_state=0):
        self.base = base
        self.population_size = population_size
        self.chain_iterations = chain_iterations
        self.inference_iterations = inference_iterations
        self.beta = beta
        self.temperature = temperature
        self.payoff = payoff
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        X, Y, sw = self._prepare(X, Y, sample_weight)
        get_payoff(self.payoff)
        L = Y.shape[1]
        M = max(1, int(self.population_size))
        rng = make_rng(self.random_state, 21)
        order = rng.permutation(L)
        net = fit_chain(self.base, X, Y, order, sw, self.random_state)
        u, raw, state = chain_payoff(net, X, Y, self.payoff)
        nets, orders = [net] + [None] * (M - 1), [order] + [None] * (M - 1)
        utils = np.full(M, -np.inf)
        raws = np.full(M, np.nan)
        utils[0], raws[0] = u, raw
        current, current_net = order, net
        for t in range(int(self.chain_iterations)):
            check_deadline()
            if self.temperature:
                cand = temperature_proposal(current, rng, t, float(self.beta))
            else:
                cand = swap_proposal(current, rng)
            cand_net = fit_chain(self.base, X, Y, cand, sw, self.random_state, reuse=current_net)
            u, raw, cand_state = chain_payoff(cand_net, X, Y, self.payoff,
                                              resume=(*state, first_difference(current, cand)))
            weakest = int(np.argmin(utils))
            if u > utils[weakest]:
                nets[weakest], orders[weakest] = cand_net, cand
                utils[weakest], raws[weakest] = u, raw
                current, current_net, state = cand, cand_net, cand_state
        filled = np.flatnonzero(np.isfinite(utils))
        self.networks_ = [nets[i] for i in filled]
        self.orders_ = [orders[i] for i in filled]
        self.payoffs_ = raws[filled]
        w = utils[filled]
        self.weights_ = w / w.sum() if w.sum() > 0 else np.full(filled.size, 1.0 / filled.size)
        return self

    def _search(self, X):
        X = self._check_X(X)
        best = int(np.argmax(self.weights_))
        start = greedy_paths(self.networks_[best], X)
        rng = make_rng(self.random_state, 22)
        return monte_carlo_search(self.networks_, self.weights_, X, int(self.inference_iterations),
                                  rng, start)

    def predict_scores(self, X):
        return self._search(X)[1]


# ---------------------------------------------------------------------------- BCC

def lead_matrix(base, X, Y, sample_weight=None, random_state=0) -> np.ndarray:
    """MEKA's LEAD conditional-dependence matrix (``StatUtils.LEAD2``), symmetric.

    Shuffle the rows (seed), fit BR on the first 60 %, threshold its P(y_j=1) at 0.5 on
    the remaining 40 %, and compare the residuals E = y − ŷ ∈ {−1, 0, 1} of label pairs:
    Σ_v (P(E_j=v, E_k=v) − P(E_j=v)P(E_k=v))² / (P(E_j=v)P(E_k=v)) − 2.706 (χ² critical
    value, 1 dof, p = 0.10), with MEKA's +0.0001 count smoothing.
    """
    n, L = Y.shape
    perm = make_rng(random_state, 31).permutation(n)
    n_train = n * 60 // 100
    tr, te = perm[:n_train], perm[n_train:]
    if te.size == 0 or tr.size == 0:
        return np.zeros((L, L))
    sw = None if sample_weight is None else np.asarray(sample_weight, dtype=float)[tr]
    E = np.empty((te.size, L), dtype=np.int8)
    for j in range(L):
        check_deadline()
        model = fit_slc(base, X[tr], Y[tr, j], sw, node_seed(random_state, j))
        E[:, j] = Y[te, j] - (positive_scores(model, X[te]) >= 0.5)
    N = te.size
    W = np.zeros((L, L))
    for v in (0, 1, -1):
        ind = (E == v).astype(float)
        p = (ind.sum(axis=0) + 0.0001) / N
        joint = (ind.T @ ind + 0.0001) / N
        expected = np.outer(p, p)
        W += (joint - expected) ** 2 / expected
    W -= 2.706
    W = np.triu(W, 1)
    return W + W.T


def max_spanning_tree_order(W: np.ndarray, root: int = 0):
    """Maximum spanning tree of the complete graph weighted by ``W``, visited from ``root``.

    Returns (breadth-first order, parent of each label or -1). Every pair gets an edge,
    also for all-zero or tied weights (then the tree is arbitrary but deterministic).
    """
    from scipy.sparse.csgraph import breadth_first_order, minimum_spanning_tree

    L = W.shape[0]
    if L == 1:
        return np.array([root]), np.array([-1])
    W = np.nan_to_num(np.asarray(W, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    off = ~np.eye(L, dtype=bool)
    # strictly positive costs whose minimum spanning tree is W's maximum spanning tree
    cost = np.where(off, W[off].max() - W + 1.0, 0.0)
    mst = minimum_spanning_tree(np.triu(cost, 1))
    order, pred = breadth_first_order(mst, root, directed=False, return_predecessors=True)
    parent = np.where(pred < 0, -1, pred)
    return np.asarray(order, dtype=np.intp), np.asarray(parent, dtype=np.intp)


class BCC(NetworkEstimator):
    """Bayesian Classifier Chains (MEKA ``BCC``): a chain shaped as a label tree.

    The pairwise dependency matrix ``dependency`` (C, I, Ib, Ibf, H, Hbf, X, F, None: see
    ``trellis.dependency_matrix``; or LEAD: :func:`lead_matrix`) gives a maximum spanning
    tree, rooted at label 0 (MEKA's seed 0) and visited breadth-first; node j is trained
    on ``[X, true y_parent(j)]`` and inference is greedy, as CC. Hbf and None give an
    all-zero matrix, as in MEKA (I-23), hence an arbitrary tree. Tie-breaking among equal
    weights differs from MEKA's Kruskal.

    Scores: P(y_j = 1 | x, ŷ_parent(j)) along the greedy path (MEKA: the hard path).
    """

    def __init__(self, base, dependency="Ibf", random_state=0):
        self.base = base
        self.dependency = dependency
        self.random_state = random_state

    def fit(self, X, Y, sample_weight=None):
        from .trellis import dependency_matrix   # trellis.py imports this module

        X, Y, sw = self._prepare(X, Y, sample_weight)
        L = Y.shape[1]
        if str(self.dependency) == "LEAD":
            W = lead_matrix(self.base, X, Y, sw, self.random_state)
        else:
            W = dependency_matrix(Y, self.dependency)
        self.dependency_matrix_ = W
        order, parent = max_spanning_tree_order(W, root=0) if L else (np.arange(0), np.arange(0))
        self.order_ = order
        self.parent_ = parent
        parents = [np.array([pa]) if pa >= 0 else np.array([], dtype=np.intp) for pa in parent]
        self.network_ = LabelNetwork(parents, order).fit(self.base, X, Y, sw, self.random_state)
        return self

    def predict_scores(self, X):
        X = self._check_X(X)
        return greedy_paths(self.network_, X)[1]


# ============================================================================ builders

@register("PCC", kind="mlc")
def build_pcc(p, base):
    """PCC: CC training, exact (L <= 14) or beam-capped Bayes-optimal path search."""
    return PCC(base=base, random_state=p.random_state)


@register("MCC", kind="mlc")
def build_mcc(p, base):
    """MCC / M2CC: chain-order search (chi_mcc, pof) and Monte-Carlo inference (ii)."""
    return MCC(base=base, chain_iterations=p.int("chi_mcc"), inference_iterations=p.int("ii"),
               payoff=p.cat("pof"), random_state=p.random_state)


@register("PMCC", kind="mlc")
def build_pmcc(p, base):
    """PMCC: population (ps) of chains from chi_PMCC proposals (ts, B), pof, ii samples."""
    return PMCC(base=base, population_size=p.int("ps"), chain_iterations=p.int("chi_PMCC"),
                inference_iterations=p.int("ii"), beta=p.real("B"),
                temperature=bool(p.int("ts")), payoff=p.cat("pof"),
                random_state=p.random_state)


@register("BCC", kind="mlc")
def build_bcc(p, base):
    """BCC: maximum-spanning-tree chain over the dp_bcc dependency matrix (or LEAD)."""
    dependency = "LEAD" if p.has("LEAD") else p.cat("dp_bcc")
    return BCC(base=base, dependency=dependency, random_state=p.random_state)

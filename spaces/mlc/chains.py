"""Probabilistic classifier chains and their searches: PCC, MCC (M2CC), PMCC, BCC.

All four are classifier chains: a :class:`~spaces.mlc.label_network.LabelNetwork` in which
every label's parents are the labels before it in a chain order (``label_network.py``),
inferred by ``network_inference.py`` (greedy, Monte-Carlo, PCC's branch and bound) — the
machinery the trellis methods (``trellis.py``) share. This module holds what is the chains'
own:

* :func:`chain_payoff` and the swap proposals — the chain-order searches of MCC (M2CC) and
  PMCC, rated by a payoff function (``_payoff.py``);
* BCC's label tree, a maximum spanning tree (:func:`max_spanning_tree_order`) of a
  dependency matrix (``label_dependency.py``);
* the four estimators and their builders.

The network and its inference were once part of this module; their names that callers
import from here (``fit_chain``, ``greedy_paths``, ``path_scores``, ``pcc_search``, …) still
work, and so do models pickled then (a chain's ``network_`` is a ``LabelNetwork``).

Conventions shared by all chains here (each a documented deviation from MEKA where it
differs):

* Chain-order searches reuse the unchanged nodes of the current chain instead of
  rebuilding the whole chain (MEKA rebuilds it): a node's model depends only on its parent
  *set* (``label_network.py``).
* Joint probabilities are compared as sums of logs (MEKA multiplies, which underflows
  for large L); ties keep the earlier candidate, as MEKA's strict ``>`` does.
* Output (decision 1): per-label P(y_j = 1 | x, ŷ_parents) along the selected path,
  a probability in [0, 1], where MEKA outputs the hard path.
"""
from __future__ import annotations

import math

import numpy as np

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.registry import register

from ._payoff import get_payoff, raw_payoff, utility
from .label_dependency import dependency_matrix, lead_matrix
from .label_network import LabelNetwork, NetworkEstimator, NodeCache, fit_chain, make_rng
from .network_inference import greedy_paths, monte_carlo_search, pcc_beam_width, pcc_search
from .network_inference import path_scores  # noqa: F401 - imported from here by callers (see above)


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
            nodes = NodeCache()
            for _ in range(int(self.chain_iterations)):
                check_deadline()
                cand = swap_proposal(order, rng)
                known = nodes.rating(cand)
                if known is not None:           # rated before, when the best was no better: rejected again
                    self.search_payoffs_.append(known)
                    continue
                cand_net = fit_chain(self.base, X, Y, cand, sw, self.random_state, reuse=net, nodes=nodes)
                u, raw, cand_state = chain_payoff(cand_net, X, Y, self.payoff,
                                                  resume=(*state, first_difference(order, cand)))
                nodes.rate(cand, raw)
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
        nodes = NodeCache()
        for t in range(int(self.chain_iterations)):
            check_deadline()
            if self.temperature:
                cand = temperature_proposal(current, rng, t, float(self.beta))
            else:
                cand = swap_proposal(current, rng)
            weakest = int(np.argmin(utils))
            known = nodes.rating(cand)
            if known is not None and not known > utils[weakest]:
                continue                         # its utility is known and would not be accepted
            cand_net = fit_chain(self.base, X, Y, cand, sw, self.random_state, reuse=current_net, nodes=nodes)
            u, raw, cand_state = chain_payoff(cand_net, X, Y, self.payoff,
                                              resume=(*state, first_difference(current, cand)))
            nodes.rate(cand, u)
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
    ``label_dependency.dependency_matrix``; or LEAD: :func:`lead_matrix`) gives a maximum spanning
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

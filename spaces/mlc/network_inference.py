"""Inference over a directed label network (chains and trellises): the label vector to predict.

* :func:`greedy_paths` — CC inference, hard argmax down the chain;
* :func:`sample_paths` — ancestral sampling, y_j ~ P(y_j | x, y_parents);
* :func:`path_scores` — the per-label probabilities along a given path;
* :func:`monte_carlo_search` — MCC/PMCC/CT inference: start from the greedy path and
  keep, per row, the most probable of ``ii`` sampled paths;
* :func:`pcc_search` — PCC's batched branch-and-bound search for the most probable path.

It was the middle part of ``chains.py``; a module of its own because the chains and CT share it
and it is one concept: searching a fitted :class:`~spaces.mlc.label_network.LabelNetwork`.

Everything runs on all rows at once (search-space notes §5: per-row calls to the base learner
would take hours); Monte-Carlo samples are drawn in blocks of at most ``_SAMPLE_CELLS`` cells so
memory stays bounded. Every search step and sampling iteration calls
:func:`spaces.deadline.check_deadline`. Joint probabilities are compared as sums of logs (MEKA
multiplies, which underflows for large L); ties keep the earlier candidate, as MEKA's strict
``>`` does.
"""
from __future__ import annotations

import numpy as np

from ggp_automl.spaces.deadline import check_deadline

from .label_network import LabelNetwork

#: Monte-Carlo samples are drawn in blocks of at most this many (row, label) cells
_SAMPLE_CELLS = 1 << 21
#: PCC: worst-case node evaluations per test row; sets the beam width for large L
PCC_NODE_BUDGET = 1 << 17


def _log(p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return np.log(p)


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
    X = net.rows_of(X)
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
    rows_of = [net.rows_of(X) for net in networks]     # per network: its models' fixed parts, kept
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
            sp, ss, sl = sample_paths(networks[m], rows_of[m], rr, rng)
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
    X = net.rows_of(np.asarray(X, dtype=float))
    n = X.X.shape[0]
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


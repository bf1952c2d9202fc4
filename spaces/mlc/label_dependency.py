"""Pairwise label-dependency matrices: the grammar's ``<dp_*>`` values and BCC's LEAD.

:func:`dependency_matrix` implements MEKA's ``StatUtils.margDepMatrix``; BCC (``chains.py``) builds
its label tree from it, and CT and CDT (``trellis.py``) place the labels on their grid by it.
:func:`lead_matrix` is MEKA's LEAD, BCC's other choice. Both lived with their first user, in
``trellis.py`` and ``chains.py``, which then imported each other; here, beneath both, they do not.
"""
from __future__ import annotations

import numpy as np

from ggp_automl.spaces.deadline import check_deadline
from ggp_automl.spaces.slc.base import fit_slc, positive_scores

from .label_network import make_rng, node_seed

DEPENDENCY_TYPES = ("C", "I", "Ib", "Ibf", "H", "Hbf", "X", "F", "None")


# ============================================================================ dependency matrices

def _xlogx(v):
    v = np.asarray(v, dtype=float)
    out = np.zeros_like(v)
    pos = v > 0
    out[pos] = v[pos] * np.log(v[pos])
    return out


def dependency_matrix(Y, kind: str) -> np.ndarray:
    """The (L, L) symmetric label-dependency matrix of MEKA ``margDepMatrix(D, kind)``.

    From each pair's 2x2 contingency table (N rows, n_j = #(y_j=1), n_jk = #(y_j=y_k=1)):

    * ``C``   co-occurrence P(y_j=1, y_k=1), floored at 0.0001;
    * ``I``   mutual information over the four cells, counts smoothed by +0.0001;
    * ``Ib``, ``Ibf``  MEKA's binary approximation of the mutual information,
      p_jk log(p_jk / p_j p_k) + (1 − p_jk) log((1 − p_jk) / (1 − p_j)(1 − p_k)),
      probabilities floored at 0.0001 (the "fast" variant counts the same numbers);
    * ``H``   MEKA's conditional entropy (of y_k given y_j), 0·log 0 = 0;
    * ``X``   χ² statistic over the four cells, smoothed probabilities;
    * ``F``   |1 − P(y_j=1)P(y_k=1) / P(y_j=1, y_k=1)|, smoothed;
    * ``Hbf``, ``None``  all zeros. MEKA never matches ``Hbf`` (it tests ``"H"`` twice),
      so Hbf behaves as no dependency information (I-23); kept for fidelity, since the
      thesis's experiments ran with that behaviour and the grammar documents it.

    MEKA fills only j < k; the matrix is mirrored. Non-finite entries (degenerate labels)
    become 0. The diagonal is 0.
    """
    kind = str(kind)
    if kind not in DEPENDENCY_TYPES:
        raise ValueError(f"unknown dependency type {kind!r}; expected one of {DEPENDENCY_TYPES}")
    Y = (np.asarray(Y) > 0).astype(float)
    N, L = Y.shape
    if kind in ("None", "Hbf") or L < 2 or N == 0:
        return np.zeros((L, L))
    n1 = Y.sum(axis=0)                     # #(y_j = 1)
    n11 = Y.T @ Y                          # #(y_j = 1, y_k = 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == "C":
            W = np.maximum(n11 / N, 0.0001)
        elif kind in ("Ib", "Ibf"):
            pj = np.maximum(n1 / N, 0.0001)
            pjk = np.maximum(n11 / N, 0.0001)
            px, py = pj[:, None], pj[None, :]
            W = pjk * np.log(pjk / (px * py)) + (1 - pjk) * np.log((1 - pjk) / ((1 - px) * (1 - py)))
        elif kind == "H":
            Nj = np.maximum(n1, 0.0001)[:, None]
            Nk = np.maximum(n1, 0.0001)[None, :]
            Njk = np.maximum(n11, 0.0001)
            W = -(_xlogx(N + Njk - (Nj + Nk)) + _xlogx(Nk - Njk) + _xlogx(Nj - Njk) + _xlogx(Njk)
                  - _xlogx(np.broadcast_to(N - Nj, Njk.shape)) - _xlogx(np.broadcast_to(Nj, Njk.shape))) / N
        else:
            # smoothed cell probabilities P(y_j = v, y_k = w) and marginals P(y_j = v)
            n0 = N - n1
            cells = {(1, 1): n11, (1, 0): n1[:, None] - n11, (0, 1): n1[None, :] - n11}
            cells[(0, 0)] = N - n1[:, None] - n1[None, :] + n11
            marg = {1: (n1 + 0.0001) / N, 0: (n0 + 0.0001) / N}
            if kind == "I":
                W = np.zeros((L, L))
                for (v, w), count in cells.items():
                    pvw = (count + 0.0001) / N
                    W += pvw * np.log(pvw / np.outer(marg[v], marg[w]))
            elif kind == "X":
                W = np.zeros((L, L))
                for (v, w), count in cells.items():
                    E = np.outer(marg[v], marg[w])
                    O = (count + 0.0001) / N
                    W += (O - E) ** 2 / E
            else:  # "F"
                E = np.outer(marg[1], marg[1])
                O = (n11 + 0.0001) / N
                W = np.abs(1.0 - E / O)
    W = np.nan_to_num(np.asarray(W, dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    W = np.triu(W, 1)
    return W + W.T



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


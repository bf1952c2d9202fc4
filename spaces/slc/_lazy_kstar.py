"""K*'s per-attribute scale factors (Cleary & Trigg 1995, as WEKA's ``KStarNumericAttribute``).

For a test value ``v`` of numeric attribute ``a``, K* chooses the scale ``s`` of the transformation
probability ``P*(d) = s · exp(-2 s d)`` (``d = |v - u|`` to a training value ``u``):

* blend (default): the "sphere of influence" ``(Σ P*)² / Σ P*²`` must equal
  ``n0 + (N - n0) · blend / 100`` (``n0`` = training values at the smallest distance); the root
  is searched in ``[0.005, 16 / (next smallest distance - smallest distance)]``, and a bound is
  taken when the target is out of reach, exactly as in WEKA's bisection;
* entropic auto-blend (``eab``): WEKA's step search over ``[0.005, 8 / gap]`` for the scale that
  maximises (random-class entropy − actual-class entropy), both normalised by the random-entropy
  range; the random entropy averages 5 random permutations of the class column.

WEKA loops over all training values for every bisection step of every (test value, attribute)
pair: O(n_test · n_train · M · 40). Here the sums ``Σ_u c_u exp(-2 s (|u - v| - d_min))`` are
computed exactly on a geometric grid of scales (8 points per octave; 3 for the entropic search)
by the first-order recurrence ``S_m = c_m + exp(-2 s (u_{m+1} - u_m)) S_{m+1}`` over the sorted
distinct training values (solved in blocks, see :class:`_LaplaceSums`) — one pass serves every
test value and every grid scale — and the root (or the entropy curve) is read off a cubic
interpolation in log-scale between grid points. This matches WEKA's root to well within WEKA's
own tolerance (|sphere − target| <= 0.01) at O((n_train + n_test) · grid · M). The exponentials
of one octave are computed once and squared for the next. For the blend, a provable upper bound
on the root (:func:`_blend_upper`) keeps the grid short; for the entropic blend the last class of
each column set is implied by the total, which halves the work for binary targets.
Test values are deduplicated per attribute, as WEKA's per-attribute cache does, and per-column
results are memoised across estimators (see ``_MEMO``).

Missing values (NaN): a missing training value transforms with the probability of the missing
mode (``a`` average P*, ``d`` 0, ``m`` smallest P*, ``n`` 1); a missing test value skips the
attribute. Both only matter when the caller passes NaN (the model imputes before the SLC).
"""
from __future__ import annotations

import hashlib
from collections import OrderedDict

import numpy as np

from ggp_automl.spaces.deadline import check_deadline

ROOT_FINDER_ACCURACY = 0.01
ROOT_FINDER_MAX_ITER = 40
NUM_RAND_COLS = 5
FLOOR1 = 0.1
BOT = ROOT_FINDER_ACCURACY / 2.0     # WEKA's lower bracket of the scale
MISSING_MODES = ("a", "d", "m", "n")
_TIE = 1e-5                          # WEKA's tolerance for "at the smallest distance"
_MEMORY = 24e6                       # bytes per block-matrix / column-group array
_TINY = 1e-150                       # flushed to 0 before squaring (no denormals)


# --------------------------------------------------------------------------- geometry

class _Attribute:
    """Sorted distinct training values of one attribute and, per distinct test value, the
    nearest-neighbour geometry WEKA's root finder starts from."""

    def __init__(self, train: np.ndarray, test_values: np.ndarray):
        self.present = ~np.isnan(train)
        self.has_missing = not self.present.all()
        self.u, self.inv = np.unique(train[self.present], return_inverse=True)
        self.count = int(self.present.sum())
        self.cnt = np.bincount(self.inv, minlength=self.u.size).astype(float)
        self.cc = np.concatenate([[0.0], np.cumsum(self.cnt)])
        v = self.v = test_values
        n_u = self.u.size
        if n_u == 0:
            self.degenerate = np.ones(v.size, dtype=bool)
            return
        pos = np.searchsorted(self.u, v, side="right")
        self.ml, self.mr = pos - 1, pos
        self.dl = np.where(self.ml >= 0, v - self.u[np.clip(self.ml, 0, n_u - 1)], np.inf)
        self.dr = np.where(self.mr < n_u, self.u[np.clip(self.mr, 0, n_u - 1)] - v, np.inf)
        lowest = np.minimum(self.dl, self.dr)
        i_lo = np.searchsorted(self.u, v - lowest - _TIE, side="right")
        i_hi = np.searchsorted(self.u, v + lowest + _TIE, side="left")
        self.n0 = self.cc[i_hi] - self.cc[i_lo]
        left_next = np.where(i_lo >= 1, v - self.u[np.clip(i_lo - 1, 0, n_u - 1)], np.inf)
        right_next = np.where(i_hi < n_u, self.u[np.clip(i_hi, 0, n_u - 1)] - v, np.inf)
        nextlowest = np.minimum(left_next, right_next)
        self.lowest = lowest
        self.degenerate = ~np.isfinite(nextlowest)          # all values (nearly) the same
        self.root0 = 1.0 / np.where(self.degenerate, 1.0, nextlowest - lowest)
        self.d_max = np.maximum(np.abs(v - self.u[0]), np.abs(self.u[-1] - v))

    def radius_holding(self, a: np.ndarray) -> np.ndarray:
        """A radius r with at most ``a`` training values at distance <= r (with multiplicity):
        just below the distance of the (floor(a/2)+1)-th value on the nearer side."""
        half = np.floor(a / 2.0)
        pos = self.ml + 1
        n_u = self.u.size
        i_left = np.searchsorted(self.cc, self.cc[pos] - (half + 1), side="right") - 1
        i_right = np.searchsorted(self.cc, self.cc[pos] + (half + 1), side="left") - 1
        d_left = np.where(i_left >= 0, self.v - self.u[np.clip(i_left, 0, n_u - 1)], np.inf)
        d_right = np.where(i_right < n_u, self.u[np.clip(i_right, 0, n_u - 1)] - self.v, np.inf)
        return np.nextafter(np.minimum(d_left, d_right), -np.inf)

    def class_counts(self, columns: np.ndarray) -> np.ndarray:
        """(n_u, K) sums of ``columns`` over the present training rows of each distinct value."""
        out = np.zeros((self.u.size, columns.shape[1]))
        np.add.at(out, self.inv, columns[self.present])
        return out


# --------------------------------------------------------------------------- grid sums

def _grid(lo: float, hi: float, q: int):
    """Scales ``BOT · 2^((g - k)/q)``, g = 0, 1, …, from at most ``lo`` to 3 points above ``hi``;
    returns (scales, k), ``k`` being the index of BOT itself."""
    k = max(0, int(np.ceil(q * np.log2(BOT / lo)))) if lo < BOT else 0
    top = int(np.ceil(q * np.log2(max(hi, BOT) / BOT))) + 3
    return BOT * np.exp2(np.arange(-k, top + 1) / q), k


def _exp_grid(x: np.ndarray, scales: np.ndarray, q: int, axis: int = 0) -> np.ndarray:
    """``exp(-2 · s · x)`` for every grid scale s, the grid inserted as axis ``axis``
    (x >= 0, +inf allowed). One octave of exponentials, then each octave is the square of the
    previous one; values below 1e-150 are flushed to 0 first, so no square is ever denormal."""
    G = scales.size
    out = np.empty(x.shape[:axis] + (G,) + x.shape[axis:])
    grid_first = np.moveaxis(out, axis, 0)                  # a view: the grid leads
    first = grid_first[:min(q, G)]
    with np.errstate(invalid="ignore"):
        np.multiply(-2.0 * scales[:first.shape[0]].reshape((-1,) + (1,) * x.ndim), x, out=first)
    np.nan_to_num(first, copy=False, nan=-np.inf)
    np.maximum(first, -700.0, out=first)
    np.exp(first, out=first)
    np.putmask(first, first < _TINY, 0.0)
    for g0 in range(q, G, q):
        prev = grid_first[g0 - q:min(g0, G - q)]
        nxt = grid_first[g0:g0 + prev.shape[0]]
        np.multiply(prev, prev, out=nxt)
        np.putmask(nxt, nxt < _TINY, 0.0)
    return out


class _LaplaceSums:
    """Sums ``Σ_u c_u,k exp(-2 s (|u - v| - d_min(v)))`` of one attribute on a grid of scales.

    Over the sorted distinct training values u, the prefix sums ``P_m = Σ_{j<=m} c_j e^{-2s(u_m-u_j)}``
    obey ``P_m = c_m + e^{-2s(u_m - u_{m-1})} P_{m-1}`` (and the suffix sums likewise). The
    recurrence is solved in blocks of B values: inside a block it is a small lower-triangular
    matrix product (batched over the grid), between blocks one carry — so the Python loop runs
    n/B times, not n. A test value v then needs only the prefix at its left neighbour and the
    suffix at its right neighbour.
    """

    def __init__(self, att: _Attribute, scales: np.ndarray, q: int, n_columns: int):
        self.att, self.scales, self.q = att, scales, q
        n, G = att.u.size, scales.size
        # blocks: the in-block products cost n·B·G·K, the Python loop n/B steps
        B = 16 if n_columns > 2 else 8
        self.B = B = int(max(1, min(B, _MEMORY // (16.0 * max(n, 1) * G))))
        self.nb = nb = -(-n // B)
        u = np.concatenate([att.u, np.full(nb * B - n, att.u[-1])]).reshape(nb, B)
        ahead = u[:, None, :] - u[:, :, None]                  # [b, j, i] = u_i - u_j
        tri = np.triu(np.ones((B, B), dtype=bool))             # i >= j
        # j-major block matrices, grid in the middle: [b, j, g, i]
        self.Tp = _exp_grid(np.where(tri, ahead, np.inf), scales, q, 2)
        self.Ts = _exp_grid(np.where(tri.T, -ahead, np.inf), scales, q, 2)
        self.dec_p = _exp_grid(u[1:] - u[:-1, -1:], scales, q)                # (G, nb-1, B)
        self.dec_s = _exp_grid(u[1:, :1] - u[:-1], scales, q)                 # (G, nb-1, B)
        self.lf = _exp_grid(att.dl - att.lowest, scales, q)[..., None]       # 0 without a left value
        self.rf = _exp_grid(att.dr - att.lowest, scales, q)[..., None]
        self.blk_l, self.pos_l = np.divmod(np.clip(att.ml, 0, n - 1), B)
        self.blk_r, self.pos_r = np.divmod(np.clip(att.mr, 0, n - 1), B)

    def max_columns(self) -> int:
        """Columns per call that keep the prefix and suffix arrays within the memory budget."""
        return int(max(1, _MEMORY // (8.0 * self.nb * self.B * self.scales.size)))

    def __call__(self, counts: np.ndarray) -> np.ndarray:
        """(G, n_v, K) sums for the (n_u, K) count columns."""
        n, K = counts.shape
        nb, B, G = self.nb, self.B, self.scales.size
        c = np.zeros((nb * B, K))
        c[:n] = counts
        cT = np.ascontiguousarray(c.reshape(nb, B, K).transpose(0, 2, 1))   # (nb, K, B)
        pfx = np.empty((nb, K, G, B))
        sfx = np.empty((nb, K, G, B))
        for b in range(nb):                                  # one GEMM per block, then the carry
            pfx[b] = (cT[b] @ self.Tp[b].reshape(B, G * B)).reshape(K, G, B)
            if b:
                pfx[b] += self.dec_p[:, b - 1] * pfx[b - 1][:, :, -1:]
        for b in range(nb - 1, -1, -1):
            sfx[b] = (cT[b] @ self.Ts[b].reshape(B, G * B)).reshape(K, G, B)
            if b < nb - 1:
                sfx[b] += self.dec_s[:, b] * sfx[b + 1][:, :, :1]
        left = pfx[self.blk_l, :, :, self.pos_l].transpose(2, 0, 1)         # (G, n_v, K)
        right = sfx[self.blk_r, :, :, self.pos_r].transpose(2, 0, 1)
        return self.lf * left + self.rf * right


def _cubic_weights(x: np.ndarray) -> tuple:
    """4-point Lagrange weights for nodes -1, 0, 1, 2 at offset x."""
    return (-x * (x - 1) * (x - 2) / 6, (x + 1) * (x - 1) * (x - 2) / 2,
            -(x + 1) * x * (x - 2) / 2, (x + 1) * x * (x - 1) / 6)


def _cubic(values: np.ndarray, t: np.ndarray, rows: np.ndarray | None = None) -> np.ndarray:
    """Cubic interpolation of ``values[rows]`` at grid coordinates ``t`` (one per row)."""
    G = values.shape[1]
    g0 = np.clip(np.floor(t).astype(np.int64), 1, G - 3)
    w = _cubic_weights(t - g0)
    if rows is None:
        rows = np.arange(values.shape[0])
    flat = values.ravel()
    base = rows * G + g0
    return w[0] * flat[base - 1] + w[1] * flat[base] + w[2] * flat[base + 1] + w[3] * flat[base + 2]


# --------------------------------------------------------------------------- blend

def _blend_aim(att: _Attribute, blend: int) -> np.ndarray:
    aim = (att.count - att.n0) * blend / 100.0 + att.n0
    return aim + 1.0 if blend == 0 else aim


def _blend_upper(att: _Attribute, aim: np.ndarray) -> np.ndarray:
    """A scale above the blend root (or WEKA's upper bracket, if smaller).

    With E1 = Σ e_k, E2 = Σ e_k², e_k = exp(-2 s (d_k - d_min)) <= 1, the a values closer than
    r (a < aim / 1.21) and N·exp(-2 s (r - d_min)) <= 0.1·E1: Cauchy–Schwarz on the a close
    values gives sphere = E1² / E2 <= a · 1.1² < aim, so the root lies below
    s = ln(10 N) / (2 (r - d_min)).
    """
    up = 16.0 * att.root0
    a = np.floor(aim / 1.21 - 1e-9)
    r = att.radius_holding(a)
    ok = (a >= 1) & (r > att.lowest) & np.isfinite(r)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        bound = np.log(10.0 * att.count) / (2.0 * (r - att.lowest))
    return np.where(ok, np.minimum(up, bound), up)


def _blend_scales(att: _Attribute, e1: np.ndarray, scales: np.ndarray, k: int, q: int,
                  aim: np.ndarray) -> np.ndarray:
    """Scale with sphere(s) = aim in [BOT, 16·root0]; a bound when the aim is out of reach."""
    G = scales.size - q
    sphere = e1[:, :G] ** 2 / e1[:, q:q + G]
    up = 16.0 * att.root0
    t_up = q * np.log2(up / BOT) + k
    at_bot = sphere[:, k] < aim                              # cannot include that many
    below = sphere < aim[:, None]
    below[:, :k + 1] = False
    found = below.any(axis=1)
    first = np.where(found, np.argmax(below, axis=1), G - 1)  # first grid point under the aim
    # cubic through log-sphere at first-2 .. first+1, root in [first-1, first]
    g0 = np.clip(first - 1, 1, G - 3)
    rows = np.arange(sphere.shape[0])
    with np.errstate(divide="ignore"):
        f = [np.log(sphere[rows, g0 + d]) for d in (-1, 0, 1, 2)]
    target = np.log(aim)
    lo = (first - 1 - g0).astype(float)
    hi = (first - g0).astype(float)
    for _ in range(24):
        mid = 0.5 * (lo + hi)
        val = sum(wi * fi for wi, fi in zip(_cubic_weights(mid), f))
        above = val > target
        lo = np.where(above, mid, lo)
        hi = np.where(above, hi, mid)
    t_star = g0 + 0.5 * (lo + hi)
    scale = BOT * np.exp2((t_star - k) / q)
    scale = np.where(~found | (t_star > t_up), up, scale)  # cannot include that few
    scale = np.where(at_bot, BOT, scale)
    return np.where(att.degenerate, 1.0, scale)


# --------------------------------------------------------------------------- entropic blend

def _entropic_scales(att: _Attribute, act: np.ndarray, rand: np.ndarray, scales: np.ndarray,
                     k: int, q: int) -> np.ndarray:
    """WEKA's step search for the scale maximising normalised (random − actual) entropy."""
    n = att.v.size
    up = 8.0 * att.root0
    bot = np.full(n, BOT)

    def at(curve, s, rows=None):
        return _cubic(curve, q * np.log2(s / BOT) + k, rows)

    act_up, rand_up = at(act, up), at(rand, up)
    randscale = at(rand, bot) - rand_up
    root = bot.copy()
    bestroot = bot.copy()
    bestdiff = np.full(n, FLOOR1)
    currentdiff = np.full(n, FLOOR1)
    stepsize = (up - bot) / 20.0
    active = ~att.degenerate
    with np.errstate(divide="ignore", invalid="ignore"):
        for itcount in range(1, ROOT_FINDER_MAX_ITER + 2):
            if not active.any():
                break
            lastdiff = currentdiff.copy()
            root = np.where(active, root + np.log(root + 1.0) * stepsize, root)
            low, high = root <= bot, root >= up
            root = np.where(low, bot, np.where(high, up, root))
            mid = active & ~low & ~high
            cd = np.full(n, np.nan)
            if mid.any():
                rows = np.flatnonzero(mid)
                r_n = (at(rand, root[rows], rows) - rand_up[rows]) / randscale[rows]
                a_n = (at(act, root[rows], rows) - act_up[rows]) / randscale[rows]
                cd[rows] = r_n - a_n
            currentdiff = np.where(active, np.where(mid, cd, 0.0), currentdiff)
            floored = mid & (currentdiff < FLOOR1)
            currentdiff = np.where(floored, FLOOR1, currentdiff)
            quit_low = floored & (stepsize < 0)              # turned around without a peak
            bestdiff = np.where(quit_low, currentdiff, bestdiff)
            bestroot = np.where(quit_low, bot, bestroot)
            active = active & ~quit_low
            delta = np.where(mid, currentdiff - lastdiff, -1.0)
            better = active & (currentdiff > bestdiff)
            bestdiff = np.where(better, currentdiff, bestdiff)
            bestroot = np.where(better, root, bestroot)
            turn = active & (delta < 0)
            converged = turn & (np.abs(stepsize) < ROOT_FINDER_ACCURACY)
            stepsize = np.where(turn & ~converged, stepsize / -4.0, stepsize)
            active = active & ~converged
            if itcount > ROOT_FINDER_MAX_ITER:
                break
    return np.where(att.degenerate, 1.0, bestroot)


# --------------------------------------------------------------------------- public

def _missing_probability(att: _Attribute, scale: np.ndarray, mode: str) -> np.ndarray:
    """Probability of transforming to a missing training value (WEKA ``m_MissingProb``)."""
    if mode == "d":
        p = np.zeros(att.v.size)
    elif mode == "n" or att.u.size == 0:
        p = np.ones(att.v.size)
    elif mode == "m":
        p = np.minimum(1.0, scale * np.exp(-2.0 * scale * att.d_max))
    else:  # "a": average P* over the present training values
        p = np.empty(att.v.size)
        for start in range(0, att.v.size, 256):
            s = scale[start:start + 256, None]
            d = np.abs(att.v[start:start + 256, None] - att.u[None, :])
            p[start:start + 256] = (s * np.exp(-2.0 * s * d)) @ att.cnt / att.count
    return np.where(att.degenerate, 1.0, p)


def _attribute_scales(att: _Attribute, blend: int, entropic: bool, columns: np.ndarray,
                      n_classes: int) -> np.ndarray:
    """Scale factor of each distinct test value of one attribute."""
    if not (att.v.size and att.u.size) or att.degenerate.all():
        return np.ones(att.v.size)
    q = 3 if entropic else 8
    factor = 8.0 if entropic else 16.0                      # WEKA's upper bracket: factor / gap
    live = ~att.degenerate
    lo = float((factor * att.root0[live]).min())
    if entropic:
        hi = float((factor * att.root0[live]).max())
    else:
        aim = _blend_aim(att, blend)
        hi = 2.0 * float(_blend_upper(att, aim)[live].max())               # sphere needs 2·s
    scales, k = _grid(min(lo, BOT), hi, q)
    K = columns.shape[1]
    sums = _LaplaceSums(att, scales, q, K)
    if not entropic:
        return _blend_scales(att, sums(att.cnt[:, None])[:, :, 0].T, scales, k, q, aim)
    counts = att.class_counts(columns)
    e1 = sums(counts[:, :1])[:, :, 0]                        # (G, n_v); column 0: all rows
    per_set = n_classes - 1                                  # the last class of a set is E - rest
    xlogx_sum = np.zeros((1 + NUM_RAND_COLS,) + e1.shape)
    class_sum = np.zeros((1 + NUM_RAND_COLS,) + e1.shape)
    step = sums.max_columns()
    for c0 in range(1, K, step):                             # column groups bound the memory
        part = sums(counts[:, c0:c0 + step])
        np.maximum(part, 0.0, out=part)
        xlogx = np.zeros_like(part)
        np.log2(part, out=xlogx, where=part > 0)
        xlogx *= part
        sets = (np.arange(c0, c0 + part.shape[2]) - 1) // per_set
        for r in np.unique(sets):
            xlogx_sum[r] += xlogx[:, :, sets == r].sum(axis=2)
            class_sum[r] += part[:, :, sets == r].sum(axis=2)
    last = np.maximum(e1[None] - class_sum, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        xlogx_sum += np.where(last > 0, last * np.log2(np.where(last > 0, last, 1.0)), 0.0)
    # entropy of p_c = E_c / E per column set: log2 E - Σ_c E_c log2 E_c / E
    entropy = np.log2(e1)[None] - xlogx_sum / e1[None]
    act, rand = entropy[0], entropy[1:].mean(axis=0)
    return _entropic_scales(att, act.T.copy(), rand.T.copy(), scales, k, q)


# Per-column memo. The blend scales of an attribute depend only on its training and test values
# (not on the class), and the problem transformations fit one K* per label on the same features
# (BR: the same columns for every label; CC: the same plus a few label columns), so results are
# memoised by content hash. Bounded LRU; identical to recomputing.
_MEMO: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()
_MEMO_LIMIT = 32e6  # bytes
_memo_bytes = 0


def clear_memo() -> None:
    global _memo_bytes, _sim_bytes
    _MEMO.clear()
    _memo_bytes = 0
    _SIMILARITY.clear()
    _sim_bytes = 0


# Whole similarity matrices, for the global blend (no class in it): the q labels of a binary
# relevance compare the same test rows with the same training rows, so K*'s (test × train) matrix —
# most of its prediction time — is computed once; only the class masses differ per label. Keyed by
# content hash of both matrices and the settings; bounded LRU; identical to recomputing.
_SIMILARITY: OrderedDict[bytes, tuple[np.ndarray, np.ndarray]] = OrderedDict()
_SIM_LIMIT = 96e6  # bytes
_sim_bytes = 0


def similarity_key(X_train: np.ndarray, X_test: np.ndarray, settings: tuple) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    for a in (X_train, X_test):
        a = np.ascontiguousarray(a)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    h.update(repr(settings).encode())
    return h.digest()


def similarity_get(key: bytes):
    hit = _SIMILARITY.get(key)
    if hit is not None:
        _SIMILARITY.move_to_end(key)
    return hit


def similarity_put(key: bytes, value: tuple[np.ndarray, np.ndarray]) -> None:
    global _sim_bytes
    size = sum(v.nbytes for v in value)
    if size > _SIM_LIMIT:
        return
    for v in value:
        v.flags.writeable = False
    _SIMILARITY[key] = value
    _sim_bytes += size
    while _sim_bytes > _SIM_LIMIT:
        _, old = _SIMILARITY.popitem(last=False)
        _sim_bytes -= sum(v.nbytes for v in old)


def _memo_key(train_col, test_col, settings: tuple, class_columns) -> bytes:
    h = hashlib.blake2b(digest_size=20)
    h.update(np.ascontiguousarray(train_col).tobytes())
    h.update(b"|")
    h.update(np.ascontiguousarray(test_col).tobytes())
    h.update(repr(settings).encode())
    if class_columns is not None:
        h.update(np.ascontiguousarray(class_columns).tobytes())
    return h.digest()


def _memo_put(key: bytes, value: tuple[np.ndarray, np.ndarray]) -> None:
    global _memo_bytes
    size = value[0].nbytes + value[1].nbytes
    if size > _MEMO_LIMIT:
        return
    _MEMO[key] = value
    _memo_bytes += size
    while _memo_bytes > _MEMO_LIMIT:
        _, old = _MEMO.popitem(last=False)
        _memo_bytes -= old[0].nbytes + old[1].nbytes


def kstar_scales(X_train: np.ndarray, X_test: np.ndarray, blend: int = 20, entropic: bool = False,
                 missing_mode: str = "a", class_columns: np.ndarray | None = None):
    """Per (test row, attribute) K* scale factors and missing-value probabilities.

    ``class_columns`` (n_train, 1 + NUM_RAND_COLS) holds the class index of every training row
    (column 0) and its random permutations (entropic blend only).
    Returns ``(scale, p_missing)``, both (n_test, M); entries of missing test values are 0.
    """
    if missing_mode not in MISSING_MODES:
        raise ValueError(f"missing_mode must be one of {MISSING_MODES}, got {missing_mode!r}")
    n_train = X_train.shape[0]
    n_test, M = X_test.shape
    if entropic:
        if class_columns is None:
            raise ValueError("entropic blending needs the class columns")
        n_classes = max(2, int(class_columns.max()) + 1)
        eye = np.eye(n_classes)[:, :-1]                      # the last class is implied
        columns = np.hstack([np.ones((n_train, 1))]
                            + [eye[class_columns[:, r]] for r in range(class_columns.shape[1])])
    else:
        n_classes, columns, class_columns = 0, np.ones((n_train, 1)), None
    settings = (int(blend), bool(entropic), missing_mode)
    scale = np.zeros((n_test, M))
    p_miss = np.zeros((n_test, M))
    for j in range(M):
        check_deadline()
        key = _memo_key(X_train[:, j], X_test[:, j], settings, class_columns)
        hit = _MEMO.get(key)
        if hit is None:
            col = X_test[:, j]
            rows = np.flatnonzero(~np.isnan(col))
            vu, vinv = np.unique(col[rows], return_inverse=True)
            att = _Attribute(X_train[:, j], vu)
            s_u = _attribute_scales(att, blend, entropic, columns, n_classes)
            s_col = np.zeros(n_test)
            p_col = np.zeros(n_test)
            s_col[rows] = s_u[vinv]
            if att.has_missing:
                p_col[rows] = _missing_probability(att, s_u, missing_mode)[vinv]
            hit = (s_col, p_col)
            _memo_put(key, hit)
        else:
            _MEMO.move_to_end(key)
        scale[:, j], p_miss[:, j] = hit
    return scale, p_miss

"""The surrogates of ``--method bo``: the BO thesis's Gaussian process with the conditional kernel, and
SMAC's random forest made cheap in a grammar-sized space (:class:`GrammarForest`).

:class:`ConditionalGP` is a drop-in ``model=`` for ``smac.HyperparameterOptimizationFacade``
(EI and SMAC's ``LocalAndSortedRandomSearch`` unchanged); ``--method bo --surrogate gp`` uses it::

    HyperparameterOptimizationFacade(scenario, target, model=ConditionalGP(scenario.configspace, seed=s,
                                     max_observations=1000), overwrite=True)

Sources: notes ``bo-and-ensembles.md`` §1, §4, §7.16–20; thesis 001 §5.3.1, §5.4.1 (Eq. 5.9–5.11).

Why it is built this way:

* **What arrives** (checked with a facade run in the tests). SMAC 2.4 hands the model
  ``Configuration.get_array()`` rows: numerics in unit scale [0, 1] (log flags applied),
  categoricals as indices, **inactive entries NaN** (``convert_configurations_to_array`` imputes
  nothing; the costs are the log-scaled encoder's). Sentinels are tolerated too: a negative value
  (SMAC's own GP imputes −1) or a categorical index past its choices counts as inactive.
* **Imputation (notes §4.2).** Inactive numerics are 0.5, the middle of the range, so they add zero
  distance. Inside a block (below) all points have the same active set, so a block's distances are
  computed on its active numerics only: the same numbers, far fewer columns (~15 of ~800).
* **Conditional kernel (Eq. 5.9).** The *signature* of a configuration is the value of every active
  categorical, inactive ones marked (plus the activity of hyper-parameters below a numeric parent,
  if the space has any: a grammar's does not). k_C(x, x') = Matérn-5/2 on the numerics if the
  signatures are equal, else 0. Every categorical is in the signature, leaf ones too, so none is
  treated as an ordered number (notes §7.17). K is block-diagonal by signature and each block is
  factorised alone (cost Σ m_i³, Eq. 5.11): one GP per structure with shared hyper-parameters.
  Blocks of equal size are stacked into one batched LAPACK call, so hundreds of signatures cost a
  few numpy calls per likelihood evaluation.
* **Hyper-parameters.** Amplitude σ², noise ν, length-scales; zero mean on standardised costs (the
  prior mean is the mean cost). Full ARD over ~800 numerics with a few hundred points, mostly in
  blocks of one or two, is unidentifiable. So: one *shared* length-scale for all numerics, plus ARD
  for at most ``max_ard`` numerics active in at least ``ard_min_obs`` observations that lie in
  blocks of two or more (only such pairs inform a length-scale). Type-II maximum likelihood summed
  over the blocks, analytic gradient, L-BFGS-B from ``n_restarts`` starts (the previous optimum,
  then draws from the priors with a Generator built from ``seed``), the notes' priors as penalties:
  log-normal(0, 1) on the length-scales (unit-scale inputs) and on σ², the horseshoe(0.1) of
  Spearmint/SMAC on ν. ML-II replaces the thesis's slice sampling (notes §1 [note]).
* **Prediction.** A query gets the posterior of the block with its signature; a signature never
  observed gets the prior, mean = mean cost, variance σ² + ν, so EI favours unexplored structures.
  Variances are predictive (they include ν, as SMAC's GP's and the prior's do), so EI never meets a
  zero deviation. Each block's inverse Cholesky factor is cached by ``_train`` and query rows are
  grouped by signature: 2,000 Large-space rows take ~15–40 ms, mostly reading the 1,917 columns.
* **Cap** (cost). The fit sees at most ``max_observations`` rows (default 1,000; past it the best
  half and the most recent half) and at most ``max_per_block`` (150) per signature, same rule.
* **One BLAS thread** inside ``_train``/``_predict``: the matrices are small, and OpenBLAS threads
  on a busy 2-core machine made a 150×150 Cholesky 70× slower.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np
from ConfigSpace import ConfigurationSpace
from ConfigSpace.hyperparameters import CategoricalHyperparameter, NumericalHyperparameter, OrdinalHyperparameter
from scipy.linalg import solve_triangular
from scipy.optimize import minimize
from smac.main.config_selector import ConfigSelector
from smac.model.abstract_model import AbstractModel
from smac.model.random_forest import RandomForest
from threadpoolctl import ThreadpoolController

SQRT5 = np.sqrt(5.0)
JITTER = 1e-8  # added to the diagonal, in standardised units
LOG_2PI = np.log(2 * np.pi)
_POOLS: list[ThreadpoolController] = []


def one_blas_thread(f):
    """Run ``f`` with single-threaded BLAS (a 150×150 Cholesky: 12 ms threaded, 0.18 ms not)."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        if not _POOLS:
            _POOLS.append(ThreadpoolController())
        with _POOLS[0].limit(limits=1, user_api="blas"):
            return f(*args, **kwargs)
    return wrapper


def matern52(r2: np.ndarray) -> np.ndarray:
    """Matérn-5/2 correlation of squared scaled distances."""
    r = np.sqrt(np.maximum(r2, 0.0))
    return (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * np.exp(-SQRT5 * r)


def _sqdist(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    d = (a * a).sum(1)[:, None] + (b * b).sum(1)[None, :] - 2.0 * a @ b.T
    return np.maximum(d, 0.0)


def best_and_recent(y: np.ndarray, rows: np.ndarray, cap: int) -> np.ndarray:
    """At most ``cap`` of ``rows`` (in recency order): the best half by ``y``, then the most recent."""
    if len(rows) <= cap:
        return rows
    best = rows[np.argsort(y[rows], kind="stable")[: cap // 2]]
    rest = np.setdiff1d(rows, best)[::-1][: cap - len(best)]
    return np.sort(np.concatenate([best, rest]))


class _Block:
    """One signature's observations and what prediction needs (factor of K + νI, weights)."""

    __slots__ = ("Linv", "Zs", "act", "alpha", "rows")

    def __init__(self, rows: np.ndarray, act: np.ndarray):
        self.rows, self.act = rows, act
        self.Zs = self.Linv = self.alpha = None


class ConditionalGP(AbstractModel):
    """GP with the conditional kernel of 001 Eq. 5.9 (Matérn-5/2 within a signature, 0 across).

    Parameters beyond :class:`AbstractModel`'s: ``max_observations`` (None: no cap) and
    ``max_per_block`` bound what the fit sees; ``n_restarts`` optimiser starts per fit; ``max_ard``
    and ``ard_min_obs`` choose the numerics with their own length-scale; ``noise_bounds`` (ν, in
    units of the standardised cost's variance); ``maxiter`` of each L-BFGS-B run.
    """

    def __init__(self, configspace: ConfigurationSpace, instance_features: dict | None = None,
                 pca_components: int | None = 7, seed: int = 0, *, max_observations: int | None = 1000,
                 max_per_block: int = 150, n_restarts: int = 3, max_ard: int = 8, ard_min_obs: int = 30,
                 noise_bounds: tuple[float, float] = (1e-6, 1.0), maxiter: int = 100):
        if instance_features:
            raise ValueError("ConditionalGP does not model instance features")
        super().__init__(configspace, instance_features, pca_components, seed)
        self.max_observations, self.max_per_block = max_observations, max(int(max_per_block), 2)
        self.n_restarts, self.max_ard, self.ard_min_obs = max(int(n_restarts), 1), int(max_ard), int(ard_min_obs)
        self.noise_bounds, self.maxiter = noise_bounds, maxiter
        self._gen = np.random.default_rng(seed)
        hps = list(configspace.values())
        numeric = [isinstance(h, (NumericalHyperparameter, OrdinalHyperparameter)) for h in hps]
        self._num = np.array([i for i, f in enumerate(numeric) if f], dtype=int)
        self._cat = np.array([i for i, f in enumerate(numeric) if not f], dtype=int)
        self._num_scale = np.array([1.0 / max(len(h.sequence) - 1, 1) if isinstance(h, OrdinalHyperparameter)
                                    else 1.0 for h in hps if isinstance(h, (NumericalHyperparameter,
                                                                             OrdinalHyperparameter))])
        self._n_choices = np.array([len(getattr(hps[i], "choices", (0, 1))) for i in self._cat], dtype=int)
        self._code_dtype = np.uint8 if self._n_choices.max(initial=0) < 255 else np.uint32
        # activity of what hangs below a numeric parent is not implied by the categoricals' values
        kinds = (NumericalHyperparameter, OrdinalHyperparameter)
        self._mask_cols = np.array([i for i, h in enumerate(hps) if any(
            isinstance(p, kinds) for p in configspace.parents_of[h.name])], dtype=int)
        self._ard = np.zeros(0, dtype=int)  # numeric columns (indices into self._num) with their own ℓ
        self._theta: np.ndarray | None = None  # log σ², log ν, log ℓ_shared, log ℓ_ard...
        self._ard_warm: dict[int, float] = {}
        self._blocks: list[_Block] = []
        self._index: dict[bytes, int] = {}
        self._y_mean, self._y_std = 0.0, 1.0
        self.n_fit = 0  # rows the last fit used (after the caps)

    @property
    def meta(self) -> dict[str, Any]:
        meta = super().meta
        meta.update(max_observations=self.max_observations, max_per_block=self.max_per_block,
                    n_restarts=self.n_restarts, max_ard=self.max_ard, ard_min_obs=self.ard_min_obs,
                    noise_bounds=list(self.noise_bounds), maxiter=self.maxiter)
        return meta

    @property
    def hyperparameters(self) -> dict[str, float]:
        """Fitted σ², ν (standardised-cost units), shared ℓ and ARD ℓ by hyper-parameter name."""
        t = self._theta if self._theta is not None else self._default_theta(len(self._ard))
        names = [list(self._configspace.keys())[self._num[j]] for j in self._ard]
        return {"amplitude": float(np.exp(t[0])), "noise": float(np.exp(t[1])),
                "lengthscale": float(np.exp(t[2])), **{f"lengthscale[{n}]": float(np.exp(v))
                                                       for n, v in zip(names, t[3:])}}

    # -- encoding ----------------------------------------------------------------------------------
    def _keys(self, X: np.ndarray) -> list[bytes]:
        """One signature key per row: active categorical values (choice i as i+1, inactive as 0)."""
        C = X[:, self._cat]
        C += 1.0
        np.fmax(C, 0.0, out=C)  # NaN (inactive) and negative sentinels → 0
        codes = C.astype(self._code_dtype)
        codes[codes > self._n_choices] = 0  # a sentinel past the choices (SMAC's forest imputes len(choices))
        parts = [codes.view(np.uint8)] if len(self._cat) else []
        if len(self._mask_cols):
            parts.append(np.packbits(X[:, self._mask_cols] >= 0, axis=1))
        raw = np.concatenate(parts, axis=1) if parts else np.zeros((len(X), 0), np.uint8)
        return [r.tobytes() for r in raw]

    def _numerics(self, X: np.ndarray, dims: np.ndarray | None = None) -> np.ndarray:
        """Numeric columns (all, or ``dims``, indices into the numerics) in unit scale, inactive at 0.5."""
        dims = np.arange(len(self._num)) if dims is None else dims
        Z = X[:, self._num[dims]] * self._num_scale[dims]
        return np.where(Z >= 0, Z, 0.5)  # NaN compares False: inactive → the middle of the range

    def _active(self, x: np.ndarray) -> np.ndarray:
        return np.flatnonzero(x[self._num] >= 0)

    def _lengthscales(self, theta: np.ndarray) -> np.ndarray:
        ls = np.full(len(self._num), np.exp(theta[2]))
        ls[self._ard] = np.exp(theta[3:])
        return ls

    def _default_theta(self, k: int) -> np.ndarray:
        return np.concatenate([[0.0, np.log(max(1e-2, self.noise_bounds[0])), 0.0], np.zeros(k)])

    # -- training ----------------------------------------------------------------------------------
    @one_blas_thread
    def _train(self, X: np.ndarray, Y: np.ndarray) -> ConditionalGP:
        y = np.asarray(Y, dtype=float).reshape(len(X), -1)[:, 0]
        bad = ~np.isfinite(y)
        if bad.all():
            raise ValueError("ConditionalGP: no finite cost to fit")
        y = np.where(bad, np.max(y[~bad]), y)
        X = np.asarray(X, dtype=float)
        keys, Z = self._keys(X), self._numerics(X)
        rows = np.arange(len(y))
        if self.max_observations is not None:
            rows = best_and_recent(y, rows, int(self.max_observations))
        groups: dict[bytes, list[int]] = {}
        for i in rows:
            groups.setdefault(keys[i], []).append(int(i))
        blocks = [_Block(best_and_recent(y, np.array(r), self.max_per_block), self._active(X[r[0]]))
                  for r in groups.values()]
        kept = np.concatenate([b.rows for b in blocks])
        self._y_mean = float(y[kept].mean())
        self._y_std = float(y[kept].std()) if y[kept].std() > 1e-12 else 1.0
        ys = (y - self._y_mean) / self._y_std
        self.n_fit = len(kept)

        # ARD over the numerics most often active in blocks that carry distance information
        counts = np.zeros(len(self._num), dtype=int)
        for b in blocks:
            if len(b.rows) > 1:
                counts[b.act] += len(b.rows)
        order = np.argsort(-counts, kind="stable")[: self.max_ard]
        ard = np.sort(order[counts[order] >= max(self.ard_min_obs, 2)])
        if self._theta is not None:  # warm start: previous ℓ of dims that stay ARD, else the shared ℓ
            self._ard_warm.update(zip(self._ard.tolist(), self._theta[3:].tolist()))
            warm = np.concatenate([self._theta[:3], [self._ard_warm.get(int(j), self._theta[2]) for j in ard]])
        else:
            warm = self._default_theta(len(ard))
        self._ard = ard

        data = self._stack(blocks, Z, ys, ard)
        nb = np.log(self.noise_bounds)
        bounds = [(np.log(1e-2), np.log(1e2)), (nb[0], nb[1])] + [(np.log(1e-2), np.log(1e2))] * (1 + len(ard))
        lo, hi = np.array(bounds).T
        starts = [np.clip(warm, lo, hi)]
        for _ in range(self.n_restarts - 1):
            s = np.concatenate([self._gen.normal(0, 1, 1), self._gen.uniform(max(nb[0], np.log(1e-4)), nb[1], 1),
                                self._gen.normal(0, 1, 1 + len(ard))])
            starts.append(np.clip(s, lo, hi))
        best_f, best_t = np.inf, starts[0]
        for s in starts:
            res = minimize(self._objective, s, args=(data,), jac=True, method="L-BFGS-B", bounds=bounds,
                           options={"maxiter": self.maxiter})
            if np.isfinite(res.fun) and res.fun < best_f:
                best_f, best_t = res.fun, res.x
        self._theta = best_t

        # cache each block's factor and weights for prediction
        sig2, nu = np.exp(best_t[0]), np.exp(best_t[1])
        ls = self._lengthscales(best_t)
        self._blocks, self._index = blocks, {}
        for bi, b in enumerate(blocks):
            b.Zs = Z[b.rows][:, b.act] / ls[b.act]
            K = sig2 * matern52(_sqdist(b.Zs, b.Zs))
            for jitter in JITTER * 10.0 ** np.arange(0, 8, 2):  # more jitter only if rounding bites
                try:
                    L = np.linalg.cholesky(K + (nu + jitter) * np.eye(len(b.rows)))
                    break
                except np.linalg.LinAlgError:
                    continue
            else:
                raise np.linalg.LinAlgError(f"ConditionalGP: block of {len(b.rows)} rows is not positive definite")
            b.Linv = solve_triangular(L, np.eye(len(b.rows)), lower=True)
            b.alpha = b.Linv.T @ (b.Linv @ ys[b.rows])
            self._index[keys[b.rows[0]]] = bi
        return self

    @staticmethod
    def _stack(blocks: list[_Block], Z: np.ndarray, ys: np.ndarray, ard: np.ndarray) -> list[tuple]:
        """Blocks of equal size stacked: (S shared sq-distances, A ARD sq-distances or None, y)."""
        pos = {int(j): k for k, j in enumerate(ard)}
        by_size: dict[int, list[_Block]] = {}
        for b in blocks:
            by_size.setdefault(len(b.rows), []).append(b)
        out = []
        for m, bs in sorted(by_size.items()):
            S = np.zeros((len(bs), m, m))
            A = np.zeros((len(bs), m, m, len(ard))) if len(ard) and m > 1 else None
            for i, b in enumerate(bs):
                if m == 1 or not len(b.act):
                    continue
                Zb = Z[b.rows][:, b.act]
                D = (Zb[:, None, :] - Zb[None, :, :]) ** 2
                shared = np.array([int(j) not in pos for j in b.act])
                S[i] = D[..., shared].sum(-1)
                if A is not None:
                    for c in np.flatnonzero(~shared):
                        A[i, :, :, pos[int(b.act[c])]] = D[..., c]
            out.append((S, A, np.stack([ys[b.rows] for b in bs])))
        return out

    def _objective(self, theta: np.ndarray, data: list[tuple]) -> tuple[float, np.ndarray]:
        """Negative log marginal likelihood summed over blocks, plus prior penalties; and its gradient."""
        sig2, nu, l0 = np.exp(theta[0]), np.exp(theta[1]), np.exp(theta[2])
        inv_l2 = np.exp(-2.0 * theta[3:])
        f, g = 0.0, np.zeros_like(theta)
        for S, A, Yb in data:
            m = S.shape[1]
            r2 = S / l0**2 + (A @ inv_l2 if A is not None else 0.0)
            r = np.sqrt(r2)
            e = np.exp(-SQRT5 * r)
            Kf = sig2 * (1.0 + SQRT5 * r + (5.0 / 3.0) * r2) * e
            K = Kf + (nu + JITTER) * np.eye(m)
            try:
                L = np.linalg.cholesky(K)
            except np.linalg.LinAlgError:
                return 1e25, np.zeros_like(theta)
            Kinv = np.linalg.inv(K)
            alpha = np.einsum("bij,bj->bi", Kinv, Yb)
            f += 0.5 * np.sum(Yb * alpha) + np.log(np.diagonal(L, axis1=1, axis2=2)).sum() + 0.5 * Yb.size * LOG_2PI
            W = Kinv - alpha[:, :, None] * alpha[:, None, :]
            WG = W * (sig2 * (5.0 / 3.0) * (1.0 + SQRT5 * r) * e)  # dK/dlog ℓ_d = that · Δ_d² / ℓ_d²
            g[0] += 0.5 * np.sum(W * Kf)
            g[1] += 0.5 * nu * np.trace(W, axis1=1, axis2=2).sum()
            g[2] += 0.5 * np.sum(WG * S) / l0**2
            if A is not None:
                g[3:] += 0.5 * np.einsum("bij,bijk->k", WG, A) * inv_l2
        # priors: log-normal(0, 1) on σ² and every ℓ (Gaussian on the logs); horseshoe(0.1) on ν
        f += 0.5 * theta[0] ** 2 + 0.5 * np.sum(theta[2:] ** 2)
        g[0] += theta[0]
        g[2:] += theta[2:]
        a = 3.0 * 0.01 * np.exp(-2.0 * theta[1])
        f -= np.log(np.log1p(a))
        g[1] += 2.0 * a / ((1.0 + a) * np.log1p(a))
        return float(f), g

    # -- prediction --------------------------------------------------------------------------------
    def kernel(self, X1: np.ndarray, X2: np.ndarray) -> np.ndarray:
        """k_C between two sets of SMAC vectors (standardised units, no noise): 0 across signatures."""
        t = self._theta if self._theta is not None else self._default_theta(len(self._ard))
        ls = self._lengthscales(t)
        X1, X2 = np.asarray(X1, dtype=float), np.asarray(X2, dtype=float)
        k1, k2 = np.array(self._keys(X1), dtype=object), np.array(self._keys(X2), dtype=object)
        r2 = _sqdist(self._numerics(X1) / ls, self._numerics(X2) / ls)
        return np.exp(t[0]) * matern52(r2) * (k1[:, None] == k2[None, :])

    @one_blas_thread
    def _predict(self, X: np.ndarray, covariance_type: str | None = "diagonal") -> tuple[np.ndarray, np.ndarray | None]:
        if self._theta is None:
            raise RuntimeError("ConditionalGP: train the model before predicting")
        sig2, nu = np.exp(self._theta[0]), np.exp(self._theta[1])
        ls = self._lengthscales(self._theta)
        X = np.asarray(X, dtype=float)
        keys = self._keys(X)
        n = len(keys)
        local: dict[bytes, int] = {}
        gid = np.array([local.setdefault(k, len(local)) for k in keys])
        order = np.argsort(gid, kind="stable")
        splits = np.split(order, np.cumsum(np.bincount(gid))[:-1])
        mean, var = np.zeros(n), np.full(n, sig2 + nu)
        full = np.zeros((n, n)) if covariance_type == "full" else None
        for rows in splits:
            b = self._index.get(keys[rows[0]])
            if b is None and full is None:
                continue  # an unseen structure: the prior
            a = self._active(X[rows[0]])
            Q = self._numerics(X[rows], a) / ls[a]
            if b is not None:
                blk = self._blocks[b]
                Ks = sig2 * matern52(_sqdist(Q, blk.Zs))
                mean[rows] = Ks @ blk.alpha
                V = blk.Linv @ Ks.T
                var[rows] = sig2 + nu - np.sum(V * V, axis=0)
            if full is not None:
                C = sig2 * matern52(_sqdist(Q, Q)) + nu * np.eye(len(rows))
                full[np.ix_(rows, rows)] = C - (V.T @ V if b is not None else 0.0)
        mean = self._y_mean + self._y_std * mean
        var = np.maximum(var, 1e-10) * self._y_std**2
        if covariance_type is None:
            return mean[:, None], None
        if covariance_type == "full":
            return mean[:, None], full * self._y_std**2
        if covariance_type == "std":
            return mean[:, None], np.sqrt(var)[:, None]
        return mean[:, None], var[:, None]


class GrammarForest(RandomForest):
    """SMAC's random forest (``HyperparameterOptimizationFacade.get_model``'s settings on plain costs,
    one thread),
    with a cap on what it is fitted on and a vectorised imputation.

    Why: SMAC imputes inactive entries with a Python loop over every hyper-parameter on every
    prediction, and its config selector predicts the observed configurations one row at a time
    each ask to find the incumbent: in the Large space's ~1,900 hyper-parameters that is 6 ms a
    row, seconds per ask at 1,000 observations. The imputation values are SMAC's own (a
    categorical's number of choices, −1 for a number), computed once. The fit sees at most
    ``max_observations`` rows (the best half and the most recent half: :func:`best_and_recent`).
    SMAC also passes ``max_leaf_nodes=2**20`` ("unlimited"), which makes scikit-learn's best-first
    builder allocate for a million leaves per tree (85 ms a tree on 20 rows); None is the same
    "unlimited" with the depth-first builder (under a millisecond).
    """

    def __init__(self, configspace: ConfigurationSpace, seed: int = 0, max_observations: int | None = 1000):
        super().__init__(configspace, log_y=False, n_trees=10, seed=seed, n_jobs=1)
        self._rf_opts["max_leaf_nodes"] = None
        self.max_observations = max_observations
        self._fill: np.ndarray | None = None

    def _impute_inactive(self, X: np.ndarray) -> np.ndarray:
        if self._fill is None:
            fill = np.full(len(self._configspace), np.nan)
            for idx, hp in enumerate(self._configspace.values()):
                if self._configspace.parents_of[hp.name]:
                    fill[idx] = len(hp.choices) if isinstance(hp, CategoricalHyperparameter) else (
                        len(hp.sequence) if isinstance(hp, OrdinalHyperparameter) else -1)
            self._fill = fill
        X = np.array(X, dtype=float, copy=True)
        missing = ~np.isfinite(X) & ~np.isnan(self._fill)[None, :]
        X[missing] = np.broadcast_to(self._fill, X.shape)[missing]
        return X

    def _train(self, X: np.ndarray, Y: np.ndarray) -> "GrammarForest":
        if self.max_observations is not None and len(X) > self.max_observations:
            keep = best_and_recent(np.ravel(Y), np.arange(len(X)), self.max_observations)
            X, Y = X[keep], Y[keep]
        return super()._train(X, Y)


class BatchedConfigSelector(ConfigSelector):
    """SMAC's config selector, with the incumbent's predicted cost computed in one call.

    SMAC predicts every observed configuration one row at a time on every ask (the best predicted
    cost is EI's reference): at 5,000 observations that is 5,000 model calls per ask. One call on
    all rows gives the same minimum (the models predict rows independently); ties go to the first
    row, as SMAC's stable sort does.
    """

    def _get_x_best(self, X: np.ndarray) -> tuple[np.ndarray, float]:
        mean, _ = self._model.predict_marginalized(X)
        i = int(np.argmin(np.ravel(mean)))
        return X[i], float(np.ravel(mean)[i])


def make_gp_facade_model(configspace: ConfigurationSpace, seed: int = 0, **kwargs: Any) -> ConditionalGP:
    """The surrogate for ``HyperparameterOptimizationFacade(scenario, target, model=...)``; ``kwargs``
    are :class:`ConditionalGP`'s (``max_observations=`` is the lead's ``surrogate_cap``)."""
    return ConditionalGP(configspace, seed=seed, **kwargs)

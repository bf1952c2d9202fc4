"""Rank-based comparison of search methods over datasets, as Demšar (2006) recommends.

Why: ``cli.py report`` has to say whether one search method is better than another over a set
of datasets, and say it the way the AutoML literature does, so that its numbers can be read
next to published ones. Demšar, "Statistical Comparisons of Classifiers over Multiple Data
Sets", JMLR 7 (2006) 1–30, is that standard: average ranks, the Friedman test with the
Iman–Davenport correction, the Nemenyi post-hoc test with its critical difference (CD) and CD
diagram for k methods, the Wilcoxon signed-rank test for two. The tests reproduce the paper's
worked example (its Tables 2 and 6).

Conventions:

* blocks are datasets (rows), methods are columns; a block with any NaN is dropped, because
  the Friedman test needs complete blocks, and the drop is counted so the report can say so;
* rank 1 is the best; ties get average ranks. Values equal up to float noise tie (the same
  tolerance as :mod:`ggp_automl.experiments.tables`, whose bold cells must agree with ranks):
  means of the same runs summed in another order must not decide a rank;
* the Friedman χ² is Demšar's formula on the average ranks, *without* the tie correction that
  ``scipy.stats.friedmanchisquare`` applies. That is the statistic the literature publishes
  (the paper's 9.28; scipy gives 10.95 on the same ranks), the one the Nemenyi test and the CD
  (which have no tie correction either) are consistent with, and it stays defined when every
  method ties (scipy returns NaN). Without ties the two agree; a test checks it.
"""
from __future__ import annotations

import itertools
import math
import pathlib
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import stats

__all__ = ["PairTest", "RankTest", "block_ranks", "cd_cliques", "cd_diagram_png", "rank_test", "wilcoxon_test"]

# Same tie rule as tables.py: values this close are the same result.
_TIE_RTOL, _TIE_ATOL = 1e-9, 1e-12


@dataclass(frozen=True)
class RankTest:
    """Friedman / Iman–Davenport omnibus test and Nemenyi post-hoc test over blocks."""

    methods: tuple[str, ...]
    n_blocks: int
    dropped_blocks: int
    average_ranks: dict[str, float]
    friedman_chi2: float | None
    friedman_p: float | None
    iman_davenport_f: float | None
    iman_davenport_p: float | None
    alpha: float
    critical_difference: float | None
    nemenyi_p: dict[tuple[str, str], float]  # one entry per pair, in ``methods`` order

    def significant(self) -> bool:
        """Whether the omnibus test rejects "all methods are equivalent" at ``alpha``.

        Iman–Davenport first: Demšar shows Friedman's χ² is undesirably conservative.
        """
        p = self.iman_davenport_p if self.iman_davenport_p is not None else self.friedman_p
        return p is not None and p < self.alpha

    def nemenyi(self, a: str, b: str) -> float | None:
        """The Nemenyi p-value of a pair in either order (None when there is no post-hoc test)."""
        return self.nemenyi_p.get((a, b), self.nemenyi_p.get((b, a)))


@dataclass(frozen=True)
class PairTest:
    """Wilcoxon signed-rank test of method ``a`` against method ``b`` over blocks."""

    a: str
    b: str
    n: int  # differences in the test: complete blocks, less one zero if their count is odd
    wins: int  # blocks where a is better
    losses: int
    ties: int
    r_plus: float  # rank sum where a is better, plus half the ranks of zero differences
    r_minus: float
    statistic: float  # T = min(R+, R-)
    p: float
    alpha: float
    dropped_blocks: int = 0  # pairs with a NaN, left out

    def significant(self) -> bool:
        return self.p < self.alpha


def _snap(values: np.ndarray) -> np.ndarray:
    """Values with float-noise neighbours set equal, so plain ranking sees them as ties.

    Each group is anchored at its smallest value, so a chain of near-equal values cannot
    creep into one tie wider than the tolerance.
    """
    order = np.argsort(values, kind="stable")
    snapped = values[order].copy()
    for i in range(1, snapped.size):
        if math.isclose(snapped[i], snapped[i - 1], rel_tol=_TIE_RTOL, abs_tol=_TIE_ATOL):
            snapped[i] = snapped[i - 1]
    out = np.empty_like(snapped)
    out[order] = snapped
    return out


def _check_alpha(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")


def _as_matrix(matrix, methods: Sequence[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    try:
        values = np.asarray(matrix, dtype=float)
    except (TypeError, ValueError) as exc:  # ragged rows, strings, None ...
        raise ValueError(f"matrix must be a numeric n_blocks x k array: {exc}") from None
    if values.ndim != 2:
        raise ValueError(f"matrix must be 2-D (one row per dataset, one column per method), "
                         f"got shape {values.shape}")
    if isinstance(methods, str):  # tuple("abc") would silently make three methods
        raise ValueError("methods must be a sequence of names, not one string")
    names = tuple(str(m) for m in methods)
    if len(names) != values.shape[1]:
        raise ValueError(f"{len(names)} method names for a matrix with {values.shape[1]} columns")
    if not names:
        raise ValueError("at least one method is needed")
    if len(set(names)) != len(names):
        raise ValueError(f"method names must be unique, got {names}")
    return values, names


def block_ranks(matrix, higher_is_better: bool = True) -> np.ndarray:
    """Rank of each method within each block: 1 = best, ties (up to float noise) averaged."""
    values = np.asarray(matrix, dtype=float)
    if values.ndim != 2:
        raise ValueError(f"matrix must be 2-D (one row per dataset, one column per method), got shape {values.shape}")
    oriented = -values if higher_is_better else values  # rankdata gives rank 1 to the smallest
    return np.array([stats.rankdata(_snap(row)) for row in oriented]).reshape(values.shape)


def rank_test(matrix, methods: Sequence[str], higher_is_better: bool = True, alpha: float = 0.05) -> RankTest:
    """Average ranks, Friedman and Iman–Davenport tests, Nemenyi p-values and CD (Demšar §3.2.2).

    ``matrix`` is n_blocks x k: one row per dataset, one column per method. The tests need
    k >= 3 and at least 2 complete blocks; otherwise their fields are None (for k = 2 use
    :func:`wilcoxon_test`), while the average ranks are still given (NaN with no block).
    """
    values, names = _as_matrix(matrix, methods)
    _check_alpha(alpha)
    complete = ~np.isnan(values).any(axis=1)
    ranks = block_ranks(values[complete], higher_is_better)
    n, k = ranks.shape
    average = ranks.mean(axis=0) if n else np.full(k, np.nan)
    chi2 = friedman_p = f_f = f_p = cd = None
    nemenyi: dict[tuple[str, str], float] = {}
    if k >= 3 and n >= 2:
        chi2 = 12.0 * n / (k * (k + 1)) * (float(np.sum(average**2)) - k * (k + 1) ** 2 / 4.0)
        chi2 = max(chi2, 0.0)  # all methods tied: 0 up to rounding, never a negative statistic
        friedman_p = float(stats.chi2.sf(chi2, k - 1))
        denominator = n * (k - 1) - chi2  # 0 when every block orders the methods identically
        if denominator > 1e-12 * n * (k - 1):
            f_f = (n - 1) * chi2 / denominator
            f_p = float(stats.f.sf(f_f, k - 1, (k - 1) * (n - 1)))
        else:
            f_f, f_p = math.inf, 0.0
        q_alpha = float(stats.studentized_range.ppf(1.0 - alpha, k, np.inf)) / math.sqrt(2.0)
        cd = q_alpha * math.sqrt(k * (k + 1) / (6.0 * n))
        # Imported here: it pulls in pandas, statsmodels, seaborn and pyplot (~1 s), needed only here.
        import scikit_posthocs

        # scikit-posthocs wants blocks as rows and groups as columns and ranks each row
        # ascending; handing it our ranks (1 = best) makes its ranks ours in either direction.
        p_matrix = scikit_posthocs.posthoc_nemenyi_friedman(ranks).to_numpy()
        nemenyi = {(names[i], names[j]): float(p_matrix[i, j]) for i, j in itertools.combinations(range(k), 2)}
    return RankTest(methods=names, n_blocks=int(n), dropped_blocks=int((~complete).sum()),
                    average_ranks={m: float(r) for m, r in zip(names, average)}, friedman_chi2=chi2,
                    friedman_p=friedman_p, iman_davenport_f=f_f, iman_davenport_p=f_p, alpha=alpha,
                    critical_difference=cd, nemenyi_p=nemenyi)


def wilcoxon_test(a_values, b_values, a: str, b: str, higher_is_better: bool = True,
                  alpha: float = 0.05) -> PairTest:
    """Wilcoxon signed-rank test of ``a`` against ``b`` (Demšar §3.1.3), paired by block.

    Zero differences are split evenly between R+ and R- (``zero_method="zsplit"``); as in
    Demšar, one is ignored when their number is odd. Without any non-zero difference p = 1.
    """
    _check_alpha(alpha)
    x, y = np.asarray(a_values, dtype=float), np.asarray(b_values, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or x.size != y.size:
        raise ValueError(f"a_values and b_values must be 1-D and of equal length, got shapes {x.shape} and {y.shape}")
    complete = ~(np.isnan(x) | np.isnan(y))
    x, y = x[complete], y[complete]
    with np.errstate(invalid="ignore"):  # inf - inf is NaN here, and a tie on the next line
        d = x - y if higher_is_better else y - x  # d > 0: a is better
    d[np.isclose(x, y, rtol=_TIE_RTOL, atol=_TIE_ATOL)] = 0.0
    if d.size:
        d = np.sign(d) * _snap(np.abs(d))  # |0.768-0.763| and |0.936-0.931| must tie exactly
    wins, losses, ties = int((d > 0).sum()), int((d < 0).sum()), int((d == 0).sum())
    if ties % 2:
        d = np.delete(d, np.flatnonzero(d == 0)[0])
    ranks = stats.rankdata(np.abs(d))
    half_zero = float(ranks[d == 0].sum()) / 2.0
    r_plus, r_minus = float(ranks[d > 0].sum()) + half_zero, float(ranks[d < 0].sum()) + half_zero
    if wins == 0 and losses == 0:  # scipy's answer here varies (NaN, warnings); no evidence means p = 1
        statistic, p = min(r_plus, r_minus), 1.0
    else:
        result = stats.wilcoxon(d, zero_method="zsplit", alternative="two-sided")
        statistic, p = float(result.statistic), float(result.pvalue)
    return PairTest(a=str(a), b=str(b), n=int(d.size), wins=wins, losses=losses, ties=ties, r_plus=r_plus,
                    r_minus=r_minus, statistic=statistic, p=p, alpha=alpha,
                    dropped_blocks=int((~complete).sum()))


def cd_cliques(test: RankTest) -> list[tuple[str, ...]]:
    """Maximal groups of methods whose average ranks differ by less than the CD, best first.

    These are the thick bars of the CD diagram: within a group the Nemenyi test finds no
    difference. Empty without a CD; singletons are not listed.
    """
    if test.critical_difference is None:
        return []
    order = sorted((m for m in test.methods if math.isfinite(test.average_ranks[m])),
                   key=lambda m: test.average_ranks[m])
    rank = [test.average_ranks[m] for m in order]
    cliques, last_end = [], 0
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and rank[j + 1] - rank[i] < test.critical_difference:
            j += 1
        if j > max(i, last_end):  # ends only grow, so a group ending at or before last_end is nested
            cliques.append(tuple(order[i:j + 1]))
            last_end = j
    return cliques


def cd_diagram_png(test: RankTest, path, title: str = "", blocks: str = "datasets") -> pathlib.Path:
    """Draw Demšar's critical-difference diagram of ``test`` into a PNG at ``path``.

    An axis of ranks 1..k with the best at the left, each method hanging from its average
    rank with its name, the CD bar with its length, and thick bars joining the methods of each
    :func:`cd_cliques` group. Without a CD (k < 3, fewer than 2 blocks) the ranks are drawn alone.
    """
    # matplotlib's object API, not pyplot: no backend to select on a machine without a screen,
    # no global state changed and no figure left open in pyplot's registry.
    from matplotlib.figure import Figure

    path = pathlib.Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    k, cd = len(test.methods), test.critical_difference
    placed = sorted((m for m in test.methods if math.isfinite(test.average_ranks[m])),
                    key=lambda m: test.average_ranks[m])
    cliques = cd_cliques(test)
    left, right = placed[:(len(placed) + 1) // 2], placed[(len(placed) + 1) // 2:]
    first_label = 0.35 + 0.15 * len(cliques)  # the labels hang below the clique bars
    depth = first_label + 0.25 * max(len(left), len(right), 1)

    fig = Figure(figsize=(7.0, 1.3 + 0.5 * depth))
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    ax.set_axis_off()
    hi = max(k, 2)
    ax.set_xlim(1 - 0.1 * hi, hi + 0.1 * hi)
    ax.set_ylim(depth + 0.1, -1.1 if cd is not None else -0.45)  # y grows downwards, as one reads
    ax.plot([1, hi], [0, 0], color="black", lw=1)
    for tick in np.arange(1, hi + 0.25, 0.5):
        major = float(tick).is_integer()
        ax.plot([tick, tick], [0, -0.1 if major else -0.05], color="black", lw=1)
        if major:
            ax.text(tick, -0.15, f"{int(tick)}", ha="center", va="bottom", fontsize=9)
    if cd is not None:
        ax.plot([1, 1 + cd], [-0.7, -0.7], color="black", lw=1.5)
        for end in (1, 1 + cd):
            ax.plot([end, end], [-0.78, -0.62], color="black", lw=1)
        ax.text(1 + cd / 2, -0.8, f"CD = {cd:.2f}", ha="center", va="bottom", fontsize=9)
    for idx, group in enumerate(cliques):
        lo_rank, hi_rank = test.average_ranks[group[0]], test.average_ranks[group[-1]]
        y = 0.2 + 0.15 * idx
        ax.plot([lo_rank - 0.03, hi_rank + 0.03], [y, y], color="black", lw=4, solid_capstyle="butt")
    # Lines must not cross: on the left the best hangs shortest, on the right the worst does.
    x_left, x_right = 1 - 0.05 * hi, hi + 0.05 * hi
    for idx, method in enumerate(left):
        r, y = test.average_ranks[method], first_label + 0.25 * idx
        ax.plot([r, r, x_left], [0, y, y], color="black", lw=0.8)
        ax.text(x_left - 0.02 * hi, y, f"{method} ({r:.2f})", ha="right", va="center", fontsize=9)
    for idx, method in enumerate(reversed(right)):
        r, y = test.average_ranks[method], first_label + 0.25 * idx
        ax.plot([r, r, x_right], [0, y, y], color="black", lw=0.8)
        ax.text(x_right + 0.02 * hi, y, f"({r:.2f}) {method}", ha="left", va="center", fontsize=9)
    caption = f"N = {test.n_blocks} {blocks}, alpha = {test.alpha:g}"
    if cd is None:
        caption += ", no CD (needs 3 methods and 2 complete datasets)"
    ax.text((1 + hi) / 2, depth + 0.05, caption, ha="center", va="top", fontsize=8, color="0.35")
    if title:
        ax.set_title(title, fontsize=10)
    fig.savefig(path, format="png", dpi=150, bbox_inches="tight")  # tight: long names may reach past the axes
    return path

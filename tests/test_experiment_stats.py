"""Tests of ggp_automl.experiments.stats against Demšar (2006), JMLR 7:1–30, and its edge cases.

The worked example is the paper's: AUC of C4.5, C4.5+m, C4.5+cf and C4.5+m+cf on 14 UCI data
sets (Table 6, §3.2.2; the first two columns are Table 2, §3.1.3). Expected values are asserted
to the paper's own rounding.
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from scipy import stats as sps

from ggp_automl.experiments.stats import (
    PairTest,
    RankTest,
    block_ranks,
    cd_cliques,
    cd_diagram_png,
    rank_test,
    wilcoxon_test,
)

METHODS = ("C4.5", "C4.5+m", "C4.5+cf", "C4.5+m+cf")
AUC = np.array([
    [0.763, 0.768, 0.771, 0.798],  # adult (sample)
    [0.599, 0.591, 0.590, 0.569],  # breast cancer
    [0.954, 0.971, 0.968, 0.967],  # breast cancer wisconsin
    [0.628, 0.661, 0.654, 0.657],  # cmc
    [0.882, 0.888, 0.886, 0.898],  # ionosphere
    [0.936, 0.931, 0.916, 0.931],  # iris
    [0.661, 0.668, 0.609, 0.685],  # liver disorders
    [0.583, 0.583, 0.563, 0.625],  # lung cancer
    [0.775, 0.838, 0.866, 0.875],  # lymphography
    [1.000, 1.000, 1.000, 1.000],  # mushroom
    [0.940, 0.962, 0.965, 0.962],  # primary tumor
    [0.619, 0.666, 0.614, 0.669],  # rheum
    [0.972, 0.981, 0.975, 0.975],  # voting
    [0.957, 0.978, 0.946, 0.970],  # wine
])
VOTING = 12
# Table 6 prints each rank in parentheses. On voting it ranks C4.5+cf 2nd and C4.5+m+cf 3rd
# although both print as 0.975: the paper ranked the unrounded AUCs. That one row is why the
# printed AUCs give average ranks 2.929 / 1.929 for the last two methods, not 2.893 / 1.964.
PAPER_RANKS = block_ranks(AUC)
PAPER_RANKS[VOTING] = [4, 1, 2, 3]


@pytest.fixture(scope="module")
def paper():
    return rank_test(PAPER_RANKS, METHODS, higher_is_better=False, alpha=0.05)


@pytest.fixture(scope="module")
def paper_10():
    return rank_test(PAPER_RANKS, METHODS, higher_is_better=False, alpha=0.10)


# ---------------------------------------------------------------- Demšar's worked example

def test_paper_average_ranks(paper):
    assert isinstance(paper, RankTest)
    assert paper.n_blocks == 14 and paper.dropped_blocks == 0
    assert [round(paper.average_ranks[m], 3) for m in METHODS] == [3.143, 2.000, 2.893, 1.964]


def test_printed_auc_ranks_differ_from_the_paper_only_on_voting():
    ranks = block_ranks(AUC)
    others = np.arange(len(AUC)) != VOTING
    np.testing.assert_array_equal(ranks[others], PAPER_RANKS[others])
    np.testing.assert_array_equal(ranks[VOTING], [4, 1, 2.5, 2.5])  # the printed tie, averaged
    test = rank_test(AUC, METHODS)
    assert [round(test.average_ranks[m], 3) for m in METHODS] == [3.143, 2.000, 2.929, 1.929]


def test_paper_friedman_and_iman_davenport(paper):
    assert round(paper.friedman_chi2, 2) == 9.28
    assert round(paper.iman_davenport_f, 2) == 3.69
    assert round(sps.f.ppf(0.95, 3, 39), 2) == 2.85  # the paper's critical F(3, 39)
    assert paper.iman_davenport_f > 2.85 and paper.iman_davenport_p < 0.05
    assert paper.significant()  # "so we reject the null-hypothesis"


def test_paper_critical_differences(paper, paper_10):
    se = np.sqrt(4 * 5 / (6 * 14))
    assert round(paper.critical_difference / se, 3) == 2.569  # q_0.05, Table 5(a), k = 4
    assert round(paper.critical_difference, 2) == 1.25
    assert round(paper_10.critical_difference / se, 3) == 2.291  # q_0.10
    assert round(paper_10.critical_difference, 2) == 1.12


def test_paper_nemenyi_groups(paper, paper_10):
    # alpha .05: "even the difference between the best and the worst ... is smaller than" the CD
    assert all(p > 0.05 for p in paper.nemenyi_p.values())
    assert cd_cliques(paper) == [("C4.5+m+cf", "C4.5+m", "C4.5+cf", "C4.5")]
    # alpha .10: C4.5 is worse than C4.5+m and C4.5+m+cf; C4.5+cf cannot be placed
    significant = {pair for pair, p in paper_10.nemenyi_p.items() if p < 0.10}
    assert significant == {("C4.5", "C4.5+m"), ("C4.5", "C4.5+m+cf")}
    assert cd_cliques(paper_10) == [("C4.5+m+cf", "C4.5+m", "C4.5+cf"), ("C4.5+cf", "C4.5")]


def test_nemenyi_p_agrees_with_the_cd(paper, paper_10):
    for test in (paper, paper_10):
        assert len(test.nemenyi_p) == 6
        for a, b in itertools.combinations(METHODS, 2):
            gap = abs(test.average_ranks[a] - test.average_ranks[b])
            assert (test.nemenyi(a, b) < test.alpha) == (gap >= test.critical_difference)
            assert test.nemenyi(b, a) == test.nemenyi(a, b)


def test_paper_wilcoxon():
    # Table 2 / §3.1.3: R+ (C4.5+m better) = 93, R- = 12, T = 12 <= 21, the critical value for N = 14
    result = wilcoxon_test(AUC[:, 1], AUC[:, 0], "C4.5+m", "C4.5")
    assert isinstance(result, PairTest)
    assert (result.r_plus, result.r_minus, result.statistic) == (93.0, 12.0, 12.0)
    assert (result.n, result.wins, result.losses, result.ties) == (14, 10, 2, 2)
    assert result.p < 0.05 and result.significant()
    swapped = wilcoxon_test(AUC[:, 0], AUC[:, 1], "C4.5", "C4.5+m")
    assert (swapped.r_plus, swapped.r_minus, swapped.wins, swapped.losses) == (12.0, 93.0, 2, 10)
    assert swapped.p == pytest.approx(result.p)


# ---------------------------------------------------------------- statistics and directions

def test_friedman_matches_scipy_without_ties():
    # scipy adds a tie correction Demšar's formula lacks; without ties they must agree
    values = np.random.default_rng(0).random((12, 5))
    test = rank_test(values, list("abcde"))
    expected = sps.friedmanchisquare(*values.T)
    assert test.friedman_chi2 == pytest.approx(expected.statistic)
    assert test.friedman_p == pytest.approx(expected.pvalue)


def test_lower_is_better_flips_the_ranking():
    errors = 1.0 - AUC
    flipped = rank_test(errors, METHODS, higher_is_better=False)
    assert flipped.average_ranks == pytest.approx(rank_test(AUC, METHODS).average_ranks)
    as_if_higher = rank_test(errors, METHODS)
    for m in METHODS:  # without the flag, worst becomes best: r -> k + 1 - r
        assert as_if_higher.average_ranks[m] == pytest.approx(5 - flipped.average_ranks[m])
    pair = wilcoxon_test(errors[:, 1], errors[:, 0], "C4.5+m", "C4.5", higher_is_better=False)
    assert (pair.r_plus, pair.r_minus, pair.wins) == (93.0, 12.0, 10)


def test_float_noise_ties():
    # means of the same runs summed in another order differ in the last bit; they still tie
    noisy = np.array([[0.1 + 0.2, 0.3, 0.1], [0.5, 0.6, 0.7]])
    assert block_ranks(noisy)[0].tolist() == [1.5, 1.5, 3.0]
    pair = wilcoxon_test([0.1 + 0.2, 0.9, 0.8], [0.3, 0.5, 0.9], "a", "b")
    assert (pair.wins, pair.losses, pair.ties) == (1, 1, 1)


def test_infinite_values_rank_and_tie_quietly():
    # a diverged log loss is +inf: the worst, and two of them tie (inf - inf must not become NaN)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert block_ranks([[np.inf, 0.3, np.inf]], higher_is_better=False)[0].tolist() == [2.5, 1.0, 2.5]
        pair = wilcoxon_test([np.inf, 0.2, 0.3], [np.inf, 0.4, 0.1], "a", "b", higher_is_better=False)
    assert (pair.wins, pair.losses, pair.ties) == (1, 1, 1)


# ---------------------------------------------------------------- edge cases

def test_two_methods_give_ranks_but_no_friedman():
    test = rank_test(AUC[:, :2], METHODS[:2])
    assert test.average_ranks["C4.5+m"] < test.average_ranks["C4.5"]
    assert sum(test.average_ranks.values()) == pytest.approx(3.0)
    assert test.friedman_chi2 is test.friedman_p is test.iman_davenport_f is test.iman_davenport_p is None
    assert test.critical_difference is None and test.nemenyi_p == {} and test.nemenyi("C4.5", "C4.5+m") is None
    assert not test.significant() and cd_cliques(test) == []


def test_nan_block_is_dropped_and_counted():
    with_nan = np.vstack([AUC, [0.9, np.nan, 0.8, 0.7]])
    test, clean = rank_test(with_nan, METHODS), rank_test(AUC, METHODS)
    assert (test.n_blocks, test.dropped_blocks) == (14, 1)
    assert test.average_ranks == clean.average_ranks
    assert test.friedman_chi2 == pytest.approx(clean.friedman_chi2)
    pair = wilcoxon_test(with_nan[:, 1], with_nan[:, 0], "C4.5+m", "C4.5")
    assert (pair.n, pair.dropped_blocks, pair.r_plus) == (14, 1, 93.0)


def test_fewer_than_two_complete_blocks():
    test = rank_test([[0.9, 0.8, 0.7], [0.5, np.nan, 0.6]], ["a", "b", "c"])
    assert (test.n_blocks, test.dropped_blocks) == (1, 1)
    assert test.average_ranks == {"a": 1.0, "b": 2.0, "c": 3.0}
    assert test.friedman_p is None and test.critical_difference is None and not test.significant()
    empty = rank_test(np.full((2, 3), np.nan), ["a", "b", "c"])
    assert empty.n_blocks == 0 and all(np.isnan(r) for r in empty.average_ranks.values())


def test_all_methods_equal():
    test = rank_test(np.full((6, 4), 0.5), list("abcd"))
    assert test.average_ranks == dict.fromkeys("abcd", 2.5)
    assert test.friedman_chi2 == 0.0 and test.friedman_p == 1.0
    assert test.iman_davenport_f == 0.0 and test.iman_davenport_p == 1.0
    assert set(test.nemenyi_p.values()) == {1.0} and not test.significant()
    assert cd_cliques(test) == [("a", "b", "c", "d")]
    pair = wilcoxon_test([0.5] * 5, [0.5] * 5, "a", "b")
    assert pair.p == 1.0 and (pair.ties, pair.n) == (5, 4)  # an odd count of zeros drops one


def test_identical_order_in_every_block():
    # chi2 = N(k-1): the Iman-Davenport denominator is 0, F is infinite, not a ZeroDivisionError
    test = rank_test(np.tile([3.0, 2.0, 1.0], (5, 1)), ["a", "b", "c"])
    assert test.friedman_chi2 == pytest.approx(10.0)
    assert test.iman_davenport_f == float("inf") and test.iman_davenport_p == 0.0 and test.significant()


@pytest.mark.parametrize("matrix, methods, message", [
    ([0.1, 0.2, 0.3], ["a", "b", "c"], "2-D"),
    (np.zeros((2, 2, 2)), ["a", "b"], "2-D"),
    (np.zeros((3, 2)), ["a", "b", "c"], "3 method names for a matrix with 2 columns"),
    (np.zeros((3, 2)), ["a", "a"], "unique"),
    (np.zeros((3, 3)), "abc", "not one string"),
    ([[0.1, 0.2], [0.3]], ["a", "b"], "numeric"),
    (np.zeros((3, 0)), [], "at least one method"),
])
def test_bad_input_raises(matrix, methods, message):
    with pytest.raises(ValueError, match=message):
        rank_test(matrix, methods)


def test_bad_alpha_and_pairs_raise():
    with pytest.raises(ValueError, match="alpha"):
        rank_test(AUC, METHODS, alpha=1.5)
    with pytest.raises(ValueError, match="equal length"):
        wilcoxon_test([0.1, 0.2], [0.1], "a", "b")
    with pytest.raises(ValueError, match="1-D"):
        wilcoxon_test(AUC, AUC, "a", "b")
    with pytest.raises(ValueError, match="2-D"):
        block_ranks([0.1, 0.2])


# ---------------------------------------------------------------- the diagram

@pytest.mark.parametrize("alpha", [0.10, None])
def test_cd_diagram_is_a_png(tmp_path, paper_10, alpha):
    from matplotlib.image import imread

    test = paper_10 if alpha else rank_test(AUC[:, :2], METHODS[:2])  # None: k = 2, no CD to draw
    path = cd_diagram_png(test, tmp_path / "figs" / "cd.png", title="Demšar Table 6")
    assert path == tmp_path / "figs" / "cd.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    height, width = imread(path).shape[:2]
    assert width > height > 50

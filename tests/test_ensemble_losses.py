"""The ensemble losses of ensemble optimisation on the BO thesis's toy tables (001 Tables 4.1 and 4.2,
values recomputed in notes bo-and-ensembles §3.5), the sigmoid's slope a(m), and multi-class votes."""
from __future__ import annotations

import numpy as np
import pytest

from ggp_automl.evaluation.ensemble_losses import ensemble_loss, margins, sigmoid_slope, votes_of

ORDER = ("l01", "margin", "squared_margin", "sigmoid", "c_bound")


def _losses(errors: list[list[int]], slope: float | None = None) -> list[float]:
    """Rows are classifiers, columns samples, 1 = misclassified: binary votes against y = 0."""
    votes = np.array(errors)
    y = np.zeros(votes.shape[1], dtype=int)
    return [ensemble_loss(votes, y, 2, loss, slope) for loss in ORDER]


T41 = [[0, 1, 1], [1, 0, 1], [1, 1, 0]]
T42 = [[1, 1, 0, 0, 0], [0, 0, 0, 1, 1], [0, 0, 1, 1, 0], [1, 0, 0, 1, 0]]


@pytest.mark.parametrize("table, extra, expected", [
    (T41, [], [1.00, 0.67, 0.44, 0.98, 1.00]),
    (T41, [[1, 0, 0]], [1.00, 0.58, 0.35, 0.67, 0.67]),
    (T41, [[1, 1, 1]], [1.00, 0.75, 0.56, 1.00, 1.00]),
    (T42, [], [0.40, 0.40, 0.20, 0.30, 0.40]),
    (T42, [[0, 0, 1, 0, 1]], [0.20, 0.40, 0.18, 0.24, 0.31]),
    (T42, [[1, 1, 0, 0, 0]], [0.40, 0.40, 0.19, 0.38, 0.38]),
    (T42, [[0, 0, 0, 1, 1]], [0.20, 0.40, 0.21, 0.24, 0.41]),
])
def test_the_toy_tables(table, extra, expected):
    # the printed sigmoid values use one slope throughout: a = 11.494, the root for m = 5
    assert _losses(table + extra, slope=11.494) == pytest.approx(expected, abs=0.006)


def test_unrounded_sigmoid_values():
    assert _losses(T41, 11.494)[3] == pytest.approx(0.9788, abs=1e-4)
    assert _losses(T41 + [[1, 0, 0]], 11.494)[3] == pytest.approx(0.6656, abs=1e-4)
    assert _losses(T41 + [[1, 1, 1]], 11.494)[3] == pytest.approx(0.9968, abs=1e-4)
    assert _losses(T42, 11.494)[3] == pytest.approx(0.3013, abs=1e-4)
    assert [_losses(T42 + [h], 11.494)[3] for h in ([0, 0, 1, 0, 1], [1, 1, 0, 0, 0], [0, 0, 0, 1, 1])] == \
        pytest.approx([0.2367, 0.3822, 0.2367], abs=1e-4)
    # without a slope each ensemble size has its own a(m): the 5-member value is the table's
    assert _losses(T42 + [[0, 0, 1, 0, 1]])[3] == pytest.approx(0.2367, abs=1e-4)


def test_unrounded_values_of_table_4_2():
    base = np.array(T42)
    y = np.zeros(5, dtype=int)
    sqm = [ensemble_loss(np.vstack([base, [h]]), y, 2, "squared_margin") for h in ([0, 0, 1, 0, 1], [1, 1, 0, 0, 0],
                                                                                 [0, 0, 0, 1, 1])]
    assert sqm == pytest.approx([0.176, 0.192, 0.208], abs=5e-4)
    cb = [ensemble_loss(np.vstack([base, [h]]), y, 2, "c_bound") for h in ([0, 0, 1, 0, 1], [1, 1, 0, 0, 0],
                                                                         [0, 0, 0, 1, 1])]
    assert cb == pytest.approx([0.308, 0.381, 0.414], abs=5e-4)
    # the squared margin and the C-bound prefer h'1 to h'2 (diversity) though h'1's vote errs more
    assert sqm[1] < sqm[2] and cb[1] < cb[2]
    assert ensemble_loss(np.vstack([base, [[1, 1, 0, 0, 0]]]), y, 2, "l01") > \
        ensemble_loss(np.vstack([base, [[0, 0, 0, 1, 1]]]), y, 2, "l01")


@pytest.mark.parametrize("m, a", [(3, 20.72), (5, 11.49), (7, 9.575), (12, 7.914), (20, 6.90), (50, 5.50)])
def test_sigmoid_slope(m, a):
    assert sigmoid_slope(m) == pytest.approx(a, abs=0.006)
    assert sigmoid_slope(1) == sigmoid_slope(3)


def test_adapted_c_bound_lies_in_0_1_and_flips_sign_for_negative_mean_margins():
    rng = np.random.default_rng(0)
    for _ in range(50):
        votes = rng.integers(0, 3, size=(rng.integers(1, 9), 20))
        y = rng.integers(0, 3, size=20)
        value = ensemble_loss(votes, y, 3, "c_bound")
        assert 0.0 <= value <= 1.0
        M, _ = margins(votes, y, 3)
        mu1, mu2 = M.mean(), (M ** 2).mean()
        if mu1 < 0 and mu2 > 0:
            assert value == pytest.approx((1 + mu1 ** 2 / mu2) / 2)
    assert ensemble_loss(np.array([[0, 1], [1, 0]]), np.array([0, 0]), 2, "c_bound") == 1.0  # μ2 = 0


def test_multiclass_votes_use_the_strongest_wrong_class():
    votes = np.array([[0, 1], [0, 2], [1, 2], [2, 2]])  # example 0: 2 right, 1 and 1 wrong; example 1: 0 right
    M, D = margins(votes, np.array([0, 1]), 3)
    np.testing.assert_allclose(M, [0.0, -0.5])
    np.testing.assert_allclose(D, [0.25, -0.5])  # (2 − 1)/4 and (1 − 3)/4
    assert ensemble_loss(votes, np.array([0, 1]), 3, "l01") == 0.5


def test_multilabel_predictions_vote_per_cell():
    a, b = np.array([[1, 0], [0, 1]]), np.array([[1, 1], [0, 0]])
    votes, binary = votes_of([a, b, a])
    assert binary and votes.shape == (3, 4)
    assert ensemble_loss(votes, np.array([[1, 0], [0, 1]]).ravel(), 2, "l01") == 0.0
    with pytest.raises(ValueError, match="unknown ensemble loss"):
        ensemble_loss(votes, np.zeros(4, int), 2, "hinge")

"""Measures: hand-computed toy cases, agreement with scikit-learn, the fitness (Eq. 5.1) and its registry."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn import metrics as skm

from ggp_automl.evaluation.metrics import (
    FITNESS,
    MAXIMISE,
    average_precision,
    coverage,
    error_rate,
    exact_match,
    f1_example,
    f1_macro,
    f1_micro,
    fitness,
    fitness_names,
    get_fitness,
    hamming_loss,
    jaccard,
    macro_f_measure,
    macro_precision,
    macro_recall,
    multilabel_measures,
    one_error,
    ranking_loss,
    singlelabel_measures,
)

# A toy case small enough to check by hand: 3 instances, 3 labels.
Y = np.array([[1, 0, 0],
              [0, 1, 1],
              [1, 1, 0]])
Z = np.array([[1, 0, 0],        # exact
              [0, 1, 0],        # misses label 3
              [1, 0, 1]])       # misses label 2, wrong label 3
S = np.array([[0.9, 0.2, 0.1],
              [0.1, 0.8, 0.4],
              [0.7, 0.3, 0.6]])


def _random_case(seed: int, n: int = 60, q: int = 7) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    Yr = (rng.random((n, q)) < 0.3).astype(np.int8)
    Sr = np.clip(0.5 * Yr + rng.random((n, q)) * 0.7, 0, 1).round(1)     # rounding makes ties
    return Yr, (Sr >= 0.5).astype(np.int8), Sr


def test_toy_case_by_hand():
    assert exact_match(Y, Z) == pytest.approx(1 / 3)
    assert hamming_loss(Y, Z) == pytest.approx(3 / 9)
    # per label: l1 TP=2 -> F=1; l2 TP=1, FN=1 -> 2/3; l3 TP=0 -> 0
    assert f1_macro(Y, Z) == pytest.approx((1 + 2 / 3 + 0) / 3)
    # row 3: relevant {1,2}, irrelevant {3}; label 3 (0.6) outranks label 2 (0.3): 1 of 2 pairs
    assert ranking_loss(Y, S) == pytest.approx((0 + 0 + 0.5) / 3)
    f = (1 / 3 + (1 - 1 / 3) + (1 + 2 / 3) / 3 + (1 - 0.5 / 3)) / 4
    assert fitness(Y, Z, S) == pytest.approx(f)
    assert f1_example(Y, Z) == pytest.approx((1 + 2 / 3 + 1 / 2) / 3)
    assert jaccard(Y, Z) == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)
    assert f1_micro(Y, Z) == pytest.approx(2 * 3 / (2 * 3 + 1 + 2))          # TP 3, FP 1, FN 2
    assert one_error(Y, S) == 0.0
    assert coverage(Y, S) == pytest.approx((0 + 1 + 2) / 3)
    assert average_precision(Y, S) == pytest.approx((1 + 1 + (1 + 2 / 3) / 2) / 3)


def test_issue_examples():
    # y = [1,0,0], scores [1,1,0]: the tie between labels 1 and 2 counts as mis-ordered (decision 8)
    assert ranking_loss([[1, 0, 0]], [[1.0, 1.0, 0.0]]) == 0.5
    # a label never predicted nor present scores F1 = 0 (MEKA), pulling the macro average down
    assert f1_macro([[1, 0], [0, 0]], [[1, 0], [0, 0]]) == 0.5


def test_empty_label_sets_conventions():
    empty = np.zeros((2, 3), dtype=int)
    assert f1_example(empty, empty) == 0.0          # MEKA F1: 0 when precision and recall are 0
    assert jaccard(empty, empty) == 1.0             # MEKA P_Accuracy: both empty -> 1
    assert ranking_loss(empty, np.random.default_rng(0).random((2, 3))) == 0.0
    assert average_precision(empty, [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]) == 1.0
    assert coverage(empty, [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]) == 0.0
    assert one_error(empty, [[0.1, 0.2, 0.3], [0.3, 0.2, 0.1]]) == 1.0   # top label is never relevant


def test_ties_in_one_error_and_coverage():
    # first maximum wins: label 1 (relevant) before label 2 at the same score
    assert one_error([[1, 0, 0]], [[0.5, 0.5, 0.1]]) == 0.0
    assert one_error([[0, 1, 0]], [[0.5, 0.5, 0.1]]) == 1.0
    # pessimistic ranks: a relevant label tied with an irrelevant one ranks below it
    assert coverage([[1, 0, 0]], [[0.5, 0.5, 0.1]]) == 1.0


@pytest.mark.parametrize("seed", range(4))
def test_agreement_with_scikit_learn(seed):
    Yr, Zr, Sr = _random_case(seed)
    assert exact_match(Yr, Zr) == pytest.approx(skm.accuracy_score(Yr, Zr))
    assert hamming_loss(Yr, Zr) == pytest.approx(skm.hamming_loss(Yr, Zr))
    assert f1_macro(Yr, Zr) == pytest.approx(skm.f1_score(Yr, Zr, average="macro", zero_division=0))
    assert f1_micro(Yr, Zr) == pytest.approx(skm.f1_score(Yr, Zr, average="micro", zero_division=0))
    assert f1_example(Yr, Zr) == pytest.approx(skm.f1_score(Yr, Zr, average="samples", zero_division=0))
    assert jaccard(Yr, Zr) == pytest.approx(skm.jaccard_score(Yr, Zr, average="samples", zero_division=1))
    assert ranking_loss(Yr, Sr) == pytest.approx(skm.label_ranking_loss(Yr, Sr))
    assert average_precision(Yr, Sr) == pytest.approx(skm.label_ranking_average_precision_score(Yr, Sr))
    has = Yr.any(axis=1)
    assert coverage(Yr[has], Sr[has]) == pytest.approx(skm.coverage_error(Yr[has], Sr[has]) - 1)


@pytest.mark.parametrize("seed", range(3))
def test_against_explicit_definitions(seed):
    """Eq. 3.2 (per q), Eq. 3.13 with ties mis-ordered, one-error and Eq. 3.14 written out as loops."""
    Yr, Zr, Sr = _random_case(seed, n=25, q=5)
    n, q = Yr.shape
    assert hamming_loss(Yr, Zr) == pytest.approx(sum(np.sum(Yr[i] != Zr[i]) / q for i in range(n)) / n)
    rl, cov, oe = 0.0, 0.0, 0
    for i in range(n):
        rel, irr = np.flatnonzero(Yr[i]), np.flatnonzero(Yr[i] == 0)
        if len(rel) and len(irr):
            rl += sum(Sr[i, a] <= Sr[i, b] for a in rel for b in irr) / (len(rel) * len(irr))
        if len(rel):
            cov += max(np.sum(Sr[i] >= Sr[i, a]) for a in rel) - 1
        oe += Yr[i, int(np.argmax(Sr[i]))] == 0
    assert ranking_loss(Yr, Sr) == pytest.approx(rl / n)
    assert coverage(Yr, Sr) == pytest.approx(cov / n)
    assert one_error(Yr, Sr) == pytest.approx(oe / n)


def test_fitness_bounds():
    Yr = np.array([[1, 0, 1], [0, 1, 0], [1, 1, 0]])
    assert fitness(Yr, Yr, Yr * 0.8 + 0.1) == 1.0
    assert fitness(Yr, 1 - Yr, 1 - Yr) == 0.0


def test_multilabel_measures_cover_every_multilabel_fitness():
    Yr, Zr, Sr = _random_case(11)
    m = multilabel_measures(Yr, Zr, Sr)
    for name in fitness_names("multilabel"):
        assert m[name] == pytest.approx(get_fitness(name)(Yr, Zr, Sr)), name
        assert 0.0 <= m[name] <= 1.0
    assert m["fitness"] == pytest.approx(
        (m["exact_match"] + 1 - m["hamming_loss"] + m["f1_macro"] + 1 - m["ranking_loss"]) / 4)
    assert m["ranking_loss"] == pytest.approx(ranking_loss(Yr, Sr))
    assert m["coverage_score"] == pytest.approx(1 - coverage(Yr, Sr) / (Yr.shape[1] - 1))
    hard = multilabel_measures(Yr, Zr)                         # no scores: the predictions rank
    assert hard["ranking_loss"] == pytest.approx(ranking_loss(Yr, Zr))


def test_registry():
    assert MAXIMISE is True
    assert all(f.greater_is_better for f in FITNESS.values())
    assert "fitness" in FITNESS and set(fitness_names("singlelabel")) == {"accuracy", "macro_f_measure", "balanced_accuracy"}
    with pytest.raises(ValueError, match=r"unknown fitness 'hamming'.*known.*fitness.*hamming_score"):
        get_fitness("hamming")
    with pytest.raises(ValueError, match="needs the label scores"):
        get_fitness("fitness")(Y, Z, None)
    assert get_fitness("exact_match")(Y, Z) == pytest.approx(1 / 3)
    with pytest.raises(TypeError):
        FITNESS["x"] = FITNESS["fitness"]                       # type: ignore[index]


def test_registered_losses_are_complemented():
    Yr, Zr, Sr = _random_case(5)
    assert get_fitness("hamming_score")(Yr, Zr, Sr) == pytest.approx(1 - hamming_loss(Yr, Zr))
    assert get_fitness("ranking_score")(Yr, Zr, Sr) == pytest.approx(1 - ranking_loss(Yr, Sr))
    assert get_fitness("one_error_score")(Yr, Zr, Sr) == pytest.approx(1 - one_error(Yr, Sr))


def test_single_label_column():
    y, z, s = [[1], [0], [1], [0]], [[1], [1], [0], [0]], [[0.9], [0.6], [0.2], [0.1]]
    m = multilabel_measures(y, z, s)
    assert m["f1_macro"] == pytest.approx(0.5) and m["f1_micro"] == pytest.approx(0.5)
    assert m["exact_match"] == 0.5 and m["hamming_loss"] == 0.5 and m["jaccard"] == 0.5
    assert m["f1_example"] == 0.25 and m["ranking_loss"] == 0.0 and m["average_precision"] == 1.0


def test_single_label_measures():
    y = np.array([0, 0, 0, 1, 1, 2])
    p = np.array([0, 0, 1, 1, 2, 2])
    assert error_rate(y, p) == pytest.approx(2 / 6)
    prec = (1 + 1 / 2 + 1 / 2) / 3
    rec = (2 / 3 + 1 / 2 + 1) / 3
    assert macro_precision(y, p) == pytest.approx(prec)
    assert macro_recall(y, p) == pytest.approx(rec)
    assert macro_f_measure(y, p) == pytest.approx(2 * prec * rec / (prec + rec))
    assert macro_f_measure(y, p) != pytest.approx(skm.f1_score(y, p, average="macro"))  # not the mean of F1s
    m = singlelabel_measures(y, p)
    assert m["accuracy"] == pytest.approx(1 - m["error_rate"])
    assert get_fitness("macro_f_measure")(y, p, None) == pytest.approx(m["macro_f_measure"])
    assert macro_precision(["a", "b"], ["a", "a"]) == pytest.approx((1 / 2 + 0) / 2)


def test_bad_inputs():
    with pytest.raises(ValueError, match="differ in shape"):
        exact_match(Y, Z[:, :2])
    with pytest.raises(ValueError, match="only 0 and 1"):
        hamming_loss(Y, Z * 2)
    with pytest.raises(ValueError, match="finite"):
        ranking_loss(Y, np.full(Y.shape, np.nan))
    with pytest.raises(ValueError, match="no instances"):
        exact_match(np.zeros((0, 2)), np.zeros((0, 2)))
    with pytest.raises(ValueError, match="differ in shape"):
        error_rate([0, 1], [0])


def test_numpy_measures_agree_with_scikit_learn_on_random_cases():
    """The measures are computed with numpy (fast); they must equal scikit-learn's, ties included."""
    from sklearn import metrics as sk

    from ggp_automl.evaluation import metrics as ours

    rng = np.random.default_rng(0)
    for _ in range(200):
        n, q = int(rng.integers(1, 40)), int(rng.integers(2, 9))
        Y = (rng.random((n, q)) < rng.random()).astype(int)
        Z = (rng.random((n, q)) < rng.random()).astype(int)
        S = np.round(rng.random((n, q)), 1)  # coarse scores: many ties
        assert np.isclose(ours.f1_macro(Y, Z), sk.f1_score(Y, Z, average="macro", zero_division=0))
        assert np.isclose(ours.f1_micro(Y, Z), sk.f1_score(Y, Z, average="micro", zero_division=0))
        assert np.isclose(ours.f1_example(Y, Z), sk.f1_score(Y, Z, average="samples", zero_division=0))
        assert np.isclose(ours.jaccard(Y, Z), sk.jaccard_score(Y, Z, average="samples", zero_division=1))
        assert np.isclose(ours.exact_match(Y, Z), sk.accuracy_score(Y, Z))
        assert np.isclose(ours.hamming_loss(Y, Z), sk.hamming_loss(Y, Z))
        assert np.isclose(ours.ranking_loss(Y, S), sk.label_ranking_loss(Y, S))
        assert np.isclose(ours.average_precision(Y, S), sk.label_ranking_average_precision_score(Y, S))

"""Multi-fidelity schedules (thesis §5.4): attribute counts, PIS folds, the LP gain-ratio ranking, views."""
from __future__ import annotations

import numpy as np
import pytest

from ggp_automl.evaluation.candidate import Split
from ggp_automl.evaluation.data import from_arrays
from ggp_automl.evaluation.fidelity import (
    SCENARIOS,
    Fidelity,
    FidelitySchedule,
    _weka_sort,
    attribute_ranking,
    full_view,
    gain_ratio_table,
    gain_ratios,
    n_attributes_kept,
    restrict,
)

nan = np.nan

# A small dataset with numeric (0, 2) and nominal (1, 3) attributes and missing values; the
# merits below are what WEKA 3.8's GainRatioAttributeEval + Ranker print for its label-powerset
# transformation (7 label sets), checked with weka.jar — bit for bit.
LIT_X = np.array([
    [0.5, 0, 0.2, 2], [3.0, 0, 0.1, 1], [1.5, nan, -0.6, 3], [5.7, 0, nan, 3], [1.8, 1, -2.0, 2],
    [nan, nan, nan, 2], [4.5, 1, 0.4, nan], [4.0, 2, -2.1, nan], [1.3, 1, 0.8, 0], [-1.4, 0, -1.7, 2],
    [nan, 0, 0.8, 3], [nan, 2, -0.8, nan], [2.3, 0, 0.8, 1], [3.1, nan, 0.1, 1], [1.8, 0, -1.5, 2],
    [nan, 2, 1.2, 1], [3.5, 1, 1.4, 2], [6.2, 0, nan, 0], [3.4, 0, -0.3, 0], [0.9, 1, -0.2, nan],
    [-0.2, nan, -1.0, 1], [5.6, 2, 1.1, 0], [2.4, 2, -0.5, nan], [4.2, 2, -0.1, nan], [3.9, nan, nan, nan],
    [nan, 0, -0.6, 3], [5.2, 0, -1.3, 2], [4.2, 1, 1.3, nan], [-0.7, 0, -0.2, 2], [5.8, nan, 1.0, 2],
])
LIT_Y = np.array([
    [0, 0, 0], [1, 1, 0], [1, 0, 0], [0, 1, 1], [1, 0, 0], [0, 0, 0], [0, 0, 1], [1, 0, 1], [1, 0, 0], [0, 0, 0],
    [0, 1, 1], [1, 0, 1], [1, 1, 0], [1, 1, 0], [0, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 1], [1, 1, 0], [1, 0, 0],
    [0, 0, 0], [1, 0, 1], [0, 1, 0], [1, 0, 1], [0, 0, 1], [0, 0, 0], [0, 1, 1], [0, 0, 1], [0, 0, 0], [1, 0, 1],
])
WEKA_MERITS = [0.606443571160318, 0.5888659454648789, 0.0, 0.24440764219502245]
WEKA_RANKING = [0, 1, 3, 2]


def _dataset(n: int = 300, m: int = 20, q: int = 5, seed: int = 0, categorical=()):
    """Noise attributes, labels with >= 6 positives each, optional nominal columns."""
    rng = np.random.default_rng(seed)
    Y = (rng.random((n, q)) < 0.3).astype(int)
    X = rng.normal(size=(n, m))
    for j in categorical:
        X[:, j] = rng.integers(0, 4, n)
    return from_arrays(X, Y, categorical_features=list(categorical))


# --------------------------------------------------------------------------- attribute counts

def test_counts_follow_tables_5_5_and_5_6_with_floor_rounding():
    # Tables 5.5/5.6 give only m/5..m/1 and m/2^4..m/2^0; the rounding is the authors' Java
    # integer division (floor): 100/3 -> 33, 100/16 -> 6, 100/8 -> 12.
    assert [n_attributes_kept("PAS", 100, h, 5) for h in range(1, 6)] == [20, 25, 33, 50, 100]
    assert [n_attributes_kept("EAS", 100, h, 5) for h in range(1, 6)] == [6, 12, 25, 50, 100]
    assert [n_attributes_kept("NAS", 100, h, 5) for h in range(1, 6)] == [100] * 5
    schedule = FidelitySchedule("PAS-PIS")
    assert [schedule.n_features(103, h) for h in range(1, 6)] == [20, 25, 34, 51, 103]   # yeast


def test_fewer_than_three_attributes_falls_back_as_the_authors_code():
    # PAS below 3 -> all attributes (so m=10 gives 10, 10, 3, 5, 10).
    assert [n_attributes_kept("PAS", 10, h, 5) for h in range(1, 6)] == [10, 10, 3, 5, 10]
    # EAS below 3 -> the PAS count of that period, and that below 3 -> all.
    assert n_attributes_kept("EAS", 40, 1, 5) == 8          # 40 // 16 = 2 -> 40 // 5 = 8
    assert [n_attributes_kept("EAS", 10, h, 5) for h in range(1, 6)] == [10, 10, 3, 5, 10]
    for mode in ("PAS", "EAS"):
        for m in range(1, 80):
            for h in range(1, 6):
                k = n_attributes_kept(mode, m, h, 5)
                assert min(3, m) <= k <= m
    assert [n_attributes_kept("PAS", 2, h, 5) for h in range(1, 6)] == [2] * 5
    assert n_attributes_kept("EAS", 100, 1, 1) == 100        # one step: everything from the start


def test_view_keeps_the_top_ranked_attributes():
    train = _dataset(m=20)
    ranking = attribute_ranking(train)
    for scenario, counts in (("PAS-NIS", [4, 5, 6, 10, 20]), ("EAS-NIS", [4, 5, 5, 10, 20])):
        schedule = FidelitySchedule(scenario)
        for h, k in enumerate(counts, start=1):
            view = schedule.view(train, h, 0, np.random.default_rng(h))
            assert view.features.tolist() == sorted(ranking[:k].tolist())
            assert view.step == h


# --------------------------------------------------------------------------- instances

def test_pis_folds_partition_the_rows_and_grow_the_learning_part():
    train = _dataset(n=300)
    schedule = FidelitySchedule("NAS-PIS")
    assert [schedule.n_folds(h) for h in range(1, 6)] == [(1, 5), (2, 4), (3, 3), (4, 2), (5, 1)]
    views = [schedule.view(train, h, 0, np.random.default_rng(11)) for h in range(1, 6)]
    for h, v in enumerate(views, start=1):
        assert len(np.intersect1d(v.learn, v.valid)) == 0
        assert np.array_equal(np.union1d(v.learn, v.valid), np.arange(300))
        assert abs(len(v.learn) - h * 300 / 6) <= 6                 # h of 6 folds, ±stratification slack
        assert v.features.tolist() == list(range(20))
    # Same Generator state -> the same 6 folds, so learning parts nest and validation parts shrink.
    for a, b in zip(views, views[1:]):
        assert np.isin(a.learn, b.learn).all() and np.isin(b.valid, a.valid).all()
        assert len(a.learn) < len(b.learn) and len(a.valid) > len(b.valid)


def test_pis_folds_are_stratified():
    train = _dataset(n=300, q=6, seed=3)
    schedule = FidelitySchedule("PAS-PIS")
    views = [schedule.view(train, h, 0, np.random.default_rng(5)) for h in range(1, 6)]
    folds = [views[0].learn] + [np.setdiff1d(b.learn, a.learn) for a, b in zip(views, views[1:])] + [views[-1].valid]
    assert np.array_equal(np.sort(np.concatenate(folds)), np.arange(300))
    positives = train.Y.sum(axis=0)
    assert (positives >= 6).all()
    for fold in folds:
        assert (train.Y[fold].sum(axis=0) >= 1).all()               # every label in every fold
    for v in views:
        assert (train.Y[v.learn].sum(axis=0) >= 1).all() and (train.Y[v.valid].sum(axis=0) >= 1).all()


def test_nis_is_the_80_20_split_and_nas_nis_equals_the_full_view():
    train = _dataset(n=250)
    view = FidelitySchedule("NAS-NIS").view(train, 3, 2, np.random.default_rng(9))
    full = full_view(train, 2, np.random.default_rng(9))
    assert abs(len(view.valid) - 50) <= 3
    assert np.array_equal(view.learn, full.learn) and np.array_equal(view.valid, full.valid)
    assert np.array_equal(view.features, np.arange(20)) and np.array_equal(full.features, np.arange(20))
    assert full.step == 0 and full.key.startswith("r2/full#")
    pas = FidelitySchedule("PAS-NIS").view(train, 1, 2, np.random.default_rng(9))
    assert np.array_equal(pas.learn, full.learn) and len(pas.features) == 4


def test_views_are_deterministic_given_the_generator_and_keys_identify_them():
    train = _dataset(n=200)
    schedule = FidelitySchedule("PAS-PIS")
    a = schedule.view(train, 2, 3, np.random.default_rng(42))
    b = schedule.view(train, 2, 3, np.random.default_rng(42))
    c = schedule.view(train, 2, 3, np.random.default_rng(43))
    for field in ("features", "learn", "valid"):
        assert np.array_equal(getattr(a, field), getattr(b, field))
    assert a.key == b.key and a.key.startswith("r3/PAS-PIS:2of5#")
    assert c.key != a.key                                        # a fresh split is a different view
    rng = np.random.default_rng(42)
    first, second = schedule.view(train, 2, 3, rng), schedule.view(train, 2, 3, rng)
    assert first.key == a.key and second.key != first.key       # each call advances the Generator
    with pytest.raises(ValueError):
        a.learn[0] = 5                                           # views are read-only


# --------------------------------------------------------------------------- restrict

def test_restrict_keeps_the_columns_and_remaps_categorical_features():
    train = _dataset(n=60, m=6, categorical=(1, 4))
    fidelity = Fidelity(1, np.array([0, 1, 3, 4]), np.arange(0, 48), np.arange(48, 60), "test")
    split = restrict(train, fidelity)
    assert isinstance(split, Split)
    assert split.categorical_features == (1, 3)
    assert np.array_equal(split.X_learn, train.X[:48][:, [0, 1, 3, 4]])
    assert np.array_equal(split.X_valid, train.X[48:][:, [0, 1, 3, 4]])
    assert np.array_equal(split.Y_learn, train.Y[:48]) and np.array_equal(split.Y_valid, train.Y[48:])
    only_numeric = restrict(train, Fidelity(1, np.array([2, 5]), np.arange(10), np.arange(10, 20), "t2"))
    assert only_numeric.categorical_features == () and only_numeric.X_learn.shape == (10, 2)
    with pytest.raises(ValueError, match="out of range"):
        restrict(train, Fidelity(1, np.array([0, 6]), np.arange(10), np.arange(10, 20), "bad"))


def test_restrict_of_a_schedule_view():
    train = _dataset(n=120, m=12, categorical=(0, 7, 11))
    view = FidelitySchedule("PAS-PIS").view(train, 4, 0, np.random.default_rng(1))
    split = restrict(train, view)
    assert split.X_learn.shape == (len(view.learn), 6) and split.X_valid.shape == (len(view.valid), 6)
    kept_cats = [i for i, c in enumerate(view.features) if c in (0, 7, 11)]
    assert list(split.categorical_features) == kept_cats


# --------------------------------------------------------------------------- gain-ratio ranking

def test_gain_ratios_and_ranking_match_weka():
    train = from_arrays(LIT_X, LIT_Y, categorical_features=[1, 3])
    assert gain_ratios(train).tolist() == WEKA_MERITS
    assert attribute_ranking(train).tolist() == WEKA_RANKING


def test_informative_attribute_ranks_first():
    rng = np.random.default_rng(0)
    n = 240
    Y = (rng.random((n, 3)) < 0.4).astype(int)
    code = Y @ np.array([1, 2, 4])
    X = np.column_stack([rng.normal(size=n), rng.integers(0, 8, n), code + rng.normal(scale=0.05, size=n),
                         rng.normal(size=n), code])
    numeric = from_arrays(X[:, :4], Y, categorical_features=[1])
    assert attribute_ranking(numeric)[0] == 2                       # the label-set code, as a number
    nominal = from_arrays(X[:, [0, 1, 3, 4]], Y, categorical_features=[1, 3])
    assert attribute_ranking(nominal)[0] == 3                       # the label-set code, as a nominal
    assert gain_ratios(nominal)[3] == pytest.approx(1.0)
    assert attribute_ranking(nominal) is attribute_ranking(nominal)   # cached per training set


def test_gain_ratio_table_and_missing_value_merge():
    assert gain_ratio_table([[10, 0], [0, 10]]) == pytest.approx(1.0)
    assert gain_ratio_table([[5, 5], [5, 5]]) == pytest.approx(0.0, abs=1e-12)
    assert gain_ratio_table([[7, 3]]) == 0.0                          # no split entropy
    # A missing value in class 0 is spread over the values by their frequency (2/4 each).
    Y = np.array([[0], [0], [1], [1], [0]])
    ds = from_arrays(np.array([[0.0], [0.0], [1.0], [1.0], [nan]]), Y, categorical_features=[0])
    assert gain_ratios(ds)[0] == pytest.approx(gain_ratio_table([[2.5, 0.0], [0.5, 2.0]]), abs=1e-15)
    all_missing = from_arrays(np.full((5, 1), nan), Y)
    assert gain_ratios(all_missing)[0] == 0.0


def test_ties_keep_wekas_quicksort_order():
    # Ranker = Utils.sort ascending, reversed; for 10 equal merits WEKA 3.8 ranks 9 2 1 8 3 4 5 6 7 0.
    assert _weka_sort(np.zeros(10))[::-1].tolist() == [9, 2, 1, 8, 3, 4, 5, 6, 7, 0]
    rng = np.random.default_rng(0)
    for n in (1, 2, 3, 4, 7, 50):
        values = rng.integers(0, 3, n).astype(float)
        order = _weka_sort(values)
        assert sorted(order.tolist()) == list(range(n)) and (np.diff(values[order]) >= 0).all()


# --------------------------------------------------------------------------- the schedule object

def test_scenarios_and_validation_messages():
    assert SCENARIOS == ("NAS-NIS", "PAS-PIS", "EAS-PIS", "NAS-PIS", "PAS-NIS", "EAS-NIS")
    assert FidelitySchedule().is_full and FidelitySchedule().scenario == "NAS-NIS"
    assert not FidelitySchedule("PAS-PIS").is_full and not FidelitySchedule("NAS-PIS").is_full
    assert FidelitySchedule("pas-pis").scenario == "PAS-PIS"
    with pytest.raises(ValueError, match=r"unknown multi-fidelity scenario 'PAS-XIS'; choose one of NAS-NIS, PAS-PIS"):
        FidelitySchedule("PAS-XIS")
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="steps must be an integer >= 1"):
            FidelitySchedule("PAS-PIS", steps=bad)
    train = _dataset(n=40)
    schedule = FidelitySchedule("PAS-PIS")
    for step in (0, 6):
        with pytest.raises(ValueError, match=r"step must be an integer in 1\.\.5"):
            schedule.view(train, step, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least 6 training instances"):
        schedule.view(_dataset(n=5), 1, 0, np.random.default_rng(0))


def test_step_at_boundaries():
    s = FidelitySchedule("PAS-PIS", steps=5)
    budget = 3600.0
    cases = {-5.0: 1, 0.0: 1, 719.999: 1, 720.0: 2, 1439.9: 2, 1440.0: 3, 2880.0: 5, 3599.9: 5, 3600.0: 5, 9999.0: 5}
    for elapsed, step in cases.items():
        assert s.step_at(elapsed, budget) == step, elapsed
    assert [FidelitySchedule(steps=3).step_at(t, 3.0) for t in (0, 0.99, 1, 2, 3)] == [1, 1, 2, 3, 3]
    assert FidelitySchedule(steps=1).step_at(10.0, 5.0) == 1
    assert s.step_at(float("inf"), budget) == 5
    with pytest.raises(ValueError, match="budget"):
        s.step_at(1.0, 0.0)

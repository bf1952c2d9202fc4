"""The preprocessing in front of every learner (spaces/encoding.py): the same numbers as the
scikit-learn column transformer it replaced, and shared encodings that are never stale."""
from __future__ import annotations

import numpy as np
import pytest
from ggp_automl.spaces.encoding import (
    FeatureEncoder,
    clear_cache,
    encoded,
    fit_encoded,
    shared_encodings,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.compose import ColumnTransformer
from sklearn.impute import SimpleImputer
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder


def _reference(n_features, categorical):
    """The transformer every model used before issue 25."""
    cat = sorted(set(categorical))
    num = [i for i in range(n_features) if i not in set(cat)]
    parts = []
    if num:
        parts.append(("numeric", SimpleImputer(strategy="mean", keep_empty_features=True), num))
    if cat:
        parts.append(("nominal", make_pipeline(
            SimpleImputer(strategy="most_frequent", keep_empty_features=True),
            OneHotEncoder(handle_unknown="ignore", drop="if_binary", sparse_output=False)), cat))
    return ColumnTransformer(parts, remainder="drop", sparse_threshold=0.0)


@st.composite
def _data(draw):
    n_features = draw(st.integers(1, 6))
    categorical = sorted(draw(st.sets(st.integers(0, n_features - 1))))
    n_rows = draw(st.integers(1, 25))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    missing = draw(st.sampled_from([0.0, 0.2, 0.6, 1.0]))
    rng = np.random.default_rng(seed)

    def table(rows, extra_codes=0):
        X = rng.normal(size=(rows, n_features)).round(2)
        for j in categorical:
            X[:, j] = rng.integers(0, draw(st.integers(1, 4)) + extra_codes, size=rows)
        X[rng.random(X.shape) < missing] = np.nan
        return X

    return table(n_rows), table(draw(st.integers(1, 10)), extra_codes=2), categorical


@settings(max_examples=150, deadline=None)
@given(_data())
def test_same_numbers_as_the_column_transformer(data):
    """Imputation (mean, most frequent with the smallest on ties, 0 for a column with no value),
    one-hot order, a binary column as one indicator, unseen codes as zeros: as the transformer did."""
    import warnings

    X, X_new, categorical = data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unknown categories, empty features
        reference = _reference(X.shape[1], categorical).fit(X)
        want_fit, want_new = reference.transform(X), reference.transform(X_new)
    ours = FeatureEncoder(categorical or None).fit(X)
    np.testing.assert_allclose(ours.transform(X), want_fit, rtol=0, atol=1e-12)
    np.testing.assert_allclose(ours.transform(X_new), want_new, rtol=0, atol=1e-12)


def test_shared_only_inside_the_block_and_read_only():
    clear_cache()
    X = np.array([[1.0, 0.0], [np.nan, 1.0], [3.0, 1.0]])
    outside_a = fit_encoded(X, [1])
    outside_b = fit_encoded(X, [1])
    assert outside_a[1] is not outside_b[1] and outside_a[1].flags.writeable
    with shared_encodings():
        enc, Xt = fit_encoded(X, [1])
        again_enc, again = fit_encoded(X, [1])
        assert again is Xt and again_enc is enc and not Xt.flags.writeable
        assert encoded(enc, X) is Xt
        with pytest.raises(ValueError):
            Xt[0, 0] = 5.0  # a learner writing into its input fails instead of changing later candidates' data
        other = X.copy()  # another array object, even with equal values, is encoded for itself
        assert fit_encoded(other, [1])[1] is not Xt
    # outside the block a caller may change X in place between calls: nothing remembered
    X[0, 0] = 100.0
    assert encoded(enc, X)[0, 0] == 100.0


def test_a_freed_array_is_never_mistaken_for_a_new_one_at_its_address():
    clear_cache()
    with shared_encodings():
        for value in range(50):  # new arrays, often at a freed array's address
            X = np.full((4, 2), float(value))
            _, Xt = fit_encoded(X, None)
            assert Xt[0, 0] == value


def test_encoder_refuses_another_width():
    enc = FeatureEncoder([0]).fit(np.zeros((3, 2)))
    with pytest.raises(ValueError, match="2"):
        enc.transform(np.zeros((3, 3)))


def test_what_depends_on_x_alone_is_computed_once_per_view():
    from ggp_automl.spaces.encoding import per_view

    clear_cache()
    calls = []

    def order(X):
        calls.append(1)
        return np.argsort(X, axis=0, kind="stable"), np.sort(X, axis=0)

    X = np.random.default_rng(0).normal(size=(20, 3))
    per_view(X, "order", order)
    per_view(X, "order", order)
    assert len(calls) == 2  # not a shared encoding: computed each time
    with shared_encodings():
        _, Xt = fit_encoded(X, None)
        first = per_view(Xt, "order", order)
        again = per_view(Xt, "order", order)
    assert len(calls) == 3 and again is first and not first[0].flags.writeable


_SHARING_MODULES = ("_rules_oner", "_rules_ripper", "_functions_smo")


@pytest.mark.parametrize("name", ["OneR", "JRip", "PART", "DecisionTable", "BayesNet", "SMO"])
def test_rule_learners_learn_the_same_on_a_shared_view(name):
    """Sharing what depends on X alone across labels (sorted columns, MDL's sorted orders, SMO's
    filtered rows and kernel matrix) changes no prediction: a binary relevance over four labels,
    fitted on the shared encoding and on a plain copy."""
    from ggp_automl.spaces.encoding import per_view
    from ggp_automl.spaces.model import MultiLabelModel
    from ggp_automl.spaces.showcase import minimal_chain

    rng = np.random.default_rng(1)
    X = rng.normal(size=(80, 5)).round(1)
    Y = (X[:, :4] + rng.normal(scale=0.5, size=(80, 4)) > 0).astype(int)
    clear_cache()
    plain = MultiLabelModel(minimal_chain(name), 0.5).fit(X.copy(), Y).predict_proba(X.copy())
    computed = []
    import ggp_automl.spaces.encoding as encoding

    def counting(X, what, compute):
        return per_view(X, what, lambda X: computed.append(what) or compute(X))

    for module in _SHARING_MODULES:
        mod = __import__(f"ggp_automl.spaces.slc.{module}", fromlist=["per_view"])
        setattr(mod, "per_view", counting)
    encoding.per_view = counting  # what per_view_columns calls (column_order, the trees)
    try:
        with shared_encodings():
            shared = MultiLabelModel(minimal_chain(name), 0.5).fit(X, Y).predict_proba(X)
    finally:
        encoding.per_view = per_view
        for module in _SHARING_MODULES:
            setattr(__import__(f"ggp_automl.spaces.slc.{module}", fromlist=["per_view"]), "per_view", encoding.per_view)
    np.testing.assert_array_equal(plain, shared)
    assert computed and len(computed) == len(set(computed))  # once per view, not once per label


def test_naive_bayes_all_columns_at_once_equals_one_at_a_time():
    """The vectorised normal estimators (issue 25) give WEKA's per-attribute numbers, as the loop did."""
    from ggp_automl.spaces.slc._bayes_estimators import (attribute_precision, normal_density,
                                                         normal_log_densities, normal_parameters,
                                                         normal_parameters_all, rounded_columns)

    rng = np.random.default_rng(4)
    X = np.column_stack([rng.normal(size=60).round(1), rng.integers(0, 2, 60), np.full(60, 3.0),
                         rng.exponential(size=60), np.zeros(60)])
    y = rng.integers(0, 3, 60)
    w = rng.random(60)
    precision, Xr, Xr2 = rounded_columns(X)
    np.testing.assert_allclose(precision, [attribute_precision(X[:, j]) for j in range(5)], rtol=1e-12)
    mean, sd = normal_parameters_all(Xr, Xr2, y, w, 3, precision)
    for j in range(5):
        m, s = normal_parameters(X[:, j], y, w, 3, precision[j])
        np.testing.assert_allclose(mean[j], m, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sd[j], s, rtol=1e-9, atol=1e-12)
    X_new = X + rng.normal(scale=0.3, size=X.shape)
    X_new[:, 1] = rng.integers(0, 2, 60)  # 0/1 columns (the matrix-product path), one never 1 in training
    X_new[:, 4] = rng.integers(0, 2, 60)
    floor = np.log(1e-75)
    want = sum(np.maximum(np.log(normal_density(X_new[:, j], mean[j], sd[j], precision[j])), floor) for j in range(5))
    np.testing.assert_allclose(normal_log_densities(X_new, mean, sd, precision, floor, rows=7), want, rtol=1e-9)


def test_a_chain_node_shares_the_views_part_of_naive_bayes():
    """A label network's node learns on [X, parent labels]: NaiveBayes takes the X part's rounding from
    the shared view (once per view, not once per node) and rounds only the parents' columns — the same
    estimators and the same chain predictions as on a plain copy of X."""
    from ggp_automl.spaces.encoding import appended_to, mark_appended, per_view
    from ggp_automl.spaces.mlc.chains import PCC
    from ggp_automl.spaces.mlc.transform import CC
    from ggp_automl.spaces.slc import _bayes_estimators
    from ggp_automl.spaces.slc.bayes import WekaNaiveBayes

    clear_cache()
    rng = np.random.default_rng(5)
    X = np.column_stack([rng.normal(size=(90, 4)).round(2), rng.integers(0, 2, (90, 3))]).astype(float)
    Y = (rng.random((90, 5)) < 0.4).astype(np.int8)
    Y[:, 1] |= (X[:, 0] > 0.3).astype(np.int8)
    plain = [m(WekaNaiveBayes()).fit(X.copy(), Y) for m in (CC, PCC)]
    with shared_encodings():
        _, Xt = fit_encoded(X, None)                   # the shared, read-only view (no categorical columns)
        Z = np.hstack([Xt, Y[:, :2]])
        assert appended_to(Z) is None                   # not registered: computed as a whole
        assert appended_to(mark_appended(Z, Xt)) is Xt
        assert appended_to(mark_appended(np.hstack([X, Y[:, :2]]), X)) is None   # X is not a shared view
        calls = []
        original = _bayes_estimators.rounded_columns

        def counting(A):
            calls.append(A.shape[1])
            return original(A)

        import ggp_automl.spaces.slc.bayes as bayes
        bayes.rounded_columns = counting
        try:
            on_node = WekaNaiveBayes().fit(Z, Y[:, 3])
            whole = WekaNaiveBayes().fit(Z.copy(), Y[:, 3])
            shared = [m(WekaNaiveBayes()).fit(Xt, Y) for m in (CC, PCC)]
        finally:
            bayes.rounded_columns = original
        assert per_view(Xt, "naive-bayes-rounded", original) is not None
        for a, b in zip((on_node.precision_, on_node.theta_, on_node.sigma_),
                        (whole.precision_, whole.theta_, whole.sigma_)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)
        # the view's 7 columns rounded once; the nodes' parent columns (1..4 of them) each on their own
        assert calls.count(7) == 1 and calls.count(9) == 1 and all(c <= 4 or c in (7, 9) for c in calls)
        for a, b in zip(plain, shared):
            np.testing.assert_array_equal(a.predict(X), b.predict(Xt))
            np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(Xt), rtol=1e-10)


def _chain_on_shared_view(name, seed, shape, monkeypatch, owner, attr):
    """CC and PCC over the registry's ``name`` (WEKA's defaults), fitted on a plain copy of X and on its
    shared view: asserts the same chain probabilities, and returns the column counts ``owner.attr`` (the
    per-column computation the view shares, counted) was called with on the shared side."""
    from ggp_automl.spaces.mlc.chains import PCC
    from ggp_automl.spaces.mlc.transform import CC
    from ggp_automl.spaces.params import Params
    from ggp_automl.spaces.registry import load_all

    clear_cache()
    rng = np.random.default_rng(seed)
    X = rng.normal(size=shape).round(1)
    Y = (rng.random((shape[0], 4)) < 0.4).astype(np.int8)
    Y[:, 2] |= (X[:, 1] > 0.2).astype(np.int8)
    make = lambda: load_all()[name].build(Params(name, random_state=1))  # noqa: E731 - WEKA's defaults
    plain = [m(make()).fit(X.copy(), Y) for m in (CC, PCC)]
    widths = []
    original = getattr(owner, attr)

    def counting(*args):
        widths.append(args[-1].shape[1])
        return original(*args)

    monkeypatch.setattr(owner, attr, counting)
    with shared_encodings():
        _, Xt = fit_encoded(X, None)
        shared = [m(make()).fit(Xt, Y) for m in (CC, PCC)]
        for a, b in zip(plain, shared):
            np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(Xt))
    return widths


@pytest.mark.parametrize("name", ["J48", "REPTree"])
def test_a_chain_node_shares_the_views_sorted_columns(name, monkeypatch):
    """A tree on a label network's node matrix [X, parent labels] takes the view's sorted columns from
    the shared view and sorts only the parents' columns: the same trees and chain predictions as on a
    plain copy of X."""
    from ggp_automl.spaces.slc import trees

    widths = _chain_on_shared_view(name, 6, (120, 6), monkeypatch, trees, "sorted_columns")
    assert 6 not in widths or widths.count(6) == 1                 # the view's 6 columns at most once ...
    assert all(w <= 3 for w in widths if w != 6) and len(widths) > 1  # ... and each node only its parents


@pytest.mark.parametrize("name", ["PART", "JRip", "DecisionTable", "BayesNet"])
def test_a_chain_node_shares_the_views_column_order(name, monkeypatch):
    """Rule learners and MDL discretisation on a label network's node matrix take the view's sorted
    columns (``ColumnOrder``) from the shared view and sort only the parents' columns: the same chain
    predictions as on a plain copy of X."""
    from ggp_automl.spaces.slc import _rules_base

    widths = _chain_on_shared_view(name, 7, (150, 5), monkeypatch, _rules_base.ColumnOrder, "__init__")
    assert widths.count(5) == 1 and all(w <= 3 for w in widths if w != 5)

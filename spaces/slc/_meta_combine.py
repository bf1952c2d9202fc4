"""Heterogeneous ensembles of PBIL-Auto-Ens-v2: :class:`Stacking` (WEKA ``meta.Stacking``)
and :class:`Vote` (WEKA ``meta.Vote``).

Why custom rather than ``sklearn.ensemble.StackingClassifier`` / ``VotingClassifier``: the
members are trained through :func:`spaces.slc.base.fit_slc` (a fold or a weighted resample
holding one class gives a constant member instead of an exception; instance weights reach
learners without ``sample_weight``), the internal cross-validation must tolerate classes
smaller than the number of folds (scikit-learn's ``StratifiedKFold`` refuses them), and
Vote needs WEKA's six combination rules (``_meta_combine_rules``), not soft/hard voting.

Both take the same members: ``n_copies`` clones of ``estimator``, copy i re-seeded with
seed S + i (every ``random_state``, nested ones included; learners without one are plain
clones), plus ``extra_estimator`` when given, re-seeded with S. S is the integer
``random_state`` (drawn once per fit from fresh entropy when it is None). Member
distributions are aligned with all classes by :func:`spaces.slc.base.slc_scores`
(zeros for a class a member never saw; hard members give one-hot rows).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from ggp_automl.spaces.deadline import check_deadline

from ._rules_base import stratified_folds  # WEKA's Instances.stratify dealing; a small class misses some folds
from .base import fit_slc, slc_scores
from ._meta_combine_rules import RULES, combine, row_keys
from ._meta_common import (SEED_BOUND, fit_inputs, generator, normalise_rows, predict_inputs,
                           seeded, training_weights)

#: the largest member count (10 copies + 1) must keep S + i inside every library's seed range
_MAX_COPIES = 64


def resolve_seed(random_state) -> int:
    """The ensemble's seed S: ``random_state`` itself when it is an int, else a fresh draw."""
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        return int(random_state)
    return int(generator(random_state).integers(0, SEED_BOUND - _MAX_COPIES))


def _member_scores(members, X: np.ndarray, k: int) -> np.ndarray:
    """(members, n, k) class distributions of fitted members, aligned with codes 0..k-1."""
    out = np.empty((len(members), X.shape[0], k))
    for i, member in enumerate(members):
        check_deadline()
        out[i] = slc_scores(member, X, np.arange(k))
    return out


def _fit_members(templates, X, codes, w, seeds) -> list:
    members = []
    for template, seed in zip(templates, seeds):
        check_deadline()
        members.append(fit_slc(template, X, codes, w, seed))
    return members


def out_of_fold_scores(templates, X, codes, k: int, w, n_folds: int, seed: int, seeds) -> np.ndarray:
    """WEKA Stacking's meta-level attributes, (n, members·k): for every row, each member's
    class distribution from the member trained without that row's fold (folds from
    :func:`stratified_folds` with ``default_rng(seed)``; columns aligned with codes 0..k-1
    even where a fold's training part lacks a class). ``n_folds`` is capped at the row
    count; with one fold the members are trained and scored on all rows. ``w`` is None or
    the instance weights; ``seeds`` are the members' resampling seeds."""
    n, m = X.shape[0], len(templates)
    n_folds = min(int(n_folds), n)
    if n_folds <= 1:
        members = _fit_members(templates, X, codes, w, seeds)
        return _member_scores(members, X, k).transpose(1, 0, 2).reshape(n, m * k)
    folds = stratified_folds(codes, n_folds, np.random.default_rng(seed))
    meta = np.empty((n, m * k))
    for f in range(n_folds):
        test = folds == f
        train = ~test
        members = _fit_members(templates, X[train], codes[train],
                               None if w is None else w[train], seeds)
        meta[test] = _member_scores(members, X[test], k).transpose(1, 0, 2).reshape(-1, m * k)
    return meta


class _Combiner(ClassifierMixin, BaseEstimator):
    """Shared parts: the members' templates and seeds, input handling, ``predict``."""

    def _templates(self, seed: int) -> tuple[list, list[int]]:
        n = self.n_copies
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= _MAX_COPIES:
            raise ValueError(f"n_copies must be an int in [1, {_MAX_COPIES}], got {n!r}")
        templates = [seeded(self.estimator, seed + i) for i in range(int(n))]
        seeds = [seed + i for i in range(int(n))]
        if self.extra_estimator is not None:
            templates.append(seeded(self.extra_estimator, seed))
            seeds.append(seed)
        return templates, seeds

    def _prepare(self, X, y, sample_weight):
        X, self.classes_, codes = fit_inputs(self, X, y)
        w = training_weights(sample_weight, X.shape[0])
        self.seed_ = resolve_seed(self.random_state)
        return X, codes, (w if sample_weight is not None else None)

    def predict(self, X) -> np.ndarray:
        proba = self.predict_proba(X)
        return self.classes_[np.argmax(proba, axis=1)]


class Stacking(_Combiner):
    """WEKA Stacking (Wolpert 1992): the meta-learner is trained on the members' class
    distributions for every training row, taken from an internal stratified
    ``n_folds``-fold cross-validation (``-X``, folds from the seed ``-S``); the members are
    then refit on all rows, and a prediction is the meta-learner's distribution over the
    members' distributions for the row.

    Members: ``n_copies`` seeds S..S+n_copies-1 of ``estimator`` plus ``extra_estimator``
    (module docstring). ``final_estimator`` None means the registry's ``LogisticRegression``
    (WEKA Logistic, ridge 1e-8) at its defaults. Fitted: ``estimators_`` (members refit on
    all rows), ``final_estimator_``, ``classes_``, ``seed_`` (S), ``n_features_in_``.

    Deviations from WEKA: its default meta-learner is ZeroR (``-M``), which ignores the
    members; WEKA refuses ``-X 1`` and more folds than rows — here one fold means the
    members' predictions on the training rows themselves, and the folds are capped at the
    row count.
    """

    def __init__(self, estimator, n_copies: int = 1, extra_estimator=None, n_folds: int = 10,
                 final_estimator=None, random_state=None):
        self.estimator = estimator
        self.n_copies = n_copies
        self.extra_estimator = extra_estimator
        self.n_folds = n_folds
        self.final_estimator = final_estimator
        self.random_state = random_state

    def _meta_template(self, seed: int):
        if self.final_estimator is not None:
            return seeded(self.final_estimator, seed)
        from ggp_automl.spaces.params import Params
        from ggp_automl.spaces.registry import load_all
        return load_all()["LogisticRegression"].build(Params("LogisticRegression", random_state=seed))

    def fit(self, X, y, sample_weight=None):
        X, codes, w = self._prepare(X, y, sample_weight)
        folds = self.n_folds
        if isinstance(folds, bool) or not isinstance(folds, (int, np.integer)) or folds < 1:
            raise ValueError(f"n_folds must be a positive int, got {folds!r}")
        seed = self.seed_
        templates, seeds = self._templates(seed)
        if min(int(folds), X.shape[0]) <= 1:  # one fold: the refit members give the meta data
            self.estimators_ = _fit_members(templates, X, codes, w, seeds)
            meta = self._meta_features(X)
        else:
            meta = out_of_fold_scores(templates, X, codes, self.classes_.size, w, int(folds), seed, seeds)
            self.estimators_ = _fit_members(templates, X, codes, w, seeds)
        check_deadline()
        self.final_estimator_ = fit_slc(self._meta_template(seed), meta, codes, w, seed)
        return self

    def _meta_features(self, X: np.ndarray) -> np.ndarray:
        k = self.classes_.size
        scores = _member_scores(self.estimators_, X, k)
        return scores.transpose(1, 0, 2).reshape(X.shape[0], -1)

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "final_estimator_")
        k = self.classes_.size
        return normalise_rows(slc_scores(self.final_estimator_, self._meta_features(X), np.arange(k)))


class Vote(_Combiner):
    """WEKA Vote: the members are trained on all rows and their class distributions are
    combined by ``combination_rule`` (``-R``: AVG, PROD, MAJ, MIN, MAX, MED; see
    ``_meta_combine_rules``), then normalised.

    Members: ``n_copies`` seeds S..S+n_copies-1 of ``estimator`` plus ``extra_estimator``
    (module docstring). Fitted: ``estimators_``, ``classes_``, ``seed_`` (S, also the seed
    of MAJ's tie draws), ``n_features_in_``.

    Deviations from WEKA: MED combines the class probabilities (WEKA allows MED only for a
    numeric class); MAJ's random tie draw is keyed on the row, not on the prediction order;
    an all-zero combination (e.g. PROD when every class has a zero somewhere) is uniform.
    """

    def __init__(self, estimator, n_copies: int = 1, extra_estimator=None,
                 combination_rule: str = "AVG", random_state=None):
        self.estimator = estimator
        self.n_copies = n_copies
        self.extra_estimator = extra_estimator
        self.combination_rule = combination_rule
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if self.combination_rule not in RULES:
            raise ValueError(f"combination_rule must be one of {RULES}, got {self.combination_rule!r}")
        X, codes, w = self._prepare(X, y, sample_weight)
        templates, seeds = self._templates(self.seed_)
        self.estimators_ = _fit_members(templates, X, codes, w, seeds)
        return self

    def predict_proba(self, X) -> np.ndarray:
        X = predict_inputs(self, X, "estimators_")
        dists = _member_scores(self.estimators_, X, self.classes_.size)
        keys = row_keys(X, self.seed_) if self.combination_rule == "MAJ" else None
        return combine(dists, self.combination_rule, keys)

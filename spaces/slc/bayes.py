"""The Bayesian single-label learners of the grammars: NaiveBayes, NaiveBayesMultinomial, BayesNet.

scikit-learn's ``GaussianNB``/``CategoricalNB``/``MultinomialNB`` differ from WEKA in the parts
that decide predictions on real data (precision rounding and standard-deviation floors,
Laplace-corrected class priors, supervised discretisation), so all three are small numpy
estimators that follow WEKA 3.8 (search-space notes §1.1.4, §1.1.6, §1.1.17):

* :class:`WekaNaiveBayes` — ``<NB-Parameters>``: EMPTY = normal estimator, ``uke`` = kernel
  estimator, ``usd`` = supervised MDL discretisation + Laplace-corrected counts;
* :class:`WekaNaiveBayesMultinomial` — Laplace-smoothed word counts; negative values raise;
* :class:`WekaBayesNet` — MDL discretisation, structure by one of six WEKA search methods
  (``spaces.slc._bayes_net_search``), CPTs by SimpleEstimator (alpha = 0.5).

All of them honour instance weights as WEKA does (they are ``WeightedInstancesHandler``s).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from ggp_automl.spaces.params import Params
from ggp_automl.spaces.registry import register

from ._bayes_discretize import MDLDiscretizer
from ..encoding import appended_to, per_view
from ._bayes_estimators import (KernelTable, attribute_precision, normal_log_densities, normal_parameters_all,
                                rounded_columns)
from ._bayes_net_search import SEARCHES, ScoreData, joint_codes, search_structure
from ._validation import fit_inputs, labels, predict_inputs

_LOG_FLOOR = np.log(1e-75)  # WEKA NaiveBayes: each attribute's likelihood is floored at 1e-75


def _softmax_rows(logp: np.ndarray) -> np.ndarray:
    logp = logp - logp.max(axis=1, keepdims=True)
    p = np.exp(logp)
    return p / p.sum(axis=1, keepdims=True)


class _ProbaClassifier(ClassifierMixin, BaseEstimator):
    """Shared ``predict`` / ``predict_proba`` from a ``_joint_log_likelihood``."""

    def predict_proba(self, X):
        X = predict_inputs(self, X)
        return _softmax_rows(self._joint_log_likelihood(X))

    def predict_log_proba(self, X):
        return np.log(self.predict_proba(X))

    def predict(self, X):
        return labels(self, self.predict_proba(X))


# --------------------------------------------------------------------------- NaiveBayes

def _normal_fit(X: np.ndarray, y: np.ndarray, w: np.ndarray, n_classes: int):
    """``(precision, theta, sigma)`` of NaiveBayes's normal estimators on ``X`` (M columns: (M,), (M, C),
    (M, C)). What depends on X alone is shared across labels: the whole of it for a data view, and for a
    label network's node matrix [view, parent labels] (:func:`~ggp_automl.spaces.encoding.appended_to`)
    the view's part, so that only the parents' columns are rounded (every column is estimated on its own)."""
    view = appended_to(X)
    if view is None:
        precision, Xr, Xr2 = per_view(X, "naive-bayes-rounded", rounded_columns)
        theta, sigma = normal_parameters_all(Xr, Xr2, y, w, n_classes, precision)
        return np.array(precision), theta, sigma
    parts = [per_view(view, "naive-bayes-rounded", rounded_columns), rounded_columns(X[:, view.shape[1]:])]
    fits = [normal_parameters_all(Xr, Xr2, y, w, n_classes, precision) for precision, Xr, Xr2 in parts]
    return (np.concatenate([p[0] for p in parts]), np.vstack([f[0] for f in fits]),
            np.vstack([f[1] for f in fits]))


class WekaNaiveBayes(_ProbaClassifier):
    """WEKA ``bayes.NaiveBayes`` with a normal (default), kernel (``-K``) or discretised (``-D``)
    model of each numeric attribute; class prior and discrete counts are Laplace-corrected.

    ``estimator``: ``"normal"`` | ``"kernel"`` | ``"discretize"``. Instance weights weigh every
    count and moment; the numeric precision comes from the training rows, as in WEKA.
    Deviations: the kernel sum is exact (WEKA truncates it once the rest adds < 1 %); rows of
    weight 0 are ignored entirely (WEKA lets them set the precision), so that a zero weight
    means an absent row — their classes keep their Laplace-corrected prior.
    """

    def __init__(self, estimator: str = "normal"):
        self.estimator = estimator

    def fit(self, X, y, sample_weight=None):
        if self.estimator not in ("normal", "kernel", "discretize"):
            raise ValueError(f"estimator must be 'normal', 'kernel' or 'discretize', got {self.estimator!r}")
        X, y_enc, w = fit_inputs(self, X, y, sample_weight)
        keep = w > 0
        if not keep.all():
            X, y_enc, w = X[keep], y_enc[keep], w[keep]
        C = self.classes_.size
        class_w = np.bincount(y_enc, weights=w, minlength=C)
        self.class_log_prior_ = np.log((class_w + 1.0) / (class_w.sum() + C))
        if self.estimator == "discretize":
            self.discretizer_ = MDLDiscretizer().fit(X, y_enc, sample_weight=w)
            codes = self.discretizer_.transform(X)
            self.feature_log_prob_ = []
            for j, r in enumerate(self.discretizer_.n_bins_):
                counts = np.ones((int(r), C))                       # Laplace: start at 1
                np.add.at(counts, (codes[:, j], y_enc), w)
                self.feature_log_prob_.append(np.log(counts / counts.sum(axis=0, keepdims=True)))
        else:
            if self.estimator == "normal":
                # every column at once; what depends on X alone is shared across labels (issue 25)
                self.precision_, self.theta_, self.sigma_ = _normal_fit(X, y_enc, w, C)
            else:
                self.precision_ = np.array([attribute_precision(X[:, j]) for j in range(X.shape[1])])
                self.kernels_ = [KernelTable(X[:, j], y_enc, w, C, self.precision_[j])
                                 for j in range(X.shape[1])]
        return self

    def appended_scorer(self, X_fixed: np.ndarray):
        """``score(extra, rows=None)``: :meth:`predict_proba` of ``[X_fixed[rows], extra]`` for 0/1
        ``extra`` columns, the finite ``X_fixed``'s log-likelihood computed once (attributes are
        independent given the class, so it is a sum of the two parts; a Gibbs sweep changes only
        the appended labels). Normal estimator only (else None)."""
        if self.estimator != "normal":
            return None
        check_is_fitted(self, "theta_")
        m = X_fixed.shape[1]
        fixed = self.class_log_prior_ + normal_log_densities(
            X_fixed, self.theta_[:m], self.sigma_[:m], self.precision_[:m], _LOG_FLOOR)
        at = [normal_log_densities(np.array([[0.0], [1.0]]), self.theta_[i:i + 1], self.sigma_[i:i + 1],
                                   self.precision_[i:i + 1], _LOG_FLOOR) for i in range(m, self.n_features_in_)]
        at = np.array(at).reshape(-1, 2, self.classes_.size)         # (extra columns, value 0/1, classes)
        at0, step = at[:, 0].sum(axis=0), at[:, 1] - at[:, 0]

        def score(extra: np.ndarray, rows=None) -> np.ndarray:
            base = fixed if rows is None else fixed[rows]
            return _softmax_rows(base + at0 + extra @ step)
        return score

    def _joint_log_likelihood(self, X):
        jll = np.tile(self.class_log_prior_, (X.shape[0], 1))
        if self.estimator == "discretize":
            codes = self.discretizer_.transform(X)
            for j, table in enumerate(self.feature_log_prob_):
                jll += table[codes[:, j]]
            return jll
        if self.estimator == "normal":
            return jll + normal_log_densities(X, self.theta_, self.sigma_, self.precision_, _LOG_FLOOR)
        for j in range(X.shape[1]):
            dens = self.kernels_[j].density(X[:, j])
            with np.errstate(divide="ignore"):
                jll += np.maximum(np.log(dens), _LOG_FLOOR)
        return jll


# --------------------------------------------------------------------------- NaiveBayesMultinomial

class WekaNaiveBayesMultinomial(_ProbaClassifier):
    """WEKA ``bayes.NaiveBayesMultinomial``: P(word|class) = (1 + Σ w·x) / (M + Σ_words Σ w·x),
    P(class) = (1 + Σ w) / (N_w + C); log P(x|class) = Σ_j x_j log P(word_j|class).

    Like WEKA (and sklearn's ``MultinomialNB``) it rejects negative attribute values in training:
    ``fit`` raises ``ValueError`` — under a problem transformation the evaluation records this as a
    failed candidate with fitness 0, as the thesis did (e.g. on yeast, whose features are negative).
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.positive_only = True
        tags.classifier_tags.poor_score = True    # a linear model of word counts, as MultinomialNB
        return tags

    def fit(self, X, y, sample_weight=None):
        X, y_enc, w = fit_inputs(self, X, y, sample_weight)
        if np.any((X < 0) & (w[:, None] > 0)):
            raise ValueError("Negative values in data passed to NaiveBayesMultinomial: numeric "
                             "attribute values must all be greater or equal to zero (as in WEKA)")
        C = self.classes_.size
        onehot = np.zeros((X.shape[0], C))
        onehot[np.arange(X.shape[0]), y_enc] = w
        word_counts = 1.0 + onehot.T @ X                             # (C, M), Laplace
        self.feature_log_prob_ = np.log(word_counts / (word_counts.sum(axis=1, keepdims=True)))
        docs = onehot.sum(axis=0)
        self.class_log_prior_ = np.log((docs + 1.0) / (docs.sum() + C))
        return self

    def _joint_log_likelihood(self, X):
        return self.class_log_prior_[None, :] + X @ self.feature_log_prob_.T


# --------------------------------------------------------------------------- BayesNet

class WekaBayesNet(_ProbaClassifier):
    """WEKA ``bayes.BayesNet``: supervised MDL discretisation, a structure found by ``search``
    (TAN | K2 | HillClimber | LAGDHillClimber | SimulatedAnnealing | TabuSearch) with the Bayes
    score (alpha 0.5), at most ``max_parents`` parents including the class for the local
    searches (not TAN/SA), and SimpleEstimator CPTs (alpha 0.5) from weighted counts (the
    discretisation also weighs rows; the structure score counts rows unweighted, as WEKA's).

    ``parents_`` holds the learned parent sets (node ``n_features_in_`` is the class).
    Deviation: SimulatedAnnealing keeps its best network (WEKA never updates its best score)
    and draws from numpy's generator seeded by ``random_state`` (Java's stream is not reproducible).
    """

    def __init__(self, search: str = "K2", max_parents: int = 2, alpha: float = 0.5,
                 random_state=None):
        self.search = search
        self.max_parents = max_parents
        self.alpha = alpha
        self.random_state = random_state

    def fit(self, X, y, sample_weight=None):
        if self.search not in SEARCHES:
            raise ValueError(f"unknown search {self.search!r}; expected one of {SEARCHES}")
        X, y_enc, w = fit_inputs(self, X, y, sample_weight)
        C, M = self.classes_.size, X.shape[1]
        self.discretizer_ = MDLDiscretizer().fit(X, y_enc, sample_weight=w)
        Z = np.column_stack([self.discretizer_.transform(X), y_enc]).astype(np.int64)
        cards = np.append(self.discretizer_.n_bins_, C)
        data = ScoreData(Z, cards, alpha=0.5)
        self.class_node_ = M
        self.parents_ = [tuple(sorted(p)) for p in
                         search_structure(self.search, data, M, self.max_parents, self.random_state)]
        self._fit_cpts(Z, cards, w)
        return self

    def _fit_cpts(self, Z, cards, w):
        """Weighted counts for every node whose family contains the class (the others cancel
        in P(class | x)); a CPT row is indexed by the observed non-class parent configurations."""
        cls = self.class_node_
        C = int(cards[cls])
        self.cards_ = cards
        self.train_codes_ = Z
        self.cpts_ = {}
        for node, parents in enumerate(self.parents_):
            if node != cls and cls not in parents:
                continue
            others = [p for p in parents if p != cls]
            cfg, size, _ = joint_codes(Z[:, others], cards[others])
            r = int(cards[node])
            if node == cls:
                counts = np.zeros((size, C))
                np.add.at(counts, (cfg, Z[:, cls]), w)
                logp = np.log((counts + self.alpha) / (counts.sum(axis=1, keepdims=True) + C * self.alpha))
            else:
                counts = np.zeros((size, C, r))
                np.add.at(counts, (cfg, Z[:, cls], Z[:, node]), w)
                logp = np.log((counts + self.alpha) / (counts.sum(axis=2, keepdims=True) + r * self.alpha))
            self.cpts_[node] = (others, logp)

    def _joint_log_likelihood(self, X):
        codes = self.discretizer_.transform(X)
        n, cls = X.shape[0], self.class_node_
        C = self.classes_.size
        jll = np.zeros((n, C))
        for node, (others, logp) in self.cpts_.items():
            if not others:       # the class its only parent (K2's default): one configuration, always seen
                jll += logp[0] if node == cls else logp[0][:, codes[:, node]].T
                continue
            _, _, cfg = joint_codes(self.train_codes_[:, others], self.cards_[others], codes[:, others])
            seen = cfg >= 0
            r = int(self.cards_[node])
            if node == cls:
                jll[seen] += logp[cfg[seen]]
                jll[~seen] += -np.log(C)
            else:
                jll[seen] += logp[cfg[seen], :, codes[seen, node]]
                jll[~seen] += -np.log(r)
        return jll


# --------------------------------------------------------------------------- registry

@register("NaiveBayes", kind="slc")
def naive_bayes(p: Params):
    """NaiveBayes: <NB-Parameters> uke = kernel estimator, usd = MDL discretisation, EMPTY = normal."""
    option = p.cat("NB-Parameters")
    estimator = {"uke": "kernel", "usd": "discretize", None: "normal"}.get(option)
    if estimator is None:
        raise ValueError(f"NaiveBayes: unknown <NB-Parameters> value {option!r} ({p.origin})")
    return WekaNaiveBayes(estimator=estimator)


@register("NaiveBayesMultinomial", kind="slc")
def naive_bayes_multinomial(p: Params):
    """NaiveBayesMultinomial (no hyper-parameters); raises on negative attribute values."""
    return WekaNaiveBayesMultinomial()


@register("BayesNet", kind="slc")
def bayes_net(p: Params):
    """BayesNet: <bnc_search> ∈ TAN | K2 | HillClimber | LAGDHillClimber | SimulatedAnnealing | TabuSearch.

    At most 2 parents including the class (search-space notes §1.1.6), i.e. WEKA's ``-Q <search> -- -P 2``;
    WEKA's own default ``K2 -P 1`` is naive Bayes over the discretised attributes (grammars/README.md §7)."""
    return WekaBayesNet(search=p.cat("bnc_search"), max_parents=2, random_state=p.random_state)

"""TPE (``--method tpe``): Optuna's Tree-structured Parzen Estimator, define-by-run on the grammar.

Why no flattening: a derivation *is* a define-by-run program. Every decision the tree generator
makes is asked of the sampling policy (:mod:`gp.policy`), so :class:`TPEPolicy` routes each one to
the candidate's Optuna trial as one ``suggest_*`` call named by its unrolled grammar location
(:attr:`gp.policy.ChoiceContext.unrolled`, which tells apart two occurrences of a rule in one tree):
a rule's alternative is ``suggest_categorical`` over the alternative numbers, ``RANDOM-INT`` is
``suggest_int`` (``log`` kept), ``RANDOM-REAL`` is ``suggest_float`` over the range with its open
ends moved one float inwards, and a real grid (``step=``) is ``suggest_int`` over the grid's index
(:func:`gp.binding.real_grid`). A parameter exists in a trial only if the derivation reached it:
the conditional space is the grammar itself, and users get the sampler they know.

Decisions:

* **Sampler**: ``TPESampler(constant_liar=True)`` with independent (univariate) TPE by default: the
  original tree-structured estimator, which suits a conditional space as it is — trials are split
  into good and bad by fitness, and each parameter's two Parzen estimators are fit on the trials
  whose derivation reached it. Optuna recommends ``multivariate=True, group=True`` for dynamic
  spaces (parameters that always occur together sampled jointly), and ``--multivariate on`` gives
  it; it is not the default because Optuna 5.0 then samples *every* group of the space at every ask,
  each over all trials (about 100 groups in ``large.bnf`` after 250 trials: 1 s per ask at 350
  trials and growing quadratically, against under 0.1 s at 1,000 independent), and with the constant
  liar stores each trial's whole joint sample (a 10 MB checkpoint at 400 trials, against 1 MB at
  1,000). The constant liar counts a candidate still being evaluated as a bad one, so the workers
  of the asynchronous mode and the batch of the generational mode do not all get the same proposal.
  The sampler's seed is drawn once from the run's Generator.
* **Optuna needs one distribution per parameter name** (its kind, ``log`` and a categorical's
  choices; numeric bounds may differ). A number's location always has the same kind, but depth and
  size limits can remove alternatives of a recursive rule: such a restricted choice gets its
  candidate set in its name (``…/<e>{2,3}``), so a trial's parameters are exactly its tree's
  decisions (not a nearest allowed alternative standing in for the one TPE proposed).
* **Startup with the grammar's weights**: Optuna's random startup is uniform over a categorical,
  while the shipped grammars weight alternatives so that every *algorithm* is equally likely. Until
  ``n_startup_trials`` trials are finished, a candidate is drawn as random search draws it (the
  weights, the run's Generator), enqueued as the trial's fixed parameters and then suggested.
* **Fitness**: maximised; a failure is 0.0. In the generational mode a candidate screened out on a
  lower rung is told as ``PRUNED`` (TPE ranks pruned trials below every finished one: the loop's
  (fidelity level, fitness) order); in the asynchronous mode it is never told, and the constant
  liar keeps counting it as bad. A candidate told that has no pending trial (a logged evaluation
  fed back after a resume with another number of workers) is re-derived from its tree and added
  with ``study.add_trial``, so no finished evaluation is lost to the model.
* **History is kept** across new data views (``--reshuffle``, resamples, fidelity periods): split
  noise is observation noise to TPE, as in the BO thesis. The study lives in Optuna's in-memory
  storage, which pickles with its sampler's random state: the checkpoint (the pickled method)
  resumes the search exactly.
"""
from __future__ import annotations

import contextlib
import math
import warnings

import numpy as np

from ggp_automl.gp.binding import real_grid
from ggp_automl.gp.policy import ChoiceContext, SamplingPolicy, UniformPolicy

from ..config import MAX_POPULATION
from ..individual import Individual
from .base import SteadyStateMethod, by_rank
from .registry import register_method
from ..parameters import RESHUFFLE, Parameter

#: a name, so that the study (and every checkpoint) is the same from run to run
STUDY_NAME = "ggp-automl-tpe"


class _Unfollowable(Exception):
    """A tree whose decisions the generator cannot retrace (not derived under this run's limits)."""


@contextlib.contextmanager
def quiet():
    """Optuna without its log lines (a fallback to independent sampling is not news) and experimental warnings,
    for the duration of a call only."""
    import optuna

    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield optuna
    finally:
        optuna.logging.set_verbosity(level)


def suggest(trial, name: str, distribution):
    """``trial.suggest_*`` for an Optuna distribution (the public calls, so Optuna's checks apply)."""
    from optuna.distributions import CategoricalDistribution, IntDistribution

    if isinstance(distribution, CategoricalDistribution):
        return trial.suggest_categorical(name, distribution.choices)
    if isinstance(distribution, IntDistribution):
        return trial.suggest_int(name, distribution.low, distribution.high, log=distribution.log)
    return trial.suggest_float(name, distribution.low, distribution.high, log=distribution.log)


class TPEPolicy(SamplingPolicy):
    """Every decision is one parameter of the current Optuna trial (see the module docstring).

    Three ways to decide, all recording ``{name: (distribution, value)}`` in :attr:`decisions`:
    inside ``suggesting(trial)``, ``trial.suggest_*``; inside ``suggesting(tree=tree)``, that tree's own
    decision (its parameters, re-derived); inside ``suggesting()``, the grammar's weights and the run's
    Generator (random search's draw, for the startup trials)."""

    def __init__(self):
        self.trial = None
        self.tree = None
        self.decisions: dict[str, tuple] = {}
        self._grammar = None
        self._uniform = UniformPolicy()

    def bind(self, grammar) -> None:
        self._grammar = grammar

    def __getstate__(self) -> dict:  # nothing transient is checkpointed; the grammar comes back with attach()
        return {**self.__dict__, "trial": None, "tree": None, "decisions": {}, "_grammar": None}

    @contextlib.contextmanager
    def suggesting(self, trial=None, tree=None):
        self.trial, self.tree, self.decisions = trial, tree, {}
        try:
            yield self.decisions
        finally:
            self.trial = self.tree = None

    def _decide(self, name: str, distribution, draw, follow):
        if self.trial is not None:
            value = suggest(self.trial, name, distribution)
        elif self.tree is not None:
            value = follow(self.tree)
            try:
                inside = distribution._contains(distribution.to_internal_repr(value))
            except (TypeError, ValueError):
                inside = False
            if not inside:
                raise _Unfollowable(f"{name}: {value!r} is not in {distribution}")
        else:
            value = draw()
        self.decisions[name] = (distribution, value)
        return value

    def choose(self, ctx, candidates, weights, rng):
        from optuna.distributions import CategoricalDistribution

        candidates = [int(c) for c in candidates]
        name = ctx.unrolled
        if candidates != list(range(len(self._grammar[ctx.rule].alternatives))):
            name += "{" + ",".join(map(str, candidates)) + "}"

        def follow(tree):
            try:
                node = tree[ctx.path]
            except (KeyError, IndexError):
                node = None
            if getattr(node, "rule", None) != ctx.rule:
                raise _Unfollowable(f"{name}: the tree has no <{ctx.rule}> at {ctx.path}")
            return node.alt

        return self._decide(name, CategoricalDistribution(tuple(candidates)),
                            lambda: self._uniform.choose(ctx, candidates, weights, rng), follow)

    def sample_int(self, ctx, lo, hi, log, rng):
        from optuna.distributions import IntDistribution

        return int(self._decide(ctx.unrolled, IntDistribution(int(lo), int(hi), log=log),
                                lambda: self._uniform.sample_int(ctx, lo, hi, log, rng), self._follow_leaf(ctx)))

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        from optuna.distributions import FloatDistribution, IntDistribution

        if step is not None:  # the grid's index k: value lo + k·step
            grid = real_grid(lo, hi, lo_open, hi_open, step)
            k = self._decide(ctx.unrolled, IntDistribution(grid.first, grid.last),
                             lambda: grid.index(self._uniform.sample_real(ctx, lo, hi, lo_open, hi_open, log, rng,
                                                                          step)),
                             lambda tree: grid.index(self._follow_leaf(ctx)(tree)))
            return grid.value(k)
        a = math.nextafter(float(lo), math.inf) if lo_open else float(lo)
        b = math.nextafter(float(hi), -math.inf) if hi_open else float(hi)
        if a > b:  # no float strictly inside (binding rules it out): the uniform policy's fallback
            return self._uniform.sample_real(ctx, lo, hi, lo_open, hi_open, log, rng)
        return float(self._decide(ctx.unrolled, FloatDistribution(a, b, log=log),
                                  lambda: self._uniform.sample_real(ctx, lo, hi, lo_open, hi_open, log, rng),
                                  self._follow_leaf(ctx)))

    def label(self, name: str, value) -> str:
        """A parameter's value as ``inspect`` shows it: an alternative with its text (shortened), a number."""
        if isinstance(value, float):
            return f"{value:.6g}"
        if name.endswith((">", "}")) and self._grammar is not None:
            rule = name[name.rindex("<") + 1: name.rindex(">")]
            text = self._grammar[rule].alternatives[value].text
            return f"{value}: {text if len(text) <= 40 else text[:39] + '…'}"
        return str(value)

    @staticmethod
    def _follow_leaf(ctx: ChoiceContext):
        def follow(tree):
            try:
                return tree[ctx.path].value
            except (KeyError, IndexError, AttributeError):
                raise _Unfollowable(f"no number at {ctx.path}") from None
        return follow


@register_method
class TPE(SteadyStateMethod):
    """Optuna's TPE sampler, one trial per candidate (ask/tell), in both modes."""

    name = "tpe"
    #: Parzen estimators fit over every trial at each ask (seconds with --multivariate): asked ahead in async
    ask_is_costly = True
    parameters = (
        Parameter("population", int, 20, "TPE: candidates per generation (the generational mode's batch, asked "
                                          "together under the constant liar; logs, checkpoints, --reshuffle)",
                  low=1, high=MAX_POPULATION),
        Parameter("n_startup_trials", int, 10, "TPE: candidates drawn at random (with the grammar's weights) "
                                               "before the Parzen estimators take over", low=0, high=100_000),
        Parameter("multivariate", bool, False, "TPE: Optuna's multivariate TPE with group decomposition (parameters "
                                               "that always occur together sampled jointly); slow beyond a few "
                                               "hundred candidates on the large grammars"),
        RESHUFFLE,
    )

    def __init__(self, config, policy=None):
        if policy is not None and not isinstance(policy, TPEPolicy):
            raise TypeError("tpe samples with its own TPEPolicy")
        super().__init__(config, policy or TPEPolicy())
        self.study = None
        self.seed: int | None = None
        #: phenotype -> numbers of its trials not told yet (the newest last)
        self.pending: dict[str, list[int]] = {}
        self.bests: list[Individual] = []
        self.counts = {"asked": 0, "told": 0, "pruned": 0, "added": 0, "lost": 0}

    def attach(self, grammar, meta):
        super().attach(grammar, meta)
        self.policy.bind(grammar)
        return self

    @property
    def generation_size(self) -> int:
        return self.params["population"]

    # -- ask --------------------------------------------------------------------------------------
    def _study(self, rng: np.random.Generator):
        if self.study is None:
            self.seed = int(rng.integers(2 ** 31 - 1))
            with quiet() as optuna:
                sampler = optuna.samplers.TPESampler(
                    n_startup_trials=self.params["n_startup_trials"], seed=self.seed, constant_liar=True,
                    multivariate=self.params["multivariate"], group=self.params["multivariate"])
                self.study = optuna.create_study(study_name=STUDY_NAME, direction="maximize", sampler=sampler)
        return self.study

    def finished_trials(self) -> int:
        """Trials TPE learns from (finished or pruned): Optuna's own count for its startup."""
        from optuna.trial import TrialState

        return len(self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED)))

    def ask_one(self, rng):
        study = self._study(rng)
        generator = self.variation.generator()
        warm = self._warm_trial(study, generator, rng)  # the warm start's members: the initial design
        with quiet():
            if warm is not None:
                trial, tree = warm
            elif self.finished_trials() < self.params["n_startup_trials"]:
                with self.policy.suggesting() as drawn:  # the grammar's weights, the run's rng
                    tree = generator.grow(rng, self.config.max_depth)
                study.enqueue_trial({name: value for name, (_, value) in drawn.items()})
                trial = study.ask()
                for name, (distribution, _) in drawn.items():
                    suggest(trial, name, distribution)  # the enqueued values: every decision is a suggest call
            else:
                trial = study.ask()
                with self.policy.suggesting(trial):
                    tree = generator.grow(rng, self.config.max_depth)
        self.pending.setdefault(tree.phenotype, []).append(trial.number)
        self.counts["asked"] += 1
        return Individual(tree)

    def _warm_trial(self, study, generator, rng):
        """The next warm-start member as an enqueued trial that follows its tree, or None when none is left
        (a member this grammar cannot follow is skipped and counted as lost)."""
        while self.warm:
            member = self.warm.pop(0)
            try:
                with quiet(), self.policy.suggesting(tree=member) as drawn:
                    tree = generator.grow(rng, self.config.max_depth)
            except _Unfollowable:
                self.counts["lost"] += 1
                continue
            with quiet():
                study.enqueue_trial({name: value for name, (_, value) in drawn.items()})
                trial = study.ask()
                for name, (distribution, _) in drawn.items():
                    suggest(trial, name, distribution)
            return trial, tree
        return None

    # -- tell -------------------------------------------------------------------------------------
    def tell_one(self, evaluated):
        from optuna.trial import TrialState

        pruned = evaluated.level < 0  # screened out on a lower rung (generational mode)
        state = TrialState.PRUNED if pruned else TrialState.COMPLETE
        value = None if pruned else float(evaluated.score)
        numbers = self.pending.get(evaluated.phenotype)
        with quiet():
            if numbers:
                number = numbers.pop()  # the newest: an older one may be a twin screened out for good
                if not numbers:
                    del self.pending[evaluated.phenotype]
                self.study.tell(number, value, state=state)
            else:
                self._add(evaluated, value, state)
        self.counts["pruned" if pruned else "told"] += 1
        if not pruned and evaluated.score > 0 and evaluated.phenotype not in {b.phenotype for b in self.bests}:
            self.bests = by_rank(self.bests + [evaluated])[: self.config.archive_size]

    def _add(self, evaluated: Individual, value, state) -> None:
        """A candidate without a pending trial: its decisions re-derived from its tree, added as a finished trial."""
        from optuna.trial import create_trial

        try:
            with self.policy.suggesting(tree=evaluated.tree) as decisions:
                self.variation.generator().grow(np.random.default_rng(0), self.config.max_depth)
            self.study.add_trial(create_trial(
                params={name: v for name, (_, v) in decisions.items()},
                distributions={name: d for name, (d, _) in decisions.items()}, value=value, state=state))
            self.counts["added"] += 1
        except (_Unfollowable, ValueError):  # a tree from another grammar or limits: booked by the loop, not learnt
            self.counts["lost"] += 1

    def new_view(self):
        """TPE keeps its history: a new split's fitness values are noisy observations of the same function."""

    # -- results ----------------------------------------------------------------------------------
    def archive(self):
        return list(self.bests)

    def best_trial(self):
        if self.study is None:
            return None
        from optuna.trial import TrialState

        done = self.study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        return max(done, key=lambda t: t.value, default=None)  # the first of equal values

    def stats(self):
        best = self.best_trial()
        return {"restarts": 0, "species": None,
                "method": {"trials": len(self.study.get_trials(deepcopy=False)) if self.study is not None else 0,
                           "best_value": None if best is None else round(best.value, 6)}}

    def report(self) -> dict:
        """For ``final.json`` and ``inspect``: the trials and the best trial's parameters."""
        best = self.best_trial()
        c = self.counts
        rows = [["trials asked", c["asked"]], ["told with a fitness", c["told"]],
                ["screened out (pruned)", c["pruned"]], ["not told (in flight, or screened out)",
                                                         sum(map(len, self.pending.values()))],
                ["added from a tree after a resume", c["added"]], ["not learnt (tree not retraceable)", c["lost"]],
                ["random startup trials", self.params["n_startup_trials"]], ["sampler seed", self.seed]]
        if best is not None:
            rows += [["best trial", best.number], ["best value", f"{best.value:.6g}"]]
            rows += [[f"best: {name}", self.policy.label(name, value)] for name, value in best.params.items()]
        return {"title": "TPE (Optuna): trials and the best trial's parameters", "columns": ["what", "value"],
                "rows": rows}

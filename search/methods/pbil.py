"""PBIL as a sampling policy over the grammar (PBIL-Auto-Ens-v2, paper 000 §4; notes methods.md §4).

Why a policy and not a representation of its own: the paper's hierarchy of probability
vectors *is* a grammar read top-down. Level 1 chooses the ensemble type, level 2 its
hyper-parameters, level 3 the base classifier, level 4 the base's hyper-parameters, level 5
SMO's kernel settings — each a choice point of ``grammars/ensembles.bnf``. So one
:class:`ProbabilityVectors` object keeps one probability vector (PV) per grammar location and
answers every decision the tree generator asks (:mod:`gp.policy`); the rest of the system (the
loop, the mapper, the cache, the run directory) is the one every method uses, and PBIL runs on
any grammar, the multi-label Small/Medium/Large spaces and their species grammars included.

The vectors, by location (:attr:`gp.policy.ChoiceContext.location`):

* ``<rule>`` — one component per alternative of the rule (optional parts are two-alternative
  synthetic rules, so "present or not" is a PV too). Keyed by the rule, not by the path that
  reached it, so a base classifier's PVs are shared by every ensemble above it: the paper's
  level-4 sharing (§4.1). A per-ensemble level-3 choice is a rule per ensemble in the grammar.
* ``<rule>/alt/item`` — a number drawn by ``RANDOM-INT``/``RANDOM-REAL``: one component per
  value when the range has at most :data:`MAX_COMPONENTS` values (an integer range, or a real
  grid ``step=``: the paper's Tables 1–4 are such grids), else ``real_bins`` equal bins (in log
  space for a log range), a value drawn uniformly (log-uniformly) inside the chosen bin.

Generation 0 starts from the grammar's weights, normalised (uniform when all weights are 1,
as the paper initialises every PV; the Auto-MEKA grammars weight alternatives so that every
algorithm is equally likely, and PBIL starts from that). After each generation of
``population`` individuals the best ``selection`` share of those that ended with a fitness
update every PV they used: ``p = (1 − LR)·p + LR·RelFreq`` (§4.4).

Decisions the paper leaves open (methods.md §4.5), made here: **RelFreq's denominator** is the
number of times the selected individuals used that PV (a location used twice in one tree —
two base classifiers of one ensemble — counts twice), so every updated PV stays a probability
distribution; a PV no selected individual used is left unchanged. **Failed candidates** are
never selected (a failure would otherwise raise the probability of what made it fail); with
fewer successes than the share, only the successes update. Duplicates in a generation are
evaluated once (the loop's cache) and each copy counts.

Asynchronous mode: the generation's individuals are handed out one by one; the vectors are
updated once a whole generation is back, and a worker that frees up meanwhile gets an
individual of the next generation sampled from the vectors as they are. Everything is plain
picklable state, so the checkpoint (the pickled method) resumes the vectors exactly.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ggp_automl.gp.grammar import Grammar, Sampler
from ggp_automl.gp.policy import ChoiceContext, SamplingPolicy
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.tree import Leaf, Node

from ..config import MAX_POPULATION
from ..individual import Individual
from .base import BatchedMethod, by_rank
from .registry import register_method
from ..parameters import RESHUFFLE, Parameter

#: a numeric location with at most this many values gets one component per value (the paper's
#: largest grid, SMO's RBF gamma 0.001..1.0, has 1,000)
MAX_COMPONENTS = 1000
#: draws inside a real bin before an open end falls back to the inside of the range
_REDRAWS = 100


@dataclass
class Vector:
    """One probability vector: its components' probabilities and what each component stands for.

    ``values``: one number per component (a value range or grid); ``edges``: bin edges
    (``len(p) + 1``; in log space when ``log``); neither for a rule's alternatives."""

    p: np.ndarray
    values: np.ndarray | None = None
    edges: np.ndarray | None = None
    log: bool = False

    def component(self, value) -> int:
        if self.values is not None:
            return int(np.argmin(np.abs(self.values - float(value))))
        x = math.log(value) if self.log else float(value)
        return int(np.clip(np.searchsorted(self.edges, x, side="right") - 1, 0, len(self.p) - 1))

    def label(self, i: int) -> str:
        if self.values is not None:
            return f"{self.values[i]:g}"
        lo, hi = self.edges[i], self.edges[i + 1]
        if self.log:
            lo, hi = math.exp(lo), math.exp(hi)
        return f"[{lo:.3g}, {hi:.3g}]"

    def entropy(self) -> float:
        """Normalised entropy in [0, 1] (1: uniform, 0: converged to one component)."""
        q = self.p[self.p > 0]
        return max(0.0, float(-(q * np.log(q)).sum() / math.log(len(self.p)))) if len(self.p) > 1 else 0.0


def _draw(p: np.ndarray, allowed, rng: np.random.Generator) -> int:
    """A component among ``allowed`` in proportion to ``p`` (uniform if they all have probability 0)."""
    allowed = np.asarray(allowed)
    w = p[allowed]
    total = w.sum()
    if not total > 0:
        w, total = np.ones(len(allowed)), float(len(allowed))
    return int(allowed[int(rng.choice(len(allowed), p=w / total))])


@dataclass
class ProbabilityVectors(SamplingPolicy):
    """PBIL's probability vectors over a grammar's locations (see the module docstring)."""

    learning_rate: float = 0.5
    real_bins: int = 10
    vectors: dict[str, Vector] = field(default_factory=dict)
    #: mean normalised entropy of the vectors after each update
    entropy_history: list[float] = field(default_factory=list)
    _grammar: Grammar | None = field(default=None, repr=False)

    def bind(self, grammar: Grammar) -> None:
        self._grammar = grammar

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_grammar": None}  # re-bound by the method's attach()

    # -- sampling -----------------------------------------------------------------------------
    def choose(self, ctx: ChoiceContext, candidates, weights, rng):
        v = self.vectors.get(ctx.location)
        if v is None:
            alternatives = self._grammar[ctx.rule].alternatives
            w = np.array([a.weight for a in alternatives], dtype=float)
            with np.errstate(over="ignore"):
                w = w / w.max() if not np.isfinite(w.sum()) else w
            v = self.vectors[ctx.location] = Vector(w / w.sum())
        return _draw(v.p, candidates, rng)

    def _numeric(self, ctx: ChoiceContext, values: np.ndarray | None, lo: float, hi: float, log: bool) -> Vector:
        v = self.vectors.get(ctx.location)
        if v is None:
            if values is not None and len(values) <= MAX_COMPONENTS:
                # a log range starts from its log-uniform mass per value, as the uniform policy draws it
                mass = np.log((values + 1.0) / values) if log else np.ones(len(values))
                v = Vector(mass / mass.sum(), values=values)
            else:
                a, b = (math.log(lo), math.log(hi)) if log else (float(lo), float(hi))
                v = Vector(np.full(self.real_bins, 1.0 / self.real_bins),
                           edges=np.linspace(a, b, self.real_bins + 1), log=log)
            self.vectors[ctx.location] = v
        return v

    def sample_int(self, ctx, lo, hi, log, rng):
        lo, hi = int(lo), int(hi)
        if lo == hi:
            return lo
        values = np.arange(lo, hi + 1, dtype=float) if hi - lo < MAX_COMPONENTS else None
        v = self._numeric(ctx, values, lo, hi + 1, log)
        j = _draw(v.p, range(len(v.p)), rng)
        if v.values is not None:
            return int(v.values[j])
        a, b = v.edges[j], v.edges[j + 1]
        x = rng.uniform(a, b)
        value = math.floor(math.exp(x) if log else x)
        return int(min(max(value, lo), hi))

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        lo, hi = float(lo), float(hi)
        if lo == hi:
            return lo
        grid = _grid(lo, hi, step, lo_open, hi_open) if step else None
        v = self._numeric(ctx, grid, lo, hi, log)
        j = _draw(v.p, range(len(v.p)), rng)
        if v.values is not None:
            return float(v.values[j])
        a, b = v.edges[j], v.edges[j + 1]
        for _ in range(_REDRAWS):
            value = min(max(float(math.exp(rng.uniform(a, b)) if log else rng.uniform(a, b)), lo), hi)
            if not ((lo_open and value <= lo) or (hi_open and value >= hi)):
                return value
        return math.nextafter(lo, math.inf) if lo_open else lo

    # -- learning -----------------------------------------------------------------------------
    def used(self, tree) -> list[tuple[str, int]]:
        """The (location, component) pairs a tree's derivation used: the paper's individual (§4.2)."""
        out = []
        for _, node in tree.nodes():
            rule = self._grammar[node.rule]
            if f"<{node.rule}>" in self.vectors and len(rule.alternatives) > 1:
                out.append((f"<{node.rule}>", node.alt))
            for i, item in enumerate(rule.alternatives[node.alt].items):
                loc = f"<{node.rule}>/{node.alt}/{i}"
                if isinstance(item, Sampler) and loc in self.vectors and isinstance(node.children[i], Leaf):
                    out.append((loc, self.vectors[loc].component(node.children[i].value)))
        return out

    def learn(self, selected) -> None:
        """PBIL's update from the selected trees: ``p = (1 − LR)·p + LR·RelFreq`` for every PV they used."""
        counts: dict[str, np.ndarray] = {}
        for tree in selected:
            for loc, j in self.used(tree):
                counts.setdefault(loc, np.zeros(len(self.vectors[loc].p)))[j] += 1
        lr = self.learning_rate
        for loc, c in counts.items():
            v = self.vectors[loc]
            v.p = (1.0 - lr) * v.p + lr * c / c.sum()
        self.entropy_history.append(self.mean_entropy())

    def mean_entropy(self) -> float:
        spread = [v.entropy() for v in self.vectors.values() if len(v.p) > 1]
        return float(np.mean(spread)) if spread else 0.0

    def most_probable(self, top: int = 3) -> list[dict]:
        """Every vector's ``top`` components by probability, structural choices first."""
        rows = []
        for loc, v in self.vectors.items():
            order = np.argsort(-v.p, kind="stable")[:top]
            labels = [self.component_label(loc, int(i)) for i in order]
            rows.append({"location": loc, "components": len(v.p), "entropy": round(v.entropy(), 4),
                         "top": [[label, round(float(v.p[i]), 4)] for label, i in zip(labels, order)]})
        return rows

    def component_label(self, loc: str, i: int) -> str:
        """What component ``i`` of a vector stands for: a value, a bin, or a rule's alternative (shortened)."""
        v = self.vectors[loc]
        if v.edges is not None or v.values is not None:
            return v.label(i)
        text = self._grammar[loc[1:-1]].alternatives[i].text if self._grammar is not None else str(i)
        return text if len(text) <= 40 else text[:39] + "…"


def _grid(lo: float, hi: float, step: float, lo_open: bool, hi_open: bool) -> np.ndarray | None:
    """The values of a ``RANDOM-REAL(lo, hi, step=…)`` grid as the grammar defines them; None for a grid of
    more than :data:`MAX_COMPONENTS` values (binned like a plain range; the generator puts draws on the grid)."""
    from ggp_automl.gp.binding import real_grid

    grid = real_grid(lo, hi, lo_open, hi_open, step)
    return np.asarray(grid.values(), dtype=float) if len(grid) <= MAX_COMPONENTS else None


class _Following(SamplingPolicy):
    """Re-derives a given tree while the probability vectors see every decision it makes (each location's
    vector is made on first sight, as in sampling; the vectors' own draws are thrown away)."""

    def __init__(self, vectors: ProbabilityVectors, tree: Node):
        self.vectors, self.tree = vectors, tree

    def choose(self, ctx, candidates, weights, rng):
        self.vectors.choose(ctx, candidates, weights, rng)
        return self.tree[ctx.path].alt

    def sample_int(self, ctx, lo, hi, log, rng):
        self.vectors.sample_int(ctx, lo, hi, log, rng)
        return self.tree[ctx.path].value

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        self.vectors.sample_real(ctx, lo, hi, lo_open, hi_open, log, rng, step)
        return self.tree[ctx.path].value


@register_method
class PBIL(BatchedMethod):
    """Population-based incremental learning over the grammar's probability vectors."""

    name = "pbil"
    parameters = (
        Parameter("population", int, 50, "PBIL: individuals per generation (paper: 50)", low=2, high=MAX_POPULATION),
        Parameter("learning_rate", float, 0.5, "PBIL: learning rate LR of the update (paper: 0.5)", low=0.0,
                  high=1.0),
        Parameter("selection", float, 0.5, "PBIL: share of a generation that updates the vectors (paper: the best "
                                           "50 %%)", low=0.01, high=1.0),
        Parameter("real_bins", int, 10, "PBIL: components of a real range without a grid step", low=2,
                  high=MAX_COMPONENTS),
        RESHUFFLE,
    )

    def __init__(self, config, policy=None):
        params = config.params
        super().__init__(config, policy or ProbabilityVectors(params["learning_rate"], params["real_bins"]))
        self.generation_bests: list[Individual] = []

    def attach(self, grammar, meta):
        super().attach(grammar, meta)
        self.policy.bind(grammar)
        return self

    @property
    def generation_size(self) -> int:
        return self.params["population"]

    def warm_start(self, trees):
        """PBIL starts from the members in its own representation: one update of the vectors towards the
        members' choices (as if they were a generation's selected best), and they are the first generation's
        first individuals, so the next update learns what they are worth on this data."""
        super().warm_start(trees)
        if trees:
            for tree in trees:  # the vectors are made as a derivation first reaches them: these trees' now
                TreeGenerator(self.variation.bound, _Following(self.policy, tree)).grow(np.random.default_rng(0),
                                                                                        self.config.max_depth)
            self.policy.learn(trees)

    def ask(self, rng):
        generator = self.variation.generator()
        trees = self.take_warm(self.generation_size)
        trees += [generator.grow(rng, self.config.max_depth) for _ in range(self.generation_size - len(trees))]
        return [Individual(t) for t in trees]

    def tell(self, evaluated):
        worked = [i for i in by_rank(evaluated) if i.score > 0]
        n = max(1, round(self.params["selection"] * len(evaluated)))
        self.policy.learn([i.tree for i in worked[:n]])
        if worked:
            self.generation_bests = by_rank(self.generation_bests + worked[:1])[: self.config.archive_size]

    def new_view(self):
        """Fitness values on the new view are not comparable with the open generation's: learn from
        what it has (two or more), then start a new one."""
        if len(self.current) >= 2:
            self.tell(self.current)
        self.current = []

    def archive(self):
        return by_rank(self.generation_bests + [i for i in self.current if i.score > 0])

    def stats(self):
        return {"restarts": 0, "species": None,
                "method": {"entropy": round(self.policy.mean_entropy(), 4), "vectors": len(self.policy.vectors)}}

    def report(self) -> dict:
        """For ``final.json`` and ``inspect``: the learned vectors, most probable components first."""
        rows = self.policy.most_probable()
        return {"title": "PBIL probability vectors (most probable components)",
                "entropy": self.policy.entropy_history,
                "columns": ["location", "components", "entropy", "most probable (probability)"],
                "rows": [[r["location"], r["components"], r["entropy"],
                          ", ".join(f"{label} ({p:.2f})" for label, p in r["top"])] for r in rows]}

    def write_artefacts(self, path) -> list[str]:
        """``pbil-vectors.json`` (every vector) and ``pbil-entropy.png`` (mean entropy per generation)."""
        import json

        from ..plots import line_png

        (path / "pbil-vectors.json").write_text(json.dumps(
            {"learning_rate": self.policy.learning_rate, "entropy": self.policy.entropy_history,
             "vectors": {loc: {"p": [round(float(x), 6) for x in v.p],
                               "labels": [self.policy.component_label(loc, i) for i in range(len(v.p))]}
                         for loc, v in self.policy.vectors.items()}}, indent=1))
        line_png(self.policy.entropy_history, path / "pbil-entropy.png", "PBIL: mean normalised entropy of the "
                 "probability vectors", "generation", "entropy (1 = uniform, 0 = converged)")
        return []

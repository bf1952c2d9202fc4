"""GA-Auto-MLC: the Auto-MEKA thesis's real-coded genetic algorithm (§5.3.1.2; notes methods.md §1.8).

Why it is here: the thesis compared it with GGP in its tuning phase (and dropped it from the
final comparison); with it, the comparison can be repeated on any non-recursive grammar.

**Genome and decoding.** An individual is a fixed-length vector of reals in [0, 1]. It is decoded
through the sampling-policy seam (:mod:`gp.policy`): :class:`GenomePolicy` answers the k-th decision
of a derivation (``choose``, ``sample_int``, ``sample_real``, in the generator's pre-order) with gene
k — positionally, as GA-Auto-MLC and grammatical evolution do — so only valid trees are produced
and genes a derivation does not reach are ignored. A choice takes the alternative whose interval of
the cumulative normalised grammar weights holds the gene (equal weights: the thesis's index
``min(floor(g·n), n−1)``; the thesis wrote ``round(g·n)``, which gives the end points half a share);
an integer ``lo + floor(g·(hi−lo+1))``, a real ``lo + g·(hi−lo)`` (both in log space for a log range;
open ends nudged inside), a grid (``step=``) its ``floor(g·size)``-th value. Decoding draws nothing:
a genome always gives the same tree. The genome length is the most decisions any derivation can
need (:func:`genome_length`); a recursive grammar has no such bound and is refused. The thesis's
extra gene for the algorithm family (its XML file) is the start rule's choice here.

**Operators** come from a DEAP toolbox: uniform crossover (``cxUniform``, mask probability 0.5),
a one-gene redraw (:func:`redraw_one_gene`: one-point mutation, which DEAP lacks) and tournament
selection of size 2 (``selTournament``; the §5.3.1.2 text says roulette, §6.1.2 and the authors'
code a tournament). As in GGP, a pair of parents is crossed with P_c (0.8) and both children are
mutated with P_m (0.2, one draw); elitism 1, population 80, the split redrawn every 5 generations,
restarts when the best is unchanged for 5 generations after 20 (:class:`~ggp_automl.search.methods.ggp.Convergence`).
The operators follow GGP's convention (the run's Generator is their last argument, :func:`make_toolbox`);
DEAP's draw from Python's global ``random``, so each is seeded from the run's Generator right before it
draws and the previous global state is put back afterwards (:func:`seeded`): the search depends on its
Generator only, and nothing else in the process sees a change. The population life cycle — elitism,
restarts, the archive, resampling, the steady-state mode — is GGP's (:mod:`.evolutionary`).

**Modes.** Generational (the thesis's) and asynchronous (steady state, as GGP): the loop tells back
copies of the individuals, so genomes are found by phenotype; one the method no longer holds (a candidate of a resumed run's
log) is re-encoded from its tree (:func:`encode`, the middle of each decision's interval).
"""
from __future__ import annotations

import math
import random
from contextlib import contextmanager

import numpy as np
from deap import base, tools

from ggp_automl.gp.binding import real_grid
from ggp_automl.gp.generate import TreeGenerator
from ggp_automl.gp.grammar import Grammar, NonTerminal, Sampler
from ggp_automl.gp.policy import SamplingPolicy
from ggp_automl.gp.tree import Node

from ..config import MAX_WORKERS
from ..errors import RunError  # the CLI reports it as an input error (exit 1)
from ..individual import Individual
from .evolutionary import EvolutionaryMethod, breed_with_elites
from .registry import register_method

#: uniform crossover: the probability that a gene comes from the other parent
MASK_PROBABILITY = 0.5
#: redraws of a random genome whose phenotype is already in a new population (as ramped half-and-half)
UNIQUE_TRIES = 50
_NO_RNG = np.random.default_rng(0)  # handed to the generator; GenomePolicy never draws from it


# -- decoding -------------------------------------------------------------------------------------
def _cumulative(weights) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    with np.errstate(over="ignore"):  # finite weights near 1e308 can overflow their sum
        w = w / w.max() if not np.isfinite(w.sum()) else w
    return np.cumsum(w) / w.sum()


def choice_index(g: float, weights) -> int:
    """The alternative (index into ``weights``) whose interval of the cumulative weights holds ``g``."""
    n = len(weights)
    if all(w == weights[0] for w in weights):
        return min(int(g * n), n - 1)
    i = int(np.searchsorted(_cumulative(weights), g, side="right"))
    return i if i < n else int(np.flatnonzero(np.asarray(weights, dtype=float) > 0)[-1])


def int_value(g: float, lo: int, hi: int, log: bool) -> int:
    if lo == hi:
        return lo
    if log:
        v = math.floor(math.exp(math.log(lo) + g * (math.log(hi + 1) - math.log(lo))))
    else:
        v = lo + math.floor(g * (hi - lo + 1))
    return int(min(max(v, lo), hi))


def real_value(g: float, lo: float, hi: float, lo_open: bool, hi_open: bool, log: bool, step=None) -> float:
    if step is not None:
        grid = real_grid(lo, hi, lo_open, hi_open, step)
        return grid.value(grid.first + min(int(g * len(grid)), len(grid) - 1))
    lo, hi = float(lo), float(hi)
    if lo == hi:
        return lo
    v = math.exp((1 - g) * math.log(lo) + g * math.log(hi)) if log else (1 - g) * lo + g * hi  # no overflow
    v = min(max(v, lo), hi)
    if lo_open and v <= lo:
        v = math.nextafter(lo, math.inf)
    if hi_open and v >= hi:
        v = math.nextafter(hi, -math.inf)
    return v


class GenomePolicy(SamplingPolicy):
    """Answers decision k of a derivation with gene k (see the module docstring); never draws."""

    def __init__(self, genome):
        self.genome = genome
        self.used = 0  # genes consumed so far

    def _gene(self) -> float:
        if self.used >= len(self.genome):
            raise ValueError(f"a genome of {len(self.genome)} genes is too short for this derivation")
        g = min(max(float(self.genome[self.used]), 0.0), 1.0)
        self.used += 1
        return g

    def choose(self, ctx, candidates, weights, rng):
        return candidates[choice_index(self._gene(), list(weights))]

    def sample_int(self, ctx, lo, hi, log, rng):
        return int_value(self._gene(), int(lo), int(hi), log)

    def sample_real(self, ctx, lo, hi, lo_open, hi_open, log, rng, step=None):
        return real_value(self._gene(), lo, hi, lo_open, hi_open, log, step)


def decode(genome, bound, max_depth: int) -> tuple[Node, int]:
    """The tree a genome encodes under the bound grammar ``bound``, and how many genes it used."""
    policy = GenomePolicy(genome)
    tree = TreeGenerator(bound, policy).grow(_NO_RNG, max_depth)
    return tree, policy.used


def genome_length(grammar: Grammar) -> int:
    """The most decisions a derivation of ``grammar`` can need (:func:`decisions_needed` of its start);
    ValueError for a recursive grammar, whose derivations no fixed-length genome encodes."""
    return decisions_needed(grammar)[grammar.start]


def decisions_needed(grammar: Grammar) -> dict[str, int]:
    """The most decisions a derivation from each reachable rule can need: 1 for a choice between two or
    more alternatives, plus the largest sum over an alternative's items (1 per ``RANDOM-INT``/``-REAL``)."""
    a = grammar.analysis
    if a.is_recursive:
        rules = ", ".join(f"<{r}>" for r in sorted(a.recursive & a.reachable)[:5])
        raise ValueError(f"GA needs a non-recursive grammar: {grammar.path} is recursive (recursive rules: "
                         f"{rules}), so no fixed-length genome encodes its derivations; use ggp, pbil or random")
    import networkx as nx  # here: listing the GA among `evolve`'s methods needs no graph library

    need: dict[str, int] = {}
    for name in reversed(list(nx.topological_sort(a.graph.subgraph(a.reachable)))):
        rule = grammar[name]
        items = max(sum(need[i.name] if isinstance(i, NonTerminal) else isinstance(i, Sampler) for i in alt.items)
                    for alt in rule.alternatives)
        need[name] = items + (len(rule.alternatives) > 1)
    return need


def encode(tree: Node, bound, length: int) -> list[float]:
    """A genome that decodes to ``tree`` (the middle of each decision's interval; unused genes 0.5)."""
    genes: list[float] = []
    stack: list = [tree]  # the generator's pre-order: a node's choice, then its items in order
    while stack:
        node = stack.pop()
        if isinstance(node, float):  # a number's gene, in its place among the subtrees
            genes.append(node)
            continue
        rule = bound.grammar[node.rule]
        if len(rule.alternatives) > 1:
            weights = [alt.weight for alt in rule.alternatives]
            if all(w == weights[0] for w in weights):
                genes.append((node.alt + 0.5) / len(weights))
            else:
                cum = _cumulative(weights)
                genes.append(float((cum[node.alt - 1] if node.alt else 0.0) + cum[node.alt]) / 2)
        items = rule.alternatives[node.alt].items
        stack.extend(reversed([child if isinstance(item, NonTerminal) else
                               _number_gene(bound, (node.rule, node.alt, i), item, child.value)
                               for i, (item, child) in enumerate(zip(items, node.children))
                               if isinstance(item, (NonTerminal, Sampler))]))
    return genes + [0.5] * (length - len(genes))


def _number_gene(bound, site, s: Sampler, value) -> float:
    lo, hi = bound.range_of(site)
    grid = bound.grid_of(site)
    if grid is not None:
        k = grid.index(value)
        k = grid.first if k is None else k
        return (k - grid.first + 0.5) / len(grid)
    if lo == hi:
        return 0.5
    if s.kind == "int":
        lo, hi, value = int(lo), int(hi), int(value)
        if s.log:
            return (0.5 * (math.log(value) + math.log(value + 1)) - math.log(lo)) / (math.log(hi + 1) - math.log(lo))
        return (value - lo + 0.5) / (hi - lo + 1)
    if s.log:
        return min(max((math.log(value) - math.log(lo)) / (math.log(hi) - math.log(lo)), 0.0), 1.0)
    return min(max((value - lo) / (hi - lo), 0.0), 1.0)


# -- operators --------------------------------------------------------------------------------------
@contextmanager
def python_random_from(rng: np.random.Generator):
    """Run a block that draws from Python's global ``random`` (DEAP's operators) on a seed drawn from
    the run's Generator, then put the previous global state back."""
    saved = random.getstate()
    random.seed(int(rng.integers(0, 2 ** 63)))
    try:
        yield
    finally:
        random.setstate(saved)


def seeded(operator):
    """A DEAP operator in the project's convention: the run's Generator is its last argument, and Python's
    ``random`` is seeded from it right before the operator draws (and restored afterwards)."""
    def call(*args, **kwargs):
        *args, rng = args
        with python_random_from(rng):
            return operator(*args, **kwargs)
    call.__name__ = call.__qualname__ = getattr(operator, "__name__", "operator")
    call.__wrapped__ = operator
    return call


def redraw_one_gene(genome: list[float]) -> tuple[list[float]]:
    """One-point mutation: one gene, chosen uniformly, redrawn uniformly in [0, 1) (DEAP's convention)."""
    genome[random.randrange(len(genome))] = random.random()
    return (genome,)


def make_toolbox(tournament_size: int) -> base.Toolbox:
    """The GA's operators, called as GGP's are — ``select(pool, k, rng)``, ``mate(g1, g2, rng)``,
    ``mutate(g, rng)`` — on genomes (lists of genes); DEAP's own, seeded from ``rng`` (:func:`seeded`)."""
    toolbox = base.Toolbox()
    toolbox.register("mate", seeded(tools.cxUniform), indpb=MASK_PROBABILITY)
    toolbox.register("mutate", seeded(redraw_one_gene))
    toolbox.register("select", seeded(tools.selTournament), tournsize=tournament_size)
    return toolbox


class _Member:
    """What DEAP's selection sees of a population member: its fitness, with its genome."""

    __slots__ = ("fitness", "genome")

    def __init__(self, fitness, genome):
        self.fitness, self.genome = fitness, genome


# -- the method -------------------------------------------------------------------------------------
@register_method
class GA(EvolutionaryMethod):
    """GA-Auto-MLC over any non-recursive grammar (see the module docstring)."""

    name = "ga"

    def __init__(self, config, policy=None):
        super().__init__(config, policy)
        self.length = 0
        self.genome_of: dict[str, list[float]] = {}  # genomes by phenotype, newest last
        self.decisions: dict[int, int] = {}  # genes used by a derivation -> how many derivations
        self.toolbox = None

    def attach(self, grammar, meta):
        super().attach(grammar, meta)
        try:
            self.length = genome_length(grammar)
        except ValueError as exc:
            raise RunError(str(exc)) from None
        self.toolbox = make_toolbox(self.params["tournament_size"])
        return self

    def __getstate__(self):
        return {**super().__getstate__(), "toolbox": None}  # rebuilt by attach()

    # -- genomes and individuals --------------------------------------------------------------------
    def _individual(self, genome: list[float]) -> Individual:
        tree, used = decode(genome, self.variation.bound, self.config.max_depth)
        self.decisions[used] = self.decisions.get(used, 0) + 1
        ind = Individual(tree)
        self.genome_of.pop(ind.phenotype, None)
        self.genome_of[ind.phenotype] = genome
        return ind

    def _genome(self, ind: Individual) -> list[float]:
        genome = self.genome_of.get(ind.phenotype)
        return list(genome) if genome is not None else encode(ind.tree, self.variation.bound, self.length)

    def fresh(self, group, rng, n=None):
        """``n`` (default: the population) random genomes, distinct phenotypes while ``UNIQUE_TRIES`` allow."""
        n = n or self.group_size
        out = [self._individual(encode(t, self.variation.bound, self.length)) for t in self.take_warm(n)]
        seen = {ind.phenotype for ind in out}  # the warm start's members as genomes first, then random ones
        for _ in range(n - len(out)):
            for _ in range(UNIQUE_TRIES):
                ind = self._individual([float(x) for x in rng.random(self.length)])
                if ind.phenotype not in seen:
                    break
            seen.add(ind.phenotype)
            out.append(ind)
        return out

    def _pair(self, members: list[_Member], rng) -> tuple[Individual, Individual]:
        """Two children: two selected parents' genomes, crossed with P_c, both mutated with P_m."""
        tb, params = self.toolbox, self.params
        p1, p2 = tb.select(members, 2, rng)
        c1, c2 = list(p1.genome), list(p2.genome)
        if rng.random() < params["crossover_rate"]:
            c1, c2 = tb.mate(c1, c2, rng)
        if rng.random() < params["mutation_rate"]:
            (c1,), (c2,) = tb.mutate(c1, rng), tb.mutate(c2, rng)
        return self._individual(c1), self._individual(c2)

    def _members(self, pool: list[Individual]) -> list[_Member]:
        return [_Member(i.fitness, self._genome(i)) for i in pool]

    def breed(self, group, pool, pools, rng):
        members = self._members(pool)
        return breed_with_elites(pool, self.group_size, self.params["elitism"], lambda: self._pair(members, rng))

    def breed_pair(self, group, pool, pools, rng):
        return self._pair(self._members(pool), rng)

    # -- told individuals ---------------------------------------------------------------------------
    def tell(self, evaluated):
        self._remember(evaluated)
        super().tell(evaluated)
        self._forget()

    def tell_one(self, evaluated):
        self._remember([evaluated])
        super().tell_one(evaluated)
        self._forget()

    def _remember(self, evaluated: list[Individual]) -> None:
        """A told individual the method no longer holds a genome of (a resumed run's log): re-encoded."""
        for ind in evaluated:
            if ind.phenotype not in self.genome_of:
                self.genome_of[ind.phenotype] = self._genome(ind)

    def _forget(self) -> None:
        """Keep the genomes of the populations, their parents and queues, and of the latest candidates
        (those in flight among them); an older one that is told after all is re-encoded from its tree."""
        keep = {i.phenotype for pool in self.populations.values() for i in pool}
        for pop in self.steady.values():
            keep |= {i.phenotype for i in pop.members + (pop.parents or []) + pop.queue}
        recent = set(list(self.genome_of)[-(2 * self.group_size + MAX_WORKERS):])
        self.genome_of = {p: g for p, g in self.genome_of.items() if p in keep or p in recent}

    # -- what it says -------------------------------------------------------------------------------
    def stats(self):
        n = sum(self.decisions.values())
        mean = sum(k * v for k, v in self.decisions.items()) / n if n else 0.0
        return {"restarts": self.restarts, "species": None,
                "method": {"genome_length": self.length, "mean_genes_used": round(mean, 2)}}

    def report(self) -> dict:
        """For ``final.json`` and ``inspect``: how many genes the decoded derivations used."""
        n = sum(self.decisions.values()) or 1
        rows = [[k, v, round(v / n, 4)] for k, v in sorted(self.decisions.items())]
        return {"title": f"GA genome: {self.length} genes; how many a decoded genome used",
                "genome_length": self.length,
                "columns": ["genes used", "decoded genomes", "share"], "rows": rows}

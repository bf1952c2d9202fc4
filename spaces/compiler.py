"""Compile a derivation tree into a model (:mod:`spaces.model`) for the run's task.

In pre-order, the algorithm-name terminals of a tree form a chain — meta-MLC → MLC →
meta-SLC → ASC → SLC (or meta-MLC → ML-BPNN), or for single-label classification
meta-SLC → … → SLC — in which each algorithm wraps the next. Each algorithm's
hyper-parameters are the annotated rule nodes under the node that holds its name
(:class:`~spaces.params.Params`), which also carry the grammar's annotated defaults, so a
builder reads a rule the tree leaves out at the grammar's default (builders write no defaults of
their own: ``spaces/params.py``). Annotated nodes that belong to no algorithm are global
(``<pred_tshd>``, the threshold strategy of multi-label models). What the chain must
produce, and what wraps it, is the task's (:mod:`evaluation.task`): a grammar of
single-label classifiers compiles to a single-label model.
"""
from __future__ import annotations

from dataclasses import dataclass

from ggp_automl.gp.grammar import Grammar
from ggp_automl.gp.tree import Leaf, Node

from .model import wrap_model

from .params import Params, grammar_defaults
from .registry import AlgorithmSpec, load_all


class MappingError(ValueError):
    """A tree that cannot be turned into an estimator (unknown terminal, bad nesting)."""


@dataclass(frozen=True)
class Step:
    spec: AlgorithmSpec
    params: Params


def _rule_location(grammar: Grammar, rule: str) -> str:
    loc = grammar[rule].location if rule in grammar else None
    return f"<{rule}> in {loc}" if loc else f"<{rule}> in {grammar.path}"


def algorithm_chain(tree: Node, grammar: Grammar, random_state: int = 0) -> tuple[list[Step], dict]:
    """The algorithms of ``tree`` in pre-order with their params, and the global params."""
    registry = load_all()
    defaults = grammar_defaults(grammar)
    steps: list[Step] = []
    global_values: dict[str, tuple] = {}

    def algorithm_leaf(node: Node) -> str | None:
        for child in node.children:
            if isinstance(child, Leaf) and isinstance(child.value, str) and child.value in registry:
                return child.value
        return None

    def annotated(node: Node) -> bool:
        return node.rule in grammar and grammar[node.rule].kind != "alg"

    def unknown(leaf: Leaf, node: Node) -> MappingError:
        return MappingError(
            f"terminal {leaf.text!r} of {_rule_location(grammar, node.rule)} has no estimator: "
            f"register a builder for it (in a module of your own: --plugin FILE.py, grammars/README.md §8) or annotate "
            f"the rule as a hyper-parameter")

    def collect(node: Node, values: dict, tokens: list, nested: list, inside_value: bool) -> None:
        """Values and terminals under ``node``; nested algorithm nodes go to ``nested``."""
        for child in node.children:
            if isinstance(child, Leaf):
                tokens.append(child.value)
            elif not inside_value and algorithm_leaf(child) is not None:
                nested.append(child)
            elif inside_value or annotated(child):
                values[child.rule] = tuple(leaf.value for leaf in child.leaves())
                collect(child, values, tokens, nested, True)
            else:  # structural node inside an algorithm: its own terminals must be algorithms
                for leaf in child.children:
                    if isinstance(leaf, Leaf):
                        raise unknown(leaf, child)
                collect(child, values, tokens, nested, False)

    def stray(node: Node, spec: AlgorithmSpec) -> None:
        """A token beside the algorithm's name that its builder does not read (registry ``options``)."""
        leaves = [child for child in node.children if isinstance(child, Leaf)]
        for i in spec.stray([leaf.value for leaf in leaves])[:1]:
            leaf = leaves[i]
            raise MappingError(f"{leaf.text!r} beside {spec.name} in {_rule_location(grammar, node.rule)} is not "
                               f"a hyper-parameter value or an option {spec.name} reads: it would be ignored")

    def visit(node: Node) -> None:
        name = algorithm_leaf(node)
        if name is not None:
            stray(node, registry[name])
            values: dict[str, tuple] = {}
            tokens: list = []
            nested: list[Node] = []
            collect(node, values, tokens, nested, False)
            steps.append(Step(registry[name], Params(name, values, tuple(tokens), random_state,
                                                     _rule_location(grammar, node.rule), defaults)))
            for sub in nested:
                visit(sub)
            return
        if annotated(node):
            global_values[node.rule] = tuple(leaf.value for leaf in node.leaves())
            for _, sub in node.nodes():
                if sub is not node and annotated(sub):
                    global_values[sub.rule] = tuple(leaf.value for leaf in sub.leaves())
            return
        for child in node.children:
            if isinstance(child, Leaf):
                raise unknown(child, node)
            visit(child)

    visit(tree)
    return steps, global_values


def build_estimator(steps: list[Step], produces: str | None = None):
    """Assemble the chain innermost-first; returns the outermost estimator.

    ``produces``: what the outermost algorithm must produce (``"mlc"`` or ``"slc"``, the
    task's :attr:`~evaluation.task.Task.produces`); None accepts either.
    """
    if not steps:
        raise MappingError("the tree contains no algorithm")
    est, produced = None, None
    for step in reversed(steps):
        spec = step.spec
        if spec.base_kind is None:
            if est is not None:
                raise MappingError(f"{spec.name} ({spec.kind}) takes no base, but is followed by another algorithm")
            est = spec.build(step.params)
        else:
            if est is None or produced != spec.base_kind:
                got = "nothing" if est is None else f"a {produced}"
                raise MappingError(f"{spec.name} ({spec.kind}) needs a {spec.base_kind} base, got {got}")
            est = spec.build(step.params, est)
        produced = spec.produces
    if produces is not None and produced != produces:
        what = {"mlc": "multi-label method", "slc": "single-label classifier"}
        raise MappingError(f"the outermost algorithm {steps[0].spec.name} is a {what[produced]}, but the data "
                           f"need a {what[produces]}")
    return est, produced


def compile_tree(tree: Node, grammar: Grammar, random_state: int = 0, categorical_features=None, task=None):
    """The unfitted model a derivation tree stands for, wrapped by ``task`` (an
    :class:`~ggp_automl.evaluation.task.Task`, which the layer above owns; None: the model wrapper of
    the kind the tree's algorithms produce, :func:`spaces.model.wrap_model`)."""
    steps, global_values = algorithm_chain(tree, grammar, random_state)
    estimator, produced = build_estimator(steps, None if task is None else task.produces)
    if task is None:
        return wrap_model(estimator, produced, global_values, categorical_features)
    return task.wrap(estimator, global_values, categorical_features)

"""Derivation trees: the individuals every search method manipulates.

Plain, immutable, picklable classes (not DEAP ``creator`` classes, which do not
survive process boundaries): a :class:`Node` is a non-terminal, the index of the
alternative it chose and its children; a :class:`Leaf` is a terminal with its value
(text for a literal terminal, an ``int``/``float`` for a sampled one). A node is
addressed by its *path*, the tuple of child indices from the root, which is stable
as long as the tree is.

The :attr:`Node.phenotype` (the leaves' tokens joined by spaces) is the canonical
cache key; ``gp.phenotype.parse_phenotype`` turns it back into an equal tree.

Traversals keep their own stack instead of recursing: a recursive grammar can yield
trees thousands of levels deep (up to ``gp.generate.MAX_TREE_NODES`` nodes), deeper
than Python's recursion limit.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Union

Path = tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Leaf:
    """A terminal: literal text, or a number drawn by ``RANDOM-INT``/``RANDOM-REAL``."""

    value: Union[str, int, float]

    @property
    def text(self) -> str:
        v = self.value
        return repr(v) if isinstance(v, float) else str(v)

    @property
    def depth(self) -> int:
        return 0

    @property
    def size(self) -> int:
        return 1

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Node:
    """A non-terminal expanded by alternative ``alt`` (0-based) of its rule."""

    rule: str
    alt: int
    children: tuple[Union["Node", Leaf], ...] = ()

    # -- structure -------------------------------------------------------------
    @property
    def depth(self) -> int:
        """Number of non-terminal levels on the longest root-to-leaf path (a node of leaves is 1)."""
        deepest, stack = 0, [(self, 1)]
        while stack:
            node, level = stack.pop()
            deepest = max(deepest, level)
            stack.extend((c, level + 1) for c in node.children if isinstance(c, Node))
        return deepest

    @property
    def size(self) -> int:
        """Nodes and leaves."""
        count, stack = 0, [self]
        while stack:
            node = stack.pop()
            inner = [c for c in node.children if isinstance(c, Node)]
            count += 1 + len(node.children) - len(inner)  # the node and its leaves
            stack.extend(inner)
        return count

    def walk(self, path: Path = ()) -> Iterator[tuple[Path, Union["Node", Leaf]]]:
        """Pre-order traversal yielding ``(path, node_or_leaf)``."""
        stack: list[tuple[Path, Union[Node, Leaf]]] = [(path, self)]
        while stack:
            at, item = stack.pop()
            yield at, item
            if isinstance(item, Node):
                stack.extend((at + (i,), c) for i, c in reversed(list(enumerate(item.children))))

    def nodes(self) -> Iterator[tuple[Path, "Node"]]:
        for path, n in self.walk():
            if isinstance(n, Node):
                yield path, n

    def leaves(self) -> Iterator[Leaf]:
        stack: list[Union[Node, Leaf]] = list(reversed(self.children))
        while stack:
            item = stack.pop()
            if isinstance(item, Node):
                stack.extend(reversed(item.children))
            else:
                yield item

    def __getitem__(self, path: Path) -> Union["Node", Leaf]:
        node: Union[Node, Leaf] = self
        for i in path:
            if not isinstance(node, Node):
                raise KeyError(path)
            node = node.children[i]
        return node

    def replace(self, path: Path, subtree: Union["Node", Leaf]) -> "Node":
        """A new tree with the subtree at ``path`` replaced (structure is shared)."""
        if not path:
            if not isinstance(subtree, Node):
                raise ValueError("the root must stay a Node")
            return subtree
        ancestors: list[Node] = [self]
        for i in path[:-1]:
            ancestors.append(ancestors[-1].children[i])  # type: ignore[arg-type]
        new: Union[Node, Leaf] = subtree
        for node, i in zip(reversed(ancestors), reversed(path)):
            new = Node(node.rule, node.alt, node.children[:i] + (new,) + node.children[i + 1:])
        return new  # type: ignore[return-value]

    # -- views -----------------------------------------------------------------
    @property
    def phenotype(self) -> str:
        return " ".join(leaf.text for leaf in self.leaves())

    def __str__(self) -> str:
        return self.phenotype

    def render(self, indent: str = "  ", show_synthetic: bool = False) -> str:
        """Indented text rendering; synthetic group/optional nodes are folded away by default."""
        lines: list[str] = []
        stack: list[tuple[Union[Node, Leaf], int]] = [(self, 0)]
        while stack:
            node, level = stack.pop()
            if isinstance(node, Leaf):
                lines.append(indent * level + node.text)
                continue
            synthetic = "~" in node.rule
            if synthetic and not show_synthetic:
                stack.extend((c, level) for c in reversed(node.children))
                continue
            if all(isinstance(c, Leaf) for c in node.children) and node.children:
                lines.append(indent * level + f"<{node.rule}> " + " ".join(c.text for c in node.children))
                continue
            lines.append(indent * level + f"<{node.rule}>" + ("" if node.children else " (empty)"))
            stack.extend((c, level + 1) for c in reversed(node.children))
        return "\n".join(lines)

    def to_networkx(self):
        """A ``networkx.DiGraph``: node ids are paths as strings ("0.2.1"), labels attached."""
        import networkx as nx

        graph = nx.DiGraph()
        for path, n in self.walk():
            key = ".".join(map(str, path)) or "root"
            if isinstance(n, Node):
                graph.add_node(key, label=f"<{n.rule}>", rule=n.rule, alt=n.alt, kind="nonterminal")
            else:
                graph.add_node(key, label=n.text, value=n.value, kind="terminal")
            if path:
                parent = ".".join(map(str, path[:-1])) or "root"
                graph.add_edge(parent, key, index=path[-1])
        return graph

    def to_dot(self, name: str = "derivation") -> str:
        """Graphviz DOT text (render with ``dot -Tpng``)."""
        out = [f'digraph "{name}" {{', "  node [fontname=Helvetica, fontsize=10];"]
        for path, n in self.walk():
            key = "n" + "_".join(map(str, path))
            if isinstance(n, Node):
                label, shape = f"<{n.rule}>", "ellipse"
            else:
                label, shape = n.text, "box"
            label = label.replace("\\", "\\\\").replace('"', '\\"')
            out.append(f'  {key} [label="{label}", shape={shape}];')
            if path:
                out.append(f"  n{'_'.join(map(str, path[:-1]))} -> {key};")
        out.append("}")
        return "\n".join(out) + "\n"


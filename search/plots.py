"""Pictures of a search run: the winner's derivation tree and the convergence curves.

Why by hand: there is no Graphviz ``dot`` binary to rely on (``Node.to_dot`` is written
for people who have one), so the tree layout is computed here from the tree structure
(every subtree gets a horizontal span as wide as its labels need; parents are centred
over their children). Figures are drawn on a bare :class:`matplotlib.figure.Figure`
with an Agg canvas, so no global backend is switched and nothing needs a display —
the search may run in worker processes or on a headless machine.

:func:`read_jsonl` (the run directory's tolerant log reader) is re-exported for callers
that draw from a run's logs.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence, Union

from ..gp.tree import Leaf, Node
from .rundir import read_jsonl

__all__ = ["read_jsonl", "tree_png", "convergence_png"]

PathLike = Union[str, Path]

# -- figure plumbing ----------------------------------------------------------------------


def _new_figure(width: float, height: float):
    """A Figure with its own Agg canvas (no pyplot, no global backend state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path: PathLike, dpi: float) -> Path:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=dpi, format="png", facecolor="white")
    return out


# -- derivation tree ----------------------------------------------------------------------

#: Longest label drawn in full; longer ones (long literal floats) are cut with "…".
MAX_LABEL = 28
#: Font size of the tree pictures, and the width of one character in inches at that size.
TREE_FONT = 9
_CHAR_IN = TREE_FONT * 0.62 / 72
#: Vertical distance between tree levels, in inches.
_LEVEL_IN = 0.62
#: Largest picture side in pixels (Agg's hard limit is 2**16); the dpi drops to stay below.
_MAX_PIXELS = 20000


@dataclass
class _Box:
    """One drawn vertex: a ``<rule>`` box or a terminal's text, with its layout."""

    label: str
    terminal: bool
    children: list["_Box"] = field(default_factory=list)
    width: float = 0.0   # span of the subtree, in character units
    x: float = 0.0       # centre, in character units
    level: int = 0


def _leaf_label(leaf: Leaf) -> str:
    v = leaf.value
    text = f"{v:.6g}" if isinstance(v, float) else leaf.text
    return text if len(text) <= MAX_LABEL else text[: MAX_LABEL - 1] + "…"


def _boxes(node: Union[Node, Leaf], show_synthetic: bool) -> list[_Box]:
    """The drawn vertices for ``node``: synthetic group/optional nodes splice in their children."""
    if isinstance(node, Leaf):
        return [_Box(_leaf_label(node), True)]
    children = [b for c in node.children for b in _boxes(c, show_synthetic)]
    if "~" in node.rule and not show_synthetic:
        return children
    label = f"<{node.rule}>"
    if len(label) > MAX_LABEL:
        label = label[: MAX_LABEL - 2] + "…>"
    return [_Box(label, False, children)]


def _measure(box: _Box, level: int = 0) -> None:
    """Post-order: a subtree is as wide as its own label or its children side by side."""
    box.level = level
    for child in box.children:
        _measure(child, level + 1)
    own = len(box.label) + (3 if not box.terminal else 2)
    box.width = max(float(own), sum(c.width for c in box.children))


def _place(box: _Box, left: float) -> None:
    """Pre-order: children share the parent's span, centred when the label is the wider."""
    inner = sum(c.width for c in box.children)
    cursor = left + (box.width - inner) / 2
    for child in box.children:
        _place(child, cursor)
        cursor += child.width
    if box.children:
        box.x = (box.children[0].x + box.children[-1].x) / 2
    else:
        box.x = left + box.width / 2


def _all_boxes(box: _Box) -> Iterable[_Box]:
    yield box
    for child in box.children:
        yield from _all_boxes(child)


def _layout(tree: Node, show_synthetic: bool) -> _Box:
    roots = _boxes(tree, show_synthetic)
    root = roots[0] if len(roots) == 1 else _Box(f"<{tree.rule}>", False, roots)
    _measure(root)
    _place(root, 0.0)
    return root


def tree_png(tree: Node, path: PathLike, show_synthetic: bool = False, title: str = "") -> Path:
    """Draw the derivation tree top-down into a PNG at ``path`` and return the path.

    Non-terminals are boxed ``<rule>`` labels, terminals plain text; synthetic nodes
    (rule names with ``~``) are folded away as in ``Node.render`` unless ``show_synthetic``.
    The figure grows with the tree's width (sum of label widths) and depth.
    """
    root = _layout(tree, show_synthetic)
    boxes = list(_all_boxes(root))
    depth = max(b.level for b in boxes)
    width_in = max(4.0, root.width * _CHAR_IN + 0.6)
    height_in = max(2.0, (depth + 1) * _LEVEL_IN + 0.5 + (0.3 if title else 0.0))
    dpi = min(110.0, _MAX_PIXELS / max(width_in, height_in))

    fig = _new_figure(width_in, height_in)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0 - (0.3 / height_in if title else 0.0)))
    ax.set_axis_off()
    ax.set_xlim(-0.5, root.width + 0.5)
    ax.set_ylim(-depth - 0.5, 0.5)
    for box in boxes:
        for child in box.children:
            ax.plot([box.x, child.x], [-box.level, -child.level], color="#8a8a8a", linewidth=0.8, zorder=1)
    for box in boxes:
        _draw_label(ax, box)
    if title:
        fig.suptitle(title, fontsize=TREE_FONT + 1, y=1.0 - 0.12 / height_in, va="top")
    return _save(fig, path, dpi)


def _draw_label(ax: Any, box: _Box) -> None:
    if box.terminal:
        style = dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none")
        color, family = "#1b5e20", "monospace"
    else:
        style = dict(boxstyle="round,pad=0.3", facecolor="#e3ecf7", edgecolor="#4a6fa5", linewidth=0.8)
        color, family = "#0d2547", "sans-serif"
    ax.text(box.x, -box.level, box.label, ha="center", va="center", fontsize=TREE_FONT,
            color=color, family=family, bbox=style, zorder=2)


# -- convergence ---------------------------------------------------------------------------


def _num(value: Any) -> float:
    """A finite float, or NaN (plotted as a gap) for None, ±inf and anything non-numeric."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def _minutes(records: Sequence[dict]) -> list[float]:
    return [_num(r.get("time")) / 60.0 for r in records]


def _split_changes(records: Sequence[dict], xs: Sequence[float]) -> list[tuple[float, str]]:
    """(x, new split) wherever a record's split differs from the previous record's.

    The line goes at the end of the previous generation: the new split was in use from there on.
    """
    out = []
    for prev, rec, x in zip(records, records[1:], xs):
        if rec.get("split") != prev.get("split") and math.isfinite(x):
            out.append((x, str(rec.get("split", ""))))
    return out


def _species_series(records: Sequence[dict]) -> dict[str, list[float]]:
    """Species id → its best fitness per record (NaN where a record lacks that species)."""
    ids: list[str] = []
    for rec in records:
        for key in rec.get("species") or {}:
            if key not in ids:
                ids.append(key)
    ids.sort(key=lambda k: (not k.lstrip("-").isdigit(), int(k) if k.lstrip("-").isdigit() else 0, k))
    return {k: [_num(((rec.get("species") or {}).get(k) or {}).get("best_fitness")) for rec in records]
            for k in ids}


def convergence_png(generations: list[dict], path: PathLike, title: str = "") -> Path:
    """Best and mean validation fitness per generation against minutes since the start.

    A lower panel shows the evaluations (and failures, cache hits) of each generation.
    Speciated runs add one line per species for its best fitness; dotted vertical lines
    mark where the validation split changes. An empty list draws an empty, labelled chart.
    """
    records = [r for r in generations if isinstance(r, dict)]
    fig = _new_figure(9.0, 6.0)
    top, bottom = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [3, 1]})
    xs = _minutes(records)
    if records:
        _plot_fitness(top, records, xs)
        _plot_counts(bottom, records, xs)
        for x, split in _split_changes(records, xs):
            for ax in (top, bottom):
                ax.axvline(x, color="#555555", linestyle=":", linewidth=1)
            top.annotate(f"split {split}", (x, 0.98), xycoords=("data", "axes fraction"), xytext=(3, 0),
                         textcoords="offset points", fontsize=7, ha="left", va="top", color="#555555")
        top.set_xlim(left=0.0)
    else:
        top.text(0.5, 0.5, "no finished generation yet", transform=top.transAxes, ha="center", va="center")
    top.set_ylabel("validation fitness")
    top.grid(True, alpha=0.3)
    bottom.set_ylabel("per generation")
    bottom.set_xlabel("minutes since start")
    bottom.grid(True, alpha=0.3)
    top.set_title(title or "convergence")
    fig.tight_layout()
    return _save(fig, path, 100)


def _plot_fitness(ax: Any, records: Sequence[dict], xs: Sequence[float]) -> None:
    ax.plot(xs, [_num(r.get("best_fitness")) for r in records], color="black", linewidth=2,
            marker="o", markersize=3, label="best")
    ax.plot(xs, [_num(r.get("mean_fitness")) for r in records], color="grey", linewidth=1.2,
            linestyle="--", label="mean")
    for sid, values in _species_series(records).items():
        ax.plot(xs, values, linewidth=1, alpha=0.85, label=f"species {sid} best")
    ax.legend(loc="lower right", fontsize=7, ncol=2)


def _plot_counts(ax: Any, records: Sequence[dict], xs: Sequence[float]) -> None:
    for key, color in (("evaluated", "#1f77b4"), ("failed", "#d62728"), ("cached", "#2ca02c")):
        values = [_num(r.get(key)) for r in records]
        if any(math.isfinite(v) for v in values):
            ax.plot(xs, values, color=color, marker=".", linewidth=1, label=key)
    if ax.get_lines():
        ax.legend(loc="best", fontsize=7, ncol=3)


def line_png(values: Sequence[float], path: PathLike, title: str, xlabel: str, ylabel: str) -> Path:
    """One series against its index (1, 2, …): a method's learning curve, e.g. PBIL's entropy."""
    fig = _new_figure(7.0, 4.0)
    ax = fig.subplots()
    ys = [_num(v) for v in values]
    if ys:
        ax.plot(range(1, len(ys) + 1), ys, color="black", marker="o", markersize=3, linewidth=1.5)
        ax.set_ylim(bottom=0.0)
    else:
        ax.text(0.5, 0.5, "no generation finished", transform=ax.transAxes, ha="center", va="center")
    ax.set_title(title)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    return _save(fig, path, 100)

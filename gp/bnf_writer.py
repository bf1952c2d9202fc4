"""Write a :class:`~gp.grammar.Grammar` back as ``.bnf`` text.

Used for generated grammars (species). Synthetic rules made from ``( … )`` and
``[ … ]`` are written as ordinary named rules (``<Start~1>``), so their names, and
hence the locations of decisions and the node names in trees, stay the same in the
written file as in the grammar it came from.
"""
from __future__ import annotations

from .grammar import Alternative, Grammar, Rule

_WIDTH = 110


def format_alternative(alt: Alternative, with_weight: bool = True, always: bool = False) -> str:
    """The alternative and its weight: ``@auto`` as written (the count is redone when the text is read,
    and a species keeps every rule it counts), a number if not 1 or if ``always``."""
    text = alt.text
    if with_weight and alt.auto:
        text += " @auto"
    elif with_weight and (alt.weight != 1 or always):
        text += f" @ {alt.weight:g}"
    return text


def format_rule(rule: Rule) -> str:
    head = f"<{rule.name}> ::= "
    weighted = len(rule.alternatives) > 1
    auto = any(a.auto for a in rule.alternatives)  # beside @auto, a weight of 1 must be written too
    alts = [format_alternative(a, weighted, auto) for a in rule.alternatives]
    annotation = f"  {rule.annotation}" if rule.annotation else ""
    one_line = head + " | ".join(alts)
    if len(one_line) + len(annotation) <= _WIDTH:
        return one_line + annotation
    pad = " " * (len(head) - 2)
    lines = [head + alts[0] + annotation]
    lines += [f"{pad}| {a}" for a in alts[1:]]
    return "\n".join(lines)


def format_grammar(grammar: Grammar, header: str = "") -> str:
    parts = []
    if header:
        parts.append("\n".join(f"# {line}".rstrip() for line in header.strip("\n").split("\n")))
        parts.append("")
    for rule in grammar:
        if rule.synthetic:
            parts.append(f"# <{rule.name}> is the {rule.synthetic} written inside <{rule.name.split('~')[0]}>")
        parts.append(format_rule(rule))
    return "\n".join(parts) + "\n"

"""The hyper-parameters of one algorithm, read off a derivation tree.

The mapper finds each algorithm in a tree by its name terminal (``RandomForest``,
``BR``, ``Bagging`` …). The algorithm *owns* the annotated hyper-parameter nodes
under the node that holds its name, and its builder reads them by rule name:
``p.int("nt", 100)``, ``p.flag("ct")``, ``p.cat("em", "acc")``, ``p.has("u")``.
Species grammars replace sampled values by literal defaults; :class:`Params` reads
both forms the same way, so builders never care which species a tree came from.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Params:
    """Hyper-parameters of one algorithm occurrence.

    ``values`` maps an annotated rule name to the tokens (str/int/float) of its subtree
    (an empty tuple for EMPTY); ``tokens`` are all terminals the algorithm owns.
    """

    name: str
    values: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    tokens: tuple[Any, ...] = ()
    random_state: int = 0
    #: where the algorithm sits in the grammar, for error messages
    origin: str = ""

    def _first(self, rule: str):
        vals = self.values.get(rule)
        return vals[0] if vals else None

    def int(self, rule: str, default: int) -> int:
        v = self._first(rule)
        return default if v is None else int(float(v))

    def real(self, rule: str, default: float) -> float:
        v = self._first(rule)
        return default if v is None else float(v)

    def flag(self, rule: str) -> bool:
        """True when the rule is present and not EMPTY (a switch such as ``ct``)."""
        return bool(self.values.get(rule))

    def cat(self, rule: str, default: str | None = None) -> str | None:
        """The chosen value's text; ``default`` when absent or EMPTY."""
        vals = self.values.get(rule)
        if not vals:
            return default
        return " ".join(str(v) for v in vals)

    def seed(self, rule: str) -> int:
        """The random seed of this algorithm: the grammar's seed rule when the tree has one
        (PBIL-Auto-Ens searches WEKA's ``-S`` like any hyper-parameter), else the run's
        ``random_state``. A phenotype therefore fixes its model completely, as in WEKA."""
        v = self._first(rule)
        return self.random_state if v is None else int(float(v))

    def has(self, token: str) -> bool:
        """Does the terminal ``token`` occur among this algorithm's own terminals?"""
        return any(str(t) == token for t in self.tokens)

    def __contains__(self, rule: str) -> bool:
        return rule in self.values

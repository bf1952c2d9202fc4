"""The base of the methods that sample the grammar's flat configuration space (:mod:`gp.flatten`).

BO, ensemble optimisation and DivBO all ask a model for a configuration of the unrolled grammar and
decode it into a derivation tree; they share how the space is built (once per grammar, again after a
resume: ConfigSpace objects are not checkpointed) and that a generation record is ``population``
evaluations.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .base import SteadyStateMethod

if TYPE_CHECKING:  # ConfigSpace is imported when a run attaches the method, not when `evolve --help` lists it
    from ggp_automl.gp.flatten import FlatSpace


class FlatSpaceMethod(SteadyStateMethod):
    """A steady-state method over :class:`gp.flatten.FlatSpace`; it declares a ``population`` parameter."""

    flat: FlatSpace | None = None

    @property
    def generation_size(self) -> int:
        return self.params["population"]

    def attach(self, grammar, meta):
        from ggp_automl.gp.flatten import FlatSpace

        super().attach(grammar, meta)
        self.flat = FlatSpace(self.variation.bound, seed=0)  # FlattenError (a ValueError) for recursion
        return self

    def __getstate__(self) -> dict:
        state = super().__getstate__()
        state["flat"] = None  # rebuilt by attach()
        return state

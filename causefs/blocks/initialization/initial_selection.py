"""First W solve of Algorithm 1, with no W to majorize at (D = I)."""

from __future__ import annotations

from ...core.state import State
from ..descent.selection_matrix import SelectionMatrixBlock


class InitialSelectionBlock(SelectionMatrixBlock):
    """W from eq. W.3 before there is a W: the l2,1 term's weights are then ``D = I``.

    D = I does not majorize the l2,1 term at W = 0, so this solve belongs to the
    initialization and makes no descent promise (docs/MODEL.md, "Descent and
    monotonicity").

    Parameters
    ----------
    system : {"auto", "primal", "dual", "cg"}
        As for :class:`~causefs.blocks.SelectionMatrixBlock`.
    """

    name = "initial_selection"
    kind = "init"
    reads = ("X_adjusted", "mu", "F")
    subproblem = None

    def step(self, state: State) -> State:
        return super().step(state.replace(W=None))

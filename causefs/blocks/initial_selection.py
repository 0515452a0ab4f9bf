"""First W solve of Algorithm 1, with D = I."""

from __future__ import annotations

import numpy as np

from ..core.parts import Cost
from ..core.state import State
from ..core.validation import check_choice
from .base import Block
from .selection_matrix import (
    SYSTEMS,
    irls_weights,
    selection_cost,
    solve_selection_matrix,
)


class InitialSelectionBlock(Block):
    """W from eq. W.3 with ``D = I``, then D at that W.

    D = I does not majorize the l2,1 term at W = 0, so this solve belongs to the
    initialization and makes no descent promise (docs/MODEL.md, "Descent and
    monotonicity").

    Parameters
    ----------
    system : {"auto", "primal", "dual"}
        As for :class:`~causefs.blocks.SelectionMatrixBlock`.
    """

    name = "initial_selection"
    accepts_sparse = True
    kind = "init"
    reads = ("X", "mu", "F")
    optional_reads = ("S", "groups")
    writes = ("W", "D")

    def __init__(self, system: str = "auto"):
        self.system = check_choice("system", system, SYSTEMS)

    def cost(self, size) -> Cost:
        return selection_cost(size)

    def step(self, state: State) -> State:
        W = solve_selection_matrix(state, np.ones(state.problem.n_features), self.system)
        return state.replace(W=W, D=irls_weights(W, state.problem.eps))

"""First W solve of Algorithm 1, with D = I."""

from __future__ import annotations

import numpy as np

from ..state import State
from .base import Block
from .selection_matrix import irls_weights, solve_selection_matrix


class InitialSelectionBlock(Block):
    """W from eq. W.3 with ``D = I``, then D at that W.

    D = I does not majorize the l2,1 term at W = 0, so this solve belongs to the
    initialization and makes no descent promise (SPEC).
    """

    name = "initial_selection"
    kind = "init"
    reads = ("X", "mu", "F")
    optional_reads = ("S", "groups")
    writes = ("W", "D")

    def __init__(self, system: str = "auto"):
        self.system = system

    def step(self, state: State) -> State:
        W = solve_selection_matrix(state, np.ones(state.problem.n_features), self.system)
        return state.replace(W=W, D=irls_weights(W, state.problem.eps))

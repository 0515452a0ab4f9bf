"""Initial confounder sets: every other feature."""

from __future__ import annotations

import numpy as np

from ..state import State
from .base import Block


class InitialConfoundersBlock(Block):
    """``K[:, r]`` = all features but r, for every treatment r (no column otherwise)."""

    name = "initial_confounders"
    kind = "init"
    reads = ("X",)
    writes = ("K",)

    def step(self, state: State) -> State:
        d = state.problem.n_features
        is_treatment = np.any(state.problem.coding != 0, axis=0)
        K = ~np.eye(d, dtype=bool) & is_treatment[None, :]
        return state.replace(K=K)

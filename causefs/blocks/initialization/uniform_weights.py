"""Initial sample weights: uniform."""

from __future__ import annotations

import numpy as np

from ...core.state import State
from ..base import Block


class UniformWeightsBlock(Block):
    """``mu_i = sum(mu) / n`` (1/n for ``simplex``, 1 for ``mean_one``)."""

    name = "uniform_weights"
    accepts_sparse = True
    kind = "init"
    writes = ("mu",)

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(mu=np.full(p.n_samples, p.mu_total / p.n_samples))

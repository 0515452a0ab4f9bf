"""Initial confounder sets: every other feature."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...model.settings import DEFAULTS, check_setting
from ...model.treatments import bounded_treatments
from ..base import Block


class InitialConfoundersBlock(Block):
    """``K[:, r]`` = all features but r, for every kept treatment r (no column otherwise).

    Parameters
    ----------
    max_treatments : None, "auto" or int
        Bound on the treatments (:mod:`causefs.model.treatments`): the top ones by
        ``||W_f||`` when W is set, by variance otherwise. None keeps all (the paper).
    """

    name = "initial_confounders"
    accepts_sparse = True
    kind = "init"
    reads = ("X_adjusted",)
    optional_reads = ("W",)
    writes = ("K",)
    requires = ("max_treatments",)

    def __init__(self, max_treatments=DEFAULTS.max_treatments):
        self.max_treatments = check_setting("max_treatments", max_treatments)

    def cost(self, size) -> Cost:
        """K, kept for the whole fit: ``d^2`` bytes of bools, built in place (no (d, d)
        temporary); the step's temporaries: the coding's non-zeros (``n d`` bools) and
        the scores (``16 d`` bytes)."""
        n, d = size.n_samples, size.n_features
        return Cost(resident=float(d) ** 2,
                    memory={"initial_confounders": float(n) * d + 16.0 * d})

    def step(self, state: State) -> State:
        d = state.problem.n_features
        kept = np.flatnonzero(bounded_treatments(state.X_adjusted, state.problem.coding,
                                                 state.W, self.max_treatments))
        K = np.zeros((d, d), dtype=bool)
        K[:, kept] = True
        K[kept, kept] = False  # a treatment is not its own confounder
        return state.replace(K=K)

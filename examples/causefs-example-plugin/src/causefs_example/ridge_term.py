"""An objective term: a ridge penalty on W, the l2 half of an elastic net with l2,1."""

import numpy as np

from causefs.terms import Term


class RidgeTerm(Term):
    """``weight * ||W||_F^2``: shrinks every row of W, as the ridge half of an elastic
    net beside CAUSE-FS's row-sparse l2,1 term (it keeps correlated features together
    where l2,1 alone picks one of them).

    It depends on W only, so it adds its part to the W subproblem, ``weight * I`` in the
    system of eq. W.3 (exact: the term is quadratic), and its gradient for blocks that
    take one. A schedule that has it and a block updating W otherwise (one that neither
    builds the W subproblem nor was derived for this term) is refused by the engine.

    Parameters
    ----------
    weight : float
        Its weight, >= 0 (an option of the term, set in the schedule's entry:
        ``{"name": "ridge", "weight": 0.1}``).
    """

    name = "ridge"
    weighted_by = "weight"
    reads = ("W",)
    needs = ("W",)

    def __init__(self, weight: float = 0.1):
        if not weight >= 0:
            raise ValueError(f"weight must be >= 0, got {weight}")
        self.weight = float(weight)

    def value(self, state):
        return self.weight * float(np.sum(state.W ** 2))

    def add_to_selection_system(self, state, system):
        system.add_diagonal(np.full(state.problem.n_features, self.weight))

    def add_to_gradient(self, state, gradient):
        if gradient.variable == "W":
            gradient.add(2.0 * self.weight * state.W)

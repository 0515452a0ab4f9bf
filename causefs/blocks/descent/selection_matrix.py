"""W update (paper eq. W.3): one majorize-minimize step of the objective in W."""

from __future__ import annotations

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import check_choice
from ...model.subproblems import (
    SYSTEMS,
    SelectionSystem,
    cg_entries,
    cheapest_system,
    selection_system_cost,
)
from ..base import Block


def selection_cost(size, system: str = "auto") -> Cost:
    """One solve of eq. W.3 in the form ``system`` (``auto``: the cheaper, with M
    groups of equal size).

    Memory: the temporaries of the solve's step, an upper bound of what tracemalloc
    measures (tests/test_descent_block_costs.py). The primal form holds the weighted
    data, for the largest feature group (all d features at worst) its copy and the
    parts of its Laplacian product, the d x d system and its factor (about 6 n d +
    3 d^2 floats); the dual form the weighted data, ``C^-1 X~'`` and its blocks (about
    7 n d) and the n x n systems; conjugate gradients the weighted data and its copy in
    groups, and the (n, h) and (d, h) vectors of an iteration.

    Declared: twice the form's multiply-adds (:func:`selection_system_cost`, M groups of
    ``max(1, d // M)`` features) in flops; ``7 n d + 4 d^2`` floats for the primal form,
    ``8 n d + 4 n^2`` for the dual and ``2 n d + (M + 8) n h + 8 d h`` for conjugate
    gradients (upper bounds of the contents above).
    """
    n, d, h = size.n_samples, size.n_features, size.n_clusters
    M = max(size.n_granularities, 1)
    cost = selection_system_cost(n, d, [max(1, d // M)] * M, h,
                                 entries=cg_entries(size.density * n * d, n * d))
    if system == "auto":
        system = cheapest_system(cost, dual_allowed=True)
    if system == "cg":
        memory = (2 * n * d + (M + 8) * n * h + 8 * d * h) * 8
        advice = "reduce the number of samples or of features (two copies of the data)"
    elif system == "primal":
        memory = (7 * n * d + 4 * d * d) * 8
        advice = "reduce the number of features (d x d systems dominate)"
    else:  # the n x n (Woodbury) form: C^-1 X~' and X~ blocks, n x n systems
        memory = (8 * n * d + 4 * n * n) * 8
        advice = "reduce the number of samples (n x n systems dominate)"
    return Cost(flops=2.0 * cost[system], memory={"selection_matrix": memory},
                advice={"selection_matrix": advice})


class SelectionMatrixBlock(Block):
    """Update W by minimizing the objective's W subproblem (eq. W.3).

    Every term that depends on W adds a quadratic majorizer of itself, tight at the
    current W (:class:`~causefs.model.subproblems.SelectionSystem`; for the l2,1 term
    the IRLS weights at the current W), so the step never raises the objective (paper
    Theorem 1).

    Parameters
    ----------
    system : {"auto", "primal", "dual", "cg"}
        The d x d system, its n x n Woodbury form, conjugate gradients warm-started
        from the current W (wide data: no d x d or n x n matrix), or the cheapest.
    """

    name = "selection_matrix"
    accepts_sparse = True
    kind = "descent"
    reads = ("X_adjusted", "mu", "F", "W")
    optional_reads = ("S", "groups")
    writes = ("W",)
    subproblem = SelectionSystem

    def __init__(self, system: str = "auto"):
        self.system = check_choice("system", system, SYSTEMS)

    def cost(self, size) -> Cost:
        return selection_cost(size, self.system)

    def step(self, state: State) -> State:
        system = state.problem.objective.subproblem(SelectionSystem, state, "W")
        return state.replace(W=system.solve(self.system))

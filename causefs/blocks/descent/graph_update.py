"""What the two graph updates share: the adaptive-neighbour closed form on the graph's cost."""

from __future__ import annotations

from abc import abstractmethod

from ...model.settings import DEFAULTS, check_setting
from ...model.subproblems import GraphCost
from ...numerics.adaptive_graphs import check_adaptive_update
from ..base import Block


class GraphUpdateBlock(Block):
    """Base of the S and G updates: each column of the graph is the exact minimizer of
    its cost (:class:`~causefs.model.subproblems.GraphCost`, assembled from the terms)
    once its adaptive parameter is re-estimated, so the block descends with the new
    parameter substituted into both sides (docs/MODEL.md, "Descent and monotonicity").

    Parameters
    ----------
    adaptive_update : {"closed_form", "monotone"}
        ``closed_form`` (the paper) re-estimates the parameter every update;
        ``monotone`` keeps a column's parameter where the re-estimate would raise the
        objective, so the block never raises J as it stands (see
        :data:`causefs.numerics.adaptive_graphs.ADAPTIVE_UPDATES`).
    neighbor_algorithm : str
        Candidate search (:data:`causefs.numerics.neighbors.NEIGHBOR_ALGORITHMS`).
    """

    accepts_sparse = True
    kind = "descent"
    subproblem = GraphCost
    requires = ("neighbor_algorithm",)

    def __init__(self, adaptive_update: str = "closed_form",
                 neighbor_algorithm: str = DEFAULTS.neighbor_algorithm):
        self.adaptive_update = check_adaptive_update(adaptive_update)
        self.neighbor_algorithm = check_setting("neighbor_algorithm", neighbor_algorithm)

    @abstractmethod
    def step(self, state):
        """Return a new state with the graph and its parameters updated."""

"""S[m] update (paper eq. S.5): adaptive neighbours on each granularity's cost."""

from __future__ import annotations

import numpy as np

from ...budget.graphs import graph_cost
from ...core.parts import Cost
from ...core.state import State
from ...model.subproblems import GraphCost
from ...numerics.adaptive_graphs import adaptive_graph
from ...numerics.anchors import anchor_seeds
from ...numerics.threads import graph_threads, parallel_map
from .graph_update import GraphUpdateBlock


def granular_graphs(state: State, groups, nu, algorithm: str, previous=None, keep=()):
    """Closed-form S[m] and gamma[m] for ``groups`` and weights ``nu``.

    Each graph's cost comes from the objective's terms (CAUSE-FS: ``tau_ij = 1/2
    ||mu_i x_i R_m W - mu_j x_j R_m W||^2 - nu_m G_ij``); shared by the S block and the
    granularity block, which rebuilds the graphs for new groups; ``algorithm`` is the
    candidate search. ``previous`` (the current ``(S, gamma)`` tuples) selects the
    monotone update; ``keep`` lists groups whose current graph is kept as it is. The
    graphs are independent: they are built in parallel on the caller's threads (one
    after another below :data:`~causefs.numerics.threads.PARALLEL_GRAPHS_N`
    samples).
    """
    p = state.problem
    old_graphs, old_gammas = state.S or (), state.gamma or ()
    state_groups = state.groups
    same_groups = state_groups is not None and np.array_equal(groups, state_groups)
    state = state.replace(groups=groups, nu=nu)

    def build(m):
        if m in keep:
            return old_graphs[m], old_gammas[m]
        cost = p.objective.subproblem(GraphCost, state, "S", target="S", index=m)
        # the old graph of the same group seeds the search (and keeps the block a descent
        # block); after a regrouping, the old graph of the group sharing most features
        warm = [old_graphs[m] if same_groups else _closest_old_graph(
            groups == m, state_groups, old_graphs)] if len(old_graphs) else []
        return adaptive_graph(cost.points, p.n_neighbors, cost.prior, algorithm,
                              None if previous is None else (previous[0][m], previous[1][m]),
                              warm=warm,
                              seeds=anchor_seeds(cost.points, p.anchors, p.n_neighbors))

    built = parallel_map(build, range(len(nu)),
                         threads=graph_threads(state.X_adjusted.shape[0]))
    return tuple(S for S, _ in built), tuple(gamma for _, gamma in built)


def _closest_old_graph(members: np.ndarray, old_groups, old_graphs):
    """The graph of the old group that shares the most features with ``members``."""
    if old_groups is None:
        return old_graphs[0]
    shared = np.bincount(old_groups[members], minlength=len(old_graphs))[:len(old_graphs)]
    return old_graphs[int(np.argmax(shared))]


class GranularGraphsBlock(GraphUpdateBlock):
    """Update every S[m] column by column by the adaptive-neighbour closed form, gamma[m]
    re-estimated (see :class:`~.graph_update.GraphUpdateBlock` for the options)."""

    name = "granular_graphs"
    reads = ("X_adjusted", "mu", "W", "groups", "nu", "G")
    optional_reads = ("S", "gamma")
    writes = ("S", "gamma")
    reestimates = ("gamma",)

    def cost(self, size) -> Cost:
        return graph_cost(size, size.n_granularities, fresh=False, granular=True)

    def step(self, state: State) -> State:
        previous = None
        if self.adaptive_update == "monotone" and state.S is not None:
            previous = (state.S, state.gamma)
        S, gamma = granular_graphs(state, state.groups, state.nu, self.neighbor_algorithm,
                                   previous)
        return state.replace(S=S, gamma=gamma)

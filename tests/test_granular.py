"""The granular graphs S[m] and the granularity update (Delta, nu), against computations
written here from the paper (Algorithm 1, lines 9-10; eq. S.5) and SPEC: the weights
``nu_m = sum_{f in Delta_m} ||W_f||^2 / sum_f ||W_f||^2`` summed feature by feature, the
groups as SciPy's Ward tree on the contributions (or on the rows of W) cut at the M of
best Calinski-Harabasz score by scikit-learn, the warm starts of the graphs' searches as
the old graph of the group sharing most features (counted by hand), the graphs' price as
that of searching the h-dimensional points ``mu_i x_i R_m W``."""

import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from sklearn.metrics import calinski_harabasz_score

import causefs.blocks.descent.granular_graphs as granular_module
from causefs.blocks import GranularGraphsBlock, GranularityBlock
from causefs.blocks.structure.granularity import granularity_weights
from causefs.core.validation import InvalidParameterError
from causefs.model.fit_size import FitSize
from causefs.model.settings import Settings
from test_descent_block_costs import cause_fs_state
from test_reference_math import assert_graph_equal, reference_granular_graphs


def reference_groups(points, max_groups):
    """Ward's tree (SciPy's generic linkage), cut at each M in 2..min(max, d - 1) that
    gives M groups, the M of largest Calinski-Harabasz score (scikit-learn's), labels
    renumbered in order of first appearance."""
    d = points.shape[0]
    tree = linkage(points, method="ward")
    best = None
    for m in range(2, min(max_groups, d - 1) + 1):
        labels = fcluster(tree, m, criterion="maxclust")
        if len(set(labels)) != m:
            continue
        score = calinski_harabasz_score(points, labels)
        if best is None or score > best[0]:
            best = (score, labels)
    order = {}
    for label in best[1]:
        order.setdefault(label, len(order))
    return np.array([order[label] for label in best[1]])


def reference_nu(W, groups, n_groups):
    contribution = [sum(w * w for w in row) for row in W]
    total = sum(contribution)
    return np.array([sum(c for c, g in zip(contribution, groups) if g == m) / total
                     for m in range(n_groups)])


def test_nu_is_each_groups_share_of_the_contributions_empty_groups_included():
    rng = np.random.default_rng(0)
    W = rng.standard_normal((9, 3))
    groups = np.array([0, 2, 2, 0, 1, 1, 0, 2, 1])
    np.testing.assert_allclose(granularity_weights(W, groups, 3), reference_nu(W, groups, 3),
                               rtol=1e-13)
    # groups 3 and 4 hold no feature: weight 0, and nu still has M entries
    nu = granularity_weights(W, groups, 5)
    np.testing.assert_allclose(nu, list(reference_nu(W, groups, 3)) + [0.0, 0.0], rtol=1e-13)
    assert nu.sum() == pytest.approx(1.0)


@pytest.mark.parametrize("n_groups", [1, 2, 4])
def test_nu_is_uniform_when_w_is_zero(n_groups):
    nu = granularity_weights(np.zeros((6, 2)), np.arange(6) % n_groups, n_groups)
    assert nu.shape == (n_groups,)
    np.testing.assert_array_equal(nu, np.full(n_groups, 1.0 / n_groups))


@pytest.mark.parametrize("grouping", ["contribution", "rows"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_groups_are_the_ward_cut_of_best_calinski_harabasz(grouping, seed):
    """Algorithm 1, line 9: the features clustered by Ward on ``||W_f||^2`` (or the rows
    of W), M by Calinski-Harabasz over 2..max_granularity; then nu, and S[m] rebuilt by
    eq. S.5 for every group whose features changed."""
    state = cause_fs_state(24, 14, h=3, k=4, M=1, seed=seed)
    # contributions of three scales, so that the 1-D Ward tree has clear groups
    scales = np.repeat([0.1, 1.0, 3.0], [5, 5, 4])
    W = state.W * scales[:, None]
    state = state.replace(W=W)
    points = (np.array([[sum(w * w for w in row)] for row in W]) if grouping == "contribution"
              else W)
    expected = reference_groups(points, 5)
    new = GranularityBlock(max_granularity=5, grouping=grouping).step(state)
    np.testing.assert_array_equal(new.groups, expected)
    M = expected.max() + 1
    np.testing.assert_allclose(new.nu, reference_nu(W, expected, M), rtol=1e-12)
    assert len(new.S) == len(new.gamma) == M
    for m, reference in enumerate(reference_granular_graphs(state, expected, new.nu)):
        assert_graph_equal((new.S[m], new.gamma[m]), reference, f"S[{m}]")


def test_the_groupings_differ_where_the_rows_do_not_follow_their_norms():
    """Rows of two norms in two directions: grouped by norm on their contributions, by
    direction on the rows."""
    state = cause_fs_state(20, 8, h=2, k=3, M=1)
    scale = np.array([1.0, 1.2, 1.0, 1.2, 1.0, 1.2, 1.0, 1.2]) + 1e-3 * np.arange(8)
    W = np.array([[1.0, 0.0]] * 4 + [[0.0, 1.0]] * 4) * scale[:, None]
    state = state.replace(W=W)
    by_rows = GranularityBlock(max_granularity=3, grouping="rows").step(state).groups
    np.testing.assert_array_equal(by_rows, reference_groups(W, 3))
    np.testing.assert_array_equal(by_rows, [0, 0, 0, 0, 1, 1, 1, 1])
    by_norm = GranularityBlock(max_granularity=3).step(state).groups
    np.testing.assert_array_equal(
        by_norm, reference_groups(np.array([[row @ row] for row in W]), 3))
    np.testing.assert_array_equal(by_norm, [0, 1, 0, 1, 0, 1, 0, 1])


def test_a_regrouping_keeps_exactly_the_graphs_of_unchanged_groups():
    """SPEC: a regrouping invalidates the graphs of the changed groups only; the first
    grouping (no groups yet) or a state without graphs rebuilds every one."""
    state = cause_fs_state(24, 14, h=3, k=4, M=1, seed=3)
    W = state.W * np.repeat([0.1, 1.0, 3.0], [5, 5, 4])[:, None]
    block = GranularityBlock(max_granularity=5)
    groups = block.step(state.replace(W=W)).groups
    M = groups.max() + 1
    old = cause_fs_state(24, 14, h=3, k=4, M=M, seed=4)
    old = state.replace(W=W, groups=groups.copy(), nu=np.full(M, 1.0 / M), S=old.S,
                        gamma=old.gamma)
    again = block.step(old)
    assert all(a is b for a, b in zip(again.S, old.S))
    assert all(a is b for a, b in zip(again.gamma, old.gamma))
    # group 0 loses a feature to group 1: their graphs are rebuilt, the others kept
    moved = groups.copy()
    moved[np.flatnonzero(groups == 0)[0]] = 1
    rebuilt = block.step(old.replace(groups=moved))
    references = reference_granular_graphs(old, groups, rebuilt.nu)
    for m in range(M):
        if m in (0, 1):
            assert rebuilt.S[m] is not old.S[m]
            assert_graph_equal((rebuilt.S[m], rebuilt.gamma[m]), references[m], f"S[{m}]")
        else:
            assert rebuilt.S[m] is old.S[m] and rebuilt.gamma[m] is old.gamma[m]
    # no groups yet, or no graphs: every graph is built
    for start in (old.replace(groups=None), old.replace(S=None, gamma=None)):
        fresh = block.step(start)
        for m, reference in enumerate(reference_granular_graphs(old, groups, fresh.nu)):
            assert fresh.S[m] is not old.S[m]
            assert_graph_equal((fresh.S[m], fresh.gamma[m]), reference, f"S[{m}]")


def spy_searches(monkeypatch):
    """Record each adaptive_graph call of the granular graphs: (previous, warm)."""
    calls = []
    real = granular_module.adaptive_graph

    def spy(points, k, prior, algorithm, previous=None, warm=(), seeds=None):
        calls.append((previous, list(warm)))
        return real(points, k, prior, algorithm, previous, warm=warm, seeds=seeds)

    monkeypatch.setattr(granular_module, "adaptive_graph", spy)
    return calls


def test_each_search_is_seeded_by_the_old_graph_sharing_most_features(monkeypatch):
    """The warm start of S[m]'s search: the old S[m] while the groups stay; after a
    regrouping, the old graph of the group that shares most of the new group's features
    (counted here feature by feature; the first such group on a tie); the first old
    graph when the old groups are unknown; none without old graphs."""
    state = cause_fs_state(20, 9, h=2, k=3, M=3, seed=5)
    old_groups = np.array([0, 0, 0, 1, 1, 1, 2, 2, 2])
    state = state.replace(groups=old_groups)
    calls = spy_searches(monkeypatch)
    nu = np.full(3, 1.0 / 3)
    granular_module.granular_graphs(state, old_groups, nu, "exact")
    assert [warm[0] is state.S[m] for m, (_, warm) in enumerate(calls)] == [True] * 3

    new_groups = np.array([1, 2, 2, 2, 0, 0, 0, 1, 1])
    calls.clear()
    granular_module.granular_graphs(state, new_groups, nu, "exact")
    for m, (_, warm) in enumerate(calls):
        shared = [sum(1 for f in range(9) if new_groups[f] == m and old_groups[f] == o)
                  for o in range(3)]
        closest = shared.index(max(shared))
        assert warm[0] is state.S[closest], (m, shared)
    tied = np.array([0, 1, 0, 1, 2, 2, 2, 2, 2])  # worked out: old 0; a tie of 0 and 1; old 2
    calls.clear()
    granular_module.granular_graphs(state, tied, nu, "exact")
    assert [next(o for o in range(3) if warm[0] is state.S[o]) for _, warm in calls] \
        == [0, 0, 2]
    calls.clear()
    granular_module.granular_graphs(state.replace(groups=None), new_groups, nu, "exact")
    assert all(warm[0] is state.S[0] for _, warm in calls)
    calls.clear()
    granular_module.granular_graphs(state.replace(S=None, gamma=None), new_groups, nu,
                                    "exact")
    assert all(warm == [] for _, warm in calls)


@pytest.mark.parametrize("update", ["monotone", "closed_form"])
def test_the_block_gives_the_monotone_update_the_current_graphs(monkeypatch, update):
    state = cause_fs_state(20, 6, h=2, k=3, M=2, seed=6)
    calls = spy_searches(monkeypatch)
    new = GranularGraphsBlock(adaptive_update=update).step(state)
    for m, (previous, _) in enumerate(calls):
        if update == "monotone":
            assert previous[0] is state.S[m] and previous[1] is state.gamma[m]
        else:
            assert previous is None
    calls.clear()
    GranularGraphsBlock(adaptive_update=update).step(state.replace(S=None, gamma=None))
    assert all(previous is None for previous, _ in calls)
    assert len(new.S) == len(new.gamma) == 2


@pytest.mark.parametrize("block", [GranularGraphsBlock(), GranularityBlock()])
@pytest.mark.parametrize("algorithm", ["exact", "auto", "approximate", "kd_tree"])
def test_the_graphs_are_priced_as_searches_of_the_embedded_points(block, algorithm):
    """Eq. S.5's points ``mu_i x_i R_m W`` have h coordinates whatever d: the time of
    the M graphs does not depend on the number of features, and grows with h. Their
    memory holds the groups' slices of X (8 n d bytes dense) on top."""
    def cost(n, d, h, M=3):
        return block.cost(FitSize(n, d, Settings(n_clusters=h, n_neighbors=5,
                                                 max_granularity=M,
                                                 neighbor_algorithm=algorithm)))

    for n in (500, 20_000):
        narrow, wide = cost(n, 10, 3), cost(n, 2000, 3)
        assert (narrow.flops, narrow.ops) == (wide.flops, wide.ops)
        assert wide.memory["graph_candidates"] - narrow.memory["graph_candidates"] == (
            8 * n * (2000 - 10))
        wider = cost(n, 10, 6)
        assert wider.flops + wider.ops > narrow.flops + narrow.ops


def test_a_grouping_that_is_no_choice_is_refused_with_its_name():
    with pytest.raises(InvalidParameterError,
                       match=r"^grouping='x': must be one of 'contribution', 'rows'"):
        GranularityBlock(grouping="x")
    assert GranularityBlock().grouping == "contribution"


def test_a_group_without_features_is_seeded_by_the_first_old_graph(monkeypatch):
    """A group m no feature belongs to shares no feature with any old group: the first
    old graph seeds its search (every count 0: the first of the tie); its graph is the
    closed form on points that are all 0, as eq. S.5 gives it."""
    state = cause_fs_state(20, 6, h=2, k=3, M=3, seed=7)
    calls = spy_searches(monkeypatch)
    groups = np.array([1, 1, 1, 2, 2, 2])  # group 0 is empty
    nu = np.array([0.2, 0.5, 0.3])
    S, gamma = granular_module.granular_graphs(state, groups, nu, "exact")
    assert calls[0][1][0] is state.S[0]
    for m, reference in enumerate(reference_granular_graphs(state, groups, nu)):
        assert_graph_equal((S[m], gamma[m]), reference, f"S[{m}]")


def test_an_empty_group_keeps_its_own_old_graph_while_the_groups_stay(monkeypatch):
    """While the groups are those of the state, S[m]'s search starts from the old S[m],
    even for a group m no feature belongs to (whose closest old graph would be the
    first: it shares no feature with any)."""
    state = cause_fs_state(20, 6, h=2, k=3, M=3, seed=8)
    groups = np.array([0, 0, 0, 2, 2, 2])  # group 1 is empty
    state = state.replace(groups=groups)
    calls = spy_searches(monkeypatch)
    granular_module.granular_graphs(state, groups.copy(), np.array([0.4, 0.2, 0.4]), "exact")
    assert [warm[0] is state.S[m] for m, (_, warm) in enumerate(calls)] == [True] * 3


def test_a_zero_w_makes_one_group_of_weight_one():
    """No contribution to cluster: every feature in one group, nu = (1), S[0] rebuilt."""
    state = cause_fs_state(20, 6, h=2, k=3, M=2, seed=9)
    state = state.replace(W=np.zeros((6, 2)))
    new = GranularityBlock(max_granularity=3).step(state)
    np.testing.assert_array_equal(new.groups, np.zeros(6))
    np.testing.assert_array_equal(new.nu, [1.0])
    assert len(new.S) == 1
    reference = reference_granular_graphs(state, new.groups, new.nu)[0]
    assert_graph_equal((new.S[0], new.gamma[0]), reference, "S[0]")


def test_rows_are_clustered_by_ward_not_by_nearest_links():
    """A chain of rows 1 apart with one end 1.5 away: the nearest-link (single) tree
    cuts off the far end, Ward's tree cuts the chain inside it."""
    state = cause_fs_state(20, 10, h=2, k=3, M=1, seed=10)
    W = np.column_stack([np.r_[np.arange(9.0), 9.5], np.zeros(10)])
    groups = GranularityBlock(max_granularity=2, grouping="rows").step(
        state.replace(W=W)).groups
    np.testing.assert_array_equal(groups, reference_groups(W, 2))
    np.testing.assert_array_equal(groups, [0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    single = fcluster(linkage(W, method="single"), 2, criterion="maxclust")
    np.testing.assert_array_equal(single, [1] * 9 + [2])

"""Confounder pruning (Algorithm 1, line 11; :class:`causefs.blocks.ConfoundersBlock`)
against the rule its docstring states, written here feature by feature: K[:, r] holds
the relevant features other than r whose similarity to r, divided by the largest among
r's candidates, is at least sigma; relevant means ``||W_f||^2 >= irrelevant_tol`` times
the largest; only the kept treatments get confounders."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.blocks import ConfoundersBlock
from causefs.blocks.initialization.initial_confounders import InitialConfoundersBlock
from causefs.core.validation import InvalidParameterError, construct
from test_descent_block_costs import cause_fs_state


def similarity(W, X, f, r, correlation):
    if correlation == "cosine":
        a, b = W[f], W[r]
        norms = np.linalg.norm(a) * np.linalg.norm(b)
        return 0.0 if norms == 0 else abs(a @ b) / norms
    a, b = X[:, f] - X[:, f].mean(), X[:, r] - X[:, r].mean()
    norms = np.linalg.norm(a) * np.linalg.norm(b)
    return 0.0 if norms == 0 else abs(a @ b) / norms


def expected_confounders(W, X, treatments, sigma, tol, correlation):
    d = W.shape[0]
    contribution = [float(W[f] @ W[f]) for f in range(d)]
    relevant = [c >= tol * max(contribution) for c in contribution]
    K = np.zeros((d, d), dtype=bool)
    for r in treatments:
        candidates = [f for f in range(d) if relevant[f] and f != r]
        sims = {f: similarity(W, X, f, r, correlation) for f in candidates}
        largest = max(sims.values(), default=0.0)
        if largest <= 0:
            continue
        for f in candidates:
            K[f, r] = sims[f] / largest >= sigma
    return K


def pruning_state(seed, d=10):
    state = cause_fs_state(30, d, seed=seed)
    rng = np.random.default_rng(seed)
    W = rng.standard_normal((d, 3))
    W[1] = 0.0  # a zero row: irrelevant, and of similarity 0
    W[2] *= 1e-3  # contribution 1e-6 of a row of norm 1: irrelevant at tol 1e-3
    W[4] = 2.0 * W[3]  # cosine 1 with feature 3
    X = state.problem.X.copy()
    X[:, 5] = 0.5  # a constant column: Pearson similarity 0, and no treatment
    coding = state.problem.coding.copy()
    coding[:, [5, 7]] = 0.0  # features 5 and 7 are no treatments
    state.problem.X, state.problem.coding = X, coding
    return state.replace(W=W)


@pytest.mark.parametrize("correlation", ["cosine", "pearson"])
@pytest.mark.parametrize("sigma", [0.0, 0.2, 0.6, 1.0])
@pytest.mark.parametrize("seed", range(3))
def test_confounders_follow_the_documented_rule(correlation, sigma, seed):
    state = pruning_state(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a zero row or similarity is no 0/0 on the way
        K = ConfoundersBlock(sigma=sigma, correlation=correlation).step(state).K
    treatments = [r for r in range(10) if r not in (5, 7)]
    expected = expected_confounders(state.W, state.problem.X, treatments, sigma, 1e-3,
                                    correlation)
    assert K.dtype == bool and np.array_equal(K, expected)


def test_a_contribution_at_the_tolerance_is_relevant():
    """``>=``: a row whose ``||W_f||^2`` is exactly ``irrelevant_tol`` times the largest
    stays a candidate (tol 1/4 of a row of norm 2: a row of norm 1)."""
    state = cause_fs_state(30, 4)
    W = np.array([[2.0, 0.0], [1.0, 0.0], [0.0, 0.5], [0.9, 0.1]])
    K = ConfoundersBlock(sigma=0.0, irrelevant_tol=0.25).step(state.replace(W=W)).K
    assert K[1, 0] and not K[2, 0]  # norm 1: at the bound; norm 0.5: below


def test_only_the_top_treatments_by_w_get_confounders():
    """``max_treatments=3``: the three coded features of largest ``||W_f||``, the
    smaller index first among equals (:mod:`causefs.model.treatments`)."""
    state = pruning_state(1)
    W = state.W.copy()
    W[8] = W[9] = 10.0  # equal and largest
    W[0] = 9.0
    W[6] = 9.0  # ties with 0: 0 is kept
    state = state.replace(W=W)
    K = ConfoundersBlock(sigma=0.0, max_treatments=3).step(state).K
    assert sorted(np.flatnonzero(K.any(axis=0))) == [0, 8, 9]
    initial = InitialConfoundersBlock(max_treatments=3).step(state).K
    assert np.array_equal(initial, ~np.eye(10, dtype=bool) & np.isin(np.arange(10),
                                                                     [0, 8, 9]))
    everything = InitialConfoundersBlock(max_treatments=None).step(state).K
    coded = np.isin(np.arange(10), [5, 7], invert=True)
    assert np.array_equal(everything, ~np.eye(10, dtype=bool) & coded[None, :])


def test_sparse_data_give_the_dense_pearson_confounders():
    state = pruning_state(2)
    X = state.problem.X.copy()
    X[X < 0.4] = 0.0
    state.problem.X = X
    dense = ConfoundersBlock(correlation="pearson").step(state).K
    state.problem.X = sp.csc_array(X)
    assert np.array_equal(ConfoundersBlock(correlation="pearson").step(state).K, dense)


def test_the_confounder_options_are_checked_by_name():
    for options, message in (({"irrelevant_tol": 1.5}, "irrelevant_tol=1.5"),
                             ({"correlation": "spearman"}, "correlation='spearman'"),
                             ({"sigma": 2.0}, "sigma=2.0"),
                             ({"max_treatments": -1}, "max_treatments=-1")):
        with pytest.raises(InvalidParameterError, match=r"^part\." + message):
            construct("part", ConfoundersBlock, options)
    block = ConfoundersBlock()
    assert (block.irrelevant_tol, block.correlation) == (1e-3, "cosine")


# -- what the confounder blocks declare a step costs, against what it allocates ----------

@pytest.mark.parametrize("correlation", ["cosine", "pearson"])
@pytest.mark.parametrize(("n", "d", "max_treatments"), [
    (300, 400, None), (200, 1500, None), (2000, 100, None), (200, 1500, 50),
    (100, 3000, "auto"), (1000, 600, 100)])
def test_the_confounder_pruning_memory_bounds_the_measured_peak(correlation, n, d,
                                                                max_treatments):
    """Its phase (the new (d, d) K, the (d, |T|) similarities of the kept treatments T,
    with Pearson the data's centred copies) is at least the peak a step allocates and at
    most twice it; it declared none before (40 MiB measured at d = 1500)."""
    from causefs.model.fit_size import FitSize
    from causefs.model.settings import Settings
    from test_descent_block_costs import step_peak

    block = ConfoundersBlock(correlation=correlation, max_treatments=max_treatments)
    size = FitSize(n, d, Settings(n_clusters=3, max_treatments=max_treatments))
    assert block.cost(size).resident == d * d  # the K kept from before it
    declared = block.cost(size).memory["confounders"]
    peak = step_peak(block, cause_fs_state(n, d))
    assert peak <= declared <= 2 * peak, (peak, declared)


@pytest.mark.parametrize(("n", "d", "max_treatments"), [
    (300, 400, None), (100, 3000, "auto"), (2000, 100, None), (1000, 600, 100)])
def test_the_initial_confounders_are_built_without_a_d_by_d_temporary(n, d, max_treatments):
    """K (d, d) bools, kept for the fit, and the step's temporaries: declared at least the
    peak and at most twice it. Built as ``~eye(d) & kept`` the peak was 3 d^2 bytes."""
    from test_descent_block_costs import size_of, step_peak

    block = InitialConfoundersBlock(max_treatments=max_treatments)
    cost = block.cost(size_of(n, d))
    assert cost.resident == d * d
    peak = step_peak(block, cause_fs_state(n, d))
    declared = cost.resident + cost.memory["initial_confounders"]
    assert peak <= declared <= 2 * peak, (peak, declared)


def test_a_schedule_without_confounder_sets_neither_builds_nor_prices_them():
    """The default without Z (CAUSE-FS-I) has no term or block that reads K: its fit
    makes none (``confounders_`` empty) and its estimate holds no (d, d) K, which at
    d = 20,000 would be 400 MB a copy; the paper's loop keeps two."""
    from causefs import CauseFS
    from causefs.engine import build_parts, estimate

    X = np.random.default_rng(0).random((40, 12))
    fit = CauseFS(n_clusters=2, n_features_to_select=3, random_state=0).fit(X)
    assert fit.schedule_ == "ablation_I" and fit.confounders_.nnz == 0
    full = CauseFS(n_clusters=2, n_features_to_select=3, schedule="full",
                   random_state=0).fit(X)
    assert full.confounders_.nnz > 0
    n, d = 100, 20_000
    peaks = {}
    for schedule in ("ablation_I", "full"):
        settings = CauseFS(n_clusters=3, schedule=schedule).settings()
        peaks[schedule] = estimate(n, d, settings, build_parts(settings)).memory
    assert peaks["full"].resident - peaks["ablation_I"].resident >= 2 * d * d

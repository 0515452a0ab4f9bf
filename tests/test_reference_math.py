"""Every objective term and closed form against a dense reference written from the paper
as docs/MODEL.md restates it.

The references below are deliberately naive (dense matrices, explicit loops over columns
and treatments) and use nothing from causefs but the state's fields, so a wrong formula in
the library cannot be copied into its own check. The optimality properties test what the
descent property cannot: that the S, G and mu blocks minimize the right function, not just
some function that happens to lower J from a random state.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.sparse import csc_array

from causefs.blocks import (
    ConfoundersBlock,
    FusedGraphBlock,
    GranularGraphsBlock,
    GranularityBlock,
    InitialConfoundersBlock,
    InitialSelectionBlock,
    SampleWeightsBlock,
    SelectionMatrixBlock,
)
from causefs.model.objective import objective
from causefs.model.treatments import treatment_coding
from causefs.qp.projected_gradient import ProjectedGradientBackend
from causefs.model.subproblems import SelectionSystem
from causefs.terms import SparsityTerm
from causefs.testing import states
from causefs.testing.strategies import random_data
from conftest import run_engine, weight

# ----------------------------------------------------- references (docs/MODEL.md) ----


def dense(A):
    return A.toarray() if hasattr(A, "toarray") else np.asarray(A)


def laplacian(A):
    """docs/MODEL.md: ``L_A = D_A - (A + A')/2``, ``D_A`` the row sums of ``(A + A')/2``."""
    sym = 0.5 * (dense(A) + dense(A).T)
    return np.diag(sym.sum(axis=1)) - sym


def reference_treatment(X, rule="median", normalization="group"):
    """docs/MODEL.md: binarize at the median (or mean); an empty group falls back to the mean; a
    feature that still cannot be split is no treatment (zero coding)."""
    n, d = X.shape
    coding = np.zeros((n, d))
    for r in range(d):
        x = X[:, r]
        treated = x > (np.median(x) if rule == "median" else np.mean(x))
        if treated.all() or not treated.any():
            treated = x > np.mean(x)
        if treated.all() or not treated.any():
            continue
        if normalization == "group":
            coding[:, r] = np.where(treated, 1.0 / treated.sum(), -1.0 / (~treated).sum())
        else:
            coding[:, r] = np.where(treated, 1.0, -1.0) / n
    return coding


def reference_terms(state):
    """Paper eq. 3.5 as docs/MODEL.md writes it, one term at a time, dense."""
    p = state.problem
    alpha, lam, eps, beta = (weight(p, name) for name in ("alpha", "lam", "eps", "beta"))
    # the blocks fit X - Z Theta; the balance term stays that of X as given
    X = p.X if state.Theta is None else p.X - p.Z @ state.Theta
    W, F, mu = state.W, state.F, state.mu
    Xt = np.diag(mu) @ X
    terms = {
        "regression": alpha * np.sum((Xt @ W - F) ** 2),
        "fused_smoothness": np.trace(F.T @ laplacian(state.G) @ F),
        "sparsity": lam * sum(np.sqrt(W[f] @ W[f] + eps) for f in range(W.shape[0])),
        "granular_graphs": 0.0,
        "fusion": sum(state.xi[j] * np.sum(dense(state.G)[:, j] ** 2) for j in range(len(mu))),
        "balance": 0.0,
    }
    for m, (S, gamma) in enumerate(zip(state.S or (), state.gamma or ())):
        R = np.diag((state.groups == m).astype(float))
        terms["granular_graphs"] += np.trace(W.T @ R @ Xt.T @ laplacian(S) @ Xt @ R @ W)
        terms["granular_graphs"] += sum(gamma[j] * np.sum(dense(S)[:, j] ** 2)
                                        for j in range(len(mu)))
        terms["fusion"] -= state.nu[m] * np.sum(dense(state.G) * dense(S))
    if beta != 0:
        for r in range(X.shape[1]):
            V = p.X[:, state.K[:, r]]  # the values of r's confounders, x_i[K_r]
            a = p.coding[:, r]
            kernel = V @ V.T  # linear kappa
            terms["balance"] += beta * sum(mu[i] * mu[j] * a[i] * a[j] * kernel[i, j]
                                             for i in range(len(mu)) for j in range(len(mu)))
    return terms


def reference_adaptive(tau, k, anchors=None):
    """eq. S.5 column by column: keep the k smallest tau_ij (i != j), ties by index;
    ``S_ij = (tau_(k+1)j - tau_ij) / (k tau_(k+1)j - sum_p tau_pj)``; gamma_j is half the
    denominator; a zero denominator gives 1/k on the k nearest and gamma_j = 0. With
    ``anchors`` (the problem's), i ranges over them only (the graphs' feasible set)."""
    n = tau.shape[0]
    S, gamma = np.zeros((n, n)), np.zeros(n)
    for j in range(n):
        candidates = [i for i in (range(n) if anchors is None else anchors) if i != j]
        order = sorted(candidates, key=lambda i: (tau[i, j], i))
        nearest, next_tau = order[:k], tau[order[k], j]
        denominator = k * next_tau - sum(tau[i, j] for i in nearest)
        for i in nearest:
            S[i, j] = (next_tau - tau[i, j]) / denominator if denominator > 0 else 1.0 / k
        gamma[j] = denominator / 2 if denominator > 0 else 0.0
    return S, gamma


def half_squared_distances(Y):
    n = Y.shape[0]
    return np.array([[0.5 * np.sum((Y[i] - Y[j]) ** 2) for j in range(n)] for i in range(n)])


def reference_granular_graphs(state, groups, nu):
    """Paper eq. S.5: ``tau_ij = 1/2 ||mu_i x_i R_m W - mu_j x_j R_m W||^2 - nu_m G_ij``."""
    graphs = []
    for m in range(len(nu)):
        Y = np.array([state.mu[i] * (state.X_adjusted[i] * (groups == m)) @ state.W
                      for i in range(state.problem.n_samples)])
        graphs.append(reference_adaptive(half_squared_distances(Y) - nu[m] * dense(state.G),
                                         state.problem.n_neighbors, state.problem.anchors))
    return graphs


def reference_fused_graph(state):
    """Paper eq. G.3: ``delta_ij = 1/2 ||F_i - F_j||^2 - sum_m nu_m S[m]_ij``."""
    delta = half_squared_distances(state.F)
    for m, S in enumerate(state.S or ()):
        delta -= state.nu[m] * dense(S)
    return reference_adaptive(delta, state.problem.n_neighbors, state.problem.anchors)


def reference_D(W, eps):
    """docs/MODEL.md: ``D_f = 1 / (2 sqrt(||W_f||^2 + eps))``."""
    return np.array([1.0 / (2.0 * np.sqrt(W[f] @ W[f] + eps)) for f in range(W.shape[0])])


def reference_nu(W, groups):
    """docs/MODEL.md: ``nu_m = sum_{f in Delta_m} ||W_f||^2 / sum_f ||W_f||^2``."""
    contribution = np.array([W[f] @ W[f] for f in range(W.shape[0])])
    return np.array([contribution[groups == m].sum() for m in range(groups.max() + 1)]) \
        / contribution.sum()


def reference_confounders(state, sigma, tol, correlation):
    """docs/MODEL.md: K[:, r] = all features minus r, minus the irrelevant U, minus the adjustment
    features (normalized correlation with r below sigma); only treatments have any."""
    X, W = state.X_adjusted, state.W
    d = W.shape[0]
    contribution = np.array([W[f] @ W[f] for f in range(d)])
    irrelevant = contribution < tol * contribution.max()
    K = np.zeros((d, d), dtype=bool)
    for r in range(d):
        if not np.any(state.problem.coding[:, r]):
            continue
        candidates = [f for f in range(d) if f != r and not irrelevant[f]]
        if correlation == "cosine":
            norm = lambda v: v / np.linalg.norm(v) if np.linalg.norm(v) > 0 else v  # noqa: E731
            corr = {f: abs(norm(W[f]) @ norm(W[r])) for f in candidates}
        else:
            corr = {f: abs(np.corrcoef(X[:, f], X[:, r])[0, 1]) for f in candidates}
        largest = max(corr.values(), default=0.0)
        for f in candidates:
            K[f, r] = largest > 0 and corr[f] / largest >= sigma
    return K


def assert_graph_equal(ours, reference, what):
    S, gamma = reference
    np.testing.assert_allclose(dense(ours[0]), S, atol=1e-9, err_msg=f"{what} weights")
    np.testing.assert_allclose(ours[1], gamma, rtol=1e-9, atol=1e-12, err_msg=f"{what} gamma")


# ---------------------------------------------------------------------- tests ----------


@given(states())
def test_every_objective_term_equals_the_dense_reference(state):
    ours = objective(state).terms
    reference = reference_terms(state)
    scale = sum(abs(v) for v in reference.values()) + 1e-300
    for name, value in reference.items():
        assert ours[name] == pytest.approx(value, rel=1e-9, abs=1e-10 * scale), name


@given(st.integers(0, 2**32 - 1), st.integers(3, 25), st.sampled_from(["median", "mean"]),
       st.sampled_from(["group", "paper"]))
def test_treatment_coding_equals_the_reference(seed, n, rule, normalization):
    rng = np.random.default_rng(seed)
    X = random_data(rng, n, 6, duplicates=bool(seed % 2))
    X[:, 1] = rng.integers(0, 2, n)  # binary: the median split can leave a group empty
    X[:, 2] = np.where(np.arange(n) == 0, 1.0, 0.0)  # one outlier: only the mean splits
    X[:, 3] = 0.5  # constant: no treatment
    X[:, 4] = np.where(np.arange(n) < n - 2, 0.3, rng.random())  # mostly tied
    np.testing.assert_allclose(treatment_coding(X, rule, normalization),
                               reference_treatment(X, rule, normalization), atol=1e-15)


@given(states())
def test_granular_graphs_equal_the_closed_form(state):
    new = GranularGraphsBlock().step(state)
    for m, reference in enumerate(reference_granular_graphs(state, state.groups, state.nu)):
        assert_graph_equal((new.S[m], new.gamma[m]), reference, f"S[{m}]")


@given(states(granular=None))
def test_fused_graph_equals_the_closed_form(state):
    new = FusedGraphBlock().step(state)
    assert_graph_equal((new.G, new.xi), reference_fused_graph(state), "G")


@given(states())
def test_the_l21_term_majorizes_with_d_at_the_current_w(state):
    """The l2,1 term adds lam diag(D) to the W system with D at the W it starts from
    (eq. W.2), D = I when there is none yet (the first solve, initial_selection)."""
    term = SparsityTerm(lam=0.3, eps=1e-6)
    for start, D in ((state, reference_D(state.W, 1e-6)),
                     (state.replace(W=None), np.ones(state.problem.n_features))):
        system = SelectionSystem(start)
        term.add_to_selection_system(start, system)
        np.testing.assert_allclose(np.diag(system.matrix()), 0.3 * D, rtol=1e-12)
        assert np.count_nonzero(system.matrix() - np.diag(np.diag(system.matrix()))) == 0


@given(states())
def test_granularity_sets_nu_and_rebuilds_s_for_the_new_groups(state):
    new = GranularityBlock(max_granularity=4).step(state)
    np.testing.assert_allclose(new.nu, reference_nu(state.W, new.groups), rtol=1e-10)
    rebuilt = reference_granular_graphs(state, new.groups, new.nu)
    assert len(new.S) == len(rebuilt)
    for m, reference in enumerate(rebuilt):
        # docs/MODEL.md: regrouping invalidates the graphs of the groups whose features changed; a
        # group that kept its features keeps its graph
        unchanged = (state.groups is not None and m < len(state.S)
                     and np.array_equal(new.groups == m, state.groups == m))
        if unchanged:
            assert new.S[m] is state.S[m] and new.gamma[m] is state.gamma[m]
        else:
            assert_graph_equal((new.S[m], new.gamma[m]), reference, f"S[{m}]")


def reference_initial_confounders(X, coding, W, max_treatments):
    """docs/MODEL.md: K[:, r] = every feature but r for the kept treatments r, the
    ``max_treatments`` features with a non-zero coding of largest ``||W_f||`` (of largest
    variance before W exists, the variance of a column over the samples), ties by index."""
    n, d = X.shape
    treatments = [r for r in range(d) if np.any(coding[:, r] != 0)]
    if W is None:
        score = [sum((X[i, r] - sum(X[:, r]) / n) ** 2 for i in range(n)) / n
                 for r in range(d)]
    else:
        score = [sum(w * w for w in W[r]) for r in range(d)]
    kept = sorted(treatments, key=lambda r: (-score[r], r))[:max_treatments]
    K = np.zeros((d, d), dtype=bool)
    for r in kept:
        K[:, r] = [f != r for f in range(d)]
    return K


@given(states(), st.integers(1, 12), st.booleans())
def test_initial_confounders_equal_the_reference(state, max_treatments, with_w):
    """The initial rule on the samples' axis: the treatments of largest variance (or
    ||W_f||), each confounded by every other feature."""
    if not with_w:
        state = state.replace(W=None)
    new = InitialConfoundersBlock(max_treatments=max_treatments).step(state)
    expected = reference_initial_confounders(state.X_adjusted, state.problem.coding, state.W,
                                             max_treatments)
    mismatch = np.argwhere(new.K != expected)
    assert not mismatch.size, f"K differs at (f, r) = {mismatch[:5].tolist()}"


@given(states(), st.sampled_from([0.0, 0.2, 0.7, 1.0]), st.sampled_from(["cosine", "pearson"]))
def test_confounder_sets_equal_the_reference(state, sigma, correlation):
    new = ConfoundersBlock(sigma=sigma, correlation=correlation).step(state)
    expected = reference_confounders(state, sigma, 1e-3, correlation)
    mismatch = np.argwhere(new.K != expected)
    assert not mismatch.size, f"K differs at (f, r) = {mismatch[:5].tolist()}"


# ---------------------------------------------------------------- optimality -----------


def perturbations(rng, current, total, exclude=None, allowed=None):
    """Feasible points: mixtures of ``current`` with random points of the scaled simplex
    (with a zero at ``exclude`` and outside the indices ``allowed``, if given), at several
    step lengths."""
    n = current.size
    for t in (1e-4, 1e-2, 0.3, 1.0):
        other = rng.dirichlet(np.full(n, 0.3)) * total
        if allowed is not None:
            other[np.setdiff1d(np.arange(n), allowed)] = 0.0
        if exclude is not None:
            other[exclude] = 0.0
        if allowed is not None or exclude is not None:
            other *= total / other.sum()
        yield (1 - t) * current + t * other


def assert_no_better(state, candidates, what, rtol=1e-9):
    value = objective(state).total
    scale = sum(abs(v) for v in objective(state).terms.values()) + 1e-300
    for candidate in candidates:
        lower = objective(candidate).total
        assert lower >= value - rtol * scale, \
            f"a feasible {what} lowers J from {value!r} to {lower!r}"


def with_column(graph, j, column):
    A = dense(graph).copy()
    A[:, j] = column
    return csc_array(A)


@given(states(), st.integers(0, 2**32 - 1))
def test_no_feasible_perturbation_of_a_granular_graph_lowers_j(state, seed):
    new = GranularGraphsBlock().step(state)  # gamma is the block's; S is then optimal
    rng = np.random.default_rng(seed)
    m = int(rng.integers(len(new.S)))
    for j in rng.choice(state.problem.n_samples, size=3):
        column = dense(new.S[m])[:, j]
        candidates = []
        for other in perturbations(rng, column, 1.0, exclude=j,
                                   allowed=state.problem.anchors):
            S = list(new.S)
            S[m] = with_column(new.S[m], j, other)
            candidates.append(new.replace(S=tuple(S)))
        assert_no_better(new, candidates, f"column {j} of S[{m}]")


@given(states(granular=None), st.integers(0, 2**32 - 1))
def test_no_feasible_perturbation_of_the_fused_graph_lowers_j(state, seed):
    new = FusedGraphBlock().step(state)
    rng = np.random.default_rng(seed)
    for j in rng.choice(state.problem.n_samples, size=3):
        column = dense(new.G)[:, j]
        candidates = [new.replace(G=with_column(new.G, j, other))
                      for other in perturbations(rng, column, 1.0, exclude=j,
                                                 allowed=state.problem.anchors)]
        assert_no_better(new, candidates, f"column {j} of G")


@given(states(), st.integers(0, 2**32 - 1))
def test_no_feasible_perturbation_of_mu_lowers_j(state, seed):
    backend = ProjectedGradientBackend(rtol=1e-13, max_iter=200_000)
    new = SampleWeightsBlock(backend, max_products=None, precision="float64").step(state)
    rng = np.random.default_rng(seed)
    candidates = [new.replace(mu=mu)
                  for mu in perturbations(rng, new.mu, state.problem.mu_total)]
    assert_no_better(new, candidates, "mu", rtol=1e-7)


# ------------------------------------------------------- the float32 mu model -------


def reference_j_of_mu(state, mu):
    """The terms of J that depend on mu (docs/MODEL.md), dense: the regression, the
    granular graphs' ``Tr(W' R_m X~' L_S[m] X~ R_m W)`` and the linear-kernel balance
    ``beta sum_r ||Z_r' (a_r o mu)||^2`` with ``Z_r = X[:, K[:, r]]``."""
    p = state.problem
    Xt = mu[:, None] * p.X
    value = weight(p, "alpha") * np.sum((Xt @ state.W - state.F) ** 2)
    for m, S in enumerate(state.S or ()):
        P = Xt @ ((state.groups == m)[:, None] * state.W)
        value += np.trace(P.T @ laplacian(S) @ P)
    for r in range(p.n_features):
        value += weight(p, "beta") * np.sum((p.X[:, state.K[:, r]].T @ (p.coding[:, r] * mu)) ** 2)
    return value


def test_the_float32_mu_model_has_the_exact_gradient_at_its_warm_start(blobs):
    """The mu block solves a float32 model of its QP shifted so that its gradient at the
    warm start is J's: its rounding then only touches the curvature along the step. The
    model's gradient, taken from what the backend receives, against J's by central
    differences (exact for a quadratic); a shift built around another vector is off by
    float32 rounding (2e-7), which the float64 acceptance test cannot see."""
    from causefs.numerics.scaling import scale_features
    from causefs.qp import QPBackend, QPResult

    class Spy(QPBackend):
        name = "spy"

        def solve(self, qp, x0):
            self.received = (qp, x0.copy())
            return QPResult(x=x0, value=qp.value(x0), n_iter=0, converged=True)

    state = run_engine(scale_features(blobs[0]), n_clusters=3, beta=0.1, lam=0.1,
                       max_iter=2, schedule="full").state
    spy = Spy()
    SampleWeightsBlock(spy, precision="float32").step(state)
    model, mu = spy.received
    assert model.balance is not None and np.array_equal(mu, state.mu)
    assert np.ptp(mu) > 0.1  # away from uniform weights, where a shift could hide
    ours = model.matvec(mu) + model.linear
    reference = np.array([(reference_j_of_mu(state, mu + e) - reference_j_of_mu(state, mu - e))
                          / 2 for e in np.eye(mu.size)])
    assert np.abs(ours - reference).max() <= 1e-10 * np.abs(reference).max()

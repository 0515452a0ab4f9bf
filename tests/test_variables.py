"""The constraints of the state's fields (:mod:`causefs.model.variables`), checked against
docs/MODEL.md's "Variables" table on a problem of 6 samples and 4 features: a value that
meets the documented constraint passes its field's ``check``, each way of breaking it is
refused with a message that names the field. ``causefs.testing.check_state`` asserts these
checks on every state the property tests make."""

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.core.state import State
from causefs.model.problem import Problem
from causefs.model.variables import FIELDS, adjusted_data

N, D, H, K = 6, 4, 2, 2

CHECKS = {field.name: field.check for field in FIELDS}


def problem(sample_weights="mean_one", Z=None):
    X = np.arange(N * D, dtype=float).reshape(N, D) % 5
    return Problem(X=X, coding=np.zeros((N, D)), n_clusters=H, n_neighbors=K,
                   sample_weights=sample_weights, Z=Z)


def ring_graph(weights=(0.75, 0.25)):
    """Column i holds ``weights`` at rows i+1 and i+2 (mod n): k = 2 non-zeros a column,
    no self loop; the columns sum to ``sum(weights)``, the rows too."""
    rows = np.concatenate([(np.arange(N) + 1 + j) % N for j in range(len(weights))])
    cols = np.tile(np.arange(N), len(weights))
    values = np.repeat(np.asarray(weights, dtype=float), N)
    return sp.csc_array((values, (rows, cols)), shape=(N, N))


def passes(name, value, state):
    CHECKS[name](value, state)


def refused(name, value, state, message):
    """The check fails with a message that starts by naming what is wrong."""
    with pytest.raises(AssertionError, match="^" + message):
        CHECKS[name](value, state)


def test_a_graph_is_column_stochastic_with_k_non_zeros_and_no_self_loop():
    state = State(problem())
    G = ring_graph()
    passes("G", G, state)
    passes("G", sp.csr_matrix(G), state)  # any scipy.sparse format
    explicit_zero = G.copy()
    explicit_zero.data[:2] = [0.0, 1.0]  # a stored 0 is >= 0; column 0 still sums to 1
    assert explicit_zero.nnz == 2 * N
    passes("G", explicit_zero, state)
    refused("G", G.toarray(), state, "G must be a scipy.sparse matrix, got ndarray")
    refused("G", sp.csc_array((N + 1, N + 1)), state, r"G has shape \(7, 7\), expected \(6, 6\)")
    negative = G.copy()
    negative.data[:N] = [1.25] * N
    negative.data[N:] = [-0.25] * N
    refused("G", negative, state, "G has negative or non-finite entries")
    infinite = G.copy()
    infinite.data[0] = np.inf
    refused("G", infinite, state, "G has negative or non-finite entries")
    refused("G", ring_graph((0.5, 0.25)), state, "G columns must sum to 1")
    refused("G", 2 * G, state, "G columns must sum to 1")
    refused("G", G * (1 + 1e-3), state, "G columns must sum to 1")
    # to round-off: a fit's graphs are float64, columns off by float32's rounding are not
    passes("G", G * (1 + 1e-12), state)
    refused("G", G * (1 + 1e-7), state, "G columns must sum to 1")
    # the round-off allowed is 1e-9 (the check's tolerance, absolute)
    passes("G", G * (1 + 0.9e-9), state)
    refused("G", G * (1 + 2e-9), state, "G columns must sum to 1")
    # uneven columns: each sums to 1, the rows do not; its transpose has rows summing to 1
    w = np.linspace(0.1, 0.9, N)
    uneven = sp.csc_array((np.r_[w, 1 - w], (np.r_[(np.arange(N) + 1) % N,
                                                    (np.arange(N) + 2) % N],
                                             np.r_[np.arange(N), np.arange(N)])), shape=(N, N))
    passes("G", uneven, state)
    assert not np.allclose(uneven.sum(axis=1), 1)
    refused("G", uneven.T, state, "G columns must sum to 1")
    # exactly k = 2 non-zeros a column pass (above); k + 1 do not
    refused("G", ring_graph((0.5, 0.25, 0.25)), state, "G has a column with more than k=2")
    looped = sp.csc_array(0.5 * np.eye(N)) + ring_graph((0.5,))
    refused("G", looped, state, "G has a self loop")


def test_each_granular_graph_is_checked_and_named_by_its_index():
    state = State(problem(), groups=np.array([0, 1, 0, 1]))
    passes("S", (ring_graph(), ring_graph((0.5, 0.5))), state)
    refused("S", (ring_graph(), ring_graph((0.5, 0.25))), state,
            r"S\[1\] columns must sum to 1")
    refused("S", (ring_graph().toarray(), ring_graph()), state, r"S\[0\] must be a scipy")


def test_gamma_and_xi_are_finite_and_non_negative_with_one_gamma_per_graph():
    S = (ring_graph(), ring_graph())
    state = State(problem(), S=S)
    passes("xi", np.zeros(N), state)  # 0 is allowed
    passes("xi", np.full(N, 0.5), state)
    refused("xi", np.r_[-1e-12, np.ones(N - 1)], state, "xi must be finite, >= 0")
    refused("xi", np.r_[np.inf, np.ones(N - 1)], state, "xi must be finite, >= 0")
    refused("xi", np.r_[np.nan, np.ones(N - 1)], state, "xi must be finite, >= 0")
    passes("gamma", (np.zeros(N), np.full(N, 0.5)), state)
    refused("gamma", (np.zeros(N), np.r_[-1.0, np.ones(N - 1)]), state,
            "gamma must be finite, >= 0")
    refused("gamma", (np.zeros(N), np.r_[np.inf, np.ones(N - 1)]), state,
            "gamma must be finite, >= 0")
    refused("gamma", (np.zeros(N),), state, "S and gamma must have one entry per group$")
    refused("gamma", (np.zeros(N),) * 2, State(problem()),
            "S and gamma must have one entry per group$")  # gamma without S


def test_w_is_finite_and_f_has_orthonormal_columns():
    state = State(problem())
    passes("W", np.ones((D, H)), state)
    refused("W", np.r_[[[np.nan, 0.0]], np.ones((D - 1, H))], state, "W has non-finite entries")
    F = np.linalg.qr(np.random.default_rng(0).standard_normal((N, H)))[0]
    passes("F", F, state)
    passes("F", F * (1 + 1e-12), state)  # round-off
    refused("F", F * (1 + 1e-6), state, "F is not orthonormal")
    refused("F", np.ones((N, H)) / np.sqrt(N), state, "F is not orthonormal")  # equal columns
    # the bound is inclusive: columns (1, 0, ...) and (1e-8, 1, 0, ...) have F'F - I of
    # exactly 1e-8 off the diagonal (1 + 1e-16 rounds to 1 on it)
    edge = np.eye(N, H)
    edge[0, 1] = 1e-8
    assert np.abs(edge.T @ edge - np.eye(H)).max() == 1e-8
    passes("F", edge, state)


@pytest.mark.parametrize("sample_weights, total", [("mean_one", N), ("simplex", 1.0)])
def test_mu_is_non_negative_and_sums_to_n_or_one(sample_weights, total):
    state = State(problem(sample_weights))
    mu = np.r_[0.0, np.full(N - 1, total / (N - 1))]
    passes("mu", mu, state)
    # relative to sum(mu): mean_one is the simplex's model rescaled by n, and its weights
    # pass or fail as the simplex weights they are n times
    passes("mu", mu * (1 + 1e-10), state)
    refused("mu", mu * (1 + 1e-6), state, "sum\\(mu\\) = ")
    refused("mu", mu * (1 - 1e-6), state, "sum\\(mu\\) = ")
    other = N if sample_weights == "simplex" else 1.0
    refused("mu", np.full(N, other / N), state,
            rf"sum\(mu\) = .*, expected {float(total)}$")
    negative = mu.copy()
    negative[0], negative[1] = -0.5 * total, mu[1] + 0.5 * total
    refused("mu", negative, state, "mu has negative entries")


def test_mu_may_miss_its_total_by_exactly_the_bound():
    """``|sum(mu) - total| <= 1e-9 total``, reached exactly: with n = 5^9 samples,
    ``1e-9 n = 2^-9`` (the product rounds to it exactly) and ``n + 2^-9`` is a double,
    so weights summing to it pass and the next double above is refused."""
    n = 5**9
    state = State(Problem(X=np.zeros((n, 1)), coding=np.zeros((n, 1)), n_clusters=H,
                          n_neighbors=K))
    assert 1e-9 * state.problem.mu_total == 2.0**-9
    mu = np.zeros(n)
    mu[0] = n + 2.0**-9
    passes("mu", mu, state)
    mu[0] = np.nextafter(n + 2.0**-9, np.inf)
    refused("mu", mu, state, "sum\\(mu\\) = ")


def test_groups_use_every_label_once_per_graph():
    state = State(problem())
    passes("groups", np.array([0, 1, 1, 0]), state)
    passes("groups", np.zeros(D, dtype=int), state)  # one group
    refused("groups", np.array([0, 2, 2, 0]), state,
            r"groups must use every label 0..2 \(got \[0 2\]\)$")
    refused("groups", np.array([1, 2, 2, 1]), state,
            r"groups must use every label 0..2 \(got \[1 2\]\)$")
    with_graphs = State(problem(), S=(ring_graph(), ring_graph()))
    passes("groups", np.array([0, 1, 1, 0]), with_graphs)
    refused("groups", np.array([0, 1, 2, 0]), with_graphs, "2 granular graphs for 3 groups")
    refused("groups", np.zeros(D, dtype=int), with_graphs, "2 granular graphs for 1 groups")


def test_nu_lies_on_the_simplex_with_one_weight_per_group():
    state = State(problem())
    passes("nu", np.array([0.25, 0.75]), state)
    passes("nu", np.array([0.0, 1.0]), state)
    refused("nu", np.array([-0.25, 1.25]), state, "nu must lie on the simplex$")
    refused("nu", np.array([0.25, 0.5]), state, "nu must lie on the simplex")
    refused("nu", np.array([0.5, 0.75]), state, "nu must lie on the simplex")
    grouped = State(problem(), groups=np.array([0, 1, 2, 0]))
    passes("nu", np.array([0.25, 0.25, 0.5]), grouped)
    refused("nu", np.array([0.25, 0.75]), grouped, "nu has 2 weights for 3 groups")


def test_k_is_boolean_without_its_diagonal():
    state = State(problem())
    K_ = ~np.eye(D, dtype=bool)
    passes("K", K_, state)
    refused("K", K_.astype(float), state, r"K must be bool \(d, d\)$")
    refused("K", np.ones((D, D), dtype=bool), state,
            r"a feature cannot confound itself \(K diagonal\)$")
    one = np.zeros((D, D), dtype=bool)
    one[2, 2] = True
    refused("K", one, state, "a feature cannot confound itself")


def test_theta_needs_nuisance_variables_and_is_finite():
    Z = np.linspace(-1, 1, N)[:, None]
    state = State(problem(Z=Z))
    passes("Theta", np.ones((1, D)), state)
    refused("Theta", np.r_[[[np.inf, 0, 0, 0]]], state, "Theta has non-finite entries")
    refused("Theta", np.ones((1, D)), State(problem()),
            "Theta is set but the problem has no nuisance variables Z$")


def test_the_adjusted_data_are_x_less_z_theta():
    Z = np.c_[np.linspace(-1, 1, N), np.arange(N) % 2]
    p = problem(Z=Z)
    theta = np.arange(2.0 * D).reshape(2, D) - 3
    by_hand = np.array([[p.X[i, f] - Z[i, 0] * theta[0, f] - Z[i, 1] * theta[1, f]
                         for f in range(D)] for i in range(N)])
    np.testing.assert_allclose(adjusted_data(State(p, Theta=theta)), by_hand)
    np.testing.assert_allclose(State(p, Theta=theta).X_adjusted, by_hand)
    assert adjusted_data(State(p)) is p.X  # no effect estimated yet: X itself

"""Fit diagnostics of the sample weights, against direct computations."""

import dataclasses
import warnings
from types import SimpleNamespace

import numpy as np
import pytest
import scipy.sparse as sp

from causefs import CauseFS
from causefs.model import diagnostics
from causefs.model.diagnostics import (
    ZERO_WEIGHT,
    WeightDiagnostics,
    effective_sample_size,
    treatment_imbalance,
    weight_diagnostics,
)
from causefs.engine import balance_of
from causefs.kernels import LinearKernel
from causefs.model.treatments import treatment_coding
from causefs.core.state import State
from causefs.model.problem import Problem

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def test_effective_sample_size():
    assert effective_sample_size(np.ones(10)) == pytest.approx(10)
    assert effective_sample_size(np.r_[5.0, np.zeros(9)]) == pytest.approx(1)
    # two equal halves of the weight on 4 samples -> ESS 4 for any scale
    assert effective_sample_size(np.r_[np.full(4, 0.3), np.zeros(6)]) == pytest.approx(4)
    with pytest.raises(ValueError, match="all sample weights are zero"):
        effective_sample_size(np.zeros(3))


def test_imbalance_is_the_weighted_mean_difference_of_the_confounders():
    rng = np.random.default_rng(0)
    X = rng.random((30, 4))
    coding = treatment_coding(X)  # group coding: 1/|T| on treated, -1/|C| on control
    K = np.ones((4, 4), dtype=bool) & ~np.eye(4, dtype=bool)
    mu = rng.random(30) * 2
    out = treatment_imbalance(X, coding, K, mu)
    for r in range(4):
        treated = X[:, r] > np.median(X[:, r])
        z = np.delete(X, r, axis=1)
        diff = (mu[treated, None] * z[treated]).sum(0) / treated.sum() \
            - (mu[~treated, None] * z[~treated]).sum(0) / (~treated).sum()
        assert out[r] == pytest.approx(np.linalg.norm(diff))


def test_diagnostics_of_a_state_match_the_linear_mmd():
    rng = np.random.default_rng(1)
    X = rng.random((25, 5))
    problem = Problem(X=X, coding=treatment_coding(X), n_clusters=2,
                      sample_weights="mean_one", balance=balance_of(LinearKernel()))
    K = rng.random((5, 5)) < 0.5
    np.fill_diagonal(K, False)
    mu = np.r_[np.zeros(5), rng.random(20)]
    mu *= 25 / mu.sum()
    diag = weight_diagnostics(State(problem, mu=mu, K=K))
    assert diag.zero_weight_share == pytest.approx(5 / 25)
    assert diag.effective_sample_fraction == pytest.approx(mu.sum() ** 2 / (mu @ mu) / 25)
    # linear kernel: sum_r MMD_r = sum_r ||imbalance_r||^2 (paper eq. u.2, group coding)
    assert diag.balance_fitted == pytest.approx(np.sum(diag.imbalance_fitted ** 2))
    assert diag.balance_uniform == pytest.approx(np.sum(diag.imbalance_uniform ** 2))
    assert diag.max_weight_ratio == pytest.approx(mu.max())
    assert "effective sample size" in str(diag)
    # per treatment r, by hand: || X_{K_r}' (w o a_r) || at the fitted and uniform weights
    coding = problem.coding
    for weights, found in ((mu, diag.imbalance_fitted), (np.ones(25), diag.imbalance_uniform)):
        by_hand = [np.linalg.norm(X[:, K[:, r]].T @ (weights * coding[:, r])) for r in range(5)]
        assert np.allclose(found, by_hand)
    assert not np.allclose(diag.imbalance_fitted, diag.imbalance_uniform)


def test_estimator_sets_diagnostics(blobs):
    X, _ = blobs
    est = CauseFS(n_clusters=3, max_iter=3, random_state=0).fit(X)
    summary = est.diagnostics_.summary()
    assert summary["effective_sample_size"] == pytest.approx(
        effective_sample_size(est.sample_weight_))
    uniform = CauseFS(n_clusters=3, max_iter=3, schedule="ablation_I", random_state=0).fit(X)
    assert uniform.diagnostics_.effective_sample_fraction == pytest.approx(1.0)
    assert uniform.diagnostics_.balance_uniform == pytest.approx(
        uniform.diagnostics_.balance_fitted)


def test_the_objective_at_uniform_and_fitted_weights(blobs):
    """The weights minimize J, every term: fitted J is the loop's last recorded value and
    no higher than J at uniform weights; without a weight step the two are equal."""
    X, _ = blobs
    est = CauseFS(n_clusters=3, max_iter=3, random_state=0).fit(X)
    diag = est.diagnostics_
    assert diag.objective_fitted == pytest.approx(est.objective_history_[-1], rel=1e-12)
    assert diag.objective_fitted <= diag.objective_uniform
    assert f"the objective (every term) {diag.objective_uniform:.4g} at uniform" in str(diag)
    uniform = CauseFS(n_clusters=3, max_iter=3, schedule="ablation_I", random_state=0).fit(X)
    assert uniform.diagnostics_.objective_uniform == pytest.approx(
        uniform.diagnostics_.objective_fitted, rel=1e-12)


def test_the_effective_sample_size_of_a_mask_or_of_counts_is_kish_s():
    """``(sum mu)^2 / sum mu^2`` in floating point: a boolean mask of m samples gives m,
    integer counts whose squares exceed int64 do not overflow."""
    assert effective_sample_size(np.array([True, True, True, False])) == pytest.approx(3)
    counts = np.array([3, 1, 1, 1]) * 2**32  # squares of 2^65: beyond int64
    assert effective_sample_size(counts) == pytest.approx(36 / 12)
    with pytest.raises(ValueError, match="^all sample weights are zero: the effective "
                                         "sample size is undefined$"):
        effective_sample_size(np.zeros(3))


def test_sparse_confounder_sets_give_the_imbalance_of_their_dense_form():
    rng = np.random.default_rng(2)
    X = rng.random((20, 5))
    K = rng.random((5, 5)) < 0.4
    np.fill_diagonal(K, False)
    mu = rng.random(20)
    coding = treatment_coding(X)
    by_hand = [np.linalg.norm(X[:, K[:, r]].T @ (mu * coding[:, r])) for r in range(5)]
    for sparse_K in (sp.csr_array(K), sp.csc_matrix(K)):
        np.testing.assert_allclose(treatment_imbalance(X, coding, sparse_K, mu), by_hand)


class Objective:
    """J = sum(mu^2) + 1 (any function of mu would do), counting its evaluations."""

    def __init__(self):
        self.calls = 0

    def __call__(self, state):
        self.calls += 1
        return SimpleNamespace(total=float(state.mu @ state.mu) + 1.0)


class Operator:
    """A balance operator of quadratic form ``sum(mu * (1..n))^2``, counting its
    evaluations."""

    def __init__(self):
        self.quads = 0

    def quad(self, mu):
        self.quads += 1
        return float(mu @ np.arange(1.0, mu.size + 1)) ** 2


def weights_problem(n=8, d=3, sample_weights="simplex"):
    X = np.random.default_rng(0).random((n, d))
    operator = Operator()
    problem = Problem(X=X, coding=treatment_coding(X), n_clusters=2,
                      sample_weights=sample_weights, objective=Objective(),
                      balance=lambda X, coding, K: operator)
    return problem, operator


def test_zero_weights_and_the_largest_are_measured_against_the_mean():
    """A weight counts as zero when at most ZERO_WEIGHT times the mean weight (1/n for
    simplex weights): 1e-9 does at n = 8 (the bound is 1.25e-9), 1e-8 does not."""
    problem, _ = weights_problem()
    mu = np.r_[1e-9, 1e-8, 0.0, 0.125 - 1.1e-8, 0.125, 0.125, 0.25, 0.375]
    diag = weight_diagnostics(State(problem, mu=mu))
    assert diag.zero_weight_share == 2 / 8
    assert diag.max_weight_ratio == pytest.approx(0.375 * 8)
    # at the bound exactly: counted as zero
    mean_one, _ = weights_problem(sample_weights="mean_one")
    mu = np.r_[ZERO_WEIGHT, 1.0 - ZERO_WEIGHT, 1.0, 1.0, 1.0, 1.0, 1.5, 1.5]
    assert mu.sum() / 8 == 1.0  # the mean weight exactly, mu[0] its ZERO_WEIGHT share
    assert weight_diagnostics(State(mean_one, mu=mu)).zero_weight_share == 1 / 8


def test_without_confounder_sets_the_balance_and_imbalance_are_zero():
    problem, operator = weights_problem()
    mu = np.r_[0.5, 0.5, np.zeros(6)]
    diag = weight_diagnostics(State(problem, mu=mu))
    assert diag.balance_uniform == diag.balance_fitted == 0.0 and operator.quads == 0
    for imbalance in (diag.imbalance_uniform, diag.imbalance_fitted):
        np.testing.assert_array_equal(imbalance, np.zeros(3))


def test_without_confounder_sets_no_d_by_d_array_is_made():
    """A state without K (the default schedules build none) is diagnosed without making
    a (d, d) K of False: d = 3000 would be 9 MB; what is allocated stays near the data."""
    from test_descent_block_costs import traced_peak

    problem, _ = weights_problem(n=8, d=3000)
    state = State(problem, mu=np.full(8, 1 / 8))
    peak = traced_peak(lambda: weight_diagnostics(state))
    np.testing.assert_array_equal(weight_diagnostics(state).imbalance_uniform, np.zeros(3000))
    assert peak < 3000 * 3000 / 10, peak


@pytest.mark.parametrize("given", [False, True])
def test_the_balance_and_objective_at_uniform_and_fitted_weights(given, monkeypatch):
    """The balance at uniform weights ``sum(mu)/n`` and at mu, J at both (given J at mu
    is taken as it is), each evaluated once: where mu is uniform, once in all (as the
    imbalance)."""
    imbalances = []

    def counted(*args):
        imbalances.append(args)
        return treatment_imbalance(*args)

    monkeypatch.setattr(diagnostics, "treatment_imbalance", counted)
    problem, operator = weights_problem()
    K = ~np.eye(3, dtype=bool)
    mu = np.r_[0.5, 0.25, 0.25, np.zeros(5)]
    uniform = np.full(8, 1 / 8)
    J = mu @ mu + 1.0
    diag = weight_diagnostics(State(problem, mu=mu, K=K), objective=J if given else None)
    assert diag.balance_uniform == pytest.approx((uniform @ np.arange(1.0, 9)) ** 2)
    assert diag.balance_fitted == pytest.approx((mu @ np.arange(1.0, 9)) ** 2)
    assert diag.objective_uniform == pytest.approx(uniform @ uniform + 1.0)
    assert diag.objective_fitted == pytest.approx(J)
    assert operator.quads == 2 and problem.objective.calls == (1 if given else 2)
    assert len(imbalances) == 2

    problem, operator = weights_problem()
    diag = weight_diagnostics(State(problem, mu=uniform, K=K), objective=J if given else None)
    assert operator.quads == 1 and problem.objective.calls == (0 if given else 1)
    assert len(imbalances) == 3
    assert diag.balance_fitted == diag.balance_uniform
    assert diag.objective_fitted == diag.objective_uniform == pytest.approx(
        J if given else uniform @ uniform + 1.0)
    np.testing.assert_array_equal(diag.imbalance_fitted, diag.imbalance_uniform)


def test_the_summary_line_gives_shares_in_percent():
    imbalance = np.array([0.5, 0.25, 0.0])
    diag = WeightDiagnostics(
        effective_sample_size=6.0, effective_sample_fraction=0.25, zero_weight_share=0.125,
        max_weight_ratio=3.0, balance_uniform=2.0, balance_fitted=1.0,
        imbalance_uniform=imbalance, imbalance_fitted=imbalance / 2,
        objective_uniform=None, objective_fitted=None)
    summary = diag.summary()
    assert summary["mean_imbalance_uniform"] == pytest.approx(0.25)
    assert summary["max_imbalance_fitted"] == 0.25
    assert str(diag) == ("sample weights: effective sample size 6.0 (25.0% of n), 12.5% "
                         "zero, largest 3.00 x mean; balance term 2 at uniform weights, 1 "
                         "fitted; per-treatment imbalance mean 0.25 -> 0.125, max 0.5 -> "
                         "0.25")
    with_objective = dataclasses.replace(diag, objective_uniform=4.0, objective_fitted=3.5)
    assert str(with_objective) == str(diag) + ("; the objective (every term) 4 at uniform "
                                               "weights, 3.5 fitted")


def test_no_treatments_summarize_to_no_imbalance():
    empty = np.zeros(0)
    diag = WeightDiagnostics(1.0, 1.0, 0.0, 1.0, 0.0, 0.0, empty, empty, None, None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        summary = diag.summary()
    assert [summary[f"{kind}_imbalance_{when}"] for kind in ("mean", "max")
            for when in ("uniform", "fitted")] == [0.0] * 4

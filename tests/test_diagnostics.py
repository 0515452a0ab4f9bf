"""Fit diagnostics of the sample weights, against direct computations."""

import numpy as np
import pytest

from causefs import CauseFS
from causefs.model.diagnostics import effective_sample_size, treatment_imbalance, weight_diagnostics
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

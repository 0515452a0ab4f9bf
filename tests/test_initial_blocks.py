"""The initialization's sample weights and first W solve (Algorithm 1, lines 1-3)
against what their docstrings state, computed here: uniform weights summing to
``mu_total``; the W of eq. W.3 with the l2,1 term's weights ``D = I``."""

import numpy as np
import pytest

from causefs.blocks.initialization.initial_selection import InitialSelectionBlock
from causefs.blocks.initialization.uniform_weights import UniformWeightsBlock
from causefs.testing.strategies import cause_fs_objective
from test_descent_block_costs import cause_fs_state


@pytest.mark.parametrize(("form", "value"), [("mean_one", 1.0), ("simplex", 1.0 / 25)])
def test_uniform_weights_sum_to_the_problems_total(form, value):
    state = cause_fs_state(25, 4)
    state.problem.sample_weights = form
    mu = UniformWeightsBlock().step(state).mu
    assert mu.shape == (25,) and np.allclose(mu, value)


@pytest.mark.parametrize("system", ["primal", "dual"])
def test_the_first_w_solve_takes_d_equal_to_the_identity(system):
    """With the regression and l2,1 terms only: ``(alpha X~'X~ + lam I) W = alpha X~'F``
    whatever W the state holds (the majorizer at a current W would give other weights)."""
    state = cause_fs_state(12, 30 if system == "dual" else 6)
    state.problem.objective = cause_fs_objective(alpha=2.0, lam=0.3,
                                                 terms=("regression", "sparsity"))
    mu = np.linspace(0.5, 1.5, 12)
    state = state.replace(mu=mu, W=np.full(state.W.shape, 7.0))
    Xt = mu[:, None] * state.problem.X
    d = Xt.shape[1]
    expected = np.linalg.solve(2.0 * Xt.T @ Xt + 0.3 * np.eye(d), 2.0 * Xt.T @ state.F)
    W = InitialSelectionBlock(system=system).step(state).W
    assert np.allclose(W, expected, atol=1e-9)

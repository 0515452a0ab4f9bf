"""Sample weights that decorrelate all features (DWR, Kuang et al. 2020)."""

from __future__ import annotations

import numpy as np

from ...core.parts import Cost
from ...core.state import State
from ...core.validation import Interval, check_value
from ...numerics.correlation import standardized
from ...numerics.simplex import project_simplex
from ..base import Block


def decorrelation_loss(Z: np.ndarray, w: np.ndarray) -> tuple[float, np.ndarray]:
    """``sum_{j != k} Cov_w(z_j, z_k)^2`` and its gradient in w (mean-one weights).

    ``Cov_w = Z' diag(w) Z / n - m m'`` with ``m = Z'w / n``; with ``C0`` its off-diagonal
    part the gradient is ``(2/n) [(z_i - m)' C0 (z_i - m) - m' C0 m]``.
    """
    n = Z.shape[0]
    m = Z.T @ w / n
    C0 = (Z.T * w) @ Z / n - np.outer(m, m)
    np.fill_diagonal(C0, 0.0)
    centred = Z - m
    grad = 2.0 / n * (np.einsum("ij,ij->i", centred @ C0, centred) - m @ C0 @ m)
    return float(np.sum(C0 * C0)), grad


class DecorrelationWeightsBlock(Block):
    """mu that makes every pair of features uncorrelated under the weighted distribution.

    Treatments and confounders: *every* feature is a treatment and all the other features
    are its confounders (global balance, no confounder selection): the weights remove the
    linear dependence between any two features, so a spurious block tied to the causal one
    by selection bias loses its correlation with it. Minimizes over mean-one weights
    ``w >= 0``

        sum_{j != k} Cov_w(z_j, z_k)^2 / sum_{j != k} Cov_1(z_j, z_k)^2
            + penalty * mean((w - 1)^2)

    on standardized features z (Kuang et al. 2020, with their penalty on the weights'
    spread, which keeps the effective sample size up), by projected gradient with
    backtracking (the value never rises), starting at uniform weights. ``mu`` is ``w``
    scaled to ``sum(mu) = mu_total``. Depends on X only, so it runs once, before the
    loop (``init``); it does not minimize the CAUSE-FS objective.

    The iteration, with f the loss above, g its gradient and P the Euclidean projection
    onto the mean-one weights ``{w >= 0, sum(w) = n}``: from ``w = 1`` and a first step
    ``s = n``, each iteration tries ``t = P(w - s g(w))`` and halves s until the Armijo
    condition ``f(t) <= f(w) - 1e-4 g(w)'(w - t)`` holds or s is below ``1e-12`` (that
    trial is then the iteration's). A trial with ``f(t) > f(w)`` ends the descent at w;
    otherwise w becomes t, the next iteration starts at twice the step taken, and the
    descent stops after an iteration whose decrease ``f(w) - f(t)`` is at most
    ``tol |f(w)|``, or after ``max_iter`` iterations.

    Parameters
    ----------
    penalty : float, default=0.1
        Weight of the spread penalty (0: decorrelation only).
    max_iter : int, default=300
        Projected-gradient iterations.
    tol : float, default=1e-6
        Stop when the relative decrease of the loss in an iteration is at most tol.
    """

    name = "decorrelation_weights"
    kind = "init"
    reads = ("X_adjusted",)
    writes = ("mu",)

    def __init__(self, penalty: float = 0.1, max_iter: int = 300, tol: float = 1e-6):
        self.penalty = check_value("penalty", penalty, Interval(float, 0))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 0))
        self.tol = check_value("tol", tol, Interval(float, 0))

    def cost(self, size) -> Cost:
        """At most ``max_iter`` iterations of two (n, d, d) products. Memory: the
        standardized data and the (n, d) temporaries of the loss and its gradient (about
        four (n, d) arrays at once), the (d, d) moments, and the weight vectors the
        backtracking keeps (about eight of n).

        Declared: ``4 max_iter n d^2`` flops; ``4 n d + 3 d^2 + 8 n`` floats."""
        n, d = size.n_samples, size.n_features
        return Cost(flops=self.max_iter * 4.0 * n * d * d,
                    memory={"decorrelation_weights": (4 * n * d + 3 * d * d + 8 * n) * 8})

    def weights(self, X: np.ndarray) -> np.ndarray:
        """Mean-one decorrelating weights of the rows of X, (n,)."""
        Z = standardized(X)
        n = Z.shape[0]
        w = np.ones(n)
        start, _ = decorrelation_loss(Z, w)
        if start == 0:  # already uncorrelated (or one feature): nothing to do
            return w
        scale = 1.0 / start

        def loss(v):
            value, grad = decorrelation_loss(Z, v)
            spread = v - 1.0
            return (scale * value + self.penalty * spread @ spread / n,
                    scale * grad + 2.0 * self.penalty * spread / n)

        value, grad = loss(w)
        step = float(n)
        for _ in range(self.max_iter):
            while True:  # backtracking: accept a step that lowers the loss enough
                trial = project_simplex(w - step * grad, float(n))
                new_value, new_grad = loss(trial)
                if new_value <= value - 1e-4 * grad @ (w - trial) or step < 1e-12:
                    break
                step /= 2.0
            if new_value > value:  # no decrease found at the smallest step
                break
            done = value - new_value <= self.tol * abs(value)
            w, value, grad, step = trial, new_value, new_grad, 2.0 * step
            if done:
                break
        return w

    def step(self, state: State) -> State:
        p = state.problem
        return state.replace(mu=self.weights(state.X_adjusted) * (p.mu_total / p.n_samples))

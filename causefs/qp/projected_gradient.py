"""Accelerated projected gradient for simplex QPs: matrix-free, warm-started."""

from __future__ import annotations

import numpy as np

from ..core.validation import Interval, check_value
from ..numerics.simplex import project_simplex
from .base import QPBackend, QPResult, step_ceiling
from .problem import SimplexQP


#: products of the power iteration that estimates the step's Lipschitz constant
POWER_ITERATIONS = 12


def lipschitz_estimate(qp: SimplexQP, n_iter: int = POWER_ITERATIONS) -> float:
    """Power-iteration estimate of ``lambda_max(P)`` (a lower bound; backtracking fixes it):
    ``n_iter`` products from ``v_i = cos(0.7071 i) + 1`` (normalized), the last Rayleigh
    quotient ``v'Pv``; 0 (floored at 1e-300) if a product is 0."""
    v = np.cos(np.arange(qp.n) * 0.7071) + 1.0  # deterministic start with a positive mean
    v /= np.linalg.norm(v)
    estimate = 0.0
    for _ in range(n_iter):
        w = qp.matvec(v)
        norm = np.linalg.norm(w)
        if norm == 0:
            break
        estimate = float(v @ w)
        v = w / norm
    return max(estimate, 1e-300)


class ProjectedGradientBackend(QPBackend):
    """FISTA with adaptive restart and an exact simplex projection.

    Only products with ``P`` are used (one per iteration: ``P y`` follows from the
    products at the last two iterates by linearity), so the balance Hessian is never
    formed. The step is ``1/L``: ``L`` starts at the larger of 1.01 times the power
    iteration's estimate and ``1 / step_ceiling`` of the gradient at the warm start (the
    longest useful step, for an objective with little curvature), is doubled whenever
    the quadratic upper bound fails, at most 64 times in an iteration (a step still
    failing then ends the solve, not converged), and is reported as
    ``info["lipschitz"]``. Stops when the Frank-Wolfe gap, an upper bound on
    ``f(x) - f*``, falls below ``rtol`` times the objective's scale, or when the best
    objective has not improved by that much over ``stall_iter`` iterations (the gap is a
    loose certificate when tiny weights carry large multipliers).

    Parameters
    ----------
    rtol : float, default=1e-9
        Relative optimality tolerance (Frank-Wolfe gap, or improvement over a window).
    max_iter : int, default=20000
        Most products of the iterations: one each, and one more for every retry of a
        step whose quadratic bound failed.
    stall_iter : int, default=200
        Iterations without a relative improvement of ``rtol`` before stopping.
    """

    name = "projected_gradient"

    def __init__(self, rtol: float = 1e-9, max_iter: int = 20000, stall_iter: int = 200):
        self.rtol = check_value("rtol", rtol, Interval(float, 0))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.stall_iter = check_value("stall_iter", stall_iter, Interval(int, 1))

    def products(self, max_products: int | None) -> float:
        """The start's product, the power iteration's, the iterations' budget (a step
        whose quadratic bound fails spends one more of it on its retry) and the
        safeguard's two values."""
        return 1.0 + POWER_ITERATIONS + self._budget(max_products) + 1.0

    def _budget(self, max_products: int | None) -> int:
        """Products the iterations may make: ``max_iter``, or less (at least one) where
        the caller bounds them."""
        return self.max_iter if max_products is None else max(1, min(self.max_iter,
                                                                     max_products))

    def solve(self, qp: SimplexQP, x0: np.ndarray) -> QPResult:
        q, total = qp.linear, qp.total
        x = project_simplex(x0, total)
        Px = qp.matvec(x)
        f = qp.value(x, Px)
        # at least the inverse of the longest useful step: P = 0 has no curvature
        L = max(1.01 * lipschitz_estimate(qp), 1.0 / step_ceiling(Px + q, total))
        y, Py, t = x, Px, 1.0
        gap = np.inf
        converged = False
        n_iter = 0
        best, best_at = f, 0
        budget = self._budget(qp.max_products)
        spent = 0  # the iterations' products, the retries of failed steps included
        while spent < budget:
            n_iter += 1
            gy = Py + q
            fy = float(0.5 * (y @ Py) + q @ y)
            accepted = False
            for _ in range(64):  # doublings of L; past them rounding dominates
                if spent >= budget:
                    break
                x_new = project_simplex(y - gy / L, total)
                Px_new = qp.matvec(x_new)
                spent += 1
                f_new = float(0.5 * (x_new @ Px_new) + q @ x_new)
                d = x_new - y
                bound = fy + gy @ d + 0.5 * L * (d @ d)
                # f is a sum of terms that cancel: allow their rounding error
                rounding = 1e-12 * (np.abs(x_new) @ np.abs(Px_new) + np.abs(q) @ np.abs(x_new)
                                    + np.abs(y) @ np.abs(Py) + np.abs(q) @ np.abs(y))
                if f_new <= bound + rounding:
                    accepted = True
                    break
                L *= 2.0
            if not accepted:  # the budget or the bound ran out: x stays the last iterate
                break
            gradient = Px_new + q
            gap = qp.frank_wolfe_gap(x_new, gradient)
            scale = abs(0.5 * (x_new @ Px_new)) + abs(q @ x_new) + 1e-300
            # restart the momentum when it points uphill (O'Donoghue and Candes 2015)
            if (y - x_new) @ (x_new - x) > 0 or f_new > f:
                t = 1.0
            t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
            momentum = (t - 1.0) / t_next
            y = x_new + momentum * (x_new - x)
            Py = Px_new + momentum * (Px_new - Px)
            x, Px, f, t = x_new, Px_new, f_new, t_next
            if gap <= self.rtol * scale:
                converged = True
                break
            if f_new < best - self.rtol * scale:
                best, best_at = f_new, n_iter
            elif n_iter - best_at >= self.stall_iter:
                converged = True  # stagnated: no progress at the tolerance for a window
                break
        return self.safeguard(qp, x, x0, n_iter, converged, gap=gap, lipschitz=L)

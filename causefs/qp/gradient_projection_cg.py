"""Gradient projection with conjugate gradients on the active face (GPCG), matrix-free."""

from __future__ import annotations

import numpy as np

from ..simplex import project_simplex
from .base import QPBackend, QPResult
from .problem import SimplexQP


class GradientProjectionCGBackend(QPBackend):
    """Moré-Toraldo GPCG adapted to the simplex, using only products with ``P``.

    Alternates (a) projected-gradient steps with a Barzilai-Borwein step and a
    sufficient-decrease search along the projection arc, until the set of zero weights
    settles, and (b) Jacobi-preconditioned conjugate gradients on
    the current face ``{x_i > 0}`` with the sum constraint kept by projection (Gould,
    Hribar and Nocedal 2001), followed by a projected search along the CG step, which
    zeroes many weights at once (a projected Newton step, Bertsekas 1982). CG resolves the few large
    eigenvalues that the balance term adds to the Hessian in a few products each, where
    first-order methods need many. Every step lowers the objective. Stops when the
    Frank-Wolfe gap (an upper bound on ``f - f*``, loose when tiny weights carry large
    multipliers) or the decrease over a whole outer iteration falls below ``rtol``
    times the objective's scale.

    Parameters
    ----------
    rtol : float
        Relative optimality tolerance (Frank-Wolfe gap, or decrease per outer iteration).
    max_iter : int
        Most products with ``P`` (the cost unit of the matrix-free solve).
    projection_steps : int
        Most projected-gradient steps per phase.
    cg_rtol : float
        A CG phase stops when the preconditioned residual norm falls below ``cg_rtol``
        times its initial value.
    """

    name = "gradient_projection_cg"

    def __init__(self, rtol: float = 1e-9, max_iter: int = 5000, projection_steps: int = 5,
                 cg_rtol: float = 1e-3):
        self.rtol = rtol
        self.max_iter = max_iter
        self.projection_steps = projection_steps
        self.cg_rtol = cg_rtol

    def solve(self, qp: SimplexQP, x0: np.ndarray) -> QPResult:
        q, total = qp.linear, qp.total
        budget = self.max_iter if qp.max_products is None else min(self.max_iter,
                                                                    qp.max_products)
        x = project_simplex(x0, total)
        diagonal = qp.diagonal()
        inverse_diagonal = 1.0 / np.maximum(diagonal, 1e-300)
        products = 0
        step = 1.0 / max(diagonal.max(), 1e-300)
        converged = False
        gap = np.inf

        def product(v):
            nonlocal products
            products += 1
            return qp.matvec(v)

        previous_f = np.inf
        while products < budget:
            Px = product(x)  # refresh: the updates below accumulate rounding
            g = Px + q
            f = 0.5 * (x @ Px) + q @ x
            scale = abs(0.5 * (x @ Px)) + abs(q @ x) + 1e-300
            gap = qp.frank_wolfe_gap(x, g)
            # a certificate (gap >= f - f*), or an outer iteration, whose CG phase
            # minimizes over the face and whose projections move weights on and off
            # it, that no longer lowers f: a KKT point to the tolerance
            if gap <= self.rtol * scale or previous_f - f <= self.rtol * scale:
                converged = True
                break
            previous_f = f
            # (a) projected-gradient steps: search along the projection arc
            # x(t) = proj(x - t g), which reaches the boundary and so finds the zeros
            zeros = x == 0
            for _ in range(self.projection_steps):
                t, accepted = step, False
                for _ in range(30):
                    d = project_simplex(x - t * g, total) - x
                    Pd = product(d)
                    curvature, slope = d @ Pd, g @ d
                    if slope >= 0:
                        break  # x is stationary for the projected gradient
                    if slope + 0.5 * curvature <= 1e-4 * slope:
                        accepted = True  # sufficient decrease at x(t)
                        break
                    # the quadratic's minimizer along d is short of x(t): shrink t
                    t *= max(0.1, -slope / curvature)
                if not accepted:
                    break
                x = np.maximum(x + d, 0.0)
                g = g + Pd
                if curvature > 0:  # Barzilai-Borwein step for the next search
                    step = (d @ d) / curvature
                new_zeros = x == 0
                settled = np.array_equal(new_zeros, zeros)
                zeros = new_zeros
                if settled or products >= budget:
                    break
            # (b) preconditioned CG on the face {x > 0} (the sum kept by projection),
            # ignoring the bounds, then a projected search along the CG step: the
            # projection zeroes many weights at once where the face's minimizer leaves
            # the simplex (a projected Newton step, Bertsekas 1982)
            free = x > 0
            if free.sum() < 2:
                continue
            weights = np.where(free, inverse_diagonal, 0.0)

            def precondition(r):
                z = weights * r
                return z - (z.sum() / weights.sum()) * weights

            r = -g
            z = precondition(r)
            rz = first = r @ z
            p = z
            direction = np.zeros_like(x)
            P_direction = np.zeros_like(x)
            # in exact arithmetic CG ends within the face's dimension, |free| - 1
            for _ in range(int(free.sum()) - 1):
                if rz <= (self.cg_rtol**2) * first or products >= budget:
                    break
                Pp = product(p)
                curvature = p @ Pp
                if curvature <= 0:
                    break
                alpha = rz / curvature
                direction += alpha * p
                P_direction += alpha * Pp
                r = r - alpha * Pp
                z = precondition(r)
                rz, previous = r @ z, rz
                p = z + (rz / previous) * p
            if not direction.any():
                continue
            # rounding leaves the step slightly off the sum constraint: project it back
            # (its known product then no longer applies unless the change is negligible)
            drift = direction.sum()
            exact = abs(drift) <= 1e-12 * np.abs(direction).sum()
            direction -= (drift / weights.sum()) * weights
            t = 1.0
            for _ in range(20):
                if products >= budget:
                    break
                if t == 1.0 and exact and np.all(x + direction >= 0):
                    d, Pd = direction, P_direction  # inside the simplex: no product needed
                else:
                    d = project_simplex(x + t * direction, total) - x
                    Pd = product(d)
                slope, curvature = g @ d, d @ Pd
                if slope < 0 and slope + 0.5 * curvature <= 1e-4 * slope:
                    x = np.maximum(x + d, 0.0)
                    g = g + Pd
                    break
                t *= 0.25
        return self.safeguard(qp, x, x0, products, converged, gap=gap)

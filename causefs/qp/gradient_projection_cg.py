"""Gradient projection with conjugate gradients on the active face (GPCG), matrix-free."""

from __future__ import annotations

import numpy as np

from ..core.validation import Interval, check_value
from ..numerics.simplex import project_simplex
from .base import QPBackend, QPResult, step_ceiling
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
    rtol : float, default=1e-9
        Relative optimality tolerance (Frank-Wolfe gap, or decrease per outer iteration).
    max_iter : int, default=5000
        Most products with ``P`` (the cost unit of the matrix-free solve).
    projection_steps : int, default=5
        Most projected-gradient steps per phase.
    cg_rtol : float, default=1e-3
        A CG phase stops when the preconditioned residual norm falls below ``cg_rtol``
        times its initial value.
    """

    name = "gradient_projection_cg"

    def __init__(self, rtol: float = 1e-9, max_iter: int = 5000, projection_steps: int = 5,
                 cg_rtol: float = 1e-3):
        self.rtol = check_value("rtol", rtol, Interval(float, 0))
        self.max_iter = check_value("max_iter", max_iter, Interval(int, 1))
        self.projection_steps = check_value("projection_steps", projection_steps,
                                            Interval(int, 1))
        self.cg_rtol = check_value("cg_rtol", cg_rtol, Interval(float, 0, 1, closed="left"))

    def products(self, max_products: int | None) -> float:
        """Its budget (every product, the arc search's retries included, is checked
        against it before it is made) and the safeguard's two values."""
        return self._budget(max_products) + 1.0

    def _budget(self, max_products: int | None) -> int:
        """Products a solve may make: ``max_iter``, or less where the caller bounds it."""
        return self.max_iter if max_products is None else min(self.max_iter, max_products)

    def solve(self, qp: SimplexQP, x0: np.ndarray) -> QPResult:
        run = _Solve(self, qp, x0, self._budget(qp.max_products))
        converged, gap, previous_f = False, np.inf, np.inf
        while not run.spent():
            g, f, scale = run.refresh()
            gap = qp.frank_wolfe_gap(run.x, g)
            # a certificate (gap >= f - f*), or an outer iteration, whose CG phase
            # minimizes over the face and whose projections move weights on and off
            # it, that no longer lowers f: a KKT point to the tolerance
            if gap <= self.rtol * scale or previous_f - f <= self.rtol * scale:
                converged = True
                break
            previous_f = f
            g = run.projection_phase(g)
            step = run.face_phase(g)
            if step is not None:
                run.projected_search(g, *step)
        return self.safeguard(qp, run.x, x0, run.products, converged, gap=gap)


class _Solve:
    """One GPCG solve: the iterate, the Barzilai-Borwein step, the products spent."""

    def __init__(self, backend: GradientProjectionCGBackend, qp: SimplexQP, x0, budget):
        self.backend, self.qp, self.budget = backend, qp, budget
        self.x = project_simplex(x0, qp.total)
        diagonal = qp.diagonal()
        # Jacobi's weights; a weight without curvature (a zero diagonal entry, P being
        # PSD) gets the largest entry's, 1 if none has any: 1 / 0 would blow CG's
        # directions up to inf
        self.inverse_diagonal = 1.0 / np.where(diagonal > 0, diagonal, diagonal.max() or 1.0)
        self.step = 1.0 / max(diagonal.max(), 1e-300)
        self.products = 0

    def product(self, v: np.ndarray) -> np.ndarray:
        self.products += 1
        return self.qp.matvec(v)

    def spent(self) -> bool:
        return self.products >= self.budget

    def refresh(self):
        """Gradient, value and scale at x, from a fresh product (the updates of the
        phases accumulate rounding)."""
        x, q = self.x, self.qp.linear
        Px = self.product(x)
        return (Px + q, 0.5 * (x @ Px) + q @ x,
                abs(0.5 * (x @ Px)) + abs(q @ x) + 1e-300)

    def projection_phase(self, g: np.ndarray) -> np.ndarray:
        """(a) Projected-gradient steps along the projection arc ``x(t) = proj(x - t g)``,
        which reaches the boundary and so finds the zeros, until they settle; returns
        the gradient at the new x."""
        zeros = self.x == 0
        for _ in range(self.backend.projection_steps):
            found = self._arc_search(g)
            if found is None:
                break
            d, Pd, curvature = found
            self.x = np.maximum(self.x + d, 0.0)
            g = g + Pd
            # Barzilai-Borwein step for the next search; along a step without curvature
            # (f linear there) as long as the arc allows: the step's own length would
            # crawl towards a vertex the linear term pulls to
            self.step = (d @ d) / curvature if curvature > 0 else np.inf
            new_zeros = self.x == 0
            settled = np.array_equal(new_zeros, zeros)
            zeros = new_zeros
            if settled or self.spent():
                break
        return g

    def _arc_search(self, g: np.ndarray):
        """A point of sufficient decrease on the projection arc: ``(d, P d, d'P d)``, or
        None when x is stationary for the projected gradient, none was found, or the
        budget ran out (a retry past it would overrun the declared products).

        The first trial step is the Barzilai-Borwein step, at most the step ceiling; a
        trial that fails the sufficient decrease ``slope + curvature / 2 <= 1e-4 slope``
        (equality passes) is followed by one shortened to the quadratic's minimizer
        along it, at least 10 times shorter; at most 30 trials, one product each."""
        t = min(self.step, step_ceiling(g, self.qp.total))  # P = 0: no curvature bounds it
        for _ in range(30):
            if self.spent():
                return None
            d = project_simplex(self.x - t * g, self.qp.total) - self.x
            Pd = self.product(d)
            curvature, slope = d @ Pd, g @ d
            if slope >= 0:
                return None
            if slope + 0.5 * curvature <= 1e-4 * slope:
                return d, Pd, curvature
            # the quadratic's minimizer along d is short of x(t): shrink t
            t *= max(0.1, -slope / curvature)
        return None

    def face_phase(self, g: np.ndarray):
        """(b) Jacobi-preconditioned CG on the face ``{x > 0}``, the sum kept by
        projecting the preconditioned residual, the bounds ignored. Returns the step,
        its product (accumulated from the directions' products) and the
        preconditioner's weights, or None (no face, no step). A direction without
        curvature (P singular on the face) ends CG with the step made so far."""
        free = self.x > 0
        if free.sum() < 2:
            return None
        weights = np.where(free, self.inverse_diagonal, 0.0)

        def remove_multiplier(r):
            # the residual less its multiplier's share (Gould, Hribar and Nocedal's
            # residual update): the sum constraint's multiplier is of the gradient's
            # size, and left in r it swamps r'z with rounding once the face's residual
            # is small, so CG then iterates on noise
            return r - ((weights @ r) / weights.sum())

        r = remove_multiplier(-g)
        z = weights * r
        rz = first = r @ z
        p = z
        direction, P_direction = np.zeros_like(self.x), np.zeros_like(self.x)
        # in exact arithmetic CG ends within the face's dimension, |free| - 1
        for _ in range(int(free.sum()) - 1):
            if rz <= (self.backend.cg_rtol**2) * first or self.spent():
                break
            Pp = self.product(p)
            curvature = p @ Pp
            if curvature <= 0:
                break
            alpha = rz / curvature
            direction += alpha * p
            P_direction += alpha * Pp
            r = remove_multiplier(r - alpha * Pp)
            z = weights * r
            rz, previous = r @ z, rz
            p = z + (rz / previous) * p
        if not direction.any():
            return None
        return direction, P_direction, weights

    def projected_search(self, g, direction, P_direction, weights) -> None:
        """A projected search along the CG step: the projection zeroes many weights at
        once where the face's minimizer leaves the simplex (a projected Newton step,
        Bertsekas 1982).

        The step's sum, 0 in exact arithmetic, is first moved back to 0 along the
        preconditioner's weights; its known product still serves while that drift is
        at most ``1e-12`` of ``|d|_1``. Trials at ``t = 1, 1/4, 1/16, ...`` (at most 20,
        one product each but the first when the step stays inside the simplex); the
        first with ``slope < 0`` and ``slope + curvature / 2 <= 1e-4 slope`` is taken,
        so x moves only where f falls."""
        # rounding leaves the step slightly off the sum constraint: project it back
        # (its known product then no longer applies unless the change is negligible)
        drift = direction.sum()
        exact = abs(drift) <= 1e-12 * np.abs(direction).sum()
        direction = direction - (drift / weights.sum()) * weights
        t = 1.0
        for _ in range(20):
            if self.spent():
                break
            if t == 1.0 and exact and np.all(self.x + direction >= 0):
                d, Pd = direction, P_direction  # inside the simplex: no product needed
            else:
                d = project_simplex(self.x + t * direction, self.qp.total) - self.x
                Pd = self.product(d)
            slope, curvature = g @ d, d @ Pd
            if slope < 0 and slope + 0.5 * curvature <= 1e-4 * slope:
                self.x = np.maximum(self.x + d, 0.0)
                break
            t *= 0.25

"""Reference backend: the QP handed to cvxpy with the explicit (dense) Hessian."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..core.extras import require
from ..core.parts import Cost
from ..core.validation import NONE, InstanceOf, check_choice, check_value
from .base import QPBackend, QPResult
from .problem import SimplexQP


def qp_solvers() -> list[str]:
    """The installed cvxpy solvers that take the mu QP: QP solvers and conic solvers
    with second-order cones (an LP solver such as SCIPY would fail at every solve)."""
    require("cvxpy", "cvxpy", "qp='cvxpy'")  # one line naming the extra, not a traceback
    from cvxpy.constraints import SOC
    from cvxpy.reductions.solvers import defines

    conic = [name for name in defines.INSTALLED_CONIC_SOLVERS
             if SOC in defines.SOLVER_MAP_CONIC[name].SUPPORTED_CONSTRAINTS]
    return sorted(set(conic) | (set(defines.QP_SOLVERS) & set(defines.INSTALLED_SOLVERS)))


class CvxpyBackend(QPBackend):
    """Solve the mu QP with cvxpy (Clarabel's interior point method by default).

    This is the paper-literal path: it forms ``P`` (n x n, dense) and costs O(n^2)
    memory and O(n^3) time per solve. The variable is rescaled to mean one and the
    objective divided by its size at the uniform point, ``|1/2 1'P1| + |q'1|`` in that
    variable (by 1 where the size is 0), so that the solver's tolerances mean the same
    at every n and scale.

    Parameters
    ----------
    solver : str
        cvxpy solver name, one of the installed solvers that take this QP
        (:func:`qp_solvers`). Clarabel by default: cvxpy would otherwise pick OSQP for a
        QP, whose default tolerance (1e-3) is far from an exact solve.
    solver_options : dict or None
        Keyword arguments for ``Problem.solve``; by default Clarabel's gap tolerances
        are tightened (absolute 1e-12, relative 1e-10, on the normalized objective).
    """

    name = "cvxpy"

    def __init__(self, solver: str = "CLARABEL", solver_options: dict | None = None):
        self.solver = check_choice("solver", solver, qp_solvers())
        self.solver_options = check_value("solver_options", solver_options, NONE,
                                          InstanceOf(Mapping, "a mapping of solver options"))

    def cost(self, size) -> Cost:
        """Memory of a solve: the dense P and its scaled copy, cvxpy's sparse canonical
        copy (values and indices), Clarabel's KKT matrix and factor; about 16 n^2
        doubles were measured (docs/PERFORMANCE.md), 20 n^2 bound them."""
        n = size.n_samples
        return Cost(memory={"dense_qp": 20 * n * n * 8},
                    advice={"dense_qp": "use a matrix-free QP backend: "
                                        "qp='gradient_projection_cg'"})

    def solve(self, qp: SimplexQP, x0: np.ndarray) -> QPResult:
        cp = require("cvxpy", "cvxpy", "qp='cvxpy'")

        n = qp.n
        unit = qp.total / n  # x = unit * y with mean(y) = 1
        P = qp.dense() * unit**2
        q = qp.linear * unit
        # normalize f by its size at the uniform point, so that the solver's absolute
        # tolerances are relative ones (mu-problem values range over many decades)
        ones = np.ones(n)
        scale = abs(0.5 * ones @ P @ ones) + abs(q @ ones)
        scale = scale if scale > 0 else 1.0
        y = cp.Variable(n)
        objective = cp.Minimize((0.5 * cp.quad_form(y, cp.psd_wrap(P / scale)) + (q / scale) @ y))
        problem = cp.Problem(objective, [y >= 0, cp.sum(y) == n])
        options = self.solver_options
        if options is None and self.solver == "CLARABEL":
            options = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-10}
        try:
            problem.solve(solver=self.solver, **(options or {}))
        except cp.error.SolverError as exc:
            return self.safeguard(qp, x0, x0, 0, False, status=f"solver error: {exc}")
        status = problem.status
        if y.value is None:
            return self.safeguard(qp, x0, x0, 0, False, status=status)
        stats = problem.solver_stats
        return self.safeguard(
            qp, unit * np.asarray(y.value).ravel(), x0,
            int(stats.num_iters or 0), status == cp.OPTIMAL, status=status,
            solver=stats.solver_name,
        )

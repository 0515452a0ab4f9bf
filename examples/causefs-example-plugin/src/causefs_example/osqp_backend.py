"""A QP backend on OSQP (operator splitting), called directly."""

import numpy as np
import osqp
import scipy.sparse as sp

from causefs.qp import QPBackend


class OSQPBackend(QPBackend):
    """Solve the mu QP with OSQP on the dense Hessian, polished to high accuracy.

    Parameters
    ----------
    eps : float
        OSQP's absolute and relative tolerances (on the problem scaled to mean-one x).
    max_iter : int
        ADMM iterations.
    """

    name = "osqp"

    def __init__(self, eps: float = 1e-10, max_iter: int = 50_000):
        self.eps = eps
        self.max_iter = max_iter

    def solve(self, qp, x0):
        n = qp.n
        unit = qp.total / n  # x = unit * y, sum(y) = n: tolerances mean the same at every n
        P = qp.dense() * unit**2
        q = qp.linear * unit
        scale = abs(0.5 * P.sum()) + abs(q.sum()) or 1.0
        # OSQP takes scipy's csc_matrix (it would convert anything else)
        constraints = sp.csc_matrix(sp.vstack([np.ones((1, n)), sp.eye(n)]))
        lower = np.concatenate([[n], np.zeros(n)])
        upper = np.concatenate([[n], np.full(n, np.inf)])
        solver = osqp.OSQP()
        solver.setup(P=sp.csc_matrix(np.triu(P / scale)), q=q / scale,
                     A=constraints, l=lower, u=upper, eps_abs=self.eps, eps_rel=self.eps,
                     max_iter=self.max_iter, polishing=True, verbose=False)
        result = solver.solve(raise_error=False)  # a failed solve falls back to x0
        converged = result.info.status_val == osqp.SolverStatus.OSQP_SOLVED
        if result.x is None or not np.all(np.isfinite(result.x)):
            return self.safeguard(qp, x0, x0, int(result.info.iter), False,
                                  status=result.info.status)
        return self.safeguard(qp, unit * result.x, x0, int(result.info.iter), converged,
                              status=result.info.status)

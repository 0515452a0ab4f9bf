"""Test helpers for causefs and its plugins (needs the ``test`` extra: hypothesis).

A plugin author tests a new block the way the built-ins are tested::

    from causefs.testing import check_block
    check_block(MyBlock())            # descent, purity, validity, determinism

``check_term`` for an objective term (its value against an independent computation, the
parts it adds to the subproblems against differences of its value), ``check_kernel`` /
``check_qp_backend`` for kernels and QP backends (``CountedBalance`` counts the
products a solve asks of the balance operator). The hypothesis
strategies behind them are in :mod:`causefs.testing.strategies`; the hypothesis profiles
they run under (``causefs-ci``, ``causefs-dev``) in :mod:`causefs.testing.profiles`.
"""

from .checks import (CountedBalance, check_block, check_kernel, check_qp_backend,
                     check_state, check_step)
from .profiles import load_profile
from .strategies import cause_fs_objective, problems, random_graph, simplex_qps, states
from .term_checks import check_term

__all__ = [
    "CountedBalance",
    "check_block",
    "check_kernel",
    "check_qp_backend",
    "check_state",
    "check_step",
    "check_term",
    "cause_fs_objective",
    "load_profile",
    "problems",
    "random_graph",
    "simplex_qps",
    "states",
]

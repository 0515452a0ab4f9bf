"""Blocks that lower the objective: each solves the subproblem its variables have in the
schedule's objective (:mod:`causefs.model.subproblems`)."""

"""The granular graphs S[m] and the granularity update (Delta, nu), against computations
written here from the paper (Algorithm 1, lines 9-10; eq. S.5) and SPEC."""

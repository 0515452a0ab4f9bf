"""The fields of a CAUSE-FS state, each declared once (docs/MODEL.md, "Variables").

The blocks and terms that read or write these name them; a plugin part that needs a
variable of its own declares it in its ``fields`` (:class:`~causefs.core.state.Field`).
Each declaration carries the constraint a valid value meets (``check``), which the
property tests assert (:func:`causefs.testing.check_state`).
"""

from __future__ import annotations

import functools

import numpy as np
import scipy.sparse as sp

from ..core.state import Field


# the checks of fields that differ only by name are module functions bound to the name
# where the field is declared (functools.partial), not closures made by a factory at
# import: a mutation run (docs/MUTATION.md) reaches only what runs when a test calls it

def _check_graphs(name: str, value, state):
    """Sparse (n, n), non-negative, columns summing to 1 within 1e-9 (round-off), at most
    k non-zeros a column and no self loop."""
    n, k = state.problem.n_samples, state.problem.n_neighbors
    graphs = value if isinstance(value, tuple) else (value,)
    for m, A in enumerate(graphs):
        label = f"{name}[{m}]" if isinstance(value, tuple) else name
        assert sp.issparse(A), f"{label} must be a scipy.sparse matrix, got {type(A).__name__}"
        assert A.shape == (n, n), f"{label} has shape {A.shape}, expected {(n, n)}"
        A = sp.csc_array(A)
        assert np.all(np.isfinite(A.data)) and np.all(A.data >= 0), \
            f"{label} has negative or non-finite entries"
        sums = np.asarray(A.sum(axis=0)).ravel()
        assert np.allclose(sums, 1.0, rtol=0.0, atol=1e-9), \
            f"{label} columns must sum to 1 (got {sums.min()}..{sums.max()})"
        assert np.all(np.diff(A.indptr) <= k), \
            f"{label} has a column with more than k={k} non-zeros"
        assert not np.any(A.diagonal()), f"{label} has a self loop"


def _check_finite(name: str, value, state):
    assert np.all(np.isfinite(value)), f"{name} has non-finite entries"


def _check_non_negative(name: str, value, state):
    for v in (value if isinstance(value, tuple) else (value,)):
        assert np.all(v >= 0) and np.all(np.isfinite(v)), f"{name} must be finite, >= 0"


def _effect(value, state):
    assert state.problem.Z is not None, \
        "Theta is set but the problem has no nuisance variables Z"
    _check_finite("Theta", value, state)


def _orthonormal(value, state):
    h = value.shape[1]
    error = np.abs(value.T @ value - np.eye(h)).max()
    assert error <= 1e-8, f"F is not orthonormal: max |F'F - I| = {error:.3g}"


def _weights(value, state):
    """Non-negative, summing to ``mu_total`` within ``1e-9 mu_total`` (round-off; a
    difference of exactly that bound passes)."""
    assert np.all(value >= 0), f"mu has negative entries (min {value.min():.3g})"
    total = state.problem.mu_total
    assert abs(value.sum() - total) <= 1e-9 * total, f"sum(mu) = {value.sum()!r}, expected {total}"


def _groups(value, state):
    M = int(value.max()) + 1
    assert set(np.unique(value)) == set(range(M)), \
        f"groups must use every label 0..{M - 1} (got {np.unique(value)})"
    if state.S is not None:
        assert len(state.S) == M, f"{len(state.S)} granular graphs for {M} groups"


def _simplex(value, state):
    assert np.all(value >= 0) and abs(value.sum() - 1) <= 1e-9, "nu must lie on the simplex"
    if state.groups is not None:
        M = int(state.groups.max()) + 1
        assert value.shape == (M,), f"nu has {value.size} weights for {M} groups"


def _adaptive_parameters(value, state):
    _check_non_negative("gamma", value, state)
    assert state.S is not None and len(state.S) == len(value), \
        "S and gamma must have one entry per group"


def _confounder_sets(value, state):
    assert value.dtype == bool, "K must be bool (d, d)"
    assert not np.any(np.diag(value)), "a feature cannot confound itself (K diagonal)"


def adjusted_data(state):
    """``X - Z Theta``: the data with the estimated effect of the nuisance variables
    removed; X itself before a block has estimated one (or without Z)."""
    if state.Theta is None:
        return state.X
    return state.problem.X - state.problem.Z @ state.Theta


#: the data of the fit (held by the problem)
X = Field("X", ("n_samples", "n_features"), "the data as given (preprocessed, constant "
          "features dropped)", role="given")
Z = Field("Z", ("n_samples", "n_nuisance"), "the coded known nuisance variables "
          "(fit(X, nuisance=Z)); None without them", role="given")
X_ADJUSTED = Field("X_adjusted", ("n_samples", "n_features"), "the data the model fits: X "
                   "less the estimated nuisance effect Z Theta (X itself without one)",
                   role="derived", derive=adjusted_data, inputs=("Theta",), needs=("X",))

#: the variables of CAUSE-FS (paper section 3) and of the nuisance adjustment
W = Field("W", ("n_features", "n_clusters"), "feature selection matrix; feature f "
          "scores ||W_f||", check=functools.partial(_check_finite, "W"))
F = Field("F", ("n_samples", "n_clusters"), "spectral embedding with orthonormal columns",
          check=_orthonormal)
MU = Field("mu", ("n_samples",), "sample weights on the (scaled) simplex", check=_weights)
S = Field("S", ("n_samples", "n_samples"), "granular similarity graphs S[m], sparse, k "
          "non-zeros a column, columns summing to 1", sequence=True,
          check=functools.partial(_check_graphs, "S"))
GAMMA = Field("gamma", ("n_samples",), "adaptive-neighbour parameters of the S[m]",
              sequence=True, check=_adaptive_parameters)
G = Field("G", ("n_samples", "n_samples"), "fused similarity graph, sparse, k non-zeros a "
          "column, columns summing to 1", check=functools.partial(_check_graphs, "G"))
XI = Field("xi", ("n_samples",), "adaptive-neighbour parameters of G",
           check=functools.partial(_check_non_negative, "xi"))
GROUPS = Field("groups", ("n_features",), "feature granularity of every feature, ints in "
               "0..M-1", check=_groups)
NU = Field("nu", ("n_groups",), "granularity weights nu_m, one per group", check=_simplex)
K = Field("K", ("n_features", "n_features"), "confounder sets: K[f, r] = feature f "
          "confounds treatment r", check=_confounder_sets)
THETA = Field("Theta", ("n_nuisance", "n_features"), "effect of the coded nuisance "
              "variables Z on every feature; the model then fits X - Z Theta",
              check=_effect)

#: every field of a CAUSE-FS state, in the order of docs/MODEL.md's table
FIELDS = (X, Z, X_ADJUSTED, W, F, MU, S, GAMMA, G, XI, GROUPS, NU, K, THETA)

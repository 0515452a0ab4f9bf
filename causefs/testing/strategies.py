"""Hypothesis strategies for random valid CAUSE-FS problems, states and QPs.

Every strategy draws a seed and a few sizes (which hypothesis shrinks) and builds the
arrays with NumPy from that seed, so examples are fast to build and reproducible.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import strategies as st

from ..core.state import State
from ..engine import DEFAULT_TERMS, balance_of
from ..kernels import GramBalance, LinearKernel
from ..model.nuisance_coding import code_nuisance
from ..model.objective import Objective
from ..model.problem import Problem
from ..model.treatments import treatment_coding
from ..plugins.registry import parts as registered_parts
from ..qp import SimplexQP


def random_graph(rng: np.random.Generator, n: int, k: int,
                 anchors: np.ndarray | None = None) -> sp.csc_array:
    """A column-stochastic (n, n) graph with k non-zeros a column and no self loops, its
    rows among ``anchors`` if given (:mod:`causefs.numerics.anchors`)."""
    rows = np.empty((n, k), dtype=np.int64)
    pool = np.arange(n) if anchors is None else np.asarray(anchors)
    for j in range(n):
        others = pool[pool != j]
        rows[j] = rng.choice(others, size=k, replace=False)
    weights = rng.dirichlet(np.ones(k), size=n)
    graph = sp.csc_array((weights.ravel(), rows.ravel(), np.arange(0, n * k + 1, k)),
                         shape=(n, n))
    graph.sort_indices()
    return graph


def random_data(rng: np.random.Generator, n: int, d: int, duplicates: bool) -> np.ndarray:
    """Data in [0, 1] with no constant column; optionally with duplicate rows (ties)."""
    X = rng.random((n, d))
    if rng.random() < 0.5:  # clustered data, closer to real use than uniform noise
        centers = rng.random((3, d))
        X = np.clip(centers[rng.integers(0, 3, n)] + 0.1 * rng.standard_normal((n, d)), 0, 1)
    X[0, :], X[2, :] = 0.0, 1.0  # every column non-constant
    if duplicates:
        X[1] = X[0]
        X[n - 1] = X[n - 2]
    return X


def random_nuisance(rng: np.random.Generator, n: int, X: np.ndarray) -> np.ndarray:
    """Coded nuisance variables: labels (2 or 3 levels of at least two samples each; only
    with ``n >= 4``) or one or two covariates, some tied to a column of X (a nuisance that
    shifts features), some independent of it."""
    if rng.random() < 0.5 and n >= 4:
        levels = int(min(rng.integers(2, 4), max(2, n - 2)))
        labels = rng.integers(0, levels, n)
        if rng.random() < 0.5:
            labels = np.where(rng.random(n) < 0.7, (X[:, 0] > 0.5).astype(int), labels)
        labels[:4] = [0, 0, 1, 1]  # at least two levels of two samples
        # a level of one sample is merged into level 0, as the coding's warning advises
        # (its effect would be that sample's own values)
        labels[np.bincount(labels)[labels] == 1] = 0
        return code_nuisance(labels, n)
    width = 1 if n < 6 else int(rng.integers(1, 3))
    covariates = rng.standard_normal((n, width))
    covariates[:, 0] += 3.0 * X[:, 0] * (rng.random() < 0.5)
    return code_nuisance(covariates, n)


def cause_fs_objective(alpha: float = 1.0, beta: float = 1e-4, lam: float = 1.0,
                       eps: float = 1e-8, terms=DEFAULT_TERMS, extra=()) -> Objective:
    """CAUSE-FS's objective (the registered terms ``terms``) with these weights, and the
    term instances ``extra`` after them."""
    registry = registered_parts()
    weights = {"alpha": alpha, "beta": beta, "lam": lam, "eps": eps}
    built = []
    for name in terms:
        cls = registry.get("term", name)
        built.append(cls(**{key: weights[key] for key in cls.requires if key in weights}))
    return Objective([*built, *extra])


@st.composite
def problems(draw, min_samples=12, max_samples=30, min_features=3, max_features=10,
             kernel=None, beta=None, sample_weights=None, extra_terms=(), anchored=None):
    """A random :class:`~causefs.model.problem.Problem` (small sizes; the balance operator
    is the linear kernel's unless ``kernel`` is given, in the ``auto`` balance form),
    with coded nuisance variables Z (:func:`random_nuisance`) and CAUSE-FS's objective
    with random weights (:func:`cause_fs_objective`), plus the term instances
    ``extra_terms``.

    Some problems are as small as the closed forms allow (``n = k + 2``) and some have
    binary or mostly tied columns, whose median split leaves a group empty. Some have
    anchors (:attr:`~causefs.model.problem.Problem.anchors`, from ``k + 2`` to all n
    samples) unless ``anchored`` says whether they have.
    """
    seed = draw(st.integers(0, 2**32 - 1))
    k = draw(st.integers(1, 4))
    h = draw(st.integers(2, 4))
    if draw(st.booleans()) and min_samples <= max(k + 2, h + 1):
        n = max(k + 2, h + 1)  # the smallest n: the (k+1)-th neighbour is the last one
    else:
        n = draw(st.integers(min_samples, max_samples))
    d = draw(st.integers(min_features, max_features))
    duplicates = draw(st.booleans())
    rng = np.random.default_rng(seed)
    X = random_data(rng, n, d, duplicates)
    if draw(st.booleans()):
        tied = rng.choice(d, size=max(1, d // 3), replace=False)
        X[:, tied] = np.where(rng.random((n, tied.size)) < 0.8, 0.0, 1.0)
        X[0, tied], X[2, tied] = 0.0, 1.0
    anchors = None
    if anchored if anchored is not None else draw(st.booleans()):
        anchors = np.sort(rng.choice(n, size=int(rng.integers(k + 2, n + 1)), replace=False))
    log_uniform = lambda low, high: float(10 ** rng.uniform(low, high))  # noqa: E731
    objective = cause_fs_objective(
        alpha=log_uniform(-2, 2),
        beta=beta if beta is not None else draw(st.sampled_from([0.0, log_uniform(-3, 1)])),
        lam=log_uniform(-3, 1), eps=log_uniform(-10, -4), extra=extra_terms)
    return Problem(
        X=X,
        coding=treatment_coding(X, "median", draw(st.sampled_from(["group", "paper"]))),
        n_clusters=h,
        objective=objective,
        fields=registered_parts().fields,
        n_neighbors=k,
        sample_weights=sample_weights if sample_weights is not None
        else draw(st.sampled_from(["simplex", "mean_one"])),
        balance=balance_of(kernel if kernel is not None else LinearKernel(), "auto",
                           seed % (2**31)),
        Z=random_nuisance(rng, n, X),
        anchors=anchors,
    )


@st.composite
def states(draw, problem=None, granular=True, extra=None, **problem_options):
    """A random valid :class:`~causefs.core.state.State` with every variable of
    CAUSE-FS set (:mod:`causefs.model.variables`; a plugin's own variables: ``extra``).

    ``granular=False`` gives a state without granular graphs (ablation II), ``None``
    draws either. Adaptive parameters gamma and xi are random non-negative numbers (the
    descent properties must hold for any value). Degenerate states are drawn too: rows
    of W and entries of mu that are exactly zero, empty and full confounder sets, and
    zero gamma and xi.
    """
    p = problem if problem is not None else draw(problems(**problem_options))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n, d, h, k = p.n_samples, p.n_features, p.n_clusters, p.n_neighbors
    W = rng.standard_normal((d, h)) * 10 ** rng.uniform(-3, 1)
    W[rng.random(d) < 0.3] *= 1e-4  # rows near the eps floor
    if draw(st.booleans()):
        W[rng.random(d) < 0.3] = 0.0  # rows exactly zero
    F, _ = np.linalg.qr(rng.standard_normal((n, h)))
    mu = rng.dirichlet(np.full(n, 0.5))
    if draw(st.booleans()):
        mu[rng.random(n) < 0.3] = 0.0  # samples weighted exactly zero
        mu[0] += mu.sum() == 0
    mu *= p.mu_total / mu.sum()
    is_treatment = np.any(p.coding != 0, axis=0)
    density = draw(st.sampled_from([0.7, 0.0, 1.0]))  # random, empty, full confounder sets
    K = (rng.random((d, d)) < density) & ~np.eye(d, dtype=bool) & is_treatment[None, :]
    adaptive_scale = draw(st.sampled_from([1.0, 0.0]))  # 0: gamma and xi exactly zero
    fields = dict(W=W, F=F, mu=mu, K=K, G=random_graph(rng, n, k, p.anchors),
                  xi=adaptive_scale * rng.random(n) * 10 ** rng.uniform(-3, 1))
    if p.Z is not None:  # the blocks then fit X - Z Theta
        fields["Theta"] = 0.1 * rng.standard_normal((p.Z.shape[1], d))
    if granular is None:
        granular = draw(st.booleans())
    if granular:
        M = int(rng.integers(1, min(3, d) + 1))
        groups = np.concatenate([np.arange(M), rng.integers(0, M, d - M)])
        rng.shuffle(groups)
        fields.update(
            groups=groups,
            nu=rng.dirichlet(np.ones(M)),
            S=tuple(random_graph(rng, n, k, p.anchors) for _ in range(M)),
            gamma=tuple(adaptive_scale * rng.random(n) * 10 ** rng.uniform(-3, 1)
                        for _ in range(M)),
        )
    if extra is not None:  # a plugin's variables, drawn by its own function
        fields.update(extra(p, rng))
    return State(p, **fields)


@st.composite
def simplex_qps(draw, min_size=2, max_size=40, balance=True):
    """A random convex :class:`~causefs.qp.SimplexQP` with a dense PSD balance part."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(min_size, max_size))
    total = draw(st.sampled_from([1.0, float(n)]))
    rank = int(rng.integers(1, n + 1))
    factor = rng.standard_normal((n, rank)) * 10 ** rng.uniform(-2, 1)
    graph = random_graph(rng, n, 1) if n > 2 else None
    sparse = None
    if graph is not None:
        # a graph Laplacian: symmetric PSD with the sparsity of a kNN graph
        sym = 0.5 * (graph + graph.T)
        sparse = sp.csr_array(sp.diags_array(np.asarray(sym.sum(axis=1)).ravel()) - sym)
    return SimplexQP(
        diag=rng.random(n) * 10 ** rng.uniform(-3, 1),
        linear=rng.standard_normal(n) * 10 ** rng.uniform(-2, 1),
        total=total,
        sparse=sparse,
        balance=GramBalance(factor @ factor.T) if balance else None,
        balance_weight=float(10 ** rng.uniform(-2, 2)) if balance else 0.0,
    )


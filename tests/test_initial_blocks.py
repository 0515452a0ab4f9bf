"""The initialization's sample weights and first W solve (Algorithm 1, lines 1-3)
against what their docstrings state, computed here: uniform weights summing to
``mu_total``; the W of eq. W.3 with the l2,1 term's weights ``D = I``."""

import warnings

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse.linalg
from scipy.sparse import csr_array

from causefs.blocks.initialization import spectral_embedding
from causefs.blocks.initialization.initial_graphs import (
    InitialFusedGraphBlock,
    InitialGranularGraphsBlock,
)
from causefs.blocks.initialization.initial_selection import InitialSelectionBlock
from causefs.blocks.initialization.spectral_embedding import (
    SpectralEmbeddingBlock,
    smallest_eigenvectors,
)
from causefs.blocks.initialization.uniform_weights import UniformWeightsBlock
from causefs.core.state import State
from causefs.model.fit_size import FitSize
from causefs.model.problem import Problem
from causefs.model.settings import Settings
from causefs.numerics.adaptive_graphs import adaptive_graph
from causefs.numerics.anchors import anchor_seeds, choose_anchors
from causefs.numerics.given_neighbors import check_neighbors
from causefs.plugins.registry import parts as registered_parts
from causefs.testing.strategies import cause_fs_objective
from test_descent_block_costs import cause_fs_state, step_peak
from test_reference_math import assert_graph_equal, dense, half_squared_distances, \
    reference_adaptive


@pytest.mark.parametrize(("form", "value"), [("mean_one", 1.0), ("simplex", 1.0 / 25)])
def test_uniform_weights_sum_to_the_problems_total(form, value):
    state = cause_fs_state(25, 4)
    state.problem.sample_weights = form
    mu = UniformWeightsBlock().step(state).mu
    assert mu.shape == (25,) and np.allclose(mu, value)


@pytest.mark.parametrize("system", ["primal", "dual", "cg"])
def test_the_first_w_solve_takes_d_equal_to_the_identity(system):
    """With the regression and l2,1 terms only: ``(alpha X~'X~ + lam I) W = alpha X~'F``
    whatever W the state holds (the majorizer at a current W would give other weights);
    conjugate gradients to their tolerance, from zero."""
    state = cause_fs_state(12, 30 if system == "dual" else 6)
    state.problem.objective = cause_fs_objective(alpha=2.0, lam=0.3,
                                                 terms=("regression", "sparsity"))
    mu = np.linspace(0.5, 1.5, 12)
    state = state.replace(mu=mu, W=np.full(state.W.shape, 7.0))
    Xt = mu[:, None] * state.problem.X
    d = Xt.shape[1]
    A, B = 2.0 * Xt.T @ Xt + 0.3 * np.eye(d), 2.0 * Xt.T @ state.F
    W = InitialSelectionBlock(system=system).step(state).W
    if system == "cg":
        assert np.all(np.linalg.norm(B - A @ W, axis=0) <= 1e-6 * np.linalg.norm(B, axis=0))
        assert np.allclose(W, np.linalg.solve(A, B), rtol=1e-4, atol=1e-8)
    else:
        assert np.allclose(W, np.linalg.solve(A, B), atol=1e-9)


# ------------------------------------------------ the initial graphs (eq. S.5, no prior) ----

def raw_state(X, k=3, groups=None, neighbors=None, G=None):
    """A state holding only what the initial graph blocks read: the data, the groups and
    (for the granular graphs) the initial fused graph."""
    n, d = X.shape
    problem = Problem(X=X, coding=np.zeros((n, d)), n_clusters=2, n_neighbors=k,
                      neighbors=neighbors, fields=registered_parts().fields)
    return State(problem, groups=np.zeros(d, dtype=np.int64) if groups is None else groups,
                 G=G)


def clustered_points(n=40, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, 3, (n, 1)) * 2.0 + rng.random((n, d))


@pytest.mark.parametrize("sparse", [False, True])
def test_the_initial_fused_graph_is_the_closed_form_on_the_raw_distances(sparse):
    """G: eq. S.5 with ``tau_ij = 1/2 ||x_i - x_j||^2`` over all features, no prior; xi is
    half each column's denominator (tests/test_reference_math.py's dense reference)."""
    X = clustered_points()
    X[X < 0.3] = 0.0
    state = raw_state(csr_array(X) if sparse else X, k=4)
    new = InitialFusedGraphBlock(neighbor_algorithm="exact").step(state)
    assert_graph_equal((new.G, new.xi), reference_adaptive(half_squared_distances(X), 4), "G")


@pytest.mark.parametrize("sparse", [False, True])
def test_the_initial_granular_graphs_are_the_closed_form_on_each_groups_features(sparse):
    """S[m]: eq. S.5 on the distances of group m's features alone, one graph a group (the
    groups interleaved, so a graph of the wrong columns differs), gamma[m] alongside."""
    X = clustered_points(d=7, seed=1)
    X[:, 4:] = np.random.default_rng(2).random((40, 3)) * 3.0  # another neighbourhood
    groups = np.array([0, 1, 0, 2, 1, 2, 1])
    G, _ = adaptive_graph(X, 3)
    new = InitialGranularGraphsBlock(neighbor_algorithm="exact").step(
        raw_state(csr_array(X) if sparse else X, groups=groups, G=G))
    assert len(new.S) == len(new.gamma) == 3
    for m in range(3):
        reference = reference_adaptive(half_squared_distances(X[:, groups == m]), 3)
        assert_graph_equal((new.S[m], new.gamma[m]), reference, f"S[{m}]")


def test_given_neighbours_replace_the_search_of_the_fused_graph():
    """Neighbours the fit was given are the candidates: each column keeps its k + 1
    nearest given samples and takes eq. S.5 on them (the search's own nearest, where not
    given, are left out)."""
    X = clustered_points(n=30, seed=3)
    k, n = 3, 30
    rng = np.random.default_rng(4)
    given = np.array([rng.choice([i for i in range(n) if i != j], 8, replace=False)
                      for j in range(n)])
    graph = csr_array((np.ones(given.size), (np.repeat(np.arange(n), 8), given.ravel())),
                      shape=(n, n))
    new = InitialFusedGraphBlock().step(raw_state(X, k=k, neighbors=check_neighbors(graph, n, k)))
    tau = np.full((n, n), np.inf)
    for j in range(n):
        tau[given[j], j] = 0.5 * np.sum((X[given[j]] - X[j]) ** 2, axis=1)
    assert_graph_equal((new.G, new.xi), reference_adaptive(tau, k), "G")
    nearest = InitialFusedGraphBlock().step(raw_state(X, k=k)).G
    assert (dense(nearest) != dense(new.G)).any()  # the given candidates mattered


class ListedCandidates:
    """A search object (scikit-learn's interface) that lists, for each point, itself
    and then a fixed arbitrary order of the others: what it is asked for decides which
    candidates the graph gets."""

    def __init__(self, orders):
        self.orders, self.asked = orders, []

    def fit(self, X):
        return self

    def kneighbors(self, X, n_neighbors, return_distance=False):
        self.asked.append(n_neighbors)
        return np.array([[i, *order[:n_neighbors - 1]] for i, order in enumerate(self.orders)])


def test_a_search_object_is_asked_for_k_plus_one_candidates_of_the_fused_graph():
    """Given a search object, the fused graph's candidates are the k + 1 samples it
    lists after each sample itself: asked for k + 2 (with the sample), eq. S.5 on
    exactly those."""
    X = clustered_points(n=30, seed=5)
    k, n = 3, 30
    rng = np.random.default_rng(6)
    orders = [rng.permutation([i for i in range(n) if i != j]) for j in range(n)]
    search = ListedCandidates(orders)
    new = InitialFusedGraphBlock().step(raw_state(X, k=k, neighbors=search))
    assert search.asked == [k + 2]
    tau = np.full((n, n), np.inf)
    for j in range(n):
        listed = orders[j][:k + 1]
        tau[listed, j] = 0.5 * np.sum((X[listed] - X[j]) ** 2, axis=1)
    assert_graph_equal((new.G, new.xi), reference_adaptive(tau, k), "G")


def test_the_blocks_search_option_and_the_fused_graph_reach_the_searches(monkeypatch):
    """Each graph's candidate search is the block's ``neighbor_algorithm``; the granular
    graphs' approximate searches are warm-started from the initial fused graph (its
    support joins their candidates), the fused graph's from nothing."""
    from causefs.blocks.initialization import initial_graphs

    calls = []

    def spy(Y, k, **options):
        calls.append(options)
        return adaptive_graph(Y, k, **options)

    monkeypatch.setattr(initial_graphs, "adaptive_graph", spy)
    X = clustered_points(d=4)
    G, _ = adaptive_graph(X, 3)
    state = raw_state(X, groups=np.array([0, 1, 0, 1]), G=G)
    InitialGranularGraphsBlock(neighbor_algorithm="approximate").step(state)
    assert [c["algorithm"] for c in calls] == ["approximate"] * 2
    assert all(len(c["warm"]) == 1 and c["warm"][0] is G for c in calls)
    calls.clear()
    InitialFusedGraphBlock(neighbor_algorithm="kd_tree").step(state)
    assert len(calls) == 1 and calls[0]["algorithm"] == "kd_tree"
    assert calls[0].get("warm") is None and calls[0]["seeds"] is None


def test_the_initial_graphs_are_priced_as_fresh_searches_of_the_data():
    """The initial graphs search the data's d dimensions (the fused graph all of them, M
    granular graphs a group each), not an embedding's h: an exact search computes the
    n x n distances over d coordinates, so the flops grow with d."""
    def declared(block, d, M):
        size = FitSize(500, d, Settings(n_clusters=3, n_neighbors=5, max_granularity=M,
                                        neighbor_algorithm="exact"))
        return block.cost(size)

    for block in (InitialFusedGraphBlock("exact"), InitialGranularGraphsBlock("exact")):
        assert declared(block, 40, 2).flops == pytest.approx(2 * declared(block, 20, 2).flops)
        assert declared(block, 40, 2).flops == pytest.approx(2.0 * 500 ** 2 * 40)
    # the M graphs' selections (one n x n selection each) against the one fused graph
    fused, granular = declared(InitialFusedGraphBlock("exact"), 40, 4), \
        declared(InitialGranularGraphsBlock("exact"), 40, 4)
    assert granular.ops == pytest.approx(4 * fused.ops)


# ------------------------------------- the spectral embedding (F: the h smallest of L_G) ----

def laplacian(A):
    """docs/MODEL.md: ``L_A = D_A - (A + A')/2``, D_A the row sums of ``(A + A')/2``."""
    sym = 0.5 * (dense(A) + dense(A).T)
    return np.diag(sym.sum(axis=1)) - sym


def blob_graph(sizes, separation, seed=0, k=5):
    """An adaptive kNN graph of 2-D blobs of these sizes, their samples shuffled, and
    each sample's blob; blobs far apart are the graph's components."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    centres = separation * np.array([[b, (b % 2) * 0.5] for b in range(len(sizes))])
    X = centres[labels] + rng.normal(0.0, 0.3, (labels.size, 2))
    G, _ = adaptive_graph(X, k)
    return G, labels


def indicators(labels, order):
    """Normalized indicator columns of the blobs in this order."""
    return np.column_stack([(labels == b) / np.sqrt(np.sum(labels == b)) for b in order])


#: the solver paths of smallest_eigenvectors by n (and SHIFT_INVERT_N, monkeypatched
#: lower here): dense below 200 samples, shift-invert Lanczos up to SHIFT_INVERT_N,
#: LOBPCG above with shift-invert as its fallback; and the solvers each path calls
PATHS = {"dense": (150, None, None, []), "shift_invert": (450, None, None, ["shift_invert"]),
         "at_the_bound": (450, 450, None, ["shift_invert"]),
         "lobpcg": (450, 100, None, ["lobpcg"]),
         "lobpcg_fallback": (450, 100, "fails", ["lobpcg", "shift_invert"]),
         "lobpcg_inaccurate": (450, 100, "inaccurate", ["lobpcg", "shift_invert"]),
         "lobpcg_unconverged": (450, 100, "unconverged", ["lobpcg", "shift_invert"])}


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("separation", [0.8, 30.0])  # one connected graph / three components
def test_the_spectral_embedding_spans_the_smallest_eigenvectors_of_the_laplacian(
        monkeypatch, path, separation):
    """F: h orthonormal columns spanning the eigenvectors of the h smallest eigenvalues of
    the unnormalized ``L_G`` (SPEC.md: spectral embedding of L_G), from scipy.linalg.eigh
    of the dense Laplacian; with fewer components than h the first columns are the
    components' normalized indicators, largest first, and each further column is the
    eigenvector of the next eigenvalue (one by one, up to sign). The solvers called are
    those of the path: a LOBPCG that converged needs no fallback; one that returns its
    start, vectors off by 1 % (residuals about 100 times the tolerance relative to the
    Laplacian's norm), or that stops after two iterations (SciPy warns that it did not
    converge: the block checks the residuals instead, and no warning escapes), falls back
    to shift-invert."""
    n, threshold, lobpcg_fails, expected_calls = PATHS[path]
    if threshold is not None:
        monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", threshold)
    calls = []

    def spy(name, function):
        def called(*args, **kwargs):
            calls.append(name)
            return function(*args, **kwargs)
        return called

    lobpcg = scipy.sparse.linalg.lobpcg
    if lobpcg_fails == "fails":  # it returns its start: residuals far above the tolerance
        lobpcg = lambda A, X, **kw: (np.zeros(X.shape[1]), X)  # noqa: E731
    elif lobpcg_fails == "inaccurate":
        exact = lobpcg

        def lobpcg(A, X, **kw):
            values, vectors = exact(A, X, **kw)
            noise = np.random.default_rng(0).standard_normal(vectors.shape)
            return values, vectors + 0.01 * noise / np.linalg.norm(noise, axis=0)
    elif lobpcg_fails == "unconverged":
        exact = lobpcg
        lobpcg = lambda A, X, **kw: exact(A, X, **{**kw, "maxiter": 2})  # noqa: E731
    monkeypatch.setattr(scipy.sparse.linalg, "lobpcg", spy("lobpcg", lobpcg))
    monkeypatch.setattr(spectral_embedding, "_shift_invert",
                        spy("shift_invert", spectral_embedding._shift_invert))
    sizes = [n // 3 + 10, n // 3, n - 2 * (n // 3) - 10]
    G, labels = blob_graph(sizes, separation)
    h = 5
    values, vectors = scipy.linalg.eigh(laplacian(G))
    components = 3 if separation > 10 else 1
    assert np.allclose(values[:components], 0.0, atol=1e-10) and values[components] > 1e-6
    assert np.all(np.diff(values[components:h + 1]) > 1e-5)  # vectors defined up to sign
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F = SpectralEmbeddingBlock(seed=3).step(State(Problem(
            X=np.zeros((n, 1)), coding=np.zeros((n, 1)), n_clusters=h,
            fields=registered_parts().fields), G=G)).F
    assert F.shape == (n, h) and np.allclose(F.T @ F, np.eye(h), atol=1e-12)
    if components == 3:
        np.testing.assert_allclose(F[:, :3], indicators(labels, [0, 1, 2]), atol=1e-12)
    else:
        assert np.allclose(F[:, 0], 1.0 / np.sqrt(n))  # the constant vector, positive
    for j in range(components, h):
        assert abs(F[:, j] @ vectors[:, j]) == pytest.approx(1.0, abs=1e-6), j
    assert calls == expected_calls


def test_with_as_many_components_as_columns_f_is_the_largest_components_indicators():
    """c >= h components: F is the normalized indicators of the h largest components,
    ties by their first sample (the null space's basis, whatever the solver)."""
    sizes = [12, 30, 20, 30, 12]
    G, labels = blob_graph(sizes, 50.0, seed=1)
    assert (np.flatnonzero(labels == 1)[0] < np.flatnonzero(labels == 3)[0]) != \
        (np.flatnonzero(labels == 0)[0] < np.flatnonzero(labels == 4)[0])  # the seed's order
    first = {b: np.flatnonzero(labels == b)[0] for b in range(5)}
    order = sorted(range(5), key=lambda b: (-sizes[b], first[b]))
    for h in (3, 4, 5):
        F = smallest_eigenvectors(G, h, seed=0)
        np.testing.assert_array_equal(F, indicators(labels, order[:h]))


@pytest.mark.parametrize(("n", "h", "k", "m"), [(150, 6, 5, None), (190, 10, 5, None),
                                                (1000, 5, 5, None), (3000, 5, 10, None),
                                                (3000, 10, 2, None), (6000, 5, 5, None),
                                                (6000, 5, 5, 300), (6000, 6, 10, 1500)])
def test_the_spectral_embedding_memory_bounds_the_measured_peak(n, h, k, m):
    """The declared phase is at least what a step allocates at its peak (tracemalloc) and
    at most three times it, on each path: dense below 200 samples, shift-invert, LOBPCG
    above SHIFT_INVERT_N. Declared before: 12 n h floats, 0.1 (dense path) to 0.7 of the
    peak (the Laplacian, its factors and the Lanczos basis were not counted). With m
    anchors, LOBPCG's preconditioner holds their Schur complement."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, 20)) + 3.0 * rng.integers(0, 4, (n, 1))
    anchors = None if m is None else choose_anchors(n, m, 0)
    G, _ = adaptive_graph(X, k, seeds=anchor_seeds(X, anchors, k))
    state = State(Problem(X=np.zeros((n, 1)), coding=np.zeros((n, 1)), n_clusters=h,
                          n_neighbors=k, fields=registered_parts().fields, anchors=anchors),
                  G=G)
    block = SpectralEmbeddingBlock()
    declared = block.cost(FitSize(n, 1, Settings(n_clusters=h, n_neighbors=k,
                                                 n_anchors=m))).memory["spectral_embedding"]
    peak = step_peak(block, state)
    assert peak <= declared <= 3 * peak, (peak, declared)


def test_the_spectral_embedding_work_grows_as_h_n_to_the_1_6():
    """LOBPCG's products and Rayleigh-Ritz steps: linear in h, and its iterations grow
    with n (the docstring's measured h n^1.6); with anchors (their exact preconditioner)
    the iterations do not grow with n: linear in n h."""
    def ops(n, h, anchors=None):
        return SpectralEmbeddingBlock().cost(
            FitSize(n, 1, Settings(n_clusters=h, n_anchors=anchors))).ops

    assert ops(20_000, 3) >= 3 * 20_000  # at least one product of L with the h vectors
    assert ops(20_000, 6) == pytest.approx(2 * ops(20_000, 3))
    assert ops(40_000, 3) == pytest.approx(2**1.6 * ops(20_000, 3))
    assert ops(20_000, 3, 1000) >= 3 * 20_000
    assert ops(20_000, 6, 1000) == pytest.approx(2 * ops(20_000, 3, 1000))
    assert ops(40_000, 3, 1000) == pytest.approx(2 * ops(20_000, 3, 1000))


@pytest.mark.parametrize("threshold", [None, 100])  # shift-invert; LOBPCG
def test_the_spectral_embedding_is_reproducible_from_its_seed(monkeypatch, threshold):
    """The iterative solvers start from vectors drawn from the block's seed: the same
    seed gives the same F to the last bit (a fit is reproducible), on either path."""
    if threshold is not None:
        monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", threshold)
    G, _ = blob_graph([150, 150, 150], 0.8, seed=2)
    state = State(Problem(X=np.zeros((450, 1)), coding=np.zeros((450, 1)), n_clusters=4,
                          fields=registered_parts().fields), G=G)
    first = SpectralEmbeddingBlock(seed=7).step(state).F
    assert np.array_equal(SpectralEmbeddingBlock(seed=7).step(state).F, first)
    assert np.array_equal(smallest_eigenvectors(G, 4, seed=7), first)  # the block's seed
    assert not np.array_equal(smallest_eigenvectors(G, 4, seed=0), first)
    # the documented default seed is 0, for the function and for the block
    assert np.array_equal(smallest_eigenvectors(G, 4), smallest_eigenvectors(G, 4, seed=0))
    assert np.array_equal(SpectralEmbeddingBlock().step(state).F,
                          smallest_eigenvectors(G, 4, seed=0))


def test_lobpcg_is_accepted_at_any_scale_of_the_graph(monkeypatch):
    """LOBPCG's residuals are judged relative to the Laplacian's norm (a Gershgorin
    bound): a graph 1e4 times heavier is embedded by LOBPCG alone too, in the same
    subspace as by the dense eigendecomposition."""
    monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", 100)
    monkeypatch.setattr(spectral_embedding, "_shift_invert", None)  # no fallback
    G, _ = blob_graph([150, 150, 150], 0.8, seed=2)
    F = smallest_eigenvectors(1e4 * G, 4, seed=0)
    _, vectors = scipy.linalg.eigh(laplacian(G), subset_by_index=[0, 3])
    assert np.allclose(vectors @ (vectors.T @ F), F, atol=1e-6)


def test_shift_invert_factorizes_once_with_a_symmetric_ordering(monkeypatch):
    """Shift-invert Lanczos solves with the one LU the block makes (eigsh given no
    operator would factorize ``L - sigma I`` a second time), of a positive definite
    matrix (sigma below the spectrum's 0), and that LU's symmetric
    ordering keeps its fill well below COLAMD's, SuperLU's default (the docstring's
    reason for it): 6,724 against 11,658 non-zeros on this graph."""
    made, solves = [], []
    splu = scipy.sparse.linalg.splu

    class Counted:
        def __init__(self, lu):
            self.lu = lu

        def solve(self, rhs):
            solves.append(1)
            return self.lu.solve(rhs)

    def factorize(A, **kwargs):
        made.append((A, splu(A, **kwargs)))
        return Counted(made[-1][1])

    monkeypatch.setattr(scipy.sparse.linalg, "splu", factorize)
    G, _ = blob_graph([150, 150, 150], 0.8)
    F = smallest_eigenvectors(G, 4)
    assert F.shape == (450, 4)
    assert len(made) == 1 and len(solves) > 0
    A, lu = made[0]
    # shifted below the spectrum: the matrix factorized is positive definite
    assert np.linalg.eigvalsh(A.toarray()).min() > 0
    colamd = splu(A, permc_spec="COLAMD")
    assert lu.L.nnz + lu.U.nnz < 0.75 * (colamd.L.nnz + colamd.U.nnz)


def test_lobpcg_is_preconditioned_by_the_inverse_degrees(monkeypatch):
    """The docstring's Jacobi preconditioner: LOBPCG is given ``diag(L)^-1``, the
    inverse of each sample's degree in the Laplacian (the dense Laplacian's diagonal)."""
    monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", 100)
    given = []
    lobpcg = scipy.sparse.linalg.lobpcg

    def spied(A, X, **kwargs):
        given.append(kwargs.get("M"))
        return lobpcg(A, X, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "lobpcg", spied)
    G, _ = blob_graph([150, 150, 150], 0.8)
    smallest_eigenvectors(G, 4)
    assert len(given) == 1 and given[0] is not None
    v = np.random.default_rng(1).standard_normal(450)
    np.testing.assert_allclose(given[0] @ v, v / np.diag(laplacian(G)), rtol=1e-12)


@pytest.mark.parametrize("weight", [1.0, 0.125])  # 2 d_max about 2.8; about 0.35, below 1
def test_shift_invert_shifts_below_the_spectrum_by_1e_6_of_the_gershgorin_bound(
        monkeypatch, weight):
    """The docstring's shift: ``sigma = -1e-6 max(1, 2 d_max)``, ``d_max`` the largest
    degree (the dense Laplacian's largest diagonal entry here). The matrix handed to the
    LU is ``L - sigma I``, positive definite with smallest eigenvalue ``-sigma`` (L's
    is 0) and condition number at most ``1e6 + 1``, and Lanczos is shifted about the
    same sigma. The two weights reach both sides of ``max(1, .)``."""
    made, shifts = [], []
    splu, eigsh = scipy.sparse.linalg.splu, scipy.sparse.linalg.eigsh

    def factorize(A, **kwargs):
        made.append(A.toarray())
        return splu(A, **kwargs)

    def lanczos(A, **kwargs):
        shifts.append(kwargs["sigma"])
        return eigsh(A, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "splu", factorize)
    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", lanczos)
    G, _ = blob_graph([150, 150, 150], 0.8)
    G = weight * G
    L = laplacian(G)
    bound = 2.0 * np.diag(L).max()  # Gershgorin: every row of |L| sums to 2 degrees
    assert (bound > 1.0) == (weight == 1.0)
    sigma = -1e-6 * max(1.0, bound)
    smallest_eigenvectors(G, 4)  # n = 450: shift-invert
    assert len(made) == 1 and len(shifts) == 1
    np.testing.assert_allclose(made[0] - L, -sigma * np.eye(450), rtol=0,
                               atol=1e-6 * abs(sigma))
    eigenvalues = np.linalg.eigvalsh(made[0])
    assert eigenvalues[0] == pytest.approx(-sigma, rel=1e-6)
    assert eigenvalues[-1] / eigenvalues[0] <= 1e6 + 1
    assert shifts[0] == pytest.approx(sigma, rel=1e-12)


def hypercube_graph(dimension, weight):
    """The hypercube's graph on ``2^dimension`` vertices, an edge of this weight between
    vertices whose binary labels differ in one bit: one component, and an exactly
    representable eigenbasis of its Laplacian (:func:`walsh`)."""
    n = 2**dimension
    rows = np.repeat(np.arange(n), dimension)
    columns = rows ^ np.tile(1 << np.arange(dimension), n)
    return csr_array((np.full(rows.size, weight), (rows, columns)), shape=(n, n))


def walsh(dimension, bits):
    """The normalized Walsh function ``(-1)^popcount(i & bits) / sqrt(2^dimension)``: an
    eigenvector of the hypercube's Laplacian with eigenvalue ``2 w popcount(bits)``, its
    entries +-2^(-dimension/2), exact for an even dimension."""
    labels = np.arange(2**dimension)
    parity = np.array([bin(label & bits).count("1") % 2 for label in labels])
    return (1.0 - 2.0 * parity) / np.sqrt(2.0**dimension)


#: LOBPCG's tolerance in the acceptance tests: sqrt(tol) = 2^-20 exactly
TOL = 2.0**-40


@pytest.mark.parametrize("weight", [2.0**-5, 2.0**-2])  # Gershgorin bound 1/2 (scale 1); 4
@pytest.mark.parametrize(("excess", "accepted"), [((1.0, 1.0), True),
                                                  ((1.0, 1.5), False),
                                                  ((1.5, 1.0), False)])
def test_lobpcg_is_refused_when_a_columns_residual_exceeds_sqrt_tol_times_the_bound(
        monkeypatch, weight, excess, accepted):
    """The docstring's acceptance rule: LOBPCG's vectors are kept when every column's
    residual ``||L v - lambda v||`` is at most ``sqrt(tol) * scale``, ``scale`` the
    largest row sum of ``|L|`` (16 w on this hypercube) or 1 if that is smaller; a
    column above it refuses them, and shift-invert takes over. LOBPCG (spied) returns
    two exact eigenvectors (Walsh functions, eigenvalue 2 w) with eigenvalues reported
    off by ``excess`` times that threshold, so each column's residual is exactly that
    much (every number is a short binary fraction, so the tie is really reached): at
    the tie they are kept (F is them after the constant vector), at 1.5 times it in
    either column they are not (F then spans the 2 w eigenspace from shift-invert)."""
    monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", 100)
    dimension = 8  # n = 256: above 200 and 5 h, an iterative path
    G = hypercube_graph(dimension, weight)
    L = laplacian(G)
    scale = max(1.0, np.abs(L).sum(axis=1).max())
    assert (scale == 1.0) == (weight < 1 / 16)
    threshold = 2.0**-20 * scale  # sqrt(TOL) * scale
    V = np.column_stack([walsh(dimension, 1), walsh(dimension, 2)])
    values = 2.0 * weight - threshold * np.array(excess)
    residuals = np.linalg.norm(L @ V - V * values, axis=0)
    assert np.array_equal(residuals, threshold * np.array(excess))  # exactly, by design
    calls = []

    def lobpcg(A, X, **kwargs):
        calls.append("lobpcg")
        return values.copy(), V.copy()

    def shift_invert(*args):
        calls.append("shift_invert")
        return shift_invert_exact(*args)

    shift_invert_exact = spectral_embedding._shift_invert
    monkeypatch.setattr(scipy.sparse.linalg, "lobpcg", lobpcg)
    monkeypatch.setattr(spectral_embedding, "_shift_invert", shift_invert)
    F = smallest_eigenvectors(G, 3, tol=TOL)
    if accepted:
        assert calls == ["lobpcg"]
        np.testing.assert_allclose(F, np.column_stack([np.full(256, 1 / 16), V]),
                                   atol=1e-12)
    else:
        assert calls == ["lobpcg", "shift_invert"]
        np.testing.assert_allclose(L @ F[:, 1:], 2.0 * weight * F[:, 1:], atol=1e-8)
    assert np.allclose(F.T @ F, np.eye(3), atol=1e-12)


def test_lobpcg_is_given_the_tolerance_and_at_most_1000_iterations(monkeypatch):
    """The docstring's cap: LOBPCG runs at most 1000 iterations, at the caller's
    tolerance (both read off the call SciPy receives)."""
    monkeypatch.setattr(spectral_embedding, "SHIFT_INVERT_N", 100)
    given = []
    lobpcg = scipy.sparse.linalg.lobpcg

    def spied(A, X, **kwargs):
        given.append(kwargs)
        return lobpcg(A, X, **kwargs)

    monkeypatch.setattr(scipy.sparse.linalg, "lobpcg", spied)
    G, _ = blob_graph([150, 150, 150], 0.8)
    smallest_eigenvectors(G, 4, tol=1e-7)
    assert len(given) == 1
    assert given[0]["maxiter"] == 1000 and given[0]["tol"] == 1e-7

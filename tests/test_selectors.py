"""Baseline selectors: the Selector contract, the shared kNN graph, and each method
against a small case worked out by hand or a property of its paper."""


import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.csgraph
from threadpoolctl import threadpool_limits

from causefs.selectors import available_selectors, make_selector
from causefs.numerics.scaling import scale_features
from causefs.selectors import MCFS, NDFS, SPEC, UDFS, LaplacianScore
from causefs.selectors import affinity, laplacian_score, mcfs, ndfs, spec, udfs
from causefs.selectors.affinity import SpectralGraph, knn_affinity
from causefs.selectors.udfs import local_discriminative_matrix

BASELINES = ("laplacian_score", "spec", "mcfs", "udfs", "ndfs")


@pytest.fixture(autouse=True)
def single_thread_blas():
    # the matrices here are tiny: threads only add contention on a shared 2-core machine
    with threadpool_limits(limits=1):
        yield


@pytest.fixture(scope="module")
def messy(blobs):
    """The conftest blobs (60 x 12, 3 clusters) scaled to [0, 1], with 5 duplicated rows
    and two constant features (0 and 0.5) appended as columns 12 and 13."""
    X, _ = blobs
    X = scale_features(np.vstack([X, X[:5]]))
    return np.hstack([X, np.zeros((65, 1)), np.full((65, 1), 0.5)])


@pytest.fixture(scope="module")
def separated():
    """3 well-separated clusters of 30: features 0-3 separate them (each in its own
    cluster order), features 4-9 are pure noise; scaled to [0, 1]."""
    rng = np.random.default_rng(1)
    labels = np.repeat(np.arange(3), 30)
    orders = [(0, 1, 2), (2, 0, 1), (1, 2, 0), (0, 2, 1)]
    informative = np.column_stack([6.0 * np.take(order, labels) for order in orders])
    X = np.hstack([informative + rng.normal(size=(90, 4)), rng.normal(size=(90, 6))])
    return scale_features(X)


def tiny():
    """4 samples whose 1-NN graph is the two edges 0-1 and 2-3 (see the hand-computed
    tests); feature 2 is constant."""
    return np.array([[0.0, 0.0, 0.5], [0.1, 0.2, 0.5], [0.9, 0.0, 0.5], [1.0, 0.2, 0.5]])


# -- the contract ------------------------------------------------------------------------

@pytest.mark.parametrize("name", [n for n in available_selectors() if n != "causefs"])
def test_selector_contract(name, messy):
    selector = make_selector(name)
    kwargs = dict(n_clusters=3, n_features_to_select=5, random_state=7)
    scores = selector.score(messy, **kwargs)
    assert scores.shape == (messy.shape[1],)
    assert np.all(np.isfinite(scores))
    np.testing.assert_array_equal(selector.score(messy, **kwargs), scores)
    if not selector.select_all:  # the documented fallback: constant features rank last
        assert scores[12:].max() < scores[:12].min()


@pytest.mark.parametrize("name", [n for n in available_selectors()
                                  if not make_selector(n).depends_on_count])
def test_a_selector_declared_count_free_scores_alike_at_any_count(name, messy):
    # a benchmark scores such a method's one fit at every rho: it must not need refitting
    selector = make_selector(name)
    kwargs = dict(n_clusters=3, random_state=7)
    np.testing.assert_array_equal(selector.score(messy, n_features_to_select=2, **kwargs),
                                  selector.score(messy, n_features_to_select=9, **kwargs))


@pytest.mark.parametrize("name", ["mcfs", "vcsdfs", "causefs"])
def test_the_count_moves_the_scores_of_the_methods_declared_to_depend_on_it(name):
    # CAUSE-FS: its stopping rule watches the top 2 (6 iterations) or the top 5 (8)
    from sklearn.datasets import load_digits

    X = load_digits().data[:300] / 16.0
    selector = make_selector(name)
    assert selector.depends_on_count
    kwargs = dict(n_clusters=10, random_state=0)
    assert not np.array_equal(selector.score(X, n_features_to_select=2, **kwargs),
                              selector.score(X, n_features_to_select=5, **kwargs))


@pytest.mark.parametrize("name", BASELINES)
def test_method_config_lists_every_option_with_its_default(name):
    from causefs.app.configs import config_nodes

    options = dict(config_nodes()["method"][name])
    assert options.pop("name") == name
    assert options == make_selector(name).options()
    assert make_selector(name, **options).options() == options


@pytest.mark.parametrize("cls, options, match", [
    (LaplacianScore, dict(weight="gauss"), "weight='gauss': must be one of 'heat', 'binary', "
                                           "'cosine'"),
    (LaplacianScore, dict(n_neighbors=0), "n_neighbors=0: must be an integer >= 1"),
    (LaplacianScore, dict(n_neighbors=2.5), "n_neighbors=2.5: must be an integer"),
    (LaplacianScore, dict(t=-1.0), "t=-1.0: must be a real number > 0"),
    (MCFS, dict(weight="binary", t=1.0), "needs weight='heat'"),
    (SPEC, dict(style=1), "style=1: must be one of -1, 0 or an integer >= 2"),
    (SPEC, dict(style=-2), "style=-2: must be"),
    (SPEC, dict(style="0"), "style='0': must be"),
    (UDFS, dict(gamma=0.0), "gamma=0.0: must be a real number > 0"),
    (UDFS, dict(lam=float("inf")), "lam=inf: must be"),
    (UDFS, dict(max_iter=True), "max_iter=True: must be an integer"),
    (NDFS, dict(beta=-1.0), "beta=-1.0: must be"),
    (NDFS, dict(tol=-1e-3), "tol=-0.001: must be a real number >= 0"),
])
def test_options_are_validated(cls, options, match):
    with pytest.raises(ValueError, match=match):
        cls(**options)


# -- the shared kNN graph ----------------------------------------------------------------

def test_knn_affinity_is_a_symmetric_knn_graph_without_self_loops(messy):
    A = knn_affinity(messy, n_neighbors=4)
    assert isinstance(A, sp.csr_array) and A.shape == (65, 65)
    assert abs(A - A.T).max() == 0
    assert A.diagonal().max() == 0
    assert np.all(np.diff(A.indptr) >= 4)  # its own 4 neighbours, plus those linking to it
    # a duplicated row is linked to its twin at distance 0: heat weight exp(0) = 1
    assert np.all(A[np.arange(5), np.arange(60, 65)] == 1.0)


def test_knn_affinity_weights_match_their_definitions(messy):
    sq = ((messy[:, None, :] - messy[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(sq, np.inf)
    nearest = np.sort(sq, axis=1)[:, :3]
    default_t = nearest.mean()
    heat = knn_affinity(messy, n_neighbors=3).tocoo()
    np.testing.assert_allclose(heat.data, np.exp(-sq[heat.row, heat.col] / default_t))
    given_t = knn_affinity(messy, n_neighbors=3, t=0.3).tocoo()
    np.testing.assert_allclose(given_t.data, np.exp(-sq[given_t.row, given_t.col] / 0.3))
    cosine = knn_affinity(messy, n_neighbors=3, weight="cosine").tocoo()
    unit = messy / np.linalg.norm(messy, axis=1, keepdims=True)
    np.testing.assert_allclose(cosine.data, (unit[cosine.row] * unit[cosine.col]).sum(1))
    binary = knn_affinity(messy, n_neighbors=3, weight="binary")
    assert np.all(binary.data == 1.0)
    assert set(zip(*binary.nonzero())) == set(zip(heat.row, heat.col))


def test_knn_options_reach_the_graph_and_the_scores(messy):
    base = knn_affinity(messy)
    assert knn_affinity(messy, n_neighbors=10).nnz > base.nnz
    for options in (dict(weight="binary"), dict(weight="cosine"), dict(t=0.05)):
        changed = knn_affinity(messy, **options)
        assert changed.nnz == base.nnz and abs(changed - base).max() > 1e-3
    kwargs = dict(n_clusters=3, n_features_to_select=5)
    scores = LaplacianScore().score(messy, **kwargs)
    for options in (dict(n_neighbors=10), dict(weight="binary"), dict(weight="cosine"),
                    dict(t=0.05)):
        assert np.abs(LaplacianScore(**options).score(messy, **kwargs) - scores).max() > 1e-3


@pytest.mark.parametrize("module, selector, expected", [
    (laplacian_score, LaplacianScore(n_neighbors=7, t=0.2),
     dict(n_neighbors=7, weight="heat", t=0.2)),
    (spec, SPEC(n_neighbors=6, weight="cosine"), dict(n_neighbors=6, weight="cosine", t=None)),
    (spec, SPEC(style=3, n_neighbors=8, weight="binary"),
     dict(n_neighbors=8, weight="binary", t=None)),
    (mcfs, MCFS(n_neighbors=9, t=0.4), dict(n_neighbors=9, weight="heat", t=0.4)),
    (ndfs, NDFS(n_neighbors=4), dict(n_neighbors=4, weight="heat")),
])
def test_every_graph_method_passes_its_options_to_the_builder(monkeypatch, messy, module,
                                                              selector, expected):
    calls = []

    def spy(X, **kwargs):
        calls.append(kwargs)
        return knn_affinity(X, **kwargs)

    monkeypatch.setattr(module, "knn_affinity", spy)
    selector.score(messy, n_clusters=3, n_features_to_select=5)
    assert calls == [expected]


def test_udfs_local_sets_use_its_n_neighbors(monkeypatch, messy):
    calls = []

    def spy(X, n_neighbors):
        calls.append(n_neighbors)
        return affinity.knn_indices(X, n_neighbors)

    monkeypatch.setattr(udfs, "knn_indices", spy)
    UDFS(n_neighbors=7).score(messy, n_clusters=3, n_features_to_select=5)
    assert calls == [7]


def test_eigenpairs_dense_and_sparse_solvers_agree(monkeypatch):
    X = np.random.default_rng(3).random((400, 2))
    A = knn_affinity(X, n_neighbors=8)
    graph = SpectralGraph.from_affinity(A)
    values, vectors = graph.eigenpairs(4)
    monkeypatch.setattr(affinity, "DENSE_EIGEN_MAX_N", 0)
    sparse_values, sparse_vectors = graph.eigenpairs(4, random_state=5)
    np.testing.assert_allclose(sparse_values, values, atol=1e-8)
    np.testing.assert_allclose(sparse_vectors, vectors, atol=1e-6)
    # D^-1/2 xi solves the generalized problem (D - A) y = lambda D y, orthogonal to xi_1
    y = graph.inv_sqrt_degree[:, None] * vectors
    L = sp.diags_array(graph.degree) - A
    np.testing.assert_allclose(L @ y, graph.degree[:, None] * y * values, atol=1e-8)
    np.testing.assert_allclose(graph.trivial @ vectors, 0.0, atol=1e-8)
    assert values[0] > 1e-6  # the trivial eigenvalue 0 is skipped


def _disconnected_blobs(n_blobs=6, per_blob=70, seed=0):
    """Far-apart blobs: their 5-NN graph has one component per blob."""
    rng = np.random.default_rng(seed)
    centers = rng.random((n_blobs, 5)) * 100
    return np.vstack([c + rng.random((per_blob, 5)) for c in centers])


@pytest.mark.parametrize("dense_max_n", [0, 10_000])  # the sparse and the dense solver
def test_eigenpairs_on_a_disconnected_graph_match_a_dense_eigendecomposition(
        monkeypatch, dense_max_n):
    X = _disconnected_blobs()  # 420 samples, 6 components
    A = knn_affinity(X, n_neighbors=5)
    assert scipy.sparse.csgraph.connected_components(A)[0] == 6
    graph = SpectralGraph.from_affinity(A)
    monkeypatch.setattr(affinity, "DENSE_EIGEN_MAX_N", dense_max_n)
    values, vectors = graph.eigenpairs(8)
    # independent reference: every eigenpair of the dense normalized Laplacian
    d = A.toarray().sum(axis=1)
    L = np.eye(len(d)) - A.toarray() / np.sqrt(np.outer(d, d))
    reference_values, reference_vectors = np.linalg.eigh(L)
    np.testing.assert_allclose(values, reference_values[1:9], atol=1e-8)
    assert np.count_nonzero(values < 1e-8) == 5  # all of the null space beside xi_1
    # same subspace as the 9 smallest eigenvectors (a gap follows the 9th eigenvalue)
    ours = np.column_stack([graph.trivial, vectors])
    np.testing.assert_allclose(ours @ ours.T, reference_vectors[:, :9] @ reference_vectors[:, :9].T,
                               atol=1e-6)
    np.testing.assert_allclose(ours.T @ ours, np.eye(9), atol=1e-10)


def test_null_space_basis_is_piecewise_constant_and_solver_independent(monkeypatch):
    X = _disconnected_blobs(n_blobs=4, per_blob=80)
    graph = SpectralGraph.from_affinity(knn_affinity(X, n_neighbors=5))
    _, labels = scipy.sparse.csgraph.connected_components(graph.affinity)
    null = graph.null_space()
    assert null.shape == (320, 3)
    np.testing.assert_allclose(graph.trivial @ null, 0.0, atol=1e-12)
    y = graph.inv_sqrt_degree[:, None] * null  # D^-1/2 xi: constant on each component
    for c in range(4):
        np.testing.assert_allclose(np.ptp(y[labels == c], axis=0), 0.0, atol=1e-12)
    _, dense = graph.eigenpairs(5)
    monkeypatch.setattr(affinity, "DENSE_EIGEN_MAX_N", 0)
    _, sparse = graph.eigenpairs(5, random_state=3)
    np.testing.assert_allclose(sparse[:, :3], dense[:, :3], atol=1e-12)  # same basis
    np.testing.assert_allclose(np.abs(sparse.T @ dense)[3:, 3:], np.eye(2), atol=1e-6)


def test_null_space_leaves_out_isolated_nodes():
    # cosine weights: the all-zero sample has degree 0, eigenvalue 1, not in the null space
    X = np.vstack([_disconnected_blobs(n_blobs=2, per_blob=10), np.zeros(5)])
    graph = SpectralGraph.from_affinity(knn_affinity(X, n_neighbors=3, weight="cosine"))
    assert graph.degree[-1] == 0
    assert np.all(graph.null_space()[-1] == 0)
    L = np.eye(21) - graph.normalized.toarray()
    np.testing.assert_allclose(L @ graph.null_space(), 0.0, atol=1e-12)


# -- Laplacian score ---------------------------------------------------------------------

def test_laplacian_score_on_a_hand_computed_graph():
    # 1-NN graph: edges 0-1 and 2-3, binary weights, so D = I.
    # f1 = (0, .1, .9, 1): f~ = (-.5, -.4, .4, .5), f~'Df~ = .82, f~'Lf~ = .1^2 + .1^2
    # f2 = (0, .2, 0, .2): f~ = (-.1, .1, -.1, .1), f~'Df~ = .04, f~'Lf~ = .2^2 + .2^2
    # f3 is constant: the fallback L_r = 3
    scores = LaplacianScore(n_neighbors=1, weight="binary").score(
        tiny(), n_clusters=2, n_features_to_select=1)
    np.testing.assert_allclose(scores, [-0.02 / 0.82, -2.0, -3.0])
    # both edges have the same length, so heat weights (any t) give the same quotients
    heat = LaplacianScore(n_neighbors=1, t=0.7).score(tiny(), n_clusters=2,
                                                      n_features_to_select=1)
    np.testing.assert_allclose(heat, scores)


# -- SPEC --------------------------------------------------------------------------------

def test_spec_on_a_hand_computed_graph():
    kwargs = dict(n_clusters=2, n_features_to_select=1)
    # phi_1 = f'Lf / f'Df: f1 .02 / 1.82, f2 .08 / .08
    phi1 = SPEC(style=-1, n_neighbors=1, weight="binary").score(tiny(), **kwargs)
    np.testing.assert_allclose(phi1, [-0.02 / 1.82, -1.0, -3.0])
    # phi_3 with k = 2: lambda_2 = 0, xi_2 = (1, 1, -1, -1)/2 (the two components), so
    # phi_3 = 2 (f^' xi_2)^2 = 2 (f_0 + f_1 - f_2 - f_3)^2 / (4 f'f)
    phi3 = SPEC(style=2, n_neighbors=1, weight="binary").score(tiny(), **kwargs)
    np.testing.assert_allclose(phi3, [2 * 1.8**2 / (4 * 1.82), 0.0, -1.0], atol=1e-12)


def test_spec_phi2_is_the_laplacian_score(messy):
    kwargs = dict(n_clusters=3, n_features_to_select=5)
    np.testing.assert_allclose(SPEC(style=0, n_neighbors=6).score(messy, **kwargs),
                               LaplacianScore(n_neighbors=6).score(messy, **kwargs))


@pytest.mark.parametrize("style", [-1, 0, 3])
def test_spec_ranks_cluster_aligned_features_above_noise(separated, style):
    # phi_1 and phi_2 ascending (negated), phi_3 descending
    scores = SPEC(style=style).score(separated, n_clusters=3, n_features_to_select=4)
    assert scores[:4].min() > scores[4:].max()


# -- MCFS --------------------------------------------------------------------------------

def test_mcfs_keeps_exactly_n_features_to_select_per_regression(separated):
    one = MCFS().score(separated, n_clusters=1, n_features_to_select=2)
    assert np.count_nonzero(one) == 2
    coef = MCFS().coefficients(separated, n_clusters=3, n_features_to_select=2)
    assert coef.shape == (3, 10)
    assert np.all(np.count_nonzero(coef, axis=1) == 2)
    scores = MCFS().score(separated, n_clusters=3, n_features_to_select=2)
    np.testing.assert_allclose(scores, np.abs(coef).max(axis=0))
    assert 2 <= np.count_nonzero(scores) <= 6


def test_mcfs_selects_the_informative_features(separated):
    # three separated clusters: the 2 smallest non-trivial eigenvectors are cluster
    # indicators (a third would follow within-cluster noise)
    scores = MCFS().score(separated, n_clusters=2, n_features_to_select=4)
    assert scores[:4].min() > scores[4:].max()


# -- UDFS --------------------------------------------------------------------------------

def test_udfs_matrix_matches_the_paper_term_by_term():
    rng = np.random.default_rng(2)
    X, k, lam = rng.random((9, 4)), 3, 0.5
    H = np.eye(k + 1) - 1.0 / (k + 1)
    expected = np.zeros((4, 4))
    for i in range(9):
        distances = ((X - X[i]) ** 2).sum(1)
        distances[i] = -1.0  # the sample heads its own local set
        local = X[np.argsort(distances)[: k + 1]].T  # d x (k+1), the paper's X_i
        centred = local @ H
        B = np.linalg.inv(centred.T @ centred + lam * np.eye(k + 1))
        expected += local @ H @ B @ H @ local.T
    np.testing.assert_allclose(local_discriminative_matrix(X, k, lam), expected)


def test_udfs_ranks_informative_features_above_noise(separated):
    W, history = UDFS().projection(separated, n_clusters=3)
    np.testing.assert_allclose(W.T @ W, np.eye(3), atol=1e-10)
    assert len(history) >= 2
    scores = UDFS().score(separated, n_clusters=3, n_features_to_select=4)
    assert scores[:4].min() > scores[4:].max()


# -- NDFS --------------------------------------------------------------------------------

def test_ndfs_indicator_stays_nonnegative_and_orthonormal(separated):
    result = NDFS().solve(separated, n_clusters=3, random_state=0)
    assert result.F.shape == (90, 3) and result.W.shape == (10, 3)
    assert result.F.min() >= 0.0
    np.testing.assert_allclose(np.linalg.norm(result.F, axis=0), 1.0)
    np.testing.assert_allclose(result.F.T @ result.F, np.eye(3), atol=1e-3)
    assert result.objective[-1] < result.objective[0]
    # the clusters are recovered: each row's largest entry names its cluster
    labels = result.F.argmax(axis=1)
    assert all(len(set(labels[c * 30:(c + 1) * 30])) == 1 for c in range(3))


def test_ndfs_ranks_informative_features_above_noise(separated):
    scores = NDFS().score(separated, n_clusters=3, n_features_to_select=4)
    assert scores[:4].min() > scores[4:].max()

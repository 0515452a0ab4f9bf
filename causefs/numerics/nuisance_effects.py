"""The effect of known nuisance variables on the features, and clustering given them.

``Z`` is a coded nuisance design (n, q) with centred columns
(:func:`causefs.model.nuisance_coding.code_nuisance`). Two estimates of how Z shifts every feature:

* :func:`nuisance_regression`: the least-squares coefficients of Z alone (for labels,
  the environments' mean shifts): *conditioning*, which also removes whatever part of
  the cluster structure is associated with Z;
* the same with a cluster design beside Z: the *direct* effect of Z, the shift a
  feature shows between environments within one cluster. Only this part is nuisance
  when Z and the clusters are associated (a selection bias); it is the regression form
  of balancing Z across the clusters (for labels, the mean shifts within clusters,
  averaged over clusters).

:func:`conditional_kmeans` finds the clusters that design needs: k-means with an additive
shift per environment, ``x_i ~ m_{c_i} + z_i Theta``.
"""

from __future__ import annotations

import numpy as np

from .sparse import column_squares

#: singular values of the residualized Z at most this fraction of Z's norm are directions
#: Z shares with the cluster design: their effect is not identified (and a design's
#: directions at most this fraction of its largest singular value are dropped)
RANK_RTOL = 1e-8


def _orthonormal_design(design: np.ndarray | None, n: int) -> np.ndarray:
    """Orthonormal basis of the intercept and ``design`` (n, r): the left singular
    vectors of ``[1, design]`` whose singular value exceeds ``RANK_RTOL`` times the
    largest (at the bound, a direction is not identified)."""
    columns = np.ones((n, 1)) if design is None else np.column_stack([np.ones(n), design])
    U, s, _ = np.linalg.svd(columns, full_matrices=False)
    return U[:, s > RANK_RTOL * s[0]]


def nuisance_regression(X: np.ndarray, Z: np.ndarray, design: np.ndarray | None = None,
                        shrink: bool = True) -> np.ndarray:
    """Coefficients ``Theta`` (q, d) of Z in the least-squares fit of X on [1, design, Z].

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (n, q)
        Coded nuisance variables.
    design : ndarray of shape (n, r), optional
        What else explains X (cluster indicators or an embedding); None fits Z alone.
    shrink : bool
        Multiply feature f's coefficients by ``max(0, 1 - 1/F_f)``, with ``F_f`` the
        F statistic of Z for feature f given the design: an effect no larger than noise
        is not removed, and a clear one (F >> 1) almost fully. ``(1 - 1/F) ||Theta_f||^2``
        is the squared effect with its expected noise part taken away.

    Returns
    -------
    Theta : ndarray of shape (q, d)
        Zero along directions of Z that the design spans (not identified: attributed to
        the design), and for features with ``F_f <= 1`` when shrinking (also one whose
        explained sum of squares underflows to 0: F is 0).
    """
    n, d = X.shape
    Q = _orthonormal_design(design, n)
    Zr = Z - Q @ (Q.T @ Z)
    Xr = X - Q @ (Q.T @ X)
    if Z.shape[1] == 0:
        return np.zeros((0, d))
    U, s, Vt = np.linalg.svd(Zr, full_matrices=False)
    keep = s > RANK_RTOL * np.linalg.norm(Z)
    rank = int(keep.sum())
    if rank == 0:
        return np.zeros((Z.shape[1], d))
    U, s, Vt = U[:, keep], s[keep], Vt[keep]
    projected = U.T @ Xr  # (rank, d): Z's share of each feature
    Theta = Vt.T @ (projected / s[:, None])
    if shrink:
        explained = np.einsum("ij,ij->j", projected, projected)
        residual = np.maximum(np.einsum("ij,ij->j", Xr, Xr) - explained, 0.0)
        dof = n - Q.shape[1] - rank
        if dof <= 0:  # no residual degrees of freedom: no noise estimate, no shrinkage
            return Theta
        noise = residual / dof * rank  # the part of `explained` expected from noise
        factor = np.clip(1.0 - np.divide(noise, explained, out=np.ones(d),
                                         where=explained > 0), 0.0, 1.0)
        Theta = Theta * factor
    return Theta


def _shifted_centres(X: np.ndarray, Z: np.ndarray, labels: np.ndarray, k: int):
    """X less the environment shifts given ``labels``, the cluster centres of that, and
    the cluster sizes."""
    onehot = np.zeros((X.shape[0], k))
    onehot[np.arange(X.shape[0]), labels] = 1.0
    shifted = X - Z @ nuisance_regression(X, Z, onehot[:, 1:], shrink=False)
    counts = onehot.sum(axis=0)
    return shifted, (onehot.T @ shifted) / np.maximum(counts, 1.0)[:, None], counts


def _lloyd(X: np.ndarray, Z: np.ndarray, labels: np.ndarray, k: int, max_iter: int):
    """Alternate cluster centres with environment shifts and assignments from ``labels``;
    returns (within sum of squares, labels)."""
    n = X.shape[0]
    inertia = np.inf
    for _ in range(max_iter):
        shifted, centres, counts = _shifted_centres(X, Z, labels, k)
        distances = (np.einsum("ij,ij->i", shifted, shifted)[:, None]
                     - 2.0 * shifted @ centres.T + np.einsum("ij,ij->i", centres, centres))
        distances[:, counts == 0] = np.inf  # an emptied cluster stays empty
        new = distances.argmin(axis=1)
        inertia = float(distances[np.arange(n), new].sum())
        if np.array_equal(new, labels):
            break
        labels = new
    return inertia, labels


def conditional_kmeans(X: np.ndarray, Z: np.ndarray, n_clusters: int, *, n_init: int = 4,
                       max_iter: int = 30, seed: int = 0) -> np.ndarray:
    """Cluster labels (n,) of k-means with an additive shift per value of Z.

    Minimizes ``sum_i ||x_i - m_{c_i} - z_i Theta||^2`` over the labels c, the centres m
    and the shifts Theta by alternating: Theta and m by least squares given the labels,
    the labels by the nearest centre of the shifted data. Half of the ``n_init`` starts
    are k-means++ runs on X with Z's own association removed (conditioning), half on X as
    it is: the first finds clusters that Z would hide (a strong nuisance), the second
    those Z is tied to. The labels of the lowest sum of squares are returned.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (n, q)
        The coded nuisance variables.
    n_clusters : int
    n_init : int, default=4
        Starts; each ends in at most ``max_iter`` alternations.
    max_iter : int, default=30
    seed : int, default=0
        Seeds the starts' k-means++.
    """
    from sklearn.cluster import KMeans

    rng = np.random.default_rng(seed)
    conditioned = X - Z @ nuisance_regression(X, Z, shrink=False)
    best = (np.inf, None)
    for start in range(n_init):
        data = conditioned if start % 2 == 0 else X
        labels = KMeans(n_clusters, n_init=1, random_state=int(rng.integers(2**31 - 1))
                        ).fit_predict(data)
        best = min(best, _lloyd(X, Z, labels, n_clusters, max_iter), key=lambda r: r[0])
    return best[1]


def clusters_of_top_features(X: np.ndarray, Z: np.ndarray, scores: np.ndarray,
                             n_clusters: int, *, top: int = 4, n_init: int = 4,
                             seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Cluster labels (n,) of :func:`conditional_kmeans` on the ``top * n_clusters``
    features of largest ``scores`` (the features a fit currently selects: sharper
    clusters than all features give), and those features' indices.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (n, q)
    scores : ndarray of shape (d,)
    n_clusters : int
    top : int, default=4
        Features a cluster: the clustering sees ``top * n_clusters`` of them.
    n_init : int, default=4
    seed : int, default=0
    """
    m = min(X.shape[1], top * n_clusters)
    chosen = np.argsort(-np.asarray(scores), kind="stable")[:m]
    return conditional_kmeans(X[:, chosen], Z, n_clusters, n_init=n_init, seed=seed), chosen


def cluster_evidence(X: np.ndarray, Z: np.ndarray, scores: np.ndarray, n_clusters: int, *,
                     top: int = 4, n_init: int = 8, seed: int = 0) -> np.ndarray:
    """p-values (d,) of every feature carrying the clusters of the top features, beside Z.

    The clusters: :func:`clusters_of_top_features`; every feature's p-value:
    :func:`cluster_pvalues`. A feature among those the clusters were found on is tested
    against the clusters it did not help define: every sample reassigned to the nearest
    centre with that feature's column left out (one assignment step of the same model).
    Without that, a noise feature among them looks as if it carried the clusters (they
    were fitted to it, a selection bias).

    Parameters
    ----------
    X, Z, scores, n_clusters, top
        As :func:`clusters_of_top_features`.
    n_init : int, default=8
        Starts of the clustering (more than a fit's step takes: the p-values are
        reported once).
    seed : int, default=0
    """
    labels, chosen = clusters_of_top_features(X, Z, scores, n_clusters, top=top,
                                              n_init=n_init, seed=seed)
    pvalues = cluster_pvalues(X, Z, labels)
    shifted, centres, counts = _shifted_centres(X[:, chosen], Z, labels, n_clusters)

    def squared_distances(j):  # (n, k): sample to centre along column j
        return (shifted[:, j, None] - centres[None, :, j]) ** 2

    total = sum(squared_distances(j) for j in range(chosen.size))  # O(n k) memory
    total[:, counts == 0] = np.inf  # an emptied cluster stays empty
    for j, feature in enumerate(chosen):  # chosen[j] is column j of shifted
        without = (total - squared_distances(j)).argmin(axis=1)
        pvalues[feature] = cluster_pvalues(X[:, [feature]], Z, without)[0]
    return pvalues


def variance_share(X, Z: np.ndarray) -> np.ndarray:
    """The share of every feature's variance that Z explains, R^2 of X's columns on Z.

    Parameters
    ----------
    X : {ndarray, sparse matrix} of shape (n, d)
    Z : ndarray of shape (n, q)
        Coded nuisance variables, centred columns.

    Returns
    -------
    ndarray of shape (d,)
        ``||P_Z x_c||^2 / ||x_c||^2`` with ``x_c`` the centred feature and ``P_Z`` the
        projection onto Z's columns (for labels: the between-level share of the
        variance, eta^2); 0 for a constant feature: one whose centred sum of squares
        is at most ``RANK_RTOL`` times the larger of its sum of squares and the
        smallest normal number.
    """
    n = X.shape[0]
    U, s, _ = np.linalg.svd(Z, full_matrices=False)
    U = U[:, s > RANK_RTOL * s.max()] if s.size else U
    mean = np.asarray(X.mean(axis=0)).ravel()
    squares = column_squares(X)
    total = squares - n * mean**2
    # Z's columns are centred, so U is orthogonal to the constant: U^T x_c = U^T x
    explained = np.einsum("ij,ij->j", *(2 * [np.asarray((X.T @ U).T)]))
    scale = np.maximum(squares, np.finfo(float).tiny)
    varies = total > RANK_RTOL * scale
    return np.where(varies, np.clip(explained / np.where(varies, total, 1.0), 0.0, 1.0), 0.0)


def cluster_pvalues(X: np.ndarray, Z: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """p-values of the partial F test of the clusters for every feature, beside Z.

    For feature f: the residual sums of squares of the least-squares fits of ``x_f`` on
    ``[1, Z]`` (``rss0``) and on ``[1, Z, cluster indicators]`` (``rss1``);
    ``F = ((rss0 - rss1) / df1) / (rss1 / df2)`` with ``df1`` the rank the indicators
    add and ``df2 = n - rank[1, Z, indicators]``, and the p-value of F under the F
    distribution. A small p-value: the feature's mean differs between the clusters
    beyond what Z explains (it carries the clusters); a pure nuisance feature or a noise
    feature has F of about 1.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (n, q)
        Coded nuisance variables (q may be 0).
    labels : ndarray of shape (n,)
        Cluster labels.

    Returns
    -------
    ndarray of shape (d,)
        In [0, 1]; 1 for a feature the clusters explain nothing of (also a constant
        feature: ``rss0`` at most ``RANK_RTOL`` times the larger of its sum of squares
        and the smallest normal number, tiny; and every feature when the indicators add
        no rank or no residual degree of freedom is left: no evidence); 0 for a feature
        the clusters explain exactly: ``rss1`` at most ``1e-12 max(rss0, tiny)``.
    """
    from scipy.stats import f as f_distribution

    n, d = X.shape
    _, coded = np.unique(labels, return_inverse=True)
    indicators = (coded[:, None] == np.arange(1, coded.max() + 1)).astype(float)
    null = _orthonormal_design(Z if Z.shape[1] else None, n)
    full = _orthonormal_design(np.column_stack([Z, indicators]), n)
    df1, df2 = full.shape[1] - null.shape[1], n - full.shape[1]
    if df1 <= 0 or df2 <= 0:
        return np.ones(d)
    Xr = X - null @ (null.T @ X)  # residuals of [1, Z]
    rss0 = np.einsum("ij,ij->j", Xr, Xr)
    added = full.T @ Xr  # what the indicators add, in the full basis (null part is 0)
    rss1 = np.maximum(rss0 - np.einsum("ij,ij->j", added, added), 0.0)
    explained = rss0 - rss1
    scale = np.maximum(rss0, np.finfo(float).tiny)
    varies = rss0 > RANK_RTOL * np.maximum(np.einsum("ij,ij->j", X, X), np.finfo(float).tiny)
    # rss1 = 0 with a varying feature: the clusters explain it exactly (p = 0)
    F = np.divide(explained / df1, rss1 / df2, out=np.full(d, np.inf), where=rss1 > 1e-12 * scale)
    return np.where(varies, f_distribution.sf(F, df1, df2), 1.0)

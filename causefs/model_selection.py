"""Choosing a selector's settings without labels.

:class:`LabelFreeSearch` fits a selector once per setting of a grid and keeps the setting
whose top features score best under a criterion that reads no labels. Two measures of a
setting's top features:

silhouette
    How well the selected features separate clusters: the mean silhouette of ten seeded
    k-means++ partitions (``n_clusters`` clusters) of the selected columns.
embedding fit
    How well the selected features reproduce the cluster structure of all features: the
    ``R^2`` of the least-squares fit, with an intercept, of the Laplacian eigenmap of all
    features on the selected columns, ``1 - ||Y - [1, X_S] B||_F^2 / ||Y - 1 mean(Y)||_F^2``.
    The eigenmap ``Y`` is the ``n_clusters - 1`` non-trivial eigenvectors of
    ``L y = lambda D y`` on the 5-nearest-neighbour heat-kernel graph (MCFS's graph): with
    the constant vector they span the indicators of ``n_clusters`` well-separated clusters
    (spectral clustering's subspace), so a further eigenvector would add structure other
    than the clusters.

and three criteria (:data:`CRITERIA`): ``"silhouette"`` and ``"embedding_fit"`` (one
measure each), and ``"mean_rank"`` (the default): the mean of a setting's ranks among
the grid's settings under the two measures (average ranks for ties), a setting both rate
high. It is relative to the grid: a setting's score depends on the other settings.

All read the data as the selector scales it (min-max by default). A fit that warns
:class:`~causefs.CollapseWarning` (its ranking is the ``eps`` floor's, not the model's)
is not a candidate and is not ranked.

How far each criterion's choice falls from the label-tuned best, and how the default was
chosen (fixed before the subsamples it was checked on), is in ``docs/RESULTS.md``
("Choosing hyperparameters without labels"; ``benchmarks/label_free_search.py``,
``benchmarks/label_free_choice.py``).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, clone
from sklearn.cluster import KMeans
from sklearn.feature_selection import SelectorMixin
from sklearn.metrics import silhouette_score
from sklearn.model_selection import ParameterGrid
from sklearn.utils.validation import check_is_fitted, validate_data

from .core.validation import Interval, InvalidParameterError, check_choice, check_value
from .estimator import CollapseWarning, check_aligned
from .model.nuisance_coding import code_nuisance
from .numerics.nuisance_effects import nuisance_regression
from .numerics.scaling import scale_features
from .selectors.affinity import SpectralGraph, knn_affinity
from .selectors.base import ranking_from_scores, takes_nuisance

CRITERIA = ("mean_rank", "silhouette", "embedding_fit")
#: the measures of a setting's top features each criterion reads
MEASURES = {"mean_rank": ("silhouette", "embedding_fit"), "silhouette": ("silhouette",),
            "embedding_fit": ("embedding_fit",)}
#: k-means partitions the silhouette criterion averages over
SILHOUETTE_PARTITIONS = 10


def cluster_embedding(X, n_clusters: int, *, n_neighbors: int = 5, random_state=0):
    """The cluster embedding of ``X`` (n, d): shape (n, n_clusters - 1).

    The ``n_clusters - 1`` eigenvectors of ``L y = lambda D y`` with the smallest
    non-trivial eigenvalues, on the symmetric ``n_neighbors``-nearest-neighbour
    heat-kernel graph (:func:`~causefs.selectors.affinity.knn_affinity`).
    """
    graph = SpectralGraph.from_affinity(knn_affinity(X, n_neighbors=n_neighbors))
    return graph.laplacian_eigenmap(n_clusters - 1, random_state)


def embedding_fit(X, features, embedding) -> float:
    """``R^2`` of the least-squares fit of ``embedding`` (n, c) on ``X[:, features]``
    with an intercept: 1 for features that reproduce it exactly, 0 for features that
    explain none of it."""
    Xs = np.asarray(X[:, features], dtype=float)
    Y = np.asarray(embedding, dtype=float)
    design = np.column_stack([np.ones(Xs.shape[0]), Xs])
    coef, *_ = np.linalg.lstsq(design, Y, rcond=None)
    total = np.sum((Y - Y.mean(axis=0)) ** 2)
    return float(1.0 - np.sum((Y - design @ coef) ** 2) / total)


def silhouette(X, features, n_clusters: int, random_state=0) -> float:
    """Mean silhouette of :data:`SILHOUETTE_PARTITIONS` k-means++ partitions of
    ``X[:, features]`` (seeds drawn from ``random_state``); a partition that finds a
    single cluster counts -1."""
    Xs = np.asarray(X[:, features], dtype=float)
    seeds = np.random.default_rng(random_state).integers(2**31 - 1, size=SILHOUETTE_PARTITIONS)
    values = []
    for seed in seeds:
        labels = KMeans(n_clusters=n_clusters, n_init=1, random_state=seed).fit_predict(Xs)
        values.append(silhouette_score(Xs, labels) if np.unique(labels).size > 1 else -1.0)
    return float(np.mean(values))


def top_features(selector, k: int) -> np.ndarray:
    """The ``k`` best features of a fitted selector: by ``ranking_`` (1 = best) when it
    has one, else by ``scores_`` (higher first, ties by index)."""
    if hasattr(selector, "ranking_"):
        return np.argsort(np.asarray(selector.ranking_), kind="stable")[:k]
    if hasattr(selector, "scores_"):
        return ranking_from_scores(selector.scores_)[:k]
    raise TypeError(f"{type(selector).__name__} has neither ranking_ nor scores_ after "
                    "fit: LabelFreeSearch cannot read its selection")


def criterion_scores(criterion: str, measured: list) -> np.ndarray:
    """Every setting's score under ``criterion`` from the measures of its top features
    (``measured[i]``: a dict of the measures :data:`MEASURES` names, or None for a
    collapsed fit, scored ``-inf``). ``"mean_rank"``: the mean of the settings' ranks
    (1 = lowest) under each measure, among the settings not collapsed."""
    check_choice("criterion", criterion, CRITERIA)
    scores = np.full(len(measured), -np.inf)
    valid = [i for i, values in enumerate(measured) if values is not None]
    if not valid:
        return scores
    if criterion == "mean_rank":
        ranks = [rankdata([measured[i][name] for i in valid]) for name in MEASURES[criterion]]
        scores[valid] = np.mean(ranks, axis=0)
    else:
        scores[valid] = [measured[i][criterion] for i in valid]
    return scores


class LabelFreeCriterion:
    """One of :data:`CRITERIA` bound to a dataset: :meth:`measure` reads a selection of
    columns of ``X`` without labels, :meth:`scores` turns a grid's measures into its
    scores (higher is better).

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The data as given to the selector (not scaled).
    n_clusters : int
        Clusters of the criterion (k-means clusters; the embedding has ``n_clusters - 1``
        dimensions).
    criterion : {"mean_rank", "silhouette", "embedding_fit"}, default "mean_rank"
    preprocessing : {"minmax", "standard", "none"}, default "minmax"
        The scaling the selector applied (:func:`~causefs.numerics.scaling.scale_features`).
    n_neighbors : int, default 5
        Neighbours of the embedding's graph (``mean_rank`` and ``embedding_fit``).
    max_samples : int, default 10000
        At most this many rows are read (a seeded subsample above it; sparse rows are
        densified).
    random_state : int, default 0
        Seeds the subsample, the eigensolver's start vector and the k-means starts.
    nuisance : ndarray of shape (n_samples, q), optional
        Coded nuisance variables (:func:`~causefs.model.nuisance_coding.code_nuisance`):
        the measures then read the scaled data with Z's linear effect removed (the
        residuals of each feature's least-squares fit on ``[1, Z]``, its mean kept), so
        features that only follow Z do not score as clusters.

    Raises
    ------
    InvalidParameterError
        An unknown criterion, ``n_clusters`` not below the rows read, or too few rows for
        ``n_neighbors``.
    """

    def __init__(self, X, n_clusters: int, criterion: str = "mean_rank", *,
                 preprocessing: str = "minmax", n_neighbors: int = 5,
                 max_samples: int = 10000, random_state=0, nuisance=None):
        self.name = check_choice("criterion", criterion, CRITERIA)
        self.n_clusters, self.random_state = n_clusters, random_state
        n = X.shape[0]
        rows = np.arange(n)
        if n > max_samples:
            rng = np.random.default_rng(random_state)
            rows = np.sort(rng.choice(n, size=max_samples, replace=False))
        Xc = X[rows]
        self.X = scale_features(Xc.toarray() if sp.issparse(Xc) else np.asarray(Xc),
                                preprocessing)
        if nuisance is not None:
            Z = nuisance[rows]
            Z = Z - Z.mean(axis=0)
            self.X = self.X - Z @ nuisance_regression(self.X, Z, shrink=False)
        if n_clusters >= self.X.shape[0]:
            raise InvalidParameterError(f"n_clusters={n_clusters}: needs more samples than "
                                        f"clusters, got {self.X.shape[0]}")
        self.embedding = None
        if "embedding_fit" in MEASURES[self.name]:
            if n_neighbors > self.X.shape[0] - 1:
                raise InvalidParameterError(f"n_neighbors={n_neighbors}: needs at least "
                                            f"{n_neighbors + 1} samples, got {self.X.shape[0]}")
            self.embedding = cluster_embedding(self.X, n_clusters, n_neighbors=n_neighbors,
                                               random_state=random_state)

    def measure(self, features) -> dict:
        """The measures (:data:`MEASURES`) of the columns ``features`` of ``X``."""
        values = {}
        if self.embedding is not None:
            values["embedding_fit"] = embedding_fit(self.X, features, self.embedding)
        if "silhouette" in MEASURES[self.name]:
            values["silhouette"] = silhouette(self.X, features, self.n_clusters,
                                              self.random_state)
        return values

    def scores(self, measured: list) -> np.ndarray:
        """Every setting's score from :meth:`measure`'s results (None: collapsed), in
        order (:func:`criterion_scores`)."""
        return criterion_scores(self.name, measured)


class LabelFreeSearch(SelectorMixin, BaseEstimator):
    """Grid search over a selector's settings, scored without labels.

    Every setting of ``param_grid`` is fitted on all of ``X``; the one whose top
    ``n_features_to_select`` features score highest under ``criterion`` is kept (see the
    module's docstring for the criteria).

    Parameters
    ----------
    estimator : selector
        A scikit-learn selector with ``ranking_`` or ``scores_`` after ``fit(X)``, such
        as :class:`~causefs.CauseFS`; cloned for every setting.
    param_grid : dict or list of dict
        As :class:`~sklearn.model_selection.ParameterGrid` takes it
        (``{"alpha": [0.1, 1, 10], "n_neighbors": [5, 10]}``).
    n_features_to_select : int, optional
        How many top features the criterion reads. Default: the estimator's own
        ``n_features_to_select`` when it is an int, else 20.
    n_clusters : int, optional
        Clusters (embedding dimension, k-means clusters) of the criterion. Default: the
        estimator's ``n_clusters``.
    criterion : {"mean_rank", "silhouette", "embedding_fit"}, default "mean_rank"
        See the module's docstring; ``mean_rank`` scores a setting relative to the
        grid's other settings.
    n_neighbors : int, default 5
        Neighbours of the embedding's graph (``mean_rank`` and ``embedding_fit``).
    max_samples : int, default 10000
        The criterion reads at most this many samples (a seeded subsample above it: the
        embedding's graph is a kNN graph of those rows). Sparse ``X`` is densified on
        those rows.
    random_state : int, default 0
        Seeds the subsample, the eigensolver's start vector and the k-means starts (the
        estimator's own seed is its parameter).

    Attributes
    ----------
    results_ : dict of lists
        One entry per setting, in grid order: ``params``, ``score`` (the criterion;
        ``-inf`` for a collapsed fit), the measures the criterion reads (``silhouette``,
        ``embedding_fit``; ``-inf`` for a collapsed fit), ``collapsed``,
        ``fit_seconds``, ``features`` (top ``n_features_to_select`` indices, best first).
    best_index_ : int
    best_params_ : dict
    best_score_ : float
    best_estimator_ : selector
        The fitted estimator of the best setting (not refitted: it is the fit scored).
    n_features_in_ : int

    Raises
    ------
    ValueError
        In ``fit``, when every setting's fit collapsed (no candidate).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from causefs import CauseFS
    >>> from causefs.model_selection import LabelFreeSearch
    >>> X = load_digits().data[:300]
    >>> search = LabelFreeSearch(CauseFS(n_clusters=10, n_features_to_select=20),
    ...                          {"alpha": [0.1, 1.0, 10.0]}).fit(X)
    >>> search.transform(X).shape
    (300, 20)
    """

    def __init__(self, estimator, param_grid, *, n_features_to_select=None, n_clusters=None,
                 criterion="mean_rank", n_neighbors=5, max_samples=10000,
                 random_state=0):
        self.estimator = estimator
        self.param_grid = param_grid
        self.n_features_to_select = n_features_to_select
        self.n_clusters = n_clusters
        self.criterion = criterion
        self.n_neighbors = n_neighbors
        self.max_samples = max_samples
        self.random_state = random_state

    def _resolved(self, n_features: int) -> tuple[int, int]:
        """``(n_features_to_select, n_clusters)`` with the estimator's defaults, checked."""
        own = self.estimator.get_params()
        k = self.n_features_to_select
        if k is None:
            given = own.get("n_features_to_select")
            k = given if isinstance(given, (int, np.integer)) else 20
        k = check_value("n_features_to_select", k, Interval(int, 1))
        if k > n_features:
            raise InvalidParameterError(f"n_features_to_select={k}: exceeds the "
                                        f"{n_features} features of X")
        c = self.n_clusters if self.n_clusters is not None else own.get("n_clusters")
        if c is None:
            raise InvalidParameterError("n_clusters: the estimator has none; give "
                                        "LabelFreeSearch(n_clusters=...)")
        return k, check_value("n_clusters", c, Interval(int, 2))

    def fit(self, X, y=None, *, nuisance=None):
        """Fit every setting on ``X`` (n_samples, n_features) and keep the best.

        ``y`` is ignored (present for pipelines). ``nuisance``: known nuisance variables
        Z, as :meth:`causefs.CauseFS.fit` takes them; every setting is fitted with them,
        and the criterion reads the data with Z's linear effect removed
        (:class:`LabelFreeCriterion`). In a :class:`~sklearn.pipeline.Pipeline`, with
        metadata routing enabled, request it with ``set_fit_request(nuisance=True)``."""
        check_choice("criterion", self.criterion, CRITERIA)
        check_value("n_neighbors", self.n_neighbors, Interval(int, 1))
        check_value("max_samples", self.max_samples, Interval(int, 2))
        check_aligned(X, nuisance)  # before X's pandas index is dropped
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64,
                          ensure_min_samples=2)
        k, n_clusters = self._resolved(X.shape[1])
        fit_params = {}
        if nuisance is not None:
            if not takes_nuisance(self.estimator.fit):
                raise InvalidParameterError(
                    f"nuisance: {type(self.estimator).__name__}.fit takes no nuisance "
                    "variables; choose a selector that does (CauseFS) or pass none")
            fit_params["nuisance"] = nuisance
        coded = None if nuisance is None else code_nuisance(nuisance, X.shape[0])
        settings = list(ParameterGrid(self.param_grid))
        if not settings:
            raise InvalidParameterError("param_grid: has no setting")
        criterion = LabelFreeCriterion(
            X, n_clusters, self.criterion,
            preprocessing=self.estimator.get_params().get("preprocessing", "minmax"),
            n_neighbors=self.n_neighbors, max_samples=self.max_samples,
            random_state=self.random_state, nuisance=coded)
        results = {"params": [], "collapsed": [], "fit_seconds": [], "features": []}
        measured, fitted = [], []
        for params in settings:
            selector, seconds, collapsed = self._fit_one(X, params, fit_params)
            features = top_features(selector, k)
            measured.append(None if collapsed else criterion.measure(features))
            fitted.append(selector)
            for key, value in (("params", params), ("collapsed", collapsed),
                               ("fit_seconds", seconds), ("features", features)):
                results[key].append(value)
        scores = criterion.scores(measured)
        if np.all(scores == -np.inf):
            raise ValueError(f"every one of the {len(settings)} settings collapsed "
                             "(CollapseWarning): no setting to choose; widen the grid "
                             "towards larger alpha or smaller lam")
        results["score"] = scores.tolist()
        for name in MEASURES[criterion.name]:
            results[name] = [-np.inf if m is None else m[name] for m in measured]
        self.results_ = results
        self.best_index_ = int(np.argmax(scores))  # the first of tied settings
        self.best_params_ = results["params"][self.best_index_]
        self.best_score_ = float(scores[self.best_index_])
        self.best_estimator_ = fitted[self.best_index_]
        return self

    def _fit_one(self, X, params, fit_params):
        """A clone of the estimator fitted with ``params`` (and ``fit_params``):
        ``(selector, seconds, collapsed)``; warnings other than CollapseWarning reach the
        caller as they were."""
        selector = clone(self.estimator).set_params(**params)
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CollapseWarning)
            selector.fit(X, **fit_params)
        seconds = time.perf_counter() - start
        collapsed = False
        for record in caught:
            if issubclass(record.category, CollapseWarning):
                collapsed = True
            else:
                warnings.warn_explicit(record.message, record.category, record.filename,
                                       record.lineno)
        return selector, seconds, collapsed

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        # what the data may hold is what the estimator accepts (it fits X as given)
        inner = self.estimator.__sklearn_tags__().input_tags
        tags.input_tags.sparse, tags.input_tags.allow_nan = inner.sparse, inner.allow_nan
        return tags

    def _get_support_mask(self):
        check_is_fitted(self, "best_estimator_")
        if hasattr(self.best_estimator_, "get_support"):
            return self.best_estimator_.get_support()
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.results_["features"][self.best_index_]] = True
        return mask

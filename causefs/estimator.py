"""scikit-learn selector: :class:`CauseFS` and the score function :func:`causefs_scores`."""

from __future__ import annotations

import contextlib
import logging
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from .blocks.initialization.initial_graphs import InitialFusedGraphBlock
from .budget import ANNOUNCED_FIT_SECONDS, LONG_FIT_SECONDS, check_memory, per_feature_floor
from .budget.memory import available_memory
from .core.progress import Heartbeat
from .core.validation import masked_positions
from .engine import build_parts, estimate, objective_spec, run_cause_fs, uses_nuisance
from .model.diagnostics import weight_diagnostics
from .model.nuisance_coding import NuisanceWarning, code_nuisance
from .model.settings import DEFAULTS, Settings, setting_names
from .numerics.correlation import decorrelated_order
from .numerics.anchors import resolve_anchors
from .numerics.given_neighbors import check_neighbors
from .numerics.nuisance_effects import cluster_evidence, variance_share
from .numerics.scaling import constant_features, scale_features
from .numerics.sparse import column_nonzeros
from .numerics.allocation import retained_memory, worth_retaining
from .numerics.threads import fit_threads

logger = logging.getLogger("causefs")


class CollapseWarning(UserWarning):
    """W shrank to the eps floor: the ranking then depends on eps alone."""


class LongFitWarning(UserWarning):
    """The fit is estimated to take long (:func:`causefs.budget.estimate_fit`)."""


class NuisanceUnusedWarning(UserWarning):
    """Nuisance variables were given to a schedule that has no block using them."""


@contextlib.contextmanager
def _progress(max_iter: int, verbose: bool):
    """With ``verbose``, a tqdm bar over loop iterations (shown on a terminal only), with
    log records written above it, not into it; yields the scheduler's callback."""
    if not verbose:
        yield None
        return
    from tqdm.auto import tqdm
    from tqdm.contrib.logging import logging_redirect_tqdm

    done = [0]
    with logging_redirect_tqdm(), tqdm(total=max_iter, desc="CAUSE-FS", unit="it",
                                       leave=False, disable=None) as bar:
        def callback(record):
            if record["iteration"] > done[0]:  # the first block of a new iteration
                bar.update(record["iteration"] - done[0])
                done[0] = record["iteration"]
            if record["objective"] is not None and record["kind"] != "init":
                bar.set_postfix(J=f"{record['objective']:.6g}", refresh=False)

        yield callback


def _how_to_follow(verbose: bool) -> str:
    """How to see a long fit's progress, given ``verbose`` and the logging setup."""
    if not verbose:
        return "verbose=True shows its progress"
    if logger.isEnabledFor(logging.INFO) and logger.hasHandlers() \
            and not all(isinstance(h, logging.NullHandler) for h in _handlers(logger)):
        return "its progress is logged as it runs"
    return ("its progress is logged at INFO on the 'causefs' logger, which nothing shows "
            "here: logging.basicConfig(level=logging.INFO) shows it (the progress bar "
            "shows on a terminal only)")


def _handlers(log: logging.Logger) -> list:
    """The handlers a record of ``log`` reaches (its own and its ancestors')."""
    found = []
    while log is not None:
        found += log.handlers
        log = log.parent if log.propagate else None
    return found


class CauseFS(SelectorMixin, BaseEstimator):
    """Causally-aware unsupervised feature selection (CAUSE-FS).

    Learns a row-sparse feature selection matrix W jointly with a spectral embedding,
    multi-granular adaptive similarity graphs and confounder-balancing sample weights
    (Shen et al., "Causally-Aware Unsupervised Feature Selection Learning"); features
    are ranked by ``||W_f||_2``. The optimization is a schedule of swappable blocks
    (:mod:`causefs.blocks`), kernels and QP backends resolved through the plugin
    registry. Defaults and constraints of every parameter are one table,
    :class:`causefs.model.settings.Settings`.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters ``c`` = dimension ``h`` of the embedding; usually the number
        of classes expected.
    n_features_to_select : int, float or None, default=None
        Features kept by :meth:`transform`: an int, a fraction in (0, 1], or None for
        half of the features.
    alpha : float, default=1.0
        Weight of the regression term ``||X~ W - F||^2``.
    beta : float, default=1e-4
        Weight of the confounder-balance term.
    lam : float, default=1.0
        Weight of the l2,1 row-sparsity term (``lambda`` in the paper; a Python keyword).

        The defaults of alpha, beta and lam (with ``sample_weights="mean_one"``) were
        chosen on JAFFE, UMIST, COIL20 and a 2000-sample USPS subset by
        ``benchmarks/choose_defaults.py`` (docs/MODEL.md, "Default hyperparameters");
        alpha, lam and n_neighbors were checked again on the 13 datasets of the
        development benchmark, where no single change of one of them raised the mean ACC
        (``benchmarks/default_settings_check.py``; docs/MODEL.md, "The default's
        settings on the development benchmark").
    n_neighbors : int, default=5
        Neighbours ``k`` per column of every similarity graph.
    n_anchors : "auto", int or None, default="auto"
        Anchor graphs for large n (:mod:`causefs.numerics.anchors`): with an int m, the
        fit draws m anchor samples (seeded by ``random_state``) and every graph links
        each sample to its nearest anchors only, an exact search of n points against m
        instead of a search among all n (a smaller feasible set for the graphs: another
        model, measured in docs/PERFORMANCE.md, "Anchor graphs"). None: every sample is
        a candidate neighbour (the paper). ``"auto"``: None up to
        :data:`~causefs.numerics.anchors.ANCHOR_N` samples, beyond it
        :data:`~causefs.numerics.anchors.AUTO_ANCHORS` anchors, and None when the fit is
        given ``neighbors``.
    eps : float, default=1e-8
        Smoothing of the l2,1 norm, ``sqrt(||W_f||^2 + eps)``.
    sigma : float, default=0.2
        Threshold on normalized correlation below which a feature is an adjustment
        variable, not a confounder.
    max_treatments : "auto", int or None, default="auto"
        Bound on the treatments of the balance term, the top features by ``||W_f||``
        (:mod:`causefs.model.treatments`): ``"auto"`` keeps all of them while ``n * d * d``
        stays within :data:`~causefs.model.treatments.TREATMENT_BUDGET` (JAFFE) and
        otherwise as many as that budget allows (at least
        :data:`~causefs.model.treatments.MIN_TREATMENTS`); None keeps all (the paper,
        O(n d^2) per balance product).
    sample_weights : {"mean_one", "simplex"}, default="mean_one"
        ``simplex``: ``sum(mu) = 1`` as in the paper; ``mean_one``: ``sum(mu) = n``, the
        same model with lambda and beta rescaled so one setting works across n.
    schedule : str, mapping or Schedule, default="auto"
        Registered schedule (``full``, ``ablation_I``, ``ablation_II``, ``dwr``,
        ``srdo``; ``nuisance_adjusted``, ``nuisance_centered``, ``nuisance_balanced``,
        which need nuisance variables) or a custom one, whose entries may be block
        instances. ``"auto"`` is ``ablation_I`` (CAUSE-FS-I: the paper's Algorithm 1
        without its balance term and sample weights) for a fit without nuisance
        variables and ``nuisance_adjusted`` (the same loop adjusted for Z) for a fit
        given them (:meth:`fit`'s ``nuisance``); each the schedule measured best,
        docs/RESULTS.md. ``"full"`` is the paper's Algorithm 1.
    kernel : str, mapping or Kernel, default="linear"
        MMD kernel (``linear``, ``rbf``); a mapping passes options,
        ``{"name": "rbf", "n_components": 100}``.
    qp : str, mapping or QPBackend, default="gradient_projection_cg"
        Backend of the mu QP: ``gradient_projection_cg`` (matrix-free GPCG, the
        fastest measured), ``projected_gradient`` (matrix-free accelerated projected
        gradient) or ``cvxpy`` (the dense reference).
    max_iter : int, default=30
        Most loop iterations (the authors' demo runs 30).
    tol : float, default=1e-5
        Stop when the objective's relative change between iterations is below tol.
    patience : int or None, default=3
        Also stop when the ``n_features_to_select`` best features have been the same
        after ``patience`` consecutive iterations (None: the objective's change only);
        from 100 features selected on, 1 % of them may change over those iterations
        (:class:`~causefs.model.stopping.SelectionStable`).
    structure_iter : int or None, default=3
        The structural blocks (regrouping the features, re-selecting the confounders)
        run in the first ``structure_iter`` iterations, or until a stopping rule is first
        met; the structure is then frozen and the rules start over on the frozen
        objective. None runs them every iteration, as the paper's Algorithm 1 (its
        objective then oscillates with the structure: docs/MODEL.md, "Convergence").
    preprocessing : {"minmax", "standard", "none"}, default="minmax"
        Per-feature scaling applied in ``fit``.
    max_granularity : int, default=10
        Largest number of feature granularities M, each with its own graph S[m] built
        every iteration. M is the Calinski-Harabasz choice over 2..``max_granularity``;
        on the contributions of every dataset measured that score rose with M, so the
        fits took M = ``max_granularity``. 3 builds fewer graphs (USPS 9.4 s for 13.5)
        and moves the selection (docs/MODEL.md, "The number of granularities").
    max_correlation : float in (0, 1) or None, default=None
        Spread the ``n_features_to_select`` selected features over correlated blocks:
        walking the features by score, one whose ``|corr|`` with a feature already
        taken exceeds ``max_correlation`` is passed over (it ranks after the selected
        ones; :func:`causefs.numerics.correlation.decorrelated_order`). None ranks by
        score alone. If fewer features pass than are selected, the passed-over ones
        fill the rest by score.
    cluster_screen : float in (0, 1] or None, default=0.01
        In a fit that adjusts for nuisance variables Z: features whose mean does not
        differ between the clusters the fit finds, beyond what Z explains, rank after
        every feature whose mean does (``carries_clusters_``). The clusters are found by
        k-means with a shift per value of Z (8 starts) on the ``4 * n_clusters``
        features of highest score; every feature gets the partial F test of the cluster
        indicators beside Z, at family-wise level ``cluster_screen`` (Bonferroni: each
        at ``cluster_screen / n_features``). A feature only Z explains (a batch
        effect) or nothing does (noise) is then never selected before one that carries
        the clusters, which the adjustment alone does not ensure when a strong nuisance
        steers the first iterations (docs/MODEL.md, "Known nuisance variables").
        Assumes the clusters on the selected features are the structure sought. None
        ranks by score alone; ignored without Z.
    treatment : {"median", "mean"}, default="median"
        Split of each feature into treated and control samples.
    mmd_normalization : {"group", "paper"}, default="group"
        Treatment coding ``a_r`` (see
        :func:`causefs.model.treatments.treatment_coding`).
    neighbor_algorithm : str, default="auto"
        Nearest-neighbour search for graph candidates: ``auto`` is exact up to
        :data:`~causefs.numerics.neighbors.FRESH_EXACT_N` samples, and up to
        :data:`~causefs.numerics.neighbors.TREE_N` for points of at most
        :data:`~causefs.numerics.neighbors.TREE_DIMS` dimensions (the graph updates
        search the n_clusters-dimensional embeddings: a k-d tree); beyond it is
        approximate (a local search warm-started from the graph being replaced, or,
        where there is none yet, brute force up to
        :func:`~causefs.numerics.neighbors.fresh_exact_limit` points of that many
        dimensions and a faiss HNSW index beyond; recall measured inside fits in
        docs/PERFORMANCE.md); ``approximate`` (those approximate
        searches at every n), ``exact`` (brute force), ``kd_tree`` (exact),
        scikit-learn's ``brute`` and ``ball_tree``, or ``all`` for the dense
        paper-literal reference.
    balance_form : {"auto", "products", "gram"}, default="auto"
        How the mu problem holds the balance Hessian H: ``products`` only multiplies by
        it (matrix-free, memory linear in n); ``gram`` forms it once per confounder set as
        a dense (n, n) array; ``auto`` forms it when that costs less than 10 products and
        takes at most 1 GiB (n <= 11,585), else uses products.
    memory_limit : "auto", int, str or None, default="auto"
        Budget for the estimated peak memory of the fit (:mod:`causefs.budget`):
        ``"auto"`` is 80% of what the process may allocate when ``fit`` starts (the
        least of the machine's available memory, the headroom of its memory cgroup and
        its address-space limit: :mod:`causefs.budget.system_memory`), an int is bytes,
        a string like ``"8GB"``; None disables the check. A fit over budget raises
        :class:`~causefs.budget.MemoryLimitError` naming a setting that would fit.
    trace : bool, default=False
        Evaluate the objective after every block (``trace_`` then has it per block);
        otherwise once per iteration, which is all convergence needs.
    check : {"cheap", "strict"}, default="cheap"
        Run-time checks of the blocks (:func:`causefs.core.loop.run_schedule`):
        ``strict`` also verifies, after every block, its declared writes, that it did not
        mutate its input and, for a descent block, that the objective did not rise,
        naming the block that broke its contract. For testing blocks of a plugin.
    stability_subsamples : int, default=0
        Stability selection (Meinshausen & Buehlmann, 2010): refit on this many random
        halves of the samples (drawn without replacement, seeded by ``random_state``)
        and record how often each feature is among the ``n_features_to_select`` best
        (``selection_frequency_``). Each subsample is a whole fit on n/2 samples, so
        the fit costs about ``1 + stability_subsamples / 2`` times as much (or more:
        the graph steps grow faster than n); 0 skips it. 20 to 50 subsamples give
        frequencies to about +-0.1. A half whose nuisance variables cannot be coded (a
        rare level left out, more columns than n/2 samples estimate) is a ValueError
        naming this setting.
    random_state : int, RandomState or None, default=None
        Seeds every random choice (eigensolver start, random features); the same seed
        gives the same selection.
    verbose : bool, default=False
        Show a progress bar (on a terminal) and log the fit's progress at INFO on the
        ``causefs`` logger (iteration, objective, time left), written above the bar;
        ``False`` is silent (progress is logged at DEBUG).

    Attributes
    ----------
    scores_ : ndarray of shape (n_features,)
        ``||W_f||_2``; 0 for constant features.
    ranking_ : ndarray of shape (n_features,)
        Rank of every feature, 1 = highest score (ties broken by index; features
        with ``carries_clusters_`` False after all others; with
        ``max_correlation`` the decorrelated order of the first
        ``n_features_to_select``), as in
        :class:`~sklearn.feature_selection.RFE`; ``np.argsort(ranking_)`` lists the
        features best first.
    support_ : ndarray of shape (n_features,), bool
        The ``n_features_to_select`` best features.
    W_ : ndarray of shape (n_features, n_clusters)
        Feature selection matrix (zero rows for constant features).
    settings_ : causefs.model.settings.Settings
        The settings the fit ran with: the parameters, with the schedule's ``defaults``
        where a parameter was left at the library's default (a value you set is never
        replaced; :func:`causefs.engine.resolve_settings`).
    terms_ : list of dict
        The objective's terms, each ``{"name": ..., **options}`` with its weight (the
        schedule's ``terms``; ``ablation_I`` has no balance term).
    sample_weight_ : ndarray of shape (n_samples,)
        Learned sample weights mu (uniform, all ones, for a schedule without the
        ``sample_weights`` block, the default's among them).
    schedule_ : str
        The name of the schedule the fit ran (``"auto"`` resolved: ``ablation_I`` or
        ``nuisance_adjusted``).
    selection_frequency_ : ndarray of shape (n_features,) or None
        The fraction of ``stability_subsamples`` subsample fits in which each feature
        was among the ``n_features_to_select`` best; None when not computed
        (``stability_subsamples=0``).
    nuisance_share_ : ndarray of shape (n_features,) or None
        The share of each (scaled) feature's variance that the nuisance variables
        explain in the data as given (R^2 of the feature on the coded Z; for labels the
        between-level share); 0 for constant features; None without nuisance variables.
    nuisance_share_adjusted_ : ndarray of shape (n_features,) or None
        The same share in the data the model fitted, after the fit's adjustment
        (``X - Z Theta``; equal to ``nuisance_share_`` for a schedule that does not
        adjust the data); None without nuisance variables.
    carries_clusters_ : ndarray of shape (n_features,), bool, or None
        Whether each feature's mean differs between the clusters found after the loop
        given Z, beyond what Z explains (partial F test at ``cluster_screen /
        n_features``; docs/MODEL.md); the others rank last: a feature that only Z
        explains, or nothing does, is not selected before one that carries the
        clusters. False for constant features; None without Z, with a schedule that
        does not use Z, or with ``cluster_screen=None``.
    nuisance_effect_ : ndarray of shape (q, n_features) or None
        The effect of the coded nuisance variables on every (scaled) feature that the fit
        removed (``Theta``, docs/MODEL.md), 0 for constant features; None for a fit
        without nuisance variables or a schedule that did not estimate one.
    diagnostics_ : causefs.model.diagnostics.WeightDiagnostics
        What the sample weights did: effective sample size, share of zero weights, the
        balance term at uniform and fitted weights, per-treatment imbalance before and
        after (per non-constant feature); ``print(est.diagnostics_)`` gives one line.
    groups_ : ndarray of shape (n_features,)
        Feature granularity of every feature, -1 for constant features and for
        schedules without granularities.
    confounders_ : scipy.sparse.csr_array of shape (n_features, n_features), bool
        ``confounders_[f, r]``: feature f is a confounder of treatment r.
    objective_history_ : ndarray
        Objective after the initialization and after every iteration.
    trace_ : list of dict
        Per block: iteration, block, kind, seconds, and the objective and its terms
        (after every block with ``trace=True``, else after the last block of each
        iteration; None elsewhere).
    n_iter_ : int
        Loop iterations run.
    converged_ : bool
        Whether a stopping rule (``tol`` or ``patience``) was met within ``max_iter``;
        when not, the fit warns (:class:`sklearn.exceptions.ConvergenceWarning`).
    stop_reason_ : str
        The rule that stopped the loop, or ``"max_iter reached"``.
    structure_frozen_at_ : int or None
        The last iteration in which the structural blocks ran, when the structure was
        frozen before the loop ended.
    memory_estimate_ : int
        Estimated peak bytes of the fit (checked against ``memory_limit``).
    time_estimate_ : float
        Estimated seconds of the fit, an order of magnitude (measured within 3x either
        way), summed over the parts of the schedule (:func:`causefs.budget.estimate_fit`);
        above a minute the fit logs it at INFO before it starts, above 10 minutes it
        warns (a :class:`LongFitWarning` and a log message). While it runs, a block
        that runs longer than a few seconds is logged at INFO every 5 to 30 s
        (:class:`causefs.core.progress.Heartbeat`), and the iterations at most every 5 s.
    n_features_in_ : int
    feature_names_in_ : ndarray of str
        Present when ``X`` has string feature names.
    """

    def __init__(self, n_clusters=DEFAULTS.n_clusters,
                 n_features_to_select=DEFAULTS.n_features_to_select, *,
                 alpha=DEFAULTS.alpha, beta=DEFAULTS.beta, lam=DEFAULTS.lam,
                 n_neighbors=DEFAULTS.n_neighbors, n_anchors=DEFAULTS.n_anchors,
                 eps=DEFAULTS.eps, sigma=DEFAULTS.sigma, max_treatments=DEFAULTS.max_treatments,
                 sample_weights=DEFAULTS.sample_weights, schedule=DEFAULTS.schedule,
                 kernel=DEFAULTS.kernel, qp=DEFAULTS.qp, max_iter=DEFAULTS.max_iter,
                 tol=DEFAULTS.tol, patience=DEFAULTS.patience,
                 structure_iter=DEFAULTS.structure_iter, preprocessing=DEFAULTS.preprocessing,
                 max_granularity=DEFAULTS.max_granularity,
                 max_correlation=DEFAULTS.max_correlation,
                 cluster_screen=DEFAULTS.cluster_screen, treatment=DEFAULTS.treatment,
                 mmd_normalization=DEFAULTS.mmd_normalization,
                 neighbor_algorithm=DEFAULTS.neighbor_algorithm,
                 balance_form=DEFAULTS.balance_form, memory_limit=DEFAULTS.memory_limit,
                 trace=DEFAULTS.trace, check=DEFAULTS.check,
                 stability_subsamples=DEFAULTS.stability_subsamples,
                 random_state=DEFAULTS.random_state, verbose=DEFAULTS.verbose):
        params = dict(locals())
        del params["self"]
        for name, value in params.items():  # stored as given (scikit-learn's convention)
            setattr(self, name, value)

    def settings(self) -> Settings:
        """The parameters as :class:`~causefs.model.settings.Settings`, checked.

        Raises
        ------
        InvalidParameterError
            Naming the first parameter that breaks its constraint.
        """
        return Settings(**{name: getattr(self, name) for name in setting_names()})

    def fit(self, X, y=None, *, nuisance=None, neighbors=None):
        """Learn the feature scores from ``X``, adjusting for ``nuisance`` if given.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Unlabeled data; NaN and inf are rejected. Sparse data stay sparse where the
            fit only multiplies by them, when every part of the schedule accepts sparse
            data (:attr:`causefs.core.parts.Part.accepts_sparse`; the built-in schedules
            do but ``dwr`` and ``srdo``) and the scaling keeps zeros at zero (``minmax``
            on non-negative data, ``none``); otherwise they are densified. The user
            guide's "Sparse data" page lists the steps that densify and their memory.
        y : None
            Ignored (unsupervised).
        nuisance : array-like of shape (n_samples,) or (n_samples, n_variables), optional
            Known nuisance variables Z: environment labels (batch, site, camera,
            background) or observed covariates whose effect on the features is not of
            interest. Integer, boolean or string columns are categories (one indicator
            per level but the first), float columns are covariates with a linear effect
            (centred, unit variance); a DataFrame is coded column by column
            (:mod:`causefs.model.nuisance_coding`). With ``schedule="auto"`` they select the
            ``nuisance_adjusted`` schedule. In a :class:`~sklearn.pipeline.Pipeline`,
            with metadata routing enabled, request it with
            ``CauseFS(...).set_fit_request(nuisance=True)``.
        neighbors : sparse matrix of shape (n_samples, n_samples) or object, optional
            Neighbours of the samples made elsewhere, for the initial fused graph (its
            search on all features, on the raw data): a kNN graph whose row
            i stores the neighbours of sample i (as ``sklearn.neighbors.kneighbors_graph``
            makes it, either mode; at least ``n_neighbors + 1`` a row), or an
            object with scikit-learn's ``NearestNeighbors`` interface, fitted and queried
            on the scaled data (faiss, pynndescent or a GPU library behind it). They are
            candidates: the graph's weights come from the data's distances as without
            them. The user guide's "Graphs from elsewhere" page has an example.

        Returns
        -------
        self : CauseFS
        """
        check_real(X)  # scikit-learn's message would print the whole array
        check_structure(X)
        check_aligned(X, nuisance)
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64,
                          ensure_min_samples=3, ensure_min_features=1,
                          ensure_all_finite=False)  # our message, not a supervised advice
        check_finite(X)
        Z = None if nuisance is None else code_nuisance(nuisance, X.shape[0])
        settings = self.settings()
        n_selected = settings.check_data(*X.shape)
        check_memory(per_feature_floor(X.shape[1], settings.n_clusters),
                     settings.memory_limit)  # before the scan of every column
        neighbors = check_neighbors(neighbors, X.shape[0], settings.n_neighbors)
        if neighbors is not None:  # the given graph replaces the search, not anchors
            resolve_anchors(settings.n_anchors, X.shape[0], given_neighbors=True)
            settings = settings.replace(n_anchors=None)
        active = np.flatnonzero(~constant_features(X))
        if not active.size:
            raise ValueError("all features of X are constant: there is nothing to select")
        if settings.preprocessing == "none":
            check_scale(X[:, active])
        seed = int(check_random_state(self.random_state).randint(np.iinfo(np.int32).max))
        parts = build_parts(settings, seed, nuisance=Z is not None,
                            n_selected=min(n_selected, active.size))
        settings = self.settings_ = parts.settings  # resolved once, with the schedule's
        self.terms_ = objective_spec(parts)
        self._warn_if_nuisance_unused(parts, Z)
        self._warn_if_neighbors_unused(parts, neighbors)
        X_active = scale_features(X, settings.preprocessing)[:, active]
        if sp.issparse(X_active) and not parts.accepts_sparse:
            X_active = X_active.toarray()
        # the share of non-zero cells of the data the fit sees (scaled, sparse or not)
        self._estimate(X.shape[0], active.size, parts,
                       column_nonzeros(X_active).sum() / (X.shape[0] * active.size),
                       0 if Z is None else Z.shape[1])
        # a long block is logged as it runs; freed temporaries' pages serve the next ones
        keep = worth_retaining(self.memory_estimate_, available_memory())
        with _progress(settings.max_iter, settings.verbose) as callback, fit_threads(), \
                retained_memory(keep), Heartbeat(logger):
            result = run_cause_fs(X_active, parts, seed=seed, callback=callback, Z=Z,
                                  neighbors=neighbors)
        self._store(result, active, X.shape[1], n_selected)
        self._screen_unclustered(result.state, parts, active, n_selected, seed)
        if settings.max_correlation is not None:
            self._decorrelate(X_active, active, n_selected, settings.max_correlation)
        self.schedule_ = parts.schedule.name
        self._store_nuisance_shares(result.state, Z, active, X.shape[1])
        self.selection_frequency_ = self._selection_frequency(X, nuisance, n_selected, seed)
        self._warn_if_collapsed(result.state.W, settings.eps)
        if not result.converged and settings.max_iter > 0:
            warnings.warn(f"no stopping rule was met in max_iter={settings.max_iter} "
                          "iterations: the selection may still change with more (raise "
                          "max_iter, or see docs/MODEL.md, 'Convergence')",
                          ConvergenceWarning, stacklevel=2)
        return self

    @staticmethod
    def _warn_if_neighbors_unused(parts, neighbors) -> None:
        if neighbors is not None and not any(isinstance(block, InitialFusedGraphBlock)
                                             for block in parts.init):
            warnings.warn(f"neighbors were given, but schedule {parts.schedule.name!r} has "
                          "no initial_fused_graph block, the only one that uses them: they "
                          "are ignored", UserWarning, stacklevel=3)

    @staticmethod
    def _warn_if_nuisance_unused(parts, Z) -> None:
        if Z is not None and not uses_nuisance(parts):
            warnings.warn(f"nuisance variables were given, but schedule "
                          f"{parts.schedule.name!r} has no block that uses them; "
                          "schedule='auto' adjusts for them", NuisanceUnusedWarning,
                          stacklevel=3)

    def _estimate(self, n, d, parts, density, n_nuisance) -> None:
        """Refuse a fit over the memory budget; announce a long one (``density``: the
        share of the active features' cells that are non-zero; ``n_nuisance``: the coded
        columns of Z)."""
        expected = estimate(n, d, parts.settings, parts, density, n_nuisance)
        check_memory(expected.memory, parts.settings.memory_limit)
        self.memory_estimate_ = expected.memory.peak
        self.time_estimate_ = expected.seconds
        if self.time_estimate_ > ANNOUNCED_FIT_SECONDS:
            logger.info("this fit (n=%d, d=%d) is estimated to take about %.0f s (an order "
                        "of magnitude); progress is logged as it runs", n, d,
                        self.time_estimate_)
        if self.time_estimate_ > LONG_FIT_SECONDS:
            message = (f"this fit (n={n}, d={d}) is estimated to take about "
                       f"{self.time_estimate_ / 60:.0f} min; "
                       + _how_to_follow(parts.settings.verbose))
            logger.warning(message)
            warnings.warn(message, LongFitWarning, stacklevel=3)

    def _store(self, result, active, d, n_selected) -> None:
        """The fitted attributes, on all d features (constant ones score 0)."""
        state = result.state
        self.W_ = np.zeros((d, state.W.shape[1]))
        self.W_[active] = state.W
        self.scores_ = np.linalg.norm(self.W_, axis=1)
        self._rank(np.zeros(d, dtype=bool), n_selected)
        self.sample_weight_ = state.mu.copy()
        self.nuisance_effect_ = None
        if state.Theta is not None:
            self.nuisance_effect_ = np.zeros((state.Theta.shape[0], d))
            self.nuisance_effect_[:, active] = state.Theta
        self.diagnostics_ = weight_diagnostics(state, result.history[-1])
        self.groups_ = np.full(d, -1, dtype=np.int64)
        if state.groups is not None:
            self.groups_[active] = state.groups
        K = sp.coo_array(state.K) if state.K is not None else sp.coo_array((len(active),) * 2)
        self.confounders_ = sp.csr_array(
            (np.ones(K.nnz, dtype=bool), (active[K.row], active[K.col])), shape=(d, d))
        self.objective_history_ = np.asarray(result.history)
        self.trace_ = result.trace
        self.n_iter_ = result.n_iter
        self.converged_ = result.converged
        self.stop_reason_ = result.stop_reason
        self.structure_frozen_at_ = result.structure_frozen_at

    def _rank(self, last: np.ndarray, n_selected: int) -> None:
        """``ranking_`` and ``support_`` by score, the features flagged ``last`` after
        all others (ties by index)."""
        order = np.lexsort((-self.scores_, last))
        self.ranking_ = np.empty(order.size, dtype=np.int64)
        self.ranking_[order] = np.arange(1, order.size + 1)
        self.support_ = self.ranking_ <= n_selected

    def _screen_unclustered(self, state, parts, active, n_selected, seed) -> None:
        """``carries_clusters_``, and the features without the clusters ranked last
        (``cluster_screen``; fits that adjust for Z only)."""
        self.carries_clusters_ = None
        alpha = parts.settings.cluster_screen
        if alpha is None or state.problem.Z is None or not uses_nuisance(parts):
            return
        X, Z = state.problem.X, state.problem.Z
        pvalues = cluster_evidence(X, Z, self.scores_[active], state.problem.n_clusters,
                                   seed=seed)
        self.carries_clusters_ = np.zeros(self.scores_.size, dtype=bool)
        self.carries_clusters_[active] = pvalues < alpha / X.shape[1]
        self._rank(~self.carries_clusters_, n_selected)

    def _store_nuisance_shares(self, state, Z, active, d) -> None:
        """``nuisance_share_`` and ``nuisance_share_adjusted_`` on all d features."""
        self.nuisance_share_ = self.nuisance_share_adjusted_ = None
        if Z is None:
            return
        for name, data in (("nuisance_share_", state.problem.X),
                           ("nuisance_share_adjusted_", state.X_adjusted)):
            share = np.zeros(d)
            share[active] = variance_share(data, Z)
            setattr(self, name, share)

    def _selection_frequency(self, X, nuisance, n_selected, seed) -> np.ndarray | None:
        """How often each feature is among the ``n_selected`` best over refits on random
        halves of the samples (``stability_subsamples``; None when 0)."""
        B = self.settings_.stability_subsamples
        if B == 0:
            return None
        rng = np.random.default_rng(seed)
        counts = np.zeros(X.shape[1])
        params = {**self.get_params(), "stability_subsamples": 0, "verbose": False}
        for _ in range(B):
            rows = np.sort(rng.choice(X.shape[0], X.shape[0] // 2, replace=False))
            Z = None if nuisance is None else (
                nuisance.iloc[rows] if hasattr(nuisance, "iloc") else np.asarray(nuisance)[rows])
            with warnings.catch_warnings():  # a subsample's warnings are the whole fit's
                warnings.simplefilter("ignore", ConvergenceWarning)
                warnings.simplefilter("ignore", NuisanceWarning)
                self._check_subsample_nuisance(Z, rows.size, B)
                fit = CauseFS(**{**params, "random_state": int(rng.integers(2**31 - 1))}
                              ).fit(X[rows], nuisance=Z)
            counts += fit.support_  # the subsample fit's own selection rule
        return counts / B

    @staticmethod
    def _check_subsample_nuisance(Z, n_rows: int, B: int) -> None:
        """A half of the samples whose Z cannot be coded (a rare level left out, so no
        level varies; more columns than the half can estimate): the error says it is the
        subsample's, which the whole fit's Z message alone would not."""
        if Z is None:
            return
        try:
            code_nuisance(Z, n_rows)
        except ValueError as error:
            raise ValueError(f"stability_subsamples={B}: on a random half of the samples "
                             f"({n_rows}), {error}; set stability_subsamples=0, or merge "
                             "rare levels of Z") from None

    def _decorrelate(self, X_active, active, n_selected, max_correlation) -> None:
        """``ranking_`` and ``support_`` with the selection spread over correlated
        blocks of the fitted (scaled) data; ``scores_`` are kept."""
        order = np.argsort(self.ranking_, kind="stable")
        position = np.full(self.ranking_.size, -1)
        position[active] = np.arange(active.size)
        active_order = position[order[np.isin(order, active)]]
        spread = active[decorrelated_order(X_active, active_order, max_correlation,
                                           min(n_selected, active.size))]
        order = np.concatenate([spread, order[~np.isin(order, active)]])
        self.ranking_[order] = np.arange(1, order.size + 1)
        self.support_ = self.ranking_ <= n_selected

    @staticmethod
    def _warn_if_collapsed(W, eps) -> None:
        contribution = np.einsum("ij,ij->i", W, W)
        if contribution.max() < eps:
            warnings.warn(
                f"W collapsed to the eps floor (max ||W_f||^2 = {contribution.max():.3g} < "
                f"eps = {eps:g}): the ranking then depends on eps alone. Lower lam or "
                "raise alpha (with sample_weights='simplex' lambda acts as n * lambda).",
                CollapseWarning, stacklevel=3,
            )

    def _get_support_mask(self):
        check_is_fitted(self, "support_")
        return self.support_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = False
        tags.input_tags.allow_nan = False
        tags.input_tags.sparse = True
        return tags


def check_aligned(X, nuisance) -> None:
    """A ``ValueError`` for nuisance variables whose pandas index is not X's: pandas
    would align them by label, scikit-learn (and this fit) takes both by position. A Z
    with pandas' default index (0, 1, ..., n - 1) is taken by position, as any array."""
    x_index, z_index = getattr(X, "index", None), getattr(nuisance, "index", None)
    if x_index is None or z_index is None or len(x_index) != len(z_index) \
            or x_index.equals(z_index):
        return
    default = type(z_index).__name__ == "RangeIndex" and z_index.start == 0 \
        and z_index.step == 1
    if not default:
        raise ValueError("nuisance has a pandas index other than X's: the fit takes both "
                         "by position, not by label; pass nuisance.loc[X.index] to align "
                         "it, or nuisance.to_numpy() if it is already in X's order")


def check_real(X) -> None:
    """A one-line ``ValueError`` for complex data (dense or sparse), before scikit-learn's
    validation, whose message holds the array's repr (dozens of lines)."""
    dtype = getattr(X, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.complexfloating):
        raise ValueError(f"Complex data not supported: X has dtype {dtype}; CAUSE-FS needs "
                         "real-valued features (take their magnitude, np.abs(X), or their "
                         "real part first)")


def check_structure(X) -> None:
    """One-line ``ValueError`` for inputs scikit-learn's validation would take wrongly or
    word over several lines: masked values (``np.asarray`` drops the mask), data that are
    not 2-D, and sparse matrices whose index arrays are corrupt (SciPy's own operations
    on them may crash the interpreter)."""
    masked = masked_positions(X)
    if masked.size:
        where = masked[0]
        at = f"sample {where[0]}" + (f", feature {where[1]}" if where.size > 1 else "")
        raise ValueError(f"X holds a masked (missing) value at {at} (0-based): CAUSE-FS "
                         "needs every value; impute them (e.g. sklearn.impute."
                         "SimpleImputer) or drop their samples, then pass plain arrays")
    ndim = getattr(X, "ndim", 2)
    if ndim != 2:
        raise ValueError(f"X has shape {getattr(X, 'shape', ())}: CAUSE-FS needs 2-D data "
                         "(n_samples, n_features); reshape it, X.reshape(-1, 1) for one "
                         "feature or X.reshape(1, -1) for one sample")
    if not sp.issparse(X):
        return
    try:
        if X.format in ("csr", "csc", "bsr"):
            X.check_format(full_check=True)
        elif X.format == "coo":
            for axis, index in enumerate((X.row, X.col)):
                if index.size and not 0 <= index.min() <= index.max() < X.shape[axis]:
                    raise ValueError(f"{('row', 'column')[axis]} index values must be "
                                     f">= 0 and < {X.shape[axis]}")
    except ValueError as error:
        raise ValueError(f"X is a malformed {X.format.upper()} sparse matrix (its index "
                         f"arrays are corrupt): {error}") from None


def check_finite(X) -> None:
    """A ``ValueError`` naming the first NaN or infinite value of ``X`` (dense or sparse)
    and what to do; scikit-learn's message advises estimators for supervised learning."""
    values = X.data if sp.issparse(X) else X
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    if sp.issparse(X):  # the stored entries' coordinates: X is never densified
        coo = X.tocoo()
        rows, columns = coo.row[bad], coo.col[bad]
        first = np.lexsort((columns, rows))[0]
        row, column, value = rows[first], columns[first], values[bad][first]
    else:
        row, column = np.argwhere(bad)[0]
        value = X[row, column]
    kind = "NaN" if np.isnan(value) else "infinity" if value > 0 else "-infinity"
    raise ValueError(f"X holds {kind} at sample {row}, feature {column} (0-based; "
                     f"{int(bad.sum())} non-finite value(s) in all): CAUSE-FS needs finite "
                     "data; impute the missing values (e.g. sklearn.impute.SimpleImputer in a "
                     "Pipeline) or drop their samples, and clip or drop infinite ones")


#: magnitudes of unscaled data whose squared distances stay within float64 (its largest
#: value is 1.8e308, its smallest normal 2.2e-308; a sum of d squares must fit too)
SCALE_BOUNDS = (1e-150, 1e150)


def check_scale(X) -> None:
    """A ``ValueError`` when unscaled data (``preprocessing='none'``) is so large or so
    small that its squared distances overflow or vanish in float64."""
    values = np.abs(X.data if sp.issparse(X) else X)
    largest = float(values.max()) if values.size else 0.0  # > 0: the features vary
    low, high = SCALE_BOUNDS
    if largest > high or 0 < largest < low:
        problem = "overflow" if largest > high else "vanish"
        raise ValueError(f"X's largest magnitude is {largest:.3g} with "
                         f"preprocessing='none': its squared distances {problem} in "
                         f"float64 (values must lie within "
                         f"{low:g} and {high:g}); use preprocessing='minmax' or 'standard', "
                         "or rescale X")


def causefs_scores(X, y=None, *, nuisance=None, **params):
    """CAUSE-FS feature scores ``||W_f||_2``, for ``SelectKBest(score_func=...)``.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
    y : ignored
    nuisance : array-like of shape (n_samples,) or (n_samples, n_variables), optional
        Known nuisance variables (:meth:`CauseFS.fit`), bound with ``functools.partial``
        as the other parameters.
    **params
        Any :class:`CauseFS` parameter, e.g. through ``functools.partial``::

            SelectKBest(partial(causefs_scores, n_clusters=10), k=20)

    Returns
    -------
    scores : ndarray of shape (n_features,)
    """
    return CauseFS(**params).fit(X, nuisance=nuisance).scores_

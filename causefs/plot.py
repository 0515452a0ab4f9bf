"""A fitted :class:`~causefs.CauseFS`'s report from Python: the run report the
``causefs-report`` command writes for every stored run (:mod:`causefs.app.run_report`).

    selector = CauseFS(n_clusters=3, n_features_to_select=10).fit(df, nuisance=batch)
    causefs.plot.report(selector, "report.png")     # the figure
    print(causefs.plot.markdown(selector))          # the table, features by name

The features are named as the data named them (a DataFrame's columns,
``feature_names_in_``), else by ``feature_names`` when given, else ``x0, x1, ...`` as
scikit-learn's ``get_feature_names_out``. A file's names reach a fit on its array this way:

    data = causefs.datasets.load_file("data.csv")   # data.feature_names: the header's
    selector = CauseFS(n_clusters=3, n_features_to_select=10).fit(data.X)
    selector.get_feature_names_out(data.feature_names)    # scikit-learn's input_features
    causefs.plot.report(selector, "report.png", feature_names=data.feature_names)
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .app.run_report import PER_FEATURE_DETAILS, run_figure, run_markdown
from .core.loop import objective_by_iteration


def _as_list(value):
    return None if value is None else np.asarray(value, dtype=float).tolist()


def _feature_names(selector, given):
    """The names of the fitted features: ``given`` (checked) or ``feature_names_in_``."""
    fitted = getattr(selector, "feature_names_in_", None)
    if given is None:
        return fitted
    given = np.asarray(given, dtype=object)
    if given.shape != (selector.n_features_in_,):
        raise ValueError(f"feature_names must hold one name per feature, "
                         f"{selector.n_features_in_}; got shape {given.shape}")
    if fitted is not None and not np.array_equal(given, fitted):
        raise ValueError("feature_names differ from the names the selector was fitted "
                         "with (feature_names_in_)")
    return given


def summary(selector, *, name: str = "data", image_shape=None, feature_names=None) -> dict:
    """The fitted ``selector`` in ``result.json``'s layout (the fields a run report
    reads). ``image_shape`` (height, width; pixels column-major, as the library's image
    datasets) makes the figure draw the selected pixels. ``feature_names``
    ``(n_features_in_,)`` names the features of a fit on an array (a loaded file's
    ``Dataset.feature_names``); checked as ``get_feature_names_out``'s ``input_features``
    (equal to ``feature_names_in_`` where the fit had names)."""
    check_is_fitted(selector, "scores_")
    names = _feature_names(selector, feature_names)
    best_first = np.argsort(selector.ranking_, kind="stable")
    selected = best_first[: int(selector.support_.sum())]
    n_samples = int(selector.sample_weight_.shape[0])
    details = {"objective_by_iteration": objective_by_iteration(selector.trace_),
               **{key: _as_list(getattr(selector, f"{key}_", None))
                  for key in PER_FEATURE_DETAILS}}
    return {"job": {"method": type(selector).__name__},
            "dataset": {"name": name, "n_samples": n_samples,
                        "n_features": int(selector.n_features_in_), "n_classes": None,
                        "image_shape": None if image_shape is None else list(image_shape),
                        "feature_names": None if names is None else [str(n) for n in names]},
            "scores": np.asarray(selector.scores_, dtype=float).tolist(),
            "features_best_first": best_first.tolist(),
            "selected_features": selected.tolist(), "details": details, "metrics": None}


def markdown(selector, **summary_options) -> str:
    """The run report as Markdown (:func:`causefs.app.run_report.run_markdown`)."""
    return run_markdown(summary(selector, **summary_options))


def report(selector, path, X=None, **summary_options):
    """Draw the run report of a fitted ``selector`` into ``path`` (PNG; matplotlib,
    the ``cli`` extra): scores with the selected features named, the objective by term
    over the iterations, the per-feature selection frequency and nuisance share where
    the fit computed them, and with ``image_shape`` and the data ``X`` (n_samples,
    n_features) the selected pixels over the mean image. Returns the path."""
    return run_figure(summary(selector, **summary_options), path, X)

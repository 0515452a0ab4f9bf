"""The report of one run, labels or not: what was selected and how sure it is, and how
the objective went.

Works on a result in ``result.json``'s layout (docs/guide/results.md): a store entry,
a ``result.json`` file, or a fitted estimator's summary (:func:`causefs.plot.summary`).
:func:`run_markdown` writes the selected features by name with their scores and, where
the result has them, their selection frequency, nuisance share and whether they carry
the clusters (``details.selection_frequency``, ``details.nuisance_share``,
``details.nuisance_share_adjusted``, ``details.carries_clusters``: one value per
feature, null when not computed) and
the objective by term over the iterations; :func:`run_figure` draws the same, and the
selected pixels over the data's mean image for image data.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..core.extras import require

#: per-feature details a result may carry (computed by the nuisance-aware fit), with
#: the column heading the report gives them
PER_FEATURE_DETAILS = {"selection_frequency": "selection frequency",
                       "nuisance_share": "nuisance share",
                       "nuisance_share_adjusted": "nuisance share (adjusted)",
                       "carries_clusters": "carries the clusters"}
#: the details that are yes/no per feature (drawn as 1/0)
YES_NO_DETAILS = ("carries_clusters",)


def feature_name(result: dict, column: int) -> str:
    """The name the data gives column ``column``, else ``x<column>`` (scikit-learn's)."""
    names = (result.get("dataset") or {}).get("feature_names")
    return str(names[column]) if names else f"x{column}"


def per_feature_details(result: dict) -> dict:
    """The :data:`PER_FEATURE_DETAILS` the result holds, one value per feature."""
    details = result.get("details") or {}
    n_features = len(result["scores"])
    return {key: np.asarray(details[key], dtype=float) for key in PER_FEATURE_DETAILS
            if details.get(key) is not None and len(details[key]) == n_features}


def _cell(key: str, value: float) -> str:
    if key in YES_NO_DETAILS:
        return "yes" if value else "no"
    return f"{value:.3f}"


def _data_name(result: dict) -> str:
    return ((result.get("dataset") or {}).get("name")
            or (result["job"].get("dataset") or {}).get("name") or "data")


def run_markdown(result: dict) -> str:
    """The run as Markdown: what ran on what, the selected features (rank, column, name,
    score and the per-feature details present), the objective by iteration and term,
    and the k-means scores where the data had labels."""
    d, job = result.get("dataset") or {}, result["job"]
    extra = per_feature_details(result)
    lines = [f"# {job['method']} on {_data_name(result)}", "",
             f"{d.get('n_samples', '?')} samples x {len(result['scores'])} features"
             + (f", {d['n_classes']} classes" if d.get("n_classes") else ", no labels")
             + f"; {len(result['selected_features'])} features selected, best first.", "",
             ("| rank | column | name | score | "
              + "".join(f"{PER_FEATURE_DETAILS[k]} | " for k in extra)).rstrip(),
             "|---:|---:|---|---:|" + "---:|" * len(extra)]
    for rank, column in enumerate(result["selected_features"], start=1):
        lines.append((f"| {rank} | {column} | {feature_name(result, column)} | "
                      f"{result['scores'][column]:.4g} | "
                      + "".join(f"{_cell(key, values[column])} | "
                                for key, values in extra.items())
                      ).rstrip())
    rows = (result.get("details") or {}).get("objective_by_iteration") or []
    if rows:
        terms = list(rows[0]["terms"])
        lines += ["", "## Objective by iteration and term", "",
                  "(* = feature granularities and confounder sets re-estimated: a new "
                  "objective, which may rise there; the fusion term is negative by design)",
                  "", "| iteration | objective | " + " | ".join(terms) + " |",
                  "|---:|---:|" + "---:|" * len(terms)]
        lines += [f"| {r['iteration']}{'*' if r['structure_changed'] else ''} | "
                  f"{r['objective']:.5g} | "
                  + " | ".join(f"{r['terms'].get(t, 0.0):.5g}" for t in terms) + " |"
                  for r in rows]
    selected = ((result.get("metrics") or {}).get("selected")) or {}
    for rho, m in selected.items():
        runs = f" ({m['n_runs']} runs)" if "n_runs" in m else ""
        lines += ["", f"k-means on the top {rho} features{runs}: ACC "
                      f"{100 * m['acc_mean']:.2f} +- {100 * m['acc_std']:.2f} %, NMI "
                      f"{100 * m['nmi_mean']:.2f} +- {100 * m['nmi_std']:.2f} %"]
    return "\n".join(lines) + "\n"


def run_figure(result: dict, path, X=None) -> Path:
    """Draw the run into ``path`` (PNG): the scores (selected features named), the
    objective by term over the iterations, the per-feature details present and, for
    image data given ``X`` (n_samples, n_features), the selected pixels over the mean
    image. Needs matplotlib (the ``cli`` extra)."""
    matplotlib = require("matplotlib", "cli", "the report's figures")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    extra = per_feature_details(result)
    shape = (result.get("dataset") or {}).get("image_shape")
    panels = [_scores_panel, _objective_panel] + [_detail_panel(key) for key in extra]
    if shape and X is not None:
        panels.append(_pixel_panel(np.asarray(X, dtype=float), shape))
    fig, axes = plt.subplots(1, len(panels), figsize=(4.6 * len(panels), 3.6),
                             squeeze=False)
    for ax, draw in zip(axes[0], panels):
        draw(ax, result)
    fig.suptitle(f"{result['job']['method']} on {_data_name(result)}")
    fig.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def _scores_panel(ax, result: dict) -> None:
    """Every feature's score, best first; the selected ones named."""
    best_first = np.asarray(result["features_best_first"])
    scores = np.asarray(result["scores"], dtype=float)[best_first]
    k = len(result["selected_features"])
    ax.bar(np.arange(scores.size), scores, color=["C3"] * k + ["C7"] * (scores.size - k),
           width=1.0)
    shown = best_first[: min(k, 15)]
    ax.set_xticks(np.arange(shown.size), [feature_name(result, c) for c in shown],
                  rotation=90, fontsize=7)
    ax.set_ylabel("score ||W_f||")
    ax.set_title(f"scores (red: the {k} selected)", fontsize=9)


def _objective_panel(ax, result: dict) -> None:
    """The objective and each term over the iterations (symmetric log scale: terms may
    be negative); iterations that re-estimated the structure shaded."""
    rows = (result.get("details") or {}).get("objective_by_iteration") or []
    if not rows:
        ax.text(0.5, 0.5, "no objective recorded\n(not an iterative method)",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_axis_off()
        return
    iterations = [r["iteration"] for r in rows]
    ax.plot(iterations, [r["objective"] for r in rows], "k-", lw=2, label="objective")
    for term in rows[0]["terms"]:
        ax.plot(iterations, [r["terms"].get(term, 0.0) for r in rows], lw=1, label=term)
    for r in rows:
        if r["structure_changed"]:
            ax.axvspan(r["iteration"] - 0.5, r["iteration"] + 0.5, color="0.9", zorder=0)
    ax.set_yscale("symlog", linthresh=1e-2)
    ax.set_xlabel("iteration (shaded: structure re-estimated)")
    ax.set_title("objective by term", fontsize=9)
    ax.legend(fontsize=6)


def _detail_panel(key: str):
    def draw(ax, result: dict) -> None:
        values = per_feature_details(result)[key]
        selected = result["selected_features"]
        ax.bar(np.arange(len(selected)), values[selected], color="C0")
        ax.set_xticks(np.arange(len(selected)),
                      [feature_name(result, c) for c in selected], rotation=90, fontsize=7)
        ax.set_ylim(0, max(1.0, float(values[selected].max())))
        ax.set_title(f"{PER_FEATURE_DETAILS[key]}, selected features", fontsize=9)
    return draw


def _pixel_panel(X: np.ndarray, shape):
    def draw(ax, result: dict) -> None:
        # image datasets store pixels column-major (MATLAB order)
        ax.imshow(X.mean(axis=0).reshape(tuple(shape)[::-1]).T, cmap="gray")
        rows, cols = np.unravel_index(np.asarray(result["selected_features"]),
                                      tuple(shape)[::-1])
        ax.scatter(rows, cols, s=12, c="red")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title("selected pixels over the mean image", fontsize=9)
    return draw


def write_run_report(result: dict, out_dir, X=None, with_figure: bool = True) -> list:
    """``<out_dir>/<key>.md`` and, with ``with_figure``, ``<key>.png``; returns the
    files written."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    name = result.get("key") or "run"
    markdown = out / f"{name}.md"
    markdown.write_text(run_markdown(result))
    if not with_figure:
        return [markdown]
    return [markdown, run_figure(result, out / f"{name}.png", X)]

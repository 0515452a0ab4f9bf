"""
An ablation sweep and its report
================================

The ``causefs`` command runs one method on one dataset per job; a sweep runs many jobs
and keeps each result in the results store, keyed by everything that determines it. This
example runs the paper's ablation (the full model, CAUSE-FS-I without the causal
regression, CAUSE-FS-II without the multi-granular graphs) on a small synthetic dataset
through the same function a job calls, :func:`causefs.app.cli.run`, then makes the
report ``causefs-report`` writes. On the command line the sweep is::

    causefs -m schedule=full,ablation_I,ablation_II dataset=synthetic \\
        store.enabled=true

The sizes are small so that the example runs in seconds: 150 samples, 30 features,
at most 30 iterations (each fit stops at its stopping rule), 5 k-means runs.
Conclusions need the benchmarks (docs/RESULTS.md).
"""

# %%
# Run the sweep
# -------------
import contextlib
import io
import tempfile
from pathlib import Path

from hydra import compose, initialize_config_module

from causefs.app.cli import run
from causefs.app.configs import register_configs
from causefs.app.report import report

# the method, kernel and QP groups come from the plugin registry
register_configs()
store = Path(tempfile.mkdtemp()) / "store"
recovered = {}
small = ["dataset=synthetic", "dataset.n_samples=150",
         "dataset.n_features=30", "method.max_iter=30",
         "evaluation.n_runs=5", "evaluation.rhos=[5,10]",
         "n_features_to_select=10", "store.enabled=true",
         f"store.dir={store}"]
for schedule in ("full", "ablation_I", "ablation_II"):
    with initialize_config_module(config_module="causefs.conf",
                                  version_base="1.3"):
        cfg = compose(config_name="config",
                      overrides=[*small, f"schedule={schedule}"])
    # each job prints its report: kept out of the page
    with contextlib.redirect_stdout(io.StringIO()):
        result = run(cfg, output_dir=store.parent / schedule)
    recovered[schedule] = result["causal_recovery"]
    precision = result["causal_recovery"][5]["precision"]
    print(f"{schedule}: key {result['key']}, "
          f"causal precision@5 {precision:.2f}")

# %%
# The share of the top features that are causal, by schedule: one seed of small data,
# an illustration of the report's content, not a comparison.
import matplotlib.pyplot as plt

fig, ax = plt.subplots(figsize=(5, 3.2))
for offset, (schedule, rows) in enumerate(recovered.items()):
    ax.bar([0.25 * offset, 1 + 0.25 * offset],
           [rows[5]["precision"], rows[10]["precision"]],
           width=0.25, label=schedule)
ax.set_xticks([0.25, 1.25], ["top 5", "top 10"])
ax.set_ylabel("causal precision")
ax.set_ylim(0, 1)
ax.legend(loc="upper center", ncol=3)
fig.tight_layout()

# %%
# The report
# ----------
# Rows are named by what ran: the ablation's name and every option that differs from
# the defaults (here the 5 iterations). The synthetic dataset's table is the recovery of
# its known causal features, averaged over the seeds in the store (one here).
print(report(store, store.parent / "report", rho=10,
             with_figures=False))

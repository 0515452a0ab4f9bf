"""A battery of bad inputs, run as a new user and a careless plugin author would.

    python benchmarks/battery.py run --code /path/to/checkout --out battery/<name>
    python benchmarks/battery.py report battery/<name> [battery/<other> ...]

Every case runs in a fresh subprocess (the ``causefs`` command, a Python snippet, or a
scripted scene: a store with a FIFO under an entry's name, two sweeps at once, an
installed plugin that fails to load...) with the code of ``--code`` first on
``PYTHONPATH``, so one interpreter runs the battery against any checkout. Each case is
classified:

* ``good``: refused (or handled) as documented: one line naming the key, file or
  block, exit status 2 for the command; or, for a case that must work, it works;
* ``poor``: refused, but with a traceback, another exit status or a message that does
  not name what is wrong;
* ``bad``: accepted silently, or a wrong result;
* ``hang``: still running at its time limit (killed).

Results are written atomically to ``--out/<case>.json``; a re-run skips stored cases, so
an interrupted run resumes. ``report`` prints the counts by area, side by side.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from pathlib import Path

PYTHON = sys.executable
#: a tiny fit: the command's cases run in a few seconds
SMALL = ["dataset=synthetic", "dataset.n_samples=60", "dataset.n_features=12",
         "dataset.n_causal=3", "dataset.n_spurious=3", "n_features_to_select=4",
         "evaluation.n_runs=1", "evaluation.all_features=false"]
SHORT = ["method.max_iter=1"]
#: a schedule of the user's own, renamed from one with a loop (the default, 'auto', is
#: chosen at fit time and has no loop of its own to change)
MINE = ["schedule=full", "schedule.name=mine"]
SHIFTED = ["dataset=shifted_clusters", "dataset.n_train=80", "dataset.n_test=80",
           "n_features_to_select=4", "evaluation.n_runs=1", *SHORT]
BORDER = ["dataset=digits_border", "n_features_to_select=4", "evaluation.n_runs=1", *SHORT]


# ------------------------------------------------------------------- running ---------


class Env:
    """Where a case runs: the code under test, a scratch folder, the environment."""

    def __init__(self, code: Path, scratch: Path):
        self.code, self.scratch = code, scratch

    def env(self, extra_path=(), **variables):
        env = {k: v for k, v in os.environ.items()
               if k not in ("CAUSEFS_DISABLE_PLUGIN_AUTOLOAD", "CAUSEFS_DEBUG",
                            "CAUSEFS_RESULTS", "PYTHONPATH")}
        env["PYTHONPATH"] = os.pathsep.join([*map(str, extra_path), str(self.code)])
        env.setdefault("OMP_NUM_THREADS", "1")
        env.update(variables)
        return env

    def run(self, argv, timeout=120, cwd=None, extra_path=(), **variables):
        """(returncode or None on timeout, stdout, stderr, seconds)."""
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd or self.scratch, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True,
                                env=self.env(extra_path, **variables))
        try:
            out, err = proc.communicate(timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            code = None
        return code, out, err, time.perf_counter() - start

    def cli(self, *args, timeout=120, cwd=None, run_dir=None, **kwargs):
        run_dir = run_dir or tempfile.mkdtemp(dir=self.scratch, prefix="run-")
        return self.run([PYTHON, "-m", "causefs.app.cli", *args,
                         f"hydra.run.dir={run_dir}"], timeout=timeout, cwd=cwd, **kwargs)

    def py(self, code, timeout=120, **kwargs):
        return self.run([PYTHON, "-c", textwrap.dedent(code)], timeout=timeout, **kwargs)


def _error_lines(err: str) -> list:
    return [line for line in err.strip().splitlines() if line.strip()]


def judge_cli_error(result, expect) -> tuple[str, str]:
    """A refused command: exit 2, one line ``causefs: error: ...`` naming ``expect``."""
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    lines = _error_lines(err)
    shown = lines[-1] if lines else out.strip().splitlines()[-1:] or ""
    if code == 0:
        return "bad", f"exit 0: {str(shown)[:200]}"
    one_line = len(lines) == 1 and lines[0].startswith("causefs: error: ")
    named = all(e in err for e in ([expect] if isinstance(expect, str) else expect))
    if code == 2 and one_line and named:
        return "good", lines[0][:300]
    return "poor", f"exit {code}, {len(lines)} line(s): {str(shown)[:300]}"


PY_PRELUDE = """
import warnings, sys, numpy as np
def report(fn):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            value = fn()
    except BaseException as error:
        # the notes a traceback shows after the message (a block's name, added by the
        # scheduler to an exception raised inside the block) count as part of it
        notes = "".join(f" [{note}]" for note in getattr(error, "__notes__", ()))
        print("RAISED", type(error).__name__, "|",
              str(error).replace(chr(10), " \\\\n ") + notes)
        print("MRO", " ".join(c.__name__ for c in type(error).__mro__))
        print("LINES", len(str(error).splitlines()))
        return
    for w in caught:
        print("WARNED", w.category.__name__, "|", str(w.message).replace(chr(10), " "))
    print("RETURNED", repr(value)[:200])
"""


def judge_py_error(result, expect, kinds=("InvalidParameterError",)) -> tuple[str, str]:
    """A refused call: raises ``kinds`` (by class name in its MRO), one line, naming
    ``expect``."""
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    raised = re.search(r"^RAISED (\w+) \| (.*)$", out, re.M)
    if not raised:
        if code != 0:
            return "poor", f"crashed (exit {code}): {_error_lines(err)[-1:]}"
        return "bad", f"accepted: {out.strip()[-200:]}"
    mro = re.search(r"^MRO (.*)$", out, re.M).group(1).split()
    lines = int(re.search(r"^LINES (\d+)$", out, re.M).group(1))
    message = raised.group(2)
    named = all(e in message for e in ([expect] if isinstance(expect, str) else expect))
    if any(k in mro for k in kinds) and named and lines == 1:
        return "good", f"{raised.group(1)}: {message[:250]}"
    return "poor", f"{raised.group(1)} ({lines} lines): {message[:250]}"


def judge_py_warning(result, expect, category) -> tuple[str, str]:
    """A call that must go on with a warning of ``category`` naming ``expect``."""
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    warned = [m for m in re.finditer(r"^WARNED (\w+) \| (.*)$", out, re.M)
              if m.group(1) == category]
    if warned and all(e in warned[0].group(2) for e in
                      ([expect] if isinstance(expect, str) else expect)):
        return "good", warned[0].group(2)[:250]
    raised = re.search(r"^RAISED (\w+) \| (.*)$", out, re.M)
    if raised:
        return "poor", f"raised {raised.group(1)}: {raised.group(2)[:200]}"
    if warned:
        return "poor", f"warned without naming it: {warned[0].group(2)[:200]}"
    return "bad", f"silent: {out.strip()[-200:]}"


def judge_py_returns(result, expected: str, what: str) -> tuple[str, str]:
    """A call that must work: it returns ``expected`` (its repr); a refusal is poor, a
    wrong value bad."""
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    if re.search(rf"^RETURNED {re.escape(expected)}$", out, re.M):
        return "good", what
    return "poor" if "RAISED" in out else "bad", (out + err).strip()[-250:]


# --------------------------------------------------------------------- cases ---------

CASES: dict = {}


def case(area, name):
    def register(fn):
        CASES[f"{area}/{name}"] = fn
        return fn
    return register


def cli_error(area, name, args, expect, timeout=120):
    @case(area, name)
    def run(env):
        return judge_cli_error(env.cli(*args, timeout=timeout), expect)


def py_error(area, name, code, expect, kinds=("InvalidParameterError",), timeout=120):
    @case(area, name)
    def run(env):
        return judge_py_error(env.py(PY_PRELUDE + textwrap.dedent(code), timeout=timeout),
                              expect, kinds)


# -- 1. parameters: every value that reaches a fit, whatever its route ---------------

for name, args, expect in [
    ("alpha_negative", ["method.alpha=-1"], "method.alpha=-1"),
    ("schedule_alpha_negative", [*MINE, "+schedule.setting_defaults.alpha=-5"],
     "schedule.setting_defaults.alpha"),
    ("schedule_beta_negative", [*MINE, "+schedule.setting_defaults.beta=-1"],
     "schedule.setting_defaults.beta"),
    ("schedule_lam_zero", [*MINE, "+schedule.setting_defaults.lam=0"],
     "schedule.setting_defaults.lam"),
    ("schedule_eps_text", [*MINE, "+schedule.setting_defaults.eps=abc"],
     "schedule.setting_defaults.eps"),
    ("schedule_unknown_param", [*MINE, "+schedule.setting_defaults.gamma=1"], "gamma"),
    ("schedule_old_params", [*MINE, "+schedule.params.alpha=1"], "setting_defaults"),
    ("schedule_unknown_term", [*MINE, "schedule.terms=[regression,nope]"], "term='nope'"),
    ("qp_rtol_negative", ["qp.rtol=-1"], "qp.rtol=-1"),
    ("qp_rtol_nan", ["qp.rtol=nan"], "qp.rtol"),
    ("qp_max_iter_zero", ["qp.max_iter=0"], "qp.max_iter=0"),
    ("qp_max_iter_text", ["qp.max_iter=abc"], "qp.max_iter"),
    ("qp_max_iter_float", ["qp.max_iter=2.5"], "qp.max_iter"),
    ("qp_projection_steps", ["qp.projection_steps=-1"], "qp.projection_steps"),
    ("qp_cg_rtol", ["qp.cg_rtol=-0.5"], "qp.cg_rtol"),
    ("qp_cg_rtol_bool", ["qp.cg_rtol=true"], "qp.cg_rtol"),
    ("pg_stall_iter", ["qp=projected_gradient", "qp.stall_iter=0"], "qp.stall_iter"),
    ("pg_rtol", ["qp=projected_gradient", "qp.rtol=abc"], "qp.rtol"),
    ("pg_max_iter", ["qp=projected_gradient", "qp.max_iter=-3"], "qp.max_iter"),
    ("cvxpy_solver", ["qp=cvxpy", "qp.solver=NOPE"], "qp.solver"),
    ("cvxpy_solver_options", ["qp=cvxpy", "qp.solver_options=5"], "qp.solver_options"),
    ("qp_unknown_option", ["+qp.foo=1"], "qp.foo"),
    ("rbf_approximation", ["kernel=rbf", "kernel.approximation=bogus"], "kernel.approximation"),
    ("rbf_components_float", ["kernel=rbf", "kernel.n_components=1.5"], "kernel.n_components"),
    ("linear_option", ["+kernel.bandwidth=1"], "kernel.bandwidth"),
    ("embedding_max_iter", [*MINE, "schedule.loop=[selection_matrix,{name:embedding,max_iter:-1}]"],
     "schedule.embedding.max_iter"),
    ("embedding_tol", [*MINE, "schedule.loop=[selection_matrix,{name:embedding,tol:abc}]"],
     "schedule.embedding.tol"),
    ("confounders_tol", [*MINE, "schedule.loop=[selection_matrix,{name:confounders,"
                               "irrelevant_tol:-1}]"], "schedule.confounders.irrelevant_tol"),
    ("confounders_tol_big", [*MINE, "schedule.loop=[selection_matrix,{name:confounders,"
                                   "irrelevant_tol:2}]"], "schedule.confounders.irrelevant_tol"),
    ("confounders_correlation", [*MINE, "schedule.loop=[selection_matrix,{name:confounders,"
                                       "correlation:spearman}]"],
     "schedule.confounders.correlation"),
    ("mu_max_products", [*MINE, "schedule.loop=[selection_matrix,{name:sample_weights,"
                               "max_products:0}]"], "schedule.sample_weights.max_products"),
    ("mu_precision", [*MINE, "schedule.loop=[selection_matrix,{name:sample_weights,"
                            "precision:float16}]"], "schedule.sample_weights.precision"),
    ("mu_qp_resource", [*MINE, "schedule.loop=[selection_matrix,{name:sample_weights,"
                              "qp:abc}]"], "schedule.sample_weights.qp"),
    ("spectral_seed", [*MINE, "schedule.init=[uniform_weights,initial_confounders,"
                             "correlation_groups,initial_granular_graphs,initial_fused_graph,"
                             "{name:spectral_embedding,seed:-1},initial_selection]"],
     "schedule.spectral_embedding.seed"),
    ("srdo_seed", ["schedule=srdo", MINE[1], "schedule.init=[{name:density_ratio_weights,"
                                          "seed:abc},initial_confounders,correlation_groups,"
                                          "initial_granular_graphs,initial_fused_graph,"
                                          "spectral_embedding,initial_selection]"],
     "schedule.density_ratio_weights.seed"),
    ("dwr_penalty", [*MINE, "schedule.init=[{name:decorrelation_weights,penalty:-1},"
                           "initial_confounders,initial_fused_graph,spectral_embedding,"
                           "initial_selection]", "schedule.loop=[selection_matrix]"],
     "schedule.decorrelation_weights.penalty"),
    ("graph_update", [*MINE, "schedule.loop=[selection_matrix,{name:granular_graphs,"
                            "adaptive_update:bogus}]"], "schedule.granular_graphs.adaptive_update"),
    ("system_choice", [*MINE, "schedule.loop=[{name:selection_matrix,system:bogus}]"],
     "schedule.selection_matrix.system"),
    ("block_sigma", [*MINE, "schedule.loop=[selection_matrix,{name:confounders,sigma:3}]"],
     "schedule.confounders.sigma"),
    ("trace_no", ["method.trace=no"], "method.trace"),
    ("verbose_text", ["method.verbose=x"], "method.verbose"),
    ("check_level", ["method.check=full"], "method.check"),
    ("max_iter_negative", ["method.max_iter=-1"], "method.max_iter"),
    ("tol_text", ["method.tol=abc"], "method.tol"),
    ("n_neighbors_float", ["method.n_neighbors=2.5"], "method.n_neighbors"),
    ("sigma_nan", ["method.sigma=nan"], "method.sigma"),
    ("max_treatments_text", ["method.max_treatments=all"], "method.max_treatments"),
    ("treatment_rule", ["method.treatment=mode"], "method.treatment"),
    ("random_state_text", ["random_state=abc"], "random_state"),
    ("n_clusters_one", ["n_clusters=1"], "n_clusters"),
    ("mcfs_weight", ["method=mcfs", "method.weight=x"], "method.weight"),
    ("udfs_gamma", ["method=udfs", "method.gamma=-1"], "method.gamma"),
    ("ndfs_alpha", ["method=ndfs", "method.alpha=abc"], "method.alpha"),
    ("spec_style", ["method=spec", "method.style=1"], "method.style"),
    ("baseline_unknown", ["method=laplacian_score", "+method.foo=1"], "method.foo"),
]:
    cli_error("parameters", name, [*SMALL, *SHORT, *args] if "method=" not in " ".join(args)
              else [*SMALL, *args], expect)

for name, code, expect, *kinds in [
    ("trace_no", "CauseFS(n_clusters=3, trace='no', max_iter=1).fit(X)", "trace='no'"),
    ("verbose_text", "CauseFS(n_clusters=3, verbose='x', max_iter=1).fit(X)", "verbose='x'"),
    ("alpha_negative", "CauseFS(n_clusters=3, alpha=-1).fit(X)", "alpha=-1"),
    ("schedule_params", "CauseFS(n_clusters=3, max_iter=1, schedule={'name': 'mine', "
                        "'init': list(get_schedule('full')['init']), 'loop': "
                        "list(get_schedule('full')['loop']), 'setting_defaults': "
                        "{'alpha': -5}}).fit(X)",
     "alpha=-5"),
    ("qp_option", "CauseFS(n_clusters=3, max_iter=1, qp={'name': 'gradient_projection_cg', "
                  "'rtol': -1}).fit(X)", "qp.rtol=-1"),
    ("qp_option_type", "CauseFS(n_clusters=3, max_iter=1, qp={'name': "
                       "'projected_gradient', 'max_iter': 'x'}).fit(X)", "qp.max_iter"),
    ("kernel_option", "CauseFS(n_clusters=3, max_iter=1, kernel={'name': 'rbf', "
                      "'n_components': 0}).fit(X)", "kernel.n_components=0"),
    ("block_option", "CauseFS(n_clusters=3, max_iter=1, schedule={'name': 'mine', 'init': "
                     "list(get_schedule('full')['init']), 'loop': ['selection_matrix', "
                     "{'name': 'embedding', 'max_iter': -1}]}).fit(X)",
     "schedule.embedding.max_iter"),
    ("block_tol", "CauseFS(n_clusters=3, max_iter=1, schedule={'name': 'mine', 'init': "
                  "list(get_schedule('full')['init']), 'loop': ['selection_matrix', "
                  "{'name': 'confounders', 'irrelevant_tol': float('nan')}]}).fit(X)",
     "irrelevant_tol"),
    ("random_state_negative", "CauseFS(n_clusters=3, random_state=-1).fit(X)", "random_state"),
    ("max_iter_float", "CauseFS(n_clusters=3, max_iter=1.5).fit(X)", "max_iter=1.5"),
    ("check_level", "CauseFS(n_clusters=3, check='none').fit(X)", "check='none'"),
    ("memory_limit", "CauseFS(n_clusters=3, memory_limit='lots').fit(X)", "memory_limit"),
]:
    py_error("parameters", f"python_{name}", f"""
        from causefs import CauseFS
        from causefs.plugins import get_schedule
        X = np.random.default_rng(0).random((40, 6))
        report(lambda: {code})
        """, expect, *kinds)

for name, setup, call, expect, *kinds in [
    ("direct_qp_backend", "from causefs.qp.gradient_projection_cg import "
                          "GradientProjectionCGBackend as B", "B(rtol=-1)", "rtol=-1"),
    ("direct_pg_backend", "from causefs.qp.projected_gradient import "
                          "ProjectedGradientBackend as B", "B(stall_iter=0)", "stall_iter=0"),
    ("direct_embedding", "from causefs.blocks import EmbeddingBlock as B", "B(tol=-1)",
     "tol=-1"),
    ("direct_spectral", "from causefs.blocks import SpectralEmbeddingBlock as B",
     "B(seed=-2)", "seed=-2"),
    ("direct_confounders", "from causefs.blocks import ConfoundersBlock as B",
     "B(irrelevant_tol='x')", "irrelevant_tol"),
    ("direct_cvxpy", "from causefs.qp.cvxpy_backend import CvxpyBackend as B",
     "B(solver=3)", "solver=3"),
    ("estimator_data_path", "from causefs.datasets import load_dataset",
     "load_dataset('jaffe', data_home_path=['a'])", "['a']",
     ("DatasetError", "InvalidParameterError")),
]:
    py_error("parameters", f"python_{name}", f"""
        {setup}
        report(lambda: {call})
        """, expect, *kinds)


@case("parameters", "store_key_normalised")
def store_key_normalised(env):
    """``method.alpha=1`` and the default 1.0 are one job; so are qp.rtol=1e-9 and 1.0e-9."""
    store = env.scratch / "store-normalised"
    common = [*SMALL, *SHORT, "store.enabled=true", f"store.dir={store}"]
    runs = [env.cli(*common), env.cli(*common, "method.alpha=1"),
            env.cli(*common, "method.beta=0.0001", "qp.max_iter=5000"),
            env.cli(*common, "qp.rtol=1.0e-09", "method.lam=1")]
    if any(r[0] is None for r in runs):
        return "hang", "timed out"
    if any(r[0] != 0 for r in runs[:2]):
        return "poor", f"a run failed: {[_error_lines(r[2])[-1:] for r in runs]}"
    skipped = sum("already in" in r[1] for r in runs[1:])
    entries = len(list(store.glob("*.json")))
    if skipped == 3 and entries == 1:
        return "good", "one job, stored once"
    if skipped >= 1:
        return "poor", f"{skipped} of 3 equal jobs skipped, {entries} entries"
    return "bad", f"equal jobs stored {entries} times"


# -- 2. dataset generators and data paths ---------------------------------------------

for name, args, expect in [
    ("train_bias_text", [*SHIFTED, "dataset.train_bias=abc"], "dataset.train_bias"),
    ("train_bias_big", [*SHIFTED, "dataset.train_bias=1.5"], "dataset.train_bias"),
    ("test_bias_below_minus_one", [*SHIFTED, "dataset.test_bias=-1.5"], "dataset.test_bias"),
    ("seed_negative", [*SHIFTED, "dataset.seed=-1"], "dataset.seed"),
    ("seed_text", [*SHIFTED, "dataset.seed=abc"], "dataset.seed"),
    ("seed_float", [*SHIFTED, "dataset.seed=1.5"], "dataset.seed"),
    ("n_train_zero", [*SHIFTED, "dataset.n_train=0"], "dataset.n_train"),
    ("n_train_float", [*SHIFTED, "dataset.n_train=80.5"], "dataset.n_train"),
    ("n_groups", [*SHIFTED, "dataset.n_groups=5"], "dataset.n_groups"),
    ("n_causal_multiple", [*SHIFTED, "dataset.n_causal=7"], "dataset.n_causal"),
    ("n_noise_negative", [*SHIFTED, "dataset.n_noise=-1"], "dataset.n_noise"),
    ("separation_text", [*SHIFTED, "dataset.separation=abc"], "dataset.separation"),
    ("spurious_separation_nan", [*SHIFTED, "dataset.spurious_separation=nan"],
     "dataset.spurious_separation"),
    ("n_clusters_one", [*SHIFTED, "dataset.n_clusters=1"], "dataset.n_"),
    ("border_noise_negative", [*BORDER, "dataset.border_noise=-1"], "dataset.border_noise"),
    ("border_levels_one", [*BORDER, "dataset.border_levels=[1]"], "dataset.border_levels"),
    ("border_levels_text", [*BORDER, "dataset.border_levels=[a,b]"], "dataset.border_levels"),
    ("border_levels_scalar", [*BORDER, "dataset.border_levels=5"], "dataset.border_levels"),
    ("border_levels_range", [*BORDER, "dataset.border_levels=[-4,40]"],
     "dataset.border_levels"),
    ("train_size_big", [*BORDER, "dataset.train_size=1.5"], "dataset.train_size"),
    ("train_size_text", [*BORDER, "dataset.train_size=half"], "dataset.train_size"),
    ("border_seed_negative", [*BORDER, "dataset.seed=-1"], "dataset.seed"),
    ("border_bias_text", [*BORDER, "dataset.train_bias=abc"], "dataset.train_bias"),
    ("synthetic_seed", [*SMALL, *SHORT, "dataset.seed=-1"], "dataset.seed"),
    ("synthetic_confounding", [*SMALL, *SHORT, "dataset.confounding=2"],
     "dataset.confounding"),
    ("synthetic_too_many_causal", [*SMALL, *SHORT, "dataset.n_causal=10",
                                   "dataset.n_spurious=10"], "dataset.n_"),
    ("synthetic_samples_text", [*SMALL, *SHORT, "dataset.n_samples=many"],
     "dataset.n_samples"),
    ("data_dir_list", ["dataset=jaffe", "data_dir=[a]", *SHORT], "data_dir"),
    ("data_dir_number", ["dataset=jaffe", "data_dir=5", *SHORT], "data_dir"),
    ("data_dir_missing", ["dataset=jaffe", "data_dir=/nonexistent/dir", *SHORT],
     "/nonexistent/dir"),
    ("path_empty", ["dataset=file", "dataset.path=", *SHORT], "dataset.path"),
    ("path_missing", ["dataset=file", "dataset.path=/nonexistent/x.npz", *SHORT],
     "/nonexistent/x.npz"),
    ("path_directory", ["dataset=file", "dataset.path=/etc", *SHORT], "/etc"),
    ("path_suffix", ["dataset=file", "dataset.path=/etc/hostname", *SHORT], "/etc/hostname"),
    ("path_number", ["dataset=file", "dataset.path=5", *SHORT], "dataset.path"),
]:
    cli_error("datasets", name, args, expect)


@case("datasets", "label_column_not_in_header")
def label_column_not_in_header(env):
    """A label column named by a header name the file does not have (a name is allowed:
    CSV headers carry names)."""
    path = env.scratch / "labelled.csv"
    path.write_text("a,b,class\n" + "\n".join(f"{i % 3},{i % 5},{i % 2}" for i in range(20)))
    return judge_cli_error(env.cli("dataset=file", f"dataset.path={path}",
                                   "dataset.label_column=label", *SHORT), "label")


@case("datasets", "relative_path_shows_absolute")
def relative_path_shows_absolute(env):
    """A relative data path that does not exist: the message shows where it looked."""
    code, out, err, s = env.cli("dataset=file", "dataset.path=nothere/data.npz", *SHORT,
                                "hydra.job.chdir=true")
    looked = str(env.scratch / "nothere" / "data.npz")
    return judge_cli_error((code, out, err, s), looked)


for name, code, expect in [
    ("shifted_bias_text", "make_shifted_clusters(train_bias='abc')", "train_bias='abc'"),
    ("shifted_seed", "make_shifted_clusters(seed=-1)", "seed=-1"),
    ("shifted_groups", "make_shifted_clusters(n_groups=9)", "n_groups=9"),
    ("shifted_n_train", "make_shifted_clusters(n_train=2)", "n_train=2"),
    ("border_noise", "make_digits_border(border_noise=-1)", "border_noise=-1"),
    ("border_levels", "make_digits_border(border_levels=(1,))", "border_levels"),
    ("border_levels_nan", "make_digits_border(border_levels=(1, float('nan')))",
     "border_levels"),
    ("border_train_size", "make_digits_border(train_size=0)", "train_size=0"),
    ("causal_seed", "make_causal(seed=-1)", "seed=-1"),
    ("causal_sizes", "make_causal(n_features=5)", "n_features=5"),
]:
    py_error("datasets", f"python_{name}", f"""
        from causefs.datasets import make_shifted_clusters, make_digits_border, make_causal
        report(lambda: {code})
        """, expect)


# -- 3. the store -----------------------------------------------------------------------


def _store_job(env, store, *extra, timeout=180):
    return env.cli(*SMALL, *SHORT, "store.enabled=true", f"store.dir={store}", *extra,
                   timeout=timeout)


def _key_of(env, store) -> str | None:
    result = _store_job(env, store)
    entries = list(store.glob("*.json"))
    return entries[0].stem if result[0] == 0 and len(entries) == 1 else None


def _judge_store_rerun(result, store, key) -> tuple[str, str]:
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    if code != 0:
        return ("poor" if _error_lines(err) and len(_error_lines(err)) <= 2 else "bad"), \
            f"exit {code}: {_error_lines(err)[-1:]}"
    entry = store / f"{key}.json"
    if entry.is_file() and not entry.is_symlink() and json.loads(entry.read_text()).get("key"):
        return "good", "recomputed and stored; " + (_error_lines(err)[-1] if err.strip()
                                                      else "no warning")[:200]
    return "poor", f"exit 0 but the entry is not a regular file: {entry}"


def store_scene(name, make):
    @case("store", name)
    def run(env):
        store = env.scratch / f"store-{name}"
        key = _key_of(env, store)
        if key is None:
            return "poor", "could not run the first job"
        entry = store / f"{key}.json"
        entry.unlink()
        make(entry)
        return _judge_store_rerun(_store_job(env, store, timeout=60), store, key)


store_scene("fifo_entry", lambda p: os.mkfifo(p))
store_scene("directory_entry", lambda p: (p.mkdir(), (p / "x").write_text("1")))
store_scene("symlink_loop", lambda p: os.symlink(p.name, p))
store_scene("dangling_symlink", lambda p: os.symlink("/nonexistent/target.json", p))
store_scene("symlink_to_system_file", lambda p: os.symlink("/etc/hostname", p))
store_scene("unreadable_entry", lambda p: (p.write_text("{}"), p.chmod(0)))


@case("store", "invalid_dir_is_a_file")
def invalid_dir_is_a_file(env):
    store = env.scratch / "store-invalid-file"
    key = _key_of(env, store)
    if key is None:
        return "poor", "could not run the first job"
    (store / f"{key}.json").write_text("{}")
    (store / "invalid").write_text("not a directory")
    return _judge_store_rerun(_store_job(env, store, timeout=60), store, key)


def report_scene(name, make):
    @case("store", f"report_{name}")
    def run(env):
        store = env.scratch / f"store-report-{name}"
        if _key_of(env, store) is None:
            return "poor", "could not run the first job"
        make(store / "0123456789abcdef.json")
        code, out, err, _ = env.run([PYTHON, "-m", "causefs.app.report", "--store",
                                     str(store), "--out", str(store.parent / f"rep-{name}"),
                                     "--no-figures"], timeout=60)
        if code is None:
            return "hang", "timed out"
        if code == 0:
            return "good", (_error_lines(err)[-1] if err.strip() else "no warning")[:200]
        return "poor", f"exit {code}: {_error_lines(err)[-1:]}"


report_scene("fifo", lambda p: os.mkfifo(p))
report_scene("directory", lambda p: p.mkdir())
report_scene("symlink_loop", lambda p: os.symlink(p.name, p))


@case("store", "store_dir_is_a_file")
def store_dir_is_a_file(env):
    blocker = env.scratch / "blocker"
    blocker.write_text("")
    return judge_cli_error(_store_job(env, blocker), "store.dir")


def run_together(env, runs, timeout):
    """The ``causefs`` command with each of ``runs`` (argument lists) in a process of its
    own, started together: ``(processes, [(stdout, stderr), ...])``, or None after
    killing them all when one is still running at ``timeout``."""
    procs = [subprocess.Popen([PYTHON, "-m", "causefs.app.cli", *args], cwd=env.scratch,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=env.env(), start_new_session=True) for args in runs]
    outs = []
    for proc in procs:
        try:
            outs.append(proc.communicate(timeout=timeout))
        except subprocess.TimeoutExpired:
            for other in procs:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(other.pid, signal.SIGKILL)
            return None
    return procs, outs


@case("store", "two_sweeps_at_once")
def two_sweeps_at_once(env):
    """Two sweeps of the same 3 jobs started together: each job computed once."""
    store = env.scratch / "store-concurrent"
    sweep = ["-m", "dataset.seed=0,1,2", *SMALL, "method.max_iter=3", "store.enabled=true",
             f"store.dir={store}"]
    ran = run_together(env, [[*sweep, f"hydra.sweep.dir={env.scratch / f'sweep{i}'}"]
                             for i in range(2)], timeout=600)
    if ran is None:
        return "hang", "a sweep timed out"
    procs, outs = ran
    if any(p.returncode != 0 for p in procs):
        return "poor", f"a sweep failed: {[_error_lines(e)[-1:] for _, e in outs]}"
    computed = sum(o.count("result written to") for o, _ in outs)
    stored = len(list(store.glob("*.json")))
    if computed == 3 and stored == 3:
        return "good", "3 jobs computed once between the two sweeps"
    return ("bad" if computed > 3 else "poor"), f"{computed} computations for 3 jobs, " \
                                                 f"{stored} stored"


@case("store", "stale_claim_after_crash")
def stale_claim_after_crash(env):
    """A job killed while it computes: the next run computes it (no wait, no skip)."""
    store = env.scratch / "store-stale"
    args = [PYTHON, "-m", "causefs.app.cli", *SMALL, "method.max_iter=30", "method.tol=0",
            "dataset.n_samples=3000", "dataset.n_features=60", "store.enabled=true",
            f"store.dir={store}", f"hydra.run.dir={env.scratch / 'stale-run'}"]
    proc = subprocess.Popen(args, cwd=env.scratch, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env.env(),
                            start_new_session=True)
    # killed once its claim is taken, i.e. in the fit: a fixed wait raced the fit, which
    # finished first on a fast machine
    deadline = time.perf_counter() + 120
    while not list(store.glob("*.claim")) and proc.poll() is None \
            and time.perf_counter() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    if list(store.glob("*.json")):
        return "error", "the job finished before it was killed: the case proves nothing"
    code, out, err, _ = env.run(args[:-1] + [f"hydra.run.dir={env.scratch / 'stale-2'}"],
                                timeout=400)
    if code is None:
        return "hang", "the re-run waited on the dead job's claim"
    if code == 0 and "result written to" in out:
        return "good", "the re-run computed the job"
    return "poor", f"exit {code}: {(out + err).strip()[-200:]}"


@case("store", "chdir_relative_store")
def chdir_relative_store(env):
    """hydra.job.chdir=true with a relative store: the re-run finds the stored job."""
    work = env.scratch / "chdir-work"
    work.mkdir()
    args = [*SMALL, *SHORT, "store.enabled=true", "store.dir=rel/store", "hydra.job.chdir=true"]
    first = env.cli(*args, cwd=work, run_dir="outputs/a")
    second = env.cli(*args, cwd=work, run_dir="outputs/b")
    if None in (first[0], second[0]):
        return "hang", "timed out"
    if first[0] != 0 or second[0] != 0:
        return "poor", f"exit {first[0]}, {second[0]}: {_error_lines(second[2])[-1:]}"
    if "already in" in second[1] and (work / "rel" / "store").is_dir():
        return "good", "the store stays where it was named"
    return "bad", "the re-run recomputed (the store moved into the run folder)"


@case("store", "chdir_relative_data_path")
def chdir_relative_data_path(env):
    work = env.scratch / "chdir-data"
    work.mkdir()
    import numpy as np

    rng = np.random.default_rng(0)
    np.savez(work / "data.npz", X=rng.random((40, 6)), y=np.repeat([0, 1], 20))
    result = env.cli("dataset=file", "dataset.path=data.npz", "n_features_to_select=2",
                     "evaluation.n_runs=1", *SHORT, "hydra.job.chdir=true", cwd=work,
                     run_dir="outputs/a")
    if result[0] is None:
        return "hang", "timed out"
    if result[0] == 0:
        return "good", "the relative path is the caller's"
    return "poor", f"exit {result[0]}: {_error_lines(result[2])[-1:]}"


@case("store", "result_file_anywhere")
def result_file_anywhere(env):
    """result_file may be any path the user names (issue 25): an absolute path in a
    folder that does not exist yet, and a relative one above the run folder."""
    kept = [env.scratch / "kept" / "deep" / "result.json", env.scratch / "above.json"]
    for target, value in zip(kept, [kept[0], "../above.json"]):
        code, out, err, _ = env.cli(*SMALL, *SHORT, f"result_file={value}",
                                    run_dir=env.scratch / "run-anywhere")
        if code is None:
            return "hang", "timed out"
        if code != 0 or not target.is_file() or "selected_features" not in json.loads(
                target.read_text()):
            return "bad", f"result_file={value}: exit {code}, {target} " \
                          f"{'exists' if target.exists() else 'missing'}: {err[-200:]}"
    return "good", "written at an absolute path (new folders) and above the run folder"


@case("store", "result_file_unwritable")
def result_file_unwritable(env):
    """result_file naming a folder: the finished result is kept elsewhere and the one
    error line (exit 2) says where."""
    folder = env.scratch / "a-folder"
    folder.mkdir()
    code, out, err, _ = env.cli(*SMALL, *SHORT, f"result_file={folder}")
    if code is None:
        return "hang", "timed out"
    last = (_error_lines(err) or [""])[-1]
    kept = re.search(r"the result is in (\S+\.json)", last)
    if code == 2 and last.startswith("causefs: error: could not write") and kept \
            and Path(kept.group(1)).is_file():
        return "good", last[:250]
    return "poor", f"exit {code}: {last[:250]}"


# -- 4. plugins -------------------------------------------------------------------------

PLUGINS = {
    "import_error": ("import causefs_no_such_module_xyz\n", None),
    "runtime_error": ("raise RuntimeError('plugin exploded at import')\n", None),
    "syntax_error": ("def broken(:\n", None),
    "missing_attribute": ("x = 1\n", "broken_plugin:missing"),
    "duplicate_kernel": ("""
        from causefs.kernels import LinearKernel
        from causefs.plugins import hookimpl
        class Dup(LinearKernel):
            name = "linear"
        @hookimpl
        def causefs_register_kernels(registry):
            registry.add_kernel(Dup)
        """, None),
    "duplicate_selector": ("""
        from causefs.selectors import AllFeatures
        from causefs.plugins import hookimpl
        class Dup(AllFeatures):
            name = "mcfs"
        @hookimpl
        def causefs_register_selectors(registry):
            registry.add_selector(Dup)
        """, None),
    "misspelled_hook": ("""
        from causefs.plugins import hookimpl
        @hookimpl
        def causefs_register_kernel(registry):
            pass
        """, None),
    "hook_raises": ("""
        from causefs.plugins import hookimpl
        @hookimpl
        def causefs_register_kernels(registry):
            raise ValueError("no parts today")
        """, None),
    "schedule_missing_block": ("""
        from causefs.plugins import hookimpl
        @hookimpl
        def causefs_register_schedules(registry):
            registry.add_schedule({"name": "ghost", "loop": ["no_such_block"]})
        """, None),
    "old_hook": ("""
        from causefs.plugins import hookimpl
        @hookimpl
        def causefs_register_parts(registry):
            pass
        """, None),
    "unconfigurable_default": ("""
        from causefs.kernels import LinearKernel
        from causefs.plugins import hookimpl
        class Odd(LinearKernel):
            name = "odd_kernel"
            def __init__(self, thing=object()):
                self.thing = thing
        @hookimpl
        def causefs_register_kernels(registry):
            registry.add_kernel(Odd)
        """, None),
    "not_a_class": ("""
        from causefs.plugins import hookimpl
        @hookimpl
        def causefs_register_blocks(registry):
            registry.add_block("selection_matrix")
        """, None),
}


def install_plugin(site: Path, source: str, target: str | None) -> None:
    site.mkdir(parents=True, exist_ok=True)
    (site / "broken_plugin.py").write_text(textwrap.dedent(source))
    info = site / "broken_plugin-0.1.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text(
        f"[causefs]\nbroken = {target or 'broken_plugin'}\n")


def judge_plugin(result, silent_ok=False) -> tuple[str, str]:
    """Good: the command works and one line names the distribution and the entry point
    (or it stops with that line and the autoload switch); with ``silent_ok`` (a failure
    in a layer the call does not use) working without a word is good too."""
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    lines = _error_lines(err)
    if silent_ok and code == 0 and not lines:
        return "good", "works; the failing layer is not used"
    naming = [line for line in lines if "broken-plugin" in line and "broken" in line]
    if code == 0 and len(naming) == 1 and "Traceback" not in err:
        return "good", naming[0][:250]
    if code == 2 and len(lines) == 1 and naming and "CAUSEFS_DISABLE_PLUGIN_AUTOLOAD" in err:
        return "good", naming[0][:250]
    if code == 0:
        return "poor", f"works, {len(lines)} stderr lines: {lines[-1:]}"
    return "bad", f"exit {code}, {len(lines)} stderr lines: {lines[-1:]}"


for plugin_name, (source, target) in PLUGINS.items():
    def make(plugin_name=plugin_name, source=source, target=target):
        @case("plugins", plugin_name)
        def run(env):
            site = env.scratch / f"site-{plugin_name}"
            install_plugin(site, source, target)
            return judge_plugin(env.cli(*SMALL, *SHORT, extra_path=[site]))

        @case("plugins", f"{plugin_name}_python")
        def run_python(env):
            site = env.scratch / f"site-{plugin_name}"
            install_plugin(site, source, target)
            code, out, err, s = env.py("""
                import warnings
                import numpy as np
                from sklearn.exceptions import ConvergenceWarning
                from causefs import CauseFS
                # max_iter=1 does not converge: the fit's warning, not the plugin's
                warnings.simplefilter("ignore", ConvergenceWarning)
                X = np.random.default_rng(0).random((40, 6))
                CauseFS(n_clusters=3, max_iter=1).fit(X)
                print("fitted")
                """, extra_path=[site])
            # a fit does not build the selectors' registry, where this plugin fails
            return judge_plugin((code, out, err, s), plugin_name == "duplicate_selector")
    make()


# -- 5. contracts -----------------------------------------------------------------------

CONTRACT_PRELUDE = """
from causefs import CauseFS
from causefs.blocks import Block
from causefs.core.contracts import BlockContractError
from causefs.plugins import register_plugin, hookimpl, get_schedule
X = np.random.default_rng(0).random((60, 8))
FULL = get_schedule("full")

def plugin_block(cls):
    class P:
        @hookimpl
        def causefs_register_blocks(self, registry):
            registry.add_block(cls)
    register_plugin(P(), name="p_" + cls.name)

def fit(loop, check="cheap", init=None, max_iter=3):
    schedule = {"name": "mine", "init": init or list(FULL["init"]), "loop": loop}
    return CauseFS(n_clusters=3, max_iter=max_iter, tol=0.0, check=check, random_state=0,
                   schedule=schedule).fit(X)
"""

CONTRACT_BLOCKS = {
    "writes_nothing": """
        class Lazy(Block):
            name = "lazy"; kind = "init"; reads = ("X",); writes = ("G", "xi")
            def step(self, state):
                return state
        plugin_block(Lazy)
        init = [b for b in FULL["init"] if b != "initial_fused_graph"] 
        init.insert(init.index("spectral_embedding"), "lazy")
        """,
    "nan_mid_iteration": """
        class NaNF(Block):
            name = "nan_f"; kind = "descent"; reads = ("F",); writes = ("F",)
            derived_for = "*"
            def step(self, state):
                F = state.F.copy(); F[3, 1] = np.nan
                return state.replace(F=F)
        plugin_block(NaNF)
        """,
    "inf_in_mu": """
        class InfMu(Block):
            name = "inf_mu"; kind = "descent"; reads = ("mu",); writes = ("mu",)
            derived_for = "*"
            def step(self, state):
                mu = state.mu.copy(); mu[0] = np.inf
                return state.replace(mu=mu)
        plugin_block(InfMu)
        """,
    "nan_in_graph": """
        class NaNG(Block):
            name = "nan_g"; kind = "descent"; reads = ("G",); writes = ("G",)
            derived_for = "*"
            def step(self, state):
                G = state.G.copy(); G.data[0] = np.nan
                return state.replace(G=G)
        plugin_block(NaNG)
        """,
    "raises_objective": """
        class Up(Block):
            name = "up"; kind = "descent"; reads = ("W",); writes = ("W",)
            derived_for = "*"
            def step(self, state):
                return state.replace(W=state.W * 300.0)
        plugin_block(Up)
        """,
    "raises_inside": """
        class Boom(Block):
            name = "boom"; kind = "descent"; reads = ("W",); writes = ("W",)
            derived_for = "*"
            def step(self, state):
                return state.replace(W=state.W @ np.ones((3, 3, 3)))
        plugin_block(Boom)
        """,
    "structural_only": """
        class Nothing(Block):
            name = "nothing"; kind = "structural"; reads = ("W",); writes = ("K",)
            def step(self, state):
                return state.replace(K=state.K.copy())
        plugin_block(Nothing)
        """,
}

for name, code, loop, expect, kinds, extra in [
    ("writes_nothing_cheap", CONTRACT_BLOCKS["writes_nothing"], "list(FULL['loop'])",
     ["'lazy'", "G"], ("BlockContractError",), "init=init"),
    ("writes_nothing_strict", CONTRACT_BLOCKS["writes_nothing"], "list(FULL['loop'])",
     ["'lazy'", "G"], ("BlockContractError",), "init=init, check='strict'"),
    ("nan_cheap", CONTRACT_BLOCKS["nan_mid_iteration"],
     "['selection_matrix', 'nan_f', 'fused_graph', 'embedding']", "'nan_f'",
     ("BlockContractError", "FloatingPointError"), ""),
    ("nan_strict", CONTRACT_BLOCKS["nan_mid_iteration"],
     "['selection_matrix', 'nan_f', 'fused_graph', 'embedding']", "'nan_f'",
     ("BlockContractError", "FloatingPointError"), "check='strict'"),
    ("inf_mu", CONTRACT_BLOCKS["inf_in_mu"],
     "['selection_matrix', 'inf_mu', 'granular_graphs', 'embedding']", "'inf_mu'",
     ("BlockContractError", "FloatingPointError"), ""),
    ("nan_graph", CONTRACT_BLOCKS["nan_in_graph"],
     "['selection_matrix', 'nan_g', 'embedding', 'fused_graph']", "'nan_g'",
     ("BlockContractError", "FloatingPointError"), ""),
    ("raises_inside", CONTRACT_BLOCKS["raises_inside"],
     "['selection_matrix', 'boom', 'embedding']", "'boom'",
     ("ValueError", "BlockContractError"), ""),
    ("no_descent_block", CONTRACT_BLOCKS["structural_only"], "['nothing']", "descent",
     ("ScheduleError", "InvalidParameterError"), ""),
    ("only_structural_builtin", "", "['confounders', 'granularity']", "descent",
     ("ScheduleError", "InvalidParameterError"), ""),
]:
    py_error("contracts", name, CONTRACT_PRELUDE + textwrap.dedent(code) + f"""
report(lambda: fit({loop}{', ' + extra if extra else ''}))
""", expect, kinds)


@case("contracts", "descent_violation_default")
def descent_violation_default(env):
    code = CONTRACT_PRELUDE + textwrap.dedent(CONTRACT_BLOCKS["raises_objective"]) + """
report(lambda: fit(['selection_matrix', 'up', 'embedding']))
"""
    return judge_py_warning(env.py(PY_PRELUDE + code), "'up'", "DescentWarning")


@case("contracts", "descent_violation_strict")
def descent_violation_strict(env):
    code = CONTRACT_PRELUDE + textwrap.dedent(CONTRACT_BLOCKS["raises_objective"]) + """
report(lambda: fit(['selection_matrix', 'up', 'embedding'], check='strict'))
"""
    return judge_py_error(env.py(PY_PRELUDE + code), "'up'", ("BlockContractError",))


@case("contracts", "check_block_writes_nothing")
def check_block_writes_nothing(env):
    code = CONTRACT_PRELUDE + """
class Lazy(Block):
    name = "lazy"; kind = "descent"; reads = ("W",); writes = ("W",)
    derived_for = "*"
    def step(self, state):
        return state.replace(W=None)
from causefs.testing import check_block
report(lambda: check_block(Lazy(), max_examples=5))
"""
    return judge_py_error(env.py(PY_PRELUDE + code), "'lazy'",
                          ("BlockContractError", "AssertionError"))


@case("contracts", "correct_schedule_no_warning")
def correct_schedule_no_warning(env):
    """The built-in schedules raise no contract warning at the default level."""
    code, out, err, _ = env.py(PY_PRELUDE + CONTRACT_PRELUDE + """
for schedule in ("full", "ablation_I", "ablation_II", "dwr", "srdo"):
    report(lambda: CauseFS(n_clusters=3, max_iter=5, random_state=0,
                           schedule=schedule).fit(X) and schedule)
""", timeout=300)
    if code is None:
        return "hang", "timed out"
    if "RAISED" in out:
        return "bad", re.search(r"^RAISED.*$", out, re.M).group(0)[:200]
    warned = re.findall(r"^WARNED (\w+) \| (.*)$", out, re.M)
    contract = [w for w in warned if w[0] in ("DescentWarning", "ContractWarning")]
    if contract:
        return "bad", f"false alarm: {contract[0]}"
    return "good", "no contract warning on the built-in schedules"


# -- 6. small items ---------------------------------------------------------------------


@case("small", "npz_unused_huge_member")
def npz_unused_huge_member(env):
    """A small .npz with an unused member of 3 GB of zeros: loads in seconds."""
    import zipfile

    import numpy as np

    path = env.scratch / "huge_member.npz"
    rng = np.random.default_rng(0)
    np.savez(path, X=rng.random((40, 6)), y=np.repeat([0, 1], 20))
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1))
    header["shape"] = (400_000_000,)
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("junk.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, header)
            block = bytes(1 << 24)
            for _ in range((400_000_000 * 8) >> 24):
                member.write(block)
    result = env.py(PY_PRELUDE + f"""
import resource
resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))
from causefs.datasets import load_file
report(lambda: load_file({str(path)!r}).X.shape)
""", timeout=60)
    code, out, err, seconds = result
    if code is None:
        return "hang", "timed out"
    if "RETURNED (40, 6)" in out and seconds < 30:
        return "good", f"loaded in {seconds:.1f} s"
    return "poor" if "RAISED" in out else "bad", f"{out.strip()[-200:]} ({seconds:.1f} s)"


@case("small", "npz_declared_huge_features")
def npz_declared_huge_features(env):
    """An .npz whose X member declares 40 GB: refused before allocating."""
    import zipfile

    import numpy as np

    path = env.scratch / "bomb.npz"
    header = np.lib.format.header_data_from_array_1_0(np.zeros((1, 1)))
    header["shape"] = (100_000, 50_000)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        with archive.open("X.npy", "w", force_zip64=True) as member:
            np.lib.format.write_array_header_1_0(member, header)
            member.write(bytes(1 << 20))
    result = env.py(PY_PRELUDE + f"""
from causefs.datasets import load_file
report(lambda: load_file({str(path)!r}))
""", timeout=60)
    return judge_py_error(result, "bomb.npz", ("DatasetError",))


@case("small", "csv_link_to_system_file")
def csv_link_to_system_file(env):
    """A .csv link to a system file: the error does not echo its lines."""
    link = env.scratch / "passwd.csv"
    if not link.exists():
        os.symlink("/etc/passwd", link)
    lines = [line for line in Path("/etc/passwd").read_text().splitlines() if len(line) > 12]
    code, out, err, s = env.cli("dataset=file", f"dataset.path={link}", *SHORT)
    verdict, detail = judge_cli_error((code, out, err, s), "passwd.csv")
    if any(line[:16] in err for line in lines):
        return ("poor" if verdict == "good" else verdict), f"echoes the file: {detail}"
    return verdict, detail


@case("small", "csv_long_cell")
def csv_long_cell(env):
    path = env.scratch / "long.csv"
    path.write_text("1,2\n3," + "x" * 5000 + "\n")
    code, out, err, s = env.cli("dataset=file", f"dataset.path={path}", *SHORT)
    verdict, detail = judge_cli_error((code, out, err, s), "line 2, column 2")
    if len(err) > 400:
        return ("poor" if verdict == "good" else verdict), f"{len(err)} characters"
    return verdict, detail


# -- 8. nuisance variables: Z from Python and from files --------------------------------

Z_PRELUDE = """
from causefs import CauseFS
import scipy.sparse as sp
rng = np.random.default_rng(0)
X = rng.random((40, 8))
fit = lambda Z, **kw: int(CauseFS(n_clusters=2, n_features_to_select=3, max_iter=2,
                                  random_state=0, **kw).fit(X, nuisance=Z).support_.sum())
"""
for name, z, expect in [
    ("z_wrong_length", "np.arange(39) % 2", "39 rows"),
    ("z_nan", "np.where(np.arange(40) == 3, np.nan, np.arange(40) % 2.0)", "NaN"),
    ("z_inf", "np.where(np.arange(40) == 3, np.inf, np.arange(40) % 2.0)", "infinite"),
    ("z_missing_text", "np.array(['a', None] * 20, dtype=object)", "missing"),
    ("z_constant", "np.zeros(40)", "does not vary"),
    ("z_three_dims", "np.zeros((40, 1, 1))", "2-D"),
    ("z_sparse", "sp.csr_array(np.eye(40)[:, :2])", "sparse"),
    ("z_complex", "np.ones(40, dtype=complex)", "complex"),
    ("z_every_sample_a_level", "np.arange(40)", "too many levels"),
    ("z_more_columns_than_samples", "rng.random((40, 45))", "too many"),
    ("z_dict", "{'batch': np.arange(40) % 2}", "nuisance"),
]:
    py_error("nuisance", name, Z_PRELUDE + f"report(lambda: fit({z}))", expect,
             kinds=("ValueError", "TypeError"))

for name, z, expect in [
    ("z_ragged_rows", "[[0, 1]] * 39 + [[0]]", "nuisance"),
    ("z_scalar", "3", "nuisance"),
    ("z_transposed", "(np.arange(40) % 2)[None, :]", "1 rows"),
    ("z_no_columns", "np.zeros((40, 0))", "does not vary"),
    ("z_bool_constant", "np.ones(40, bool)", "does not vary"),
    ("z_datetime", "np.arange(40).astype('datetime64[D]')", "datetime64"),
    ("z_mixed_labels", "np.array([1, 'a'] * 20, dtype=object)", "comparable"),
    ("z_pandas_nullable_int_na", "pd.Series([1, pd.NA] * 20, dtype='Int64')",
     ["column 0", "NaN"]),
    ("z_pandas_string_na", "pd.Series(['a', pd.NA] * 20, dtype='string')", "missing"),
    ("z_pandas_categorical_one_level", "pd.DataFrame({'b': pd.Categorical(['x'] * 40)})",
     "does not vary"),
    ("z_pandas_frame_nan", "pd.DataFrame({'a': np.arange(40.0), 'b': [1.0, np.nan] * 20})",
     ["column 1", "NaN"]),
]:
    py_error("nuisance", name, Z_PRELUDE + "import pandas as pd\n"
             + f"report(lambda: fit({z}))", expect, kinds=("ValueError", "TypeError"))

for name, call, expect in [
    ("z_sparse_x_wrong_length", "fit(sp.csr_array(X), nuisance=np.arange(39) % 2)", "39 rows"),
    ("z_rare_level_with_stability_selection", "set_params(stability_subsamples=8).fit(X, "
     "nuisance=np.r_[np.zeros(38, int), 1, 1])", "stability_subsamples"),
]:
    py_error("nuisance", name, Z_PRELUDE + "report(lambda: CauseFS(n_clusters=2, "
             f"n_features_to_select=3, max_iter=2, random_state=0).{call})", expect,
             kinds=("ValueError",))


def z_returns(name, setup, expression, expected, what):
    @case("nuisance", name)
    def run(env):
        code = PY_PRELUDE + Z_PRELUDE + setup + f"report(lambda: {expression})"
        return judge_py_returns(env.py(code), expected, what)


#: the share of each feature's variance a Z explains, from a fit given that Z
SHARES = """
def share(Z):
    return CauseFS(n_clusters=2, n_features_to_select=3, max_iter=1,
                   random_state=0).fit(X, nuisance=Z).nuisance_share_
COVARIATE = np.random.default_rng(1).normal(size=40)
"""
z_returns("z_near_the_largest_float", SHARES,
          "bool(np.allclose(share(COVARIATE * 1e307), share(COVARIATE)))", "True",
          "a covariate of values near 1e308 explains what it does at scale 1")
z_returns("z_near_the_smallest_float", SHARES,
          "bool(np.allclose(share(COVARIATE * 1e-300), share(COVARIATE)))", "True",
          "a covariate of values near 1e-300 explains what it does at scale 1")
z_returns("z_equal_to_a_feature", SHARES, "round(float(share(X[:, 0].copy())[0]), 6)", "1.0",
          "a Z equal to a feature explains all of it")
z_returns("z_with_sparse_x_as_with_dense", "Z = np.arange(40) % 2\n",
          "bool(np.array_equal(CauseFS(n_clusters=2, n_features_to_select=3, max_iter=2, "
          "random_state=0).fit(sp.csr_array(X), nuisance=Z).support_, CauseFS(n_clusters=2, "
          "n_features_to_select=3, max_iter=2, random_state=0).fit(X, nuisance=Z).support_))",
          "True", "a sparse X with Z selects what the dense X does")


def z_warning(name, z, expect, category, **options):
    @case("nuisance", name)
    def run(env):
        code = PY_PRELUDE + Z_PRELUDE + f"report(lambda: fit({z}, **{options!r}))"
        return judge_py_warning(env.py(code), expect, category)


z_warning("z_one_sample_level", "np.r_[np.zeros(20, int), np.ones(19, int), 2]",
          "hold one sample",
          "NuisanceWarning")
z_warning("z_constant_column", "np.c_[np.arange(40) % 2, np.ones(40)]", "do not vary",
          "NuisanceWarning")
z_warning("z_with_a_schedule_that_ignores_it", "np.arange(40) % 2", "full",
          "NuisanceUnusedWarning", schedule="full")


@case("nuisance", "z_text_levels_and_bools_work")
def z_text_levels_and_bools_work(env):
    code = PY_PRELUDE + Z_PRELUDE + ("report(lambda: (fit(np.array(['run1', 'run2'] * 20)), "
                                     "fit(np.arange(40) % 2 == 0), fit([1, 2] * 20)))")
    return judge_py_returns(env.py(code), "(3, 3, 3)",
                            "text levels, booleans and a list of labels fit")


py_error("nuisance", "nuisance_schedule_without_z", Z_PRELUDE + """
report(lambda: CauseFS(n_clusters=2, schedule='nuisance_adjusted', max_iter=2).fit(X))
""", ["nuisance", "nuisance_adjusted"], kinds=("ValueError",))


def z_file_case(name, write, args, expect):
    @case("nuisance", name)
    def run(env):
        folder = env.scratch / name
        folder.mkdir()
        write(folder)
        return judge_cli_error(env.cli(*args(folder), "n_clusters=2", "n_features_to_select=3",
                                       "evaluation.n_runs=1", *SHORT), expect)


def _csv_with_batch(rows):
    def write(folder):
        (folder / "data.csv").write_text("a,b,c,d,batch\n" + "\n".join(rows) + "\n")
    return write


_GOOD_ROWS = [f"{i % 3},{i % 5},{i % 7},{i % 2},{i % 2}" for i in range(30)]
z_file_case("csv_nuisance_column_missing", _csv_with_batch(_GOOD_ROWS),
            lambda f: ["dataset=file", f"dataset.path={f / 'data.csv'}",
                       "dataset.nuisance=site"], "site")
z_file_case("csv_nuisance_empty_cell", _csv_with_batch(_GOOD_ROWS[:5] + ["1,2,3,4,"]
                                                       + _GOOD_ROWS[6:]),
            lambda f: ["dataset=file", f"dataset.path={f / 'data.csv'}",
                       "dataset.nuisance=batch"], ["line 7", "batch"])
z_file_case("npz_nuisance_inf", lambda f: np_save(f / "data.npz", Z=[float("inf")] + [0, 1] * 15),
            lambda f: ["dataset=file", f"dataset.path={f / 'data.npz'}",
                       "dataset.nuisance=Z"], ["data.npz", "Z"])
z_file_case("npz_nuisance_wrong_length", lambda f: np_save(f / "data.npz", Z=[0, 1] * 10),
            lambda f: ["dataset=file", f"dataset.path={f / 'data.npz'}",
                       "dataset.nuisance=Z"], ["Z", "20"])


def _column(values):
    """A CSV of 30 rows whose column ``batch`` holds ``values``."""
    return _csv_with_batch([f"{i % 3},{i % 5},{i % 7},{i % 2},{v}" for i, v in
                            enumerate(values)])


def _csv_args(*extra):
    return lambda f: ["dataset=file", f"dataset.path={f / 'data.csv'}", *extra]


def _npz_args(*extra):
    return lambda f: ["dataset=file", f"dataset.path={f / 'data.npz'}", *extra]


for name, values, extra, expect in [
    ("csv_nuisance_constant", [1] * 30, ["dataset.nuisance=batch"],
     ["dataset.nuisance", "data.csv", "does not vary"]),
    ("csv_nuisance_one_text_level", ["x"] * 30, ["dataset.nuisance=batch"],
     ["dataset.nuisance", "does not vary"]),
    ("csv_nuisance_a_level_per_sample", [f"s{i}" for i in range(30)],
     ["dataset.nuisance=batch"], ["dataset.nuisance", "too many"]),
    ("csv_nuisance_na_text", ["NA"] + ["b1", "b2"] * 14 + ["b1"], ["dataset.nuisance=batch"],
     ["line 2", "batch", "NA"]),
    ("csv_nuisance_nan_number", [0, 1, "nan"] * 10, ["dataset.nuisance=batch"],
     ["line 4", "batch", "nan"]),
    ("csv_nuisance_inf_number", [0, 1, "inf"] * 10, ["dataset.nuisance=batch"],
     ["line 4", "batch", "inf"]),
    ("csv_nuisance_null_text", ["a", "b", "null"] * 10, ["dataset.nuisance=batch"],
     ["line 4", "batch", "null"]),
    ("csv_nuisance_also_the_labels", [0, 1] * 15, ["dataset.nuisance=batch",
                                                  "dataset.label_column=batch"], "both"),
    ("csv_nuisance_column_out_of_range", [0, 1] * 15, ["dataset.nuisance=99"], "99"),
    ("csv_nuisance_list_with_unknown_name", [0, 1] * 15, ["dataset.nuisance=[batch,site]"],
     "site"),
    ("csv_nuisance_float_column_number", [0, 1] * 15, ["dataset.nuisance=1.5"],
     "dataset.nuisance"),
]:
    z_file_case(name, _column(values), _csv_args(*extra), expect)


@case("nuisance", "csv_nuisance_two_named_columns_work")
def csv_nuisance_two_named_columns_work(env):
    """A list of header names, as load_file takes it."""
    folder = env.scratch / "two-named"
    folder.mkdir()
    (folder / "data.csv").write_text("a,b,c,batch,site\n" + "\n".join(
        f"{i % 3},{i % 5},{i % 7},{i % 2},s{i % 3}" for i in range(30)) + "\n")
    code, out, err, _ = env.cli("dataset=file", f"dataset.path={folder / 'data.csv'}",
                                "dataset.nuisance=[batch,site]", "n_clusters=2",
                                "n_features_to_select=2", "evaluation.n_runs=1", *SHORT)
    if code is None:
        return "hang", "timed out"
    if code == 0 and "nuisance variables were given" in out:
        return "good", "both columns given to the method"
    return ("bad" if code == 0 else "poor"), f"exit {code}: {(out + err).strip()[-200:]}"


def np_save_raw(path, make):
    """An .npz of 30 samples whose ``Z`` is ``make(numpy)``, as made (text, complex, any
    shape)."""
    import numpy as np

    np.savez(path, X=np.random.default_rng(0).random((30, 6)), Z=make(np))


for name, make, extra, expect in [
    ("npz_nuisance_constant", lambda np: np.ones(30), [],
     ["dataset.nuisance", "does not vary"]),
    ("npz_nuisance_three_dims", lambda np: np.zeros((30, 2, 2)), [],
     ["data.npz", "'Z'", "shape"]),
    ("npz_nuisance_scalar", lambda np: np.float64(3), [], ["data.npz", "'Z'"]),
    ("npz_nuisance_complex", lambda np: np.ones(30) * 1j, [],
     ["dataset.nuisance", "complex"]),
    ("npz_nuisance_wider_than_samples", lambda np: np.random.default_rng(1).random((30, 40)),
     [], ["dataset.nuisance", "too many"]),
    ("npz_nuisance_key_missing", lambda np: np.arange(30) % 2, ["dataset.nuisance=batch"],
     ["data.npz", "'batch'"]),
    ("npz_nuisance_as_a_list", lambda np: np.arange(30) % 2, ["dataset.nuisance=[Z]"],
     "dataset.nuisance"),
]:
    z_file_case(name, lambda f, make=make: np_save_raw(f / "data.npz", make),
                _npz_args(*(extra or ["dataset.nuisance=Z"])), expect)


cli_error("nuisance", "generator_nuisance_unknown",
          [*SMALL, *SHORT, "dataset.nuisance=batch"], ["batch", "environment"])


@case("nuisance", "npz_text_nuisance_works")
def npz_text_nuisance_works(env):
    folder = env.scratch / "npz-text"
    folder.mkdir()
    np_save_raw(folder / "data.npz", lambda np: np.array(["run1", "run2"] * 15))
    code, out, err, _ = env.cli("dataset=file", f"dataset.path={folder / 'data.npz'}",
                                "dataset.nuisance=Z", "n_clusters=2", "n_features_to_select=2",
                                "evaluation.n_runs=1", *SHORT)
    if code is None:
        return "hang", "timed out"
    if code == 0 and "nuisance variables were given" in out:
        return "good", "text levels of an .npz array given to the method"
    return ("bad" if code == 0 else "poor"), f"exit {code}: {(out + err).strip()[-200:]}"


def np_save(path, **arrays):
    import numpy as np

    rng = np.random.default_rng(0)
    np.savez(path, X=rng.random((30, 6)), **{k: np.asarray(v, dtype=float)
                                             for k, v in arrays.items()})


# -- 9. sparse input ------------------------------------------------------------------------

SPARSE_PRELUDE = """
from causefs import CauseFS
import scipy.sparse as sp
rng = np.random.default_rng(0)
dense = sp.random_array((40, 10), density=0.3, rng=rng, format='csr')
fit = lambda X, **kw: int(CauseFS(n_clusters=2, n_features_to_select=3, max_iter=2,
                                  random_state=0, **kw).fit(X).support_.sum())
def with_value(value):
    X = dense.copy(); X.data[0] = value; return X
"""
for name, x, expect in [
    ("sparse_nan", "with_value(np.nan)", "NaN"),
    ("sparse_inf", "with_value(np.inf)", "inf"),
    ("sparse_complex", "dense.astype(complex)", "complex"),
    ("sparse_one_sample", "dense[:1]", "sample"),
    ("sparse_no_feature", "sp.csr_array((40, 0))", "feature"),
    ("sparse_fewer_features_than_selected", "dense[:, :2]", "n_features_to_select"),
]:
    py_error("sparse", name, SPARSE_PRELUDE + f"report(lambda: fit({x}))", expect,
             kinds=("ValueError",))

for name, x, expect in [
    ("sparse_only_explicit_zeros", "sp.csr_array((np.zeros(5), ([0, 1, 2, 3, 4], "
                                   "[0, 1, 2, 3, 4])), shape=(40, 10))", "constant"),
    ("sparse_nan_in_a_duplicate_entry", "sp.coo_array((np.r_[np.ones(40), np.nan], "
                                        "(np.r_[np.arange(40), 0], np.r_[np.arange(40) % 10, "
                                        "0])), shape=(40, 10))", "NaN"),
    ("sparse_minus_inf", "with_value(-np.inf)", "infinity"),
    ("sparse_three_samples", "dense[:3]", "samples"),
    ("sparse_bool_all_true", "sp.csr_array(np.ones((40, 10), bool))", "constant"),
]:
    py_error("sparse", name, SPARSE_PRELUDE + f"report(lambda: fit({x}))", expect,
             kinds=("ValueError",))


@case("sparse", "sparse_more_formats_and_dtypes_work")
def sparse_more_formats_and_dtypes_work(env):
    """Empty rows, DIA, duplicate COO entries (summed), unsorted indices, and int8,
    uint64, bool and float32 data fit like the CSR float64 they equal."""
    code = PY_PRELUDE + SPARSE_PRELUDE + """
X = dense.tolil(); X[5, :] = 0; X[17, :] = 0; X = X.tocsr()
coo = X.tocoo()
doubled = sp.coo_array((np.r_[coo.data, coo.data] / 2, (np.r_[coo.row, coo.row],
                        np.r_[coo.col, coo.col])), shape=X.shape)
unsorted = X.copy(); unsorted.has_sorted_indices = False
for start, stop in zip(unsorted.indptr[:-1], unsorted.indptr[1:]):
    unsorted.indices[start:stop] = unsorted.indices[start:stop][::-1].copy()
    unsorted.data[start:stop] = unsorted.data[start:stop][::-1].copy()
counts = (X * 100).astype(np.int8)
same = lambda A, B: bool(np.array_equal(
    CauseFS(n_clusters=2, n_features_to_select=3, max_iter=2, random_state=0).fit(A).support_,
    CauseFS(n_clusters=2, n_features_to_select=3, max_iter=2, random_state=0).fit(B).support_))
report(lambda: (same(sp.dia_array(X.toarray()), X), same(doubled, X), same(unsorted, X),
                same(counts, counts.astype(float)), same(counts.astype(np.uint64),
                counts.astype(float)), same(X != 0, (X != 0).astype(float)),
                same(X.astype(np.float32), X.astype(np.float32).astype(float))))
"""
    return judge_py_returns(env.py(code), "(True, True, True, True, True, True, True)",
                            "DIA, duplicate COO entries, unsorted indices, int8, uint64, "
                            "bool and float32 fit as the float64 CSR they equal")


@case("sparse", "sparse_two_million_features")
def sparse_two_million_features(env):
    """40 x 2,000,000 at density 1e-4 (8,000 values): fits within the limit, without
    densifying (640 MB dense)."""
    code = PY_PRELUDE + SPARSE_PRELUDE + """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))
wide = sp.random_array((40, 2_000_000), density=1e-4, rng=rng, format='csr')
report(lambda: fit(wide))
"""
    return judge_py_returns(env.py(code, timeout=180), "3",
                            "2,000,000 sparse features fit in 3 GB of address space")


@case("sparse", "sparse_npz_file_on_the_command_line")
def sparse_npz_file_on_the_command_line(env):
    """A scipy.sparse.save_npz file: one line saying what it is (its member "data",
    the non-zero values, is no feature array)."""
    import numpy as np
    import scipy.sparse as sp

    path = env.scratch / "sparse.npz"
    sp.save_npz(path, sp.random_array((30, 8), density=0.3, rng=np.random.default_rng(0),
                                      format="csr"))
    return judge_cli_error(env.cli("dataset=file", f"dataset.path={path}", *SHORT),
                           ["sparse.npz", "scipy.sparse"])


@case("sparse", "sparse_formats_work")
def sparse_formats_work(env):
    """Every scipy sparse format, integer data, an empty column and explicit zeros fit
    (a sparse fit is the dense fit: tests/test_sparse.py)."""
    code = PY_PRELUDE + SPARSE_PRELUDE + """
X = dense.tolil(); X[:, 4] = 0; X[0, 0] = 0
formats = [X.tocsr(), X.tocsc(), X.tocoo(), X.todok(), X.tolil(), X.tobsr(),
           sp.csr_matrix(X), (X.tocsr() * 10).astype(int)]
report(lambda: tuple(fit(F) for F in formats))
"""
    return judge_py_returns(env.py(code), "(3, 3, 3, 3, 3, 3, 3, 3)",
                            "csr, csc, coo, dok, lil, bsr, csr_matrix and integer data fit")


@case("sparse", "sparse_with_nuisance")
def sparse_with_nuisance(env):
    code = PY_PRELUDE + SPARSE_PRELUDE + """
report(lambda: int(CauseFS(n_clusters=2, n_features_to_select=3, max_iter=2,
                           random_state=0).fit(dense, nuisance=np.arange(40) % 2)
                   .support_.sum()))
"""
    return judge_py_returns(env.py(code), "3", "a sparse X with Z fits")


# -- 10. the store's claims -------------------------------------------------------------


def claim_scene(name, make):
    """A store whose job's claim file was left in a strange state: the job still runs,
    writes its result, and leaves no claim behind."""
    @case("store", f"claim_{name}")
    def run(env):
        store = env.scratch / f"store-claim-{name}"
        code, out, err, _ = _store_job(env, store)
        key = _key_of(env, store)
        if code != 0 or key is None:
            return "error", f"the first run failed: {(out + err).strip()[-200:]}"
        (store / f"{key}.json").unlink()
        make(store / f"{key}.claim")
        code, out, err, _ = _store_job(env, store)
        if code is None:
            return "hang", "the re-run waited on the claim"
        left = [p.name for p in store.iterdir() if p.name.endswith(".claim")
                or p.is_dir() and p.name.endswith(".claim")]
        if code == 0 and (store / f"{key}.json").exists() and not left:
            return "good", "computed, stored, no claim left"
        return "poor", f"exit {code}, left {left}: {(out + err).strip()[-200:]}"


claim_scene("garbage", lambda path: path.write_bytes(b"\x00\xffnot a claim\n" * 100))
claim_scene("empty", lambda path: path.write_bytes(b""))
claim_scene("dead_pid", lambda path: path.write_text("pid 999999 on nowhere since 0\n"))
claim_scene("directory", lambda path: path.mkdir())
claim_scene("symlink_to_system_file", lambda path: path.symlink_to("/etc/hostname"))


#: holds a job's claim the way a computing process does (an exclusive lock), with the
#: standard library only, so the holder is the same whatever the code under test
HOLD_CLAIM = """
import fcntl, os, sys, time
handle = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)
fcntl.lockf(handle, fcntl.LOCK_EX)
os.pwrite(handle, f"pid {os.getpid()} on the battery".encode(), 0)
print("held", flush=True)
time.sleep(600)
"""


@case("store", "claim_held_by_a_live_process")
def claim_held_by_a_live_process(env):
    """A job whose claim a live process holds: skipped, saying by whom, exit 0; its
    claim neither taken nor removed, nothing stored."""
    store = env.scratch / "store-claim-live"
    key = _key_of(env, store)
    if key is None:
        return "error", "the first run failed"
    (store / f"{key}.json").unlink()
    claim = store / f"{key}.claim"
    holder = subprocess.Popen([PYTHON, "-c", HOLD_CLAIM, str(claim)], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    try:
        if holder.stdout.readline().strip() != "held":
            return "error", "the holder could not lock the claim"
        code, out, err, _ = _store_job(env, store, timeout=60)
    finally:
        os.killpg(holder.pid, signal.SIGKILL)
        holder.communicate()
    if code is None:
        return "hang", "waited on the live claim"
    if code == 0 and f"pid {holder.pid} on the battery" in out and claim.exists() \
            and not (store / f"{key}.json").exists():
        return "good", out.strip().splitlines()[-1][:200]
    computed = (store / f"{key}.json").exists()
    return ("bad" if computed else "poor"), f"exit {code}, computed {computed}, claim " \
        f"{'kept' if claim.exists() else 'removed'}: {(out + err).strip()[-200:]}"


def _immutable(path: Path, on: bool) -> bool:
    """Make ``path`` immutable (``chattr +i``: even root may not write, rename or open it
    for writing), or not; False where the file system or the user cannot."""
    return subprocess.run(["chattr", "+i" if on else "-i", str(path)],
                          capture_output=True).returncode == 0


@case("store", "claim_file_not_openable")
def claim_file_not_openable(env):
    """A claim file this process may not open for writing (another user's; here an
    immutable one, which root cannot open either): the job still runs and is stored."""
    store = env.scratch / "store-claim-immutable"
    key = _key_of(env, store)
    if key is None:
        return "error", "the first run failed"
    (store / f"{key}.json").unlink()
    claim = store / f"{key}.claim"
    claim.write_text("pid 1 on elsewhere\n")
    if not _immutable(claim, True):
        claim.chmod(0)
    try:
        code, out, err, _ = _store_job(env, store, timeout=120)
    finally:
        _immutable(claim, False)
    if code is None:
        return "hang", "timed out"
    if code == 0 and (store / f"{key}.json").exists():
        return "good", (_error_lines(err)[-1:] or ["no warning"])[0][:200]
    if code == 2 and len(_error_lines(err)) == 1 and f"{key}.claim" in err:
        return "good", _error_lines(err)[0][:200]
    return "poor", f"exit {code}: {_error_lines(err)[-1:]}"


@case("store", "store_folder_read_only")
def store_folder_read_only(env):
    """An immutable store folder: a stored job is read (or the refusal is one line naming
    store.dir); a job not stored is refused in one line naming store.dir, before the fit."""
    store = env.scratch / "store-read-only"
    key = _key_of(env, store)
    if key is None:
        return "error", "the first run failed"
    if not _immutable(store, True):
        return "error", "chattr is not available: the case proves nothing"
    try:
        stored = _store_job(env, store, timeout=120)
        shadow = _store_job(env, store, "random_state=7", timeout=120)
    finally:
        _immutable(store, False)
    if None in (stored[0], shadow[0]):
        return "hang", "timed out"
    read = stored[0] == 0 and "already in" in stored[1]
    verdict, detail = judge_cli_error(shadow, "store.dir")
    if not read and judge_cli_error(stored, "store.dir")[0] != "good":
        return "poor", f"the stored job: exit {stored[0]}, {_error_lines(stored[2])[-1:]}"
    return verdict, ("stored job read; " if read else "stored job refused; ") + detail


@case("store", "two_runs_of_one_job_at_once")
def two_runs_of_one_job_at_once(env):
    """The same single job started twice together: computed once, stored once, both runs
    exit 0, no claim left."""
    store = env.scratch / "store-two-runs"
    args = [*SMALL, "method.max_iter=20", "method.tol=0", "dataset.n_samples=1500",
            "dataset.n_features=40", "store.enabled=true", f"store.dir={store}"]
    ran = run_together(env, [[*args, f"hydra.run.dir={env.scratch / f'two-{i}'}"]
                             for i in range(2)], timeout=400)
    if ran is None:
        return "hang", "a run timed out"
    procs, outs = ran
    computed = sum("result written to" in o for o, _ in outs)
    entries = len(list(store.glob("*.json")))
    left = [p.name for p in store.glob("*.claim")]
    if all(p.returncode == 0 for p in procs) and computed == 1 and entries == 1 and not left:
        return "good", "computed once; the other run " + (
            "skipped it" if any("being computed" in o for o, _ in outs) else "found it stored")
    return ("bad" if computed > 1 else "poor"), \
        f"exits {[p.returncode for p in procs]}, {computed} computations, {entries} " \
        f"entries, claims left {left}: {[_error_lines(e)[-1:] for _, e in outs]}"


# -- 11. more nuisance, sparse and claims cases: what a careful new user or ops person hits

#: the estimator's small fit, as keyword arguments
SMALL_FIT = "dict(n_clusters=2, n_features_to_select=3, max_iter=2, random_state=0)"


def py_returns(area, name, prelude, expression, expected, what, timeout=180):
    """A call that must work and return ``expected`` (its repr)."""
    @case(area, name)
    def run(env):
        code = PY_PRELUDE + f"K = {SMALL_FIT}\n" + prelude + f"report(lambda: {expression})"
        return judge_py_returns(env.py(code, timeout=timeout), expected, what)


def py_refuses(area, name, prelude, expression, expect, kinds=("ValueError", "TypeError"),
               timeout=180):
    """A call that must be refused in one line naming ``expect``."""
    py_error(area, name, f"K = {SMALL_FIT}\n" + prelude + f"report(lambda: {expression})",
             expect, kinds=kinds, timeout=timeout)


# ---- nuisance variables from Python

@case("nuisance", "z_series_index_not_aligned_with_x")
def z_series_index_not_aligned_with_x(env):
    """X a DataFrame indexed by sample names, Z a Series with the same names in another
    order (as after a merge or a sort): Z is aligned on X's index (the fit equals the one
    given Z in X's order), or refused / warned about naming the index. Taking its values
    in their own order silently adjusts every sample for another sample's batch."""
    code = PY_PRELUDE + Z_PRELUDE + """
import pandas as pd
K = dict(n_clusters=2, n_features_to_select=3, max_iter=2, random_state=0)
frame = pd.DataFrame(X + np.r_[np.zeros(20), np.ones(20)][:, None] * X[:, :1],
                     index=[f"s{i}" for i in range(40)])
labels = pd.Series(np.arange(40) // 10, index=frame.index)
shuffled = labels.iloc[np.random.default_rng(3).permutation(40)]
aligned = CauseFS(**K).fit(frame, nuisance=labels).nuisance_share_
report(lambda: bool(np.allclose(CauseFS(**K).fit(frame, nuisance=shuffled).nuisance_share_,
                                aligned)))
"""
    code_, out, err, s = env.py(code)
    if code_ is None:
        return "hang", "timed out"
    if re.search(r"^RETURNED True$", out, re.M):
        return "good", "Z aligned on X's index"
    warned = re.findall(r"^WARNED (\w+) \| (.*)$", out, re.M)
    if any("index" in message for _, message in warned):
        return "good", f"warned: {[m for _, m in warned if 'index' in m][0][:200]}"
    raised = re.search(r"^RAISED (\w+) \| (.*)$", out, re.M)
    if raised:
        return (("good" if "index" in raised.group(2) else "poor"),
                f"{raised.group(1)}: {raised.group(2)[:200]}")
    return "bad", "Z taken by position against X's index, silently: " + out.strip()[-150:]


z_warning("z_bool_with_one_true", "np.arange(40) == 7", "hold one sample", "NuisanceWarning")
py_returns("nuisance", "z_list_of_strings_works", Z_PRELUDE, "fit(['site_a', 'site_b'] * 20)",
           "3", "a plain list of text levels fits")
py_refuses("nuisance", "z_masked_array_with_a_masked_value", Z_PRELUDE,
           "fit(np.ma.masked_array(np.arange(40) % 2, mask=np.arange(40) == 3))", "nuisance")
py_refuses("nuisance", "z_nan_in_the_last_of_three_columns", Z_PRELUDE,
           "fit(np.c_[np.arange(40) % 2, rng.normal(size=40), "
           "np.where(np.arange(40) == 9, np.nan, rng.normal(size=40))])", ["column 2", "NaN"])
py_refuses("nuisance", "z_a_generator", Z_PRELUDE, "fit(i % 2 for i in range(40))", "nuisance")
py_returns("nuisance", "z_fit_transform_as_fit_then_transform", Z_PRELUDE,
           "bool(np.array_equal(CauseFS(**K).fit_transform(X, nuisance=np.arange(40) % 2), "
           "CauseFS(**K).fit(X, nuisance=np.arange(40) % 2).transform(X)))", "True",
           "fit_transform(X, nuisance=Z) is fit(X, nuisance=Z).transform(X)")
py_refuses("nuisance", "z_given_to_transform", Z_PRELUDE,
           "CauseFS(**K).fit(X, nuisance=np.arange(40) % 2).transform(X, "
           "nuisance=np.arange(40) % 2)", "nuisance")
py_returns("nuisance", "z_pipeline_step_parameter", Z_PRELUDE + """
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
""", "Pipeline([('scale', MinMaxScaler()), ('fs', CauseFS(**K))]).fit(X, fs__nuisance="
     "np.arange(40) % 2)[-1].schedule_", "'nuisance_adjusted'",
     "Pipeline.fit(X, fs__nuisance=Z) reaches the fit (routing off)")
py_returns("nuisance", "z_pipeline_metadata_routing", Z_PRELUDE + """
import sklearn
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import MinMaxScaler
sklearn.set_config(enable_metadata_routing=True)
""", "Pipeline([('scale', MinMaxScaler()), ('fs', CauseFS(**K).set_fit_request(nuisance=True))]"
     ").fit(X, nuisance=np.arange(40) % 2)[-1].schedule_", "'nuisance_adjusted'",
     "routed to the fit with set_fit_request(nuisance=True)")
py_refuses("nuisance", "z_pipeline_routing_not_requested", Z_PRELUDE + """
import sklearn
from sklearn.pipeline import Pipeline
sklearn.set_config(enable_metadata_routing=True)
""", "Pipeline([('fs', CauseFS(**K))]).fit(X, nuisance=np.arange(40) % 2)", "nuisance",
           kinds=("ValueError", "TypeError"))
py_returns("nuisance", "z_gridsearchcv_routing_splits_z", Z_PRELUDE + """
import sklearn
from sklearn.cluster import KMeans
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
sklearn.set_config(enable_metadata_routing=True)
pipe = Pipeline([('fs', CauseFS(**K).set_fit_request(nuisance=True)),
                 ('km', KMeans(2, n_init=1, random_state=0))])
""", "sorted(GridSearchCV(pipe, {'fs__alpha': [0.1, 1.0]}, cv=2).fit(X, "
     "nuisance=np.arange(40) % 2).best_params_)", "['fs__alpha']",
     "GridSearchCV splits Z with X for every fold (a Z of 40 rows on 20 would fail)")
py_returns("nuisance", "z_gridsearchcv_step_parameter", Z_PRELUDE + """
from sklearn.cluster import KMeans
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline
pipe = Pipeline([('fs', CauseFS(**K)), ('km', KMeans(2, n_init=1, random_state=0))])
""", "sorted(GridSearchCV(pipe, {'fs__alpha': [0.1, 1.0]}, cv=2).fit(X, "
     "fs__nuisance=list(np.arange(40) % 2)).best_params_)", "['fs__alpha']",
     "GridSearchCV.fit(X, fs__nuisance=Z) splits a list Z for every fold (routing off)")


@case("nuisance", "z_label_free_search")
def z_label_free_search(env):
    """LabelFreeSearch (the project's own tuner) given Z: it fits every setting with Z,
    or refuses it in one line naming nuisance; never tunes without it in silence."""
    code = PY_PRELUDE + Z_PRELUDE + f"""
from causefs import LabelFreeSearch
K = {SMALL_FIT}
search = LabelFreeSearch(CauseFS(**K), {{'alpha': [0.1, 1.0]}})
report(lambda: search.fit(X, nuisance=np.arange(40) % 2).best_estimator_.schedule_)
"""
    result = env.py(code)
    if re.search(r"^RETURNED 'nuisance_adjusted'$", result[1], re.M):
        return "good", "every setting fitted with Z"
    if "RETURNED" in result[1]:
        return "bad", "Z not used: " + result[1].strip()[-150:]
    return judge_py_error(result, "nuisance", ("TypeError", "ValueError"))


py_returns("nuisance", "z_causefs_scores_in_selectkbest", Z_PRELUDE + """
from functools import partial
from sklearn.feature_selection import SelectKBest
from causefs import causefs_scores
""", "int(SelectKBest(partial(causefs_scores, nuisance=np.arange(40) % 2, n_clusters=2, "
     "max_iter=2, random_state=0), k=3).fit(X).get_support().sum())", "3",
     "causefs_scores bound with nuisance= works in SelectKBest")
py_returns("nuisance", "z_series_of_text_with_stability_subsamples", Z_PRELUDE
           + "import pandas as pd\n",
           "CauseFS(**K, stability_subsamples=4).fit(X, nuisance=pd.Series(['a', 'b', 'c', "
           "'d'] * 10, index=np.arange(100, 140))).selection_frequency_.shape", "(8,)",
           "the subsamples take the rows of a Series with its own index")
py_returns("nuisance", "z_categorical_with_an_unused_category", Z_PRELUDE
           + "import pandas as pd\n",
           "fit(pd.Categorical(['a', 'b'] * 20, categories=['a', 'b', 'never']))", "3",
           "a category no sample has is no level")
py_returns("nuisance", "z_float16_covariate", Z_PRELUDE,
           "fit(np.random.default_rng(1).normal(size=40).astype(np.float16))", "3",
           "a float16 covariate fits")


# ---- nuisance variables from files on the command line


def cli_works(area, name, write, args, check, timeout=180):
    """A command that must work: exit 0 and ``check(result, out)`` true (``result`` the
    run's result.json) ; ``check`` returns (ok, what)."""
    @case(area, name)
    def run(env):
        folder = env.scratch / name
        folder.mkdir(exist_ok=True)
        write(folder)
        run_dir = folder / "run"
        code, out, err, _ = env.cli(*args(folder), "n_clusters=2", "n_features_to_select=2",
                                    "evaluation.n_runs=1", *SHORT, run_dir=run_dir,
                                    timeout=timeout)
        if code is None:
            return "hang", "timed out"
        if code != 0:
            return "poor", f"exit {code}: {_error_lines(err)[-1:]}"
        result = json.loads((run_dir / "result.json").read_text())
        ok, what = check(result, out + err)
        return ("good" if ok else "bad"), what[:250]
    return run


def _csv(header, rows):
    def write(folder):
        (folder / "data.csv").write_text((header + "\n" if header else "") +
                                         "\n".join(rows) + "\n")
    return write


_ROWS5 = [(f"{i % 3},{i % 5},{i % 7},{(i * 7) % 11}", f"b{i % 2}") for i in range(30)]
cli_works("nuisance", "csv_nuisance_first_column",
          _csv("batch,a,b,c,d", [f"{z},{x}" for x, z in _ROWS5]),
          _csv_args("dataset.nuisance=0"),
          lambda r, out: (r["dataset"]["feature_names"] == ["a", "b", "c", "d"]
                          and r["nuisance_given"],
                          f"features {r['dataset']['feature_names']}, nuisance given "
                          f"{r['nuisance_given']}"))
cli_works("nuisance", "csv_nuisance_last_column_no_label_warning",
          _csv("a,b,c,d,batch", [f"{x},{i % 3}" for i, (x, _) in enumerate(_ROWS5)]),
          _csv_args("dataset.nuisance=-1"),
          lambda r, out: (r["dataset"]["n_features"] == 4 and r["nuisance_given"]
                          and "looks like labels" not in out and "as labels do" not in out,
                          f"{r['dataset']['n_features']} features, nuisance given "
                          f"{r['nuisance_given']}; label warning "
                          f"{'given' if 'as labels do' in out else 'not given'}"))
cli_works("nuisance", "csv_headerless_text_nuisance_keeps_every_row",
          _csv(None, [f"{x},{z}" for x, z in _ROWS5]), _csv_args("dataset.nuisance=-1"),
          lambda r, out: (r["dataset"]["n_samples"] == 30 and r["dataset"]["n_features"] == 4
                          and r["nuisance_given"],
                          f"{r['dataset']['n_samples']} samples x "
                          f"{r['dataset']['n_features']} features of 30 x 4 (a first row "
                          f"of text in Z's column is data, not a header)"))
z_file_case("csv_nuisance_name_without_header", _csv(None, [f"{x},{z}" for x, z in _ROWS5]),
            _csv_args("dataset.nuisance=batch"), ["batch", "header"])
z_file_case("csv_nuisance_takes_every_column", _csv("a,b,c,d,batch",
                                                    [f"{x},{z}" for x, z in _ROWS5]),
            _csv_args("dataset.nuisance=[a,b,c,d,batch]"), ["data.csv", "feature"])
z_file_case("csv_nuisance_header_name_twice", _csv("a,batch,c,d,batch",
                                                   [f"{x},{z}" for x, z in _ROWS5]),
            _csv_args("dataset.nuisance=batch"), ["batch", "[2, 5]"])  # 1-based, as 'column 5'


@case("nuisance", "csv_nuisance_same_column_named_twice")
def csv_nuisance_same_column_named_twice(env):
    """dataset.nuisance=[batch,4]: one column named twice (by name and number). Good:
    refused naming it (taken as given, Z held the column twice)."""
    folder = env.scratch / "named-twice"
    folder.mkdir()
    _csv("a,b,c,d,batch", [f"{x},{z}" for x, z in _ROWS5])(folder)
    code, out, err, _ = env.cli("dataset=file", f"dataset.path={folder / 'data.csv'}",
                                "dataset.nuisance=[batch,4]", "n_clusters=2",
                                "n_features_to_select=2", "evaluation.n_runs=1", *SHORT)
    if code is None:
        return "hang", "timed out"
    if code == 0:
        return "poor", "accepted: Z held the column twice"
    return judge_cli_error((code, out, err, 0), ["batch", "more than once"])


def _npz(**members):
    """An .npz of 30 samples x 6 features, 3 classes, and ``members`` (functions of
    numpy)."""
    def write(folder):
        import numpy as np

        rng = np.random.default_rng(0)
        np.savez(folder / "data.npz", X=rng.random((30, 6)), y=np.arange(30) % 3,
                 **{k: make(np) for k, make in members.items()})
    return write


# the file and the array named, as npz_nuisance_key_missing's judge asks
z_file_case("npz_nuisance_is_the_features", _npz(), _npz_args("dataset.nuisance=X"),
            ["data.npz", "'X'", "features"])
z_file_case("npz_nuisance_is_the_labels", _npz(), _npz_args("dataset.nuisance=y"),
            ["data.npz", "'y'", "labels"])
z_file_case("npz_nuisance_is_feature_names",
            _npz(feature_names=lambda np: np.array([f"f{i}" for i in range(6)])),
            _npz_args("dataset.nuisance=feature_names"), ["feature_names"])


@case("nuisance", "npz_nuisance_pickled_object_array")
def npz_nuisance_pickled_object_array(env):
    """A Z saved as an object array (pickled): refused naming the file and the array,
    never unpickled."""
    import numpy as np

    folder = env.scratch / "npz-pickled-z"
    folder.mkdir()
    marker = folder / "unpickled"
    rng = np.random.default_rng(0)
    z = np.empty(30, dtype=object)
    z[:] = [f"b{i % 2}" for i in range(30)]
    np.savez(folder / "data.npz", X=rng.random((30, 6)), Z=z)
    result = env.cli("dataset=file", f"dataset.path={folder / 'data.npz'}",
                     "dataset.nuisance=Z", "n_clusters=2", "n_features_to_select=2",
                     "evaluation.n_runs=1", *SHORT)
    if marker.exists():
        return "bad", "unpickled"
    return judge_cli_error(result, ["data.npz", "pickled"])


cli_works("nuisance", "npz_nuisance_booleans_work", _npz(Z=lambda np: np.arange(30) % 3 == 0),
          _npz_args("dataset.nuisance=Z"),
          lambda r, out: (r["nuisance_given"], f"nuisance given {r['nuisance_given']}"))
cli_works("nuisance", "npz_nuisance_row_vector_works", _npz(Z=lambda np: (np.arange(30) % 2)
                                                           [None, :]),
          _npz_args("dataset.nuisance=Z"),
          lambda r, out: (r["nuisance_given"], f"a (1, 30) Z: given {r['nuisance_given']}"))


def _mat_with_z(folder):
    import numpy as np
    import scipy.io

    rng = np.random.default_rng(0)
    scipy.io.savemat(folder / "data.mat", {"X": rng.random((30, 6)),
                                           "gnd": (np.arange(30) % 3 + 1.0)[:, None],
                                           "site": (np.arange(30) % 2 + 1.0)[:, None]})


cli_works("nuisance", "mat_nuisance_column_vector_works", _mat_with_z,
          lambda f: ["dataset=file", f"dataset.path={f / 'data.mat'}", "dataset.nuisance=site"],
          lambda r, out: (r["nuisance_given"], f"a MATLAB (30, 1) site: given "
                                               f"{r['nuisance_given']}"))


@case("nuisance", "store_key_follows_nuisance_values")
def store_key_follows_nuisance_values(env):
    """Two files of the same X and Z's name but other Z values, in one store: two jobs
    (a stored result answers only the Z it was computed with)."""
    import numpy as np

    folder = env.scratch / "z-key"
    folder.mkdir()
    store = folder / "store"
    rng = np.random.default_rng(0)
    X = rng.random((30, 6))
    runs = []
    for i, z in enumerate([np.arange(30) % 2, np.arange(30) // 15]):
        np.savez(folder / f"d{i}.npz", X=X, y=np.arange(30) % 3, Z=z)
        runs.append(env.cli("dataset=file", f"dataset.path={folder / f'd{i}.npz'}",
                            "dataset.nuisance=Z", "n_clusters=2", "n_features_to_select=2",
                            "evaluation.n_runs=1", *SHORT, "store.enabled=true",
                            f"store.dir={store}"))
    if any(r[0] is None for r in runs):
        return "hang", "timed out"
    if any(r[0] != 0 for r in runs):
        return "poor", f"exits {[r[0] for r in runs]}: {_error_lines(runs[-1][2])[-1:]}"
    if "already in" in runs[1][1]:
        return "bad", "the second Z was answered with the first Z's stored result"
    return "good", f"{len(list(store.glob('*.json')))} entries"


# ---- sparse input

_SPARSE_SAME = """
same = lambda A, B, **kw: bool(np.array_equal(CauseFS(**{**K, **kw}).fit(A).support_,
                                              CauseFS(**{**K, **kw}).fit(B).support_))
"""

py_refuses("sparse", "sparse_column_index_out_of_range", SPARSE_PRELUDE + """
bad = dense.copy(); bad.indices[0] = 99
""", "fit(bad)", "index")
py_refuses("sparse", "sparse_negative_column_index", SPARSE_PRELUDE + """
bad = dense.copy(); bad.indices[0] = -1
""", "fit(bad)", "index")
py_returns("sparse", "sparse_int64_indices_work", SPARSE_PRELUDE + _SPARSE_SAME + """
wide_index = dense.copy()
wide_index.indices = wide_index.indices.astype(np.int64)
wide_index.indptr = wide_index.indptr.astype(np.int64)
""", "same(wide_index, dense)", "True", "int64 indices fit as int32 ones")
py_returns("sparse", "sparse_column_of_explicit_zeros_as_dense", SPARSE_PRELUDE + """
lil = dense.tolil(); lil[:, 3] = 0; base = lil.tocsr(); coo = base.tocoo()
explicit = sp.csr_array((np.r_[coo.data, np.zeros(10)], (np.r_[coo.row, np.arange(0, 40, 4)],
                          np.r_[coo.col, np.full(10, 3)])), shape=base.shape)
""", "(explicit.nnz > base.nnz, bool(np.array_equal(CauseFS(**K).fit(explicit).ranking_, "
     "CauseFS(**K).fit(base.toarray()).ranking_)))", "(True, True)",
     "a column of stored zeros ranks as the dense zero column")
py_returns("sparse", "sparse_negative_values_every_preprocessing", SPARSE_PRELUDE + _SPARSE_SAME
           + "neg = dense.copy(); neg.data -= 0.5\n",
           "tuple(same(neg, neg.toarray(), preprocessing=p) for p in ('minmax', 'standard', "
           "'none'))", "(True, True, True)",
           "negative sparse values select as dense ones under minmax, standard and none")
py_returns("sparse", "sparse_fraction_of_features_to_select", SPARSE_PRELUDE + _SPARSE_SAME,
           "(same(dense, dense.toarray(), n_features_to_select=0.3), int(CauseFS(**{**K, "
           "'n_features_to_select': 0.3}).fit(dense).support_.sum()))", "(True, 3)",
           "n_features_to_select=0.3 keeps 3 of 10 sparse features, as dense")
py_returns("sparse", "sparse_feature_names_out", SPARSE_PRELUDE + """
import pandas as pd
names = [f"w{i}" for i in range(10)]
frame = pd.DataFrame.sparse.from_spmatrix(sp.csr_matrix(dense), columns=names)
""", "(list(CauseFS(**K).fit(frame).get_feature_names_out()) == list(CauseFS(**K).fit("
     "pd.DataFrame(dense.toarray(), columns=names)).get_feature_names_out()), list(CauseFS("
     "**K).fit(dense).get_feature_names_out()) == list(CauseFS(**K).fit(dense.toarray())"
     ".get_feature_names_out()))", "(True, True)",
     "names of a sparse DataFrame and x0.. of a sparse array, as dense")
py_returns("sparse", "sparse_transform_stays_sparse", SPARSE_PRELUDE + """
fitted = CauseFS(**K).fit(dense)
""", "(sp.issparse(fitted.transform(dense.tocoo())), bool(np.array_equal(fitted.transform("
     "dense).toarray(), fitted.transform(dense.toarray()))))", "(True, True)",
     "transform keeps sparse data sparse, with the dense values")
py_refuses("sparse", "sparse_transform_other_width", SPARSE_PRELUDE,
           "CauseFS(**K).fit(dense).transform(dense[:, :9])", "9 features")


@case("sparse", "sparse_two_billion_columns")
def sparse_two_billion_columns(env):
    """80 values in 2**31 + 10 columns (int64 indices): the memory check refuses it in
    one line (MemoryLimitError, or an error naming the features), not a MemoryError from
    deep inside the fit or the OOM killer (run under a 3 GB address-space limit)."""
    code = PY_PRELUDE + SPARSE_PRELUDE + """
import resource
resource.setrlimit(resource.RLIMIT_AS, (3_000_000_000, 3_000_000_000))
n = 2**31 + 10
huge = sp.coo_array((np.r_[rng.random(40), np.ones(40)], (np.r_[np.arange(40), np.arange(40)],
                     np.r_[np.arange(40) % 5, np.full(40, n - 5)])), shape=(40, n))
report(lambda: fit(huge))
"""
    result = env.py(code, timeout=180)
    if re.search(r"^RETURNED 3$", result[1], re.M):
        return "good", "fitted"
    return judge_py_error(result, [], ("MemoryLimitError", "InvalidParameterError"))


py_returns("sparse", "sparse_longdouble_as_float64", SPARSE_PRELUDE + _SPARSE_SAME,
           "same(dense.astype(np.longdouble), dense)", "True", "longdouble data fit")
py_refuses("sparse", "sparse_one_dimensional_array", SPARSE_PRELUDE,
           "fit(sp.coo_array(np.arange(40.0)))", "2")
py_returns("sparse", "sparse_with_z_and_stability_subsamples", SPARSE_PRELUDE,
           "CauseFS(**K, stability_subsamples=4).fit(dense, nuisance=np.arange(40) % 2)"
           ".selection_frequency_.shape", "(10,)",
           "subsamples of sparse X with Z")
py_returns("sparse", "sparse_coo_with_text_z_as_dense", SPARSE_PRELUDE + """
Z = np.array(['run1', 'run2', 'run3', 'run4'] * 10)
""", "bool(np.array_equal(CauseFS(**K).fit(dense.tocoo(), nuisance=Z).support_, "
     "CauseFS(**K).fit(dense.toarray(), nuisance=Z).support_))", "True",
     "COO X with text Z selects what dense X does")
py_returns("sparse", "sparse_rbf_kernel_as_dense", SPARSE_PRELUDE + _SPARSE_SAME,
           "same(dense, dense.toarray(), kernel='rbf')", "True",
           "the rbf kernel on sparse X selects what it does dense")
py_returns("sparse", "sparse_dwr_schedule_as_dense", SPARSE_PRELUDE + _SPARSE_SAME,
           "same(dense, dense.toarray(), schedule='dwr')", "True",
           "a schedule that densifies (dwr) selects what the dense fit does")


@case("sparse", "sparse_npz_with_a_nuisance_member")
def sparse_npz_with_a_nuisance_member(env):
    """A save_npz file to which a Z member was added, with dataset.nuisance=Z: one line
    naming the file and saying it is scipy.sparse (not 'no array X')."""
    import numpy as np
    import scipy.sparse as sp

    folder = env.scratch / "sparse-z"
    folder.mkdir()
    m = sp.random_array((30, 8), density=0.3, rng=np.random.default_rng(0), format="csc")
    np.savez(folder / "data.npz", data=m.data, indices=m.indices, indptr=m.indptr,
             format=np.array(b"csc"), shape=np.array(m.shape), Z=np.arange(30) % 2)
    return judge_cli_error(env.cli("dataset=file", f"dataset.path={folder / 'data.npz'}",
                                   "dataset.nuisance=Z", "n_clusters=2", *SHORT),
                           ["data.npz", "scipy.sparse"])


@case("sparse", "npz_of_a_pickled_sparse_matrix")
def npz_of_a_pickled_sparse_matrix(env):
    """np.savez(path, X=csr_matrix): numpy pickles the matrix into an object array. One
    line naming the file; nothing unpickled."""
    import numpy as np
    import scipy.sparse as sp

    folder = env.scratch / "pickled-sparse"
    folder.mkdir()
    np.savez(folder / "data.npz", X=sp.csr_matrix(np.eye(30, 8)), y=np.arange(30) % 2)
    return judge_cli_error(env.cli("dataset=file", f"dataset.path={folder / 'data.npz'}",
                                   "n_clusters=2", *SHORT), ["data.npz", "pickled"])


# ---- the store's claims, and causefs-report on odd stores

claim_scene("fifo", lambda path: os.mkfifo(path))
claim_scene("other_host", lambda path: path.write_text(
    "pid 4242 on build-node-17.example since 2024-01-01 10:00:00"))
claim_scene("future_timestamp", lambda path: path.write_text(
    f"pid {os.getpid()} on {os.uname().nodename} since 2999-12-31 23:59:59"))


@case("store", "claim_hard_link_to_a_user_file")
def claim_hard_link_to_a_user_file(env):
    """A claim file that is a hard link to a file elsewhere (a shared store another user
    can write into): the job runs, and the linked file is left as it was (not truncated
    or overwritten by the claim's text)."""
    store = env.scratch / "store-claim-hardlink"
    key = _key_of(env, store)
    if key is None:
        return "error", "the first run failed"
    (store / f"{key}.json").unlink()
    victim = env.scratch / "notes-of-a-user.txt"
    victim.write_text("precious notes\n" * 10)
    os.link(victim, store / f"{key}.claim")
    code, out, err, _ = _store_job(env, store, timeout=120)
    if code is None:
        return "hang", "timed out"
    intact = victim.read_text() == "precious notes\n" * 10
    if not intact:
        return "bad", f"exit {code}; the linked file now holds {victim.read_text()[:80]!r}"
    if code == 0 and (store / f"{key}.json").exists():
        return "good", "computed; the linked file untouched"
    return "poor", f"exit {code}: {_error_lines(err)[-1:]}"


def _hold(claim: Path):
    holder = subprocess.Popen([PYTHON, "-c", HOLD_CLAIM, str(claim)], stdout=subprocess.PIPE,
                              text=True, start_new_session=True)
    if holder.stdout.readline().strip() != "held":
        os.killpg(holder.pid, signal.SIGKILL)
        holder.communicate()
        return None
    return holder


def _release(holder) -> None:
    os.killpg(holder.pid, signal.SIGKILL)
    holder.communicate()


@case("store", "claim_of_another_job_held")
def claim_of_another_job_held(env):
    """Another job's claim held by a live process: this job is computed as usual."""
    store = env.scratch / "store-other-claim"
    store.mkdir()
    holder = _hold(store / "0123456789abcdef.claim")
    if holder is None:
        return "error", "the holder could not lock the claim"
    try:
        code, out, err, _ = _store_job(env, store, timeout=120)
    finally:
        _release(holder)
    if code is None:
        return "hang", "timed out"
    if code == 0 and "result written to" in out and len(list(store.glob("*.json"))) == 1:
        return "good", "computed"
    return ("bad" if code == 0 else "poor"), f"exit {code}: {(out + err).strip()[-200:]}"


@case("store", "sweep_with_one_claim_held")
def sweep_with_one_claim_held(env):
    """A sweep of two jobs, one of whose claims a live process holds: that one skipped
    naming the holder, the other computed, exit 0."""
    store = env.scratch / "store-sweep-held"
    key = _key_of(env, store)  # random_state=0's job
    if key is None:
        return "error", "the first run failed"
    (store / f"{key}.json").unlink()
    holder = _hold(store / f"{key}.claim")
    if holder is None:
        return "error", "the holder could not lock the claim"
    try:
        code, out, err, _ = env.run([PYTHON, "-m", "causefs.app.cli", "-m", "random_state=0,1",
                                     *SMALL, *SHORT, "store.enabled=true", f"store.dir={store}",
                                     f"hydra.sweep.dir={env.scratch / 'sweep-held'}"],
                                    timeout=240)
    finally:
        _release(holder)
    if code is None:
        return "hang", "timed out"
    entries = len(list(store.glob("*.json")))
    if code == 0 and f"pid {holder.pid} on the battery" in out and entries == 1:
        return "good", "one job skipped naming its holder, the other computed"
    return ("bad" if entries == 2 else "poor"), \
        f"exit {code}, {entries} entries: {(out + err).strip()[-200:]}"


@case("store", "overwrite_while_claim_held")
def overwrite_while_claim_held(env):
    """store.overwrite=true on a stored job whose claim a live process holds (it is
    recomputing it): skipped naming the holder, the stored entry left, exit 0."""
    store = env.scratch / "store-overwrite-held"
    key = _key_of(env, store)
    if key is None:
        return "error", "the first run failed"
    entry = store / f"{key}.json"
    before = entry.read_bytes()
    holder = _hold(store / f"{key}.claim")
    if holder is None:
        return "error", "the holder could not lock the claim"
    try:
        code, out, err, _ = _store_job(env, store, "store.overwrite=true", timeout=120)
    finally:
        _release(holder)
    if code is None:
        return "hang", "timed out"
    if code == 0 and "being computed" in out and entry.read_bytes() == before:
        return "good", "skipped; the entry left as it was"
    return ("bad" if "result written to" in out else "poor"), \
        f"exit {code}: {(out + err).strip()[-200:]}"


def _long_job(env, store, run_dir):
    return subprocess.Popen([PYTHON, "-m", "causefs.app.cli", *SMALL, "method.max_iter=30",
                             "method.tol=0", "dataset.n_samples=3000", "dataset.n_features=60",
                             "store.enabled=true", f"store.dir={store}",
                             f"hydra.run.dir={run_dir}"], cwd=env.scratch,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env.env(), start_new_session=True)


def _wait_for_claim(store, proc, seconds=120) -> bool:
    deadline = time.perf_counter() + seconds
    while not list(store.glob("*.claim")) and proc.poll() is None \
            and time.perf_counter() < deadline:
        time.sleep(0.05)
    return bool(list(store.glob("*.claim"))) and proc.poll() is None


def _claimed_or_killed(store, proc) -> bool:
    """Whether the job of ``proc`` took its claim; if it did not, ``proc`` is killed."""
    if _wait_for_claim(store, proc):
        return True
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    return False


def _finished(proc, timeout):
    """``proc``'s ``(stdout, stderr)``, or None after killing it at ``timeout``."""
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        return None


@case("store", "interrupted_run_leaves_no_claim")
def interrupted_run_leaves_no_claim(env):
    """Ctrl-C (SIGINT) during the fit: the run stops, leaves no claim file and no
    entry, and the next run computes the job."""
    store = env.scratch / "store-sigint"
    args = [PYTHON, "-m", "causefs.app.cli", *SMALL, "method.max_iter=30", "method.tol=0",
            "dataset.n_samples=4000", "dataset.n_features=120", "store.enabled=true",
            f"store.dir={store}"]
    proc = subprocess.Popen([*args, f"hydra.run.dir={env.scratch / 'sigint-1'}"],
                            cwd=env.scratch, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env.env(), start_new_session=True)
    if not _claimed_or_killed(store, proc):
        return "error", "the job ended before its claim was seen"
    time.sleep(0.3)
    os.killpg(proc.pid, signal.SIGINT)
    if _finished(proc, 60) is None:
        return "hang", "Ctrl-C did not stop the run within 60 s"
    if list(store.glob("*.json")):
        return "error", "the job finished before the interrupt: the case proves nothing"
    left = [p.name for p in store.glob("*.claim")]
    if left:
        return "poor", f"exit {proc.returncode}; claim left behind: {left}"
    code, out2, err2, _ = env.run([*args, "method.max_iter=1",
                                   f"hydra.run.dir={env.scratch / 'sigint-2'}"], timeout=300)
    if code == 0 and "result written to" in out2:
        return "good", f"exit {proc.returncode}, no claim left, the re-run computed the job"
    return "poor", f"re-run exit {code}: {(out2 + err2).strip()[-200:]}"


@case("store", "store_folder_removed_during_the_fit")
def store_folder_removed_during_the_fit(env):
    """The store folder deleted (rm -rf) while a job computes: the finished result is not
    lost (the entry written into a folder made again, exit 0; or exit 2 naming where the
    result is)."""
    store = env.scratch / "store-removed"
    proc = _long_job(env, store, env.scratch / "removed-run")
    if not _claimed_or_killed(store, proc):
        return "error", "the job ended before its claim was seen"
    shutil.rmtree(store)
    finished = _finished(proc, 400)
    if finished is None:
        return "hang", "timed out"
    _, err = finished
    entries = list(store.glob("*.json")) if store.is_dir() else []
    if proc.returncode == 0 and entries:
        return "good", f"stored again in the made-again folder: {entries[0].name}"
    last = (_error_lines(err) or [""])[-1]
    if proc.returncode == 2 and "the result is in" in last:
        return "good", last[:200]
    return "poor", f"exit {proc.returncode}, {len(entries)} entries: {last[:200]}"


@case("store", "two_different_jobs_at_once")
def two_different_jobs_at_once(env):
    """Two different jobs started together on a new store: both computed and stored,
    no claim left."""
    store = env.scratch / "store-two-jobs"
    ran = run_together(env, [[*SMALL, *SHORT, f"random_state={i}", "store.enabled=true",
                               f"store.dir={store}",
                               f"hydra.run.dir={env.scratch / f'two-jobs-{i}'}"]
                              for i in range(2)], timeout=240)
    if ran is None:
        return "hang", "a run timed out"
    procs, outs = ran
    entries = len(list(store.glob("*.json")))
    left = [p.name for p in store.glob("*.claim")]
    if all(p.returncode == 0 for p in procs) and entries == 2 and not left:
        return "good", "both stored"
    return "poor", f"exits {[p.returncode for p in procs]}, {entries} entries, claims {left}: " \
        f"{[_error_lines(e)[-1:] for _, e in outs]}"


@case("store", "store_path_with_spaces_and_unicode")
def store_path_with_spaces_and_unicode(env):
    """A store under 'my results/étude 日本' (quoted for Hydra's override grammar):
    stored, found again, and reported."""
    store = env.scratch / "my results" / "étude 日本"
    quoted = f'"{store}"'
    first = _store_job(env, quoted)
    second = _store_job(env, quoted)
    if None in (first[0], second[0]):
        return "hang", "timed out"
    if first[0] != 0 or second[0] != 0:
        return "poor", f"exits {first[0]}, {second[0]}: {_error_lines(second[2])[-1:]}"
    if "already in" not in second[1] or not list(store.glob("*.json")):
        return "bad", "the re-run did not find the stored job where it was named"
    code, out, err, _ = env.run([PYTHON, "-m", "causefs.app.report", "--store", str(store),
                                 "--out", str(store.parent / "rapport été"), "--no-figures"],
                                timeout=120)
    if code == 0:
        return "good", "stored, found again, reported"
    return "poor", f"report exit {code}: {_error_lines(err)[-1:]}"


def _judge_unquoted_path(result, ok: bool, what: str):
    """A path typed as the shell passes it: it works (``ok``), or it is refused in one
    line naming store.dir that says to quote it; a bare lexer error is poor."""
    code, out, err, _ = result
    if code is None:
        return "hang", "timed out"
    if code == 0:
        return ("good" if ok else "bad"), what
    lines = _error_lines(err)
    if code == 2 and len(lines) == 1 and "store.dir" in err and "quot" in err:
        return "good", lines[0][:250]
    return "poor", f"exit {code}, {len(lines)} line(s): {lines[-1:][:1]}"


@case("store", "store_dir_with_tilde")
def store_dir_with_tilde(env):
    """causefs store.dir=~/causefs-store (bash leaves the ~ of a dotted key alone): the
    user's home (result_file documents '~ expanded'), or one line saying to quote it."""
    home = env.scratch / "home"
    home.mkdir()
    work = env.scratch / "tilde-work"
    work.mkdir()
    result = env.cli(*SMALL, *SHORT, "store.enabled=true", "store.dir=~/causefs-store",
                     cwd=work, HOME=str(home))
    stored = bool(list((home / "causefs-store").glob("*.json")))
    return _judge_unquoted_path(result, stored and not (work / "~").exists(),
                                "stored under $HOME" if stored else "not stored under $HOME")


@case("store", "store_dir_with_tilde_quoted")
def store_dir_with_tilde_quoted(env):
    """store.dir="~/causefs-store" (quoted for Hydra): stored under $HOME, not in a folder
    named '~' in the working directory."""
    home = env.scratch / "home-quoted"
    home.mkdir()
    work = env.scratch / "tilde-quoted-work"
    work.mkdir()
    code, out, err, _ = env.cli(*SMALL, *SHORT, "store.enabled=true",
                                'store.dir="~/causefs-store"', cwd=work, HOME=str(home))
    if code is None:
        return "hang", "timed out"
    if code != 0:
        return "poor", f"exit {code}: {_error_lines(err)[-1:]}"
    if list((home / "causefs-store").glob("*.json")) and not (work / "~").exists():
        return "good", "stored under $HOME"
    return "bad", ("stored in a folder named '~' in the working directory"
                   if (work / "~").exists() else out.strip()[-150:])


@case("store", "store_dir_unicode_unquoted")
def store_dir_unicode_unquoted(env):
    """causefs store.dir=<scratch>/résultats: works, or one line saying to quote it."""
    store = env.scratch / "résultats"
    result = _store_job(env, store)
    return _judge_unquoted_path(result, bool(list(store.glob("*.json"))),
                                "stored in the named folder")


@case("store", "store_dir_a_link_to_a_folder")
def store_dir_a_link_to_a_folder(env):
    """store.dir a symbolic link to a folder (a store on another disk): used as the
    folder."""
    target = env.scratch / "real-store"
    target.mkdir()
    link = env.scratch / "store-link"
    link.symlink_to(target)
    first, second = _store_job(env, link), _store_job(env, link)
    if None in (first[0], second[0]):
        return "hang", "timed out"
    if first[0] == 0 and "already in" in second[1] and len(list(target.glob("*.json"))) == 1:
        return "good", "stored in the linked folder and found again"
    return "poor", f"exits {first[0]}, {second[0]}: {_error_lines(second[2] or first[2])[-1:]}"


cli_error("store", "store_dir_empty", [*SMALL, *SHORT, "store.enabled=true", "store.dir="],
          "store.dir")
cli_error("store", "store_dir_under_proc", [*SMALL, *SHORT, "store.enabled=true",
                                            "store.dir=/proc/causefs-store"], "store.dir")


@case("store", "stale_temporary_removed_fresh_kept")
def stale_temporary_removed_fresh_kept(env):
    """A killed write's temporary file older than 10 minutes is removed when the store is
    next used; a fresh one (a write in progress elsewhere) is left alone."""
    store = env.scratch / "store-temps"
    if _key_of(env, store) is None:
        return "error", "the first run failed"
    old = store / ".0123456789abcdef.json.abc123.tmp"
    fresh = store / ".fedcba9876543210.json.def456.tmp"
    old.write_text("{")
    fresh.write_text("{")
    os.utime(old, (time.time() - 3600, time.time() - 3600))
    code, out, err, _ = _store_job(env, store, "random_state=3")
    if code is None:
        return "hang", "timed out"
    if code == 0 and not old.exists() and fresh.exists():
        return "good", "the stale one removed, the fresh one kept"
    return ("bad" if not fresh.exists() else "poor"), \
        f"exit {code}; stale {'kept' if old.exists() else 'removed'}, fresh " \
        f"{'kept' if fresh.exists() else 'removed'}"


def _report(env, store, out_name, timeout=120):
    return env.run([PYTHON, "-m", "causefs.app.report", "--store", str(store), "--out",
                    str(env.scratch / out_name), "--no-figures"], timeout=timeout)


def report_among_good(name, make, one_line=False):
    """A store of two good entries and one odd file: the report is written, exit 0,
    and the odd file is named in a warning (with ``one_line``: a one-line warning, as the
    causefs command prints them, not Python's with the source line that warned)."""
    @case("store", f"report_{name}_among_good_entries")
    def run(env):
        store = env.scratch / f"store-among-{name}"
        keys = [_key_of(env, store)]
        code = _store_job(env, store, "random_state=1")[0]
        if keys[0] is None or code != 0:
            return "error", "the first runs failed"
        good = sorted(store.glob("*.json"))
        odd = make(store, good[0])
        code, out, err, _ = _report(env, store, f"rep-among-{name}")
        if code is None:
            return "hang", "timed out"
        if code != 0:
            return "poor", f"exit {code}: {_error_lines(err)[-1:]}"
        lines = _error_lines(err)
        naming = [i for i, line in enumerate(lines) if odd.name in line]
        if not naming:
            return "poor", f"exit 0 but {odd.name} not named: {lines[-1:]}"
        line = lines[naming[0]]
        source = lines[naming[0] + 1:naming[0] + 2]
        if one_line and source and source[0].startswith((" ", "\t")):
            return "poor", f"a two-line Python warning: {line[:160]} / {source[0].strip()}"
        return "good", line[:200]


def _truncated(store, good):
    path = store / "00000000000000aa.json"
    path.write_text(good.read_text()[:300])
    return path


def _renamed(store, good):
    path = store / "00000000000000bb.json"
    path.write_text(good.read_text())
    return path


def _notes(store, good):
    path = store / "notes.json"
    path.write_text('{"comment": "alpha sweep, March"}')
    return path


def _old_schema(store, good):
    entry = json.loads(good.read_text())
    entry["schema"] = 3
    path = store / "00000000000000cc.json"
    path.write_text(json.dumps(entry))
    return path


report_among_good("truncated", _truncated, one_line=True)
report_among_good("wrong_key", _renamed)
report_among_good("unrelated_json", _notes)
report_among_good("old_schema", _old_schema)


@case("store", "report_while_a_job_computes")
def report_while_a_job_computes(env):
    """causefs-report on a store where a job's claim is held (a sweep running): the
    report of the finished jobs is written, exit 0."""
    store = env.scratch / "store-report-busy"
    if _key_of(env, store) is None:
        return "error", "the first run failed"
    holder = _hold(store / "0123456789abcdef.claim")
    if holder is None:
        return "error", "the holder could not lock the claim"
    try:
        code, out, err, _ = _report(env, store, "rep-busy")
    finally:
        _release(holder)
    if code is None:
        return "hang", "timed out"
    if code == 0:
        return "good", (_error_lines(err)[-1] if err.strip() else "no warning")[:200]
    return "poor", f"exit {code}: {_error_lines(err)[-1:]}"


def report_refuses(name, make, expect):
    """causefs-report on a store that has nothing to report: one line
    ``causefs-report: error: ...`` naming ``expect``, exit 2."""
    @case("store", f"report_{name}")
    def run(env):
        store = env.scratch / f"store-report-{name}"
        make(env, store)
        code, out, err, _ = _report(env, store, f"rep-{name}")
        if code is None:
            return "hang", "timed out"
        lines = _error_lines(err)
        if code == 0:
            return "bad", f"exit 0: {lines[-1:]}"
        if code == 2 and len(lines) == 1 and lines[0].startswith("causefs-report: error: ") \
                and all(e.format(store=store.name) in err for e in expect):
            return "good", lines[0][:250]
        return "poor", f"exit {code}, {len(lines)} line(s): {lines[-1:]}"


def _only_claims(env, store):
    (store / "invalid").mkdir(parents=True)
    (store / "0123456789abcdef.claim").write_text("pid 1 on elsewhere since 2024-01-01")
    (store / "invalid" / "0123456789abcdef.json.20240101T000000.invalid").write_text("{}")


report_refuses("only_claims_and_invalid", _only_claims, ["no valid results", "{store}"])
report_refuses("store_is_a_file", lambda env, store: store.write_text("x"), ["{store}"])
report_refuses("empty_folder", lambda env, store: store.mkdir(), ["no valid results", "{store}"])


# -- 7. large fits that must speak --------------------------------------------------------


def large_fit(name, n, d, max_silence):
    @case("large", name)
    def run(env):
        code = f"""
import logging, time, sys
import numpy as np
logging.basicConfig(level=logging.INFO, format="%(relativeCreated)d %(message)s",
                    stream=sys.stdout)
from causefs import CauseFS
X = np.random.default_rng(0).random(({n}, {d}))
CauseFS(n_clusters=10, max_iter=30, verbose=True, random_state=0).fit(X)
"""
        proc = subprocess.Popen([PYTHON, "-c", code], cwd=env.scratch, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                env=env.env(), start_new_session=True)
        stamps = []
        start = time.perf_counter()
        limit = 150.0

        def read():
            for line in proc.stdout:
                if line.strip():
                    stamps.append((time.perf_counter() - start, line.strip()))

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        try:
            proc.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        reader.join(timeout=5)
        logged = list(stamps)
        times = [0.0] + [t for t, _ in logged] + [min(limit, time.perf_counter() - start)]
        silence = max(b - a for a, b in zip(times, times[1:]))
        estimate = any("estimated" in line for _, line in logged)
        detail = (f"{len(logged)} lines in {times[-1]:.0f} s, longest silence "
                  f"{silence:.0f} s, estimate {'logged' if estimate else 'not logged'}")
        if estimate and silence <= max_silence:
            return "good", detail
        return ("poor" if logged else "bad"), detail


large_fit("n300k_d8", 300_000, 8, 40)
large_fit("n300k_d50", 300_000, 50, 40)


# ------------------------------------------------------------------- driver ------------


def run_battery(code: Path, out: Path, only: str | None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="battery-"))
    env = Env(code.resolve(), scratch)
    try:
        for name, fn in CASES.items():
            if only and not re.search(only, name):
                continue
            target = out / (name.replace("/", "__") + ".json")
            if target.exists():
                continue
            start = time.perf_counter()
            try:
                verdict, detail = fn(env)
            except Exception as error:  # the battery's own failure: shown, not hidden
                verdict, detail = "error", f"{type(error).__name__}: {error}"
            seconds = time.perf_counter() - start
            print(f"{verdict:5s} {name:55s} {seconds:6.1f} s  {detail[:140]}", flush=True)
            tmp = target.with_suffix(".tmp")
            tmp.write_text(json.dumps({"case": name, "verdict": verdict, "detail": detail,
                                       "seconds": seconds}))
            os.replace(tmp, target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def load_results(folder: Path) -> dict:
    return {json.loads(p.read_text())["case"]: json.loads(p.read_text())
            for p in sorted(folder.glob("*.json"))}


def report(folders: list) -> None:
    results = {str(f): load_results(Path(f)) for f in folders}
    areas = sorted({name.split("/")[0] for r in results.values() for name in r})
    verdicts = ("good", "poor", "bad", "hang", "error")
    header = "| area | cases | " + " | ".join(
        f"{Path(f).name}: " + "/".join(verdicts) for f in folders) + " |"
    print(header)
    print("|---" * (2 + len(folders)) + "|")
    for area in [*areas, "all"]:
        cells = []
        count = 0
        for folder in folders:
            r = results[str(folder)]
            chosen = [v["verdict"] for k, v in r.items() if area == "all" or
                      k.split("/")[0] == area]
            count = max(count, len(chosen))
            tally = Counter(chosen)
            cells.append("/".join(str(tally[v]) for v in verdicts))
        print(f"| {area} | {count} | " + " | ".join(cells) + " |")
    if len(folders) >= 1:
        last = results[str(folders[-1])]
        for name, value in last.items():
            if value["verdict"] != "good":
                print(f"  {value['verdict']:5s} {name}: {value['detail'][:160]}")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("--code", type=Path, required=True, help="checkout to test")
    run.add_argument("--out", type=Path, required=True)
    run.add_argument("--only", help="regular expression of the cases to run")
    rep = sub.add_parser("report")
    rep.add_argument("folders", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "run":
        run_battery(args.code, args.out, args.only)
    else:
        report(args.folders)


if __name__ == "__main__":
    main()

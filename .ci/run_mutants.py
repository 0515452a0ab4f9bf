"""Mutation-test one set of modules on its own, CI's or one CI does not run (docs/MUTATION.md).

Copies the checkout's files (``git ls-files``, with the uncommitted changes) into a work
folder, sets that copy's ``[tool.mutmut]`` to the set's modules and fast test files, runs
``mutmut run`` there with one OpenMP thread and ``.ci/check_mutants.py`` on the set's
mutants, and prints the wall time. Run it again with the same ``--dir`` to resume an
interrupted run (mutmut keeps every result in the folder's ``mutants/``).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> (modules mutated, test files run); the tests are the fast ones that check the
#: modules (no fit of a real dataset), as CI's set in pyproject.toml
SETS = {
    "store": (["causefs/app/store.py"], ["tests/test_store.py"]),
    "loop": (["causefs/core/loop.py", "causefs/core/schedule.py"],
             ["tests/test_convergence.py", "tests/test_state.py", "tests/test_loop.py",
              "tests/test_schedule_spec.py",
              "tests/test_schedule.py::test_builtin_schedules_validate",
              "tests/test_schedule.py::test_validation_names_every_problem"]),
    "contracts": (["causefs/core/contracts.py"],
                  ["tests/test_contract_checks.py", "tests/test_loop.py",
                   "tests/test_convergence.py"]),
    "objective": (["causefs/model/objective.py"],
                  ["tests/test_objective.py", "tests/test_terms.py", "-k",
                   "not catches_a_wrong_term"]),
    "sparse_correlation": (["causefs/numerics/sparse.py", "causefs/numerics/correlation.py"],
                           ["tests/test_correlation.py",
                            "tests/test_sparse.py::test_sparse_helpers_equal_their_dense_"
                            "definitions",
                            "tests/test_redundancy.py::test_decorrelated_order_by_hand"]),
    "descent_blocks": (["causefs/blocks/descent/embedding.py",
                        "causefs/blocks/descent/fused_graph.py",
                        "causefs/blocks/descent/graph_update.py",
                        "causefs/blocks/descent/sample_weights.py",
                        "causefs/blocks/descent/selection_matrix.py"],
                       ["tests/test_descent_block_steps.py",
                        "tests/test_descent_block_costs.py", "tests/test_blocks.py",
                        "tests/test_closed_forms.py", "tests/test_fast_paths.py",
                        "tests/test_reference_math.py", "tests/test_budget.py",
                        "tests/test_documented_costs.py",
                        "tests/test_documented_defaults.py",
                        "tests/test_option_checks.py::test_part_options_are_checked"]),
    "subproblems": (["causefs/model/subproblems.py", "causefs/numerics/conjugate_gradients.py"],
                    ["tests/test_subproblems.py", "tests/test_conjugate_gradients.py",
                     "tests/test_descent_block_costs.py",
                     "tests/test_descent_block_steps.py", "tests/test_closed_forms.py",
                     "tests/test_objective.py", "tests/test_documented_costs.py"]),
    "confounders": (["causefs/blocks/structure/confounders.py",
                     "causefs/blocks/initialization/initial_confounders.py"],
                    ["tests/test_confounders_block.py", "tests/test_documented_costs.py",
                     "tests/test_option_checks.py::test_part_options_are_checked"]),
    "initial_blocks": (["causefs/blocks/initialization/uniform_weights.py",
                        "causefs/blocks/initialization/initial_selection.py"],
                       ["tests/test_initial_blocks.py"]),
    "treatments": (["causefs/model/treatments.py"], ["tests/test_treatments.py"]),
    "nuisance_coding": (["causefs/model/nuisance_coding.py"],
                        ["tests/test_nuisance_coding.py"]
                        + [f"tests/test_nuisance.py::{test}" for test in (
                            "test_labels_are_indicators_of_every_level_but_the_first_centred",
                            "test_covariates_are_standardized_and_constant_columns_drop",
                            "test_z_that_does_not_vary_is_refused_and_a_one_sample_level_warned",
                            "test_pandas_series_and_frames_with_text_and_categories",
                            "test_a_frame_is_coded_column_by_column",
                            "test_bad_nuisance_is_refused_with_a_reason")]),
    "granular": (["causefs/blocks/descent/granular_graphs.py",
                  "causefs/blocks/structure/granularity.py"],
                 ["tests/test_granular.py", "tests/test_reference_math.py",
                  "tests/test_fast_paths.py", "tests/test_blocks.py",
                  "tests/test_descent_block_costs.py",
                  "tests/test_planted_bugs_nuisance_memory.py",
                  "tests/test_option_checks.py::test_part_options_are_checked"]),
    "neighbors": (["causefs/numerics/neighbors.py", "causefs/numerics/given_neighbors.py"],
                  ["tests/test_neighbors.py", "tests/test_distinct_neighbors.py",
                   "tests/test_given_neighbors.py", "tests/test_adaptive_graphs.py",
                   "tests/test_sparse_search.py"]
                  + [f"tests/test_fast_paths.py::{test}" for test in (
                      "test_refine_neighbours_recovers_the_exact_knn",
                      "test_auto_searches_points_of_few_dimensions_exactly_at_any_n",
                      "test_local_search_completes_rows_that_only_see_a_clique")]),
    "feature_groups": (["causefs/numerics/feature_clustering.py",
                        "causefs/blocks/initialization/correlation_groups.py"],
                       ["tests/test_feature_groups.py", "tests/test_documented_costs.py",
                        "tests/test_granular.py::test_groups_are_the_ward_cut_of_best_"
                        "calinski_harabasz",
                        "tests/test_granular.py::test_a_zero_w_makes_one_group_of_weight_one",
                        "tests/test_option_checks.py::test_part_options_are_checked"]
                       + [f"tests/test_fast_paths.py::{test}" for test in (
                           "test_ward_tree_1d_cuts_like_scipy",
                           "test_calinski_harabasz_equals_scikit_learn")]),
    "initialization": (["causefs/blocks/initialization/initial_graphs.py",
                        "causefs/blocks/initialization/spectral_embedding.py",
                        "causefs/blocks/initialization/decorrelation_weights.py",
                        "causefs/blocks/initialization/density_ratio_weights.py",
                        "causefs/blocks/base.py"],
                       ["tests/test_initial_blocks.py", "tests/test_balance_blocks.py",
                        "tests/test_blocks.py", "tests/test_contract_checks.py",
                        "tests/test_documented_costs.py", "tests/test_documented_defaults.py",
                        "tests/test_closed_forms.py::test_sparse_spectral_embedding_matches_"
                        "dense_eigenvectors",
                        "tests/test_option_checks.py::test_part_options_are_checked"]),
    "qp": (["causefs/qp/base.py", "causefs/qp/problem.py", "causefs/qp/projected_gradient.py",
            "causefs/qp/gradient_projection_cg.py", "causefs/qp/cvxpy_backend.py"],
           ["tests/test_qp.py", "tests/test_qp_work.py", "tests/test_descent_block_steps.py",
            "tests/test_budget.py", "tests/test_documented_costs.py",
            "tests/test_documented_defaults.py",
            "tests/test_closed_forms.py::test_mu_qp_is_the_objective_in_mu",
            "tests/test_option_checks.py::test_part_options_are_checked",
            "tests/test_option_checks.py::test_values_are_normalized_where_checked",
            "tests/test_memory.py::test_the_guard_names_a_setting_that_fits",
            "tests/test_memory.py::test_estimates_grow_with_the_dense_paths",
            "tests/test_conventions.py::test_a_fit_that_needs_cvxpy_says_which_extra"]
           + [f"tests/test_kernels_qp.py::{test}" for test in (
               "test_qp_backend_contract", "test_backends_agree_on_the_mu_problem",
               "test_a_budget_holds_when_the_step_backtracks")]
           + [f"tests/test_descent_block_costs.py::{test}" for test in (
               "test_the_sample_weights_declare_balance_products_exactly_when_a_step_"
               "makes_them",
               "test_the_sample_weights_declare_every_balance_product_a_step_makes")]),
    "nuisance_blocks": (["causefs/blocks/nuisance/nuisance_adjustment.py",
                         "causefs/blocks/nuisance/nuisance_balance_weights.py",
                         "causefs/numerics/nuisance_effects.py"],
                        ["tests/test_nuisance_blocks.py", "tests/test_documented_costs.py",
                         "tests/test_documented_defaults.py",
                         "tests/test_nuisance_effects_bounds.py"]
                        + [f"tests/test_nuisance.py::{test}" for test in (
                            "test_effect_given_a_design_is_the_least_squares_coefficient",
                            "test_shrinkage_is_one_minus_the_inverse_f_statistic",
                            "test_directions_of_z_the_design_spans_get_no_effect",
                            "test_conditional_kmeans_finds_clusters_a_strong_nuisance_hides",
                            "test_cluster_pvalues_are_the_partial_f_test_beside_z",
                            "test_cluster_pvalues_without_evidence_are_one",
                            "test_cluster_evidence_tests_the_clustered_features_against_"
                            "clusters_without_them",
                            "test_centring_block_removes_the_environment_means")]
                        + [f"tests/test_planted_bugs_nuisance_memory.py::{test}" for test in (
                            "test_nuisance_balance_weights_minimize_the_documented_objective",
                            "test_nuisance_effect_is_estimated_on_the_clusters_of_the_"
                            "selected_features",
                            "test_the_clusters_are_found_on_the_top_features_only")]),
    "model": (["causefs/model/problem.py", "causefs/model/variables.py",
               "causefs/model/diagnostics.py", "causefs/model/settings.py"],
              ["tests/test_problem.py", "tests/test_variables.py", "tests/test_diagnostics.py",
               "tests/test_settings.py", "tests/test_state.py",
               "tests/test_contracts.py::test_a_requirement_must_be_a_constructor_argument_"
               "the_engine_provides"]),
    "system_limits": (["causefs/core/cgroups.py", "causefs/budget/system_memory.py"],
                      ["tests/test_cgroups.py", "tests/test_system_memory.py"]),
    "core": (["causefs/core/state.py", "causefs/core/validation.py", "causefs/core/parts.py",
              "causefs/core/progress.py", "causefs/core/extras.py",
              "causefs/numerics/threads.py"],
             ["tests/test_state.py", "tests/test_validation.py", "tests/test_parts.py",
              "tests/test_progress.py", "tests/test_threads.py", "tests/test_option_checks.py",
              "tests/test_numerics_budgets.py", "tests/test_memory.py::test_parse_bytes",
              "tests/test_cgroups.py"]
             + [f"tests/test_conventions.py::{test}" for test in (
                 "test_a_missing_extra_is_named",
                 "test_only_the_missing_module_itself_is_reported_as_an_extra",
                 "test_a_fit_that_needs_cvxpy_says_which_extra",
                 "test_the_command_without_hydra_says_which_extra")]
             + [f"tests/test_fast_paths.py::{test}" for test in (
                 "test_the_fit_runs_with_one_blas_thread_and_restores_the_callers",
                 "test_parallel_work_keeps_blas_on_one_thread_and_the_items_order",
                 "test_a_long_block_is_logged_while_it_runs",
                 "test_busy_elsewhere_is_the_machines_cpu_time_less_this_process_over_an_"
                 "interval",
                 "test_the_cpu_seconds_read_count_this_process_within_the_machines",
                 "test_a_large_operation_widens_only_onto_cores_left_idle",
                 "test_the_balance_products_widen_from_fewer_flops_than_the_rest")]),
    "terms": ([f"causefs/terms/{name}.py" for name in (
                   "base", "balance", "fused_smoothness", "fusion", "granular_graphs",
                   "regression", "sparsity")]
              + [f"causefs/kernels/{name}.py" for name in ("base", "linear", "rbf")],
              ["tests/test_terms.py", "tests/test_kernels.py", "tests/test_objective.py",
               "tests/test_kernels_qp.py", "tests/test_closed_forms.py",
               "tests/test_reference_math.py", "tests/test_documented_costs.py",
               "tests/test_documented_defaults.py",
               "tests/test_option_checks.py::test_part_options_are_checked",
               "tests/test_fast_paths.py::test_the_balance_products_widen_from_fewer_flops_"
               "than_the_rest", "-k",
               "not catches_a_wrong_term"]),
}


def mutmut_table(modules, tests) -> str:
    quoted = lambda items: "[" + ", ".join(f'"{item}"' for item in items) + "]"  # noqa: E731
    return ("[tool.mutmut]\nsource_paths = [\"causefs\"]\n"
            f"only_mutate = {quoted(modules)}\n"
            f"pytest_add_cli_args_test_selection = {quoted(tests)}\n"
            "pytest_add_cli_args = [\"-p\", \"no:cacheprovider\"]\n")


def copy_checkout(work: Path, modules, tests) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for name in filter(None, files):
        if (ROOT / name).is_file():
            (work / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, work / name)
    pyproject = work / "pyproject.toml"
    text = pyproject.read_text()
    table = re.search(r"^\[tool\.mutmut\]\n(?:(?!\[).*\n)*", text, flags=re.M)
    pyproject.write_text(text[:table.start()] + mutmut_table(modules, tests)
                         + text[table.end():])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", choices=sorted(SETS))
    parser.add_argument("--dir", type=Path, help="work folder (default: a new temporary "
                                                  "one); give it again to resume")
    parser.add_argument("mutants", nargs="*", help="run and judge only these mutants "
                        "(names or patterns, as mutmut run takes them), e.g. the set's "
                        "survivors after a test was added")
    args = parser.parse_intermixed_args(argv)
    modules, tests = SETS[args.set]
    work = args.dir or Path(tempfile.mkdtemp(prefix=f"causefs-mutants-{args.set}-"))
    work.mkdir(parents=True, exist_ok=True)
    copy_checkout(work, modules, tests)
    print(f"mutating {', '.join(modules)} in {work}", flush=True)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    start = time.perf_counter()
    subprocess.run(["mutmut", "run", *args.mutants], cwd=work, env=env,
                   stdout=subprocess.DEVNULL, check=True)
    print(f"mutmut ran in {time.perf_counter() - start:.0f} s", flush=True)
    patterns = args.mutants or [module.removesuffix(".py").replace("/", ".") + "*"
                                for module in modules]
    return subprocess.run([sys.executable, ".ci/check_mutants.py", *patterns],
                          cwd=work).returncode


if __name__ == "__main__":
    sys.exit(main())

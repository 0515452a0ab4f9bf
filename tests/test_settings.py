"""One parameter, one place: the settings table is the source of every default and rule."""

import dataclasses
import inspect

import numpy as np
import pytest

from causefs import CauseFS, InvalidParameterError, Schedule, ScheduleError, Settings
from causefs.blocks import ConfoundersBlock, EmbeddingBlock, SelectionMatrixBlock
from causefs.engine import resolve_schedule
from causefs.model.problem import Problem
from causefs.model.settings import (
    DEFAULTS,
    RESOURCES,
    affects_result,
    check_setting,
    setting_names,
)
from causefs.plugins import available, parts
from causefs.terms import BalanceTerm, RegressionTerm

pytestmark = pytest.mark.short_fit  # fits of a few iterations (tests/conftest.py)


def test_the_estimator_signature_is_the_table():
    """Names, order and defaults of CauseFS's parameters are the settings table's."""
    parameters = inspect.signature(CauseFS).parameters
    assert list(parameters) == setting_names()
    for field in dataclasses.fields(Settings):
        assert parameters[field.name].default == field.default, field.name
    assert CauseFS().settings() == DEFAULTS


@pytest.mark.parametrize("kind, name", [(kind, name) for kind in ("block", "term")
                                        for name in available(kind)])
def test_required_settings_default_to_the_table(kind, name):
    """A setting a block or term requires defaults to the table's value (the engine hands
    the setting in; a part built alone gets the same value)."""
    cls = parts().get(kind, name)
    parameters = inspect.signature(cls).parameters
    for option in (set(cls.requires) & set(setting_names())) - set(RESOURCES):
        assert parameters[option].default == getattr(DEFAULTS, option), (name, option)


ROUTES = {"alpha": RegressionTerm, "beta": BalanceTerm, "sigma": ConfoundersBlock,
          "max_treatments": ConfoundersBlock}


@pytest.mark.parametrize("name, value", [("alpha", -1.0), ("sigma", 2.0), ("beta", -1e-3),
                                         ("max_treatments", 0), ("n_neighbors", 0)])
def test_one_rule_whatever_the_route(blobs, name, value):
    """The estimator, a schedule's defaults, a Problem and the part that takes the
    setting (a term's weight, a block's option) refuse the same value with the same
    message."""
    message = f"{name}={value!r}: must be"
    with pytest.raises(InvalidParameterError, match=message):
        check_setting(name, value)
    with pytest.raises(InvalidParameterError, match=message):
        CauseFS(n_clusters=3, **{name: value}).fit(blobs[0])
    schedule = {**resolve_schedule("full").__dict__, "name": "mine",
                "setting_defaults": {name: value}}
    with pytest.raises(ScheduleError, match=f"schedule.setting_defaults.{message}"):
        CauseFS(n_clusters=3, schedule=schedule).fit(blobs[0])
    if name in ROUTES:
        with pytest.raises(InvalidParameterError, match=message):
            ROUTES[name](**{name: value})
    if name == "n_neighbors":
        with pytest.raises(InvalidParameterError, match=message):
            Problem(X=blobs[0], coding=np.zeros_like(blobs[0]), **{name: value})


def test_a_schedule_entry_may_not_replace_a_setting(blobs):
    """Settings are decided once (the user's, else the schedule's defaults): an entry's
    option that is a setting its part requires is refused, naming where to put it."""
    full = resolve_schedule("full")
    loop = [{"name": "confounders", "sigma": 0.5} if entry == "confounders" else entry
            for entry in full.loop]
    with pytest.raises(ScheduleError, match="schedule.confounders.sigma: sigma is a setting"):
        CauseFS(n_clusters=3, schedule=Schedule("mine", full.init, tuple(loop))).fit(blobs[0])
    terms = [{"name": "regression", "alpha": 2.0}, "fused_smoothness", "sparsity"]
    with pytest.raises(ScheduleError, match="schedule.regression.alpha: alpha is a setting"):
        CauseFS(n_clusters=3, schedule=Schedule("mine", full.init, full.loop,
                                                terms=tuple(terms))).fit(blobs[0])


def test_schedule_entries_may_be_block_instances(blobs):
    """optax's chain: a block instance composes as the block named by its entry does."""
    full = resolve_schedule("full")
    loop = tuple(SelectionMatrixBlock(system="primal") if entry == "selection_matrix"
                 else EmbeddingBlock(max_iter=50) if entry == "embedding" else entry
                 for entry in full.loop)
    by_name = tuple({"name": "selection_matrix", "system": "primal"}
                    if entry == "selection_matrix" else
                    {"name": "embedding", "max_iter": 50} if entry == "embedding" else entry
                    for entry in full.loop)
    params = dict(n_clusters=3, max_iter=3, random_state=0)
    instances = CauseFS(schedule=Schedule("a", full.init, loop), **params).fit(blobs[0])
    names = CauseFS(schedule=Schedule("b", full.init, by_name), **params).fit(blobs[0])
    np.testing.assert_array_equal(instances.objective_history_, names.objective_history_)
    np.testing.assert_array_equal(instances.ranking_, names.ranking_)


def test_the_settings_reach_the_blocks(blobs):
    """The engine hands every block the settings it requires, from the one table."""
    from causefs.engine import build_parts

    settings = DEFAULTS.replace(sigma=0.3, max_granularity=4, neighbor_algorithm="exact",
                                max_treatments=7, schedule="full")
    parts = build_parts(settings, seed=11)
    blocks = {block.name: block for block in (*parts.init, *parts.loop)}
    assert blocks["confounders"].sigma == 0.3 and blocks["confounders"].max_treatments == 7
    assert blocks["granularity"].max_granularity == 4
    assert blocks["correlation_groups"].max_granularity == 4
    assert {blocks[n].neighbor_algorithm for n in ("granular_graphs", "fused_graph",
                                                   "granularity", "initial_fused_graph",
                                                   "initial_granular_graphs")} == {"exact"}
    assert blocks["spectral_embedding"].seed == 11
    assert blocks["sample_weights"].qp is parts.qp


def test_the_data_bound_n_clusters_n_neighbors_and_the_features_to_select():
    """``check_data``: n_clusters <= n, n_neighbors <= n - 2 (the closed form uses the
    (k+1)-th neighbour), an int n_features_to_select <= d, never capped; a fraction in
    (0, 1] keeps ``round(fraction d)`` features and None half (as scikit-learn), at least
    one either way (docs/ERRORS.md, CauseFS's numpydoc)."""
    n, d = 9, 10
    assert Settings(n_clusters=9, n_neighbors=7, n_features_to_select=10).check_data(n, d) == 10
    with pytest.raises(InvalidParameterError,
                       match=r"^n_clusters=10: exceeds the 9 samples of the data$"):
        Settings(n_clusters=10).check_data(n, d)
    with pytest.raises(InvalidParameterError,
                       match=r"^n_neighbors=8: needs at least n_neighbors \+ 2 = 10 samples "
                             r"\(the closed form uses the \(k\+1\)-th neighbour\), the data "
                             "has 9$"):
        Settings(n_neighbors=8).check_data(n, d)
    with pytest.raises(InvalidParameterError, match=r"^n_features_to_select=11: exceeds "
                                                    "the 10 features of the data$"):
        Settings(n_features_to_select=11).check_data(n, d)
    assert Settings(n_features_to_select=3).check_data(n, d) == 3
    for fraction, kept in ((0.3, 3), (0.26, 3), (0.04, 1), (0.01, 1), (1.0, 10)):
        assert Settings(n_features_to_select=fraction).check_data(n, d) == kept, fraction
    for features, half in ((1, 1), (2, 1), (3, 1), (7, 3), (10, 5)):
        assert DEFAULTS.check_data(n, features) == half, features


def test_only_the_settings_that_watch_or_guard_a_fit_leave_its_result_alone():
    """memory_limit refuses a fit or lets it run, trace evaluates the objective more
    often, check verifies the blocks, verbose shows progress: none changes a result (a
    stored result is reused across them); every other setting can."""
    neutral = [name for name in setting_names() if not affects_result(name)]
    assert neutral == ["memory_limit", "trace", "check", "verbose"]

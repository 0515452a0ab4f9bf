"""The block contract's checks one by one (:mod:`causefs.core.contracts`) on a toy
problem, each message as a plugin author reads it; tests/test_contracts.py checks them
inside real fits."""

import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from causefs.blocks import Block
from causefs.core.contracts import (DESCENT_WARN_RTOL, BlockContractError, Contract,
                                    DescentWarning, NonFiniteError, check_descent,
                                    check_finite, check_purity, check_returned_state,
                                    check_writes, checks_descent, fingerprint, fingerprints)
from causefs.core.state import Field, State
from causefs.model.objective import ObjectiveValue


class _Toy:
    """x: (n_rows, 2); parts: a tuple of (n_rows,) arrays; gamma: any shape; k: given."""

    n_rows = 3
    k = np.ones(2)
    fields = {"x": Field("x", shape=("n_rows", 2), doc="a matrix"),
              "parts": Field("parts", shape=("n_rows",), sequence=True, doc="one per part"),
              "gamma": Field("gamma", shape=("unknown",), doc="not checked"),
              "k": Field("k", role="given", doc="given")}


class _Writer(Block):
    name, kind, writes = "writer", "descent", ("x",)

    def step(self, state):
        raise AssertionError("not run")


def _block(writes=("x",), kind="descent", reestimates=(), name="writer"):
    return type("B", (_Writer,), {"writes": tuple(writes), "kind": kind, "name": name,
                                  "reestimates": tuple(reestimates)})()


def _state(**values):
    return State(_Toy(), **values)


X = np.arange(6.0).reshape(3, 2)


def test_descent_is_checked_on_the_powers_of_two_by_default_and_always_when_strict():
    powers = {1, 2, 4, 8, 16, 32, 64}
    assert [t for t in range(0, 65) if checks_descent("cheap", t)] == sorted(powers)
    assert all(checks_descent("strict", t) for t in range(0, 65))


def test_a_fingerprint_changes_with_the_values_in_place_and_not_otherwise():
    dense, sparse = X.copy(), sp.csr_array(X)
    assert fingerprint(None) is None
    assert fingerprint(dense) == X.tobytes()
    assert fingerprint((dense, None)) == (X.tobytes(), None)
    before = fingerprint(sparse)
    csc = sp.csc_array(X)
    assert before == (csc.shape, csc.indices.tobytes(), csc.indptr.tobytes(),
                      csc.data.tobytes())
    sparse.data[0] += 1.0
    assert fingerprint(sparse) != before
    state = _state(x=X, parts=(np.ones(3),))
    assert fingerprints(state) == {"x": X.tobytes(), "parts": (np.ones(3).tobytes(),),
                                   "gamma": None}


def test_a_returned_state_must_be_a_state_of_the_same_problem():
    before = _state(x=X)
    check_returned_state(_block(), before, before.replace(x=X + 1), 4)
    with pytest.raises(BlockContractError) as error:
        check_returned_state(_block(), before, {"x": X}, 4)
    assert str(error.value) == "block 'writer' (iteration 4) returned dict, not a State"
    with pytest.raises(BlockContractError) as error:
        check_returned_state(_block(), before, _state(x=X))
    assert str(error.value) == "block 'writer' replaced the problem"
    with pytest.raises(BlockContractError) as error:
        check_returned_state(_block(), before, _state(x=X), 2)
    assert str(error.value) == "block 'writer' (iteration 2) replaced the problem"


def test_declared_writes_must_be_set_in_their_declared_shapes():
    check_writes(_block(("x", "parts", "gamma")),
                 _state(x=X, parts=(np.ones(3), np.zeros(3)), gamma=np.ones(7)), 1)
    with pytest.raises(BlockContractError) as error:
        check_writes(_block(("x", "parts", "gamma")), _state(x=X), 2)
    assert str(error.value) == ("block 'writer' (iteration 2) declares writes ('x', 'parts', "
                                "'gamma') but left ['parts', 'gamma'] unset")
    with pytest.raises(BlockContractError) as error:
        check_writes(_block(("gamma", "x")), _state(x=X.T, gamma=np.ones(2)), 3)
    assert str(error.value) == ("block 'writer' (iteration 3) wrote 'x' of shape (2, 3); it "
                                "must be (3, 2) (x (n_rows, 2): a matrix)")
    with pytest.raises(BlockContractError) as error:
        check_writes(_block(("parts",)), _state(parts=(np.ones(3), np.ones(4))))
    assert str(error.value) == ("block 'writer' wrote 'parts' of shape (3,), (4,); it must "
                                "be (3,) (parts tuple of (n_rows,): one per part)")


@pytest.mark.parametrize("value", [np.array([[1.0, np.nan]]), np.array([np.inf]),
                                   sp.csr_array(np.array([[0.0, -np.inf]])),
                                   (np.ones(2), np.array([np.nan]))])
def test_a_nan_or_an_infinity_written_is_named(value):
    before = _state(x=X)
    with pytest.raises(NonFiniteError) as error:
        check_finite(_block(("x", "gamma")), before, before.replace(gamma=value), 5)
    assert str(error.value) == ("block 'writer' (iteration 5) wrote a NaN or an infinity "
                                "into 'gamma'")


def test_finite_values_pass_even_when_their_sum_overflows():
    before = _state()
    huge = np.full(4, np.finfo(float).max)  # sums to inf: every value is still finite
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and the overflow of the sum is no warning
        for value in (huge, sp.csr_array(huge), (huge,), np.arange(3), None,
                      (np.ones(2), None), np.array([1 + 2j])):
            check_finite(_block(("gamma",)), before, before.replace(gamma=value))
    # a variable unset by the block is not a NaN (check_writes reports it)
    check_finite(_block(("gamma",)), _state(gamma=np.ones(1)), _state(gamma=None))


def test_only_what_the_block_replaced_is_checked_for_finiteness():
    # a NaN the block did not write (it was there before) is not this block's
    nan = np.full((3, 2), np.nan)
    before = _state(x=nan)
    check_finite(_block(("x",)), before, before.replace(gamma=np.ones(1)))
    with pytest.raises(NonFiniteError, match="into 'x'"):
        check_finite(_block(("x",)), before, before.replace(x=nan.copy()))


def test_purity_means_the_input_untouched_and_only_declared_writes_changed():
    x = X.copy()
    before = _state(x=x, gamma=np.ones(2))
    prints = fingerprints(before)
    check_purity(_block(("x",)), before, prints, before.replace(x=X + 1), 6)
    with pytest.raises(BlockContractError) as error:
        check_purity(_block(("x",)), before, prints, before.replace(gamma=np.zeros(2)), 6)
    assert str(error.value) == ("block 'writer' (iteration 6) changed 'gamma', which it does "
                                "not declare in writes ('x',)")
    x[0, 0] = 99.0  # the block wrote into its input
    with pytest.raises(BlockContractError) as error:
        check_purity(_block(("x",)), before, prints, before.replace(x=X), 6)
    assert str(error.value) == ("block 'writer' (iteration 6) mutated its input's 'x' in "
                                "place (return state.replace(...) instead)")


class _Sum:
    """J = sum(x) + sum(gamma), as two terms; counts its calls and the caches it got."""

    needs = ("x",)

    def __init__(self):
        self.caches = []

    def __call__(self, state, cache=None):
        self.caches.append(cache)
        terms = {"x": float(np.sum(state.x)),
                 "gamma": 0.0 if state.gamma is None else float(np.sum(state.gamma))}
        return ObjectiveValue(total=sum(terms.values()), terms=terms)


def test_descent_allows_a_rise_of_rtol_times_the_scale_and_no_more():
    # scale: the sum of the terms' absolute values at the start (|15| + |-5| = 20)
    before = _state(x=X, gamma=np.array([-5.0]))
    block = _block(("x",))
    assert check_descent(block, _Sum(), before, before.replace(x=X + 1e-9 * 20 / 6), 1e-9)
    with pytest.raises(BlockContractError) as error:
        check_descent(block, _Sum(), before, before.replace(x=X + 3e-9 * 20 / 6), 1e-9, 7)
    assert str(error.value).startswith("descent block 'writer' (iteration 7) raised the "
                                       "objective from 10.0 to 10.00000006")
    assert "(by 3e-09 of its scale); terms before {'x': 15.0, 'gamma': -5.0}, after" in \
        str(error.value)
    # a structural or init block makes no promise
    assert check_descent(_block(("x",), kind="structural"), _Sum(), before,
                         before.replace(x=X + 1))


def test_descent_substitutes_the_reestimated_parameters_on_both_sides():
    # gamma re-estimated upwards raises J; the descent is judged with the new gamma
    before = _state(x=X, gamma=np.array([0.0]))
    after = before.replace(x=X - 1, gamma=np.array([100.0]))
    assert check_descent(_block(("x", "gamma"), reestimates=("gamma",)), _Sum(), before, after)
    with pytest.raises(BlockContractError):
        check_descent(_block(("x", "gamma")), _Sum(), before, after)


def test_a_rise_warned_about_returns_false_and_the_cache_reaches_the_objective():
    before = _state(x=X)
    objective, cache = _Sum(), {}
    with pytest.warns(DescentWarning, match="raised the objective from 15.0 to 21.0"):
        assert not check_descent(_block(), objective, before, before.replace(x=X + 1),
                                 cache=cache, warn=True)
    assert objective.caches == [cache, cache]


def test_the_default_level_warns_once_per_block_on_its_iterations_strict_raises():
    before = _state(x=X)
    rising = before.replace(x=X + 1)
    objective = _Sum()
    contract = Contract("cheap", objective, ["x"])
    cache = {}
    contract.check(_block(), before, contract.prints(before), rising, 3, cache)  # not 2^k
    assert objective.caches == []
    with pytest.warns(DescentWarning, match=f"\\(by {6 / 15:.3g} of its scale\\)"):
        contract.check(_block(), before, None, rising, 4, cache)
    assert objective.caches == [cache, cache] and contract.warned == {"writer"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        contract.check(_block(), before, None, rising, 8, cache)  # reported once
        contract.check(_block(name="other"), before, None, before.replace(
            x=X + 15 * DESCENT_WARN_RTOL / 2 / 6), 8, cache)  # within the default rtol
    strict = Contract("strict", _Sum(), ["x"], rtol=0.0)
    assert strict.prints(before) == fingerprints(before) and contract.prints(before) is None
    with pytest.raises(BlockContractError, match="raised the objective"):
        strict.check(_block(), before, strict.prints(before), rising, 3, cache)
    assert strict.objective.caches == [None, None]  # strict evaluates afresh


def test_no_descent_is_checked_before_the_objective_can_be_evaluated():
    before = _state(gamma=np.ones(1))  # x, which J needs, is not set yet
    contract = Contract("strict", _Sum(), ["x"], rtol=0.0)
    contract.check(_block(("x",)), before, contract.prints(before), before.replace(x=X), 1)
    assert contract.objective.caches == []


def test_the_strict_level_checks_purity_the_default_does_not():
    before = _state(x=X, gamma=np.ones(2))
    changed = before.replace(x=X - 1, gamma=np.zeros(2))  # gamma is not declared
    Contract("cheap", _Sum(), ["x"]).check(_block(), before, None, changed, 3)
    strict = Contract("strict", _Sum(), ["x"])
    with pytest.raises(BlockContractError, match="changed 'gamma'"):
        strict.check(_block(), before, strict.prints(before), changed, 3)


def test_a_zero_objective_left_at_zero_is_no_rise():
    # every term 0: the scale is 0, and J unchanged at 0 is within any tolerance
    before = _state(x=np.zeros((3, 2)))
    for rtol in (0.0, 1e-9, 1.0):
        assert check_descent(_block(), _Sum(), before, before.replace(x=np.zeros((3, 2))),
                             rtol)


def test_the_strict_level_holds_its_own_rtol_not_the_default_levels():
    before = _state(x=X)
    rise = before.replace(x=X + 15 * 1e-8 / 6)  # 1e-8 of the scale: below 1e-6, above 1e-9
    for strict in (Contract("strict", _Sum(), ["x"]), Contract("strict", _Sum(), ["x"],
                                                               rtol=1e-9)):
        with pytest.raises(BlockContractError, match="by 1e-08 of its scale"):
            strict.check(_block(), before, strict.prints(before), rise, 3)
    loose = Contract("strict", _Sum(), ["x"], rtol=2e-8)
    loose.check(_block(), before, loose.prints(before), rise, 3)


def test_the_descent_is_checked_once_exactly_what_j_needs_is_available():
    # needs x and the given k: both available, nothing more; the rise is found
    before = _state(x=X)
    assert before.available() == {"x", "k"}
    with pytest.warns(DescentWarning):
        Contract("cheap", _Sum(), ["x", "k"]).check(_block(), before, None,
                                                   before.replace(x=X + 1), 1)


@pytest.mark.parametrize("check", ["cheap", "strict"])
def test_every_check_of_a_contract_names_the_iteration(check):
    before = _state(x=X, gamma=np.ones(2))
    contract = Contract(check, _Sum(), ["x"], rtol=0.0)
    prints = fingerprints(before)
    broken = [(_block(("x", "parts")), before.replace(x=X - 1)),  # parts left unset
              (_block(), before.replace(x=X.T - 1)),  # the wrong shape
              (_block(), before.replace(x=X * np.nan))]
    if check == "strict":
        broken += [(_block(), before.replace(x=X - 1, gamma=np.ones(1))),  # not declared
                   (_block(), before.replace(x=X + 1))]  # a rise
    for block, after in broken:
        with pytest.raises(BlockContractError, match="block 'writer' \\(iteration 8\\)"):
            contract.check(block, before, prints, after, 8)
    if check == "cheap":
        with pytest.warns(DescentWarning, match="block 'writer' \\(iteration 8\\)"):
            contract.check(_block(), before, None, before.replace(x=X + 1), 8)


@pytest.mark.skipif("MUTANT_UNDER_TEST" in os.environ,
                    reason="mutmut's trampoline adds a frame to every call of a mutated "
                           "module: no stacklevel holds under it (docs/MUTATION.md)")
def test_a_descent_warning_points_at_the_line_that_asked_for_the_check():
    before = _state(x=X)
    with pytest.warns(DescentWarning) as record:
        check_descent(_block(), _Sum(), before, before.replace(x=X + 1), warn=True)
    assert record[0].filename == __file__

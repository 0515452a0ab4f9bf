"""The fixed part of a fit (:class:`causefs.model.problem.Problem`) on problems of a few
samples: its checks, the balance operator built once per confounder sets and at most two
held, the balance value (paper eq. u.2 with the linear kernel, written out here) cached
on the very same ``K`` and ``mu``, and ``reuse``."""

import gc
import weakref

import numpy as np
import pytest

from causefs.engine import balance_of
from causefs.kernels import LinearKernel
from causefs.model.problem import Problem
from causefs.model.settings import InvalidParameterError
from causefs.model.treatments import treatment_coding

N, D = 12, 4


def data(seed=0):
    X = np.random.default_rng(seed).random((N, D))
    return X, treatment_coding(X)


class Operator:
    """A balance operator whose quadratic form is ``sum(mu)^2`` (any fixed form would
    do), counting its evaluations."""

    def __init__(self, K):
        self.K = K
        self.quads = 0

    def quad(self, mu):
        self.quads += 1
        return float(np.sum(mu)) ** 2


class Balance:
    """``balance(X, coding, K)`` recording every operator it builds."""

    def __init__(self):
        self.built = []

    def __call__(self, X, coding, K):
        self.built.append(Operator(K))
        return self.built[-1]


def confounders(seed):
    K = np.random.default_rng(seed).random((D, D)) < 0.5
    np.fill_diagonal(K, False)
    return K


def test_z_must_be_a_design_of_one_row_per_sample():
    X, coding = data()
    assert Problem(X=X, coding=coding, Z=np.ones((N, 2))).n_nuisance == 2
    assert Problem(X=X, coding=coding).n_nuisance is None
    for Z in (np.ones(N), np.ones((N, 1, 1)), np.ones((N - 1, 2)), np.ones((2, N))):
        with pytest.raises(ValueError, match=r"Z must be the coded nuisance design "
                                             rf"\(n_samples, q\) = \({N}, q\), got shape "
                                             + repr(Z.shape).replace("(", r"\(")
                                             .replace(")", r"\)")):
            Problem(X=X, coding=coding, Z=Z)


def test_the_sizes_are_checked_by_the_settings_rules():
    X, coding = data()
    for name, value in (("n_clusters", 1), ("n_neighbors", 0), ("sample_weights", "sum")):
        with pytest.raises(InvalidParameterError, match=f"{name}={value!r}: must be"):
            Problem(X=X, coding=coding, **{name: value})


def test_balancing_without_a_balance_operator_names_how_to_make_one():
    X, coding = data()
    with pytest.raises(ValueError, match=r"^balancing needs a balance operator: "
                                         r"Problem\(balance=\.\.\.\), made by "
                                         r"causefs\.engine\.balance_of$"):
        Problem(X=X, coding=coding).balance_operator(confounders(0))


def test_the_balance_operator_is_built_once_per_confounder_sets():
    """A scheduler compares a state with its successor: alternating between two K (the
    very same objects) builds each once; equal values in a new object are a new K."""
    X, coding = data()
    balance = Balance()
    problem = Problem(X=X, coding=coding, balance=balance)
    K1, K2 = confounders(1), confounders(2)
    first = problem.balance_operator(K1)
    assert first.K is K1 and balance.built == [first]
    for _ in range(3):
        assert problem.balance_operator(K1) is first
        second = problem.balance_operator(K2)
        assert second.K is K2
    assert len(balance.built) == 2
    copy = K1.copy()
    assert problem.balance_operator(copy).K is copy and len(balance.built) == 3


def test_at_most_two_balance_operators_are_held():
    X, coding = data()
    problem = Problem(X=X, coding=coding, balance=lambda X, coding, K: Operator(K))
    held = []
    for seed in range(4):
        held.append(weakref.ref(problem.balance_operator(confounders(seed))))
    gc.collect()
    assert [ref() is None for ref in held] == [True, True, False, False]


def test_the_balance_value_is_the_linear_mmd_of_the_confounders():
    """With the linear kernel and the group coding, ``sum_r MMD_r(mu) = sum_r ||X_{K_r}'
    (mu o a_r)||^2`` (eq. u.2): the mu-weighted difference of the treated and control
    means of each treatment's confounders, squared."""
    X, coding = data(3)
    problem = Problem(X=X, coding=coding, balance=balance_of(LinearKernel()))
    K = confounders(3)
    mu = np.random.default_rng(4).random(N)
    by_hand = 0.0
    for r in range(D):
        treated = X[:, r] > np.median(X[:, r])
        confounding = X[:, K[:, r]]
        difference = (mu[treated] @ confounding[treated] / treated.sum()
                      - mu[~treated] @ confounding[~treated] / (~treated).sum())
        by_hand += difference @ difference
    assert problem.balance_value(K, mu) == pytest.approx(by_hand, rel=1e-12)


def test_the_balance_value_is_cached_for_the_very_same_k_and_mu():
    X, coding = data()
    balance = Balance()
    problem = Problem(X=X, coding=coding, balance=balance)
    K, mu = confounders(5), np.full(N, 0.5)
    assert problem.balance_value(K, mu) == 36.0
    operator, = balance.built
    assert operator.K is K
    assert problem.balance_value(K, mu) == 36.0 and operator.quads == 1
    other = np.ones(N)
    assert problem.balance_value(K, other) == 144.0 and operator.quads == 2
    assert problem.balance_value(K, mu.copy()) == 36.0 and operator.quads == 3
    K2 = confounders(6)
    assert problem.balance_value(K2, mu) == 36.0
    assert [o.K for o in balance.built] == [K, K2] and balance.built[1].quads == 1


def test_reuse_computes_once_while_the_inputs_are_the_same_objects():
    problem = Problem(*data())
    a, b = np.ones(3), np.zeros(2)
    calls = []

    def compute():
        calls.append(1)
        return object()

    value = problem.reuse("x", (a, b), compute)
    assert problem.reuse("x", (a, b), compute) is value and len(calls) == 1
    assert problem.reuse("y", (a, b), compute) is not value and len(calls) == 2
    again = problem.reuse("x", (a, b.copy()), compute)  # equal, not the same object
    assert again is not value and len(calls) == 3
    assert problem.reuse("x", (a, b.copy()), compute) is not again and len(calls) == 4
    fewer = problem.reuse("x", (a,), compute)  # one entry a name: the last call's
    assert fewer is not again and len(calls) == 5
    assert problem.reuse("x", (a,), compute) is fewer and len(calls) == 5
    assert problem.reuse("x", (a, b), compute) is not fewer and len(calls) == 6

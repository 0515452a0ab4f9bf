"""The objective J: the sum of the terms a schedule names (docs/MODEL.md, "Objective").

CAUSE-FS's J (paper eq. 3.5) is six registered terms (:mod:`causefs.terms`)::

    J = alpha * ||X~ W - F||_F^2                                  regression
      + Tr(F' L_G F)                                               fused_smoothness
      + lambda * sum_f sqrt(||W_f||^2 + eps)                       sparsity
      + sum_m [Tr(W' R_m X~' L_S[m] X~ R_m W)
               + sum_j gamma[m]_j ||S[m]_.j||^2]                   granular_graphs
      - sum_m nu_m <G, S[m]> + sum_j xi_j ||G_.j||^2               fusion
      + beta * sum_r MMD_r(mu)                                     balance

with ``X~ = diag(mu) X_adjusted``. The objective knows no formula: it sums what its terms
say, and assembles a descent block's subproblem from the parts its terms add
(:mod:`causefs.model.subproblems`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..core.state import State
from .subproblems import Gradient, Subproblem


@dataclass(frozen=True)
class ObjectiveValue:
    """Total objective and its terms (term name -> value)."""

    total: float
    terms: dict


class Objective:
    """J as the sum of its terms, the scheduler's objective
    (:class:`causefs.core.loop.Objective`).

    Parameters
    ----------
    terms : sequence of Term
        Instances with distinct names (:class:`causefs.terms.Term`).

    Attributes
    ----------
    needs : tuple of str
        The variables that must be set before J can be evaluated (the union of its
        terms' ``needs``).
    """

    def __init__(self, terms: Sequence):
        self.terms = tuple(terms)
        names = [term.name for term in self.terms]
        duplicated = sorted({name for name in names if names.count(name) > 1})
        if duplicated:
            raise ValueError(f"an objective names each term once; {duplicated} twice")
        needs: list = []
        for term in self.terms:
            needs += [name for name in term.needed() if name not in needs]
        self.needs = tuple(needs)

    @property
    def names(self) -> tuple:
        return tuple(term.name for term in self.terms)

    def term(self, name: str):
        """The term called ``name``, or None."""
        return next((term for term in self.terms if term.name == name), None)

    def __call__(self, state: State, cache: dict | None = None) -> ObjectiveValue:
        """J at ``state``, term by term.

        ``cache`` (a dict kept by the caller, e.g. the scheduler) reuses a term whose
        input variables are the very same objects as at its last evaluation: blocks
        replace the variables they write, so a term is recomputed only when one of its
        inputs changed.
        """
        missing = set(self.needs) - state.available()
        if missing:
            raise ValueError(f"the objective needs {sorted(missing)}, which are not set yet")
        terms = {}
        for term in self.terms:
            if not term.active:  # a weight of 0 switches a term off
                terms[term.name] = 0.0
                continue
            inputs = _inputs(state, term)
            hit = cache.get(term.name) if cache is not None else None
            if hit is not None and hit[0] is state.problem and hit[1] is term and all(
                    a is b for a, b in zip(hit[2], inputs)):
                terms[term.name] = hit[3]
                continue
            terms[term.name] = float(term.value(state))
            if cache is not None:
                cache[term.name] = (state.problem, term, inputs, terms[term.name])
        return ObjectiveValue(total=float(sum(terms.values())), terms=terms)

    def contributors(self, variables) -> list:
        """The terms whose value depends on any of ``variables``."""
        wanted = set(variables)
        return [term for term in self.terms if wanted & set(term.inputs())]

    def subproblem(self, kind: type, state: State, /, *variables, **options) -> Subproblem:
        """The subproblem ``kind`` (:mod:`causefs.model.subproblems`) in ``variables`` at
        ``state``: every term that depends on one of them adds its part.

        Raises
        ------
        NotImplementedError
            A term depends on the variables but adds nothing to this kind of subproblem
            (the engine refuses such a schedule before it runs:
            :func:`missing_contributions`).
        """
        problem = kind(state, **options)
        for term in self.contributors(variables):
            add = getattr(term, kind.hook, None)
            if add is None or not term.contributes_to(kind):
                raise NotImplementedError(
                    f"term {term.name!r} depends on {sorted(set(variables) & set(term.inputs()))}"
                    f" but adds nothing to the {kind.__name__} subproblem ({kind.hook})")
            add(state, problem)
        return problem

    def gradient(self, state: State, variable: str):
        """The gradient of J in ``variable`` (an array of its shape)."""
        return self.subproblem(Gradient, state, variable, variable=variable).value

    def missing_contributions(self, kind: type, variables) -> list:
        """The terms that depend on ``variables`` but add nothing to subproblem ``kind``."""
        return [term.name for term in self.contributors(variables)
                if not term.contributes_to(kind)]


def _inputs(state: State, term) -> tuple:
    """The values a term's value depends on (a derived field by its own inputs)."""
    values = []
    for name in term.inputs():
        field = state.fields.get(name)
        if field is not None and field.role == "derived":
            values += [getattr(state, inner) for inner in field.inputs]
        else:
            values.append(getattr(state, name, None))
    return tuple(values)


def objective(state: State, cache: dict | None = None) -> ObjectiveValue:
    """J at ``state`` for the objective of its problem (``state.problem.objective``)."""
    return state.problem.objective(state, cache)

"""Re-check the total budget a γ table claims (``darrm verify``, :func:`darrm.load`)."""

from __future__ import annotations

import math

import numpy as np

from ..errors import CertificationError, ParameterError
from ..models import model_of
from ..models.profile import privacy_profile
from ..table import GammaTable
from ..validation import positive
from .compose import Composition, composed_epsilon
from .spec import TotalBudget

#: recorded and recomputed composed ε may differ by this (relative): the computation is deterministic
#: up to the FFT library's rounding
RECORD_RTOL = 1e-6


#: most loss-grid points a recorded composition may ask for (ε_total / discretization, and one
#: query's span of privacy losses / discretization): the PLD's support (time and memory of the
#: recomputation) grows with them (a K = 3 table with Q = 10⁶ at
#: discretization 10⁻⁶ took over 200 s and 2.7 GB); the designs record 10⁻⁴, and losses span at most
#: about 1,400 (float64)
MAX_GRID_POINTS = 3 * 10**7


def total_budget_record(table: GammaTable) -> tuple[TotalBudget, float, float] | None:
    """(budget, recorded composed ε, discretization) of ``table.info["total_budget"]``, its sizes
    checked before any work (None when the table claims no total budget).

    Raises:
        CertificationError: the record is malformed, or ε_total / discretization exceeds
            :data:`MAX_GRID_POINTS` (naming ``total_budget.discretization``)."""
    tb = table.info.get("total_budget")
    if tb is None:
        return None
    try:
        budget = TotalBudget.from_dict(tb)
        recorded = float(tb["composed_epsilon"])
        d = positive("discretization", tb["discretization"])
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    if not model_of(table.params).supports("total-budget"):
        raise CertificationError(f"a total budget is recorded for a {table.params.members} table, whose member model "
                                 "has no 'total-budget' capability")
    if budget.epsilon / d > MAX_GRID_POINTS:
        raise CertificationError(f"total_budget.discretization: {d!r} asks for {budget.epsilon / d:.3g} loss-grid "
                                 f"points up to ε_total = {budget.epsilon:g}, more than the {MAX_GRID_POINTS:.0e} "
                                 "a recomputation may use")
    return budget, recorded, d


def verify_total_budget(table: GammaTable) -> Composition | None:
    """Recompute the Q-fold composition of the table's own profile and check it against the budget
    in ``table.info["total_budget"]`` (None when the table claims no total budget).

    The work is bounded before it is done: the record's sizes first (:func:`total_budget_record`),
    then the compositions of the first 1, 2, 4, … queries: ε(δ) is non-decreasing in the number of
    composed queries (one more mechanism never lowers the hockey-stick divergence), so a prefix
    above ε_total refuses the whole record at the cost of that prefix — a forged Q = 10⁹ used to
    run for minutes.

    Raises:
        CertificationError: the recomputed ε (or a prefix's) exceeds the budget's ε_total, or
            differs from the recorded one; or the record is malformed or too large."""
    record = total_budget_record(table)
    if record is None:
        return None
    budget, recorded, d = record
    profile = privacy_profile(table.gamma, table.params)
    P, Q = profile.pair()
    both = (P > 0) & (Q > 0)
    losses = np.log(P[both]) - np.log(Q[both])
    span = float(losses.max() - losses.min()) if losses.size else 0.0
    if span / d > MAX_GRID_POINTS:
        raise CertificationError(f"total_budget.discretization: {d!r} puts one query's privacy losses (a span of "
                                 f"{span:.3g}) on {span / d:.3g} grid points, more than the {MAX_GRID_POINTS:.0e} a "
                                 "recomputation may use")
    k = 1
    while k < budget.queries:
        prefix = composed_epsilon(profile, k, budget.delta, discretization=d)
        if not prefix.epsilon <= budget.epsilon:
            raise CertificationError(f"total_budget.queries: the first {k} of the {budget.queries} queries already "
                                     f"compose to ε = {prefix.epsilon:.6g} at δ = {budget.delta:g}, above the "
                                     f"recorded budget ε_total = {budget.epsilon:g}")
        k *= 2
    comp = composed_epsilon(profile, budget.queries, budget.delta, discretization=d)
    if not comp.epsilon <= budget.epsilon:
        raise CertificationError(f"{budget.queries} queries compose to ε = {comp.epsilon:.6g} at δ = {budget.delta:g}, "
                                 f"above the recorded budget ε_total = {budget.epsilon:g}")
    if not math.isclose(comp.epsilon, recorded, rel_tol=RECORD_RTOL, abs_tol=1e-12):
        raise CertificationError(f"recorded composed ε {recorded!r} differs from the recomputed {comp.epsilon!r}")
    return comp

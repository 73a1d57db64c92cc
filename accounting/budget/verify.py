"""Re-check a saved total-budget table with the accountant (``darrm verify``)."""

from __future__ import annotations

import dataclasses
import math

from darrm.budget.design import ACCOUNTANT_CHARGE, PER_QUERY
from darrm.budget.spec import TotalBudget
from darrm.budget.verify import PLD_ACCOUNTANT, RECORD_RTOL, recorded_budget, verify_total_budget
from darrm.errors import CertificationError
from darrm.models.disjoint.params import DisjointParams
from darrm.models.profile import privacy_profile
from darrm.params import PrivacyParams
from darrm.table import GammaTable
from darrm.validation import instance

from .disjoint import composed_epsilon_of_profile
from .shared import shared_charge

__all__ = ["verify_charged_total"]


def verify_charged_total(table: GammaTable) -> float | None:
    """Everything :func:`darrm.budget.verify.verify_total_budget` checks (the target), and what only
    the accountant can recompute: for a disjoint-members table charged by the PLD the Q-fold
    composition of its own pair; for a shared-members table the search's charge of its winner
    (:func:`darrm.accounting.budget.shared.shared_charge`).  It must meet the budget and equal the
    record.

    Args:
        table: a γ table (``table.info["total_budget"]`` holds the claim, if any).

    Returns:
        The re-checked total ε (None when the table claims no total budget).

    Raises:
        CertificationError: the table does not meet its recorded target, total or budget.
        ParameterError: naming ``table``, not a GammaTable."""
    instance("table", table, GammaTable, "a darrm.GammaTable")
    rec = recorded_budget(table)
    if rec is None:
        return None
    budget, tb = rec
    comp = verify_total_budget(table)
    charged = float(tb["composed_epsilon"])
    if isinstance(table.params, PrivacyParams) and tb.get("accountant") == ACCOUNTANT_CHARGE:
        winner = table.info.get("design", {}).get("winner", {})
        try:
            family, theta, interval = str(winner["family"]), float(winner["parameter"]), float(tb["discretization"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CertificationError(f"malformed total_budget record: {exc}") from None
        eps_q = theta * table.params.eps if family in PER_QUERY else None
        profile = privacy_profile(table.gamma, table.params)
        # the charge (a minimum of two accountants, each non-decreasing in the number of composed
        # queries) of the first 1, 2, 4, … queries first: a prefix past ε_total refuses a forged
        # count at the cost of that prefix instead of composing all of it
        k = 1
        while k < budget.queries:
            prefix = shared_charge(dataclasses.replace(budget, queries=k))(profile, family, eps_q, interval)
            if not prefix <= budget.epsilon:
                raise CertificationError(f"total_budget.queries: the first {k} of the {budget.queries} queries "
                                         f"already compose to ε = {prefix:.6g} at δ = {budget.delta:g}, above the "
                                         f"recorded budget ε_total = {budget.epsilon:g}")
            k *= 2
        eps = shared_charge(budget)(profile, family, eps_q, interval)
        _check(eps, charged, budget)
        return charged
    if not isinstance(table.params, DisjointParams):
        return None if comp is None else comp.epsilon
    if tb.get("accountant") == PLD_ACCOUNTANT:
        _check(composed_epsilon_of_profile(privacy_profile(table.gamma, table.params), budget), charged, budget)
    return charged


def _check(eps: float, charged: float, budget: TotalBudget) -> None:
    if not eps <= budget.epsilon:
        raise CertificationError(f"{budget.queries} queries compose to ε = {eps:.6g} at δ = {budget.delta:g}, "
                                 f"above the budget ε_total = {budget.epsilon:g}")
    if not math.isclose(eps, charged, rel_tol=RECORD_RTOL, abs_tol=1e-12):
        raise CertificationError(f"recorded total ε {charged!r} differs from the recomputed {eps!r}")

"""Re-check a saved total-budget table with the accountant (``darrm verify``)."""

from __future__ import annotations

import math

from darrm.budget.verify import PLD_ACCOUNTANT, RECORD_RTOL, recorded_budget, verify_total_budget
from darrm.disjoint.params import DisjointParams
from darrm.errors import CertificationError
from darrm.privacy.profile import privacy_profile
from darrm.table import GammaTable

from .disjoint import composed_epsilon_of_profile

__all__ = ["verify_charged_total"]


def verify_charged_total(table: GammaTable) -> float | None:
    """Everything :func:`darrm.budget.verify.verify_total_budget` checks (the target), and for a
    disjoint-members table charged by the accountant the Q-fold PLD composition of its own pair,
    recomputed: it must meet the budget and equal the record.  Returns the re-checked total
    (None when the table claims no total budget).

    Raises:
        CertificationError: the table does not meet its recorded target, total or budget."""
    rec = recorded_budget(table)
    if rec is None:
        return None
    budget, tb = rec
    comp = verify_total_budget(table)
    if not isinstance(table.params, DisjointParams):
        return None if comp is None else comp.epsilon
    charged = float(tb["composed_epsilon"])
    if tb.get("accountant") == PLD_ACCOUNTANT:
        eps = composed_epsilon_of_profile(privacy_profile(table.gamma, table.params), budget)
        if not eps <= budget.epsilon:
            raise CertificationError(f"{budget.queries} queries compose to ε = {eps:.6g} at δ = {budget.delta:g}, "
                                     f"above the budget ε_total = {budget.epsilon:g}")
        if not math.isclose(eps, charged, rel_tol=RECORD_RTOL, abs_tol=1e-12):
            raise CertificationError(f"recorded total ε {charged!r} differs from the recomputed {eps!r}")
    return charged

"""Re-check the total budget a γ table claims (``darrm verify``, :func:`darrm.load`)."""

from __future__ import annotations

import math

from ..errors import CertificationError, ParameterError
from ..models import model_of
from ..models.profile import privacy_profile
from ..table import GammaTable
from .compose import Composition, composed_epsilon
from .spec import TotalBudget

#: recorded and recomputed composed ε may differ by this (relative): the computation is deterministic
#: up to the FFT library's rounding
RECORD_RTOL = 1e-6


def verify_total_budget(table: GammaTable) -> Composition | None:
    """Recompute the Q-fold composition of the table's own profile and check it against the budget
    in ``table.info["total_budget"]`` (None when the table claims no total budget).

    Raises:
        CertificationError: the recomputed ε exceeds the budget's ε_total, or differs from the
            recorded one; or the record is malformed."""
    tb = table.info.get("total_budget")
    if tb is None:
        return None
    try:
        budget = TotalBudget.from_dict(tb)
        recorded = float(tb["composed_epsilon"])
        d = float(tb["discretization"])
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    if not model_of(table.params).supports("total-budget"):
        raise CertificationError(f"a total budget is recorded for a {table.params.members} table, whose member model "
                                 "has no 'total-budget' capability")
    comp = composed_epsilon(privacy_profile(table.gamma, table.params), budget.queries, budget.delta,
                            discretization=d)
    if not comp.epsilon <= budget.epsilon:
        raise CertificationError(f"{budget.queries} queries compose to ε = {comp.epsilon:.6g} at δ = {budget.delta:g}, "
                                 f"above the recorded budget ε_total = {budget.epsilon:g}")
    if not math.isclose(comp.epsilon, recorded, rel_tol=RECORD_RTOL, abs_tol=1e-12):
        raise CertificationError(f"recorded composed ε {recorded!r} differs from the recomputed {comp.epsilon!r}")
    return comp

"""What the core checks of the total budget a γ table claims (:func:`darrm.load`).

A table designed for a total budget records it in ``info["total_budget"]``: the budget, the
composed ε it was charged and the accountant that charged it.  Recomputing that composition is the
accountant's work (a layer above: :func:`darrm.verify_charged_total`, ``darrm verify``, the
labelling session, each through its member model's registered verifier); the core checks what needs
no composition: the record is well formed, its member model has the ``total-budget`` capability, and
the recorded total is within the recorded budget.
"""

from __future__ import annotations

from ..errors import CertificationError, ParameterError
from ..models import model_of
from ..table import GammaTable
from .spec import TotalBudget

#: recorded and recomputed composed ε may differ by this (relative): the computation is deterministic
#: up to the FFT library's rounding
RECORD_RTOL = 1e-6
#: the accountants a disjoint-members table may be charged by (:mod:`darrm.accounting.budget.disjoint`)
GDP_ACCOUNTANT = "gdp-vertex-certificate"
PLD_ACCOUNTANT = "dominating-pair-pld"


def recorded_budget(table: GammaTable) -> tuple[TotalBudget, dict] | None:
    """(budget, record) of ``table.info["total_budget"]`` (None when the table claims none).

    Raises:
        CertificationError: a malformed record, one for a member model without the ``total-budget``
            capability, or a recorded total above the recorded budget."""
    tb = table.info.get("total_budget")
    if tb is None:
        return None
    try:
        budget = TotalBudget.from_dict(tb)
        charged = float(tb["composed_epsilon"])
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    model = model_of(table.params)
    if not model.supports("total-budget"):
        raise CertificationError(f"a total budget is recorded for a {model.name} table, whose member model has no "
                                 "'total-budget' capability")
    if not charged <= budget.epsilon:
        raise CertificationError(f"the recorded total ε = {charged:.6g} exceeds the budget ε_total = "
                                 f"{budget.epsilon:g}")
    return budget, tb

"""Why a γ_opt solve stopped, and what that lets its table be called.

Every solve that ends in a table records a :class:`StopReason` (``info["stop"]`` in the
table, the same string in γ files) and a proven optimality gap.  A table's status is
:data:`OPTIMAL` only when its *certified* (final, possibly repaired) objective is proven
within the solve's ``gap_tol`` of the LP optimum; otherwise it is :data:`GAP_BOUNDED`
(written only on request, ``accept_gap=True``), and its gap is stated.
"""

from __future__ import annotations

from enum import Enum


class StopReason(str, Enum):
    """Why a constraint-generation (or full-LP) solve stopped."""

    #: every row of the LP was present (small problems): the LP optimum itself
    FULL_LP = "full LP"
    #: the LP point violates no privacy inequality by more than the separation tolerance
    NO_VIOLATION = "no violated multiset"
    #: the best certified point is proven within gap_tol of the optimum
    GAP = "optimality gap"
    #: every multiset violated at the LP point is already a row: only the LP solver's
    #: feasibility tolerance is left
    LP_TOLERANCE = "violations within LP tolerance"
    #: max_rounds reached before the gap closed
    ROUND_LIMIT = "round limit"

    def __str__(self) -> str:  # print and f-strings show the value
        return self.value


#: status of a table proven within ``gap_tol`` of the optimum
OPTIMAL = "optimal"
#: status of a certified table whose proven gap exceeds ``gap_tol`` (accept_gap=True only)
GAP_BOUNDED = "certified, gap-bounded (not proven optimal)"


def status_for(gap: float, gap_tol: float) -> str:
    """:data:`OPTIMAL` iff the proven gap meets the target, else :data:`GAP_BOUNDED`."""
    return OPTIMAL if gap <= gap_tol else GAP_BOUNDED

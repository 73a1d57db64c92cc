"""Why a γ_opt solve stopped, and what that lets its table be called.

Every solve that ends in a table records a :class:`StopReason` (``info["stop"]`` in the
table, the same string in γ files) and a proven optimality gap.  A table's status is
:data:`OPTIMAL` only when its *certified* (final, possibly repaired) objective is proven
within the solve's ``gap_tol`` of the LP optimum; otherwise it is :data:`GAP_BOUNDED`
(written only on request, ``accept_gap=True``), and its gap is stated.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class SolveReport:
    """How a table was obtained, typed (``GammaTable.report``; γ files keep it as ``info``).

    Attributes:
        method: "full", "cutting-planes", "disjoint-cutting-planes" or "closed-form".
        stop: why the solve stopped (None for closed forms).
        converged: the proven gap of the returned (final, repaired) table meets ``gap_tol``.
        optimality_gap: the proven gap of the returned table to the optimum (γ_opt only).
        lp_lower_bound: the LP's lower bound on the optimal expected error (γ_opt only).
        gap_tol: the gap the solve was asked to prove (γ_opt only).
        rounds: constraint-generation rounds (1 for the full LP, 0 for closed forms).
        repair_scale: the factor γ was scaled by to pass the certificate (1.0: not scaled).
        seconds: wall time of the solve and its certificate.
    """

    method: str
    stop: StopReason | None
    converged: bool
    optimality_gap: float | None
    lp_lower_bound: float | None
    gap_tol: float | None
    rounds: int
    repair_scale: float
    seconds: float

    @classmethod
    def from_info(cls, info: dict) -> "SolveReport":
        """The typed view of a table's ``info`` (as written by the solvers and γ files).

        Args:
            info: a table's ``info`` dict.

        Returns:
            The report.
        """
        stop = info.get("stop")
        seconds = sum(float(v) for k, v in info.items() if k.startswith("seconds_") and k != "seconds_sweeps"
                      and isinstance(v, (int, float)))
        return cls(
            method=str(info.get("method", "closed-form")),
            stop=StopReason(stop) if stop is not None else None,
            converged=bool(info.get("converged", True)),
            optimality_gap=info.get("optimality_gap"),
            lp_lower_bound=info.get("lp_lower_bound"),
            gap_tol=info.get("gap_tol"),
            rounds=int(info.get("rounds", 1 if "stop" in info else 0)),
            repair_scale=float(info.get("repair_scale", 1.0)),
            seconds=seconds,
        )

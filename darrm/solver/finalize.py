"""The end of every γ_opt solve: certify the point, prove its gap, label it honestly."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..errors import SolveError
from ..gamma import symmetric_from_upper
from ..prior import Prior
from ..privacy.certify import Certificate, certify_and_repair
from ..status import status_for
from ..table import GammaTable
from .objective import objective_coefficients
from .options import SolveOptions

#: how each LP back end is named in a table's ``solver`` field
SOLVER_NAMES = {"highs": "HiGHS (highspy, incremental)", "cvxpy": "cvxpy+HiGHS"}


@dataclass(frozen=True)
class TableForm:
    """How an LP point x makes a γ table, and the table's expected error A + c·upper(γ).

    Attributes:
        costs: the LP's (unscaled) costs c over x.
        constant: A, so that the expected error of γ is A + c·upper(γ) (Eq. 196–201).
        full: x ↦ the full table (mirrored by γ's symmetry).
        upper: the full table ↦ its LP variables.
    """

    costs: np.ndarray
    constant: float
    full: Callable[[np.ndarray], np.ndarray]
    upper: Callable[[np.ndarray], np.ndarray]

    def error(self, gamma: np.ndarray) -> float:
        """The expected error A + c·upper(γ) of a full table."""
        return self.constant + float(self.costs @ self.upper(gamma))


def total_form(K: int, prior: Prior) -> TableForm:
    """The paper's form γ(0..K), variables γ(mid..K) (:func:`darrm.solver.objective.objective_coefficients`)."""
    c, A = objective_coefficients(K, prior)
    mid = (K + 1) // 2
    return TableForm(c, A, lambda x: symmetric_from_upper(x, K), lambda g: np.asarray(g)[mid:])


def certified_gamma_opt(
    x: np.ndarray,
    params,
    prior: Prior,
    certify_fn: Callable[[np.ndarray], Certificate],
    options: SolveOptions,
    info: dict,
    *,
    lp_backend: str,
    form: TableForm | None = None,
) -> GammaTable:
    """The certified table of the point ``x`` = γ(mid..K) with its proven optimality gap.

    γ is certified by ``certify_fn`` (repaired by scaling if needed); the gap is the final
    table's expected error minus the proven lower bound ``info["lp_lower_bound"]`` (after any
    repair, never assumed from the loop); the status is "optimal" only when that gap meets
    ``options.gap_tol``.  Otherwise :class:`~darrm.errors.SolveError` unless ``accept_gap``.
    ``form`` maps x to the table and gives its expected error (default :func:`total_form`, γ(0..K)).
    """
    t = time.perf_counter()
    form = total_form(params.K, prior) if form is None else form
    gamma = form.full(np.clip(x, 0.0, 1.0))
    gamma, cert, scale = certify_and_repair(gamma, params, certify_fn)
    objective = form.error(gamma)
    gap = max(0.0, objective - (form.constant + info["lp_lower_bound"]))
    converged = gap <= options.gap_tol
    if not converged and not options.accept_gap:
        raise SolveError(
            f"γ_opt is certified but only proven within {gap:.3e} of the optimum (gap_tol {options.gap_tol:g}; "
            f"stopped: {info['stop']} after {info.get('rounds', 1)} round(s)); raise max_rounds, resume "
            "from a checkpoint, or pass accept_gap=True (--accept-gap) for the certified table with its gap"
        )
    return GammaTable(
        params=params,
        gamma=gamma,
        family="opt",
        violation=cert.violation,
        prior=prior.to_dict(),
        objective=objective,
        solver=SOLVER_NAMES[lp_backend],
        status=status_for(gap, options.gap_tol),
        info={**info, "optimality_gap": gap, "gap_tol": options.gap_tol, "converged": converged,
              "multisets": cert.checked, "repair_scale": scale, "seconds_certify": time.perf_counter() - t},
    )

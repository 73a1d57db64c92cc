"""The end of every γ_opt solve: certify the point, prove its gap, label it honestly."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from ..errors import SolveError
from ..gamma import symmetric_from_upper
from ..prior import Prior
from ..privacy.certify import Certificate, certify_and_repair
from ..status import status_for
from ..table import GammaTable
from .objective import expected_signed_error, objective_coefficients
from .options import SolveOptions

#: how each LP back end is named in a table's ``solver`` field
SOLVER_NAMES = {"highs": "HiGHS (highspy, incremental)", "cvxpy": "cvxpy+HiGHS"}


def certified_gamma_opt(
    x: np.ndarray,
    params,
    prior: Prior,
    certify_fn: Callable[[np.ndarray], Certificate],
    options: SolveOptions,
    info: dict,
    *,
    lp_backend: str,
) -> GammaTable:
    """The certified table of the point ``x`` = γ(mid..K) with its proven optimality gap.

    γ is certified by ``certify_fn`` (repaired by scaling if needed); the gap is the final
    table's expected error minus the proven lower bound ``info["lp_lower_bound"]`` (after any
    repair, never assumed from the loop); the status is "optimal" only when that gap meets
    ``options.gap_tol``.  Otherwise :class:`~darrm.errors.SolveError` unless ``accept_gap``.
    """
    t = time.perf_counter()
    gamma = symmetric_from_upper(np.clip(x, 0.0, 1.0), params.K)
    gamma, cert, scale = certify_and_repair(gamma, params, certify_fn)
    objective = expected_signed_error(gamma, prior)
    _, A = objective_coefficients(params.K, prior)
    gap = max(0.0, objective - (A + info["lp_lower_bound"]))
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

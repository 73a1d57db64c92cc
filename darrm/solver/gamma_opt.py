"""γ_opt: the utility-maximising symmetric γ (Section 5, Eq. 2–3, Appendix C).

Problem (reduced by Lemma 3.4 and Lemma 5.1)::

    minimise    c·x                                  (Eq. 201, c_l = −½ E_T[α_l − α_{K−l}])
    subject to  r_v·x ≤ e^{mε} − 1 + 2δ   for every corner multiset v   (folded Eq. 1)
                0 ≤ x ≤ 1,                 x_l = γ(l), l = mid..K,  γ(K−l) = γ(l).

Built with cvxpy and solved by HiGHS.  Rows are generated vectorised in blocks; rows
that cannot bind inside the box are dropped (:func:`darrm.solver.rows.possibly_binding`).
The solution is then *certified* by the independent checker (:mod:`darrm.privacy.certify`).  LP
feasibility tolerances (~1e-9) could leak privacy, so a table that the checker does not
certify is repaired by scaling γ toward 0: f is linear in γ with f(0) = 0 < rhs, hence
γ·rhs/max f satisfies every constraint (spec §2.6).  If even that fails, or the solver
fails, a :class:`~darrm.errors.SolveError` / :class:`~darrm.errors.CertificationError` is
raised: no uncertified table is ever returned.
"""

from __future__ import annotations

import time

import numpy as np

from ..errors import SolveError
from ..gamma import symmetric_from_upper
from ..params import PrivacyParams
from ..prior import IIDPrior, Prior
from ..privacy.certify import certify, certify_and_repair
from ..table import GammaTable
from .cutting_planes import solve_cutting_planes
from .full_lp import build_rows, choose_method
from .objective import expected_signed_error, objective_coefficients
from .options import SolveOptions
from .restricted_lp import CvxpyRestrictedLP, lagrangian_bound
from .status import StopReason, status_for


def solve_gamma_opt(
    params: PrivacyParams,
    prior: Prior | None = None,
    *,
    options: SolveOptions | None = None,
    tol: float | None = None,
    progress: bool | None = None,
    solver_opts: dict | None = None,
    executor=None,
    checkpoint: str | None = None,
    log=None,
) -> GammaTable:
    """Certified γ_opt for ``params`` under ``prior`` (default: i.i.d. mean 0.75).

    Args:
        options: :class:`~darrm.SolveOptions` — method ("full": all folded rows, pruned;
            "cutting-planes": constraint generation, :mod:`darrm.solver.cutting_planes`;
            "auto": by the number of multisets), round limit, gap target, accept_gap, cuts
            per round, stabilisation, LP back end.  Without ``accept_gap`` a table whose
            proven gap exceeds ``gap_tol`` is refused (SolveError).
        executor: runs the exhaustive sweeps (see :mod:`darrm.backends`).
        checkpoint: constraint generation saves its working set here and resumes from it.
        log: callable receiving one progress line per constraint-generation round.
        solver_opts: extra HiGHS options.

    Raises:
        SolveError: the LP solver failed.
        CertificationError: the solution could not be certified even after repair.
    """
    opts = SolveOptions() if options is None else options
    prior = IIDPrior() if prior is None else prior
    method = choose_method(params) if opts.method == "auto" else opts.method
    gap_tol, accept_gap = opts.gap_tol, opts.accept_gap
    t0 = time.perf_counter()
    c, _ = objective_coefficients(params.K, prior)

    if method == "full":
        rows = build_rows(params)
        t1 = time.perf_counter()
        full = CvxpyRestrictedLP(c, params.rhs, solver_opts)
        full.add(rows)
        x, y = full.solve()
        # valid for every y ≥ 0 (pruned rows are implied by the box): a proven lower bound
        info: dict = {"method": "full", "lp_rows": int(rows.shape[0]), "stop": StopReason.FULL_LP.value,
                      "lp_lower_bound": lagrangian_bound(c, rows, params.rhs, y)}
    else:
        t1 = time.perf_counter()
        x, status, info = solve_cutting_planes(
            params, c, opts, solver_opts=solver_opts, executor=executor, checkpoint=checkpoint,
            progress=progress, log=log,
        )
    t2 = time.perf_counter()
    gamma = symmetric_from_upper(np.clip(x, 0.0, 1.0), params.K)
    gamma, cert, scale = certify_and_repair(
        gamma, params, lambda g: certify(g, params, tol=tol, progress=progress, executor=executor)
    )
    t3 = time.perf_counter()
    objective = expected_signed_error(gamma, prior)
    _, A = objective_coefficients(params.K, prior)
    # the gap of the table actually returned (after any repair), against a proven lower bound
    gap = max(0.0, objective - (A + info["lp_lower_bound"]))
    converged = gap <= gap_tol
    info.update(optimality_gap=gap, gap_tol=gap_tol, converged=converged)
    if not converged and not accept_gap:
        raise SolveError(
            f"γ_opt is certified but only proven within {gap:.3e} of the optimum (gap_tol {gap_tol:g}; "
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
        solver="cvxpy+HiGHS" if info.get("lp_backend", "cvxpy") == "cvxpy" else "HiGHS (highspy, incremental)",
        status=status_for(gap, gap_tol),
        info={
            **info,
            "multisets": cert.checked,
            "repair_scale": scale,
            "seconds_build": t1 - t0,
            "seconds_solve": t2 - t1,
            "seconds_certify": t3 - t2,
        },
    )

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

from ..privacy.certify import certify, certify_and_repair, repair  # noqa: F401  (repair: re-exported)
from .rows import iter_row_blocks, possibly_binding
from ..errors import CertificationError, SolveError
from ..gamma import symmetric_from_upper
from ..params import PrivacyParams
from ..prior import IIDPrior, Prior
from .status import StopReason, status_for
from ..table import GammaTable


#: Tighter than HiGHS's 1e-7 defaults, so the certification repair rarely needs to act
#: and constraint generation converges to ~1e-10.
HIGHS_DEFAULTS = {"primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}


def objective_coefficients(K: int, prior: Prior) -> tuple[np.ndarray, float]:
    """(c, A): LP costs c_l = −½E[α_l − α_{K−l}] (l = mid..K) and constant A = −Σc, so that
    the expected signed error of γ is A + c·γ(mid..K) (Eq. 196–201)."""
    ea = np.asarray(prior.expected_pmf(K), dtype=np.float64)
    mid = (K + 1) // 2
    diff = ea[mid:] - ea[: K + 1 - mid][::-1]
    c = -0.5 * diff
    return c, float(-c.sum())


def expected_signed_error(gamma: np.ndarray, prior: Prior) -> float:
    """½ Σ_{l≥mid} E_T[α_l − α_{K−l}]·(1 − γ(l)): the LP objective plus its constant."""
    K = len(gamma) - 1
    c, A = objective_coefficients(K, prior)
    return A + float(c @ np.asarray(gamma)[(K + 1) // 2 :])


def build_rows(params: PrivacyParams, *, prune: bool = True, block: int = 1 << 15) -> np.ndarray:
    """All folded privacy rows (possibly-binding ones only when ``prune``)."""
    rhs = params.rhs
    keep = []
    for _, rows in iter_row_blocks(params, block):
        keep.append(rows[possibly_binding(rows, rhs)] if prune else rows)
    n = (params.K + 1) // 2
    return np.concatenate(keep, axis=0) if keep else np.zeros((0, n))


def solve_lp(rows: np.ndarray, rhs: float, c: np.ndarray, *, solver_opts: dict | None = None) -> tuple[np.ndarray, str]:
    """Solve min c·x s.t. rows·x ≤ rhs, 0 ≤ x ≤ 1 with cvxpy + HiGHS; returns (x, status)."""
    from .restricted_lp import CvxpyRestrictedLP

    lp = CvxpyRestrictedLP(c, rhs, solver_opts)
    lp.add(rows)
    x, _ = lp.solve()
    return x, lp.status


#: Above this many corner multisets "auto" uses constraint generation instead of all rows
#: (same optimum to 1e-9, tested; faster from K = 11 with Δ > 0 on).
FULL_LP_LIMIT = 20_000


def choose_method(params: PrivacyParams) -> str:
    """"full" (every row; K ≤ 9 for Δ > 0, K ≤ 45 for Δ = 0) or "cutting-planes"."""
    from ..privacy.corners import multiset_count

    C = 8 if params.Delta > 0 else 4
    return "full" if multiset_count(params.K, C) <= FULL_LP_LIMIT else "cutting-planes"


def solve_gamma_opt(
    params: PrivacyParams,
    prior: Prior | None = None,
    *,
    method: str = "auto",
    tol: float | None = None,
    progress: bool | None = None,
    solver_opts: dict | None = None,
    executor=None,
    checkpoint: str | None = None,
    log=None,
    cuts_per_round: int = 256,
    max_rounds: int = 500,
    accept_gap: bool = False,
    lp_backend: str = "highs",
    gap_tol: float = 1e-9,
    stabilize: float | str = "auto",
) -> GammaTable:
    """Certified γ_opt for ``params`` under ``prior`` (default: i.i.d. mean 0.75).

    Args:
        method: "full" (all folded rows, pruned), "cutting-planes" (constraint generation,
            :mod:`darrm.solver.cutting_planes`) or "auto" (by the number of multisets).
        executor: runs the exhaustive sweeps (see :mod:`darrm.backends.executors`).
        checkpoint: constraint generation saves its working set here and resumes from it.
        log: callable receiving one progress line per constraint-generation round.
        cuts_per_round: worst multisets added per constraint-generation round (each with
            its swapped/reflected orientations).
        max_rounds, accept_gap: if constraint generation has not converged after
            ``max_rounds``, the best certified point found is returned anyway when
            ``accept_gap`` (privacy is exact; ``info["optimality_gap"]`` bounds how far its
            expected error is from the optimum), else a SolveError is raised.
        lp_backend: constraint generation's restricted LP, "highs" (incremental highspy
            model, warm-started) or "cvxpy" (rebuilt every round); see :mod:`darrm.solver.restricted_lp`.
        gap_tol: constraint generation also stops once the best certified point is provably
            within this of the optimum (expected-error units).
        stabilize: in-out separation λ in (0, 1] or "auto" (:func:`darrm.solver.cutting_planes.solve_cutting_planes`).

    Raises:
        SolveError: the LP solver failed.
        CertificationError: the solution could not be certified even after repair.
    """
    from ..errors import ParameterError

    prior = IIDPrior() if prior is None else prior
    if method == "auto":
        method = choose_method(params)
    if method not in ("full", "cutting-planes"):
        raise ParameterError("method", f"must be auto, full or cutting-planes, got {method!r}")
    t0 = time.perf_counter()
    c, _ = objective_coefficients(params.K, prior)

    if method == "full":
        from .restricted_lp import CvxpyRestrictedLP, lagrangian_bound

        rows = build_rows(params)
        t1 = time.perf_counter()
        full = CvxpyRestrictedLP(c, params.rhs, solver_opts)
        full.add(rows)
        x, y = full.solve()
        # valid for every y ≥ 0 (pruned rows are implied by the box): a proven lower bound
        info: dict = {"method": "full", "lp_rows": int(rows.shape[0]), "stop": StopReason.FULL_LP.value,
                      "lp_lower_bound": lagrangian_bound(c, rows, params.rhs, y)}
    else:
        from .cutting_planes import solve_cutting_planes

        t1 = time.perf_counter()
        x, status, info = solve_cutting_planes(
            params, c, lp_backend=lp_backend, solver_opts=solver_opts, top=cuts_per_round,
            executor=executor, checkpoint=checkpoint, progress=progress, log=log, max_rounds=max_rounds,
            gap_tol=gap_tol, stabilize=stabilize,
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

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
γ·rhs/max f satisfies every constraint (Lemma 3.4).  If even that fails, or the solver
fails, a :class:`~darrm.errors.SolveError` / :class:`~darrm.errors.CertificationError` is
raised: no uncertified table is ever returned.
"""

from __future__ import annotations

import os
import time

from ..backends.executors import ProcessExecutor, SerialExecutor
from ..errors import CertificationError, SolveError
from ..params import PrivacyParams
from ..prior import IIDPrior, Prior
from ..privacy.certify import certify
from ..privacy.sweep import sweep_executor, sweep_memory
from ..status import StopReason
from ..table import GammaTable
from .cutting_planes import solve_cutting_planes
from .finalize import certified_gamma_opt
from .full_lp import build_rows, choose_method, solve_all_rows
from .objective import objective_coefficients
from .options import SolveOptions
from .restricted_lp import lagrangian_bound


def solve_gamma_opt(
    params: PrivacyParams,
    prior: Prior | None = None,
    *,
    options: SolveOptions | None = None,
    tol: float | None = None,
    progress: bool | None = None,
    solver_opts: dict | None = None,
    executor=None,
    checkpoint: str | os.PathLike[str] | None = None,
    log=None,
) -> GammaTable:
    """Certified γ_opt for ``params`` under ``prior`` (default: i.i.d. mean 0.75).

    Args:
        options: :class:`~darrm.SolveOptions` — method ("full": all folded rows, pruned;
            "cutting-planes": constraint generation, :mod:`darrm.solver.cutting_planes`;
            "auto": by the number of multisets, and constraint generation when the full LP
            fails, as it can at large mε: ``info["fallback"]`` says why), round limit, gap target, accept_gap, cuts
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

    def certified(x, info: dict, t0: float, t1: float) -> GammaTable:
        info.update(seconds_build=t1 - t0, seconds_solve=time.perf_counter() - t1)
        return certified_gamma_opt(
            x, params, prior,
            lambda g: certify(g, params, tol=tol, progress=progress, executor=executor, max_memory=opts.max_memory),
            opts, info, lp_backend=info.get("lp_backend", "cvxpy"),
        )

    fallback: str | None = None
    if method == "full":
        t0 = time.perf_counter()
        c, _ = objective_coefficients(params.K, prior)
        try:
            rows = build_rows(params)
            t1 = time.perf_counter()
            x, y = solve_all_rows(rows, params.rhs, c, solver_opts=solver_opts)
            # valid for every y ≥ 0 (pruned rows are implied by the box): a proven lower bound
            info: dict = {"method": "full", "lp_rows": int(rows.shape[0]), "stop": StopReason.FULL_LP.value,
                          "lp_lower_bound": lagrangian_bound(c, rows, params.rhs, y)}
            return certified(x, info, t0, t1)
        except (SolveError, CertificationError) as exc:
            if opts.method != "auto":
                raise
            # at large mε the full LP's rows hold entries ~e^{mε}: HiGHS may call it unbounded or
            # fail; constraint generation solves the same LP from a few well-chosen rows
            fallback = f"full LP failed ({exc}); constraint generation instead"
            if log:
                log(fallback)
    # up front: as many sweep workers as fit the memory budget (the local executor asked for,
    # if any), or a refusal before any work
    executor = sweep_executor(params, executor, opts.max_memory)
    if log and isinstance(executor, (SerialExecutor, ProcessExecutor)):
        w = getattr(executor, "workers", 1)
        log(f"sweeps: {w} worker(s), about {sweep_memory(params, w) / 2**20:.0f} MiB peak (estimate)")
    t0 = time.perf_counter()
    c, _ = objective_coefficients(params.K, prior)
    t1 = time.perf_counter()
    x, _, info = solve_cutting_planes(  # the stop reason is in info["stop"]
        params, c, opts, solver_opts=solver_opts, executor=executor, checkpoint=checkpoint,
        progress=progress, log=log,
    )
    if fallback is not None:
        info["fallback"] = fallback
    return certified(x, info, t0, t1)

"""γ_opt by constraint generation: keep the LP small, keep the certificate exact (Section 5 at scale).

The LP of :mod:`darrm.solver.gamma_opt` has one row per corner multiset, C(K+7,7) of them (73.6 M at
K = 41).  Almost none bind.  Constraint generation solves the LP on a working set W of
multisets (:mod:`darrm.solver.restricted_lp`, HiGHS), runs the exact sweep of :mod:`darrm.privacy.sweep`
over ALL multisets, adds the most violated ones to W, and repeats.  Each working-set LP is
a relaxation of the full LP, so its duals give a lower bound on the optimum; each sweep's
exact maximum violation turns its point into a certified one by scaling, an upper bound.
The run stops when the LP point violates no multiset by more than ``tol_cp`` or when the
bounds meet to ``gap_tol``; the final γ is repaired and certified exactly as in
:func:`darrm.solver.gamma_opt.solve_gamma_opt`.  Separation happens between the best certified point and
the LP point (in-out stabilisation, :func:`solve_cutting_planes`), which is what makes
K = 1001 (Δ = 0) converge where plain cutting planes oscillate.

Symmetry used (exact, see :mod:`darrm.privacy.corners`): the corner set is closed under the swap
(p, p′)→(p′, p) and the reflection (p, p′)→(1−p, 1−p′).  The sweep reports a multiset v
when ANY of its four inequalities (two outputs × two directions) is violated; in row form
these are the folded rows of v, of its reflection (= −row(v)), of its swap and of the
reflected swap.  All four are added, so one sweep hit cuts off every orientation.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..errors import ParameterError
from ..gamma import symmetric_from_upper
from ..params import PrivacyParams
from ..privacy.certify import repair
from ..privacy.condition import folded_rows
from ..privacy.corners import corners, orientations
from ..privacy.sweep import sweep
from .checkpoint import fingerprint, load_checkpoint, save_checkpoint
from .restricted_lp import lagrangian_bound, make_restricted_lp
from .rows import factored_pmf_pairs
from .status import StopReason


def _unique_rows(a: np.ndarray) -> np.ndarray:
    return np.unique(a, axis=0) if a.shape[0] else a


#: λ of in-out separation once ``stabilize="auto"`` has switched from plain Kelley cuts
AUTO_LAMBDA = 0.5


def solve_cutting_planes(
    params: PrivacyParams,
    c: np.ndarray,
    *,
    lp_backend: str = "highs",
    solver_opts: dict | None = None,
    top: int = 256,
    tol_cp: float = 1e-10,
    gap_tol: float = 1e-9,
    max_rounds: int = 500,
    executor=None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] | None = None,
    tie_break: float = 1e-7,
    stabilize: float | str = "auto",
    purge_after: int = 5,
) -> tuple[np.ndarray, str, dict]:
    """Optimal x = γ(mid..K) by stabilised constraint generation; returns (x, status, info).

    Each round solves the restricted LP (:mod:`darrm.solver.restricted_lp`) for x_out and a lower
    bound LB on the full LP (Lagrangian bound from its duals), then sweeps ALL multisets at
    the separation point x_sep = x_in + λ(x_out − x_in), where x_in is the best feasible
    point so far (in-out separation, Ben-Ameur & Neto 2007).  Because x_in is feasible and
    every constraint is linear, a multiset violated at x_sep is also violated at x_out, so
    every cut found cuts off the LP's point; separating nearer the feasible region finds
    the cuts that matter near the optimum and damps the vertex-hopping of plain Kelley
    cuts.  The sweep's exact maximum violation v at x_sep also yields a feasible point for
    free: x_sep scaled by rhs/(rhs + 2v) (:func:`darrm.solver.gamma_opt.repair`), which becomes
    x_in when it is better, giving an upper bound UB.  After a separation point that turns
    out feasible (no cuts) the next round tries x_out itself (λ = 1).  ``stabilize="auto"``
    uses λ = 1 (plain Kelley cuts, fewest rounds for K ≤ 301) until the LP point's violation
    first rises, then :data:`AUTO_LAMBDA` (K = 1001, Δ = 0: plain cuts oscillate there).

    Stops when (a) x_out itself violates no multiset by more than ``tol_cp`` (classic
    convergence; x_out is returned), or (b) UB − LB ≤ ``gap_tol`` (x_in, feasible and
    within gap_tol of the optimum, is returned).  At ``max_rounds`` the best feasible point
    is returned with ``converged=False`` and its bound (see :func:`darrm.solver.gamma_opt.solve_gamma_opt`'s
    ``accept_gap``).  Every round's bound comes from a warm re-solve with the exact
    objective (no tie-break), so it is as tight as the working set allows.

    Args:
        c: LP costs (see :func:`darrm.solver.gamma_opt.objective_coefficients`).
        lp_backend: "highs" (incremental, warm-started) or "cvxpy" (rebuilt each round).
        top: multisets added per round (each with its 3 other orientations).
        tol_cp: classic stop: no multiset violates at x_out by more than this (probability units).
        gap_tol: stop when the best feasible point is provably within this of the optimum
            (units of the objective, the expected error).
        checkpoint: file to save the working set after every round and resume from.
        tie_break: the LPs minimise c/‖c‖∞ − tie_break·Σx: among (near-)optimal γ prefer
            the larger (less noise).  For large K most c_l underflow to ~0 and the LP is
            degenerate; the tie-break picks the largest γ where the prior gives no weight.
            Bounds and objectives are always evaluated with the exact c.
        stabilize: λ in (0, 1] (1 is plain Kelley cutting planes) or "auto" (see above).
        purge_after: a row slack at x_out for this many consecutive rounds leaves the LP
            (its multiset is found again by the sweep if it ever matters); 0 keeps all.
    """
    auto = stabilize == "auto"
    if auto:
        lam0 = AUTO_LAMBDA
    elif isinstance(stabilize, (int, float)) and 0.0 < float(stabilize) <= 1.0:
        lam0 = float(stabilize)
    else:
        raise ParameterError("stabilize", f"must be 'auto' or lie in (0, 1], got {stabilize!r}")
    if not (np.isfinite(gap_tol) and gap_tol > 0.0):
        raise ParameterError("gap_tol", f"must be finite and > 0, got {gap_tol!r}")
    if int(top) < 1:
        raise ParameterError("cuts_per_round", f"must be >= 1, got {top!r}")
    if int(max_rounds) < 1:
        raise ParameterError("max_rounds", f"must be >= 1, got {max_rounds!r}")
    cs = corners(params.eps, params.Delta)
    C = cs.shape[0]
    e = params.exp_meps
    rhs = params.rhs
    fp = fingerprint(params, c)
    scale = float(np.max(np.abs(c))) or 1.0
    c_lp = c / scale - tie_break
    ckpt = Path(checkpoint) if checkpoint else None
    working = load_checkpoint(ckpt, fp, C) if ckpt else None
    resumed = working is not None
    if working is None:
        working = np.zeros((0, C), dtype=np.int64)
    lp = make_restricted_lp(lp_backend, c_lp, rhs, solver_opts)
    if working.shape[0]:
        lp.add(folded_rows(*factored_pmf_pairs(working, cs), e))
    age = np.zeros(working.shape[0], dtype=np.int64)
    t0 = time.perf_counter()
    sweeps = 0.0
    checked = 0
    x_in: np.ndarray | None = None
    ub, lb = np.inf, -np.inf
    kelley, last_out = True, None
    lam = 1.0 if auto else lam0
    added_total = 0

    def tight_bound() -> tuple[float, np.ndarray]:
        # the same working set with the exact objective (no tie-break): a warm-started
        # re-solve, whose duals give the tightest Lagrangian bound this working set allows;
        # its point is the exact-objective optimum of the working set (used to polish)
        lp.set_objective(c / scale)
        x_exact, y = lp.solve()
        lp.set_objective(c_lp)
        return lagrangian_bound(c, lp.rows, rhs, scale * y), np.clip(x_exact, 0.0, 1.0)

    def finish(rnd: int, x: np.ndarray, converged: bool, reason: StopReason, residual: float | None) -> tuple:
        # lb already holds this round's tight bound: the rows have not changed since
        d = {"method": "cutting-planes", "rounds": rnd, "working_set": int(working.shape[0]),
             "lp_rows": int(lp.rows.shape[0]), "cuts_added": added_total, "multisets": checked,
             "resumed": resumed, "converged": converged, "stop": reason.value, "lp_backend": lp_backend,
             "seconds_sweeps": sweeps, "seconds_total": time.perf_counter() - t0,
             # a valid lower bound on c·x over every feasible x (module restricted_lp)
             "lp_lower_bound": lb}
        if residual is not None and residual > tol_cp:
            d["residual_violation"] = residual
        return x, "optimal", d

    polish = False  # sweep the exact-objective LP point once the LP point is feasible but the gap is open
    polished = False
    for rnd in range(1, max_rounds + 1):
        x_out, _ = lp.solve()
        x_out = np.clip(x_out, 0.0, 1.0)
        bound, x_exact = tight_bound()
        lb = max(lb, bound)
        if polish:
            x_out, polish, polished = x_exact, False, True
        at_out = x_in is None or lam >= 1.0
        x_sep = x_out if at_out else x_in + lam * (x_out - x_in)
        gamma = symmetric_from_upper(x_sep, params.K)
        ts = time.perf_counter()
        res = sweep(gamma, params, top=top, threshold=tol_cp, executor=executor, progress=progress)
        sweeps += time.perf_counter() - ts
        checked = res.checked
        v = res.max_violation
        x_f = repair(x_sep, params, v)[0] if v > 0.0 else x_sep  # certified by this sweep
        if float(c @ x_f) < ub:
            x_in, ub = x_f, float(c @ x_f)
        if log:
            log(f"round {rnd}: {lp.rows.shape[0]} LP rows, λ={1.0 if at_out else lam:.2f}, "
                f"max violation {v:.3e}, gap ≤ {ub - lb:.3e}, sweep {time.perf_counter() - ts:.1f}s")
        if ub - lb <= gap_tol:
            return finish(rnd, x_in, True, StopReason.GAP, None)
        if at_out and v <= tol_cp:
            # the LP point is feasible up to the separation tolerance but its certified
            # (repaired) version is not yet proven within gap_tol: try the working set's
            # exact-objective optimum once (the tie-break can cost more than gap_tol)
            if not polished:
                polish, lam = True, 1.0
                continue
            return finish(rnd, x_in, False, StopReason.NO_VIOLATION, v)
        if v <= tol_cp:
            lam = 1.0  # the separation point is feasible (the new x_in): try the LP point itself next
            continue
        if auto and at_out:
            # plain Kelley cuts while the LP point's violation keeps falling; in-out from the
            # first rise on (the oscillation that stalls plain cutting planes at large K)
            if last_out is not None and v > last_out:
                kelley = False
            last_out = v
        lam = 1.0 if (auto and kelley) else lam0
        new = _unique_rows(orientations(res.candidates))
        if working.shape[0]:
            allc = np.concatenate([working, new])
            _, first = np.unique(allc, axis=0, return_index=True)
            new = allc[np.sort(first[first >= working.shape[0]])]
        if new.shape[0] == 0:
            if not at_out:
                lam = 1.0  # nothing new between x_in and x_out: look at the LP point itself
                continue
            # every multiset violated at x_out is already a row: what is left is the LP
            # solver's feasibility tolerance, which the caller's repair-and-certify removes
            return finish(rnd, x_in, False, StopReason.LP_TOLERANCE, v)
        if rnd == max_rounds:
            return finish(rnd, x_in, False, StopReason.ROUND_LIMIT, v)
        if purge_after > 0 and lp.rows.shape[0]:
            slack = rhs - lp.rows @ x_out
            age = np.where(slack > 1e-9 * max(1.0, rhs), age + 1, 0)
            keep = age < purge_after
            if not np.all(keep):
                lp.keep(keep)
                working, age = working[keep], age[keep]
        lp.add(folded_rows(*factored_pmf_pairs(new, cs), e))
        working = np.concatenate([working, new])
        age = np.concatenate([age, np.zeros(new.shape[0], dtype=np.int64)])
        added_total += new.shape[0]
        if ckpt:
            save_checkpoint(ckpt, fp, working)
    # the last round's separation point was feasible (no cuts) but the gap is still open
    return finish(max_rounds, x_in, False, StopReason.ROUND_LIMIT, None)

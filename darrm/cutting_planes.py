"""γ_opt by constraint generation: keep the LP small, keep the certificate exact (Section 5 at scale).

The LP of :mod:`darrm.lp` has one row per corner multiset, C(K+7,7) of them (73.6 M at
K = 41).  Almost none bind.  Constraint generation solves the LP (cvxpy + HiGHS) on a
working set W of multisets, then runs the exact sweep of :mod:`darrm.sweep` over ALL
multisets for the current γ, adds the most violated ones to W, and repeats until no
multiset violates by more than ``tol_cp``.  Each LP is a relaxation of the full LP (fewer
rows), so its optimum is ≤ the full optimum; at termination the solution is feasible
for the full LP up to ``tol_cp``, hence optimal up to that tolerance.  The final γ is
repaired and certified exactly as in :func:`darrm.lp.solve_gamma_opt`.

Symmetry used (exact, see :mod:`darrm.corners`): the corner set is closed under the swap
(p, p′)→(p′, p) and the reflection (p, p′)→(1−p, 1−p′).  The sweep reports a multiset v
when ANY of its four inequalities (two outputs × two directions) is violated; in row form
these are the folded rows of v, of its reflection (= −row(v)), of its swap and of the
reflected swap.  All four are added, so one sweep hit cuts off every orientation.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from .constraints import folded_rows, pmf_pairs
from .corners import corners
from .errors import ParameterError, SolveError
from .gamma import symmetric_from_upper
from .params import PrivacyParams
from .sweep import sweep

# corner-index permutations (order of darrm.corners.corners)
_SWAP = {8: [0, 1, 3, 2, 5, 4, 7, 6], 4: [0, 1, 3, 2]}
_REFLECT = {8: [1, 0, 5, 4, 3, 2, 7, 6], 4: [1, 0, 3, 2]}


def orientations(counts: np.ndarray) -> np.ndarray:
    """The multisets v, swap(v), reflect(v), reflect(swap(v)) for each row of ``counts``."""
    C = counts.shape[1]
    s, r = np.array(_SWAP[C]), np.array(_REFLECT[C])
    # new count of corner j is the old count of the corner mapped onto j (permutations are involutions)
    return np.concatenate([counts, counts[:, s], counts[:, r], counts[:, s][:, r]])


def _unique_rows(a: np.ndarray) -> np.ndarray:
    return np.unique(a, axis=0) if a.shape[0] else a


def _fingerprint(params: PrivacyParams, c: np.ndarray) -> str:
    blob = json.dumps({"params": params.to_dict(), "c": [float(v) for v in c]}, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _save_checkpoint(path: Path, fp: str, working: np.ndarray) -> None:
    from .atomic import atomic_write_bytes
    import io

    buf = io.BytesIO()
    np.savez(buf, fingerprint=np.array(fp), working=working)
    atomic_write_bytes(path, buf.getvalue())


def _load_checkpoint(path: Path, fp: str, C: int) -> np.ndarray | None:
    if not path.exists():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            if str(z["fingerprint"]) != fp:
                return None
            w = np.asarray(z["working"], dtype=np.int64)
    except (OSError, ValueError, KeyError) as exc:
        raise ParameterError("checkpoint", f"{path}: unreadable checkpoint ({exc}); delete it to start afresh") from None
    if w.ndim != 2 or w.shape[1] != C:
        raise ParameterError("checkpoint", f"{path}: working set has the wrong shape {w.shape}")
    return w


def solve_cutting_planes(
    params: PrivacyParams,
    c: np.ndarray,
    *,
    solve_lp: Callable[[np.ndarray, float, np.ndarray], tuple[np.ndarray, str]],
    top: int = 256,
    tol_cp: float = 1e-10,
    max_rounds: int = 500,
    executor=None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] | None = None,
    tie_break: float = 1e-7,
) -> tuple[np.ndarray, str, dict]:
    """Optimal x = γ(mid..K) by constraint generation; returns (x, status, info).

    Args:
        c: LP costs (see :func:`darrm.lp.objective_coefficients`).
        top: multisets added per round (each with its 3 other orientations).
        tol_cp: stop when no multiset violates by more than this (probability units).
        checkpoint: file to save the working set after every round and resume from.
        max_rounds: after this many rounds return the last iterate with ``converged=False``
            (the caller decides; see :func:`darrm.lp.solve_gamma_opt`'s ``accept_gap``).
        tie_break: the LPs minimise c/‖c‖∞ − tie_break·Σx: among (near-)optimal γ prefer
            the larger (less noise).  For large K most c_l underflow to ~0, the LP is
            degenerate and HiGHS jumps between vertices, so the sweeps' violations oscillate;
            the tie-break makes the iterates stable (K = 301, Δ = 0: 27 → 21 rounds,
            125 → 34 s).  It can cost at most tie_break·n·‖c‖∞ of objective (measured:
            2.5e-14); the objective reported by the caller is the exact one of the final γ.
    """
    cs = corners(params.eps, params.Delta)
    C = cs.shape[0]
    e = params.exp_meps
    fp = _fingerprint(params, c)
    scale = float(np.max(np.abs(c))) or 1.0
    c_lp = c / scale - tie_break
    ckpt = Path(checkpoint) if checkpoint else None
    working = _load_checkpoint(ckpt, fp, C) if ckpt else None
    resumed = working is not None
    if working is None:
        working = np.zeros((0, C), dtype=np.int64)
    rows = folded_rows(*pmf_pairs(working, cs), e) if working.shape[0] else np.zeros((0, c.shape[0]))
    t0 = time.perf_counter()
    sweeps = 0.0
    n = c.shape[0]

    def info(rnd: int, res, converged: bool, x: np.ndarray) -> dict:
        d = {"method": "cutting-planes", "rounds": rnd, "working_set": int(working.shape[0]),
             "lp_rows": int(rows.shape[0]), "multisets": res.checked, "resumed": resumed,
             "converged": converged, "seconds_sweeps": sweeps, "seconds_total": time.perf_counter() - t0,
             # every full-LP point is feasible for the working-set LP, so (tie-break accounted for)
             # c·x − tie_break·‖c‖∞·n is a lower bound on the optimal c·x
             "lp_lower_bound": float(c @ x) - tie_break * scale * n}
        if res.max_violation > tol_cp:
            d["residual_violation"] = res.max_violation
        return d

    for rnd in range(1, max_rounds + 1):
        x, status = solve_lp(rows, params.rhs, c_lp)
        gamma = symmetric_from_upper(np.clip(x, 0.0, 1.0), params.K)
        ts = time.perf_counter()
        res = sweep(gamma, params, top=top, threshold=tol_cp, executor=executor, progress=progress)
        sweeps += time.perf_counter() - ts
        if log:
            log(f"round {rnd}: working set {working.shape[0]} multisets ({rows.shape[0]} rows), "
                f"max violation {res.max_violation:.3e}, sweep {time.perf_counter() - ts:.1f}s")
        if res.max_violation <= tol_cp:
            return x, status, info(rnd, res, True, x)
        new = _unique_rows(orientations(res.candidates))
        if working.shape[0]:
            # drop multisets already in the working set
            allc = np.concatenate([working, new])
            _, first = np.unique(allc, axis=0, return_index=True)
            new = allc[np.sort(first[first >= working.shape[0]])]
        if new.shape[0] == 0:
            # every violated multiset is already a row: what is left is the LP solver's
            # feasibility tolerance, which the caller's repair-and-certify step removes
            return x, status, info(rnd, res, True, x)
        if rnd == max_rounds:
            # not converged: the caller repairs x into a certified (sub-optimal) table and
            # reports the gap to lp_lower_bound, or refuses
            return x, status, info(rnd, res, False, x)
        working = np.concatenate([working, new])
        rows = np.concatenate([rows, folded_rows(*pmf_pairs(new, cs), e)])
        if ckpt:
            _save_checkpoint(ckpt, fp, working)
    raise SolveError("max_rounds must be >= 1")  # pragma: no cover - loop always returns

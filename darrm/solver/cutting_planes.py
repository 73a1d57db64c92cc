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

from ..backends.adapters import as_executor
from ..backends.devices import TorchDevice
from ..gamma import symmetric_from_upper
from ..params import PrivacyParams
from ..privacy.certify import repair
from ..privacy.condition import folded_rows
from ..privacy.corner_pmfs import factored_pmf_pairs
from ..privacy.corners import corners, orientations
from ..privacy.segment import SegmentResult, segment_sweep
from ..privacy.sweep import default_executor, sweep, sweep_work
from ..status import StopReason
from . import pure_rounds
from .checkpoint import fingerprint, load_checkpoint, save_checkpoint
from .options import SolveOptions
from .pure_rounds import highs_options, line_searches, purge_rounds, ramp_lambda, ramps, seed_multisets
from .restricted_lp import ProximalHighsLP, RestrictedLP, lagrangian_bound, make_restricted_lp
from .warm_start import WarmStart


def _unique_rows(a: np.ndarray) -> np.ndarray:
    return np.unique(a, axis=0) if a.shape[0] else a


#: λ of in-out separation once ``stabilize="auto"`` has switched from plain Kelley cuts
AUTO_LAMBDA = 0.5


class Stabilizer:
    """λ of in-out separation (Ben-Ameur & Neto 2007): a fixed λ in (0, 1], or "auto": plain
    Kelley cuts (λ = 1) until the LP point's violation first rises, then :data:`AUTO_LAMBDA`."""

    def __init__(self, stabilize: float | str, ramp: bool = False):
        self.auto = stabilize == "auto"
        self.lam0 = AUTO_LAMBDA if self.auto else float(stabilize)
        self.lam = 1.0 if self.auto else self.lam0
        self.kelley = True
        self.last_out: float | None = None
        self.ramp = ramp

    def separation_point(self, x_in: np.ndarray | None, x_out: np.ndarray) -> tuple[np.ndarray, bool]:
        """(x_sep, whether x_sep is the LP point itself)."""
        if x_in is None or self.lam >= 1.0:
            return x_out, True
        return x_in + self.lam * (x_out - x_in), False

    def look_at_lp_point(self) -> None:
        """Separate at the LP point next (the last separation point gave no new cut)."""
        self.lam = 1.0

    def after_feasible(self) -> None:
        """The separation point was feasible (it is the new x_in): separate at the LP point next,
        or with ``ramp`` (:func:`darrm.solver.pure_rounds.ramp_lambda`) halfway from λ to it."""
        self.lam = ramp_lambda(self.lam) if self.ramp else 1.0

    def after_violation(self, v: float, at_out: bool) -> None:
        """Plain Kelley cuts while the LP point's violation keeps falling; in-out from the first
        rise on (the oscillation that stalls plain cutting planes at large K)."""
        if self.auto and at_out:
            if self.last_out is not None and v > self.last_out:
                self.kelley = False
            self.last_out = v
        self.lam = 1.0 if (self.auto and self.kelley) else self.lam0


class WorkingSet:
    """The multisets whose folded rows are in the restricted LP, how long each has been slack,
    and the checkpoint that lets a run resume (:mod:`darrm.solver.checkpoint`)."""

    def __init__(self, params: PrivacyParams, c: np.ndarray, lp, checkpoint: str | os.PathLike | None):
        self.cs = corners(params.eps, params.member_delta)
        self.e, self.rhs = params.exp_meps, params.rhs
        self.lp = lp
        self.fp = fingerprint(params, c)
        self.path = Path(checkpoint) if checkpoint else None
        loaded = load_checkpoint(self.path, self.fp, self.cs.shape[0], params.K) if self.path else None
        self.resumed = loaded is not None
        self.multisets = loaded if loaded is not None else np.zeros((0, self.cs.shape[0]), dtype=np.int64)
        if self.multisets.shape[0]:
            self.lp.add(self._rows(self.multisets))
        self.age = np.zeros(self.multisets.shape[0], dtype=np.int64)
        self.added = 0
        self.twin: RestrictedLP | None = None  # the exact-objective model (:meth:`attach_twin`)
        self.prox: ProximalHighsLP | None = None  # the proximal model (:meth:`attach_prox`)

    def _followers(self) -> list[RestrictedLP]:
        return [m for m in (self.twin, self.prox) if m is not None]

    def attach_twin(self, twin: RestrictedLP) -> None:
        """Keep ``twin`` (a second restricted LP over the same rows, another objective) in step
        with ``lp`` from now on: it gets the rows ``lp`` holds now, and every later add and purge."""
        twin.add(self.lp.rows)
        self.twin = twin

    def attach_prox(self, prox: ProximalHighsLP) -> None:
        """Keep the proximal model (:class:`darrm.solver.restricted_lp.ProximalHighsLP`) in step with
        ``lp``, like :meth:`attach_twin`."""
        prox.add(self.lp.rows)
        self.prox = prox

    def _rows(self, counts: np.ndarray) -> np.ndarray:
        return folded_rows(*factored_pmf_pairs(counts, self.cs), self.e)

    def new_among(self, candidates: np.ndarray) -> np.ndarray:
        """The candidates' orientations (:func:`darrm.privacy.corners.orientations`) not yet rows."""
        new = _unique_rows(orientations(candidates))
        if self.multisets.shape[0]:
            allc = np.concatenate([self.multisets, new])
            _, first = np.unique(allc, axis=0, return_index=True)
            new = allc[np.sort(first[first >= self.multisets.shape[0]])]
        return new

    def purge(self, x_out: np.ndarray, after: int) -> None:
        """Drop rows slack at x_out for ``after`` consecutive rounds (0 keeps all)."""
        if after <= 0 or not self.lp.rows.shape[0]:
            return
        slack = self.rhs - self.lp.rows @ x_out
        self.age = np.where(slack > 1e-9 * max(1.0, self.rhs), self.age + 1, 0)
        keep = self.age < after
        if not np.all(keep):
            self.lp.keep(keep)
            for m in self._followers():
                m.keep(keep)
            self.multisets, self.age = self.multisets[keep], self.age[keep]

    def violated(self, new: np.ndarray, x: np.ndarray, tol: float) -> bool:
        """Whether any of the multisets ``new`` violates its inequality at ``x`` by more than
        ``tol`` (the folded row: (row·x − rhs)/2 is a violation in probability units)."""
        return bool(new.shape[0]) and bool(np.max(self._rows(new) @ x - self.rhs) > 2.0 * tol)

    def add(self, new: np.ndarray) -> None:
        rows = self._rows(new)
        self.lp.add(rows)
        for m in self._followers():
            m.add(rows)
        self.multisets = np.concatenate([self.multisets, new])
        self.age = np.concatenate([self.age, np.zeros(new.shape[0], dtype=np.int64)])
        self.added += new.shape[0]
        if self.path:
            save_checkpoint(self.path, self.fp, self.multisets)


#: once the exact re-solve's bound could close the gap, it runs when the last one was within
#: TIGHT_NEAR·gap_tol of the upper bound, else every TIGHT_EVERY rounds (each costs a primal
#: re-solve, ~0.3 s at K = 1001; skipping one delays the stop by at most TIGHT_EVERY − 1 rounds)
TIGHT_NEAR = 8.0
TIGHT_EVERY = 4

#: the exact-objective re-solves of the bound (no tie-break) run on a second restricted LP over the
#: same rows that only ever sees the exact objective, so both models stay warm: switching one
#: model's objective back and forth left its basis dual-infeasible for each objective in turn (K = 1001,
#: Δ = 0: each exact re-solve ~2 s and the tie-break re-solve after it 2–5 s, against ~0.2 s
#: warm; benchmarks/RESULTS.md "Issue 27, fifth session").  Costs a second copy of the working set.
#: False: the previous path (one model, objective switched), kept for the same-run comparison
EXACT_TWIN = True

#: once an exact re-solve raised the lower bound by less than TIGHT_SETTLED·gap_tol, the next one
#: waits twice as many rounds (up to TIGHT_EVERY_MAX), also within TIGHT_NEAR·gap_tol of the
#: upper bound: the working set's bound has settled and only the upper bound is left to close
#: (K = 1001, Δ = 0: the exact bound moved < 1e-10 after round 11 of 26, while 6 more exact
#: re-solves cost 2–30 s each).  A re-solve that raised the bound more resets the wait.
TIGHT_SETTLED = 0.125
#: False: the previous rule (every TIGHT_EVERY rounds, each round within TIGHT_NEAR·gap_tol), kept for
#: the benchmark's same-run comparison
TIGHT_BACKOFF = True
TIGHT_EVERY_MAX = 16

#: exhaustive sweeps smaller than this (:func:`darrm.privacy.sweep.sweep_work`; Δ > 0: K < 41) cost
#: less than the LP re-solves a screen round adds, so they are never screened
SCREEN_MIN_WORK = 5 * 10**6

#: at most this many screen rounds in a row: then an exhaustive sweep (new bounds, new blocks)
SCREEN_STREAK = 10

#: a screen that adds fewer LP rows than this (a multiset adds up to 4, its orientations) ends the
#: streak: its blocks are exhausted at the LP point, so the next round sweeps exhaustively (a new
#: upper bound and new blocks) instead of screening the same blocks again; 0 turns the rule off.
#: Measured (benchmarks/bench_screen_streak.py, RESULTS.md "Ending a screening streak early")
SCREEN_MIN_ROWS = 8


def blocks_of(candidates: np.ndarray) -> set:
    """The sweep blocks of candidate multisets: (n_(hi,lo), n_(lo,hi)) pairs with the first ≥ the
    second (Δ > 0, 8 corners), n_(hi,lo) with n_(hi,lo) ≥ n_(lo,hi) (Δ = 0, 4 corners)."""
    if candidates.shape[0] == 0:
        return set()
    if candidates.shape[1] == 8:
        hi, lo = candidates[:, 6], candidates[:, 7]
        return set(zip(np.maximum(hi, lo).tolist(), np.minimum(hi, lo).tolist(), strict=True))
    return set(np.maximum(candidates[:, 2], candidates[:, 3]).tolist())


class SweepOracle:
    """Separation for the shared-member LP, two ways.

    ``exhaustive``: the sweep over every multiset (:func:`darrm.privacy.sweep.sweep`): its
    maximum is rigorous, so it alone gives upper bounds and ends a solve.  ``screen``: the same
    block functions on the blocks next to where the last cuts were found (each block ±1 in each
    coordinate; the binding multisets of γ_opt sit in a few blocks: at K = 61, 14 of 1,891
    (n_(hi,lo), n_(lo,hi)) pairs): cuts it finds are real violations, so they are valid cuts, but
    finding none proves nothing, and the solver then sweeps exhaustively (also after
    :data:`SCREEN_STREAK` screens in a row, or a screen adding fewer than :data:`SCREEN_MIN_ROWS`
    rows: the stop and every bound still come from exhaustive sweeps only).  Δ > 0 only: for pure DP
    (measured at K = 1001, m = 10) the screened cuts stayed local, the LP grew to ~29k rows and the
    gap closed more slowly than with an exhaustive sweep every round, which is cheap there."""

    def __init__(self, params: PrivacyParams, executor=None, progress: bool | None = None):
        self.params, self.executor, self.progress = params, executor, progress
        self.hot: set = set()
        self.exhaustive_sweeps = 0
        self.screens = 0
        self.seconds_exhaustive = 0.0

    def exhaustive(self, x: np.ndarray, top: int, threshold: float):
        self.exhaustive_sweeps += 1
        t = time.perf_counter()
        res = sweep(symmetric_from_upper(x, self.params.K), self.params, top=top, threshold=threshold,
                    executor=self.executor, progress=self.progress)
        self.seconds_exhaustive += time.perf_counter() - t
        self.hot = blocks_of(res.candidates)
        return res

    def segment(self, x_a: np.ndarray, x_b: np.ndarray, top: int, threshold: float, deep: int = 0) -> SegmentResult:
        """The exhaustive sweep of x_a with the line search toward x_b (:mod:`darrm.privacy.segment`;
        Δ = 0): counts as an exhaustive sweep (its maximum is x_a's, bit for bit)."""
        self.exhaustive_sweeps += 1
        t = time.perf_counter()
        K = self.params.K
        ex = self.executor if self.executor is not None else default_executor(self.params)
        res = segment_sweep(symmetric_from_upper(x_a, K), symmetric_from_upper(x_b, K), self.params, top=top,
                            threshold=threshold, executor=ex, deep=deep)
        self.seconds_exhaustive += time.perf_counter() - t
        return res

    def neighbourhood(self) -> set:
        K = self.params.K
        out: set = set()
        for b in self.hot:
            if isinstance(b, tuple):
                c, d = b
                for dc, dd in ((0, 0), (1, 0), (-1, 0), (0, 1), (0, -1)):
                    c2, d2 = c + dc, d + dd
                    if 0 <= d2 and 0 <= c2 and c2 + d2 <= K:
                        out.add((max(c2, d2), min(c2, d2)))
            else:
                out.update(c for c in (b - 1, b, b + 1) if 0 <= c <= K)
        return out

    def screen(self, x: np.ndarray, top: int, threshold: float):
        """Violations in the neighbourhood of the last cuts' blocks, or None when there is none."""
        if (not self.hot or isinstance(self.executor, TorchDevice) or self.params.member_delta == 0
                or sweep_work(self.params) < SCREEN_MIN_WORK):
            return None
        self.screens += 1
        res = sweep(symmetric_from_upper(x, self.params.K), self.params, top=top, threshold=threshold,
                    progress=False, blocks=self.neighbourhood())
        self.hot |= blocks_of(res.candidates)
        return res


def seed_working_set(ws: WorkingSet, oracle: SweepOracle, warm: WarmStart | None, K: int,
                     log: Callable[[str], None] | None) -> int:
    """Add a warm start's multisets (adapted to K and this problem's corners, with their
    orientations) to the working set and make their blocks the first ones screened; returns the
    rows added.  Valid for any multisets (:mod:`darrm.solver.warm_start`)."""
    if warm is None:
        return 0
    seed = ws.new_among(warm.for_problem(K, ws.cs.shape[0]))
    if seed.shape[0]:
        ws.add(seed)
        oracle.hot |= blocks_of(seed)
    if log:
        log(f"warm start ({warm.source}): {seed.shape[0]} rows, {len(blocks_of(seed))} blocks")
    return int(seed.shape[0])


def solve_cutting_planes(
    params: PrivacyParams,
    c: np.ndarray,
    options: SolveOptions,
    *,
    solver_opts: dict | None = None,
    tol_cp: float = 1e-10,
    executor=None,
    checkpoint: str | os.PathLike | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] | None = None,
    tie_break: float = 1e-7,
    purge_after: int | None = None,
    oracle: SweepOracle | None = None,
) -> tuple[np.ndarray, StopReason, dict]:
    """Near-optimal x = γ(mid..K) by stabilised constraint generation; returns (x, stop, info).

    ``stop`` is why the loop ended (a :class:`~darrm.status.StopReason`; ``info["stop"]`` is its
    value): the round limit included.  Whether x is proven optimal is decided later, from the
    certified table's gap (:func:`darrm.solver.finalize.certified_gamma_opt`), never here.

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
    first rises, then :data:`AUTO_LAMBDA` (K = 1001, Δ = 0: plain cuts oscillate there).  For
    Δ = 0 the working set starts from the two-corner family
    (:func:`darrm.solver.pure_rounds.seed_multisets`: rows of the full LP, so every bound keeps its
    meaning) and after a feasible separation point λ moves halfway to 1
    (:func:`darrm.solver.pure_rounds.ramp_lambda`) instead of jumping to the LP point; once in-out
    separation has started, each round is a segment sweep (:mod:`darrm.privacy.segment`) from the last
    certified proposal toward a target: the proximal point of the working set anchored there
    (:class:`darrm.solver.restricted_lp.ProximalHighsLP`, μ shrinking), then, once μ is below
    :data:`darrm.solver.pure_rounds.PROX_MU_MIN`, the exact-objective LP point (module pure_rounds).

    Stops when (a) x_out itself violates no multiset by more than ``tol_cp`` (classic
    convergence; x_out is returned), or (b) UB − LB ≤ ``gap_tol`` (x_in, feasible and
    within gap_tol of the optimum, is returned).  At ``max_rounds`` the best feasible point
    is returned with ``converged=False`` and its bound (see :func:`darrm.solver.gamma_opt.solve_gamma_opt`'s
    ``accept_gap``).  Each round's lower bound comes from the LP's own duals (valid for any
    y ≥ 0, at most tie_break·scale·Σx below the working set's optimum); once that difference
    could close the gap, a warm re-solve with the exact objective (no tie-break) gives the
    tightest bound the working set allows (every :data:`TIGHT_EVERY` rounds, or each round once
    within :data:`TIGHT_NEAR`·gap_tol), and every stop reports that tight bound.

    Args:
        c: LP costs (see :func:`darrm.solver.objective.objective_coefficients`).
        options: :class:`~darrm.SolveOptions`: ``lp_backend`` ("highs" incremental and
            warm-started, or "cvxpy" rebuilt each round), ``cuts_per_round`` (multisets added per
            round, each with its 3 other orientations), ``gap_tol`` (stop when the best feasible
            point is provably within this of the optimum, expected-error units), ``stabilize``
            (λ in (0, 1], 1 is plain Kelley cutting planes, or "auto", see above), the round limit.
        tol_cp: classic stop: no multiset violates at x_out by more than this (probability units).
        checkpoint: file to save the working set after every round and resume from.
        tie_break: the LPs minimise c/‖c‖∞ − tie_break·Σx: among (near-)optimal γ prefer
            the larger (less noise).  For large K most c_l underflow to ~0 and the LP is
            degenerate; the tie-break picks the largest γ where the prior gives no weight.
            Bounds and objectives are always evaluated with the exact c.
        purge_after: a row slack at x_out for this many consecutive rounds leaves the LP
            (its multiset is found again by the sweep if it ever matters); 0 keeps all; None:
            :func:`darrm.solver.pure_rounds.purge_rounds` (5, or 0 for Δ = 0).
    """
    # options were validated once, by SolveOptions
    gap_tol, top = options.gap_tol, options.cuts_per_round
    max_rounds, lp_backend = options.rounds("shared"), options.lp_backend
    rhs = params.rhs
    scale = float(np.max(np.abs(c))) or 1.0
    c_lp = c / scale - tie_break
    lp_defaults = highs_options(params)  # Δ = 0: HiGHS's scaling (pure_rounds); a retry may drop it
    ws = WorkingSet(params, c, make_restricted_lp(lp_backend, c_lp, rhs, solver_opts, lp_defaults), checkpoint)
    seed = ws.new_among(seed_multisets(params))  # Δ = 0: the two-corner family (module pure_rounds)
    if seed.shape[0]:
        ws.add(seed)
    lp = ws.lp
    stab = Stabilizer(options.stabilize, ramp=ramps(params))
    oracle = SweepOracle(params, executor, progress) if oracle is None else oracle
    warm_rows = seed_working_set(ws, oracle, options.warm_start, params.K, log)
    t0 = time.perf_counter()
    sweeps = 0.0
    checked = 0
    x_in: np.ndarray | None = None
    ub, lb = np.inf, -np.inf

    def tight_bound() -> tuple[float, np.ndarray]:
        # the same working set with the exact objective (no tie-break): a warm-started
        # re-solve, whose duals give the tightest Lagrangian bound this working set allows;
        # its point is the exact-objective optimum of the working set (used to polish).
        # EXACT_TWIN: on a second model that only ever sees this objective (dual simplex stays warm)
        if EXACT_TWIN:
            twin = ws.twin
            if twin is None:
                twin = make_restricted_lp(lp_backend, c / scale, rhs, solver_opts, lp_defaults)
                ws.attach_twin(twin)
            x_exact, y = twin.solve()
            return lagrangian_bound(c, twin.rows, rhs, scale * y), np.clip(x_exact, 0.0, 1.0)
        lp.set_objective(c / scale)
        x_exact, y = lp.solve()
        lp.set_objective(c_lp)
        return lagrangian_bound(c, lp.rows, rhs, scale * y), np.clip(x_exact, 0.0, 1.0)

    def take_certified(x: np.ndarray, v: float) -> None:
        # x was swept exhaustively with rigorous maximum v: x itself (v ≤ 0) or its repair by
        # scaling (darrm.privacy.certify.repair) is certified by that sweep; keep the better UB
        nonlocal x_in, ub
        x_f = repair(x, params, v)[0] if v > 0.0 else x
        if float(c @ x_f) < ub:
            x_in, ub = x_f, float(c @ x_f)

    def finish(rnd: int, x: np.ndarray | None, converged: bool, reason: StopReason, residual: float | None) -> tuple:
        nonlocal lb
        # every stop follows an exhaustive sweep, which sets x_in (the first round always sweeps)
        assert x is not None, "constraint generation stopped before any exhaustive sweep"
        if not tight_now:  # the rows have not changed since this round's solve
            lb = max(lb, tight_bound()[0])
        d = {"method": "cutting-planes", "rounds": rnd, "working_set": int(ws.multisets.shape[0]),
             "lp_rows": int(lp.rows.shape[0]), "cuts_added": ws.added, "multisets": checked,
             "resumed": ws.resumed, "converged": converged, "stop": reason.value, "lp_backend": lp_backend,
             "exhaustive_sweeps": oracle.exhaustive_sweeps, "screens": oracle.screens,
             "line_search_rounds": ls_rounds,
             "seconds_exhaustive_sweeps": oracle.seconds_exhaustive,
             "seconds_sweeps": sweeps, "seconds_total": time.perf_counter() - t0,
             # a valid lower bound on c·x over every feasible x (module restricted_lp)
             "lp_lower_bound": lb}
        if options.warm_start is not None:
            d["warm_start"] = {"source": options.warm_start.source, "rows": warm_rows}
        if residual is not None and residual > tol_cp:
            d["residual_violation"] = residual
        return x, reason, d

    # line search (Δ = 0, module pure_rounds): the proposal the next segment sweep certifies
    line_search = line_searches(params) and not isinstance(as_executor(executor), TorchDevice)
    pending: np.ndarray | None = None
    look_out = False  # the last segment sweep found nothing new: one round at the LP point
    # the proximal weight μ of the line search's target (None: the tie-break LP point; module pure_rounds)
    prox_mu = pure_rounds.prox_mu0(params) if line_search and lp_backend == "highs" else None
    prox_exhausted = False  # the proximal stage is over: the line search aims at the exact-objective LP point
    idle = pure_rounds.idle_coordinates(c, gap_tol)  # held at PROX_MU_IDLE by the proximal term
    ls_rounds = 0
    streak = 0  # screen rounds since the last exhaustive sweep
    polish = False  # sweep the exact-objective LP point once the LP point is feasible but the gap is open
    polished = False
    # the tie-break LP's own duals y give a bound L(scale·y) ≥ LP* − tie_break·scale·Σx_tb (by its
    # duality: Σ min(0, r + tie_break) ≥ Σ min(0, r) for the reduced costs r), and the exact
    # re-solve's bound is ≤ LP*: the re-solve runs only when that difference could close the gap
    # (factor 2: room for the solver's tolerances)
    tight_now = False
    x_exact = None
    lb_tight, tight_round = -np.inf, 0
    tight_wait, settled = TIGHT_EVERY, False
    for rnd in range(1, max_rounds + 1):
        ls_round = line_search and x_in is not None and not (stab.auto and stab.kelley) and not look_out
        use_prox = ls_round and prox_mu is not None
        # after the proximal stage (its μ exhausted): aim at the exact-objective LP point (module pure_rounds)
        exact_target = ls_round and prox_exhausted
        x_a: np.ndarray | None = None
        if ls_round:
            # x_a: the last proposal (certified now, by this round's sweep) or the best certified point
            x_a = pending if pending is not None and float(c @ pending) < ub else x_in
        if use_prox:
            # the target of the line search: the proximal point anchored at x_a (module pure_rounds)
            assert x_a is not None and prox_mu is not None
            mu = pure_rounds.prox_weights(idle, prox_mu)
            if ws.prox is None:
                ws.attach_prox(ProximalHighsLP(c / scale, rhs, x_a, mu, solver_opts, lp_defaults))
            else:
                ws.prox.set_anchor(x_a, mu)
            assert ws.prox is not None
            x_out, y_p = ws.prox.solve()
            x_out = np.clip(x_out, 0.0, 1.0)
            lb = max(lb, lagrangian_bound(c, ws.prox.rows, rhs, scale * y_p))
        elif exact_target:
            bound, x_out = tight_bound()
            lb, lb_tight, tight_round = max(lb, bound), bound, rnd
        else:
            x_out, y_tb = lp.solve()
            x_out = np.clip(x_out, 0.0, 1.0)
            lb = max(lb, lagrangian_bound(c, lp.rows, rhs, scale * y_tb))
        near = ub - lb_tight <= TIGHT_NEAR * gap_tol and not settled
        tight_now = exact_target or polish or (ub - lb <= gap_tol + 2.0 * tie_break * scale * float(np.sum(x_out))
                                               and (near or rnd - tight_round >= tight_wait))
        if tight_now and not exact_target:
            bound, x_exact = tight_bound()
            if TIGHT_BACKOFF:
                settled = bound - lb < TIGHT_SETTLED * gap_tol
                tight_wait = min(2 * tight_wait, TIGHT_EVERY_MAX) if settled else TIGHT_EVERY
            lb, lb_tight, tight_round = max(lb, bound), bound, rnd
        if polish and x_exact is not None:
            x_out, polish, polished = x_exact, False, True
        if ls_round:
            assert x_a is not None
            ts = time.perf_counter()
            deep = pure_rounds.PROX_DEEP if use_prox or exact_target else pure_rounds.LINE_SEARCH_DEEP
            seg = oracle.segment(x_a, x_out, top, tol_cp, int(round(deep * top)))
            sweeps += time.perf_counter() - ts
            checked, v, ls_rounds = seg.checked, seg.max_violation, ls_rounds + 1
            take_certified(x_a, v)
            predicted = float(c @ (x_a - x_out))  # what the target would gain over x_a
            if use_prox and predicted < pure_rounds.PROX_STALL * (ub - lb):
                # the proximal point asks too little of the gap: a smaller μ lets it move further
                prox_mu = pure_rounds.next_prox_mu(prox_mu)
                prox_exhausted = prox_mu is None
            if log:
                target = (f"the proximal point (μ {ws.prox.mu.min():.0e})" if use_prox and ws.prox
                          else "the exact-objective LP point" if exact_target else "the LP point")
                log(f"round {rnd}: {lp.rows.shape[0]} LP rows, line search: max violation {v:.3e} at the "
                    f"proposal, step {seg.step:.4f} toward {target} (violated there by {seg.violation_b:.3e}), "
                    f"gap ≤ {ub - lb:.3e} (UB {ub:.9e}, LB {lb:.9e}), sweep {time.perf_counter() - ts:.1f}s")
            if ub - lb <= gap_tol:
                return finish(rnd, x_in, True, StopReason.GAP, None)
            # the step holds for x_a itself only: after a repair the next round starts from x_in
            pending = None
            if v <= 0.0 and seg.step > 0.0:
                pending = x_a + pure_rounds.LINE_SEARCH_SHORT * seg.step * (x_out - x_a)
            cuts = ws.new_among(seg.candidates)
            if cuts.shape[0] == 0:
                if (use_prox or exact_target) and v <= 0.0 and seg.step >= pure_rounds.PROX_FREE_STEP:
                    # x_a held and the target is (nearly) feasible: the next round certifies the proposal
                    # there and aims again (a proposal found outside falls through to a round at the LP point)
                    continue
                # nothing new blocks the segment (the LP point is feasible, or only rows already in
                # the LP block it): one round of the usual path at the LP point decides
                look_out = True
                stab.look_at_lp_point()
                continue
            if rnd == max_rounds:
                return finish(rnd, x_in, False, StopReason.ROUND_LIMIT, seg.violation_b)
            ws.purge(x_out, purge_rounds(params) if purge_after is None else purge_after)
            ws.add(cuts)
            continue
        look_out = False
        x_sep, at_out = stab.separation_point(x_in, x_out)
        ts = time.perf_counter()
        if options.screen and rnd < max_rounds and streak < SCREEN_STREAK:
            scr = oracle.screen(x_sep, top, tol_cp)
            new = ws.new_among(scr.candidates) if scr is not None and scr.max_violation > tol_cp else None
            # the loop checks the screen's cuts itself: only a multiset really violated at x_sep
            # counts; otherwise (or after SCREEN_STREAK screens) it sweeps exhaustively
            if new is not None and ws.violated(new, x_sep, tol_cp):
                # a screen that found almost nothing new ends the streak (SCREEN_MIN_ROWS)
                streak = streak + 1 if new.shape[0] >= SCREEN_MIN_ROWS else SCREEN_STREAK
                sweeps += time.perf_counter() - ts
                if log:
                    log(f"round {rnd}: {lp.rows.shape[0]} LP rows, screened {scr.checked:.3g} multisets near the "
                        f"last cuts: violation {scr.max_violation:.3e}, {new.shape[0]} cuts, LB {lb:.6e}")
                ws.add(new)  # no purge here: a row's slack age counts exhaustive rounds only
                continue
        streak = 0
        res = oracle.exhaustive(x_sep, top, tol_cp)
        sweeps += time.perf_counter() - ts
        checked = res.checked
        v = res.max_violation
        take_certified(x_sep, v)
        if log:
            log(f"round {rnd}: {lp.rows.shape[0]} LP rows, λ={1.0 if at_out else stab.lam:.2f}, "
                f"max violation {v:.3e}, gap ≤ {ub - lb:.3e} (UB {ub:.9e}, LB {lb:.9e}), "
                f"sweep {time.perf_counter() - ts:.1f}s")
        if ub - lb <= gap_tol:
            return finish(rnd, x_in, True, StopReason.GAP, None)
        if at_out and v <= tol_cp:
            # the LP point is feasible up to the separation tolerance but its certified
            # (repaired) version is not yet proven within gap_tol: try the working set's
            # exact-objective optimum once (the tie-break can cost more than gap_tol)
            if not polished:
                polish = True
                stab.look_at_lp_point()
                continue
            return finish(rnd, x_in, False, StopReason.NO_VIOLATION, v)
        if v <= tol_cp:
            stab.after_feasible()  # the separation point is feasible (the new x_in)
            continue
        stab.after_violation(v, at_out)
        new = ws.new_among(res.candidates)
        if new.shape[0] == 0:
            if not at_out:
                stab.look_at_lp_point()  # nothing new between x_in and x_out
                continue
            # every multiset violated at x_out is already a row: what is left is the LP
            # solver's feasibility tolerance, which the caller's repair-and-certify removes
            return finish(rnd, x_in, False, StopReason.LP_TOLERANCE, v)
        if rnd == max_rounds:
            return finish(rnd, x_in, False, StopReason.ROUND_LIMIT, v)
        ws.purge(x_out, purge_rounds(params) if purge_after is None else purge_after)
        ws.add(new)
    # the last round's separation point was feasible (no cuts) but the gap is still open
    return finish(max_rounds, x_in, False, StopReason.ROUND_LIMIT, None)

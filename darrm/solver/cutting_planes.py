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
from ..privacy.condition import folded_rows
from ..privacy.corner_pmfs import factored_pmf_pairs
from ..privacy.corners import corners, orientations
from ..privacy.segment import SegmentResult, segment_sweep
from ..privacy.sweep import default_executor, sweep, sweep_work
from ..status import StopReason
from .checkpoint import fingerprint, load_checkpoint, save_checkpoint
from .engine import Incumbent, Stabilizer, run_rounds
from .options import SolveOptions
from .pure_rounds import RoundPolicy, idle_coordinates, next_prox_mu, prox_weights
from .restricted_lp import ProximalHighsLP, RestrictedLP, lagrangian_bound, make_restricted_lp
from .schedule import MAX_ROUNDS, Schedule
from .warm_start import WarmStart


def _unique_rows(a: np.ndarray) -> np.ndarray:
    return np.unique(a, axis=0) if a.shape[0] else a


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
    ``screen_streak`` screens in a row, or a screen adding fewer than ``screen_min_rows`` rows,
    :class:`darrm.solver.schedule.Schedule`: the stop and every bound still come from exhaustive
    sweeps only).  Sweeps cheaper than ``screen_min_work`` are never screened.  Δ > 0 only: for pure DP
    (measured at K = 1001, m = 10) the screened cuts stayed local, the LP grew to ~29k rows and the
    gap closed more slowly than with an exhaustive sweep every round, which is cheap there."""

    def __init__(self, params: PrivacyParams, executor=None, progress: bool | None = None,
                 screen_min_work: int = Schedule.screen_min_work):
        self.params, self.executor, self.progress = params, executor, progress
        self.screen_min_work = screen_min_work
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
                or sweep_work(self.params) < self.screen_min_work):
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


class TightBound:
    """When the exact-objective re-solve of the working set runs (the tightest Lagrangian bound the
    working set allows; each a warm primal re-solve).

    The tie-break LP's own duals give a bound at most tie_break·scale·Σx below the working set's
    optimum (by its duality: Σ min(0, r + tie_break) ≥ Σ min(0, r) for the reduced costs r), so the
    re-solve runs only once that difference could close the gap (factor 2: room for the solver's
    tolerances), and then within ``tight_near``·gap_tol of the upper bound every round, else every
    ``tight_every`` rounds; a re-solve that raised the bound by less than ``tight_settled``·gap_tol
    doubles the wait (to ``tight_every_max``), also within reach: only the upper bound is left to
    close (K = 1001, Δ = 0: the exact bound moved < 1e-10 after round 11 of 26, while 6 more exact
    re-solves cost 2–30 s each)."""

    def __init__(self, schedule: Schedule, gap_tol: float):
        self.s, self.gap_tol = schedule, gap_tol
        self.lb, self.round = -np.inf, 0
        self.wait, self.settled = schedule.tight_every, False

    def due(self, rnd: int, ub: float, lb: float, slack: float) -> bool:
        """Whether this round re-solves: the gap could close (``slack``: the tie-break's share) and
        the schedule says so."""
        near = ub - self.lb <= self.s.tight_near * self.gap_tol and not self.settled
        return ub - lb <= self.gap_tol + slack and (near or rnd - self.round >= self.wait)

    def record(self, bound: float, lb: float, rnd: int, backoff: bool) -> float:
        """Note a re-solve's bound (``backoff``: update the wait); returns the new lower bound."""
        if backoff:
            self.settled = bound - lb < self.s.tight_settled * self.gap_tol
            self.wait = min(2 * self.wait, self.s.tight_every_max) if self.settled else self.s.tight_every
        self.lb, self.round = bound, rnd
        return max(lb, bound)


class LineSearch:
    """The pure-DP line search's state (:class:`darrm.solver.pure_rounds.RoundPolicy`): the pending
    proposal, the proximal weight μ (None: the tie-break LP point is the target) and whether the
    proximal stage is over (then the exact-objective LP point is the target)."""

    def __init__(self, policy: RoundPolicy, schedule: Schedule, c: np.ndarray, gap_tol: float):
        self.on, self.s = policy.line_search, schedule
        self.pending: np.ndarray | None = None
        self.look_out = False  # the last segment sweep found nothing new: one round at the LP point
        self.mu = policy.prox_mu0
        self.exhausted = False
        self.idle = idle_coordinates(c, gap_tol, schedule.prox_idle_share)
        self.rounds = 0

    def this_round(self, stab: Stabilizer, x_in: np.ndarray | None) -> bool:
        """Whether this round is a line-search round (in-out separation has started)."""
        return self.on and x_in is not None and not (stab.auto and stab.kelley) and not self.look_out

    def anchor(self, c: np.ndarray, ub: float, x_in: np.ndarray) -> np.ndarray:
        """x_a: the last proposal (certified now, by this round's sweep) or the best certified point."""
        return self.pending if self.pending is not None and float(c @ self.pending) < ub else x_in

    def weights(self) -> np.ndarray:
        assert self.mu is not None
        return prox_weights(self.idle, self.mu, self.s.prox_mu0)

    def after_segment(self, use_prox: bool, predicted: float, gap: float) -> None:
        """The proximal point asked too little of the gap: a smaller μ lets it move further."""
        if use_prox and predicted < self.s.prox_stall * gap:
            self.mu = next_prox_mu(self.mu, self.s)
            self.exhausted = self.mu is None

    def propose(self, x_a: np.ndarray, x_out: np.ndarray, v: float, step: float) -> None:
        """The next proposal (the step holds for x_a itself only: after a repair, none)."""
        self.pending = None
        if v <= 0.0 and step > 0.0:
            self.pending = x_a + self.s.line_search_short * step * (x_out - x_a)


class _Run:
    """One run of :func:`solve_cutting_planes` (a :class:`darrm.solver.engine.Rounds`, driven by
    :func:`darrm.solver.engine.run_rounds`): the working set, the bounds and the named strategies
    (:class:`~darrm.solver.engine.Stabilizer`, :class:`TightBound`, :class:`LineSearch`, the oracle's
    screening, :class:`darrm.solver.pure_rounds.RoundPolicy`)."""

    def __init__(self, params: PrivacyParams, c: np.ndarray, options: SolveOptions, schedule: Schedule, *,
                 solver_opts, tol_cp, executor, checkpoint, progress, log, tie_break, purge_after, oracle):
        self.params, self.c, self.options, self.s = params, c, options, schedule
        self.gap_tol, self.top = options.gap_tol, options.cuts_per_round
        self.max_rounds, self.lp_backend = options.rounds(MAX_ROUNDS), options.lp_backend
        self.tol_cp, self.log, self.tie_break, self.solver_opts = tol_cp, log, tie_break, solver_opts
        self.rhs = params.rhs
        self.scale = float(np.max(np.abs(c))) or 1.0
        self.c_lp = c / self.scale - tie_break
        torch = isinstance(as_executor(executor), TorchDevice)
        self.policy = RoundPolicy.of(params, schedule, line_search=not torch, prox=self.lp_backend == "highs")
        self.lp_defaults = self.policy.highs  # Δ = 0: HiGHS's scaling (pure_rounds); a retry may drop it
        self.ws = WorkingSet(params, c, make_restricted_lp(self.lp_backend, self.c_lp, self.rhs, solver_opts,
                                                           self.lp_defaults), checkpoint)
        seed = self.ws.new_among(self.policy.seed)  # Δ = 0: the two-corner family (module pure_rounds)
        if seed.shape[0]:
            self.ws.add(seed)
        self.lp = self.ws.lp
        self.stab = Stabilizer(options.stabilize, schedule.ramp_floor if self.policy.ramp else None,
                               schedule.auto_lambda)
        self.oracle = SweepOracle(params, executor, progress, schedule.screen_min_work) if oracle is None else oracle
        self.warm_rows = seed_working_set(self.ws, self.oracle, options.warm_start, params.K, log)
        self.purge_after = self.policy.purge_after if purge_after is None else purge_after
        self.t0 = time.perf_counter()
        self.sweeps, self.checked = 0.0, 0
        self.best = Incumbent(params, c)  # x_in, the best certified point, and UB
        self.lb = -np.inf
        self.tight = TightBound(schedule, self.gap_tol)
        self.ls = LineSearch(self.policy, schedule, c, self.gap_tol)
        self.streak = 0  # screen rounds since the last exhaustive sweep
        self.polish = False  # sweep the exact-objective LP point once the LP point is feasible, gap open
        self.polished = False
        self.tight_now = False
        self.x_exact: np.ndarray | None = None

    def tight_bound(self) -> tuple[float, np.ndarray]:
        """The same working set with the exact objective (no tie-break), on a second model that only
        ever sees this objective, so that both stay warm (switching one model's objective back and
        forth left its basis dual-infeasible for each objective in turn: K = 1001, Δ = 0, each exact
        re-solve ~2 s and the tie-break re-solve after it 2–5 s, against ~0.2 s warm).  Its duals give
        the tightest Lagrangian bound this working set allows; its point is the exact-objective
        optimum of the working set (used to polish)."""
        twin = self.ws.twin
        if twin is None:
            twin = make_restricted_lp(self.lp_backend, self.c / self.scale, self.rhs, self.solver_opts,
                                      self.lp_defaults)
            self.ws.attach_twin(twin)
        x_exact, y = twin.solve()
        return lagrangian_bound(self.c, twin.rows, self.rhs, self.scale * y), np.clip(x_exact, 0.0, 1.0)

    def take_certified(self, x: np.ndarray, v: float) -> None:
        """x was swept exhaustively with rigorous maximum v: x itself (v ≤ 0) or its repair by
        scaling is certified by that sweep (:meth:`darrm.solver.engine.Incumbent.offer`); keep the better UB."""
        self.best.offer(x, v)

    @property
    def x_in(self) -> np.ndarray | None:
        """The best certified point (in-out separation's inner point)."""
        return self.best.x

    @property
    def ub(self) -> float:
        """c·x_in, the upper bound."""
        return self.best.ub

    def finish(self, rnd: int, converged: bool, reason: StopReason, residual: float | None) -> tuple:
        x = self.x_in
        # every stop follows an exhaustive sweep, which sets x_in (the first round always sweeps)
        assert x is not None, "constraint generation stopped before any exhaustive sweep"
        if not self.tight_now:  # the rows have not changed since this round's solve
            self.lb = max(self.lb, self.tight_bound()[0])
        o = self.oracle
        d = {"method": "cutting-planes", "rounds": rnd, "working_set": int(self.ws.multisets.shape[0]),
             "lp_rows": int(self.lp.rows.shape[0]), "cuts_added": self.ws.added, "multisets": self.checked,
             "resumed": self.ws.resumed, "converged": converged, "stop": reason.value, "lp_backend": self.lp_backend,
             "exhaustive_sweeps": o.exhaustive_sweeps, "screens": o.screens, "line_search_rounds": self.ls.rounds,
             "seconds_exhaustive_sweeps": o.seconds_exhaustive,
             "seconds_sweeps": self.sweeps, "seconds_total": time.perf_counter() - self.t0,
             # a valid lower bound on c·x over every feasible x (module restricted_lp)
             "lp_lower_bound": self.lb}
        if self.options.warm_start is not None:
            d["warm_start"] = {"source": self.options.warm_start.source, "rows": self.warm_rows}
        if residual is not None and residual > self.tol_cp:
            d["residual_violation"] = residual
        return x, reason, d

    def at_limit(self) -> tuple:
        """The last round's separation point was feasible (no cuts) but the gap is still open."""
        return self.finish(self.max_rounds, False, StopReason.ROUND_LIMIT, None)

    def lp_point(self, rnd: int, use_prox: bool, exact_target: bool, x_a: np.ndarray | None) -> np.ndarray:
        """This round's LP point x_out (the target of a line search, else the point to separate),
        with the lower bound its duals give, and the exact-objective re-solve when it is due."""
        c, scale, rhs = self.c, self.scale, self.rhs
        if use_prox:
            # the target of the line search: the proximal point anchored at x_a (module pure_rounds)
            assert x_a is not None
            mu = self.ls.weights()
            if self.ws.prox is None:
                self.ws.attach_prox(ProximalHighsLP(c / scale, rhs, x_a, mu, self.solver_opts, self.lp_defaults))
            else:
                self.ws.prox.set_anchor(x_a, mu)
            assert self.ws.prox is not None
            x_out, y_p = self.ws.prox.solve()
            x_out = np.clip(x_out, 0.0, 1.0)
            self.lb = max(self.lb, lagrangian_bound(c, self.ws.prox.rows, rhs, scale * y_p))
        elif exact_target:
            bound, x_out = self.tight_bound()
            self.lb = self.tight.record(bound, self.lb, rnd, backoff=False)
        else:
            x_out, y_tb = self.lp.solve()
            x_out = np.clip(x_out, 0.0, 1.0)
            self.lb = max(self.lb, lagrangian_bound(c, self.lp.rows, rhs, scale * y_tb))
        slack = 2.0 * self.tie_break * scale * float(np.sum(x_out))
        self.tight_now = exact_target or self.polish or self.tight.due(rnd, self.ub, self.lb, slack)
        if self.tight_now and not exact_target:
            bound, self.x_exact = self.tight_bound()
            self.lb = self.tight.record(bound, self.lb, rnd, backoff=True)
        if self.polish and self.x_exact is not None:
            x_out, self.polish, self.polished = self.x_exact, False, True
        return x_out

    def line_search_round(self, rnd: int, x_a: np.ndarray, x_out: np.ndarray, use_prox: bool,
                          exact_target: bool) -> tuple | None:
        """One segment sweep from x_a toward x_out (module pure_rounds); a stop's result, or None."""
        ls, s = self.ls, self.s
        ts = time.perf_counter()
        deep = s.prox_deep if use_prox or exact_target else s.line_search_deep
        seg = self.oracle.segment(x_a, x_out, self.top, self.tol_cp, int(round(deep * self.top)))
        self.sweeps += time.perf_counter() - ts
        self.checked, v, ls.rounds = seg.checked, seg.max_violation, ls.rounds + 1
        self.take_certified(x_a, v)
        ls.after_segment(use_prox, float(self.c @ (x_a - x_out)), self.ub - self.lb)
        if self.log:
            target = (f"the proximal point (μ {self.ws.prox.mu.min():.0e})" if use_prox and self.ws.prox
                      else "the exact-objective LP point" if exact_target else "the LP point")
            self.log(f"round {rnd}: {self.lp.rows.shape[0]} LP rows, line search: max violation {v:.3e} at the "
                     f"proposal, step {seg.step:.4f} toward {target} (violated there by {seg.violation_b:.3e}), "
                     f"gap ≤ {self.ub - self.lb:.3e} (UB {self.ub:.9e}, LB {self.lb:.9e}), "
                     f"sweep {time.perf_counter() - ts:.1f}s")
        if self.ub - self.lb <= self.gap_tol:
            return self.finish(rnd, True, StopReason.GAP, None)
        ls.propose(x_a, x_out, v, seg.step)
        cuts = self.ws.new_among(seg.candidates)
        if cuts.shape[0] == 0:
            if (use_prox or exact_target) and v <= 0.0 and seg.step >= s.prox_free_step:
                # x_a held and the target is (nearly) feasible: the next round certifies the proposal
                # there and aims again (a proposal found outside falls through to a round at the LP point)
                return None
            # nothing new blocks the segment (the LP point is feasible, or only rows already in
            # the LP block it): one round of the usual path at the LP point decides
            ls.look_out = True
            self.stab.look_at_lp_point()
            return None
        if rnd == self.max_rounds:
            return self.finish(rnd, False, StopReason.ROUND_LIMIT, seg.violation_b)
        self.ws.purge(x_out, self.purge_after)
        self.ws.add(cuts)
        return None

    def screen_round(self, rnd: int, x_sep: np.ndarray, ts: float) -> bool:
        """A screen near the last cuts' blocks (:meth:`SweepOracle.screen`); whether it added cuts.
        The loop checks the screen's cuts itself: only a multiset really violated at x_sep counts;
        otherwise (or after ``screen_streak`` screens) the round sweeps exhaustively.  ``ts``: when the
        round's sweeping began."""
        scr = self.oracle.screen(x_sep, self.top, self.tol_cp)
        new = self.ws.new_among(scr.candidates) if scr is not None and scr.max_violation > self.tol_cp else None
        if new is None or not self.ws.violated(new, x_sep, self.tol_cp):
            return False
        # a screen that found almost nothing new ends the streak (screen_min_rows)
        self.streak = self.streak + 1 if new.shape[0] >= self.s.screen_min_rows else self.s.screen_streak
        self.sweeps += time.perf_counter() - ts
        if self.log:
            assert scr is not None
            self.log(f"round {rnd}: {self.lp.rows.shape[0]} LP rows, screened {scr.checked:.3g} multisets near the "
                     f"last cuts: violation {scr.max_violation:.3e}, {new.shape[0]} cuts, LB {self.lb:.6e}")
        self.ws.add(new)  # no purge here: a row's slack age counts exhaustive rounds only
        return True

    def separation_round(self, rnd: int, x_out: np.ndarray) -> tuple | None:
        """In-out separation at x_in + λ(x_out − x_in): a screen or an exhaustive sweep, its cuts and
        its stops; a stop's result, or None."""
        self.ls.look_out = False
        stab = self.stab
        x_sep, at_out = stab.separation_point(self.x_in, x_out)
        ts = time.perf_counter()
        if (self.options.screen and rnd < self.max_rounds and self.streak < self.s.screen_streak
                and self.screen_round(rnd, x_sep, ts)):
            return None
        self.streak = 0
        res = self.oracle.exhaustive(x_sep, self.top, self.tol_cp)
        self.sweeps += time.perf_counter() - ts
        self.checked = res.checked
        v = res.max_violation
        self.take_certified(x_sep, v)
        if self.log:
            self.log(f"round {rnd}: {self.lp.rows.shape[0]} LP rows, λ={1.0 if at_out else stab.lam:.2f}, "
                     f"max violation {v:.3e}, gap ≤ {self.ub - self.lb:.3e} (UB {self.ub:.9e}, LB {self.lb:.9e}), "
                     f"sweep {time.perf_counter() - ts:.1f}s")
        if self.ub - self.lb <= self.gap_tol:
            return self.finish(rnd, True, StopReason.GAP, None)
        if at_out and v <= self.tol_cp:
            # the LP point is feasible up to the separation tolerance but its certified
            # (repaired) version is not yet proven within gap_tol: try the working set's
            # exact-objective optimum once (the tie-break can cost more than gap_tol)
            if not self.polished:
                self.polish = True
                stab.look_at_lp_point()
                return None
            return self.finish(rnd, False, StopReason.NO_VIOLATION, v)
        if v <= self.tol_cp:
            stab.after_feasible()  # the separation point is feasible (the new x_in)
            return None
        stab.after_violation(v, at_out)
        new = self.ws.new_among(res.candidates)
        if new.shape[0] == 0:
            if not at_out:
                stab.look_at_lp_point()  # nothing new between x_in and x_out
                return None
            # every multiset violated at x_out is already a row: what is left is the LP
            # solver's feasibility tolerance, which the caller's repair-and-certify removes
            return self.finish(rnd, False, StopReason.LP_TOLERANCE, v)
        if rnd == self.max_rounds:
            return self.finish(rnd, False, StopReason.ROUND_LIMIT, v)
        self.ws.purge(x_out, self.purge_after)
        self.ws.add(new)
        return None

    def round(self, rnd: int) -> tuple | None:
        """One round: the LP point, then a line search or a separation."""
        ls_round = self.ls.this_round(self.stab, self.x_in)
        use_prox = ls_round and self.ls.mu is not None
        # after the proximal stage (its μ exhausted): aim at the exact-objective LP point (module pure_rounds)
        exact_target = ls_round and self.ls.exhausted
        x_a: np.ndarray | None = None
        if ls_round:
            assert self.x_in is not None
            x_a = self.ls.anchor(self.c, self.ub, self.x_in)
        x_out = self.lp_point(rnd, use_prox, exact_target, x_a)
        if ls_round:
            assert x_a is not None
            return self.line_search_round(rnd, x_a, x_out, use_prox, exact_target)
        return self.separation_round(rnd, x_out)


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
    schedule: Schedule | None = None,
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
    free: x_sep scaled by rhs/(rhs + 2v) (:func:`darrm.privacy.certify.repair`), which becomes
    x_in when it is better, giving an upper bound UB.  After a separation point that turns
    out feasible (no cuts) the next round tries x_out itself (λ = 1).  ``stabilize="auto"``
    uses λ = 1 (plain Kelley cuts, fewest rounds for K ≤ 301) until the LP point's violation
    first rises, then ``schedule.auto_lambda`` (K = 1001, Δ = 0: plain cuts oscillate there).  The
    model's policy (:class:`darrm.solver.pure_rounds.RoundPolicy`) adds, for Δ = 0, a seeded working
    set (rows of the full LP, so every bound keeps its meaning), the λ ramp and, once in-out
    separation has started, segment sweeps (:mod:`darrm.privacy.segment`) from the last certified
    proposal toward a target (:class:`LineSearch`): the proximal point of the working set anchored
    there (:class:`darrm.solver.restricted_lp.ProximalHighsLP`, μ shrinking), then, once μ is below
    ``schedule.prox_mu_min``, the exact-objective LP point.

    Stops when (a) x_out itself violates no multiset by more than ``tol_cp`` (classic
    convergence; x_out is returned), or (b) UB − LB ≤ ``gap_tol`` (x_in, feasible and
    within gap_tol of the optimum, is returned).  At ``max_rounds`` the best feasible point
    is returned with ``converged=False`` and its bound (see :func:`darrm.solver.gamma_opt.solve_gamma_opt`'s
    ``accept_gap``).  Each round's lower bound comes from the LP's own duals (valid for any
    y ≥ 0, at most tie_break·scale·Σx below the working set's optimum); once that difference
    could close the gap, a warm re-solve with the exact objective (no tie-break) gives the
    tightest bound the working set allows (:class:`TightBound`), and every stop reports that
    tight bound.

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
            the policy's (``schedule.purge_after``, or 0 for Δ = 0).
        oracle: the separation oracle (None: a :class:`SweepOracle`).
        schedule: the tuning numbers (:class:`darrm.solver.schedule.Schedule`; None: its defaults).
            No schedule changes what is proven, only the path.
    """
    # options were validated once, by SolveOptions
    run = _Run(params, c, options, Schedule() if schedule is None else schedule, solver_opts=solver_opts,
               tol_cp=tol_cp, executor=executor, checkpoint=checkpoint, progress=progress, log=log,
               tie_break=tie_break, purge_after=purge_after, oracle=oracle)
    return run_rounds(run)

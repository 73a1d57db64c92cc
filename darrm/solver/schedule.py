"""How constraint generation spends its rounds: one frozen, validated object of tuning numbers.

Claim.  No field of :class:`Schedule` changes what a solve proves, only the path (the rounds and
their cost).

Proof.  Every row a schedule puts in the working set is a row of the full LP (a corner multiset's
folded row, :mod:`darrm.solver.rows`), so every working-set LP is a relaxation and its Lagrangian
bound (:func:`darrm.solver.restricted_lp.lagrangian_bound`, valid for any duals ≥ 0) is a lower
bound whichever rows, objective, anchor or proximal weight produced the duals.  Every upper bound
and every stop comes from an exhaustive sweep of the point actually separated (or of a line-search
proposal, itself swept exhaustively before it counts), and the final table is certified by
:func:`darrm.privacy.certify.certify` over every multiset.  Which λ is tried, which rows are purged,
when the exact-objective bound is re-solved, which blocks are screened and where a line search aims
therefore change which points are swept, never what a sweep or a bound means.

The defaults are the measured ones (benchmarks/RESULTS.md, the sections on K = 101 with Δ > 0 and
on the pure-DP rounds at K = 1001 to 2001); each field says what it trades and its safe range.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..validation import count, non_negative, real

#: the shared-data model's round limit when ``SolveOptions.max_rounds`` is None
#: (:attr:`darrm.models.shared.SharedModel.max_rounds`): a round sweeps C(K+7,7) multisets
MAX_ROUNDS = 500


@dataclass(frozen=True)
class Schedule:
    """Tuning numbers of the shared-data model's constraint generation
    (:func:`darrm.solver.cutting_planes.solve_cutting_planes`); none changes what is proven (module
    docstring).

    Attributes:
        auto_lambda: the in-out λ that ``stabilize="auto"`` switches to once the LP point's violation
            first rises (plain Kelley cuts oscillate at K = 1001).  (0, 1]; smaller damps more.
        tight_near: once the exact-objective bound could close the gap, it is re-solved every round
            while the last one was within ``tight_near``·gap_tol of the upper bound.  ≥ 0.
        tight_every: otherwise every ``tight_every`` rounds (each a warm primal re-solve, ~0.3 s at
            K = 1001; waiting delays the stop by at most ``tight_every`` − 1 rounds).  ≥ 1.
        tight_settled: an exact re-solve that raised the bound by less than ``tight_settled``·gap_tol
            doubles the wait (up to ``tight_every_max``): the working set's bound has settled and
            only the upper bound is left to close.  ≥ 0.
        tight_every_max: the longest wait between exact re-solves.  ≥ ``tight_every``.
        screen_min_work: exhaustive sweeps cheaper than this (:func:`darrm.privacy.sweep.sweep_work`;
            Δ > 0: K < 41) are never screened (a screen round adds LP re-solves).  ≥ 0.
        screen_streak: at most this many screen rounds in a row, then an exhaustive sweep.  ≥ 1.
        screen_min_rows: a screen adding fewer LP rows ends the streak (its blocks are exhausted at the
            LP point); 0 turns the rule off.  ≥ 0.
        purge_after: Δ > 0 rows slack for this many exhaustive rounds in a row leave the LP (found
            again by a sweep if they ever matter); 0 keeps every row.  ≥ 0.
        pure_max_meps: the pure-DP policy (seed, ramp, no purge, HiGHS scaling, line search) applies
            up to this mε only: above it rows hold entries ~e^{mε} and HiGHS failed on the seeded LP
            (16 of 40 requests with mε in [18, 30]).  ≥ 0.
        ramp_floor: the pure-DP λ ramp (:func:`darrm.solver.pure_rounds.ramp_lambda`) jumps to λ = 1
            once 1 − λ would fall below this.  (0, 1].
        line_search_short: a line-search proposal steps this fraction of the float64 step λ* (the
            blocking row keeps a slack far above λ*'s rounding).  (0, 1]; 1 has no margin.
        line_search_deep: the share of a line-search round's cuts taken at the LP point (the rest
            block the segment first).  [0, 1].
        prox_deep: the same share for a proximal or exact-objective target.  [0, 1].
        prox_mu0: the first proximal weight μ (objective normalised to ‖c‖∞ = 1), also the weight
            of the idle coordinates whatever μ is.  > 0.
        prox_shrink: μ shrinks by this factor whenever the proximal point would gain less than
            ``prox_stall`` of the gap.  (0, 1).
        prox_stall: see ``prox_shrink``.  [0, 1].
        prox_mu_min: below this μ the proximal stage ends and the line search aims at the
            exact-objective LP point.  > 0.
        prox_free_step: a proximal round whose segment was free this far (no new cut) goes on to the
            next proximal round.  [0, 1].
        prox_idle_share: a coordinate is idle (held at ``prox_mu0``) when it and every lighter one
            weigh at most this fraction of gap_tol together.  [0, 1].
    """

    auto_lambda: float = 0.5
    tight_near: float = 8.0
    tight_every: int = 4
    tight_settled: float = 0.125
    tight_every_max: int = 16
    screen_min_work: int = 5 * 10**6
    screen_streak: int = 10
    screen_min_rows: int = 8
    purge_after: int = 5
    pure_max_meps: float = 10.0
    ramp_floor: float = 0.1
    line_search_short: float = 0.999
    line_search_deep: float = 0.0
    prox_deep: float = 0.5
    prox_mu0: float = 1e-6
    prox_shrink: float = 0.1
    prox_stall: float = 0.1
    prox_mu_min: float = 1e-7
    prox_free_step: float = 0.5
    prox_idle_share: float = 0.1

    def __post_init__(self) -> None:
        real("auto_lambda", self.auto_lambda, 0.0, 1.0, closed="right")
        non_negative("tight_near", self.tight_near)
        count("tight_every", self.tight_every)
        non_negative("tight_settled", self.tight_settled)
        count("tight_every_max", self.tight_every_max, minimum=self.tight_every)
        count("screen_min_work", self.screen_min_work, minimum=0)
        count("screen_streak", self.screen_streak)
        count("screen_min_rows", self.screen_min_rows, minimum=0)
        count("purge_after", self.purge_after, minimum=0)
        non_negative("pure_max_meps", self.pure_max_meps)
        real("ramp_floor", self.ramp_floor, 0.0, 1.0, closed="right")
        real("line_search_short", self.line_search_short, 0.0, 1.0, closed="right")
        for name in ("line_search_deep", "prox_deep", "prox_stall", "prox_free_step", "prox_idle_share"):
            real(name, getattr(self, name), 0.0, 1.0)
        real("prox_mu0", self.prox_mu0, 0.0, None, closed="neither")
        real("prox_shrink", self.prox_shrink, 0.0, 1.0, closed="neither")
        real("prox_mu_min", self.prox_mu_min, 0.0, None, closed="neither")

"""Pure-DP (Δ = 0) constraint generation: an initial working set, a λ ramp, no purge, HiGHS's scaling,
and the targets of the line search (the segment sweep toward a proximal point, then toward the
exact-objective LP point): the shared-data model's policy (:class:`RoundPolicy`).

Each applies to Δ = 0 members with mε ≤ :attr:`darrm.solver.schedule.Schedule.pure_max_meps` and was
measured against the path without it (benchmarks/RESULTS.md, the pure-DP sections).  None of them
changes what a round proves: rows are rows of the full LP, bounds come from the exhaustive sweep at
the point actually separated, and the final certificate sweeps every multiset
(:mod:`darrm.solver.schedule`).

The seed.

Claim.  For Δ = 0 members (corners (0,0), (1,1), (hi,lo), (lo,hi) of Lemma 5.1) the K + 1
multisets that put c members at (hi,lo) and K − c at (0,0), c = 0..K, with their swaps and
reflections (:func:`darrm.privacy.corners.orientations`: 4(K + 1) − 4 distinct multisets), may
be put in the working set of :func:`darrm.solver.cutting_planes.solve_cutting_planes` before the
first round without changing what the solve returns or what its bounds mean.

Proof.  Each of them is a corner multiset, so its folded row (:mod:`darrm.solver.rows`, Lemma 3.4's
Eq. 1 folded by the symmetry of γ) is a constraint of the full LP (Eq. 2 with the corner
reduction of Lemma 5.1).  A working set of full-LP rows gives a relaxation of the full LP
whichever rows it holds, so the Lagrangian lower bound of every round
(:func:`darrm.solver.restricted_lp.lagrangian_bound`) stays valid; the upper bounds, the stop and
the final certificate come from exhaustive sweeps over every multiset, as without the seed.  So
"optimal" and the proven gap keep their meaning; only the path (the rounds) changes.

Why these.  At the pure-DP optimum almost every binding multiset is of this family (measured,
m = 10, ε = 0.1, i.i.d. prior 0.75: 10 of the 12 multisets with a positive dual at K = 101, 21 of
25 at K = 301; the others mix (1,1) or (lo,hi) members in as well): the members that
separate D from D′ the most, beside members that never vote 1.  Without them the first
rounds' LP is unbounded in most directions (its lower bound stays at the trivial −½ for
dozens of rounds at K = 1001, 256 cuts a round).  The rows cost ~0.1 s at K = 1001
(:func:`darrm.privacy.corner_pmfs.factored_pmf_pairs`: one binomial pmf per multiset).

Δ > 0 is left alone (:func:`seed_multisets` returns no rows): its solver has its own screening
rounds, and the eight-corner optimum binds elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..params import PrivacyParams
from .schedule import Schedule

#: the measured schedule (:class:`darrm.solver.schedule.Schedule`'s defaults)
DEFAULT_SCHEDULE = Schedule()


def applies(params: PrivacyParams, schedule: Schedule = DEFAULT_SCHEDULE) -> bool:
    """Whether the pure-DP policy applies: Δ = 0 and mε ≤ ``schedule.pure_max_meps`` (above it the
    rows hold entries ~e^{mε}, and HiGHS called the seeded LP unbounded or failed on 16 of 40
    requests with mε in [18, 30] (K ≤ 31), which a few rows a round solve)."""
    return params.member_delta == 0 and params.m * params.eps <= schedule.pure_max_meps


def seed_multisets(params: PrivacyParams, schedule: Schedule = DEFAULT_SCHEDULE) -> np.ndarray:
    """The two-corner family of the module docstring, one orientation each.

    Args:
        params: the members' privacy parameters (K, ε, Δ).
        schedule: the tuning (its ``pure_max_meps``).

    Returns:
        An (K + 1, 4) array of count vectors over the corners of
        :func:`darrm.privacy.corners.corners` (n_(0,0), n_(1,1), n_(hi,lo), n_(lo,hi)) =
        (K − c, 0, c, 0), c = 0..K; an empty array (0 rows, one column per corner) when the pure-DP
        policy does not apply (:func:`applies`).  The working set adds their swaps and reflections
        itself (:meth:`darrm.solver.cutting_planes.WorkingSet.new_among`).
    """
    if not applies(params, schedule):
        return np.zeros((0, 8 if params.member_delta > 0 else 4), dtype=np.int64)
    c = np.arange(params.K + 1, dtype=np.int64)
    z = np.zeros_like(c)
    return np.stack([params.K - c, z, c, z], axis=1)


def ramp_lambda(lam: float, floor: float = DEFAULT_SCHEDULE.ramp_floor) -> float:
    """The next in-out λ after a feasible separation point at ``lam`` (the ramp).

    The separation point x_in + λ(x_out − x_in) was feasible, so it became x_in and the distance
    to the LP point's objective shrank by the factor 1 − λ.  Near the end of a pure-DP solve
    (K = 1001) the LP point itself is violated round after round by multisets in the directions the
    objective does not weigh (prior weights below 1e-300, where the tie-break pushes γ up), so a
    round at λ = 1 mostly adds cuts and leaves the upper bound where it was, and the gap closes by
    halves.  The ramp tries 1 − (1 − λ)/2 instead (0.5 → 0.75 → 0.875 → 1): each feasible
    round shrinks the gap further, and a violated one still cuts off the LP point (a multiset violated
    between a feasible x_in and x_out is violated at x_out: the rows are linear), after which
    :meth:`darrm.solver.engine.Stabilizer.after_violation` returns λ to its base value.
    Which λ is tried never changes what a round proves: bounds come from the exhaustive sweep at the
    point actually separated.

    Args:
        lam: the λ in (0, 1) of the feasible separation point.
        floor: :attr:`darrm.solver.schedule.Schedule.ramp_floor`.

    Returns:
        1 − (1 − lam)/2, or 1.0 once that is within ``floor`` of 1.
    """
    nxt = 1.0 - 0.5 * (1.0 - lam)
    return 1.0 if 1.0 - nxt < floor else nxt


#: HiGHS options of the pure-DP restricted LPs (:func:`RoundPolicy.highs`).  ``simplex_scale_strategy``
#: 4 (scale by the largest entry of each row and column) instead of HiGHS's default choice: with the
#: default, the dual simplex stopped with "ratio test failed due to excessive dual values" (model status
#: "Not Set") on the seeded K = 2001 LP (8,004 rows) and on about one re-solve in ten at K = 1001,
#: each then solved again from a fresh model (a cold solve, 2–30 s); with 4 the seeded K = 2001 LP
#: solves directly, and the K = 1001 working set's exact-objective LP takes 3,188 dual simplex
#: iterations cold instead of 12,192 (benchmarks/RESULTS.md, the fifth pure-DP session).
PURE_HIGHS = {"simplex_scale_strategy": 4}


@dataclass(frozen=True)
class RoundPolicy:
    """The shared-data model's policy for constraint generation: what differs between pure-DP
    members (:func:`applies`) and the rest.

    Attributes:
        seed: the first working-set multisets (:func:`seed_multisets`; none for Δ > 0).
        ramp: after a feasible separation point, move λ halfway to 1 (:func:`ramp_lambda`) instead
            of separating at the LP point itself.
        purge_after: rows slack for this many rounds in a row leave the LP (0: pure DP keeps every
            row: measured at K = 1001, purging after 5 slack rounds dropped seed rows that bound
            again later and cost rounds to find again; the LP keeps ~15,000 rows there, a warm
            dual-simplex re-solve of well under a second).
        highs: HiGHS options of the restricted LPs (:data:`PURE_HIGHS` for pure DP, else {}).
        line_search: once in-out separation has started, each round runs the segment sweep
            (:mod:`darrm.privacy.segment`: the exhaustive sweep of the last proposal x_a, certifying
            it, and the exact line search from x_a toward a target) instead of a sweep at a fixed λ.
        prox_mu0: the first proximal weight of the line search's target (None: the tie-break LP
            point): the proximal point of the working set anchored at x_a
            (:class:`darrm.solver.restricted_lp.ProximalHighsLP`), then, once μ is below
            ``prox_mu_min``, the exact-objective LP point.  Safe: the segment aims at any point; the
            proposal on it is certified by the next exhaustive sweep and the lower bound holds for
            any duals ≥ 0, so the target changes the path only, never what a round proves.
    """

    seed: np.ndarray
    ramp: bool
    purge_after: int
    highs: dict
    line_search: bool
    prox_mu0: float | None

    @classmethod
    def of(cls, params: PrivacyParams, schedule: Schedule, *, line_search: bool = True,
           prox: bool = True) -> RoundPolicy:
        """The policy for ``params``; ``line_search`` False where the segment sweep cannot run (a
        torch device), ``prox`` False where the proximal LP cannot (the cvxpy back end)."""
        pure = applies(params, schedule)
        ls = pure and line_search
        return cls(seed=seed_multisets(params, schedule), ramp=pure,
                   purge_after=0 if pure else schedule.purge_after, highs=dict(PURE_HIGHS) if pure else {},
                   line_search=ls, prox_mu0=schedule.prox_mu0 if ls and prox else None)


def next_prox_mu(mu: float | None, schedule: Schedule = DEFAULT_SCHEDULE) -> float | None:
    """μ after a proximal round that asked too little of the gap: μ·``prox_shrink``, or None once
    that is below ``prox_mu_min`` (the proximal stage is over: from then on the line search aims
    at the exact-objective LP point, :func:`darrm.solver.cutting_planes.solve_cutting_planes`).

    Measured at K = 1501 (m = 10, ε = 0.1): below μ = 1e-7 the proximal point stopped gaining (proven
    gap stuck at 1.5e-8 through μ = 1e-10, each change of μ a ~200 s re-solve), while from the same
    working set 18 rounds cut at the exact-objective point (3–10 s each) brought its violation from
    1.7e-2 to 3.7e-7 and raised the bound: the optimum sits at the bound, reached through
    coordinates the proximal term holds back."""
    if mu is None:
        return None
    nxt = mu * schedule.prox_shrink
    return nxt if nxt >= schedule.prox_mu_min else None


def idle_coordinates(c: np.ndarray, gap_tol: float, share: float = DEFAULT_SCHEDULE.prox_idle_share) -> np.ndarray:
    """The idle coordinates: the lightest ones, whose weights |c_l| sum to at most
    ``share``·gap_tol (together they cannot move the objective by more than that).

    Args:
        c: the LP costs (exact, unnormalised).
        gap_tol: the solve's proven-gap target (expected-error units).
        share: :attr:`darrm.solver.schedule.Schedule.prox_idle_share`.

    Returns:
        A boolean mask like ``c``.
    """
    a = np.abs(np.asarray(c, dtype=np.float64))
    order = np.argsort(a, kind="stable")
    idle = np.zeros(a.shape, dtype=bool)
    idle[order] = np.cumsum(a[order]) <= share * gap_tol
    return idle


def prox_weights(idle: np.ndarray, mu: float, mu_idle: float = DEFAULT_SCHEDULE.prox_mu0) -> np.ndarray:
    """Per-coordinate proximal weights: ``mu`` where the objective weighs the coordinate, and
    ``mu_idle`` (or ``mu`` if larger) on the idle ones (:func:`idle_coordinates`).

    The idle coordinates keep a fixed weight whatever μ is: the working set models them worst, and
    with μ = 1e-8 moving them was nearly free, so the proximal point jumped as far as the tie-break
    LP point (K = 1501, m = 10, ε = 0.1: violated by 1e-3, step 0.002).

    Args:
        idle: the mask of :func:`idle_coordinates`.
        mu: the proximal weight of the weighed coordinates (normalised objective).
        mu_idle: :attr:`darrm.solver.schedule.Schedule.prox_mu0`.

    Returns:
        An array like ``idle`` of weights ≥ 0.
    """
    return np.where(idle, max(mu_idle, mu), mu)

"""Pure-DP (Δ = 0) constraint generation: an initial working set, a λ ramp, no purge, and the targets
of the line search (:data:`PURE_LINE_SEARCH`: the segment sweep; :data:`PURE_PROX`: a proximal point,
then the exact-objective LP point).

Three changes to :func:`darrm.solver.cutting_planes.solve_cutting_planes` for Δ = 0 members, each
with its switch for the benchmark's same-run comparison (``benchmarks/bench_pure_rounds.py``):
the seed below (:data:`PURE_SEED`), the in-out λ ramp (:func:`ramp_lambda`, :data:`PURE_RAMP`) and
keeping every row (:func:`purge_rounds`, :data:`PURE_KEEP_ROWS`).  None of them changes what a
round proves: rows are rows of the full LP, bounds come from the exhaustive sweep at the point
actually separated, and the final certificate sweeps every multiset.

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

import numpy as np

from ..params import PrivacyParams

#: seed pure-DP constraint generation with :func:`seed_multisets` (False: start from no rows,
#: the previous path, kept for the benchmark's same-run comparison)
PURE_SEED = True

#: none of the three changes applies above this mε: the rows hold entries ~e^{mε}, and HiGHS called
#: the seeded LP unbounded or failed on 16 of issue 23's 40 requests with mε in [18, 30] (K ≤ 31),
#: which the old path (a few rows a round) solves
PURE_MAX_MEPS = 10.0


def _applies(params: PrivacyParams) -> bool:
    """Δ = 0 and mε ≤ :data:`PURE_MAX_MEPS`."""
    return params.member_delta == 0 and params.m * params.eps <= PURE_MAX_MEPS


def seed_multisets(params: PrivacyParams) -> np.ndarray:
    """The two-corner family of the module docstring, one orientation each.

    Args:
        params: the members' privacy parameters (K, ε, Δ).

    Returns:
        An (K + 1, 4) array of count vectors over the corners of
        :func:`darrm.privacy.corners.corners` (n_(0,0), n_(1,1), n_(hi,lo), n_(lo,hi)) =
        (K − c, 0, c, 0), c = 0..K; an empty array (0 rows, one column per corner) when Δ > 0,
        mε > :data:`PURE_MAX_MEPS` or :data:`PURE_SEED` is off.  The working set adds their swaps and reflections itself
        (:meth:`darrm.solver.cutting_planes.WorkingSet.new_among`).
    """
    if not (_applies(params) and PURE_SEED):
        return np.zeros((0, 8 if params.member_delta > 0 else 4), dtype=np.int64)
    c = np.arange(params.K + 1, dtype=np.int64)
    z = np.zeros_like(c)
    return np.stack([params.K - c, z, c, z], axis=1)


#: pure DP: after a feasible separation point, move λ halfway to 1 (:func:`ramp_lambda`) instead of
#: separating at the LP point itself (False: the previous schedule, for the same-run comparison)
PURE_RAMP = True

#: :func:`ramp_lambda` goes to λ = 1 once 1 − λ would fall below this
RAMP_FLOOR = 0.1


def ramps(params: PrivacyParams) -> bool:
    """Whether constraint generation for ``params`` uses the λ ramp (Δ = 0 and :data:`PURE_RAMP`).

    Args:
        params: the members' privacy parameters.

    Returns:
        True for pure-DP members while :data:`PURE_RAMP` is on.
    """
    return _applies(params) and PURE_RAMP


def ramp_lambda(lam: float) -> float:
    """The next in-out λ after a feasible separation point at ``lam`` (the ramp).

    The separation point x_in + λ(x_out − x_in) was feasible, so it became x_in and the distance
    to the LP point's objective shrank by the factor 1 − λ.  Near the end of a pure-DP solve
    (K = 1001) the LP point itself is violated round after round by multisets in the directions the
    objective does not weigh (prior weights below 1e-300, where the tie-break pushes γ up), so a
    round at λ = 1 mostly adds cuts and leaves the upper bound where it was, and the gap closes by
    halves.  The ramp tries 1 − (1 − λ)/2 instead (0.5 → 0.75 → 0.875 → 1): each feasible
    round shrinks the gap further, and a violated one still cuts off the LP point (a multiset violated
    between a feasible x_in and x_out is violated at x_out: the rows are linear), after which
    :meth:`darrm.solver.cutting_planes.Stabilizer.after_violation` returns λ to its base value.
    Which λ is tried never changes what a round proves: bounds come from the exhaustive sweep at the
    point actually separated.

    Args:
        lam: the λ in (0, 1) of the feasible separation point.

    Returns:
        1 − (1 − lam)/2, or 1.0 once that is within :data:`RAMP_FLOOR` of 1.
    """
    nxt = 1.0 - 0.5 * (1.0 - lam)
    return 1.0 if 1.0 - nxt < RAMP_FLOOR else nxt


#: rows slack for this many rounds in a row leave the working-set LP (Δ > 0, and Δ = 0 without
#: :data:`PURE_KEEP_ROWS`)
PURGE_AFTER = 5

#: pure DP keeps every row (no purge): measured at K = 1001 (benchmarks/RESULTS.md, "Pure-DP rounds"),
#: purging after 5 slack rounds dropped seed rows that bound again later and cost rounds to find again
PURE_KEEP_ROWS = True


def purge_rounds(params: PrivacyParams) -> int:
    """How many slack rounds in a row remove a row from the working-set LP (0: never).

    Args:
        params: the members' privacy parameters.

    Returns:
        0 for pure-DP members while :data:`PURE_KEEP_ROWS` is on (the LP has ~K/2 columns and keeps
        ~15,000 rows at K = 1001, a warm dual-simplex re-solve of well under a second), else
        :data:`PURGE_AFTER`.
    """
    return 0 if _applies(params) and PURE_KEEP_ROWS else PURGE_AFTER


#: HiGHS options of the pure-DP restricted LPs (:func:`highs_options`; None: HiGHS's own defaults,
#: the previous path, for the same-run comparison).  ``simplex_scale_strategy`` 4 (scale by the
#: largest entry of each row and column) instead of HiGHS's default choice: with the default,
#: the dual simplex stopped with "ratio test failed due to excessive dual values" (model status
#: "Not Set") on the seeded K = 2001 LP (8,004 rows) and on about one re-solve in ten at K = 1001,
#: each then solved again from a fresh model (a cold solve, 2–30 s); with 4 the seeded K = 2001 LP
#: solves directly, and the K = 1001 working set's exact-objective LP takes 3,188 dual simplex
#: iterations cold instead of 12,192 (benchmarks/RESULTS.md, "Issue 27, fifth session").
PURE_HIGHS = {"simplex_scale_strategy": 4}


def highs_options(params: PrivacyParams) -> dict:
    """HiGHS options for the restricted LPs of ``params`` (the caller's own options override them).

    Args:
        params: the members' privacy parameters.

    Returns:
        :data:`PURE_HIGHS` for pure-DP members with mε ≤ :data:`PURE_MAX_MEPS`, else {} (Δ > 0 and
        large mε keep HiGHS's defaults and :data:`darrm.solver.restricted_lp.HIGHS_DEFAULTS`).
    """
    return dict(PURE_HIGHS) if _applies(params) and PURE_HIGHS else {}


#: pure DP: once in-out separation has started, each round runs the segment sweep
#: (:mod:`darrm.privacy.segment`: the exhaustive sweep of the last proposal x_a, certifying it, and the
#: exact line search from x_a toward the LP point) instead of a sweep at a fixed λ, and proposes
#: x_a + LINE_SEARCH_SHORT·λ*·(x_out − x_a) for the next round's certificate (False: the λ ramp, the
#: previous path, for the same-run comparison)
PURE_LINE_SEARCH = True

#: the proposal steps this fraction of the float64 λ*: the blocking inequality keeps a slack of
#: ~1e-3·λ*·(its rise along the segment), far above the rounding of λ*, at a cost of 1e-3 of the step
LINE_SEARCH_SHORT = 0.999

#: this fraction of a line-search round's cuts are the multisets most violated at the LP point (as a
#: plain sweep there would add), the rest those that block the segment first.  Off: measured at
#: K = 2001 (m = 10, ε = 0.1) 0.5 gave a proven gap of 1.08e-4 after 18 rounds against 7.2e-5 with
#: blocking cuts only, and no change at K = 1001 (benchmarks/RESULTS.md, "Issue 27, fifth session")
LINE_SEARCH_DEEP = 0.0


def line_searches(params: PrivacyParams) -> bool:
    """Whether constraint generation for ``params`` uses the segment line search (Δ = 0, mε ≤
    :data:`PURE_MAX_MEPS` and :data:`PURE_LINE_SEARCH`).

    Args:
        params: the members' privacy parameters.

    Returns:
        True for pure-DP members while :data:`PURE_LINE_SEARCH` is on.
    """
    return _applies(params) and PURE_LINE_SEARCH


#: pure DP: the line search aims at the proximal point of the working set anchored at x_a
#: (:class:`darrm.solver.restricted_lp.ProximalHighsLP`: min c·x/‖c‖∞ + μ‖x − x_a‖₁) instead of the
#: tie-break LP point (False: the previous target, for the same-run comparison)
PURE_PROX = True

#: the share of a proximal round's cuts that are the multisets most violated at the proximal point (the
#: rest block the segment first; :data:`LINE_SEARCH_DEEP` for the LP-point target).  Measured at
#: K = 1501 (m = 10, ε = 0.1): the proximal stage (μ = 1e-6) reached its stationary point in 22
#: rounds against 27 with blocking cuts only (benchmarks/RESULTS.md, "Issue 27, sixth session")
PROX_DEEP = 0.5

#: the first μ (objective normalised to ‖c‖∞ = 1): coordinates whose weight is below μ stay at the
#: anchor unless the rows make room for a gain elsewhere
PROX_MU0 = 1e-6

#: μ shrinks by this factor whenever the proximal point would gain less than PROX_STALL of the gap
PROX_SHRINK = 0.1
PROX_STALL = 0.1

#: below this μ the proximal stage ends and the line search aims at the exact-objective LP point (the
#: working set's optimum without the tie-break, from the warm twin model).  Measured at K = 1501 (m = 10,
#: ε = 0.1): below μ = 1e-7 the proximal point stopped gaining (proven gap stuck at 1.5e-8 through
#: μ = 1e-10, each change of μ a ~200 s re-solve), while from the same working set 18 rounds cut at the
#: exact-objective point (3–10 s each) brought its violation from 1.7e-2 to 3.7e-7 and raised the
#: bound: the optimum sits at the bound, reached through coordinates the proximal term holds back
PROX_MU_MIN = 1e-7

#: a proximal round whose segment was free this far (no new cut) goes on to the next proximal round
PROX_FREE_STEP = 0.5


def prox_mu0(params: PrivacyParams) -> float | None:
    """The first proximal weight μ of the line search for ``params`` (None: no proximal target).

    Why a proximal target is safe: the target of the line search is any point; the proposal on the
    segment is certified by the next exhaustive sweep and the lower bound holds for any duals ≥ 0, so
    which point the segment aims at changes the path only, never what a round proves.

    Args:
        params: the members' privacy parameters.

    Returns:
        :data:`PROX_MU0` for pure-DP members while :data:`PURE_PROX` (and the line search) is on.
    """
    return PROX_MU0 if line_searches(params) and PURE_PROX else None


def next_prox_mu(mu: float | None) -> float | None:
    """μ after a proximal round that asked too little of the gap: μ·:data:`PROX_SHRINK`, or None once
    that is below :data:`PROX_MU_MIN` (the proximal stage is over: from then on the line search aims
    at the exact-objective LP point, :func:`darrm.solver.cutting_planes.solve_cutting_planes`)."""
    if mu is None:
        return None
    nxt = mu * PROX_SHRINK
    return nxt if nxt >= PROX_MU_MIN else None


#: the coordinates that cannot matter to the objective by themselves (:func:`prox_weights`) keep this
#: proximal weight whatever μ is: the working set models them worst, and with μ = 1e-8 moving them was
#: nearly free, so the proximal point jumped as far as the tie-break LP point (K = 1501, m = 10, ε = 0.1:
#: violated by 1e-3, step 0.002)
PROX_MU_IDLE = PROX_MU0

#: a coordinate is idle when the weights of it and of every lighter coordinate sum to at most this
#: fraction of gap_tol
PROX_IDLE_SHARE = 0.1


def idle_coordinates(c: np.ndarray, gap_tol: float) -> np.ndarray:
    """The idle coordinates: the lightest ones, whose weights |c_l| sum to at most
    :data:`PROX_IDLE_SHARE`·gap_tol (together they cannot move the objective by more than that).

    Args:
        c: the LP costs (exact, unnormalised).
        gap_tol: the solve's proven-gap target (expected-error units).

    Returns:
        A boolean mask like ``c``.
    """
    a = np.abs(np.asarray(c, dtype=np.float64))
    order = np.argsort(a, kind="stable")
    idle = np.zeros(a.shape, dtype=bool)
    idle[order] = np.cumsum(a[order]) <= PROX_IDLE_SHARE * gap_tol
    return idle


def prox_weights(idle: np.ndarray, mu: float) -> np.ndarray:
    """Per-coordinate proximal weights: ``mu`` where the objective weighs the coordinate, and
    :data:`PROX_MU_IDLE` (or ``mu`` if larger) on the idle ones (:func:`idle_coordinates`).

    Args:
        idle: the mask of :func:`idle_coordinates`.
        mu: the proximal weight of the weighed coordinates (normalised objective).

    Returns:
        An array like ``idle`` of weights ≥ 0.
    """
    return np.where(idle, max(PROX_MU_IDLE, mu), mu)

"""γ for members on disjoint shards, designed for a total budget (ε_total, δ_total) over Q queries.

**The design constraint.**  A per-query (ε_q, δ_q) constraint with δ_q ≈ δ_total/Q is nearly a
pure-ε constraint, so γ's error decays like e^{−jε_q} with the distance j from the threshold,
while Gaussian noise composes as √Q.  Here the constraint is a *target profile*: each query's
privacy profile is dominated by a profile T whose Q-fold composition meets the total.  For disjoint
members the worst configurations are the O(K) ones of :mod:`darrm.models.disjoint` (the changed member at a
vertex of its region, n unchanged members at the high end; for non-private members the pairs of
vote counts (L, L + 1)).  Each configuration gives, for output o and direction,
(x, y) = (Pr[A(D′)=o], Pr[A(D)=o]), both affine in γ, and the rows

    y − e^{ε′}·x ≤ T(ε′)    for every ε′ of a grid                        (folded: Lemma 3.4's form)

are linear in x = γ(mid..K).  :func:`solve_target` solves that LP by constraint generation over
every configuration and grid point (it is small at any K: C·K·4 rows per grid point).

**Shapes** (each with one parameter θ, larger θ = less private, chosen by bisection as the largest
θ whose certified total meets the budget):

* ``threshold`` — the Gaussian threshold itself (binary GNMax, :func:`darrm.gamma.gamma_threshold`),
  θ = 1/s.  A baseline: one member's shard changes the margin L − K/2 by at most 1, so the release is
  a post-processing of the Gaussian mechanism and (1/s)-GDP for every member model (for randomised
  members by joint convexity: the pair of mixtures (αA + (1−α)B, βA + (1−β)B), α ≥ β, is the mixture
  β(A, A) + (α − β)(A, B) + (1 − α)(B, B) of pairs each dominated by the Gaussian one);
* ``const`` — randomised response (γ ≡ c), θ = c.  A baseline;
* ``gdp`` — the LP under the μ-GDP target δ_μ (θ = μ), its grid refined at the tangent points of the
  cloud points the exact check finds above the Gaussian curve (constraint generation in ε′);
* ``threshold-profile`` — the LP under the exact profile of the Gaussian threshold at scale s
  (θ = 1/s), the grid at that profile's kinks (so the rows are the profile itself);
* ``eps-delta`` — the LP under one (ε0, δ0 = δ_total/(2Q)) pair: per-query γ_opt (θ = ε0).

**Certification (what is charged).**  The LP never carries the privacy claim.  Every candidate is
charged the smaller of two rigorous totals: (1) its certified GDP parameter μ*
(:func:`darrm.budget.targets.certified_gdp_mu` on the table's own cloud, rounded outward; for the
float64 threshold table μ* exceeds 1/s by ~1e-9 relative: the theorem above holds for exact γ, the
certificate for the table as stored), composed exactly as √Q·μ*-GDP and turned into ε at δ_total in
mpmath; (2) the Q-fold composition by the one accountant (:func:`darrm.accounting.queries.fresh_bound`:
the PLD of its dominating pair and the closed forms), computed in the search for the shapes whose GDP
charge is loose (``const``, ``eps-delta``) and, for the winner, of the saved table itself
(:func:`darrm.accounting.budget.charge.charged_total`, what every door composes: its closed forms include
the same GDP certificate, :func:`darrm.accounting.queries.gdp_bound`, so the winner's record is that charge
and at most the search's).  Because the baselines are
candidates and the GNMax scale calibrated by the exact Gaussian composition (s = √Q/μ_total) is a
feasible threshold point up to float64 rounding (the search reaches it to :data:`THRESHOLD_RTOL`), the
design is never worse than binary GNMax (up to that rounding) or RR at equal total.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import numpy as np

from darrm.budget.cloud import Cloud
from darrm.budget.design import BudgetDesign, Candidate
from darrm.budget.spec import TotalBudget
from darrm.budget.targets import gdp_delta, gdp_epsilon, gdp_mu_for_total
from darrm.budget.verify import GDP_ACCOUNTANT, PLD_ACCOUNTANT, RECORD_RTOL, recorded_budget
from darrm.errors import CertificationError, ParameterError, SolveError
from darrm.gamma import gamma_threshold, symmetric_from_upper, upper_half
from darrm.models.disjoint.certificate import certify_disjoint
from darrm.models.disjoint.members import MemberPrivacy
from darrm.models.disjoint.params import DisjointParams
from darrm.prior import IIDPrior, Prior
from darrm.privacy.condition import rhs
from darrm.privacy.profile import PrivacyProfile
from darrm.solver.objective import expected_signed_error, objective_coefficients
from darrm.solver.restricted_lp import make_restricted_lp
from darrm.table import GammaTable
from darrm.validation import instance, odd_count

from ..queries import fresh_bound, gdp_composed_mu, table_gdp
from .charge import charged_total, check_recorded

#: the shapes searched, baselines first
BASELINE_SHAPES = ("threshold", "const")
TARGET_SHAPES = ("gdp", "threshold-profile", "eps-delta")
SHAPES = BASELINE_SHAPES + TARGET_SHAPES
#: shapes whose GDP charge is loose: the search also composes their own pair
PLD_SHAPES = ("majority", "const", "eps-delta")
#: the search's bracket factor and the relative precision of each shape's θ
BRACKET, THETA_RTOL = 1.25, 1e-3
#: the threshold's θ = 1/s to a finer precision (its evaluations are cheap): binary GNMax calibrated
#: by the exact Gaussian composition is feasible up to the float64 rounding of its table, so the
#: search finds a scale within ~this of it
THRESHOLD_RTOL = 1e-8
#: grid points of the ``gdp`` shape's first LP, on ε′ ∈ [0, GRID_SPAN·μ]
GDP_GRID, GRID_SPAN = 24, 8.0
#: most grid points of the ``threshold-profile`` shape (its kinks, thinned evenly)
PROFILE_GRID = 64
#: refinement rounds of the ``gdp`` grid (tangent points added per round: TANGENTS)
REFINE_ROUNDS, TANGENTS = 3, 48
#: the LP rows' relative violation below which constraint generation stops
FEAS_TOL = 1e-9
#: the first round's rows: relative violation above −INIT_MARGIN at the starting point
INIT_MARGIN = 0.05


class TargetCloud(Protocol):
    """What :class:`TargetLP` reads of a query's worst configurations (:class:`~darrm.budget.cloud.Cloud`
    for disjoint members; one record group's configurations in :mod:`.shard_groups`)."""

    K: int

    def probs(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, P′), each (2, A, B): Pr[A(D)=o] and Pr[A(D′)=o] for o = 0, 1 at every configuration (a, b)."""

    def row(self, o: int, d: int, a: int, b: int, eps: float) -> np.ndarray:
        """The folded row r with r·x ≤ e^{ε′} − 1 + 2T(ε′) of output o, direction d, configuration (a, b)."""


class TargetLP:
    """min c·x over x = γ(mid..K) ∈ [0, 1] subject to y − e^{ε′_k}·x ≤ T_k at every configuration,
    output, direction and grid point k, by constraint generation: all violations evaluated from the
    output probabilities each round, the most violated rows added to a warm-started HiGHS model
    (:func:`darrm.solver.restricted_lp.make_restricted_lp`; every row divided by its right-hand side
    e^{ε′} − 1 + 2T, so all right-hand sides are 1).  The first round evaluates at ``x0`` (a point near
    the optimum, e.g. the Gaussian threshold of the same scale) and takes every row within
    :data:`INIT_MARGIN` of binding there: from γ ≡ 1 the rows along the chain of vote counts would come
    one count per round.  :meth:`extend` adds grid points to the same model (rows only tighten).

    ``cloud`` is one cloud, or several (parts) with their own grids and targets (e.g. one per record
    group, each bounded by its own group's target): the rows of every part enter one LP.  ``full`` maps
    x to the γ table when γ does not read L alone (a table read per group).
    """

    def __init__(self, cloud: TargetCloud | Sequence[TargetCloud], c: np.ndarray, x0: np.ndarray | None = None,
                 full: Callable[[np.ndarray], np.ndarray] | None = None):
        self.clouds: list[TargetCloud] = list(cloud) if isinstance(cloud, (list, tuple)) else [cast(TargetCloud, cloud)]
        self.cloud, self.c = self.clouds[0], np.asarray(c, dtype=np.float64)
        self.lp = make_restricted_lp("highs", self.c, 1.0)
        self.grids = [(np.zeros(0), np.zeros(0)) for _ in self.clouds]
        self.seen: set[tuple[int, float, int, int, int, int]] = set()
        self.full = full  # x ↦ the γ table (None: γ(0..K) mirrored from x = γ(mid..K))
        self.x = np.ones(self.c.shape[0]) if x0 is None else np.asarray(x0, dtype=np.float64)
        self.started = x0 is None
        #: whether x is an LP optimum (a start x0 far from every row's binding point is not)
        self.optimised = False

    @property
    def eps(self) -> np.ndarray:
        """The first part's grid ε′."""
        return self.grids[0][0]

    def extend(self, eps: np.ndarray, target: np.ndarray, part: int = 0) -> None:
        """Add the grid points (ε′, T(ε′)) of one part (those with ε′ = T = 0 left out: they would force
        γ ≡ 0)."""
        eps, target = np.asarray(eps, dtype=np.float64), np.asarray(target, dtype=np.float64)
        keep = (eps > 0) | (target > 0)
        e0, t0 = self.grids[part]
        self.grids[part] = (np.concatenate([e0, eps[keep]]), np.concatenate([t0, target[keep]]))

    def solve(self, max_rounds: int = 300, per_round: int | None = None) -> np.ndarray:
        """The LP's optimum over every configuration of every part at the current grids.

        Raises:
            SolveError: the LP failed or did not converge."""
        grids = [(e, t, np.exp(e), np.array([rhs(float(a), float(b)) for a, b in zip(e, t, strict=True)]))
                 for e, t in self.grids]
        per_round = per_round or 16 * self.c.shape[0]
        sh = (slice(None), None, None, None, None)
        for _ in range(max_rounds):
            g = symmetric_from_upper(self.x, self.cloud.K) if self.full is None else self.full(self.x)
            found: list[tuple[float, int, tuple[int, ...]]] = []
            for i, (cloud, (eps, target, s, r)) in enumerate(zip(self.clouds, grids, strict=True)):
                if eps.size == 0:
                    continue
                P, Pp = cloud.probs(g)
                D, X = np.stack([P, Pp]), np.stack([Pp, P])  # (d, o, A, B): y and x of direction d
                rel = 2.0 * (D[None] - s[sh] * X[None] - target[sh]) / r[sh]  # (k, d, o, A, B)
                flat = rel.ravel()
                top = np.flatnonzero(flat > (FEAS_TOL if self.started else -INIT_MARGIN))
                if top.size > 4 * per_round:
                    top = top[np.argpartition(-flat[top], 4 * per_round - 1)[: 4 * per_round]]
                found += [(float(flat[f]), i, tuple(int(j) for j in np.unravel_index(f, rel.shape)))
                          for f in top.tolist()]
            self.started = True
            found.sort(key=lambda t: -t[0])
            new: list[tuple[int, tuple[int, ...]]] = []
            for _, i, key in found:
                if (i, float(grids[i][0][key[0]]), *key[1:]) not in self.seen:
                    new.append((i, key))
                    if len(new) >= per_round:
                        break
            if not new and self.optimised:
                return self.x  # nothing violated, or re-violated only within the LP's tolerance
            rows = []
            for i, (k, d, o, v, m) in new:
                eps, r = grids[i][0], grids[i][3]
                self.seen.add((i, float(eps[k]), d, o, v, m))
                rows.append(self.clouds[i].row(o, d, v, m, float(eps[k])) / r[k])
            if rows:
                self.lp.add(np.array(rows))
            x, _ = self.lp.solve() if self.lp.rows.shape[0] else (np.where(self.c < 0.0, 1.0, 0.0), None)
            self.x, self.optimised = np.clip(np.asarray(x, dtype=np.float64), 0.0, 1.0), True
        raise SolveError(f"target LP: {max_rounds} rounds without convergence")


def solve_target(cloud: Cloud, c: np.ndarray, eps: np.ndarray, target: np.ndarray, *,
                 x0: np.ndarray | None = None) -> np.ndarray:
    """The optimum of :class:`TargetLP` at one grid (ε′_k, T_k).

    Raises:
        SolveError: the LP failed or did not converge."""
    lp = TargetLP(cloud, c, x0)
    lp.extend(eps, target)
    return lp.solve()


@dataclass(frozen=True)
class Charge:
    """A certified total of Q queries of one table: the smaller of its GDP and PLD totals."""

    epsilon: float
    accountant: str
    gdp_mu: float
    gdp_epsilon: float
    pld_epsilon: float | None = None





def charge_table(prof: PrivacyProfile, mu: float, budget: TotalBudget, analytic_mu: float | None = None,
                 pld: bool = False) -> Charge:
    """The certified total of Q queries of a table whose profile is ``prof`` and certified GDP
    parameter ``mu`` (or ``analytic_mu``, if smaller): √Q·μ-GDP composed exactly, and, with ``pld``
    when that misses the budget, the PLD of its own pair; the smaller."""
    if analytic_mu is not None:
        mu = min(mu, analytic_mu)
    e_gdp = gdp_epsilon(gdp_composed_mu([(mu, budget.queries)]), budget.delta) if math.isfinite(mu) else math.inf
    e_pld = None
    if pld and not e_gdp <= budget.epsilon:
        e_pld = composed_epsilon_of_profile(prof, budget)
    if e_pld is not None and e_pld < e_gdp:
        return Charge(e_pld, PLD_ACCOUNTANT, mu, e_gdp, e_pld)
    return Charge(e_gdp, GDP_ACCOUNTANT, mu, e_gdp, e_pld)


@dataclass
class _Search:
    cloud: Cloud
    budget: TotalBudget
    prior: Prior
    log: Callable[[str], None] | None
    c: np.ndarray = field(init=False)
    feasible: list = field(default_factory=list)
    charges: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.c = objective_coefficients(self.cloud.K, self.prior)[0]

    def charge(self, g: np.ndarray, analytic_mu: float | None = None, pld: bool = False) -> Charge:
        prof = self.cloud.profile(g)
        return charge_table(prof, self.cloud.gdp_mu(g, prof), self.budget, analytic_mu, pld)

    def evaluate(self, shape: str, theta: float, g: np.ndarray, analytic_mu: float | None = None) -> bool:
        ch = self.charge(g, analytic_mu, pld=shape in PLD_SHAPES)
        cand = Candidate(shape, float(theta), g, expected_signed_error(g, self.prior), ch.epsilon)
        return keep_candidate(self, cand, ch, ch.epsilon <= self.budget.epsilon,
                              f"total ε {ch.epsilon:.5g} ({ch.accountant})")

    def bisect(self, shape: str, make: Callable[[float], tuple[np.ndarray, float | None]], theta0: float,
               top: float = math.inf, rtol: float | None = None) -> None:
        """Largest feasible θ of one shape (:func:`bisect_shape`)."""
        bisect_shape(shape, make, self.evaluate, self.log, theta0, top, rtol)

    # --- the shapes ---------------------------------------------------------------------
    def threshold(self, mu: float) -> tuple[np.ndarray, float | None]:
        return gamma_threshold(self.cloud.K, 1.0 / mu), None

    def const(self, p: float) -> tuple[np.ndarray, float | None]:
        return np.full(self.cloud.K + 1, p), None

    def lp(self, eps: np.ndarray, target: np.ndarray, mu: float) -> np.ndarray:
        x0 = upper_half(gamma_threshold(self.cloud.K, 1.0 / mu))
        x = solve_target(self.cloud, self.c, eps, target, x0=x0)
        return symmetric_from_upper(x, self.cloud.K)

    def gdp(self, mu: float) -> tuple[np.ndarray, float | None]:
        eps = np.linspace(0.0, GRID_SPAN * mu, GDP_GRID)
        lp = TargetLP(self.cloud, self.c, upper_half(gamma_threshold(self.cloud.K, 1.0 / mu)))
        lp.extend(eps, gdp_delta(eps, mu))
        for _ in range(REFINE_ROUNDS):
            g = symmetric_from_upper(lp.solve(), self.cloud.K)
            new = tangent_points(self.cloud, g, mu, lp.eps)
            if new.size == 0:
                break
            lp.extend(new, gdp_delta(new, mu))
        return g, None

    def threshold_profile(self, mu: float) -> tuple[np.ndarray, float | None]:
        prof = self.cloud.profile(gamma_threshold(self.cloud.K, 1.0 / mu))
        dx, dy = np.diff(prof.x), np.diff(prof.y)
        with np.errstate(divide="ignore"):
            slopes = np.where(dx > 0, dy / np.where(dx > 0, dx, 1.0), 0.0)
        eps = np.log(slopes[slopes > 1.0])
        eps = np.unique(np.concatenate([[0.0], eps]))
        if eps.size > PROFILE_GRID:
            eps = eps[np.unique(np.linspace(0, eps.size - 1, PROFILE_GRID).round().astype(int))]
        return self.lp(eps, np.asarray(prof.delta(eps)), mu), None

    def eps_delta(self, eps0: float) -> tuple[np.ndarray, float | None]:
        d0 = 0.5 * self.budget.delta / self.budget.queries
        return self.lp(np.array([eps0]), np.array([d0]), eps0), None


def keep_candidate(search: Any, cand: Candidate, charge: object, ok: bool, note: str) -> bool:
    """Record a candidate of ``search`` (its ``feasible`` list and ``charges`` by id when ``ok``) and log
    one line; returns ``ok``."""
    if ok:
        search.feasible.append(cand)
        search.charges[id(cand)] = charge
    if search.log:
        search.log(f"{cand.family} θ={cand.parameter:.6g}: error {cand.error:.6g}, {note}"
                   f"{'' if ok else ' over budget'}")
    return ok


def bisect_shape(shape: str, make: Callable[[float], tuple[np.ndarray, Any]],
                 evaluate: Callable[[str, float, np.ndarray, Any], bool], log: Callable[[str], None] | None,
                 theta0: float, top: float = math.inf, rtol: float | None = None) -> None:
    """:func:`largest_feasible` over one shape: ``make(θ)`` gives (γ, what ``evaluate`` also takes), a
    failed LP (SolveError) counts as infeasible (logged)."""
    def ok(t: float) -> bool:
        try:
            g, extra = make(t)
        except SolveError as exc:
            if log:
                log(f"{shape} θ={t:.6g}: {exc}")
            return False
        return evaluate(shape, t, g, extra)

    largest_feasible(ok, theta0, top, rtol)


def largest_feasible(ok: Callable[[float], bool], theta0: float, top: float = math.inf,
                     rtol: float | None = None) -> None:
    """Search the largest θ with ``ok(θ)`` to relative precision ``rtol`` (default :data:`THETA_RTOL`):
    from θ0 (capped at ``top``), step down by :data:`BRACKET` until feasible and up until not (≤ 12
    steps each), then bisect geometrically.  ``ok`` records its feasible candidates itself."""
    lo = min(theta0, top)
    for _ in range(12):
        if ok(lo):
            break
        lo /= BRACKET
    else:
        return
    hi = min(lo * BRACKET, top)
    for _ in range(12):
        if hi == lo or not ok(hi):
            break
        lo, hi = hi, min(hi * BRACKET, top)
    else:
        return
    if hi == lo:
        return
    while hi > lo * (1.0 + (THETA_RTOL if rtol is None else rtol)):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)


def _finite_or_none(v: float) -> float | None:
    return v if math.isfinite(v) else None


def tangent_points(cloud: TargetCloud, g: np.ndarray, mu: float, known: np.ndarray) -> np.ndarray:
    """New grid points ε′ for a μ-GDP target: the tangents of δ_μ at the (at most :data:`TANGENTS`)
    cloud points of γ farthest above the Gaussian trade-off curve U_μ (e^{ε′} = U_μ′(x)), those not
    already in ``known``; empty when every point is below it (to 1e-12)."""
    from scipy.special import ndtri

    P, Pp = cloud.probs(g)
    x = np.concatenate([Pp.ravel(), P.ravel()])
    y = np.concatenate([P.ravel(), Pp.ravel()])
    ok = (x > 0) & (x < 1) & (y > x) & (x + y <= 1.0)
    z = ndtri(x[ok])
    gap = y[ok] - np.asarray(_gauss_power(z, mu))
    bad = gap > 1e-12
    if not bad.any():
        return np.zeros(0)
    tang = -mu * z[bad] - 0.5 * mu * mu  # ε′ of the tangent at x: e^{ε′} = U_μ′(x)
    new = tang[np.argsort(-gap[bad])[:TANGENTS]]
    return np.setdiff1d(new[new > 0], known)


def _gauss_power(z: np.ndarray, mu: float) -> np.ndarray:
    from scipy.special import ndtr

    return ndtr(z + mu)


def _per_query_params(g: np.ndarray, K: int, member: MemberPrivacy, prof: PrivacyProfile,
                      delta_q: float) -> tuple[DisjointParams, float]:
    """(DisjointParams at the per-query (ε_q, δ_q) the profile allows, the certificate's violation):
    every table also carries an ordinary per-query certificate (:func:`certify_disjoint`)."""
    eps_q = prof.epsilon(delta_q)
    if not math.isfinite(eps_q):
        delta_q = min(0.5, max(delta_q, 2.0 * prof.infinite_loss_mass))
        eps_q = prof.epsilon(delta_q)
    eps_q = max(eps_q, 1e-9) * (1.0 + 1e-9) + 1e-12
    for _ in range(20):
        p = DisjointParams(K, member, min(eps_q, 700.0), delta_q)
        cert = certify_disjoint(g, p)
        if cert.certified:
            return p, cert.violation
        eps_q *= 1.01
    raise CertificationError("the designed γ has no per-query (ε, δ) certificate")


def design_disjoint(K: int, member: MemberPrivacy, budget: TotalBudget, prior: Prior | None = None, *,
                    shapes: tuple[str, ...] = SHAPES, log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The γ of smallest expected error whose certified Q-fold composition meets ``budget``, for K
    members on disjoint shards (module docstring).  γ ≡ 1 (the plain majority) when it fits.

    Args:
        K: the number of members (odd).
        member: the members' privacy (:class:`~darrm.NonPrivate`, :class:`~darrm.LocalRR`,
            :class:`~darrm.ApproxDP`).
        budget: the total (ε, δ) over Q queries, members answering with fresh randomness.
        prior: the objective's prior (default i.i.d. mean 0.75).
        shapes: the shapes searched (a non-empty subset of :data:`SHAPES`).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.budget.design.BudgetDesign`: its table (family "budget",
        ``info["total_budget"]``: the budget, the charged total and its accountant, the GDP target
        μ and the PLD total; ``info["design"]``: the winner, each shape's best and the time).

    Raises:
        ParameterError: a bad argument.
        CertificationError: no shape meets the budget.
    """
    t0 = time.perf_counter()
    K = odd_count("K", K)
    instance("member", member, MemberPrivacy, "a darrm NonPrivate, LocalRR or ApproxDP")
    instance("budget", budget, TotalBudget, "a darrm.TotalBudget")
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior")
    prior.check_K(K)
    if not isinstance(shapes, (tuple, list)) or not shapes or any(sh not in SHAPES for sh in shapes):
        raise ParameterError("shapes", f"must be a non-empty subset of {SHAPES}, got {shapes!r}")
    s = _Search(Cloud(K, member), budget, prior, log)
    ones = np.ones(K + 1)
    majority = s.evaluate("majority", 1.0, ones)
    if not majority:
        mu0 = gdp_mu_for_total(budget.epsilon, budget.delta, budget.queries)
        if "threshold" in shapes:
            s.bisect("threshold", s.threshold, mu0, rtol=THRESHOLD_RTOL)
        if "const" in shapes:
            s.bisect("const", s.const, math.tanh(0.5 * mu0), top=1.0)
        if "gdp" in shapes:
            s.bisect("gdp", s.gdp, mu0)
        if "threshold-profile" in shapes:
            s.bisect("threshold-profile", s.threshold_profile, mu0)
        if "eps-delta" in shapes:
            s.bisect("eps-delta", s.eps_delta, mu0)
    best: dict[str, Candidate] = {}
    for cand in s.feasible:
        if cand.family not in best or cand.error < best[cand.family].error:
            best[cand.family] = cand
    if not best:
        raise CertificationError(f"no γ of the shapes {tuple(shapes)} meets ε_total = {budget.epsilon} at "
                                 f"δ_total = {budget.delta} over {budget.queries} queries")
    winner = best["majority"] if "majority" in best else min(best.values(), key=lambda c: c.error)
    g = winner.gamma
    prof = s.cloud.profile(g)
    ch = s.charges[id(winner)]
    params, violation = _per_query_params(g, K, member, prof, budget.delta / budget.queries)
    table = GammaTable(params, g, "budget", violation, prior.to_dict(), expected_signed_error(g, prior),
                       solver="total-budget", status=None)
    # the certified table's own charge by the accountant (what every door composes): its PLD, its
    # Kairouz–Oh–Viswanath points and the same GDP certificate the search charged (read from the table),
    # so at most the search's charge; recorded as it is, the record and the doors agree
    pld = charged = charged_total(table, budget)
    accountant = GDP_ACCOUNTANT if ch.gdp_epsilon <= charged else PLD_ACCOUNTANT
    if not charged <= budget.epsilon:  # the search's charge was rigorous; a bug if reached
        raise CertificationError(f"the winning γ composes to ε = {charged} > {budget.epsilon}")
    f = _finite_or_none
    base = min((c for k, c in best.items() if k in BASELINE_SHAPES), key=lambda c: c.error, default=None)
    info = {"total_budget": {**budget.to_dict(), "composed_epsilon": charged, "accountant": accountant,
                             "target": {"shape": "gdp", "mu": f(ch.gdp_mu)},
                             "gdp_epsilon": f(ch.gdp_epsilon), "pld_epsilon": f(pld)},
            "design": {"winner": winner.to_dict(), "majority_fits": "majority" in best,
                       "baseline_error": f(base.error) if base is not None else None,
                       "improvement": f(base.error - winner.error) if base is not None else None,
                       "best": {k: c.to_dict() for k, c in best.items()},
                       "seconds": time.perf_counter() - t0}}
    return BudgetDesign(dataclasses.replace(table, info=info), winner, best, baselines=BASELINE_SHAPES)


def composed_epsilon_of_profile(profile: PrivacyProfile, budget: TotalBudget) -> float:
    """The accountant's total of Q queries with this profile (fresh members,
    :func:`darrm.accounting.queries.fresh_bound`: the PLD of its dominating pair and the closed forms
    at points of the profile); inf where it cannot be computed (the candidate is then infeasible)."""
    try:
        return fresh_bound([(profile, budget.queries)], budget.delta, True).epsilon
    except ParameterError:
        return math.inf


def design(params: DisjointParams, budget: TotalBudget, prior: Prior | None = None, *,
           log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The registered designer (:func:`darrm.accounting.budget.register_designer`):
    :func:`design_disjoint` for the members of ``params`` (its per-query target is replaced by the budget).

    Raises:
        ParameterError: a bad argument.
        CertificationError: no shape meets the budget."""
    instance("params", params, DisjointParams, "a darrm.DisjointParams")
    return design_disjoint(params.K, params.member, budget, prior, log=log)


def verify_disjoint(table: GammaTable) -> float:
    """Re-check a disjoint-members table's recorded total: the accountant's total of the recorded
    queries at the recorded δ (:func:`darrm.accounting.budget.charge.charged_total`: the PLD of the
    table's pair, its Kairouz–Oh–Viswanath points and its certified Gaussian-DP dominance, which
    reproduces a GDP charge, :func:`darrm.accounting.queries.gdp_bound`), recomputed from the table
    alone (the record's μ is only checked against the table's certified μ, never used: an edited record
    cannot lower the total); it must meet the budget and be at most the record
    (:func:`~darrm.accounting.budget.charge.check_recorded`).

    Returns:
        The re-checked total ε (what every door charges the recorded queries).

    Raises:
        CertificationError: no or a malformed record, or one the table does not meet."""
    rec = recorded_budget(table)
    if rec is None:
        raise CertificationError("no total budget is recorded in the table")
    instance("table", table.params, DisjointParams, "a table of members on disjoint shards")
    budget, tb = rec
    try:
        target = tb["target"]
        mu_rec = math.inf if target["mu"] is None else float(target["mu"])
        charged = float(tb["composed_epsilon"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    mu = table_gdp(table)
    if not mu <= mu_rec * (1.0 + RECORD_RTOL):  # a record the table contradicts is refused, never used
        raise CertificationError(f"the table is {mu:.9g}-GDP per query, not the recorded target μ = {mu_rec:.9g}")
    return check_recorded(charged_total(table, budget), charged, budget)

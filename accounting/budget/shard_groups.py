"""γ for records with their own budgets (record groups copied into r_g shards), designed for one total
budget per record group over Q queries.

**The problem.**  :mod:`darrm.models.shard_groups`: K members on shards, each record of group g copied
into r_g of them, group g owed (ε_g,total, δ_g,total) over the same Q queries (members answering with
fresh randomness).  One γ(L) answers every query; a record of group g sees the Q-fold composition of
that γ's *group-g* pair (:func:`darrm.models.shard_groups.profile.record_group_profiles`: the worst
configurations for one record of group g, a multiset of its r_g copies' vertices and the number n of
unchanged members at the upper end, both outputs, both directions).  The per-query design of
:func:`darrm.models.shard_groups.solve_gamma_opt_shard_groups` asks each group for a per-query
(ε_q,g, δ_q) whose generic composition meets its total: nearly a pure-ε constraint, which γ pays for
far from the threshold, while a Gaussian-shaped profile composes as √Q.

**The design constraint.**  Group g's profile is dominated by a target T_g whose Q-fold composition
meets (ε_g,total, δ_g,total): each group-g configuration, output o and direction gives a point
(x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) affine in γ, and the rows y − e^{ε′}·x ≤ T_g(ε′) at grid points ε′
of group g are linear in x = γ(mid..K).  Every group's rows enter one LP
(:class:`~darrm.accounting.budget.disjoint.TargetLP` with one part per group,
:class:`RecordGroupCloud`).  The grid is an outer approximation: the LP never carries the claim.

**Shapes** (θ scales every group's parameter together; the largest θ whose every group meets its
total is searched, :func:`~darrm.accounting.budget.disjoint.largest_feasible`):

* ``threshold`` — the Gaussian threshold γ(L) = 2Φ(|L − K/2|/s) − 1 (binary GNMax on the count), θ = 1/s.
  Individualized PATE's *upsampling* GNMax with σ = max_g r_g·σ(ε_g) is this γ (a record of group g
  moves the count by at most r_g, so it is (r_g/s)-GDP per query for group g; its calibration by the
  exact Gaussian composition, s = max_g r_g·√Q/μ_g,total, is the search's starting point).  A baseline.
  GNMax *weighting* (votes weighted per teacher group) is not in this family: γ reads the unweighted
  count L of members that each hold copies of several groups' records;
* ``const`` — randomised response γ ≡ c, θ = c.  A baseline;
* ``per-query`` — the per-query design with the generic composition (what the package offered
  before): γ_opt of :func:`~darrm.models.shard_groups.solve_gamma_opt_shard_groups` at each group's
  (ε_q,g, δ_q,g = δ_g,total/(2Q)), ε_q,g the largest whose optimal homogeneous composition
  (:func:`darrm.accounting.composition.optimal_homogeneous_epsilon`) meets ε_g,total.  Certified per
  query, so it meets every total by construction.  A baseline, evaluated once (θ = 1);
* ``gdp`` — the LP under group-wise μ_g-GDP targets, μ_g = θ·μ⁰_g with μ⁰_g the per-query μ whose
  Q-fold composition (√Q·μ-GDP) meets group g's total; the grids refined at the tangent points of the
  cloud points the exact check finds above each group's Gaussian curve;
* ``eps-delta`` — the LP under one (θ·ε_q,g, δ_q,g) pair per group: per-query γ_opt at a scaled ε.

**Certification (what is charged).**  Each candidate is charged, group by group, the smallest of
rigorous totals: (1) its certified GDP parameter μ*_g (:func:`darrm.budget.cloud.points_gdp_mu` on
group g's configurations, rounded outward) composed exactly (√Q·μ*_g, turned into ε at δ_g,total in
mpmath); (2) the Q-fold PLD composition of group g's own dominating pair
(:func:`~darrm.accounting.budget.disjoint.composed_epsilon_of_profile`, pessimistic), for the shapes
whose GDP charge is loose; (3) for the per-query shapes, the optimal homogeneous composition of Q
(ε_q,g, δ_q,g)-DP queries, δ_q,g either certified by the model's certificate at that target or read
from group g's outward-rounded profile.  A candidate is feasible iff every group's charge meets its
total.  Because the baselines are candidates, the design is never worse (in expected error under the
prior) than upsampling GNMax, RR or the per-query design at equal per-group totals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from darrm.budget.cloud import points_gdp_mu
from darrm.budget.design import BudgetDesign, Candidate
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.budget.targets import gdp_delta, gdp_mu_for_total
from darrm.budget.verify import GDP_ACCOUNTANT, PLD_ACCOUNTANT, RECORD_RTOL
from darrm.errors import CertificationError, ParameterError, SolveError
from darrm.gamma import gamma_threshold, symmetric_from_upper, upper_half, validate_gamma
from darrm.mechanism import output_weights
from darrm.models.shard_groups.certificate import (
    _alpha,
    certify_shard_groups,
    changed_pmfs,
    shifted_expectations,
    vertex_multisets,
)
from darrm.models.shard_groups.params import RecordGroup, ShardGroupParams
from darrm.models.shard_groups.profile import shard_group_profile
from darrm.models.shard_groups.solver import solve_gamma_opt_shard_groups
from darrm.prior import IIDPrior, Prior
from darrm.privacy.condition import folded_rows
from darrm.privacy.profile import PrivacyProfile
from darrm.solver.objective import expected_signed_error, objective_coefficients
from darrm.table import GammaTable
from darrm.validation import instance

from ..composition import optimal_homogeneous_epsilon
from .disjoint import (
    GDP_GRID,
    GRID_SPAN,
    THRESHOLD_RTOL,
    Charge,
    TargetLP,
    charge_table,
    largest_feasible,
    tangent_points,
)
from .shared import generic_epsilon

__all__ = ["GENERIC_ACCOUNTANT", "RecordGroupCloud", "design", "per_query_epsilon", "verify"]

#: the shapes searched, baselines first
BASELINE_SHAPES = ("threshold", "const", "per-query")
TARGET_SHAPES = ("gdp", "eps-delta")
SHAPES = BASELINE_SHAPES + TARGET_SHAPES
#: the per-query shapes' share of δ_g,total/Q left to each query's δ (the rest to the composition's ε)
DELTA_SHARE = 0.5
#: the charge of a per-query shape: Q (ε_q, δ_q)-DP queries, composed by the optimal homogeneous bound
GENERIC_ACCOUNTANT = "generic-per-query"
#: refinement rounds of the ``gdp`` grids (each adds every group's tangent points): more than the disjoint
#: designer's, as the certified μ_g of every group must come close to its target at once
REFINE_ROUNDS = 10
#: the LP shapes' θ to this relative precision (an error step of 1e-3 in θ is ~1e-4 in error at K = 101)
LP_RTOL = 1e-5
#: bisection steps of :func:`per_query_epsilon`
PER_QUERY_STEPS = 60


def per_query_epsilon(budget: TotalBudget, delta_q: float) -> float:
    """The largest ε_q (to :data:`PER_QUERY_STEPS` bisection steps, from below) such that Q
    (ε_q, ``delta_q``)-DP queries compose to ε ≤ ``budget.epsilon`` at ``budget.delta`` by the optimal
    homogeneous composition (Kairouz, Oh & Viswanath 2017, Theorem 3.3; exact).

    Raises:
        ParameterError: no ε_q > 0 meets the budget (``delta_q`` too large)."""
    def total(e: float) -> float:
        return float(optimal_homogeneous_epsilon(e, delta_q, budget.queries, budget.delta))

    lo, hi = 0.0, budget.epsilon
    if total(hi) <= budget.epsilon:
        return hi
    for _ in range(PER_QUERY_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if total(mid) <= budget.epsilon else (lo, mid)
    if lo <= 0.0:
        raise ParameterError("budget", f"no per-query ε meets ε_total = {budget.epsilon} at δ_q = {delta_q}")
    return lo


class RecordGroupCloud:
    """The worst configurations of one query for the records of one group (r copies): a multiset of
    the r changed members' vertices (row m) and the number n of unchanged members at the upper end,
    each output and direction (:mod:`darrm.models.shard_groups`'s reduction), as functions of γ."""

    def __init__(self, params: ShardGroupParams, group: int):
        self.params = params.record_group_params(group)
        self.K, self.copies = params.K, params.groups[group].copies
        vs, vc = params.member.changed_vertices(), params.member.changed_complements()
        ms = vertex_multisets(vs.shape[0], self.copies)
        self.pi, self.pip = changed_pmfs(vs[:, 0], vc[:, 0], ms), changed_pmfs(vs[:, 1], vc[:, 1], ms)

    def probs(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, P′), each (2, M, K − r + 1): Pr[A(D)=o] and Pr[A(D′)=o] for o = 0, 1 at every (multiset, n)
        (the arithmetic of :func:`darrm.models.shard_groups.certificate.violations`)."""
        w1 = output_weights(g)
        P, Pp = [], []
        for w in (w1[::-1], w1):
            E = shifted_expectations(self.params, self.copies, w)
            P.append(self.pi @ E)
            Pp.append(self.pip @ E)
        return np.stack(P), np.stack(Pp)

    def row(self, o: int, d: int, m: int, n: int, eps: float) -> np.ndarray:
        """The folded row r with r·x ≤ e^{ε′} − 1 + 2T(ε′) of output o, direction d, multiset m, n."""
        a = _alpha(self.params, self.copies, n, self.pi[m])
        ap = _alpha(self.params, self.copies, n, self.pip[m])
        if d == 1:
            a, ap = ap, a
        r = folded_rows(a[None, :], ap[None, :], math.exp(eps))[0]
        return r if o == 1 else -r

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        """Group g's exact profile, rounded outward (:func:`darrm.models.shard_groups.profile.shard_group_profile`)."""
        return shard_group_profile(g, self.params, None)

    def gdp_mu(self, g: np.ndarray, prof: PrivacyProfile) -> float:
        """Group g's certified μ (:func:`darrm.budget.cloud.points_gdp_mu`)."""
        return points_gdp_mu(*self.probs(g), prof)


def _charge_group(cloud: RecordGroupCloud, g: np.ndarray, budget: TotalBudget, pld: bool,
                  per_query: tuple[float, float] | None) -> tuple[Charge, tuple[float, float] | None]:
    """Group g's charge (module docstring) and the per-query pair it used, if that was smallest.
    ``per_query`` = (ε_q, δ_q) certified for this group, or (ε_q, nan): δ_q read from the profile."""
    prof = cloud.profile(g)
    ch = charge_table(prof, cloud.gdp_mu(g, prof), budget, pld=pld)
    if per_query is None or ch.epsilon <= budget.epsilon:
        return ch, None
    eq, dq = per_query
    if math.isnan(dq):
        dq = float(prof.delta(eq))
        e = generic_epsilon(prof, eq, budget)
    else:
        e = float(optimal_homogeneous_epsilon(eq, dq, budget.queries, budget.delta))
    if e < ch.epsilon:
        return Charge(e, GENERIC_ACCOUNTANT, ch.gdp_mu, ch.gdp_epsilon, ch.pld_epsilon), (eq, dq)
    return ch, None


@dataclass
class _Search:
    params: ShardGroupParams
    budgets: GroupBudgets
    prior: Prior
    log: Callable[[str], None] | None
    clouds: list = field(init=False)
    c: np.ndarray = field(init=False)
    mu0: np.ndarray = field(init=False)
    delta_q: np.ndarray = field(init=False)
    eps_q0: np.ndarray = field(init=False)
    feasible: list = field(default_factory=list)
    charges: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.clouds = [RecordGroupCloud(self.params, i) for i in range(len(self.params.groups))]
        self.c = objective_coefficients(self.params.K, self.prior)[0]
        self.mu0 = np.array([gdp_mu_for_total(b.epsilon, b.delta, b.queries) for b in self.budgets.budgets])
        self.delta_q = np.array([DELTA_SHARE * b.delta / b.queries for b in self.budgets.budgets])
        self.eps_q0 = np.array([per_query_epsilon(b, d) for b, d in zip(self.budgets.budgets, self.delta_q,
                                                                          strict=True)])
        self.copies = np.array([grp.copies for grp in self.params.groups], dtype=np.float64)

    def evaluate(self, shape: str, theta: float, g: np.ndarray,
                 per_query: list[tuple[float, float]] | None = None) -> bool:
        charges: list[tuple[Charge, tuple[float, float] | None]] = []
        for i, (cloud, b) in enumerate(zip(self.clouds, self.budgets.budgets, strict=True)):
            charges.append(_charge_group(cloud, g, b, True, None if per_query is None else per_query[i]))
            if not charges[-1][0].epsilon <= b.epsilon:
                break  # infeasible: the other groups need not be charged
        ok = len(charges) == len(self.clouds) and all(ch.epsilon <= b.epsilon for (ch, _), b
                                                      in zip(charges, self.budgets.budgets, strict=True))
        worst = max(ch.epsilon / b.epsilon for (ch, _), b in zip(charges, self.budgets.budgets, strict=False))
        cand = Candidate(shape, float(theta), g, expected_signed_error(g, self.prior), worst)
        if ok:
            self.feasible.append(cand)
            self.charges[id(cand)] = charges
        if self.log:
            self.log(f"{shape} θ={theta:.6g}: error {cand.error:.6g}, largest share of a group's ε_total "
                     f"{worst:.5g}{'' if ok else ' over budget'}")
        return ok

    def bisect(self, shape: str, make: Callable[[float], tuple[np.ndarray, list | None]], theta0: float,
               top: float = math.inf, rtol: float | None = None) -> None:
        def ok(t: float) -> bool:
            try:
                g, pq = make(t)
            except SolveError as exc:
                if self.log:
                    self.log(f"{shape} θ={t:.6g}: {exc}")
                return False
            return self.evaluate(shape, t, g, pq)

        largest_feasible(ok, theta0, top, rtol)

    # --- the shapes ---------------------------------------------------------------------
    def threshold(self, inv_s: float) -> tuple[np.ndarray, None]:
        return gamma_threshold(self.params.K, 1.0 / inv_s), None

    def const(self, p: float) -> tuple[np.ndarray, None]:
        return np.full(self.params.K + 1, p), None

    def x0(self, mu: np.ndarray) -> np.ndarray:
        """The Gaussian threshold meeting every group's μ_g (s = max_g r_g/μ_g): the LPs' start."""
        return upper_half(gamma_threshold(self.params.K, float(np.max(self.copies / mu))))

    def gdp(self, theta: float) -> tuple[np.ndarray, None]:
        mu = theta * self.mu0
        lp = TargetLP(self.clouds, self.c, self.x0(mu))
        for i, m in enumerate(mu):
            eps = np.linspace(0.0, GRID_SPAN * m, GDP_GRID)
            lp.extend(eps, gdp_delta(eps, m), part=i)
        for _ in range(REFINE_ROUNDS):
            g = symmetric_from_upper(lp.solve(), self.params.K)
            added = 0
            for i, (cloud, m) in enumerate(zip(self.clouds, mu, strict=True)):
                new = tangent_points(cloud, g, float(m), lp.grids[i][0])
                lp.extend(new, gdp_delta(new, float(m)), part=i)
                added += new.size
            if not added:
                break
        return g, None

    def eps_delta(self, theta: float) -> tuple[np.ndarray, list]:
        eq = theta * self.eps_q0
        lp = TargetLP(self.clouds, self.c, self.x0(np.array([gdp_mu_for_total(b.epsilon, b.delta, b.queries)
                                                             for b in self.budgets.budgets])))
        for i, (e, d) in enumerate(zip(eq, self.delta_q, strict=True)):
            lp.extend(np.array([e]), np.array([d]), part=i)
        g = symmetric_from_upper(lp.solve(), self.params.K)
        return g, [(float(e), math.nan) for e in eq]

    def per_query(self) -> GammaTable:
        """The per-query design with the generic composition (certified; the baseline)."""
        p = ShardGroupParams(self.params.K, self.params.member,
                             [RecordGroup(grp.copies, float(e), float(d)) for grp, e, d
                              in zip(self.params.groups, self.eps_q0, self.delta_q, strict=True)])
        return solve_gamma_opt_shard_groups(p, self.prior)


def _check(params: ShardGroupParams, budgets: object) -> GroupBudgets:
    instance("params", params, ShardGroupParams, "a darrm.ShardGroupParams")
    if isinstance(budgets, TotalBudget):
        budgets = GroupBudgets((budgets,) * len(params.groups))
    b = instance("budget", budgets, GroupBudgets, "a darrm.TotalBudget or a GroupBudgets (one per record group)")
    if len(b.budgets) != len(params.groups):
        raise ParameterError("budget", f"must hold one total budget per record group ({len(params.groups)}), got "
                                       f"{len(b.budgets)}")
    return b


def _per_query_params(g: np.ndarray, params: ShardGroupParams, profiles: list[PrivacyProfile],
                      budgets: GroupBudgets) -> tuple[ShardGroupParams, float]:
    """(ShardGroupParams at the per-query (ε_q,g, δ_g,total/Q) each group's profile allows, the
    certificate's violation): every designed table also carries an ordinary per-query certificate."""
    targets: list[list] = []
    for grp, prof, b in zip(params.groups, profiles, budgets.budgets, strict=True):
        dq = b.delta / b.queries
        eq = prof.epsilon(dq)
        if not math.isfinite(eq):
            dq = min(0.5, max(dq, 2.0 * prof.infinite_loss_mass))
            eq = prof.epsilon(dq)
        targets.append([grp.copies, min(700.0, max(eq, 1e-9) * (1.0 + 1e-9) + 1e-12), dq])
    for _ in range(20):
        p = ShardGroupParams(params.K, params.member, [RecordGroup(*t) for t in targets])
        cert = certify_shard_groups(g, p)
        if cert.certified:
            return p, cert.violation
        for t in targets:
            t[1] = min(700.0, t[1] * 1.01)
    raise CertificationError("the designed γ has no per-query (ε, δ) certificate")


def design(params: ShardGroupParams, budget: TotalBudget | GroupBudgets, prior: Prior | None = None, *,
           shapes: tuple[str, ...] = SHAPES, log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The γ(L) of smallest expected error whose certified Q-fold composition meets every record
    group's total (module docstring).  γ ≡ 1 (the plain majority) when it fits.

    Args:
        params: the ensemble and its record groups (their per-query targets are not used: the budgets
            replace them).
        budget: one :class:`~darrm.TotalBudget` per record group (:class:`~darrm.budget.spec.GroupBudgets`),
            or one TotalBudget for every group.
        prior: the objective's prior (default i.i.d. mean 0.75).
        shapes: the shapes searched (a non-empty subset of :data:`SHAPES`).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.budget.design.BudgetDesign`: its table (family "budget", parameters at the
        per-query targets its profiles allow; ``info["group_budgets"]``: per group its budget, the
        charged total, its accountant, the certified GDP μ, the PLD total and the per-query pair of a
        generic charge; ``info["design"]``: the winner, each shape's best and the time).

    Raises:
        ParameterError: a bad argument.
        CertificationError: no shape meets every group's budget.
    """
    t0 = time.perf_counter()
    budgets = _check(params, budget)
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior")
    prior.check_K(params.K)
    if not isinstance(shapes, (tuple, list)) or not shapes or any(sh not in SHAPES for sh in shapes):
        raise ParameterError("shapes", f"must be a non-empty subset of {SHAPES}, got {shapes!r}")
    s = _Search(params, budgets, prior, log)
    if not s.evaluate("majority", 1.0, np.ones(params.K + 1)):
        if "per-query" in shapes:
            s.evaluate("per-query", 1.0, s.per_query().gamma,
                       [(float(e), float(d)) for e, d in zip(s.eps_q0, s.delta_q, strict=True)])
        if "threshold" in shapes:
            s.bisect("threshold", s.threshold, float(np.min(s.mu0 / s.copies)), rtol=THRESHOLD_RTOL)
        if "const" in shapes:
            s.bisect("const", s.const, math.tanh(0.5 * float(np.min(s.mu0 / s.copies))), top=1.0)
        if "gdp" in shapes:
            s.bisect("gdp", s.gdp, 1.0, rtol=LP_RTOL)
        if "eps-delta" in shapes:
            s.bisect("eps-delta", s.eps_delta, 1.0, rtol=LP_RTOL)
    best: dict[str, Candidate] = {}
    for cand in s.feasible:
        if cand.family not in best or cand.error < best[cand.family].error:
            best[cand.family] = cand
    if not best:
        raise CertificationError(f"no γ of the shapes {tuple(shapes)} meets every record group's total budget")
    winner = best["majority"] if "majority" in best else min(best.values(), key=lambda c: c.error)
    g = validate_gamma(winner.gamma, params.K)
    charges = s.charges[id(winner)]
    profiles = [cloud.profile(g) for cloud in s.clouds]
    per_params: Any = None  # the table's parameters (GammaTable's annotation predates this model)
    per_params, violation = _per_query_params(g, params, profiles, budgets)
    groups = []
    for b, (ch, pq) in zip(budgets.budgets, charges, strict=True):
        if not ch.epsilon <= b.epsilon:  # the search's charge was rigorous; a bug if reached
            raise CertificationError(f"the winning γ composes to ε = {ch.epsilon} > {b.epsilon} for a group")
        groups.append({**b.to_dict(), "composed_epsilon": ch.epsilon, "accountant": ch.accountant,
                       "target": {"shape": "gdp", "mu": ch.gdp_mu if math.isfinite(ch.gdp_mu) else None},
                       "gdp_epsilon": ch.gdp_epsilon if math.isfinite(ch.gdp_epsilon) else None,
                       "pld_epsilon": ch.pld_epsilon if ch.pld_epsilon is not None and math.isfinite(ch.pld_epsilon)
                       else None,
                       "per_query": None if pq is None else list(pq)})
    base = min((c for k, c in best.items() if k in BASELINE_SHAPES), key=lambda c: c.error, default=None)
    info = {"group_budgets": {"queries": budgets.queries, "groups": groups},
            "design": {"winner": winner.to_dict(), "majority_fits": "majority" in best,
                       "baseline_error": None if base is None else base.error,
                       "improvement": None if base is None else base.error - winner.error,
                       "best": {k: c.to_dict() for k, c in best.items()},
                       "seconds": time.perf_counter() - t0}}
    table = GammaTable(per_params, g, "budget", violation, prior.to_dict(), expected_signed_error(g, prior),
                       solver="total-budget", status=None, info=info)
    return BudgetDesign(table, winner, best, baselines=BASELINE_SHAPES)


def verify(table: GammaTable) -> float:
    """Re-certify a designed record-groups table's per-group totals from its γ alone: for each group,
    the certified GDP μ (never above the recorded target) composed exactly, the Q-fold PLD of the
    group's own pair, or the generic composition of the recorded per-query pair (its δ_q re-checked
    by the certificate at that target, or against the group's profile), whichever the record names;
    each must meet the group's budget and equal the record.

    Args:
        table: a γ table of :class:`~darrm.ShardGroupParams` with ``info["group_budgets"]``.

    Returns:
        The largest re-certified total ε over the groups.

    Raises:
        CertificationError: a malformed record, or a group's total above its budget or the record.
        ParameterError: ``table`` is not a record-groups γ table.
    """
    from darrm.budget.targets import gdp_epsilon

    from .disjoint import composed_epsilon_of_profile

    instance("table", table, GammaTable, "a darrm.GammaTable")
    params = instance("table.params", table.params, ShardGroupParams, "record groups (darrm.ShardGroupParams)")
    try:
        rec = table.info["group_budgets"]
        groups = rec["groups"]
        budgets = GroupBudgets(tuple(TotalBudget.from_dict(gr) for gr in groups))
        if len(groups) != len(params.groups):
            raise ValueError(f"{len(groups)} budgets for {len(params.groups)} record groups")
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed group_budgets record: {exc}") from None
    worst = 0.0
    for i, (gr, b) in enumerate(zip(groups, budgets.budgets, strict=True)):
        cloud = RecordGroupCloud(params, i)
        prof = cloud.profile(table.gamma)
        try:
            charged, accountant = float(gr["composed_epsilon"]), gr["accountant"]
            mu_rec = gr["target"]["mu"]
            pq = gr.get("per_query")
        except (KeyError, TypeError, ValueError) as exc:
            raise CertificationError(f"malformed group_budgets record of group {i}: {exc}") from None
        mu = cloud.gdp_mu(table.gamma, prof)
        if mu_rec is not None and not mu <= float(mu_rec) * (1.0 + RECORD_RTOL):
            raise CertificationError(f"group {i}: the table is {mu:.9g}-GDP per query, not the recorded μ = {mu_rec}")
        if accountant == GDP_ACCOUNTANT:
            eps = gdp_epsilon(mu * math.sqrt(b.queries), b.delta) if math.isfinite(mu) else math.inf
        elif accountant == PLD_ACCOUNTANT:
            eps = composed_epsilon_of_profile(prof, b)
        elif accountant == GENERIC_ACCOUNTANT and isinstance(pq, list) and len(pq) == 2:
            eq, dq = float(pq[0]), float(pq[1])
            at = ShardGroupParams(params.K, params.member, [(params.groups[i].copies, eq, dq)])
            if not (certify_shard_groups(table.gamma, at).certified or float(prof.delta(eq)) <= dq):
                raise CertificationError(f"group {i}: the table is not ({eq}, {dq})-DP per query as recorded")
            eps = float(optimal_homogeneous_epsilon(eq, dq, b.queries, b.delta))
        else:
            raise CertificationError(f"group {i}: unknown accountant {accountant!r} in the group_budgets record")
        if not eps <= b.epsilon:
            raise CertificationError(f"group {i}: {b.queries} queries compose to ε = {eps:.6g} at δ = {b.delta:g}, "
                                     f"above its budget ε_total = {b.epsilon:g}")
        if not math.isclose(eps, charged, rel_tol=RECORD_RTOL, abs_tol=1e-12):
            raise CertificationError(f"group {i}: recorded total ε {charged!r} differs from the recomputed {eps!r}")
        worst = max(worst, eps)
    return worst

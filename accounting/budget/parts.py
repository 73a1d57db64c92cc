"""The total-budget search over γ(L) when a query's privacy has several *parts*, each with its own worst
configurations and its own total budget: the record groups of :mod:`.shard_groups` (each group's
records owed their own total), or one part for every record (:mod:`.groups`).

**The design constraint.**  Part g's profile is dominated by a target T_g whose Q-fold composition
meets (ε_g,total, δ_g,total): each configuration of part g, output o and direction gives a point
(x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) affine in γ, and the rows y − e^{ε′}·x ≤ T_g(ε′) at grid points ε′ of
part g are linear in x = γ(mid..K).  Every part's rows enter one LP
(:class:`~darrm.accounting.budget.disjoint.TargetLP`, one part per cloud).  The grid is an outer
approximation: the LP never carries the claim.

**Shapes** (θ scales every part's parameter together; the largest θ at which every part meets its
total is searched, :func:`~darrm.accounting.budget.disjoint.largest_feasible`):

* ``threshold`` — the Gaussian threshold γ(L) = 2Φ(|L − K/2|/s) − 1 (binary GNMax on the count),
  θ = 1/s, started where a record moving the count by at most r_g is (r_g/s)-GDP per query at the
  exact Gaussian calibration of every part (models that give the sensitivities r_g).  A baseline;
* ``const`` — randomised response γ ≡ c, θ = c.  A baseline;
* ``per-query`` — the model's certified per-query γ_opt at each part's (ε_q,g, δ_q,g =
  :data:`DELTA_SHARE`·δ_g,total/Q), ε_q,g the largest whose optimal homogeneous composition
  (:func:`darrm.accounting.composition.optimal_homogeneous_epsilon`) meets ε_g,total
  (:func:`per_query_epsilon`): the per-query design with the generic composition, feasible by
  construction.  A baseline (θ = 1);
* ``gdp`` — the LP under part-wise μ_g-GDP targets, μ_g = θ·μ⁰_g with μ⁰_g the per-query μ whose Q-fold
  composition (√Q·μ-GDP) meets part g's total; each grid refined at the tangent points of the cloud
  points the exact check finds above its Gaussian curve (:data:`REFINE_ROUNDS`);
* ``eps-delta`` — the LP under one (θ·ε_q,g, δ_q,g) pair per part: per-query γ_opt at every real
  ε_q = θ·ε_q,g (the per-query family the ``per-query`` baseline is one point of).

**Certification (what is charged).**  Each candidate is charged, part by part, the smallest of rigorous
totals: (1) the part's certified GDP parameter μ*_g (:func:`darrm.budget.cloud.points_gdp_mu`, rounded
outward) composed exactly (√Q·μ*_g, turned into ε at δ_g,total in mpmath); (2) the Q-fold PLD composition
of the part's own dominating pair (:func:`~darrm.accounting.budget.disjoint.composed_epsilon_of_profile`,
pessimistic); (3) for the per-query shapes, the optimal homogeneous composition of Q (ε_q,g, δ_q,g)-DP
queries, δ_q,g certified by the model's certificate at that target (``per-query``) or read from the
part's outward-rounded profile (``eps-delta``).  A candidate is feasible iff every part meets its total;
since the baselines are candidates, the design is never worse than any of them in expected error under
the prior at equal totals.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from darrm.budget.design import BudgetDesign, Candidate
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.budget.targets import gdp_delta, gdp_mu_for_total
from darrm.budget.verify import GDP_ACCOUNTANT, PLD_ACCOUNTANT, RECORD_RTOL
from darrm.errors import CertificationError, ParameterError
from darrm.gamma import gamma_threshold
from darrm.prior import IIDPrior, Prior
from darrm.privacy.profile import PrivacyProfile
from darrm.solver.finalize import TableForm, total_form
from darrm.table import GammaTable
from darrm.validation import instance

from ..composition import optimal_homogeneous_epsilon
from ..queries import group_parts_of, group_total, recorded_pair
from .charge import charged_total, check_recorded, profile_generic_epsilon
from .disjoint import (
    GDP_GRID,
    GRID_SPAN,
    THRESHOLD_RTOL,
    Charge,
    TargetCloud,
    TargetLP,
    bisect_shape,
    charge_table,
    keep_candidate,
    tangent_points,
)

__all__ = ["GENERIC_ACCOUNTANT", "SHAPES", "DesignCloud", "PartSearch", "certified_targets", "design_parts",
           "part_budgets", "per_query_epsilon", "verified_part_totals", "verify_parts"]

#: the shapes searched, baselines first
BASELINE_SHAPES = ("threshold", "const", "per-query")
TARGET_SHAPES = ("gdp", "eps-delta")
SHAPES = BASELINE_SHAPES + TARGET_SHAPES
#: the per-query shapes' share of δ_g,total/Q left to each query's δ (the rest to the composition's ε)
DELTA_SHARE = 0.5
#: the charge of a per-query shape: Q (ε_q, δ_q)-DP queries, composed by the optimal homogeneous bound
GENERIC_ACCOUNTANT = "generic-per-query"
#: refinement rounds of the ``gdp`` grids (each adds every part's tangent points): more than the disjoint
#: designer's, as the certified μ_g of every part must come close to its target at once
REFINE_ROUNDS = 10
#: the LP shapes' θ to this relative precision (a step of 1e-3 in θ moved the error by ~1e-4 at K = 101)
LP_RTOL = 1e-5
#: bisection steps of :func:`per_query_epsilon`
PER_QUERY_STEPS = 60


class DesignCloud(TargetCloud, Protocol):
    """A part's worst configurations: the LP's rows (:class:`TargetCloud`), its exact profile and its
    certified GDP parameter."""

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        """The part's profile of γ, rounded outward."""

    def gdp_mu(self, g: np.ndarray, prof: PrivacyProfile) -> float:
        """The part's certified μ of γ (:func:`darrm.budget.cloud.points_gdp_mu`)."""


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


def charge_part(cloud: DesignCloud, g: np.ndarray, budget: TotalBudget,
                per_query: tuple[float, float] | None) -> tuple[Charge, tuple[float, float] | None]:
    """One part's charge (module docstring) and the per-query pair it used, if that was smallest.
    ``per_query`` = (ε_q, δ_q) certified for this part, or (ε_q, nan): δ_q read from the profile."""
    prof = cloud.profile(g)
    ch = charge_table(prof, cloud.gdp_mu(g, prof), budget, pld=True)
    if per_query is None or ch.epsilon <= budget.epsilon:
        return ch, None
    eq, dq = per_query
    if math.isnan(dq):
        dq = float(prof.delta(eq))
        e = profile_generic_epsilon(prof, eq, budget)
    else:
        e = float(optimal_homogeneous_epsilon(eq, dq, budget.queries, budget.delta))
    if e < ch.epsilon:
        return Charge(e, GENERIC_ACCOUNTANT, ch.gdp_mu, ch.gdp_epsilon, ch.pld_epsilon), (eq, dq)
    return ch, None


@dataclass
class PartSearch:
    """Candidates of one design over parts (module docstring).

    Attributes:
        K: the number of members.
        clouds: one :class:`DesignCloud` per part.
        budgets: one total budget per part.
        prior: the objective's prior.
        log: one line per candidate.
        solve_per_query: (ε_q per part, δ_q per part) → the model's certified per-query γ_opt.
        sensitivity: per part, the most a record moves the vote count (None: no ``threshold`` shape).
        form: the LP's variables and the expected error (None: γ(0..K) from γ(mid..K),
            :func:`darrm.solver.finalize.total_form`).
        lift: γ(0..K) ↦ the model's table (None: the same; a table read per group: γ(Σ_g l_g)).
    """

    K: int
    clouds: Sequence[DesignCloud]
    budgets: GroupBudgets
    prior: Prior
    log: Callable[[str], None] | None
    solve_per_query: Callable[[np.ndarray, np.ndarray], np.ndarray]
    sensitivity: np.ndarray | None = None
    form: TableForm | None = None
    lift: Callable[[np.ndarray], np.ndarray] | None = None
    c: np.ndarray = field(init=False)
    mu0: np.ndarray = field(init=False)
    delta_q: np.ndarray = field(init=False)
    eps_q0: np.ndarray = field(init=False)
    feasible: list = field(default_factory=list)
    charges: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        bs = self.budgets.budgets
        if self.form is None:
            self.form = total_form(self.K, self.prior)
        self.c = self.form.costs
        self.mu0 = np.array([gdp_mu_for_total(b.epsilon, b.delta, b.queries) for b in bs])
        self.delta_q = np.array([DELTA_SHARE * b.delta / b.queries for b in bs])
        self.eps_q0 = np.array([per_query_epsilon(b, d) for b, d in zip(bs, self.delta_q, strict=True)])

    def evaluate(self, shape: str, theta: float, g: np.ndarray,
                 per_query: list[tuple[float, float]] | None = None) -> bool:
        charges: list[tuple[Charge, tuple[float, float] | None]] = []
        for i, (cloud, b) in enumerate(zip(self.clouds, self.budgets.budgets, strict=True)):
            charges.append(charge_part(cloud, g, b, None if per_query is None else per_query[i]))
            if not charges[-1][0].epsilon <= b.epsilon:
                break  # infeasible: the other parts need not be charged
        shares = [ch.epsilon / b.epsilon for (ch, _), b in zip(charges, self.budgets.budgets, strict=False)]
        ok = len(charges) == len(self.clouds) and all(
            ch.epsilon <= b.epsilon for (ch, _), b in zip(charges, self.budgets.budgets, strict=True))
        return keep_candidate(self, Candidate(shape, float(theta), g, self.error(g), max(shares)), charges, ok,
                              f"largest share of a part's ε_total {max(shares):.5g}")

    def error(self, g: np.ndarray) -> float:
        """The table's expected error under the prior (the form's A + c·upper(γ))."""
        assert self.form is not None
        return self.form.error(g)

    def table(self, gamma_l: np.ndarray) -> np.ndarray:
        """γ(0..K) as the model's table."""
        return gamma_l if self.lift is None else self.lift(gamma_l)

    def full(self, x: np.ndarray) -> np.ndarray:
        """The LP point x as the model's table."""
        assert self.form is not None
        return self.form.full(x)

    def bisect(self, shape: str, make: Callable[[float], tuple[np.ndarray, list | None]], theta0: float,
               top: float = math.inf, rtol: float | None = None) -> None:
        bisect_shape(shape, make, self.evaluate, self.log, theta0, top, rtol)

    # --- the shapes ---------------------------------------------------------------------
    def threshold(self, inv_s: float) -> tuple[np.ndarray, None]:
        return self.table(gamma_threshold(self.K, 1.0 / inv_s)), None

    def const(self, p: float) -> tuple[np.ndarray, None]:
        return self.table(np.full(self.K + 1, p)), None

    def x0(self, mu: np.ndarray) -> np.ndarray | None:
        """The Gaussian threshold meeting every part's μ_g (s = max_g r_g/μ_g): the LPs' start."""
        if self.sensitivity is None:
            return None
        assert self.form is not None
        return self.form.upper(self.table(gamma_threshold(self.K, float(np.max(self.sensitivity / mu)))))

    def gdp(self, theta: float) -> tuple[np.ndarray, None]:
        mu = theta * self.mu0
        lp = TargetLP(list(self.clouds), self.c, self.x0(mu), self.full)
        for i, m in enumerate(mu):
            eps = np.linspace(0.0, GRID_SPAN * m, GDP_GRID)
            lp.extend(eps, gdp_delta(eps, m), part=i)
        for _ in range(REFINE_ROUNDS):
            g = self.full(lp.solve())
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
        lp = TargetLP(list(self.clouds), self.c, self.x0(self.mu0), self.full)
        for i, (e, d) in enumerate(zip(eq, self.delta_q, strict=True)):
            lp.extend(np.array([e]), np.array([d]), part=i)
        g = self.full(lp.solve())
        return g, [(float(e), math.nan) for e in eq]

    def run(self, shapes: tuple[str, ...]) -> None:
        """Evaluate the plain majority, then (if it does not fit) every shape of ``shapes``."""
        if self.evaluate("majority", 1.0, self.table(np.ones(self.K + 1))):
            return
        if "per-query" in shapes:
            self.evaluate("per-query", 1.0, self.solve_per_query(self.eps_q0, self.delta_q),
                          [(float(e), float(d)) for e, d in zip(self.eps_q0, self.delta_q, strict=True)])
        if "threshold" in shapes and self.sensitivity is not None:
            self.bisect("threshold", self.threshold, float(np.min(self.mu0 / self.sensitivity)), rtol=THRESHOLD_RTOL)
        if "const" in shapes:
            self.bisect("const", self.const, math.tanh(0.5 * float(np.min(self.mu0))), top=1.0)
        if "gdp" in shapes:
            self.bisect("gdp", self.gdp, 1.0, rtol=LP_RTOL)
        if "eps-delta" in shapes:
            self.bisect("eps-delta", self.eps_delta, 1.0, rtol=LP_RTOL)


def check_shapes(shapes: object) -> tuple[str, ...]:
    """``shapes`` as a tuple, refused by name unless a non-empty subset of :data:`SHAPES`."""
    if not isinstance(shapes, (tuple, list)) or not shapes or any(sh not in SHAPES for sh in shapes):
        raise ParameterError("shapes", f"must be a non-empty subset of {SHAPES}, got {shapes!r}")
    return tuple(shapes)


def design_parts(search: PartSearch, shapes: tuple[str, ...],
                 table_params: Callable[[np.ndarray, list[PrivacyProfile]], tuple[Any, float]],
                 t0: float) -> BudgetDesign:
    """Run ``search`` and build the certified table of its winner.

    Args:
        search: the parts, budgets and the model's per-query solver.
        shapes: the shapes searched (:func:`check_shapes`).
        table_params: (γ, the parts' profiles) → (the model's parameters at a per-query target the
            table is certified for, the certificate's violation).
        t0: the design's start (``time.perf_counter()``).

    Returns:
        A :class:`~darrm.budget.design.BudgetDesign` (family "budget"; ``info["group_budgets"]``: per
        part its budget, the charged total, its accountant, the certified GDP μ, the PLD total and the
        per-query pair of a generic charge; ``info["design"]``: the winner, each shape's best and the time).

    Raises:
        CertificationError: no shape meets every part's budget.
    """
    search.run(shapes)
    best: dict[str, Candidate] = {}
    for cand in search.feasible:
        if cand.family not in best or cand.error < best[cand.family].error:
            best[cand.family] = cand
    if not best:
        raise CertificationError(f"no γ of the shapes {tuple(shapes)} meets every part's total budget")
    winner = best["majority"] if "majority" in best else min(best.values(), key=lambda c: c.error)
    g = winner.gamma
    params, violation = table_params(g, [cloud.profile(g) for cloud in search.clouds])
    parts = []
    for b, (ch, pq) in zip(search.budgets.budgets, search.charges[id(winner)], strict=True):
        if not ch.epsilon <= b.epsilon:  # the search's charge was rigorous; a bug if reached
            raise CertificationError(f"the winning γ composes to ε = {ch.epsilon} > {b.epsilon} for a part")
        parts.append({**b.to_dict(), "composed_epsilon": ch.epsilon, "accountant": ch.accountant,
                      "target": {"shape": "gdp", "mu": _finite(ch.gdp_mu)}, "gdp_epsilon": _finite(ch.gdp_epsilon),
                      "pld_epsilon": None if ch.pld_epsilon is None else _finite(ch.pld_epsilon),
                      "per_query": None if pq is None else list(pq)})
    base = min((c for k, c in best.items() if k in BASELINE_SHAPES), key=lambda c: c.error, default=None)
    info = {"group_budgets": {"queries": search.budgets.queries, "groups": parts},
            "design": {"winner": winner.to_dict(), "majority_fits": "majority" in best,
                       "baseline_error": None if base is None else base.error,
                       "improvement": None if base is None else base.error - winner.error,
                       "best": {k: c.to_dict() for k, c in best.items()},
                       "seconds": time.perf_counter() - t0}}
    table = GammaTable(params, g, "budget", violation, search.prior.to_dict(), search.error(g),
                       solver="total-budget", status=None, info=info)
    return BudgetDesign(table, winner, best, baselines=BASELINE_SHAPES)


def part_budgets(parts: int, budget: object, what: str) -> GroupBudgets:
    """One total budget per part: a :class:`~darrm.budget.spec.GroupBudgets` of ``parts`` budgets, or one
    :class:`~darrm.TotalBudget` for every part.

    Raises:
        ParameterError: naming ``budget``."""
    if isinstance(budget, TotalBudget):
        budget = GroupBudgets((budget,) * parts)
    b = instance("budget", budget, GroupBudgets, f"a darrm.TotalBudget or a GroupBudgets (one per {what})")
    if len(b.budgets) != parts:
        raise ParameterError("budget", f"must hold one total budget per {what} ({parts}), got {len(b.budgets)}")
    return b


def certified_targets(g: np.ndarray, profiles: list[PrivacyProfile], budgets: GroupBudgets,
                      at: Callable[[list[tuple[float, float]]], Any], certify: Callable[[np.ndarray, Any], Any],
                      delta_floor: float = 0.0) -> tuple[Any, float]:
    """(the model's parameters at per-query targets (ε_q,g, δ_q,g ≥ ``delta_floor``) the parts' profiles
    allow at δ_q,g = δ_g,total/Q, the certificate's violation): every designed table also carries an ordinary
    per-query certificate.  ``at(targets)`` gives the parameters, ``certify(γ, parameters)`` their
    certificate; ε_q is raised by 1 % up to 20 times where the certificate's float64 test needs more room
    than the outward-rounded profile.

    Raises:
        CertificationError: no such certificate."""
    targets: list[tuple[float, float]] = []
    for prof, b in zip(profiles, budgets.budgets, strict=True):
        dq = max(b.delta / b.queries, delta_floor)
        eq = prof.epsilon(dq)
        if not math.isfinite(eq):
            dq = min(0.5, max(dq, 2.0 * prof.infinite_loss_mass))
            eq = prof.epsilon(dq)
        targets.append((min(700.0, max(eq, 1e-9) * (1.0 + 1e-9) + 1e-12), dq))
    for _ in range(20):
        p = at(targets)
        cert = certify(g, p)
        if cert.certified:
            return p, cert.violation
        targets = [(min(700.0, e * 1.01), d) for e, d in targets]
    raise CertificationError("the designed γ has no per-query (ε, δ) certificate")


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def prior_for(prior: Prior | None, K: int) -> Prior:
    """The prior (default i.i.d. mean 0.75), validated for K members."""
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior")
    prior.check_K(K)
    return prior


def recorded_parts(table: GammaTable, parts: int) -> tuple[list[dict], GroupBudgets]:
    """(per-part records, budgets) of ``table.info["group_budgets"]``, one per part.

    Raises:
        CertificationError: a malformed record."""
    try:
        records = table.info["group_budgets"]["groups"]
        budgets = GroupBudgets(tuple(TotalBudget.from_dict(gr) for gr in records))
        if len(records) != parts:
            raise ValueError(f"{len(records)} budgets for {parts} parts")
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed group_budgets record: {exc}") from None
    return records, budgets


def verify_parts(table: GammaTable, clouds: Sequence[DesignCloud],
                 certified_at: Callable[[int, float, float], bool], *, whole_table: bool = False) -> float:
    """Re-certify each part's recorded total from γ alone, by the one accountant: the Q-fold composition
    of the part's own pair (:func:`~darrm.accounting.budget.disjoint.composed_epsilon_of_profile`; with
    ``whole_table``, one part for every record, the table's own total as every door composes it,
    :func:`~darrm.accounting.budget.charge.charged_total`), its certified GDP μ (re-derived from the part's
    cloud, never read from the record, which it must not contradict) composed exactly, and, where the
    record names a per-query pair, its generic composition (the pair re-checked by
    ``certified_at(part, ε_q, δ_q)``, the model's certificate, or against the part's profile); the
    smallest must meet the part's budget and be at most the record
    (:func:`~darrm.accounting.budget.charge.check_recorded`).

    Returns:
        The largest re-certified total ε over the parts.

    Raises:
        CertificationError: a malformed record, or a part's total above its budget or the record."""
    return max(verified_part_totals(table, clouds, certified_at, whole_table=whole_table), default=0.0)


def verified_part_totals(table: GammaTable, clouds: Sequence[DesignCloud],
                         certified_at: Callable[[int, float, float], bool], *,
                         whole_table: bool = False) -> list[float]:
    """Each part's re-certified total (:func:`verify_parts`, which returns the largest), in the order of
    the parts: for record groups, :func:`darrm.accounting.queries.group_total` at the part's recorded
    count and δ, the number every door gives for that group.

    Raises:
        CertificationError: as :func:`verify_parts`."""
    records, budgets = recorded_parts(table, len(clouds))
    totals = []
    for i, (part, rec, b) in enumerate(zip(group_parts_of(table, clouds, certified_at), records, budgets.budgets,
                                           strict=True)):
        try:
            charged, accountant = float(rec["composed_epsilon"]), rec["accountant"]
            mu_rec = rec["target"]["mu"]
        except (KeyError, TypeError, ValueError) as exc:
            raise CertificationError(f"malformed group_budgets record of part {i}: {exc}") from None
        if accountant not in (GDP_ACCOUNTANT, PLD_ACCOUNTANT, GENERIC_ACCOUNTANT):
            raise CertificationError(f"part {i}: unknown accountant {accountant!r} in the group_budgets record")
        if mu_rec is not None and not part.mu <= float(mu_rec) * (1.0 + RECORD_RTOL):  # a record the table contradicts
            raise CertificationError(f"part {i}: the table is {part.mu:.9g}-GDP per query, not the recorded μ = "
                                     f"{mu_rec}")
        if accountant == GENERIC_ACCOUNTANT:
            pair = recorded_pair(rec)
            if pair is None:
                raise CertificationError(f"part {i}: a generic charge without its per-query pair")
            if part.pair != pair:
                raise CertificationError(f"part {i}: the table is not {pair}-DP per query as recorded")
        if whole_table:  # the table's own total as every door composes it (its GDP μ and confirmed pair included)
            eps = charged_total(table, b)
        else:
            try:
                eps = group_total(part, b.queries, b.delta).epsilon
            except ParameterError:
                eps = math.inf
        try:
            totals.append(check_recorded(eps, charged, b))
        except CertificationError as exc:
            raise CertificationError(f"part {i}: {exc}") from None
    return totals


def design_per_group(params: Any, budget: object, prior: Prior | None, shapes: object,
                     log: Callable[[str], None] | None, *, what: str, clouds: Sequence[DesignCloud],
                     at: Callable[[list[tuple[float, float]]], Any], solve: Callable[[Any, Prior], GammaTable],
                     certify: Callable[[np.ndarray, Any], Any], sensitivity: np.ndarray | None,
                     form: Callable[[Prior], TableForm] | None = None,
                     lift: Callable[[np.ndarray], np.ndarray] | None = None) -> BudgetDesign:
    """The design of a model whose record groups each own a total budget (one part per group).

    Args:
        params: the model's parameters (``K``; their per-query targets are replaced by the budgets).
        budget: one TotalBudget per group (a GroupBudgets), or one for every group (:func:`part_budgets`).
        prior: the objective's prior (None: i.i.d. mean 0.75).
        shapes: the shapes searched (:func:`check_shapes`).
        log: one line per candidate.
        what: the group's name in messages ("record group").
        clouds: one :class:`DesignCloud` per group.
        at: per-group per-query targets (ε_q,g, δ_q,g) ↦ the model's parameters.
        solve: (parameters, prior) ↦ the model's certified per-query γ_opt table.
        certify: (γ, parameters) ↦ the model's certificate.
        sensitivity: per group, the most a record moves the vote count (None: no threshold shape).
        form: prior ↦ the LP's variables and error (None: γ(0..K)); lift: γ(0..K) ↦ the table.

    Returns:
        :func:`design_parts`'s design."""
    t0 = time.perf_counter()
    budgets = part_budgets(len(clouds), budget, what)
    prior = prior_for(prior, params.K)
    search = PartSearch(params.K, clouds, budgets, prior, log,
                        lambda eq, dq: solve(at(list(zip(eq, dq, strict=True))), prior).gamma, sensitivity,
                        None if form is None else form(prior), lift)
    return design_parts(search, check_shapes(shapes),
                        lambda g, profs: certified_targets(g, profs, budgets, at, certify), t0)

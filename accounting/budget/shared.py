"""γ of greatest utility for members on shared data whose Q-fold composition meets a total budget.

**The search.**  Each candidate γ comes from a family with one parameter θ:

* per-query families (the baselines, each a feasible point of the total-budget problem):
  γ_opt at real m (the LP of Section 5 at (mε, 1 − (1 − Δ)^m); below m = 1 the same LP at one
  profile pair, :func:`darrm.solver.multi_pair.solve_pairs`), γ_Sub at integer m (Lemma 3.1) and
  γ_const at real m (Lemma A.1);
* target-shaped families: the LP whose grid rows bound the query's profile by a μ-GDP profile
  ("gdp", θ = μ) or by the exact profile of γ_Sub at integer m ("sub-profile", θ = m)
  (conservative grid rule of :mod:`darrm.budget.targets`), and the (ε0, δ0)-shaped target ("rr",
  θ = ε0) with δ0 = :data:`RR_DELTA_SHARE`·δ_tot/Q, one row family (the RR pair dominates every
  (ε0, δ0)-DP binary mechanism, so one pair bounds the whole profile).

**The charge: the session's own.**  A candidate is the table it would be recorded as: γ with the
per-query label (m*ε, 1 − (1 − Δ)^{m*}) at the smallest m* ∈ [1, K] its exact profile allows
(:func:`per_query_params`).  It is charged by the one accountant,
:func:`darrm.accounting.queries.composed_epsilon` with fresh members: the minimum of the Q-fold PLD
composition of its dominating pair and the exact homogeneous composition (Kairouz–Oh–Viswanath,
Theorem 3.3) at points of its profile and at its per-query label.  That is the number the labelling
session, ``darrm account queries`` and ``darrm verify`` compute for the saved table, so the recorded
total is what every door charges.

**Never worse than a per-query family.**  γ_opt (or γ_Sub, γ_const) at m is certified at
(mε, δ_m) with δ_m = 1 − (1 − Δ)^m, so its profile allows m* ≤ m; the exact homogeneous composition
is non-decreasing in ε and δ, so the candidate's charge is at most the exact generic composition of Q
(mε, δ_m) queries.  Each family's largest feasible θ is found by bisection; because the baselines
are candidates, the result is never worse than the best per-query family that the generic
composition admits (to the bisection's precision :data:`THETA_RTOL`; tested at Q ≥ 1000).

**Certification.**  The winner is certified per query at its m* (:func:`darrm.privacy.certify.certify`;
any post-processing of the K members is (Kε, 1 − (1 − Δ)^K)-DP, so m* = K always holds in exact
arithmetic) and re-charged as the final table; :func:`verify_shared` recomputes that charge.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import numpy as np

from darrm.budget.design import BASELINE_FAMILIES, BudgetDesign, Candidate
from darrm.budget.spec import TotalBudget
from darrm.budget.targets import conservative_pairs, default_grid, gdp_delta, gdp_mu_for_total
from darrm.budget.verify import recorded_budget
from darrm.errors import CertificationError, ParameterError
from darrm.gamma import gamma_const, gamma_sub, symmetric_from_upper
from darrm.models.profile import privacy_profile
from darrm.numerics.delta import composed_delta
from darrm.params import PrivacyParams
from darrm.prior import IIDPrior, Prior
from darrm.privacy.certify import certify
from darrm.privacy.corners import corner_count, multiset_count
from darrm.privacy.profile import PrivacyProfile
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.solver.multi_pair import ENUMERATION_LIMIT, ProfilePair, solve_pairs
from darrm.solver.objective import expected_signed_error, objective_coefficients
from darrm.table import GammaTable
from darrm.validation import count, instance

from ..queries import BOUND_FRESH
from .charge import charged_total, check_recorded, within_budget

__all__ = ["ACCOUNTANT", "TARGET_FAMILIES", "design_shared", "per_query_params", "verify_shared"]

#: the target-shaped families, searched after the baselines
TARGET_FAMILIES = ("gdp", "rr", "sub-profile")
#: the "rr" family's per-query δ0 as a share of δ_total/Q (the rest is left to the ε of the composition)
RR_DELTA_SHARE = 0.5
#: bisection steps per real-parameter family (at most), and the relative precision they stop at
BISECTION_STEPS, THETA_RTOL = 40, 1e-5
#: γ_opt is searched over m ∈ [OPT_M_MIN, K] (geometric bisection)
OPT_M_MIN = 1e-3
#: the record's name of the charge: the accountant of :func:`darrm.accounting.queries.composed_epsilon`
ACCOUNTANT = BOUND_FRESH


def per_query_params(g: np.ndarray, K: int, eps: float, Delta: float, prof: PrivacyProfile) -> PrivacyParams:
    """The per-query label of γ: PrivacyParams at the smallest m* ∈ [1, K] with
    δ_γ(m*ε) ≤ 1 − (1 − Δ)^{m*} (bisection to 2⁻⁵⁰ of [1, K]; δ_γ is non-increasing and the right
    side non-decreasing in m, so the feasible m form an interval [m*, K])."""
    def fits(m: float) -> bool:
        return float(prof.delta(m * eps)) <= composed_delta(Delta, m)

    lo, hi = 1.0, float(K)
    if fits(lo):
        return PrivacyParams(K, lo, eps, Delta)
    for _ in range(50):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if fits(mid) else (mid, hi)
    return PrivacyParams(K, hi, eps, Delta)


class _Search:
    """Evaluate candidates of one design problem."""

    def __init__(self, K: int, eps: float, member_delta: float, budget: TotalBudget, prior: Prior,
                 grid: np.ndarray, log: Callable[[str], None] | None):
        self.K, self.eps, self.Delta = K, eps, member_delta
        self.budget, self.prior, self.grid, self.log = budget, prior, grid, log
        self.base = PrivacyParams(K, 1.0, eps, member_delta)  # only K, ε, Δ matter to a profile
        self.c, _ = objective_coefficients(K, prior)
        self.feasible: list[Candidate] = []

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        return privacy_profile(g, self.base)

    def table(self, g: np.ndarray, prof: PrivacyProfile | None = None) -> GammaTable:
        """γ as it would be recorded (uncertified label; the winner's is certified)."""
        params = per_query_params(g, self.K, self.eps, self.Delta, self.profile(g) if prof is None else prof)
        return GammaTable(params, g, "budget", 0.0, self.prior.to_dict(), expected_signed_error(g, self.prior),
                          solver="total-budget")

    def evaluate(self, family: str, theta: float, g: np.ndarray) -> Candidate:
        """The candidate, screened (:func:`~darrm.accounting.budget.charge.within_budget`): its
        ``epsilon_total`` is the budget's ε_total when it passes, inf otherwise (charged later)."""
        ok = within_budget(self.table(g), self.budget)
        cand = Candidate(family, float(theta), g, expected_signed_error(g, self.prior),
                         self.budget.epsilon if ok else math.inf)
        if ok:
            self.feasible.append(cand)
        if self.log:
            self.log(f"{family} θ={theta:.6g}: error {cand.error:.6g}{'' if ok else ' (over budget)'}")
        return cand

    def ok(self, c: Candidate) -> bool:
        return c.epsilon_total <= self.budget.epsilon

    def bisect(self, family: str, make: Callable[[float], np.ndarray | None], lo: float, hi: float,
               geometric: bool = False) -> None:
        """Largest feasible θ in [lo, hi] to relative precision :data:`THETA_RTOL` (at most
        :data:`BISECTION_STEPS` steps; feasible candidates recorded as they are found)."""
        top = make(hi)
        if top is not None and self.ok(self.evaluate(family, hi, top)):
            return
        for _ in range(BISECTION_STEPS):
            if hi - lo <= THETA_RTOL * hi:
                break
            mid = math.sqrt(lo * hi) if geometric else 0.5 * (lo + hi)
            g = make(mid)
            if g is not None and self.ok(self.evaluate(family, mid, g)):
                lo = mid
            else:
                hi = mid

    # --- the families -------------------------------------------------------------------
    def params_at(self, m: float) -> PrivacyParams | None:
        try:
            return PrivacyParams(self.K, m, self.eps, self.Delta)
        except ParameterError:  # default δ not < 1, or e^{mε} not representable
            return None

    def opt(self, m: float) -> np.ndarray | None:
        if m < 1.0:  # below one member's ε: the same LP at (mε, 1 − (1 − Δ)^m), one profile pair
            x, _ = solve_pairs(self.K, self.eps, self.Delta, [ProfilePair(m * self.eps, composed_delta(self.Delta, m))],
                               self.c)
            return symmetric_from_upper(np.clip(x, 0.0, 1.0), self.K)
        p = self.params_at(m)
        return None if p is None else solve_gamma_opt(p, self.prior).gamma  # certified per query

    def const(self, m: float) -> np.ndarray | None:
        p = self.params_at(m)
        return None if p is None else gamma_const(p)

    def targeted(self, target: np.ndarray) -> np.ndarray:
        x, _ = solve_pairs(self.K, self.eps, self.Delta, conservative_pairs(self.grid, target), self.c)
        return symmetric_from_upper(np.clip(x, 0.0, 1.0), self.K)

    def gdp(self, mu: float) -> np.ndarray:
        return self.targeted(gdp_delta(self.grid, mu))

    def rr(self, eps0: float) -> np.ndarray:
        d0 = RR_DELTA_SHARE * self.budget.delta / self.budget.queries
        x, _ = solve_pairs(self.K, self.eps, self.Delta, [ProfilePair(eps0, d0)], self.c)
        return symmetric_from_upper(np.clip(x, 0.0, 1.0), self.K)

    def sub_profile(self, m: float) -> np.ndarray:
        prof = self.profile(gamma_sub(self.K, int(m)))
        return self.targeted(np.minimum.accumulate(np.asarray(prof.delta(self.grid))))


def _certified(g: np.ndarray, prof: PrivacyProfile, K: int, eps: float, Delta: float) -> tuple:
    """(PrivacyParams, certificate) of the winner: at its m* (:func:`per_query_params`), else a hair
    above, else m = K."""
    m_star = per_query_params(g, K, eps, Delta, prof).m
    for m in (m_star, min(float(K), m_star * (1.0 + 1e-9) + 1e-12), float(K)):
        p = PrivacyParams(K, m, eps, Delta)
        cert = certify(g, p)
        if cert.certified:
            return p, cert
    raise CertificationError("the designed γ has no per-query (mε, δ) certificate for any m in [1, K]")


def design_shared(params: PrivacyParams, budget: TotalBudget, prior: Prior | None = None, *,
                  log: Callable[[str], None] | None = None,
                  families: tuple[str, ...] = BASELINE_FAMILIES + TARGET_FAMILIES,
                  grid_points: int = 24) -> BudgetDesign:
    """The γ of smallest expected error whose Q-fold composition, as the session charges it, meets
    ``budget`` (module docstring).

    Args:
        params: the members (:class:`~darrm.PrivacyParams`; only K, ε and Δ are used: the budget
            replaces m and δ).
        budget: the total (ε, δ) over Q queries, members answering with fresh randomness.
        prior: the objective's prior (default i.i.d. mean 0.75).
        log: called with one line per candidate.
        families: which families to search (baselines and targets; at least one).
        grid_points: ε′ grid size of the target-shaped LPs (on [0, Kε]).

    Returns:
        A :class:`~darrm.BudgetDesign` whose table's recorded total is ≤ budget.epsilon.

    Raises:
        ParameterError: a bad argument.
        CertificationError: no candidate of any family meets the budget.
    """
    instance("params", params, PrivacyParams, "a darrm.PrivacyParams")
    K, eps, member_delta = params.K, params.eps, params.member_delta
    instance("budget", budget, TotalBudget, "a darrm.TotalBudget")
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior")
    prior.check_K(K)
    known = BASELINE_FAMILIES + TARGET_FAMILIES
    if not isinstance(families, (tuple, list)) or not families or any(f not in known for f in families):
        raise ParameterError("families", f"must be a non-empty subset of {known}, got {families!r}")
    grid_points = count("grid_points", grid_points, 2)
    n = multiset_count(K, corner_count(member_delta))
    if n > ENUMERATION_LIMIT:
        raise ParameterError("K", f"{n} corner multisets exceed the {ENUMERATION_LIMIT} the total-budget LP "
                                  "enumerates (K ≤ 17 with Δ > 0, K ≤ 131 with Δ = 0)")
    s = _Search(K, eps, member_delta, budget, prior, default_grid(K, eps, grid_points), log)
    best: dict[str, Candidate] = {}

    def record(family: str) -> None:
        mine = [c for c in s.feasible if c.family == family]
        if mine:
            best[family] = min(mine, key=lambda c: c.error)

    if "opt" in families:
        s.bisect("opt", s.opt, OPT_M_MIN, float(K), geometric=True)
        record("opt")
    if "const" in families:
        s.bisect("const", s.const, 1.0, float(K))
        record("const")
    if "sub" in families or "sub-profile" in families:
        for m in range(1, K + 1):  # γ_Sub(m)'s privacy grows with m: stop at the first failure
            if not s.ok(s.evaluate("sub", m, gamma_sub(K, m))):
                break
        record("sub")
    if "gdp" in families:
        mu = gdp_mu_for_total(budget.epsilon, budget.delta, budget.queries)
        s.bisect("gdp", s.gdp, mu / 16.0, mu * 4.0, geometric=True)
        record("gdp")
    if "rr" in families:
        s.bisect("rr", s.rr, 1e-3 * eps, K * eps, geometric=True)
        record("rr")
    if "sub-profile" in families:
        top = int(best["sub"].parameter) if "sub" in best else 0
        for m in range(max(top, 1), K + 1):
            if not s.ok(s.evaluate("sub-profile", m, s.sub_profile(m))) and m > top:
                break
        record("sub-profile")
    if "sub" not in families:
        best.pop("sub", None)
    if not best:
        raise CertificationError(f"no γ of the families {families} meets ε_total = {budget.epsilon} at "
                                 f"δ_total = {budget.delta} over {budget.queries} queries")
    for winner in sorted(s.feasible, key=lambda c: c.error):  # the first whose own charge meets the budget
        g = winner.gamma
        p, cert = _certified(g, s.profile(g), K, eps, member_delta)
        table = GammaTable(p, g, "budget", cert.violation, prior.to_dict(), expected_signed_error(g, prior),
                           solver="total-budget", status=None)
        total = charged_total(table, budget)  # the certified table's own charge: what the session charges
        if total <= budget.epsilon:
            break
        if log:
            log(f"{winner.family} θ={winner.parameter:.6g}: charged ε {total:.6g} over budget (screened "
                f"{winner.epsilon_total:.6g}); the next best")
    else:
        raise CertificationError(f"no γ of the families {families} meets ε_total = {budget.epsilon} at "
                                 f"δ_total = {budget.delta} over {budget.queries} queries by its own charge")
    winner = dataclasses.replace(winner, epsilon_total=total)
    # each family's best, charged (screened) for the record; any better than the winner failed its own charge
    best = {f: dataclasses.replace(c, epsilon_total=charged_total(s.table(c.gamma), budget, screen=True))
            for f, c in best.items() if c.error >= winner.error and f != winner.family}
    best[winner.family] = winner
    info = {"total_budget": {**budget.to_dict(), "composed_epsilon": total, "accountant": ACCOUNTANT},
            "design": {"winner": winner.to_dict(), "majority_fits": bool(np.all(g == 1.0)),
                       "best": {f: c.to_dict() for f, c in best.items()}}}
    return BudgetDesign(dataclasses.replace(table, info=info), winner, best)


def verify_shared(table: GammaTable) -> float:
    """Recompute a shared-members table's recorded total with the accountant the design charged
    (:func:`charged_total`) and check it: at most the budget and equal to the record.  The first
    1, 2, 4, … queries are composed first (ε(δ) is non-decreasing in the number of composed queries:
    one more mechanism never lowers the hockey-stick divergence), so a forged count is refused at
    the cost of the prefix that already exceeds ε_total.

    Returns:
        The re-checked total ε.

    Raises:
        CertificationError: no total budget recorded, a malformed record, or a total above the
            budget or different from the record."""
    rec = recorded_budget(table)
    if rec is None:
        raise CertificationError("no total budget is recorded in the table")
    budget, tb = rec
    try:
        charged = float(tb["composed_epsilon"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    k = 1
    while k < budget.queries:
        prefix = charged_total(table, dataclasses.replace(budget, queries=k))
        if not prefix <= budget.epsilon:
            raise CertificationError(f"total_budget.queries: the first {k} of the {budget.queries} queries already "
                                     f"compose to ε = {prefix:.6g} at δ = {budget.delta:g}, above the recorded "
                                     f"budget ε_total = {budget.epsilon:g}")
        k *= 2
    return check_recorded(charged_total(table, budget), charged, budget)

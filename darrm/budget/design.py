"""γ of greatest utility whose Q-fold composition meets a total budget (ε_tot, δ_tot).

**The search.**  Each candidate γ comes from a family with one parameter θ:

* per-query families (the baselines, each a feasible point of the total-budget problem):
  γ_opt at real m (the LP of Section 5 at (mε, 1 − (1 − Δ)^m); also the (ε0, δ0)-shaped target
  with ε0 = mε, see :mod:`darrm.budget.targets`), γ_Sub at integer m (Lemma 3.1) and γ_const at
  real m (Lemma A.1);
* target-shaped families: the LP whose grid rows bound the query's profile by a μ-GDP profile
  ("gdp", θ = μ) or by the exact profile of γ_Sub at integer m ("sub-profile", θ = m)
  (:mod:`darrm.solver.multi_pair`, conservative grid rule of :mod:`darrm.budget.targets`), and the
  (ε0, δ0)-shaped target ("rr", θ = ε0) with δ0 = :data:`RR_DELTA_SHARE`·δ_tot/Q, one row family
  (the RR pair dominates every (ε0, δ0)-DP binary mechanism, so one pair bounds the whole profile):
  unlike γ_opt at the default δ = 1 − (1 − Δ)^m it can reach totals δ_tot < Q·Δ.

A candidate is *feasible* when the Q-fold composition of its OWN exact profile
(:func:`darrm.budget.compose.composed_epsilon`, pessimistic, on a grid :data:`SEARCH_COARSENING`
times coarser than the certificate's) gives ε ≤ ε_tot at δ_tot.  Utility decreases as
θ tightens, so for each family the largest feasible θ is found by bisection (the outer loop of
constraint generation in ε′: a target whose LP point fails the composition is tightened, never
accepted); every feasible candidate is kept, and the one with the smallest expected error under
the prior wins.  Because the baselines are candidates, the result is never worse than the best
per-query family at the same total budget (tested).

**Certification.**  The winner's composed ε is recomputed from a fresh profile; the table records
the budget, that ε and the PLD discretisation, and also carries an ordinary per-query certificate:
its (m*ε, 1 − (1 − Δ)^{m*}) with the smallest m* ∈ [1, K] that the profile allows, checked by
:func:`darrm.privacy.certify.certify` (any post-processing of the K members is (Kε, 1 − (1 − Δ)^K)-DP,
so m* = K always holds in exact arithmetic).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..errors import CertificationError, ParameterError
from ..gamma import gamma_const, gamma_sub, symmetric_from_upper
from ..models.profile import privacy_profile
from ..numerics.delta import composed_delta
from ..params import PrivacyParams
from ..prior import IIDPrior, Prior
from ..privacy.certify import certify
from ..privacy.corners import corner_count, multiset_count
from ..privacy.profile import PrivacyProfile
from ..solver.gamma_opt import solve_gamma_opt
from ..solver.multi_pair import ENUMERATION_LIMIT, ProfilePair, solve_pairs
from ..solver.objective import expected_signed_error, objective_coefficients
from ..table import GammaTable
from ..validation import count, half_open_unit, instance, odd_count, positive
from .compose import DISCRETIZATION, composed_epsilon
from .spec import TotalBudget
from .targets import conservative_pairs, default_grid, gdp_delta, gdp_mu_for_total

#: the per-query families (baselines) and the target-shaped ones, in search order
BASELINE_FAMILIES = ("opt", "sub", "const")
TARGET_FAMILIES = ("gdp", "rr", "sub-profile")
#: the "rr" family's per-query δ0 as a share of δ_total/Q (the rest is left to the ε of the composition)
RR_DELTA_SHARE = 0.5
#: bisection steps per real-parameter family (at most), and the relative precision they stop at
BISECTION_STEPS, THETA_RTOL = 40, 1e-5
#: γ_opt is searched over m ∈ [OPT_M_MIN, K] (geometric bisection): below m = 1 its LP runs at
#: (mε, 1 − (1 − Δ)^m) through :func:`darrm.solver.multi_pair.solve_pairs` (one pair)
OPT_M_MIN = 1e-3
#: families whose candidates meet a per-query (θε, δ) target: an injected charge may also compose
#: that pair generically (its δ taken from the table's own profile at θε)
PER_QUERY = ("opt", "sub", "const")
#: the record of a table charged by an injected charge (re-checked by :mod:`darrm.accounting.budget.verify`)
ACCOUNTANT_CHARGE = "pld-or-generic-per-query"
#: ``charge(profile, family, per-query ε or None, PLD interval) -> ε_total``: how the accountant
#: charges a candidate
Charge = Callable[[PrivacyProfile, str, "float | None", float], float]
#: the search composes on a grid this many times coarser than the certificate's.  Its multiples
#: are multiples of the fine interval, so every loss rounded up to the coarse grid is ≥ the same
#: loss rounded up to the fine one; δ(ε) of a composition is non-decreasing in every loss, so a
#: candidate feasible in the search is feasible at the certificate's interval too (which is then
#: recomputed, and recorded).  ~10× fewer PLD points, the search's dominant cost.  The price: a
#: family member within the coarse grid's extra slack of the budget (≤ Q·(coarse − fine interval)
#: in ε) is not found, so "never worse than the per-query families" holds for the
#: members the search's accountant admits.
SEARCH_COARSENING = 10


@dataclass(frozen=True)
class Candidate:
    """One γ of the search: family, its parameter (m, or μ for "gdp"), expected error, composed ε."""

    family: str
    parameter: float
    gamma: np.ndarray = field(repr=False)
    error: float
    epsilon_total: float

    def to_dict(self) -> dict:
        """JSON-ready, without γ."""
        return {"family": self.family, "parameter": self.parameter, "error": self.error,
                "epsilon_total": self.epsilon_total if math.isfinite(self.epsilon_total) else None}


@dataclass(frozen=True)
class BudgetDesign:
    """The result of :func:`design_for_budget`.

    Attributes:
        table: the certified winner (family "budget"; ``info["total_budget"]`` holds the budget,
            its composed ε and the discretisation).
        winner: the winning candidate.
        best: the best feasible candidate of each family searched (family → Candidate).
        baselines: the families of ``best`` that are baselines (:attr:`best_per_query`).
    """

    table: GammaTable
    winner: Candidate
    best: dict
    baselines: tuple[str, ...] = BASELINE_FAMILIES

    @property
    def best_per_query(self) -> Candidate | None:
        """The best feasible baseline (shared members: γ_opt, γ_Sub or γ_const at its best m;
        disjoint members: the Gaussian threshold or RR), or None."""
        base = [c for f, c in self.best.items() if f in self.baselines]
        return min(base, key=lambda c: c.error) if base else None

    @property
    def improvement(self) -> float:
        """Expected error of the best per-query family minus the winner's (≥ 0)."""
        b = self.best_per_query
        return 0.0 if b is None else b.error - self.winner.error


class _Search:
    """Evaluate candidates of one design problem (memoised profile + composition)."""

    def __init__(self, K: int, eps: float, member_delta: float, budget: TotalBudget, prior: Prior,
                 discretization: float, grid: np.ndarray, log: Callable[[str], None] | None,
                 charge: Charge | None = None):
        self.K, self.eps, self.Delta = K, eps, member_delta
        self.charge = charge
        self.budget, self.prior, self.d, self.grid, self.log = budget, prior, discretization, grid, log
        self.base = PrivacyParams(K, 1.0, eps, member_delta)  # only K, ε, Δ matter to a profile
        self.c, _ = objective_coefficients(K, prior)
        self.feasible: list[Candidate] = []

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        return privacy_profile(g, self.base)

    def total(self, prof: PrivacyProfile, family: str, theta: float, discretization: float) -> float:
        """The candidate's total ε: the injected charge (the accountant's), else the core composition."""
        if self.charge is not None:
            return self.charge(prof, family, theta * self.eps if family in PER_QUERY else None, discretization)
        return composed_epsilon(prof, self.budget.queries, self.budget.delta, discretization=discretization).epsilon

    def evaluate(self, family: str, theta: float, g: np.ndarray) -> Candidate:
        total = self.total(self.profile(g), family, theta, self.d)
        cand = Candidate(family, float(theta), g, expected_signed_error(g, self.prior), total)
        ok = cand.epsilon_total <= self.budget.epsilon
        if ok:
            self.feasible.append(cand)
        if self.log:
            self.log(f"{family} θ={theta:.6g}: error {cand.error:.6g}, composed ε {cand.epsilon_total:.4g}"
                     f"{'' if ok else ' (over budget)'}")
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


def _per_query_params(g: np.ndarray, K: int, eps: float, Delta: float, prof: PrivacyProfile) -> tuple:
    """(PrivacyParams at the smallest m* the profile allows, certificate) (module docstring)."""
    def fits(m: float) -> bool:
        return float(prof.delta(m * eps)) <= composed_delta(Delta, m)

    lo, hi = 1.0, float(K)
    if not fits(lo):
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            lo, hi = (lo, mid) if fits(mid) else (mid, hi)
        m_star = hi
    else:
        m_star = lo
    for m in (m_star, min(float(K), m_star * (1.0 + 1e-9) + 1e-12), float(K)):
        try:
            p = PrivacyParams(K, m, eps, Delta)
        except ParameterError:
            continue
        cert = certify(g, p)
        if cert.certified:
            return p, cert
    raise CertificationError("the designed γ has no per-query (mε, δ) certificate for any m in [1, K]")


def design_for_budget(K: int, eps: float, member_delta: float, budget: TotalBudget, prior: Prior | None = None, *,
                      families: tuple[str, ...] = BASELINE_FAMILIES + TARGET_FAMILIES,
                      discretization: float = DISCRETIZATION, grid_points: int = 24,
                      log: Callable[[str], None] | None = None, charge: Charge | None = None) -> BudgetDesign:
    """The γ of smallest expected error whose Q-fold composition meets ``budget`` (module docstring).

    Args:
        K: the number of members (odd); every member may see the changed record (Lemma 5.1's
            corners).  No m: the budget replaces it.
        eps: each member's ε (each member is (ε, Δ)-DP).
        member_delta: each member's Δ in [0, 1).
        budget: the total (ε, δ) over Q queries, members answering with fresh randomness.
        prior: the objective's prior (default i.i.d. mean 0.75).
        families: which families to search (baselines and targets; at least one).
        discretization: the PLD loss grid of the composition certificate.
        grid_points: ε′ grid size of the target-shaped LPs (on [0, Kε]).
        log: called with one line per candidate.
        charge: ``(profile, family, per-query ε or None, interval) -> ε_total``, a rigorous total for a
            candidate (the accountant's, :mod:`darrm.accounting.budget`); None: the composition of
            :mod:`darrm.budget.compose`.

    Returns:
        A :class:`BudgetDesign` whose table's composed ε is ≤ budget.epsilon.

    Raises:
        ParameterError: a bad argument.
        CertificationError: no candidate of any family meets the budget.
    """
    K = odd_count("K", K)
    eps = positive("eps", eps)
    member_delta = half_open_unit("member_delta", member_delta)
    instance("budget", budget, TotalBudget, "a darrm.TotalBudget")
    prior = IIDPrior() if prior is None else instance("prior", prior, Prior, "a darrm.Prior")
    prior.check_K(K)
    known = BASELINE_FAMILIES + TARGET_FAMILIES
    if not isinstance(families, (tuple, list)) or not families or any(f not in known for f in families):
        raise ParameterError("families", f"must be a non-empty subset of {known}, got {families!r}")
    discretization = positive("discretization", discretization)
    grid_points = count("grid_points", grid_points, 2)
    n = multiset_count(K, corner_count(member_delta))
    if n > ENUMERATION_LIMIT:
        raise ParameterError("K", f"{n} corner multisets exceed the {ENUMERATION_LIMIT} the total-budget LP "
                                  "enumerates (K ≤ 17 with Δ > 0, K ≤ 131 with Δ = 0)")
    # the accountant's charge (PLD and generic) is cheap at small K: it searches at the final interval
    s = _Search(K, eps, member_delta, budget, prior, (1 if charge is not None else SEARCH_COARSENING) * discretization,
                default_grid(K, eps, grid_points), log, charge)
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
    winner = min(best.values(), key=lambda c: c.error)
    g = winner.gamma
    prof = s.profile(g)
    total = s.total(prof, winner.family, winner.parameter, discretization)
    if not total <= budget.epsilon:  # finer than the search's (SEARCH_COARSENING): a bug if reached
        raise CertificationError(f"the winning γ composes to ε = {total} > {budget.epsilon}")
    winner = best[winner.family] = dataclasses.replace(winner, epsilon_total=total)  # the certificate's
    params, cert = _per_query_params(g, K, eps, member_delta, prof)
    info = {"total_budget": {**budget.to_dict(), "composed_epsilon": total, "discretization": discretization,
                             **({} if charge is None else {"accountant": ACCOUNTANT_CHARGE})},
            "design": {"winner": winner.to_dict(), "majority_fits": bool(np.all(g == 1.0)),
                       "best": {f: c.to_dict() for f, c in best.items()}}}
    table = GammaTable(params, g, "budget", cert.violation, prior.to_dict(), expected_signed_error(g, prior),
                       solver="total-budget", status=None, info=info)
    return BudgetDesign(table, winner, best)

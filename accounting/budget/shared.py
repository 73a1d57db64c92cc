"""The accountant's charge for the shared-members total-budget search (:mod:`darrm.budget.design`).

A candidate table is charged the smaller of two rigorous totals:

* the Q-fold composition of its own dominating pair (:func:`darrm.accounting.queries.query_pld`,
  pessimistic PLD at the search's interval: an upper bound);
* for a per-query family at (ε_q = θε): the generic composition of Q identical (ε_q, δ_q) queries
  with δ_q = δ_γ(ε_q) read from the table's own exact profile (rounded outward, so the table is
  (ε_q, δ_q)-DP), by Kairouz–Oh–Viswanath's optimal homogeneous composition
  (:func:`darrm.accounting.composition.optimal_homogeneous_epsilon`, exact, rounded up).

At large Q the PLD's rounding (≤ Q·interval in ε) makes it pessimistic by 13–127 %, while the
generic bound is exact for the (ε_q, δ_q) pair: with both, the search is never worse than a
per-query family (γ_opt at any real m > 0, γ_Sub, γ_const) charged the exact generic composition.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from darrm.budget.spec import TotalBudget
from darrm.numerics.delta import composed_delta as failure_delta
from darrm.privacy.profile import PrivacyProfile

from ..composition import optimal_homogeneous_epsilon
from ..queries import query_pld

__all__ = ["generic_epsilon", "shared_charge"]


def generic_epsilon(profile: PrivacyProfile, eps_q: float, budget: TotalBudget) -> float:
    """ε_total of Q queries each (ε_q, δ_γ(ε_q))-DP (optimal homogeneous composition); inf where
    δ_total < 1 − (1 − δ_q)^Q or δ_q = 1."""
    d_q = float(profile.delta(eps_q))
    if d_q >= 1.0 or budget.delta < failure_delta(d_q, budget.queries):
        return math.inf
    return optimal_homogeneous_epsilon(eps_q, d_q, budget.queries, budget.delta)


def pld_epsilon(profile: PrivacyProfile, budget: TotalBudget, interval: float) -> float:
    """The Q-fold composition of the profile's pair (pessimistic PLD at ``interval``); inf below the
    composed infinite-loss mass."""
    y0 = min(profile.infinite_loss_mass, 1.0 - 1e-16)
    if -math.expm1(budget.queries * math.log1p(-y0)) >= budget.delta:
        return math.inf
    eps = float(query_pld(profile, value_discretization_interval=interval).self_compose(budget.queries)
                .get_epsilon_for_delta(budget.delta))
    return max(eps, 0.0) if math.isfinite(eps) else math.inf


def shared_charge(budget: TotalBudget) -> Callable[[PrivacyProfile, str, float | None, float], float]:
    """The ``charge`` of :func:`darrm.budget.design.design_for_budget` (module docstring)."""
    def charge(profile: PrivacyProfile, family: str, eps_q: float | None, interval: float) -> float:
        total = pld_epsilon(profile, budget, interval)
        if eps_q is not None:
            total = min(total, generic_epsilon(profile, eps_q, budget))
        return total

    return charge

"""Q-fold composition of one query's exact privacy profile: the certificate of a total budget.

Every total-budget table is certified here, never by the LP that produced it: its exact profile
(:func:`darrm.models.profile.privacy_profile`, rounded outward) gives a finite dominating pair
(P, Q) (Zhu, Dong & Wang 2022, Definition 7), whose Q-fold product dominates Q adaptively chosen
queries answered with fresh member randomness (their Theorem 10).  The product is composed as a
dp_accounting privacy-loss distribution with pessimistic discretisation (every loss rounded UP to
the grid, truncated tail mass counted as infinite loss: Doroshenko et al. 2022), so the reported
ε(δ_tot) is an upper bound on the exact one.

This module is the single place darrm.budget composes; it delegates the PLD to dp_accounting and
will delegate to the accountant of :mod:`accounting` once it lands there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..privacy.profile import PrivacyProfile
from ..validation import count, open_unit, positive

#: PLD loss grid: Q·d bounds the ε the rounding can add (pessimistic rounding per query)
DISCRETIZATION = 1e-4
#: tail mass dropped by the FFT composition, counted as infinite loss (pessimistic)
TAIL_TRUNCATION = 1e-15


def _pld(profile: PrivacyProfile, discretization: float):
    from dp_accounting.pld import privacy_loss_distribution as pld

    P, Q = profile.pair()
    upper = {j: math.log(p) for j, p in enumerate(P.tolist()) if p > 0}
    lower = {j: math.log(q) for j, q in enumerate(Q.tolist()) if q > 0}
    return pld.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=True,
                                                   value_discretization_interval=discretization)


@dataclass(frozen=True)
class Composition:
    """ε_total of Q queries at δ_total (an upper bound), with the settings that produced it."""

    epsilon: float
    delta: float
    queries: int
    discretization: float


def composed_epsilon(profile: PrivacyProfile, queries: int, delta: float, *,
                     discretization: float = DISCRETIZATION) -> Composition:
    """ε_total(δ_total) of ``queries`` adaptively composed queries with this profile (upper bound;
    inf when δ_total is below the composed infinite-loss mass 1 − (1 − δ_γ(∞))^Q).

    Raises:
        ParameterError: a bad value."""
    queries = count("queries", queries)
    delta = open_unit("delta", delta)
    discretization = positive("discretization", discretization)
    floor = -math.expm1(queries * math.log1p(-min(profile.infinite_loss_mass, 1.0 - 1e-16)))
    if floor >= delta:
        return Composition(math.inf, delta, queries, discretization)
    composed = _pld(profile, discretization).self_compose(queries, tail_mass_truncation=TAIL_TRUNCATION)
    eps = float(composed.get_epsilon_for_delta(delta))
    return Composition(max(eps, 0.0) if np.isfinite(eps) else math.inf, delta, queries, discretization)

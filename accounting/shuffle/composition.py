"""Composition of T shuffled rounds through a dominating pair built from the privacy profile.

Claim.  Let δ̄(ε) >= δ(ε) for every ε >= 0 bound the privacy profile of one shuffled round in both
directions (every valid upper bound of :mod:`darrm.accounting.shuffle` does), and let the round's
local randomizer be ε0-LDP.  Write H(α) = sup_S P(S) − α Q(S) (α = e^ε) for a neighbouring pair
(P, Q).  H is convex and non-increasing, H(0) = 1, H(α) = 1 − α for α <= e^{−ε0} and 0 for
α >= e^{ε0}; for 0 < α < 1, H(α) = 1 − α + α·H_rev(1/α) (H_rev: the reverse direction), so
H(e^ε) <= h(ε) := δ̄(ε) for ε >= 0 and 1 − e^ε + e^ε δ̄(−ε) for ε < 0.  The greatest convex
minorant H̃ of the points (0, 1), (e^{ε_i}, h(ε_i)) over a grid ε_i ∈ [−ε0, ε0] is >= H (H is
convex and below every point), and a convex, piecewise-linear, non-increasing H̃ with H̃(0) = 1,
slope −1 on its first piece and 0 after e^{ε0} is the hockey-stick curve of the discrete pair
(P̃, Q̃) with an atom at every kink α_j: Q̃ = (slope increase at α_j), P̃ = α_j·Q̃ ("connect the
dots", Doroshenko et al. 2022).  So (P̃, Q̃) dominates every neighbouring pair of the round, in
both directions; the T-fold product of dominating pairs dominates the T-round (adaptive)
composition (Zhu, Dong, Wang 2022, Thm 10), and dp_accounting composes it, rounding privacy
losses up (``pessimistic_estimate=True``).

The result is an upper bound on the composed ε(δ); it is as tight as δ̄ and the ε grid.

Which δ̄ (:func:`round_profile`, named by :func:`round_profile_name` in ``darrm shuffle --rounds``):

* binary RR: the exact law of the shuffled count over every split of the others
  (:mod:`.binary_rr_exact`);
* k-ary RR, k ≥ 3: the optimal (privacy-blanket) decomposition, its GPARV sum computed from exact
  count sums (:mod:`.decomposition`).  For k-RR it is the tightest profile this package proves: at
  n ≤ 20 it is within 0.2 % of the exact enumeration over every dataset at ε = 0.1 (δ within 1–30 %
  at larger ε); the k-RR "stronger clone" count law (each other user a fair coin on {a, b} with
  probability 2/(e^{ε0}+k−1), Feldman, McMillan & Talwar 2023) is valid too but 7–570 % higher in δ
  there, so it is not used.  Composed, the rounds are within 0.5–0.8 % of the exact composition of
  the count law (N_a, N_b) of one dataset (every other user holding a third class, the worst
  dataset at small n) at n ∈ {100, 200, 300}, and never below it
  (``tests/accounting/shuffle/test_rounds_krr.py``).  At n ≤ 8 (ε0 = ln 3) they are 4.6–6.8 % above
  that dataset's exact rational composition (n = 5, k = 4, 2 rounds: 4.6 %; n = 6, k = 3, 3 rounds:
  6.7 %; n = 8, k = 3, 2 rounds: 6.8 %), a lower bound on the exact worst case over every dataset,
  which the decomposition bounds; the exact k-RR law over every dataset of the others is not computed
  (its histograms grow like n^{k−1} per dataset and the datasets like n^{k−1} too), so the 5 % of
  binary RR's exact count law is not claimed for k-RR at small n;
* a generic ε0-LDP randomizer: the clone bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError, require

from .randomizers import GenericLDP, Randomizer, as_finite

#: ε grid points per round on [0, ε0] (denser near 0, where composition lives)
GRID_POINTS = 48
#: dp_accounting's privacy-loss discretisation
DISCRETIZATION = 1e-4


def _lower_convex_hull(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Indices of the vertices of the greatest convex minorant of points sorted by x."""
    hull: list[int] = []
    for i in range(len(x)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            # drop b if it lies on or above the segment a-i
            if (y[b] - y[a]) * (x[i] - x[a]) >= (y[i] - y[a]) * (x[b] - x[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.array(hull)


def dominating_pair(delta_of_eps: Callable[[float], float], eps0: float,
                    points: int = GRID_POINTS) -> tuple[np.ndarray, np.ndarray]:
    """The connect-the-dots dominating pair (P̃, Q̃) of a round whose privacy profile (both
    directions) is <= ``delta_of_eps`` and whose randomizer is ``eps0``-LDP (module docstring).

    Args:
        delta_of_eps: an upper bound on the round's δ(ε), ε >= 0.
        eps0: the local randomizer's ε0 (the pair's losses lie in [−ε0, ε0]).
        points: grid points on [0, ε0].

    Returns:
        (losses, (p, q)) as arrays: atom j has privacy loss ``losses[j]`` = log(p_j/q_j);
        the P̃ mass missing from 1 (if any) is at loss +∞.

    Raises:
        ParameterError: ``points`` < 2 or ``eps0`` not > 0.
    """
    eps0 = v.epsilon("eps0", eps0)
    points = v.count("points", points, minimum=2)
    pos = eps0 * (np.arange(points + 1) / points) ** 2
    dpos = np.array([min(1.0, max(0.0, float(delta_of_eps(float(e))))) for e in pos])
    dpos[-1] = 0.0  # ε >= ε0: the victim's report is ε0-LDP
    eps = np.concatenate([-pos[:0:-1], pos])
    h = np.concatenate([1 - np.exp(-pos[:0:-1]) + np.exp(-pos[:0:-1]) * dpos[:0:-1], dpos])
    alpha = np.concatenate([[0.0], np.exp(eps)])
    hh = np.concatenate([[1.0], h])
    idx = _lower_convex_hull(alpha, hh)
    a, y = alpha[idx], hh[idx]
    slopes = np.diff(y) / np.diff(a)
    slopes = np.append(slopes, 0.0)  # flat after the last vertex (H = 0 beyond e^{ε0})
    q = np.diff(slopes)  # slope increase at vertices 1..M
    av = a[1:]
    keep = q > 0
    q, av = q[keep], av[keep]
    p = av * q
    return np.log(av), np.stack([p, q])


#: which per-round profile :func:`round_profile` composes, by name (printed by ``darrm shuffle --rounds``)
PROFILE_BINARY_RR_EXACT = "binary-rr-exact-count-law"
PROFILE_DECOMPOSITION = "optimal-decomposition"
PROFILE_CLONES = "clones"


def round_profile_name(randomizer: Randomizer) -> str:
    """The name of the per-round profile :func:`round_profile` uses for ``randomizer``."""
    from .randomizers import RandomizedResponse

    if isinstance(randomizer, GenericLDP) or as_finite(randomizer) is None:
        return PROFILE_CLONES
    if isinstance(randomizer, RandomizedResponse) and randomizer.k == 2:
        return PROFILE_BINARY_RR_EXACT
    return PROFILE_DECOMPOSITION


def round_profile(randomizer: Randomizer, n: int) -> Callable[[float], float]:
    """An upper bound on one shuffled round's δ(ε), the tightest this package proves: for binary
    randomized response, the exact curve of the shuffled count over every dataset
    (:func:`.binary_rr_exact.exact_delta`, ``kind="upper"``: exact up to its stated error terms);
    else the optimal decomposition (capped by the clone and variation-ratio pairs) for a specific
    randomizer, the clone bound for a generic ε0-LDP one (:func:`round_profile_name`)."""
    from .binary_rr_exact import exact_delta
    from .clones import clone_delta
    from .decomposition import capped_optimal_delta

    name = round_profile_name(randomizer)
    if name == PROFILE_CLONES:
        return lambda e: clone_delta(e, n, randomizer.eps0)
    if name == PROFILE_BINARY_RR_EXACT:
        return lambda e: min(exact_delta(randomizer.eps0, n, e, "upper"), capped_optimal_delta(randomizer, n, e))
    return lambda e: capped_optimal_delta(randomizer, n, e)


@dataclass(frozen=True)
class ShuffleRound:
    """One shuffled round: ``n`` users, each reporting through ``randomizer``, ``count`` times."""

    randomizer: Randomizer
    n: int
    count: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "n", v.count("n", self.n))
        object.__setattr__(self, "count", v.count("count", self.count))


def _pld(losses: np.ndarray, pq: np.ndarray, discretization: float):
    pld_mod = require("dp_accounting.pld.privacy_loss_distribution", "accounting", "shuffle composition")
    p, q = pq
    upper = {j: math.log(pj) for j, pj in enumerate(p)}
    lower = {j: math.log(qj) for j, qj in enumerate(q)}
    missing = 1.0 - float(p.sum())
    if missing > 1e-15:  # P̃ mass at infinite loss: an outcome Q̃ never produces
        upper[len(p)] = math.log(missing)
    return pld_mod.from_two_probability_mass_functions(lower, upper, pessimistic_estimate=True,
                                                      value_discretization_interval=discretization)


def rounds_epsilon(rounds: Sequence[ShuffleRound], delta: float, *, points: int = GRID_POINTS,
                     discretization: float = DISCRETIZATION) -> float:
    """ε of the composition of shuffled rounds at total ``delta`` (an upper bound; module docstring).

    Args:
        rounds: the rounds (heterogeneous: each its own randomizer and n; ``count`` repeats one).
        delta: the total δ.
        points: ε grid points per round on [0, ε0].
        discretization: dp_accounting's privacy-loss discretisation interval.

    Returns:
        ε_total such that the composed protocol is (ε_total, delta)-DP.

    Raises:
        ParameterError: no rounds, a bad ``delta``.
        MissingDependencyError: dp_accounting is not installed.
    """
    delta = v.open_unit("delta", delta)
    if not rounds:
        raise ParameterError("rounds", "need at least one round")
    total = None
    for r in rounds:
        if not isinstance(r, ShuffleRound):
            raise ParameterError("rounds", f"must be ShuffleRound values, got {r!r}")
        losses, pq = dominating_pair(round_profile(r.randomizer, r.n), r.randomizer.eps0, points)
        pld = _pld(losses, pq, discretization)
        if r.count > 1:
            pld = pld.self_compose(r.count)
        total = pld if total is None else total.compose(pld)
    assert total is not None
    return float(total.get_epsilon_for_delta(delta))

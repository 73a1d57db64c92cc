"""Tight Q-fold composition of shuffled binary randomised-response votes: the dominating PLD.

Composing the per-query (ε, δ) of the shuffled count L (:mod:`darrm.accounting.votes.one_round`)
is valid but loose: it forgets the shape of L's privacy-loss distribution.  This module
composes that distribution itself.

**Why a single pair can be composed.**  Over Q queries the adversary may pick, per query
(and adaptively), the split n1 of the other members and the victim's bits, so the Q-fold
worst case is *not* the Q-fold product of one fixed pair (the n1 worst for one query need
not be worst for Q).  We use a *dominating pair* (Zhu, Dong & Wang 2022, "Optimal accounting
of differential privacy via characteristic function", Def. of dominating pairs and their
adaptive-composition theorem): a pair (P*, Q*) with

    H_α(P* ‖ Q*) ≥ H_α(M(D) ‖ M(D′))   for every α = e^ε ≥ 0 and every ordered neighbouring pair.

For any mechanism the privacy profile δ*(ε) := sup_{D~D′} H_{e^ε}(M(D)‖M(D′)), taken over
*all* ε ∈ ℝ, is itself the hockey-stick curve of some pair (same paper: a tight dominating
pair exists; equivalently, in f-DP, the convex hull of the trade-off functions of all
pairs is a trade-off function whose conjugate is δ*).  The adaptive Q-fold composition of
mechanisms dominated by (P*, Q*) is dominated by (P*^Q, Q*^Q).  Here the supremum is a
maximum over the K values of n1 and the two directions (victim 1→0 or 0→1; a victim whose
bit does not change gives identical distributions) — the reduction of
:mod:`darrm.accounting.votes.one_round`.

**From the profile to a PLD.**  δ*(ε) is evaluated exactly on the grid ε_i = i·d,
i = ⌊−ε0/d⌋..⌈ε0/d⌉ (every loss of every pair lies in [−ε0, ε0]: the victim's own report is
ε0-DP), and turned into a discrete PLD by the *pessimistic connect-the-dots* construction of
dp_accounting (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, Algorithm 1): its
hockey-stick curve equals δ* at the grid points and, δ* being convex in α = e^ε, the chord
between them lies above δ*; the grid covers the whole loss range, so the PLD dominates
(P*, Q*) for all α.  Q-fold self-composition then uses dp_accounting's FFT with pessimistic
tail truncation (truncated mass goes to +∞).  Every step over-estimates δ, so the result is a
valid (ε, δ) for Q adaptive queries.

Numerics: δ* at a grid point is Σ_{loss>ε}P − e^ε Σ_{loss>ε}Q from suffix sums of the
losses sorted within each (n1, direction) block, plus the truncated mass of the binomial
windows (≤ ~4e-30); absolute error ~1e-16.  The values are made non-increasing by raising
earlier ones (never lowering), so the connect-the-dots input stays pessimistic.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from dp_accounting.pld import pld_pmf
from dp_accounting.pld.privacy_loss_distribution import PrivacyLossDistribution

from darrm import validation as v
from darrm.errors import ParameterError

from .one_round import ShuffledBinaryRR

DISCRETIZATION = 1e-3
TAIL_MASS_TRUNCATION = 1e-15

__all__ = ["DISCRETIZATION", "composed_pld", "dominating_pld", "dominating_profile", "rounds_delta", "rounds_epsilon"]


def _discretization(d: float) -> float:
    d = v.positive("discretization", d)
    if d > 0.5:
        raise ParameterError("discretization", f"must be <= 0.5, got {d!r}")
    return d


def dominating_profile(K: int, eps0: float, eps: np.ndarray) -> np.ndarray:
    """δ*(ε) = max over n1 ∈ {0..K−1} and both directions of H_{e^ε}(L_D ‖ L_D′), for every real
    ε in ``eps`` (negative ε allowed: the profile of the dominating pair is needed for all α ≥ 0).

    Upper bound on the exact value by at most the truncated binomial mass (≤ ~4e-30) plus
    float rounding."""
    m = ShuffledBinaryRR(K, eps0)
    eps = np.asarray(eps, dtype=np.float64)
    if eps.ndim != 1 or eps.size == 0 or not np.all(np.isfinite(eps)):
        raise ParameterError("eps", "must be a non-empty 1-d array of finite values")
    alpha = np.exp(np.minimum(eps, 700.0))
    q, r = m.q, m.r
    prev, cur, starts = m._shifted  # X_{l−1}, X_l per block (block n1), padded by one zero
    ends = np.append(starts[1:], prev.size)
    best = np.zeros(eps.size)
    for n1, (a, b) in enumerate(zip(starts, ends, strict=True)):
        x0, x1 = prev[a:b], cur[a:b]
        P, Pp = q * x0 + r * x1, r * x0 + q * x1  # victim at 1 (D) and at 0 (D′)
        with np.errstate(divide="ignore"):
            loss = np.log(P) - np.log(Pp)
        keep = (P > 0) & (Pp > 0)
        block = np.zeros(eps.size)
        for up, lo, s in ((P[keep], Pp[keep], 1.0), (Pp[keep], P[keep], -1.0)):
            o = np.argsort(s * loss[keep])  # ascending loss of this direction
            lu, uu, ll = s * loss[keep][o], up[o], lo[o]
            # suffix sums over losses > ε: Σ up − α Σ lo
            su = np.concatenate((np.cumsum(uu[::-1])[::-1], [0.0]))
            sl = np.concatenate((np.cumsum(ll[::-1])[::-1], [0.0]))
            i = np.searchsorted(lu, eps, side="right")
            block = np.maximum(block, su[i] - alpha * sl[i])
        best = np.maximum(best, block + m.others.dropped[n1])
    return np.minimum(1.0, best)


@lru_cache(maxsize=64)
def _pld(K: int, eps0: float, d: float) -> PrivacyLossDistribution:
    lo, hi = math.floor(-eps0 / d), math.ceil(eps0 / d)
    grid = np.arange(lo, hi + 1) * d
    deltas = dominating_profile(K, eps0, grid)
    deltas[0] = max(deltas[0], -math.expm1(grid[0]))  # H_α ≥ 1 − α for every pair
    deltas = np.maximum.accumulate(deltas[::-1])[::-1]  # non-increasing, by raising only
    pmf = pld_pmf.create_pmf_pessimistic_connect_dots_fixed_gap(d, lo, hi, deltas)
    return PrivacyLossDistribution(pmf)


def dominating_pld(K: int, eps0: float, discretization: float = DISCRETIZATION) -> PrivacyLossDistribution:
    """Pessimistic PLD (dp_accounting) dominating one round of shuffled ε0-RR votes from K members."""
    m = ShuffledBinaryRR(K, eps0)
    return _pld(m.K, m.eps0, _discretization(discretization))


@lru_cache(maxsize=64)
def _composed(K: int, eps0: float, queries: int, d: float) -> PrivacyLossDistribution:
    p = _pld(K, eps0, d)
    return p if queries == 1 else p.self_compose(queries, tail_mass_truncation=TAIL_MASS_TRUNCATION)


def composed_pld(K: int, eps0: float, queries: int, discretization: float = DISCRETIZATION) -> PrivacyLossDistribution:
    """The dominating PLD self-composed ``queries`` times (valid for adaptive queries)."""
    m = ShuffledBinaryRR(K, eps0)
    return _composed(m.K, m.eps0, v.count("queries", queries), _discretization(discretization))


def rounds_delta(K: int, eps0: float, queries: int, eps: float, discretization: float = DISCRETIZATION) -> float:
    """Upper bound on δ(ε) of Q rounds (adaptive) of shuffled ε0-RR votes from K members."""
    eps = v.epsilon("eps", eps, allow_zero=True)
    return float(min(1.0, composed_pld(K, eps0, queries, discretization).get_delta_for_epsilon(eps)))


def rounds_epsilon(K: int, eps0: float, queries: int, delta: float, discretization: float = DISCRETIZATION) -> float:
    """Upper bound on ε(δ) of Q rounds (adaptive) of shuffled ε0-RR votes; never above Q·ε0."""
    delta = v.open_unit("delta", delta)
    e = float(composed_pld(K, eps0, queries, discretization).get_epsilon_for_delta(delta))
    return max(0.0, min(e, queries * float(eps0)))

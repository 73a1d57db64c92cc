"""Brute-force high-precision privacy profile (the tests' independent reference; not shipped).

δ(ε′) = max over every corner multiset (Lemma 5.1), both outputs and both directions of
max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]) (Claim 1 of :mod:`darrm.privacy.profile`), with every
probability computed in mpmath at ``dps`` digits from the exact binary values of γ: the corners
from their closed forms, each multiset's Poisson-binomial pmf by its own product, Pr[A = 0] as
1 − Pr[A = 1] (harmless at this precision).  Exponential in K: for K ≤ ~9 only.  Disjoint
members: the same over their O(K) configurations with exact binomial laws (no windows).
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np

from darrm import ApproxDP, DisjointParams, LocalRR, NonPrivate, PrivacyParams
from darrm.gamma import validate_gamma

__all__ = ["cloud_reference", "mp_corners", "mp_member_region", "mp_pmf", "profile_reference"]


def _weights(gamma: np.ndarray) -> list:
    K = gamma.shape[0] - 1
    mid = (K + 1) // 2
    return [mpmath.mpf(float(gv)) * (1 if i >= mid else 0) + (1 - mpmath.mpf(float(gv))) / 2
            for i, gv in enumerate(gamma)]


def mp_pmf(ps: list) -> list:
    """The law of a sum of independent Bernoulli(p) votes, by its definition (at mpmath's precision)."""
    a = [mpmath.mpf(1)]
    for p in ps:
        nxt = [mpmath.mpf(0)] * (len(a) + 1)
        for i, v in enumerate(a):
            nxt[i] += v * (1 - p)
            nxt[i + 1] += v * p
        a = nxt
    return a


def mp_corners(eps: float, Delta: float) -> list:
    """The (ε, Δ) region's corners (:func:`darrm.privacy.corners.corners`) in mpmath, from their closed forms."""
    e = mpmath.exp(mpmath.mpf(eps))
    D = mpmath.mpf(Delta)
    hi, lo = (e + D) / (e + 1), (1 - D) / (e + 1)
    if Delta == 0:
        return [(0, 0), (1, 1), (hi, lo), (lo, hi)]
    return [(0, 0), (1, 1), (0, D), (D, 0), (1 - D, 1), (1, 1 - D), (hi, lo), (lo, hi)]


def mp_member_region(member: ApproxDP | LocalRR | NonPrivate) -> tuple[list[tuple], tuple]:
    """(the vertices of a changed member's (p, p′) region, the two ends (lo, hi) of an unchanged
    member's p) for a disjoint-members model (:mod:`darrm.models.disjoint.members`), in mpmath from the
    models' definitions: (ε, Δ)-DP members: the corners of :func:`mp_corners` and [0, 1];
    local randomized response with ε₀: r = 1/(e^{ε₀} + 1), the vertices {r, 1 − r}² and [r, 1 − r];
    non-private members: {0, 1}² and [0, 1]."""
    one = mpmath.mpf(1)
    if isinstance(member, ApproxDP):
        return [(mpmath.mpf(p), mpmath.mpf(q)) for p, q in mp_corners(member.eps, member.delta)], (0 * one, one)
    if isinstance(member, LocalRR):
        r = 1 / (mpmath.exp(mpmath.mpf(member.eps0)) + 1)
        return [(a, b) for a in (r, 1 - r) for b in (r, 1 - r)], (r, 1 - r)
    if isinstance(member, NonPrivate):
        return [(a * one, b * one) for a in (0, 1) for b in (0, 1)], (0 * one, one)
    raise TypeError(f"no region for member model {member!r}")


def cloud_reference(gamma: np.ndarray, params: PrivacyParams | DisjointParams, dps: int = 40) -> list:
    """Every (Pr[A(D)=o], Pr[A(D′)=o]) pair, both outputs and both directions, in mpmath."""
    g = validate_gamma(gamma, params.K)
    K = params.K
    with mpmath.workdps(dps):
        w = _weights(g)
        pairs = []
        if isinstance(params, DisjointParams):
            vs, (lo, hi) = mp_member_region(params.member)
            configs = [([p] + [hi] * n + [lo] * (K - 1 - n), [pp] + [hi] * n + [lo] * (K - 1 - n))
                       for (p, pp) in vs for n in range(K)]
        else:
            cs = mp_corners(params.eps, params.member_delta)
            configs = []
            for combo in itertools.combinations_with_replacement(range(len(cs)), K):
                configs.append(([cs[c][0] for c in combo], [cs[c][1] for c in combo]))
        for ps, pps in configs:
            a, ap = mp_pmf(ps), mp_pmf(pps)
            p1 = mpmath.fsum(x * y for x, y in zip(a, w, strict=True))
            pp1 = mpmath.fsum(x * y for x, y in zip(ap, w, strict=True))
            pairs += [(p1, pp1), (pp1, p1), (1 - p1, 1 - pp1), (1 - pp1, 1 - p1)]
        return pairs


def profile_reference(gamma: np.ndarray, params: PrivacyParams | DisjointParams, eps: np.ndarray,
                      dps: int = 40) -> np.ndarray:
    """δ(ε′) for each ε′ in ``eps`` by brute force in high precision (float64 of the result)."""
    pairs = cloud_reference(gamma, params, dps)
    out = []
    with mpmath.workdps(dps):
        for e in np.asarray(eps, dtype=np.float64).ravel():
            s = mpmath.exp(mpmath.mpf(float(e)))
            out.append(float(max(mpmath.mpf(0), max(a - s * b for a, b in pairs))))
    return np.array(out)

"""The δ of composing k (·, δ)-DP steps with one extra slack δ′, and its inverse.

Simple and advanced composition, Kairouz et al.'s general theorem and the paper's
1 − (1 − Δ)^m all end with the same failure probability: each of k steps fails with
probability ≤ δ and the composition theorem itself adds δ′, so the composition fails with
probability ≤ 1 − (1 − δ)^k (1 − δ′).  Computed as −expm1(k·log1p(−δ) + log1p(−δ′)) so tiny δ
keep their precision; rounding goes toward the larger (safe) δ.
"""

from __future__ import annotations

import math


def composed_delta(delta: float, k: float = 1.0, extra: float = 0.0) -> float:
    """1 − (1 − δ)^k (1 − δ′): the δ of k steps that fail with probability δ each, plus δ′.

    k may be real (the paper's m-fold composition for real m ≥ 1).  Never below
    max(δ, δ′) when k ≥ 1: the max guards rounding toward the weaker (safe) claim."""
    if delta == 0.0 and extra == 0.0:
        return 0.0
    if delta >= 1.0 or extra >= 1.0:
        return 1.0
    out = -math.expm1(k * math.log1p(-delta) + math.log1p(-extra))
    return max(out, extra, delta if k >= 1 else 0.0)


def per_step_delta(total: float, k: float = 1.0, extra: float = 0.0) -> float:
    """The per-step δ whose k-fold :func:`composed_delta` with δ′ = ``extra`` equals ``total``:
    1 − ((1 − total)/(1 − δ′))^{1/k}, rounded toward the smaller (safe) δ; 0 if total ≤ δ′."""
    if total <= extra:
        return 0.0
    d = -math.expm1((math.log1p(-total) - math.log1p(-extra)) / k)
    return float(math.nextafter(d, 0.0)) if d > 0 else 0.0

"""The γ families of DaRRM (Algorithm 1): symmetric noise functions γ: {0..K} → [0, 1].

A γ is stored as the full table of K+1 floats but is determined by its upper half
γ(mid..K), mid = (K+1)/2, because every γ here is symmetric, γ(l) = γ(K−l)
(Section 3 restricts γ to symmetric functions; Lemma 3.4 needs it).

Families:
    * :func:`gamma_const` — randomized response with the largest p_const (Lemma A.1).
    * :func:`gamma_sub`   — subsampling m of K without replacement (Lemma 3.1).
    * :func:`gamma_dsub`  — the 2m−1 subsampling γ of Theorem 4.1 (pure DP).
    * γ_opt is in :mod:`darrm.solver.gamma_opt`.
"""

from __future__ import annotations

import math
import operator
from typing import SupportsIndex

import numpy as np

from .errors import ParameterError
from .params import PrivacyParams
from .privacy.corners import corners
from .validation import EPS_MAX, float_array, half_open_unit, instance, odd_count, positive


def symmetric_from_upper(upper: np.ndarray, K: int) -> np.ndarray:
    """Full table γ(0..K) from γ(mid..K) using γ(K−l) = γ(l)."""
    upper = np.asarray(upper, dtype=np.float64)
    mid = (K + 1) // 2
    if upper.shape != (K + 1 - mid,):
        raise ParameterError("gamma", f"upper half must have {K + 1 - mid} entries, got shape {upper.shape}")
    return np.concatenate([upper[::-1], upper])


def upper_half(gamma: np.ndarray) -> np.ndarray:
    """γ(mid..K) of a full table."""
    gamma = np.asarray(gamma, dtype=np.float64)
    K = gamma.shape[0] - 1
    return gamma[(K + 1) // 2 :].copy()


def validate_gamma(gamma: object, K: int | None = None, *, name: str = "gamma", sym_tol: float = 0.0) -> np.ndarray:
    """Check a full γ table: 1-D, length K+1 (K odd), finite, in [0, 1], symmetric."""
    g = float_array(name, gamma)
    if g.ndim != 1:
        raise ParameterError(name, f"must be a 1-D table, got shape {g.shape}")
    Kg = g.shape[0] - 1
    if K is not None and Kg != K:
        raise ParameterError(name, f"must have K+1={K + 1} entries, got {g.shape[0]}")
    if Kg < 1 or Kg % 2 == 0:
        raise ParameterError(name, f"length must be K+1 with K odd >= 1, got {g.shape[0]}")
    if not np.all(np.isfinite(g)):
        raise ParameterError(name, "contains NaN or infinite values")
    if np.any(g < 0.0) or np.any(g > 1.0):
        raise ParameterError(name, "values must lie in [0, 1]")
    if np.max(np.abs(g - g[::-1])) > sym_tol:
        raise ParameterError(name, "must be symmetric: gamma[l] == gamma[K-l]")
    return g


def _integer_m(m: object, K: int, name: str = "m") -> int:
    try:
        if isinstance(m, float) and m.is_integer():
            m = int(m)
        if not isinstance(m, SupportsIndex):
            raise TypeError(m)
        mi = operator.index(m)
    except TypeError:
        raise ParameterError(name, f"must be an integer for subsampling, got {m!r}") from None
    if not 1 <= mi <= K:
        raise ParameterError(name, f"must lie in [1, K={K}], got {mi}")
    return int(mi)


def gamma_sub(K: int, m: int) -> np.ndarray:
    """γ_Sub of Lemma 3.1: DaRRM_γSub has the law of the majority of m of the K votes
    drawn without replacement (SubMaj, Algorithm 3), ties of even m broken by a fair coin.

    With H ~ Hypergeom(K, l, m) and h_m(l) = Pr[H ≥ (m+1)/2] (m odd) or
    Pr[H ≥ m/2+1] + ½Pr[H = m/2] (m even): γ(l) = 1 − 2h_m(l) for l ≤ (K−1)/2 and
    γ(l) = γ(K−l) above (the paper's display of Lemma 3.1 holds for l ≤ (K−1)/2 only).

    Args:
        K: the number of members (odd).
        m: the subsample size, an integer in [1, K].

    Returns:
        γ_Sub(l) for l = 0..K, symmetric, in [0, 1].

    Raises:
        ParameterError: ``K`` is not an odd count or ``m`` not an integer in [1, K].
    """
    K = odd_count("K", K)
    m = _integer_m(m, K)
    lows = np.arange((K + 1) // 2)  # l = 0..(K-1)/2
    from scipy import stats  # scipy.stats costs ~0.3 s to import: only where it is used

    H = stats.hypergeom(K, lows, m)
    if m % 2 == 1:
        h = H.sf((m + 1) // 2 - 1)
    else:
        h = H.sf(m // 2) + 0.5 * H.pmf(m // 2)
    low = np.clip(1.0 - 2.0 * h, 0.0, 1.0)
    return np.concatenate([low, low[::-1]])


def gamma_dsub(K: int, m: int) -> np.ndarray:
    """γ of Theorem 4.1 (pure DP, i.i.d. mechanisms): γ ≡ 1 if m ≥ (K+1)/2, else γ_Sub with
    subsample size 2m−1 ("double subsampling"), which is mε-DP.

    Args:
        K: the number of members (odd).
        m: the privacy allowance, an integer in [1, K].

    Returns:
        γ_DSub(l) for l = 0..K, symmetric, in [0, 1].

    Raises:
        ParameterError: ``K`` is not an odd count or ``m`` not an integer in [1, K].
    """
    K = odd_count("K", K)
    m = _integer_m(m, K)
    if m >= (K + 1) // 2:
        return np.ones(K + 1)
    return gamma_sub(K, 2 * m - 1)


def const_assumptions(params: PrivacyParams, tau: float | None = None,
                      lam: float | None = None) -> tuple[float, float]:
    """(τ, λ) of Lemma A.1, checked: τ > 0 with τε ≤ 700, λ ∈ [0, 1); defaults τ = K and
    λ = 1 − (1 − Δ)^K (K-fold composition)."""
    instance("params", params, PrivacyParams, "a darrm.PrivacyParams")
    K = params.K
    tau = float(K) if tau is None else positive("tau", tau)
    if tau * params.eps > EPS_MAX:
        raise ParameterError("tau", f"tau*eps={tau * params.eps!r} is too large to represent e^(tau*eps)")
    if lam is None:
        lam = 0.0 if params.member_delta == 0 else -math.expm1(K * math.log1p(-params.member_delta))
    return tau, half_open_unit("lam", lam)


def p_const(params: PrivacyParams, tau: float | None = None, lam: float | None = None) -> float:
    """Largest p_const for which RR (Algorithm 2) is (mε, δ)-DP (Lemma A.1, Eq. 4/16).

    The true majority of the K votes is assumed (τε, λ)-DP (:func:`const_assumptions`).
    We maximise h(q, q′) = q − e^{mε}q′ + ½(e^{mε}−1)
    over the 8 corners of the (τε, λ) region rather than using the closed form, which is
    only the maximiser when τ ≥ m; the result is clipped at 1 (Lemma A.1).
    """
    tau, lam = const_assumptions(params, tau, lam)
    e = params.exp_meps
    c = corners(tau * params.eps, lam)
    h = c[:, 0] - e * c[:, 1] + 0.5 * (e - 1.0)
    hmax = float(h.max())
    budget = 0.5 * (e - 1.0) + params.delta
    return 1.0 if hmax <= budget else budget / hmax


def gamma_const(params: PrivacyParams, tau: float | None = None, lam: float | None = None) -> np.ndarray:
    """γ_const ≡ p_const: randomized response (Algorithm 2) as a DaRRM instance (Lemma A.1).

    Args:
        params: the members' (ε, Δ), K, m and the target δ.
        tau: the true majority is assumed (τε, λ)-DP (default τ = K, the K-fold composition).
        lam: the λ of that assumption (default 1 − (1 − Δ)^K).

    Returns:
        The constant table p_const for l = 0..K.

    Raises:
        ParameterError: ``params`` is no PrivacyParams, τ ≤ 0 or τε > 700, or λ ∉ [0, 1).
    """
    p = p_const(params, tau, lam)
    return np.full(params.K + 1, p)


def gamma_threshold(K: int, scale: float) -> np.ndarray:
    """γ of the Gaussian threshold (binary GNMax, Papernot et al. 2018, "GNMax" with two classes):
    γ(l) = 2Φ(|l − K/2|/s) − 1 = erf(|l − K/2|/(s√2)), s = ``scale``.

    **Claim (equal output laws).**  Let L be the number of 1-votes among the K members (K odd) and
    Z ~ N(0, s²) independent of L.  The Gaussian threshold releases 1 iff L − K/2 + Z > 0.  DaRRM_γ
    (Algorithm 1) with this γ has, given every value of L, the same output law; so the two
    mechanisms have the same law for every law of the votes, hence the same privacy and utility.

    *Proof.*  Given L = l the threshold releases 1 with probability Pr[Z > K/2 − l] = Φ((l − K/2)/s)
    (Z is symmetric; l ≠ K/2 as K is odd).  DaRRM_γ releases the majority with probability γ(l),
    otherwise a fair coin, so it releases 1 with probability w_l = γ(l)·1{l ≥ (K+1)/2} + (1 − γ(l))/2
    (:func:`darrm.mechanism.output_weights`).  For l > K/2: w_l = (1 + γ(l))/2 = Φ(|l − K/2|/s) =
    Φ((l − K/2)/s).  For l < K/2: w_l = (1 − γ(l))/2 = 1 − Φ(|l − K/2|/s) = Φ(−|l − K/2|/s) =
    Φ((l − K/2)/s).  Both agree with the threshold's; γ(l) ∈ [0, 1) and γ(l) = γ(K − l).  ∎

    GNMax with noise N(0, σ²) on each of the two counts releases 1 iff L + Z₁ > (K − L) + Z₂, i.e.
    L − K/2 + (Z₁ − Z₂)/2 > 0: the threshold with s = σ/√2.  The margin L − K/2 changes by at most
    1 when one member's vote changes, so on disjoint shards the release is (1/s)-GDP (Dong, Roth &
    Su 2022, Theorem 2.7; post-processing).

    Args:
        K: the number of members (odd).
        scale: s > 0, the standard deviation of the noise on the margin L − K/2.

    Returns:
        γ(0..K), symmetric, in [0, 1] (1 in float64 where erf rounds to 1).

    Raises:
        ParameterError: ``K`` not an odd count or ``scale`` not positive and finite.
    """
    from scipy.special import erf

    K = odd_count("K", K)
    s = positive("scale", scale)
    margin = np.abs(np.arange(K + 1, dtype=np.float64) - 0.5 * K)
    return np.asarray(erf(margin / (s * math.sqrt(2.0))), dtype=np.float64)

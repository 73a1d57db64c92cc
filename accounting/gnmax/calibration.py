"""GNMax (Papernot et al. 2018): noisy argmax of a teacher vote histogram.

M_σ(x) = argmax_i { n_i(x) + N(0, σ²) }  (DaRRM paper Eq. 205).

Sensitivity.  Neighbouring data sets change one teacher's vote, so the histogram
(n_1..n_C) changes in two coordinates by 1 each: ℓ2 sensitivity √2
(:data:`SENSITIVITY_L2`).  The Gaussian mechanism with ℓ2 sensitivity s and
per-coordinate std σ is (λ, λ s²/(2σ²))-RDP, which for s = √2 is the λ/σ² of
Papernot et al. 2018 §4.1 used by the DaRRM paper (Appendix D.2.1).  The argmax
is post-processing, so every bound here applies to GNMax; all three methods of
:func:`calibrate_sigma` use the same sensitivity √2 (noise multiplier σ/√2 in
``dp_accounting``'s unit-sensitivity convention), so they are comparable.

Calibration methods (σ for a per-query target (ε, δ)):

* ``"paper-rdp"`` — the paper's procedure: RDP λ/σ², the classical conversion
  ε = RDP + log(1/δ)/(λ−1) (DaRRM Theorem D.1), grid λ ∈ (λ_min, 500] with step
  0.5 starting at λ_min = log(1/δ)/ε + 1 → σ = 21.46 (MNIST) / 22.46 (FMNIST).
  Hand-written: it *is* the paper's procedure (its grid and its classical conversion,
  which ``dp_accounting`` does not offer), kept to reproduce Table 4.
* ``"rdp"`` — ``dp_accounting.rdp.RdpAccountant`` (Gaussian RDP, the improved conversion
  of Balle et al. 2020 Thm 21 / Canonne, Kamath & Steinke 2020 Prop 12) on a two-stage order
  grid (:func:`rdp_orders`); σ by ``dp_accounting.mechanism_calibration``.
* ``"pld"`` — the exact (ε, δ) curve of the Gaussian mechanism (Balle & Wang 2018, analytic
  Gaussian): ``dp_accounting.gaussian_mechanism`` for σ and ε,
  ``dp_accounting.pld.privacy_loss_mechanism.GaussianPrivacyLoss`` for δ(ε); the smallest σ
  any accountant can certify for the Gaussian-noised histogram.

Agreement with the closed forms these replaced (tests/accounting/gnmax/test_gnmax_library.py):
the exact δ(ε) within 1e-9 relative (σ ∈ [0.5, 200], δ down to 1e-270); the RDP ε within
1e-7 relative of the continuous-λ minimum, never below it (the grid only loses).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError

Method = Literal["paper-rdp", "rdp", "pld"]
METHODS: tuple[Method, ...] = ("paper-rdp", "rdp", "pld")

#: ℓ2 sensitivity of the vote histogram when one teacher changes its vote.
SENSITIVITY_L2 = math.sqrt(2.0)

#: first-stage RDP orders: λ − 1 log-spaced over [0.011, 1e7] (``dp_accounting`` skips λ ≤ 1.01)
COARSE_ORDERS: tuple[float, ...] = tuple(float(x) for x in 1.0 + np.geomspace(0.011, 1e7, 400))


def gaussian_rdp(order: float, sigma: float) -> float:
    """RDP of GNMax at order λ: λ·s²/(2σ²) = λ/σ² for s = √2 (Papernot et al. 2018 §4.1,
    Proposition 8; the per-order value ``dp_accounting``'s RDP accountant adds up, which it does
    not expose)."""
    lam = v.positive("order", order)
    if lam <= 1.0:
        raise ParameterError("order", f"must be > 1, got {order!r}")
    sigma = v.positive("sigma", sigma)
    return lam * SENSITIVITY_L2**2 / (2.0 * sigma * sigma)


def rdp_to_dp_classical(rdp: float, order: float, delta: float) -> float:
    """(λ, ρ)-RDP ⇒ (ρ + log(1/δ)/(λ−1), δ)-DP (Mironov 2017 Prop 3; DaRRM Theorem D.1)."""
    return rdp + math.log(1.0 / delta) / (order - 1.0)


def _gaussian_event(sigma: float, queries: int):
    """Q adaptive GNMax answers with noise σ as a ``dp_accounting`` event (noise multiplier σ/√2)."""
    import dp_accounting

    event = dp_accounting.GaussianDpEvent(sigma / SENSITIVITY_L2)
    return event if queries == 1 else dp_accounting.SelfComposedDpEvent(event, queries)


def _rdp_epsilon(sigma: float, delta: float, queries: int, orders) -> tuple[float, float]:
    """(ε, best order) of ``dp_accounting``'s RDP accountant over ``orders``."""
    from dp_accounting.rdp import RdpAccountant

    acc = RdpAccountant(list(orders))
    acc.compose(_gaussian_event(sigma, queries))
    eps, order = acc.get_epsilon_and_optimal_order(delta)
    return float(eps), float(order)


def rdp_orders(best: float, width: float = 0.05, points: int = 401) -> tuple[float, ...]:
    """Second-stage orders: ``points`` orders log-spaced within a factor 1 ± ``width`` of the
    first stage's best order (λ − 1 scaled, so the grid stays above 1), plus :data:`COARSE_ORDERS`
    (any order gives a valid bound; the fine grid only makes the minimum over λ tighter)."""
    lm1 = best - 1.0
    fine = 1.0 + np.geomspace(lm1 / (1.0 + width), lm1 * (1.0 + width), points)
    return tuple(sorted(set(COARSE_ORDERS) | {float(x) for x in fine}))


@dataclass(frozen=True)
class GridCalibration:
    """Result of the paper's λ grid search (DaRRM Appendix D.2.1, Table 4)."""

    sigma: float
    order: float  # the minimising λ on the grid (≈ 62.3 / 64.7; Table 4 prints λ_min + 3)
    order_min: float  # λ_min = log(1/δ)/ε + 1


def paper_grid(eps: float, delta: float, step: float = 0.5, order_max: float = 500.0) -> GridCalibration:
    """The paper's σ_min: min over λ = λ_min + j·step ≤ order_max (j ≥ 1) of
    σ² = λ / (ε − log(1/δ)/(λ−1)), λ_min = log(1/δ)/ε + 1 (DaRRM D.2.1)."""
    eps = v.epsilon("eps", eps)
    delta = v.open_unit("delta", delta)
    step = v.positive("step", step)
    log_inv = math.log(1.0 / delta)
    lam_min = log_inv / eps + 1.0
    n = int(math.floor((order_max - lam_min) / step + 1e-9))
    if n < 1:
        raise ParameterError(
            "eps",
            f"the paper's grid (λ_min={lam_min:.4g}, {order_max}] is empty for eps={eps}, delta={delta}: "
            "raise order_max or use method='rdp'",
        )
    lam = lam_min + step * np.arange(1, n + 1)
    sigma2 = lam / (eps - log_inv / (lam - 1.0))
    i = int(np.argmin(sigma2))
    return GridCalibration(float(math.sqrt(sigma2[i])), float(lam[i]), lam_min)


def _calibrate(orders: tuple[float, ...], eps: float, delta: float, lower: float, upper: float) -> float:
    """Smallest σ in [lower, upper] that ``dp_accounting``'s RDP accountant over ``orders`` certifies
    (``mechanism_calibration.calibrate_dp_mechanism``: Brent's method, its returned σ checked to
    satisfy ε(σ) ≤ eps), to within 1e-10·lower."""
    from dp_accounting import mechanism_calibration as mc
    from dp_accounting.rdp import RdpAccountant

    return float(mc.calibrate_dp_mechanism(lambda: RdpAccountant(list(orders)), lambda s: _gaussian_event(s, 1),
                                           eps, delta, mc.ExplicitBracketInterval(lower, upper), tol=1e-10 * lower))


def _calibrate_rdp(eps: float, delta: float) -> float:
    """Two stages: σ₁ on :data:`COARSE_ORDERS`, then σ on :func:`rdp_orders` around σ₁'s best order
    (bracketed by the exact Gaussian σ, which no RDP bound beats, and σ₁, which the finer grid
    also certifies)."""
    low = _calibrate_pld(eps, delta)
    high = 2.0 * low
    while _rdp_epsilon(high, delta, 1, COARSE_ORDERS)[0] > eps:
        high *= 2.0
        if high > 1e12 * low:  # pragma: no cover - the RDP σ is within a small factor of the exact one
            raise ParameterError("eps", f"no σ up to {high:.3g} reaches eps={eps} at delta={delta}")
    first = _calibrate(COARSE_ORDERS, eps, delta, low, high)
    best = _rdp_epsilon(first, delta, 1, COARSE_ORDERS)[1]
    return _calibrate(rdp_orders(best), eps, delta, low, first)


def gaussian_delta(eps: float, sigma: float, sensitivity: float = SENSITIVITY_L2) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Thm 8):
    Φ(s/(2σ) − εσ/s) − e^ε Φ(−s/(2σ) − εσ/s), from
    ``dp_accounting.pld.privacy_loss_mechanism.GaussianPrivacyLoss(σ, sensitivity=s)``."""
    from dp_accounting.pld.privacy_loss_mechanism import GaussianPrivacyLoss

    eps = v.epsilon("eps", eps, allow_zero=True)
    sigma = v.positive("sigma", sigma)
    s = v.positive("sensitivity", sensitivity)
    return float(GaussianPrivacyLoss(sigma, sensitivity=s).get_delta_for_epsilon(eps))


def _calibrate_pld(eps: float, delta: float) -> float:
    """Smallest σ whose exact curve certifies (ε, δ): ``dp_accounting.gaussian_mechanism.get_sigma_gaussian``
    (Brent's method on the analytic log δ, absolute tolerance 1e-12 in σ/√2), then stepped up by
    doubling steps from 1e-12·σ until ``gaussian_delta(eps, σ) <= delta`` holds (the certified side)."""
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    sigma = SENSITIVITY_L2 * float(get_sigma_gaussian(eps, delta))
    step = 1e-12 * sigma
    while gaussian_delta(eps, sigma) > delta:
        sigma += step
        step *= 2.0
    return sigma


def calibrate_sigma(eps: float, delta: float, method: Method = "paper-rdp") -> float:
    """Smallest GNMax noise std σ making one query (eps, delta)-DP under ``method``.

    ``"paper-rdp"`` ≥ ``"rdp"`` ≥ ``"pld"`` always (each certifies the same
    mechanism with a tighter analysis).  Raises ``ParameterError`` for eps ≤ 0,
    delta ∉ (0, 1) or an unknown method.

    Args:
        eps: the target ε of one query (> 0).
        delta: the target δ, in (0, 1).
        method: "paper-rdp", "rdp" or "pld".

    Returns:
        The smallest σ, on the certified side.

    Raises:
        ParameterError: a parameter is out of range or ``method`` unknown.
    """
    eps = v.epsilon("eps", eps)
    delta = v.open_unit("delta", delta)
    if method == "paper-rdp":
        return paper_grid(eps, delta).sigma
    if method == "rdp":
        return _calibrate_rdp(eps, delta)
    if method == "pld":
        return _calibrate_pld(eps, delta)
    raise ParameterError("method", f"must be one of {METHODS}, got {method!r}")


def epsilon(sigma: float, delta: float, queries: int = 1, method: Method = "pld") -> float:
    """ε of ``queries`` adaptive GNMax answers with noise σ, at total δ.

    ``"rdp"``: ``dp_accounting``'s RDP accountant (Q·λ/σ², improved conversion), minimised over
    :data:`COARSE_ORDERS` and then :func:`rdp_orders` around the best of them; ``"paper-rdp"``:
    the classical conversion in closed form ε = Q/σ² + 2·sqrt(Q·log(1/δ))/σ at
    λ* = 1 + σ·sqrt(log(1/δ)/Q); ``"pld"``: Q Gaussian queries with sensitivity √2 are one
    Gaussian with sensitivity √(2Q) (Balle & Wang exact curve, ``dp_accounting.gaussian_mechanism``).

    Args:
        sigma: the Gaussian noise std (> 0).
        delta: the total δ, in (0, 1).
        queries: the number Q of answers.
        method: "paper-rdp", "rdp" or "pld".

    Returns:
        The total ε.

    Raises:
        ParameterError: a parameter is out of range or ``method`` unknown.
    """
    sigma = v.positive("sigma", sigma)
    delta = v.open_unit("delta", delta)
    q = v.count("queries", queries)
    if method == "paper-rdp":
        return q / sigma**2 + 2.0 * math.sqrt(q * math.log(1.0 / delta)) / sigma
    if method == "rdp":
        best = _rdp_epsilon(sigma, delta, q, COARSE_ORDERS)[1]
        return _rdp_epsilon(sigma, delta, q, rdp_orders(best))[0]
    if method == "pld":
        from dp_accounting.gaussian_mechanism import get_epsilon_gaussian

        # the returned ε is a root of δ(ε) = δ; tolerance 1e-12
        return float(get_epsilon_gaussian(sigma / (SENSITIVITY_L2 * math.sqrt(q)), delta)) + 1e-12
    raise ParameterError("method", f"must be one of {METHODS}, got {method!r}")


def compare_methods(eps: float, delta: float) -> dict:
    """σ of one (ε, δ)-DP query under every calibration method, and the paper grid's minimiser
    (``darrm account gnmax``): ``{"eps", "delta", "paper_grid_order", "paper_grid_order_min",
    "sigma": [{"method", "sigma"}, ...]}``."""
    grid = paper_grid(eps, delta)
    return {"eps": eps, "delta": delta, "paper_grid_order": grid.order, "paper_grid_order_min": grid.order_min,
            "sigma": [{"method": m, "sigma": calibrate_sigma(eps, delta, m)} for m in METHODS]}

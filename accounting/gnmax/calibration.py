"""GNMax (Papernot et al. 2018): noisy argmax of a teacher vote histogram.

M_σ(x) = argmax_i { n_i(x) + N(0, σ²) }  (DaRRM paper Eq. 205).

Sensitivity.  Neighbouring data sets change one teacher's vote, so the histogram
(n_1..n_C) changes in two coordinates by 1 each: ℓ2 sensitivity √2
(:data:`SENSITIVITY_L2`).  The Gaussian mechanism with ℓ2 sensitivity s and
per-coordinate std σ is (λ, λ s²/(2σ²))-RDP, which for s = √2 is the λ/σ² of
Papernot et al. 2018 §4.1 used by the DaRRM paper (Appendix D.2.1).  The argmax
is post-processing, so every bound here applies to GNMax; all three methods of
:func:`calibrate_sigma` use the same sensitivity √2, so they are comparable.

Calibration methods (σ for a per-query target (ε, δ)):

* ``"paper-rdp"`` — the paper's procedure: RDP λ/σ², the classical conversion
  ε = RDP + log(1/δ)/(λ−1) (DaRRM Theorem D.1), grid λ ∈ (λ_min, 500] with step
  0.5 starting at λ_min = log(1/δ)/ε + 1 → σ = 21.46 (MNIST) / 22.46 (FMNIST).
* ``"rdp"`` — the same RDP curve with the improved conversion of Balle et al.
  2020 (Thm 21) / Canonne, Kamath & Steinke 2020 (Prop 12),
  ε = RDP + log(1/δ)/(λ−1) + log(1 − 1/λ) − log(λ)/(λ−1), minimised over
  continuous λ > 1.
* ``"pld"`` — the exact (ε, δ) curve of the Gaussian mechanism (Balle & Wang
  2018, analytic Gaussian), via ``dp_accounting.gaussian_mechanism``; the
  smallest σ any accountant can certify for the Gaussian-noised histogram.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.numerics.inversion import inverse_monotone

Method = Literal["paper-rdp", "rdp", "pld"]
METHODS: tuple[str, ...] = ("paper-rdp", "rdp", "pld")

#: ℓ2 sensitivity of the vote histogram when one teacher changes its vote.
SENSITIVITY_L2 = math.sqrt(2.0)


def gaussian_rdp(order: float, sigma: float) -> float:
    """RDP of GNMax at order λ: λ·s²/(2σ²) = λ/σ² for s = √2 (Papernot et al. 2018 §4.1)."""
    lam = v.positive("order", order)
    if lam <= 1.0:
        raise ParameterError("order", f"must be > 1, got {order!r}")
    sigma = v.positive("sigma", sigma)
    return lam * SENSITIVITY_L2**2 / (2.0 * sigma * sigma)


def rdp_to_dp_classical(rdp: float, order: float, delta: float) -> float:
    """(λ, ρ)-RDP ⇒ (ρ + log(1/δ)/(λ−1), δ)-DP (Mironov 2017 Prop 3; DaRRM Theorem D.1)."""
    return rdp + math.log(1.0 / delta) / (order - 1.0)


def rdp_to_dp_improved(rdp: float, order: float, delta: float) -> float:
    """(λ, ρ)-RDP ⇒ (ρ + log(1/δ)/(λ−1) + log(1−1/λ) − log(λ)/(λ−1), δ)-DP (Balle et al. 2020 Thm 21)."""
    return rdp + (math.log(1.0 / delta) - math.log(order)) / (order - 1.0) + math.log1p(-1.0 / order)


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


def _improved_sigma2(lam: float, eps: float, delta: float) -> float:
    """σ² making λ/σ² + improved conversion equal ε at order λ (inf when impossible)."""
    slack = eps - rdp_to_dp_improved(0.0, lam, delta)
    return lam / slack if slack > 0 else math.inf


def _minimise_over_orders(f: Callable[[float], float]) -> float:
    """min over λ > 1 of f(λ): a log-spaced scan of λ−1 ∈ [1e-4, 1e8], then a bounded
    refinement around the best grid point.  Any λ gives a valid bound, so the result
    is valid whether or not the true minimum was found."""
    grid = 1.0 + np.geomspace(1e-4, 1e8, 2001)
    vals = np.array([f(float(g)) for g in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    res = minimize_scalar(f, bounds=(lo, hi), method="bounded", options={"xatol": 1e-10 * hi})
    return min(float(vals[i]), float(res.fun)) if res.success else float(vals[i])


def _calibrate_rdp(eps: float, delta: float) -> float:
    best = _minimise_over_orders(lambda lam: _improved_sigma2(lam, eps, delta))
    if not math.isfinite(best):
        raise ParameterError("eps", f"no order λ in (1, 1e8] reaches eps={eps} at delta={delta}")
    # σ² = λ/slack at a concrete λ: the guarantee holds at that order; the
    # factor absorbs float64 rounding so that the certified ε never exceeds eps.
    return math.sqrt(best) * (1.0 + 1e-12)


def gaussian_delta(eps: float, sigma: float, sensitivity: float = SENSITIVITY_L2) -> float:
    """Exact δ(ε) of the Gaussian mechanism (Balle & Wang 2018, Thm 8):
    Φ(s/(2σ) − εσ/s) − e^ε Φ(−s/(2σ) − εσ/s), computed with log-CDFs."""
    eps = v.epsilon("eps", eps, allow_zero=True)
    sigma = v.positive("sigma", sigma)
    s = v.positive("sensitivity", sensitivity)
    a, b = s / (2 * sigma) - eps * sigma / s, -s / (2 * sigma) - eps * sigma / s
    la, lb = norm.logcdf(a), eps + norm.logcdf(b)
    return float(math.exp(la) * -math.expm1(lb - la)) if lb < la else 0.0


def _calibrate_pld(eps: float, delta: float) -> float:
    """Smallest σ whose exact curve certifies (ε, δ): δ(σ) is decreasing, inverted on log σ from
    dp_accounting's σ (a bracket of ±1e-6 around it, grown by factors of 2 if needed), the
    returned σ checked to satisfy ``gaussian_delta(eps, σ) <= delta``."""
    from dp_accounting.gaussian_mechanism import get_sigma_gaussian

    guess = SENSITIVITY_L2 * float(get_sigma_gaussian(eps, delta))
    return inverse_monotone(lambda s: gaussian_delta(eps, s), delta, guess * (1 - 1e-6), guess * (1 + 1e-6),
                            increasing=False, geometric=True, log_value=True, expand=2.0,
                            limits=(1e-300, 1e300), xtol=1e-15, rtol=1e-13, name="delta")


def calibrate_sigma(eps: float, delta: float, method: Method = "paper-rdp") -> float:
    """Smallest GNMax noise std σ making one query (eps, delta)-DP under ``method``.

    ``"paper-rdp"`` ≥ ``"rdp"`` ≥ ``"pld"`` always (each certifies the same
    mechanism with a tighter analysis).  Raises ``ParameterError`` for eps ≤ 0,
    delta ∉ (0, 1) or an unknown method.
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

    ``"rdp"``: RDP composes additively (Q·λ/σ²), converted with the improved
    conversion, minimised over λ; ``"paper-rdp"``: same with the classical
    conversion, in closed form ε = Q/σ² + 2·sqrt(Q·log(1/δ))/σ at λ* = 1 + σ·sqrt(log(1/δ)/Q);
    ``"pld"``: Q Gaussian queries with sensitivity √2 are one Gaussian with
    sensitivity √(2Q) (Balle & Wang exact curve).
    """
    sigma = v.positive("sigma", sigma)
    delta = v.open_unit("delta", delta)
    q = v.count("queries", queries)
    if method == "paper-rdp":
        return q / sigma**2 + 2.0 * math.sqrt(q * math.log(1.0 / delta)) / sigma
    if method == "rdp":
        c = q * SENSITIVITY_L2**2 / (2.0 * sigma**2)
        return max(0.0, _minimise_over_orders(lambda lam: rdp_to_dp_improved(c * lam, lam, delta)))
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

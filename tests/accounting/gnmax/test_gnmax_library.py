"""GNMax accounting goes through ``dp_accounting``; each library result is compared with the closed
form it replaced, computed here independently (nothing hard-coded).

Measured agreement (issue #16), over σ ∈ [0.7, 1000], δ ∈ [1e-10, 1e-2], Q ∈ {1, 20, 100, 1000}:
RDP ε within 3.2e-8 relative of the continuous-λ minimum (never below it); σ("rdp") within 7e-9,
σ("pld") within 2e-12; the exact Gaussian δ(ε) within 3e-11 relative down to δ ≈ 1e-274.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import norm

from darrm.accounting import gnmax

SIGMAS = [0.7, 2.0, 8.81, 21.46, 68.21, 1000.0]
DELTAS = [1e-10, 1e-4, 3e-4, 1e-2]
QUERIES = [1, 20, 1000]


def _closed_form_delta(eps: float, sigma: float, s: float = math.sqrt(2.0)) -> float:
    """Balle & Wang 2018 Thm 8 in log space: Φ(s/2σ − εσ/s) − e^ε Φ(−s/2σ − εσ/s)."""
    la = norm.logcdf(s / (2 * sigma) - eps * sigma / s)
    lb = eps + norm.logcdf(-s / (2 * sigma) - eps * sigma / s)
    return math.exp(la) * -math.expm1(lb - la) if lb < la else 0.0


def _improved(rdp: float, lam: float, delta: float) -> float:
    """Balle et al. 2020 Thm 21 / Canonne, Kamath & Steinke 2020 Prop 12."""
    return rdp + (math.log(1 / delta) - math.log(lam)) / (lam - 1) + math.log1p(-1 / lam)


def _continuous_rdp_epsilon(sigma: float, delta: float, q: int) -> float:
    """min over real λ > 1 of Q·λ/σ² + the improved conversion (the formula the library replaced)."""
    f = lambda lm1: _improved(q * (1 + lm1) / sigma**2, 1 + lm1, delta)  # noqa: E731
    grid = np.geomspace(1e-4, 1e8, 4001)
    i = int(np.argmin([f(g) for g in grid]))
    res = minimize_scalar(f, bounds=(grid[max(i - 1, 0)], grid[min(i + 1, 4000)]), method="bounded",
                          options={"xatol": 1e-12})
    return max(0.0, min(f(grid[i]), res.fun))


@pytest.mark.parametrize("sigma", [0.5, 2.0, 12.9, 21.46, 200.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 0.2676, 1.0, 3.0, 10.0])
def test_exact_gaussian_delta_matches_the_closed_form(sigma, eps):
    ours = _closed_form_delta(eps, sigma)
    assert gnmax.gaussian_delta(eps, sigma) == pytest.approx(ours, rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("sigma", SIGMAS)
@pytest.mark.parametrize("delta", DELTAS)
@pytest.mark.parametrize("q", QUERIES)
def test_rdp_epsilon_matches_the_continuous_order_minimum(sigma, delta, q):
    exact = _continuous_rdp_epsilon(sigma, delta, q)
    lib = gnmax.epsilon(sigma, delta, q, "rdp")
    # a grid of orders can only lose against the continuous minimum, and loses little
    assert exact * (1 - 1e-12) <= lib <= exact * (1 + 1e-7) + 1e-15


@pytest.mark.parametrize("eps", [0.0892, 0.2676, 1.0])
@pytest.mark.parametrize("delta", [1e-6, 3e-4, 1e-2])
def test_rdp_sigma_matches_the_continuous_order_calibration(eps, delta):
    sigma = gnmax.calibrate_sigma(eps, delta, "rdp")
    assert _continuous_rdp_epsilon(sigma, delta, 1) <= eps * (1 + 1e-9)  # valid for the continuous bound
    assert _continuous_rdp_epsilon(sigma * (1 - 1e-7), delta, 1) > eps * (1 - 1e-7)  # and within 1e-7 of its σ


@pytest.mark.parametrize("eps", [0.0892, 0.2676, 1.0, 3.0])
@pytest.mark.parametrize("delta", [1e-9, 3e-4, 1e-2])
def test_pld_sigma_is_the_root_of_the_closed_form(eps, delta):
    sigma = gnmax.calibrate_sigma(eps, delta, "pld")
    assert _closed_form_delta(eps, sigma) <= delta * (1 + 1e-9)
    assert _closed_form_delta(eps, sigma * (1 - 1e-9)) > delta


def test_rdp_accounting_is_dp_accountings(monkeypatch):
    """The RDP ε and σ come from ``dp_accounting.rdp.RdpAccountant`` (not a private copy)."""
    import dp_accounting.rdp as rdp_mod

    calls = []

    class Counting(rdp_mod.RdpAccountant):
        def compose(self, event, count=1):
            calls.append(event)
            return super().compose(event, count)

    monkeypatch.setattr(rdp_mod, "RdpAccountant", Counting)
    gnmax.epsilon(21.46, 1e-4, 50, "rdp")
    assert calls and all(getattr(e, "count", None) == 50 for e in calls)
    calls.clear()
    gnmax.calibrate_sigma(0.2676, 3e-4, "rdp")
    assert len(calls) > 5


def test_rdp_orders_refine_around_the_best_order_and_keep_the_coarse_grid():
    orders = gnmax.rdp_orders(60.0)
    assert set(gnmax.COARSE_ORDERS) <= set(orders)
    near = [o for o in orders if 59.0 / 1.05 < o - 1 < 59.0 * 1.05]
    assert len(near) >= 400 and min(orders) > 1.01

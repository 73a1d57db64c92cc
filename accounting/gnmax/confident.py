"""Confident-GNMax (Papernot et al. 2018, Algorithm 1): its data-dependent RDP over a run of queries.

Confident-GNMax answers a query with vote histogram n only if the noisy top count passes a
threshold: step 1 releases whether max_i n_i + N(0, σ1²) ≥ T; if so, step 2 releases GNMax,
argmax_i (n_i + N(0, σ2²)).  PATE 2018's 10-class MNIST setting: 250 teachers, T = 200, σ1 = 150,
σ2 = 40, 640 queries.

Claims (Papernot et al. 2018), each an RDP bound at order λ for one query:

* Step 1, data-independent: max_i n_i has sensitivity 1, so step 1 is a Gaussian mechanism,
  (λ, λ/(2σ1²))-RDP (Proposition 8 with the noise scaled to sensitivity 1).
* Step 1, data-dependent: step 1 has two outcomes; with p = Pr[answered] = Pr[N(0, σ1²) ≥ T − max n]
  the probability of the less likely outcome is q = min(p, 1 − p), and Theorem 6 with q and the
  Gaussian's parameters (noise √2·σ1 in the λ/σ² convention of sensitivity-2 histograms) bounds its
  RDP.  As in the authors' code, max n is rounded to the nearest integer.
* Step 2: Proposition 7 bounds q = Pr[GNMax ≠ argmax n] by the union bound
  Σ_{i≠i*} Pr[N(0, 2σ2²) ≥ n_{i*} − n_i] (clamped at 1 − 1/C), and Theorem 6 turns it into an RDP
  bound, never above the data-independent λ/σ2² (Proposition 8).
* Composition: RDP adds up over queries (Mironov 2017, Proposition 1); a query whose step 1 said
  "no" costs only step 1.  (λ, ρ)-RDP ⇒ (ρ + log(1/δ)/(λ − 1), δ)-DP (Mironov 2017, Proposition 3),
  the conversion of the authors' ``compute_eps_from_delta``.

**Not publishable on its own.**  The data-dependent total depends on the private histograms;
Papernot et al. release it through the smooth-sensitivity mechanism (their Section 4.3 and
Appendix), which is not implemented here.  :func:`confident_gnmax_epsilon` therefore returns the
data-independent ε (a DP guarantee) beside the data-dependent one (a private quantity, for analysis
only), and names which is which.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from darrm import validation as v
from darrm.errors import ParameterError

from .data_dependent import _bounds_from_logq, _votes, log1mexp, log_q_candidate

__all__ = ["ConfidentGNMaxAccount", "confident_gnmax_epsilon", "confident_gnmax_rdp", "log_pr_answered"]


def log_pr_answered(votes: Sequence[int] | np.ndarray, threshold: float, sigma1: float) -> float:
    """log Pr[round(max n) + N(0, σ1²) ≥ T]: the probability that step 1 answers.

    Args:
        votes: the vote histogram n (non-negative integer counts, ≥ 2 classes).
        threshold: T.
        sigma1: step 1's noise σ1 > 0.

    Returns:
        The natural log of the probability (log-space: the upper tail can underflow).

    Raises:
        ParameterError: a malformed histogram or σ1 ≤ 0.
    """
    n = _votes(votes)
    sigma1 = v.positive("sigma1", sigma1)
    t = v.real("threshold", threshold)
    return float(norm.logsf(t - round(float(n.max())), scale=sigma1))


def threshold_step_rdp(lp: float, sigma1: float, orders: np.ndarray) -> np.ndarray:
    """Data-dependent RDP of Confident-GNMax's threshold check at each order (Papernot et al. 2018,
    Theorem 6 applied to the check, as in pate_2018): the data-dependent bound from
    q = min(p, 1 − p) with the check's noise √2·σ1, capped by the data-independent λ/(2σ1²).

    Args:
        lp: log Pr[the check passes] (:func:`log_pr_answered`).
        sigma1: the threshold noise σ1.
        orders: the RDP orders λ.

    Returns:
        The RDP at each order.
    """
    independent = orders / (2.0 * sigma1 * sigma1)
    lq = min(lp, log1mexp(lp)) if lp < 0.0 else -math.inf
    if lq == -math.inf:
        return np.zeros_like(orders)
    dep = _bounds_from_logq(lq, math.sqrt(2.0) * sigma1, orders)
    return np.where(np.isnan(dep), independent, np.minimum(dep, independent))


def _step2_rdp(n: np.ndarray, sigma2: float, orders: np.ndarray) -> np.ndarray:
    independent = orders / (sigma2 * sigma2)
    lq = min(log_q_candidate(n, sigma2, int(np.argmax(n))), math.log(1.0 - 1.0 / n.size))
    if lq == -math.inf:
        return np.zeros_like(orders)
    dep = _bounds_from_logq(lq, sigma2, orders)
    return np.where(np.isnan(dep), independent, np.minimum(dep, independent))


def _orders(orders: Sequence[float] | np.ndarray) -> np.ndarray:
    lam = np.asarray(orders, dtype=float)
    if lam.ndim != 1 or lam.size == 0 or not np.all(lam > 1.0) or not np.all(np.isfinite(lam)):
        raise ParameterError("orders", "must be a non-empty 1-D sequence of finite orders > 1")
    return lam


def _histogram(i: int, h: object) -> np.ndarray:
    try:
        return _votes(h)  # type: ignore[arg-type]
    except ParameterError as e:
        raise ParameterError("histograms", f"row {i}: {str(e).removeprefix('votes: ')}") from None


def confident_gnmax_rdp(histograms: Sequence[Sequence[int]], answered: Sequence[bool], threshold: float,
                        sigma1: float, sigma2: float,
                        orders: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Total RDP of a run of Confident-GNMax queries: (data-dependent, data-independent), per order.

    Args:
        histograms: one vote histogram per query (rows of equal length C ≥ 2).
        answered: whether step 1 passed for each query (only answered queries pay step 2).
        threshold: T of step 1.
        sigma1: step 1's noise.
        sigma2: step 2's (GNMax) noise.
        orders: RDP orders λ > 1.

    Returns:
        Two arrays over ``orders``: Σ step-1 bounds + Σ_answered step-2 bounds with the data-dependent
        bounds of this module's claims (each capped by the data-independent one), and the same sum with
        data-independent bounds only.

    Raises:
        ParameterError: malformed histograms, a length mismatch, σ ≤ 0 or bad orders.
    """
    lam = _orders(orders)
    sigma1 = v.positive("sigma1", sigma1)
    sigma2 = v.positive("sigma2", sigma2)
    v.real("threshold", threshold)
    if not isinstance(histograms, Sequence) or isinstance(histograms, (str, bytes)) or len(histograms) == 0:
        raise ParameterError("histograms", f"must be a non-empty sequence of vote histograms, got {histograms!r}")
    hs = [_histogram(i, h) for i, h in enumerate(histograms)]
    if len({len(h) for h in hs}) != 1:
        raise ParameterError("histograms", f"rows must have one length (the classes), got lengths "
                                           f"{sorted({len(h) for h in hs})}")
    if not isinstance(answered, Sequence) or isinstance(answered, (str, bytes)):
        raise ParameterError("answered", f"must be a sequence of booleans, got {answered!r}")
    ans = [v.flag("answered", bool(a) if isinstance(a, (bool, np.bool_)) else a) for a in answered]
    if len(hs) != len(ans):
        raise ParameterError("answered", f"need one flag per histogram, got {len(ans)} for {len(hs)}")
    dep = np.zeros_like(lam)
    ind = np.zeros_like(lam)
    for n, a in zip(hs, ans, strict=True):
        dep += threshold_step_rdp(log_pr_answered(n.astype(np.int64), threshold, sigma1), sigma1, lam)
        ind += lam / (2.0 * sigma1 * sigma1)
        if a:
            dep += _step2_rdp(n, sigma2, lam)
            ind += lam / (sigma2 * sigma2)
    return dep, ind


@dataclass(frozen=True)
class ConfidentGNMaxAccount:
    """ε at δ of a Confident-GNMax run, both ways (Mironov 2017, Proposition 3, over the given orders).

    ``epsilon`` is data-independent: a DP guarantee that may be published.  ``epsilon_data_dependent``
    is a function of the private histograms: publishing it needs the smooth-sensitivity release
    (Papernot et al. 2018, Section 4.3; not implemented), so it is for analysis only.
    """

    epsilon: float
    order: float
    epsilon_data_dependent: float
    order_data_dependent: float
    delta: float
    answered: int


def confident_gnmax_epsilon(histograms: Sequence[Sequence[int]], answered: Sequence[bool], threshold: float,
                            sigma1: float, sigma2: float, delta: float,
                            orders: Sequence[float] | None = None) -> ConfidentGNMaxAccount:
    """ε(δ) of a Confident-GNMax run from :func:`confident_gnmax_rdp`.

    Args:
        histograms: the teachers' vote histograms, one per query (as ``confident_gnmax_rdp``).
        answered: whether each query passed the confidence threshold.
        threshold: the confidence threshold T.
        sigma1: the threshold check's noise σ1.
        sigma2: the answer's noise σ2.
        delta: target δ in (0, 1).
        orders: RDP orders (default: 1.1 … 1e4, 400 log-spaced, plus the authors' integer orders).

    Returns:
        The :class:`ConfidentGNMaxAccount`.

    Raises:
        ParameterError: as :func:`confident_gnmax_rdp`, or δ outside (0, 1).
    """
    delta = v.open_unit("delta", delta)
    lam = _orders(orders if orders is not None else
                  np.unique(np.concatenate([1.0 + np.geomspace(0.1, 1e4, 400), np.arange(2.0, 101.0)])))
    dep, ind = confident_gnmax_rdp(histograms, answered, threshold, sigma1, sigma2, lam)
    slack = math.log(1.0 / delta) / (lam - 1.0)
    i, j = int(np.argmin(ind + slack)), int(np.argmin(dep + slack))
    return ConfidentGNMaxAccount(float(ind[i] + slack[i]), float(lam[i]), float(dep[j] + slack[j]), float(lam[j]),
                                 delta, int(sum(bool(a) for a in answered)))

"""Data-dependent RDP bound of GNMax (Papernot et al. 2018, Thm 6 + Prop 10;
DaRRM paper Algorithm 6 with its typos corrected, Appendix D.2.1).

For the vote histogram n of a data set D and a candidate answer i*, with
q ≥ Pr[M(D) ≠ i*] bounded by q = Σ_{i≠i*} ½·erfc((n_{i*} − n_i)/(2σ)):

    μ2 = σ·sqrt(log(1/q)), μ1 = μ2 + 1, ε_j = μ_j/σ²  (GNMax is (μ_j, ε_j)-RDP)

If q < 1, λ < μ1, μ2 > 1, q·e^{ε2} < 1 and
q ≤ e^{(μ2−1)ε2} / (μ1/(μ1−1) · μ2/(μ2−1))^{μ2}, then for every neighbour D′

    D_λ(M(D) ‖ M(D′)) ≤ log((1−q)·A^{λ−1} + q·B^{λ−1}) / (λ−1),
    A = (1−q)/(1 − (q e^{ε2})^{(μ2−1)/μ2}),  B = e^{ε1}/q^{1/(μ1−1)}.

Corrections to Algorithm 6 as printed: exp((μ2−1)·ε2) (not a power), the
missing log in line 11, (q·e^{ε2})^{(μ2−1)/μ2} in A (Papernot's Theorem 6), and
the loop index: the loop runs over candidate answers i* ∈ [C].  We use the strict
λ < μ1 of Papernot et al.'s code (the theorem allows λ ≤ μ1).

Cross-checked against the authors' implementation (tensorflow/privacy
``research/pate_2018/core.py``: ``compute_logq_gaussian``, ``rdp_gaussian``): equal to 7e-15
relative on 4,000 random histograms, and against the q₀ thresholds of its ``core_test.py``
(tests/accounting/gnmax/test_gnmax_pate2018.py).  Not vendored: ``core.py`` only adds the
clamp q ≤ 1 − 1/C, which never changes the result (the bound needs q far below it), and takes
the argmax as the only candidate answer.

The result is a bound for *this* D, not a DP guarantee: publishing it needs the
smooth-sensitivity machinery of Papernot et al.  The paper only uses it to note
that it never applies for K = 11 teachers and C = 2 classes
(:func:`applies_anywhere`), so the data-independent λ/σ² is used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import logsumexp
from scipy.stats import norm

from darrm import validation as v
from darrm.errors import ParameterError

from .calibration import SENSITIVITY_L2, gaussian_rdp


@dataclass(frozen=True)
class DataDependentRDP:
    """RDP bound at one order for one vote histogram."""

    order: float
    gaussian_bound: float  # λ/σ², data-independent
    data_dependent: float | None  # min over candidates where Theorem 6 applies, else None

    @property
    def applies(self) -> bool:
        return self.data_dependent is not None and self.data_dependent < self.gaussian_bound

    @property
    def value(self) -> float:
        return min(self.gaussian_bound, self.data_dependent) if self.data_dependent is not None else self.gaussian_bound


def _votes(votes: Sequence[int] | np.ndarray) -> np.ndarray:
    if isinstance(votes, (str, bytes)) or votes is None:
        raise ParameterError("votes", f"must be a 1-D histogram of vote counts, got {votes!r}")
    arr = np.asarray(votes)
    if arr.ndim != 1 or arr.size < 2:
        raise ParameterError("votes", "must be a 1-D histogram over at least 2 classes")
    if not np.issubdtype(arr.dtype, np.integer) or (arr < 0).any():
        raise ParameterError("votes", "must be non-negative integer counts")
    if arr.sum() < 1:
        raise ParameterError("votes", "must hold at least one vote (all counts are 0)")
    return arr.astype(float)


def log_q(votes: Sequence[int], sigma: float, candidate: int) -> float:
    """log of the union bound Σ_{i≠i*} Pr[n_i + Z_i ≥ n_{i*} + Z_{i*}] = Σ ½ erfc(gap/(2σ))."""
    n = _votes(votes)
    sigma = v.positive("sigma", sigma)
    if not 0 <= candidate < n.size:
        raise ParameterError("candidate", f"must index a class in [0, {n.size}), got {candidate}")
    return log_q_candidate(n, sigma, candidate)


def log_q_candidate(n: np.ndarray, sigma: float, candidate: int) -> float:
    """log of the union bound on Pr[GNMax does not release ``candidate``] (Papernot et al. 2018,
    Proposition 7): log min(1, Σ_{j≠c} Pr[N(0, 2σ²) ≥ n_c − n_j]).

    Args:
        n: the vote histogram.
        sigma: GNMax's noise σ.
        candidate: the class c.

    Returns:
        The bound's logarithm (≤ 0).
    """
    gaps = n[candidate] - np.delete(n, candidate)
    return float(min(0.0, logsumexp(norm.logsf(gaps, scale=math.sqrt(2.0) * sigma))))


def log1mexp(x: float) -> float:
    """log(1 − eˣ) for x < 0, accurate at both ends (Mächler 2012): log1p(−eˣ) below −log 2,
    log(−expm1(x)) above.  log(−expm1(x)) alone rounds to 0 once eˣ < 1e-16, which makes the
    bound's nearly cancelling terms lose all relative accuracy when q is tiny.

    Args:
        x: a negative number.

    Returns:
        log(1 − eˣ).
    """
    return math.log1p(-math.exp(x)) if x < -math.log(2.0) else math.log(-math.expm1(x))


def _bounds_from_logq(lq: float, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Papernot Theorem 6 bound at each order for a given log q; NaN where it does not apply."""
    out = np.full(orders.shape, np.nan)
    if lq >= 0.0:
        return out
    var = sigma * sigma
    mu2 = math.sqrt(var * -lq)
    mu1 = mu2 + 1.0
    eps1, eps2 = mu1 / var, mu2 / var
    if not (mu2 > 1.0 and -lq > eps2):
        return out
    log_q_ub = (mu2 - 1.0) * eps2 - mu2 * (math.log(mu1 / (mu1 - 1.0)) + math.log(mu2 / (mu2 - 1.0)))
    if lq > log_q_ub:
        return out
    ok = orders < mu1
    lam = orders[ok]
    log1mq = log1mexp(lq)
    log_a = log1mq - log1mexp((lq + eps2) * (1.0 - 1.0 / mu2))
    log_b = eps1 - lq / (mu1 - 1.0)
    log_s = np.logaddexp(log1mq + (lam - 1.0) * log_a, lq + (lam - 1.0) * log_b)
    out[ok] = log_s / (lam - 1.0)
    return out


def _best_bounds(n: np.ndarray, sigma: float, orders: np.ndarray) -> np.ndarray:
    """Min over candidate answers i* of the Theorem 6 bound (NaN where none applies)."""
    per_candidate = np.array([_bounds_from_logq(log_q_candidate(n, sigma, i), sigma, orders) for i in range(n.size)])
    with np.errstate(all="ignore"):
        best = np.nanmin(np.where(np.isnan(per_candidate), np.inf, per_candidate), axis=0)
    return np.where(np.isinf(best), np.nan, best)


def data_dependent_rdp(votes: Sequence[int], sigma: float, order: float) -> DataDependentRDP:
    """Algorithm 6 of the DaRRM paper (corrected) at RDP order λ for one histogram.

    Args:
        votes: the teachers' vote histogram over the classes.
        sigma: the Gaussian noise std (> 0).
        order: the RDP order λ (> 1).

    Returns:
        The data-dependent RDP bound at λ and how it was obtained.

    Raises:
        ParameterError: ``votes`` is not a histogram of non-negative counts, or σ, λ are out of range.
    """
    n = _votes(votes)
    gauss = gaussian_rdp(order, sigma)
    best = float(_best_bounds(n, float(sigma), np.array([float(order)]))[0])
    return DataDependentRDP(float(order), gauss, None if math.isnan(best) else best)


def rdp_from_log_q(log_q_bound: float, sigma: float, order: float) -> DataDependentRDP:
    """Theorem 6 of Papernot et al. 2018 at order λ for a given bound log q ≥ log Pr[M(D) ≠ i*]
    (Proposition 7 gives one, :func:`log_q`); the counterpart of ``rdp_gaussian(logq, sigma, orders)``
    in the authors' ``research/pate_2018/core.py`` (tensorflow/privacy)."""
    lq = float(log_q_bound)
    if math.isnan(lq) or lq > 0.0:
        raise ParameterError("log_q_bound", f"must be a log-probability <= 0, got {log_q_bound!r}")
    sigma = v.positive("sigma", sigma)
    gauss = gaussian_rdp(order, sigma)
    if lq == -math.inf:  # the output is fixed: 0-RDP
        return DataDependentRDP(float(order), gauss, 0.0)
    best = float(_bounds_from_logq(lq, sigma, np.array([float(order)]))[0])
    return DataDependentRDP(float(order), gauss, None if math.isnan(best) else best)


def applies_anywhere(n_teachers: int, n_classes: int, sigma: float, orders: Sequence[float]) -> bool:
    """Whether the data-dependent bound beats λ/σ² for *some* histogram at some order.

    For C = 2 every histogram (a, K−a) is scanned; for C > 2 the unanimous one, where
    q is smallest (the bound is increasing in q on its domain, Papernot et al. 2018).
    """
    k = v.count("n_teachers", n_teachers)
    c = v.count("n_classes", n_classes, minimum=2)
    sigma = v.positive("sigma", sigma)
    lam = np.asarray(orders, dtype=float)
    if lam.ndim != 1 or lam.size == 0 or not np.all(lam > 1.0):
        raise ParameterError("orders", "must be a non-empty 1-D sequence of orders > 1")
    gauss = lam * SENSITIVITY_L2**2 / (2.0 * sigma**2)
    hists = [[a, k - a] for a in range(k + 1)] if c == 2 else [[k] + [0] * (c - 1)]
    for h in hists:
        best = _best_bounds(_votes(h), sigma, lam)
        if np.any(best < gauss):
            return True
    return False

"""Publishing Confident-GNMax's data-dependent ε: its smooth sensitivity and the GNSS release.

Confident-GNMax's data-dependent RDP (Papernot et al. 2018, Theorem 6; :mod:`accounting.gnmax.confident`)
is a function of the private vote histograms.  Papernot et al. (Section 4.3 and Appendix B) publish it
with the Gaussian-noise-with-smooth-sensitivity mechanism (GNSS): at a FIXED Rényi order λ,

    released RDP = ρ(D) + SS_β(D)·σ_s·Z,   Z ~ N(0, 1),

where ρ(D) is the run's data-dependent RDP at λ and SS_β(D) = max_d e^{−βd}·LS(D, d) a β-smooth upper
bound on its local sensitivity (LS(D, d): the largest local sensitivity at distance d).  The release
itself is (λ, λe^{2β}/σ_s² + (βλ − ½ log(1 − 2λβ))/(λ − 1))-RDP for 1 < λ < 1/(2β) (their Theorem 23),
and the published ε at δ is released RDP + that cost + log(1/δ)/(λ − 1) (Mironov 2017, Proposition 3).

What is computed here, transcribed from the formulas of their Appendix B (and read against the authors'
public ``research/pate_2018/smooth_sensitivity.py``, not copied):

* GNMax, per answered query: β(q), the data-dependent RDP as a function of the union bound q of
  Proposition 7, is Theorem 6 below q0 and λ/σ² above (q0: where the two meet, Appendix B.2);
  the local sensitivity at q is max(β(B_U(q)) − β(q), β(q) − β(B_L(q))) with
  B_{L,U}(q) = (C − 1)/2·erfc(erfc⁻¹(2q/(C − 1)) ± 1/σ) (Algorithm 3; a move shifts each gap by ≤ 2
  and q by at most that much, Proposition 13), replaced by its plateau value at q1 = B_L(q0) on
  [q1, q0]; LS(D, d) walks d votes from the runner-up to the top (towards q0) or back (towards q1)
  (Algorithms 4–5, in time O(K·C)).
* The threshold step, per query: its RDP is Theorem 6 for the two-outcome check with
  q = min(p, 1 − p), p = Pr[round(max n) + N(0, σ1²) ≥ T], noise √2·σ1; max n moves by ≤ 1 per
  changed teacher, so LS(D, d) is the largest one-step change of that RDP over max counts within d.
* The run: ρ and LS add over queries (answered queries pay both steps), and so do the local
  sensitivities (the sensitivity of a sum is at most the sum of the sensitivities).

**Which reading is private.**  Papernot et al. choose λ, β and σ_s after looking at the data (their
table script says its optimised parameters "cannot be released").  Here λ, β and σ_s are arguments,
to be fixed without the private data (the run picks them from the data-independent calibration
only).  The GNMax LS bound relies on their conditions C5–C6 (β(q) non-decreasing on (0, q0), and
β(B_U(q)) − β(q) non-decreasing on (0, B_L(q0))); :func:`check_conditions` verifies both on a dense
log-grid of q (a numerical check, as the authors' own), and :func:`publish_epsilon` refuses to
release when they fail.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import erfc, erfcinv
from scipy.stats import norm

from darrm.accounting.gnmax.confident import log_pr_answered, threshold_step_rdp
from darrm.accounting.gnmax.data_dependent import log1mexp, log_q_candidate
from darrm.errors import ParameterError, SolveError
from darrm.validation import count, open_unit, positive, real

__all__ = ["SmoothRelease", "check_conditions", "fixed_parameters", "gnmax_local_sensitivities", "gnmax_rdp",
           "gnss_rdp", "log_q0", "publish_epsilon", "smooth_sensitivity", "threshold_local_sensitivities",
           "threshold_rdp"]


def _theorem6(logq: float, sigma: float, order: float) -> float:
    """Theorem 6's bound at order λ with μ2 = σ√(log 1/q), μ1 = μ2 + 1 (Proposition 10), unchecked."""
    var = sigma * sigma
    mu2 = sigma * math.sqrt(-logq)
    mu1 = mu2 + 1.0
    eps1, eps2 = mu1 / var, mu2 / var
    log1q = log1mexp(logq)
    log_a = (order - 1.0) * (log1q - log1mexp((logq + eps2) * (1.0 - 1.0 / mu2)))
    log_b = (order - 1.0) * (eps1 - logq / (mu1 - 1.0))
    return float(np.logaddexp(log1q + log_a, logq + log_b) / (order - 1.0))


def _theorem6_applies(logq: float, sigma: float, order: float) -> bool:
    mu2 = sigma * math.sqrt(-logq)
    mu1 = mu2 + 1.0
    if mu1 < order or mu2 <= 1.0:
        return False
    eps2 = mu2 / sigma**2
    return logq <= (mu2 - 1.0) * eps2 - mu2 * math.log(mu1 / (mu1 - 1.0) * mu2 / (mu2 - 1.0))


@functools.lru_cache(maxsize=256)
def log_q0(sigma: float, order: float) -> float:
    """log q0: below it Theorem 6 applies and beats λ/σ²; at and above it β(q) = λ/σ² (Appendix B.2).

    Args:
        sigma: GNMax's σ.
        order: the RDP order λ.

    Returns:
        log q0 (< 0).

    Raises:
        ParameterError: a non-positive ``sigma`` or ``order``.
        SolveError: the bracket or the root is not found, or Theorem 6 does not apply at the root.
    """
    sigma, order = positive("sigma", sigma), positive("order", order)
    ind = order / sigma**2

    def diff(lq: float) -> float:
        return _theorem6(lq, sigma, order) - ind

    hi = min(-(1.0 + 1.0 / sigma) ** 2, -(((order - 0.99) / sigma) ** 2), -1.0 / sigma**2)
    if not _theorem6_applies(hi, sigma, order):
        raise SolveError(f"Theorem 6 does not apply at the natural bound of q0 (sigma={sigma}, order={order})")
    if diff(hi) < 0:
        return hi
    lo = 2.0 * hi
    while diff(lo) > 0:
        if lo < -1e4:
            raise SolveError(f"no lower bracket for q0 (sigma={sigma}, order={order})")
        lo *= 1.5
    root = float(brentq(diff, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps))
    if not _theorem6_applies(root, sigma, order):
        raise SolveError(f"Theorem 6 does not apply at q0 (sigma={sigma}, order={order})")
    return root


def gnmax_rdp(logq: float, sigma: float, order: float) -> float:
    """β(q): GNMax's data-dependent RDP at order λ given log q (Theorem 6 below q0, λ/σ² above).

    Args:
        logq: log of the union bound q on Pr[GNMax ≠ argmax] (−inf: q = 0, β = 0).
        sigma: GNMax's σ.
        order: the RDP order λ.

    Returns:
        β(q) ≥ 0.

    Raises:
        ParameterError: a non-positive ``sigma`` or ``order``.
        SolveError: q0 cannot be found (:func:`log_q0`).
    """
    if logq == -math.inf:
        return 0.0
    return order / sigma**2 if logq >= log_q0(sigma, order) else _theorem6(logq, sigma, order)


def _b_lower(q: float, sigma: float, C: int) -> float:
    return float((C - 1) / 2.0 * erfc(1.0 / sigma + erfcinv(2.0 * q / (C - 1))))


def _b_upper(q: float, sigma: float, C: int) -> float:
    return float(min(1.0, (C - 1) / 2.0 * erfc(-1.0 / sigma + erfcinv(2.0 * q / (C - 1)))))


def _log_q1(sigma: float, order: float, C: int) -> float:
    return math.log(_b_lower(math.exp(log_q0(sigma, order)), sigma, C))


def _ls_gnmax_at(logq: float, sigma: float, C: int, order: float) -> float:
    """Algorithm 3: an upper bound on the local sensitivity of β at a data set with union bound q."""
    lq0, lq1 = log_q0(sigma, order), _log_q1(sigma, order, C)
    if lq1 <= logq <= lq0:
        logq = lq1
    q = math.exp(logq)
    beta = gnmax_rdp(logq, sigma, order)
    up = gnmax_rdp(math.log(_b_upper(q, sigma, C)), sigma, order)
    down = gnmax_rdp(math.log(_b_lower(q, sigma, C)), sigma, order)
    return max(up - beta, beta - down)


def _log_q_gnmax(votes: np.ndarray, sigma: float) -> float:
    """Proposition 7's union bound at the argmax, capped at 1 − 1/C (as the authors' code)."""
    return min(log_q_candidate(votes, sigma, int(np.argmax(votes))), math.log(1.0 - 1.0 / votes.size))


def gnmax_local_sensitivities(votes: Sequence[int] | np.ndarray, teachers: int, sigma: float,
                              order: float) -> np.ndarray:
    """LS(D, d) of β for d = 0 … K − 1 (Algorithms 4–5): the plateau value by default; from D,
    votes move one at a time from the runner-up to the top (q above q0) or back (q below q1).

    Args:
        votes: the histogram of one query (C ≥ 2 classes).
        teachers: K.
        sigma: GNMax's σ2.
        order: λ.

    Returns:
        An array of K upper bounds on the local sensitivity at distance d.

    Raises:
        ParameterError: a non-positive ``sigma`` or ``order``.
        SolveError: q0 cannot be found (:func:`log_q0`).
    """
    n = np.asarray(votes, dtype=np.float64)
    C = n.size
    lq0, lq1 = log_q0(sigma, order), _log_q1(sigma, order, C)
    logq = _log_q_gnmax(n, sigma)
    res = np.full(teachers, _ls_gnmax_at(lq1, sigma, C, order))
    if lq1 <= logq <= lq0:
        return res
    v = sorted(n.tolist(), reverse=True)
    res[0] = _ls_gnmax_at(logq, sigma, C, order)
    d = 0
    left = logq > lq0
    while (left and logq > lq0 and v[1] > 0) or (not left and logq < lq1):
        d += 1
        if d >= teachers:
            break
        if left:
            v[0] += 1
            v[1] -= 1
            i = 1
            while i < C - 1 and v[i] < v[i + 1]:
                v[i], v[i + 1] = v[i + 1], v[i]
                i += 1
        else:
            v[0] -= 1
            v[1] += 1
        logq = _log_q_gnmax(np.array(v), sigma)
        res[d] = _ls_gnmax_at(logq, sigma, C, order)
    return res


def threshold_rdp(log_p: float, sigma1: float, order: float) -> float:
    """The threshold check's RDP at λ: Theorem 6 with q = min(p, 1 − p) and noise √2·σ1, capped by the
    data-independent λ/(2σ1²) (step 1 of :mod:`accounting.gnmax.confident`, at one order).

    Args:
        log_p: log of the probability p that the noisy top count passes the threshold.
        sigma1: the threshold check's σ1 (> 0; :func:`publish_epsilon` validates it).
        order: the RDP order λ.

    Returns:
        The RDP at λ, ≥ 0.

    Raises:
        ZeroDivisionError: ``sigma1`` is 0.
    """
    return float(threshold_step_rdp(log_p, sigma1, np.array([float(order)]))[0])


@functools.lru_cache(maxsize=64)
def _threshold_rdp_list(teachers: int, threshold: float, sigma1: float, order: float) -> tuple[float, ...]:
    return tuple(threshold_rdp(float(norm.logsf(threshold - v, scale=sigma1)), sigma1, order)
                 for v in range(teachers + 1))


def threshold_local_sensitivities(votes: Sequence[int] | np.ndarray, teachers: int, threshold: float,
                                  sigma1: float, order: float) -> np.ndarray:
    """LS(D, d) of the threshold check's RDP for d = 0 … K − 1: max n is within d of its value at D,
    and one changed teacher moves it by ≤ 1, so LS(D, d) = the largest one-step change of the RDP
    over max counts v with |v − max n| = d (0 where no such v exists).

    Args:
        votes: the histogram of one query.
        teachers: K.
        threshold: the threshold T.
        sigma1: the threshold check's σ1 (> 0; :func:`publish_epsilon` validates it).
        order: the RDP order λ.

    Returns:
        An array of K upper bounds on the local sensitivity at distance d.

    Raises:
        ZeroDivisionError: ``sigma1`` is 0.
    """
    rdp = _threshold_rdp_list(teachers, float(threshold), float(sigma1), float(order))

    def step(v: int) -> float:
        down = abs(rdp[v - 1] - rdp[v]) if v > 0 else 0.0
        up = abs(rdp[v + 1] - rdp[v]) if v < teachers else 0.0
        return max(down, up)

    top = int(round(float(np.max(votes))))
    ls = np.zeros(teachers)
    for d in range(max(top, teachers - top)):
        cand = [step(v) for v in (top + d, top - d) if 0 <= v <= teachers]
        ls[d] = max(cand)
    return ls


def smooth_sensitivity(ls: np.ndarray, beta: float) -> float:
    """SS_β = max_d e^{−βd}·LS(D, d) (Nissim, Raskhodnikova & Smith 2007).

    Args:
        ls: the local sensitivities LS(D, d), d = 0, 1, ….
        beta: the smoothness β.

    Returns:
        SS_β (0 for an empty ``ls``).

    Raises:
        ValueError: ``ls`` is not numeric.
    """
    ls = np.asarray(ls, dtype=np.float64)
    return float(np.max(ls * np.exp(-beta * np.arange(ls.size)), initial=0.0))


def gnss_rdp(beta: float, sigma_ss: float, order: float) -> float:
    """The GNSS release's own RDP at λ (Papernot et al. 2018, Theorem 23), for 1 < λ < 1/(2β).

    Args:
        beta: the smoothness β.
        sigma_ss: GNSS's noise multiplier σ_s.
        order: the RDP order λ.

    Returns:
        The release's RDP at λ (data-independent).

    Raises:
        ParameterError: a non-positive ``beta`` or ``sigma_ss``, or λ outside (1, 1/(2β)).
    """
    beta, sigma_ss = positive("beta", beta), positive("sigma_ss", sigma_ss)
    if not 1.0 < order < 1.0 / (2.0 * beta):
        raise ParameterError("order", f"must lie in (1, 1/(2*beta)) = (1, {1 / (2 * beta):g}), got {order}")
    return order * math.exp(2.0 * beta) / sigma_ss**2 + (-0.5 * math.log(1.0 - 2.0 * order * beta)
                                                        + beta * order) / (order - 1.0)


def check_conditions(sigma: float, C: int, order: float, points: int = 400) -> bool:
    """Conditions C5–C6 of Papernot et al. 2018 (Appendix B.4), checked on a log-grid of q: β(q)
    non-decreasing on (0, q0) and β(B_U(q)) − β(q) non-decreasing on (0, B_L(q0)).

    Args:
        sigma: GNMax's σ2.
        C: number of classes.
        order: the RDP order λ.
        points: grid points per condition.

    Returns:
        True when both conditions hold on the grid (the local-sensitivity bound is then valid).

    Raises:
        ParameterError: a non-positive ``sigma`` or ``order``.
        SolveError: q0 cannot be found (:func:`log_q0`).
    """
    lq0 = log_q0(sigma, order)
    grid = np.linspace(lq0 * 40.0, lq0, points)
    b = np.array([gnmax_rdp(x, sigma, order) for x in grid[:-1]] + [_theorem6(lq0, sigma, order)])
    if np.any(np.diff(b) < -1e-12 * np.abs(b[1:])):
        return False
    lq1 = _log_q1(sigma, order, C)
    grid = np.linspace(lq1 * 40.0, lq1, points)
    gap = np.array([gnmax_rdp(math.log(_b_upper(math.exp(x), sigma, C)), sigma, order) - gnmax_rdp(x, sigma, order)
                    for x in grid])
    return not bool(np.any(np.diff(gap) < -1e-12 * np.abs(gap[1:])))


@dataclass(frozen=True)
class SmoothRelease:
    """Confident-GNMax's ε published by GNSS at order λ (module docstring).

    Attributes:
        order: λ.
        beta: the smoothness β.
        sigma_ss: GNSS's noise multiplier σ_s.
        rdp_data_dependent: ρ(D), private (analysis only).
        smooth_sensitivity: SS_β(D), private (analysis only).
        gnss_rdp: the release's own RDP at λ (data-independent).
        noise: the drawn SS_β·σ_s·Z.
        epsilon_published: ρ(D) + noise + gnss_rdp + log(1/δ)/(λ − 1): the number that may be published.
        epsilon_noise_std: SS_β·σ_s (private; its size explains the published value's spread).
        delta: δ.
        answered: answered queries.
    """

    order: float
    beta: float
    sigma_ss: float
    rdp_data_dependent: float
    smooth_sensitivity: float
    gnss_rdp: float
    noise: float
    epsilon_published: float
    epsilon_noise_std: float
    delta: float
    answered: int


def publish_epsilon(histograms: Sequence[Sequence[int]] | np.ndarray, answered: Sequence[bool] | np.ndarray,
                    threshold: float, sigma1: float, sigma2: float, delta: float, order: float, beta: float,
                    sigma_ss: float, rng: np.random.Generator) -> SmoothRelease:
    """The GNSS release of a Confident-GNMax run's data-dependent ε at a fixed order (module docstring).

    Args:
        histograms: one vote histogram per query (K votes each, C ≥ 2 classes).
        answered: whether each query passed the threshold check.
        threshold: T.
        sigma1: the threshold check's σ1.
        sigma2: GNMax's σ2.
        delta: δ of the published (ε, δ).
        order: the fixed RDP order λ (chosen without the private data).
        beta: smoothness, 0 < β < 1/(2λ).
        sigma_ss: GNSS's noise multiplier.
        rng: the release's randomness.

    Returns:
        The :class:`SmoothRelease`.

    Raises:
        ParameterError: bad values or shapes.
        SolveError: conditions C5–C6 fail at (σ2, C, λ): the LS bound would not be valid.
    """
    h = np.asarray(histograms)
    a = np.asarray(answered, dtype=bool)
    if h.ndim != 2 or h.shape[0] == 0 or h.shape[1] < 2 or np.any(h < 0) or len(set(h.sum(axis=1).tolist())) != 1:
        raise ParameterError("histograms", "must be a non-empty (Q, C) array of counts with one total K per row")
    if a.shape != (h.shape[0],):
        raise ParameterError("answered", f"needs one flag per histogram ({h.shape[0]}), got shape {a.shape}")
    K, C = int(h[0].sum()), h.shape[1]
    count("teachers", K)
    real("threshold", threshold)
    sigma1, sigma2 = positive("sigma1", sigma1), positive("sigma2", sigma2)
    delta, order = open_unit("delta", delta), positive("order", order)
    cost = gnss_rdp(beta, sigma_ss, order)
    if a.any() and not check_conditions(sigma2, C, order):
        raise SolveError(f"conditions C5-C6 fail for sigma2={sigma2}, C={C}, order={order}")
    rho = 0.0
    ls = np.zeros(K)
    for n, ans in zip(h, a, strict=True):
        rho += threshold_rdp(log_pr_answered(n.astype(np.int64), threshold, sigma1), sigma1, order)
        ls += threshold_local_sensitivities(n, K, threshold, sigma1, order)
        if ans:
            rho += gnmax_rdp(_log_q_gnmax(n.astype(np.float64), sigma2), sigma2, order)
            ls += gnmax_local_sensitivities(n, K, sigma2, order)
    ss = smooth_sensitivity(ls, beta)
    noise = ss * sigma_ss * float(rng.standard_normal())
    eps = rho + noise + cost + math.log(1.0 / delta) / (order - 1.0)
    return SmoothRelease(float(order), float(beta), float(sigma_ss), rho, ss, cost, noise, eps, ss * sigma_ss, delta,
                         int(a.sum()))


#: β as a fraction of 1/λ (Papernot et al.'s search range is 0.3/λ … 0.495/λ)
BETA_TIMES_ORDER = 0.4
#: GNSS's λe^{2β}/σ_s² as a share of the total ε target (fixes σ_s without the data)
GNSS_COST_SHARE = 0.1


def fixed_parameters(sigma1: float, sigma2: float, queries: int, delta: float,
                     eps_target: float) -> tuple[float, float, float]:
    """(λ, β, σ_s) chosen WITHOUT the private data: λ is the integer order in 2 … 200 minimising the
    data-independent ε of ``queries`` answered queries (Q·(λ/(2σ1²) + λ/σ2²) + log(1/δ)/(λ − 1)),
    β = :data:`BETA_TIMES_ORDER`/λ, and σ_s makes λe^{2β}/σ_s² = :data:`GNSS_COST_SHARE`·``eps_target``.

    Args:
        sigma1: the threshold check's σ1.
        sigma2: GNMax's σ2.
        queries: number of queries Q.
        delta: δ of the published (ε, δ).
        eps_target: the ε the run targets (fixes GNSS's share of it).

    Returns:
        ``(order, beta, sigma_ss)``.

    Raises:
        ParameterError: a bad value (naming it).
    """
    sigma1, sigma2 = positive("sigma1", sigma1), positive("sigma2", sigma2)
    queries, delta = count("queries", queries), open_unit("delta", delta)
    eps_target = positive("eps_target", eps_target)
    orders = np.arange(2.0, 201.0)
    ind = queries * (orders / (2.0 * sigma1**2) + orders / sigma2**2) + math.log(1.0 / delta) / (orders - 1.0)
    order = float(orders[int(np.argmin(ind))])
    beta = BETA_TIMES_ORDER / order
    sigma_ss = math.sqrt(order * math.exp(2.0 * beta) / (GNSS_COST_SHARE * eps_target))
    return order, beta, sigma_ss

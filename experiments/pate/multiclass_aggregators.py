"""Ten-class PATE aggregators calibrated to one TOTAL budget (ε_total, δ_total) over Q queries.

The teachers are K non-private models on disjoint shards (PATE 2018's setting).  Changing one
training record changes one teacher, which may change its vote on every query: each query's
histogram moves by at most one vote (from class a to class b).  Every aggregator below draws fresh
noise per query, so Q answers are an adaptive composition of Q per-query mechanisms.

Claim 1 (GNMax).  argmax(n + N(0, σ²I)) is post-processing of the Gaussian mechanism on n, whose
ℓ2 sensitivity is √2; Q of them compose to one Gaussian of sensitivity √(2Q) (Gaussian DP, Dong,
Roth & Su 2022, Corollary 3.3).  So the σ that makes one query (ε, δ)-DP, times √Q, makes Q queries
(ε, δ)-DP: :func:`gnmax_sigma` = √Q · ``calibrate_sigma(ε_total, δ_total, "pld")``, exact.

Claim 2 (Confident-GNMax, data-independent, publishable).  Step 1 adds N(0, σ1²) to max n
(sensitivity 1), step 2 is GNMax with σ2.  Confident-GNMax is post-processing of the mechanism that
releases *both* the noisy threshold check and a GNMax answer for every query (the answer is dropped
when the check fails), and that mechanism is a Gaussian mechanism of μ² = 1/σ1² + 2/σ2² per query.
So Q queries are exactly μ√Q-GDP whatever was answered: the GNMax calibration of Claim 1 with the
equivalent σ = √(2 / (1/σ1² + 2/σ2²)).  With PATE 2018's ratio σ1/σ2 = 150/40 fixed,
:func:`confident_sigmas` solves for (σ1, σ2).  Its data-dependent ε (Papernot et al. 2018,
Theorem 6; :func:`darrm.accounting.confident_gnmax_epsilon`) is a function of the private
histograms; its GNSS release (:mod:`.smooth_sensitivity`) is recorded as ``epsilon_published``,
a noisy number, never used to compare (the calibrated total is).

Claim 3 (DaRRM plurality).  :mod:`.plurality_top_two`'s M_γ is (ε_q, δ_q)-DP per query.  Q
adaptive answers are (ε_total, δ_total)-DP when ε_total ≥ the optimal homogeneous composition of Q
(ε_q, δ_q) mechanisms (Kairouz, Oh & Viswanath 2015, Theorem 3.3: exact for the worst (ε_q, δ_q)
mechanism, hence valid for M_γ; the generic bound, not M_γ's own profile).  :func:`plurality_budget`
fixes δ_q = δ_total / (2Q) and takes the largest ε_q (bisection, 40 steps) meeting ε_total.  The
ten-class run starts from it and charges the table its own, tighter, composed profile
(:func:`.plurality_profile.plurality_tight_budget`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from darrm.accounting import calibrate_sigma, gnmax_epsilon, optimal_homogeneous_epsilon
from darrm.errors import ParameterError
from darrm.mechanism import class_votes
from darrm.validation import count, epsilon, open_unit, positive

__all__ = ["CONFIDENT_RATIO", "CONFIDENT_THRESHOLD_FRACTION", "PerQuery", "confident_release", "confident_sigmas",
           "confident_total_epsilon", "gnmax_release", "gnmax_sigma",
           "histograms_of", "plurality_budget"]

#: PATE 2018's σ1 / σ2 (150 / 40) and T / K (200 / 250) for Confident-GNMax on 10-class MNIST
CONFIDENT_RATIO = 150.0 / 40.0
CONFIDENT_THRESHOLD_FRACTION = 200.0 / 250.0


def histograms_of(votes: np.ndarray, C: int) -> np.ndarray:
    """Vote histograms ``(Q, C)`` of teacher votes ``(Q, K)`` with labels in 0..C−1.

    Args:
        votes: integer teacher votes ``(Q, K)``.
        C: number of classes.

    Returns:
        ``(Q, C)`` counts: entry (q, c) is how many teachers voted c on query q.

    Raises:
        ParameterError: ``votes`` is not a non-empty 2-D array of labels in ``[0, C)``
            (:func:`darrm.mechanism.class_votes`), or ``C`` is no count ≥ 2.
    """
    votes = class_votes(votes, None, count("C", C, minimum=2), min_queries=1)
    return np.stack([np.bincount(v, minlength=C) for v in votes])


def gnmax_sigma(eps_total: float, delta_total: float, Q: int) -> float:
    """GNMax's σ whose Q answers are exactly (ε_total, δ_total)-DP (Claim 1).

    Args:
        eps_total: the total ε of the Q answers.
        delta_total: the total δ, in (0, 1).
        Q: number of queries.

    Returns:
        σ of the Gaussian noise added to each vote count.

    Raises:
        ParameterError: a bad ``eps_total``, ``delta_total`` or ``Q`` (naming it), or no σ meets the total.
    """
    Q = count("Q", Q)
    return math.sqrt(Q) * calibrate_sigma(epsilon("eps_total", eps_total), open_unit("delta_total", delta_total),
                                          "pld")


def confident_sigmas(eps_total: float, delta_total: float, Q: int,
                     ratio: float = CONFIDENT_RATIO) -> tuple[float, float]:
    """(σ1, σ2) with σ1 = ratio·σ2 whose Q Confident-GNMax answers are (ε_total, δ_total)-DP (Claim 2).

    Args:
        eps_total: the total ε of the Q answers.
        delta_total: the total δ, in (0, 1).
        Q: number of queries.
        ratio: σ1 / σ2 (default PATE 2018's 150 / 40).

    Returns:
        ``(sigma1, sigma2)``: the threshold check's noise and the answer's noise.

    Raises:
        ParameterError: a bad ``eps_total``, ``delta_total``, ``Q`` or ``ratio`` (naming it).
    """
    ratio = positive("ratio", ratio)
    s = gnmax_sigma(eps_total, delta_total, Q)
    sigma2 = s * math.sqrt((1.0 / ratio**2 + 2.0) / 2.0)
    return ratio * sigma2, sigma2


def confident_total_epsilon(sigma1: float, sigma2: float, delta_total: float, Q: int) -> float:
    """ε_total of Q Confident-GNMax answers, data-independent (Claim 2), for checking a calibration.

    Args:
        sigma1: the threshold check's noise σ1.
        sigma2: the answer's noise σ2.
        delta_total: the total δ, in (0, 1).
        Q: number of queries.

    Returns:
        The total ε at ``delta_total``.

    Raises:
        ParameterError: a non-positive σ, or a bad ``delta_total`` or ``Q`` (naming it).
    """
    equiv = math.sqrt(2.0 / (1.0 / positive("sigma1", sigma1) ** 2 + 2.0 / positive("sigma2", sigma2) ** 2))
    return float(gnmax_epsilon(equiv, delta_total, Q, "pld"))


def gnmax_release(hist: np.ndarray, sigma: float, rng: np.random.Generator) -> np.ndarray:
    """argmax of each histogram plus N(0, σ²) per count.

    Args:
        hist: vote histograms ``(Q, C)``.
        sigma: the noise's standard deviation σ.
        rng: the mechanism's random generator.

    Returns:
        The Q released labels.

    Raises:
        ParameterError: ``sigma`` is not positive.
    """
    hist = np.asarray(hist, dtype=np.float64)
    return np.argmax(hist + rng.normal(0.0, positive("sigma", sigma), size=hist.shape), axis=1)


def confident_release(hist: np.ndarray, threshold: float, sigma1: float, sigma2: float,
                      rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Confident-GNMax (Papernot et al. 2018, Algorithm 1): (answered flags, labels; −1 where unanswered).

    Args:
        hist: vote histograms ``(Q, C)``.
        threshold: a query is answered when its noisy top count reaches this.
        sigma1: the threshold check's noise σ1.
        sigma2: the answer's noise σ2 (drawn for every query, Claim 2).
        rng: the mechanism's random generator.

    Returns:
        ``(answered, labels)``: boolean flags, and the labels with −1 where unanswered.

    Raises:
        ParameterError: ``sigma1`` or ``sigma2`` is not positive.
    """
    hist = np.asarray(hist, dtype=np.float64)
    answered = hist.max(axis=1) + rng.normal(0.0, positive("sigma1", sigma1), size=len(hist)) >= threshold
    labels = gnmax_release(hist, sigma2, rng)  # drawn for every query (Claim 2), dropped where unanswered
    return answered, np.where(answered, labels, -1)


@dataclass(frozen=True)
class PerQuery:
    """A per-query (ε_q, δ_q) and the total it composes to.

    Attributes:
        eps_query: ε_q of one query.
        delta_query: δ_q of one query.
        eps_total: the ε the Q queries compose to (at ``delta_total``).
        delta_total: the total δ.
    """

    eps_query: float
    delta_query: float
    eps_total: float
    delta_total: float


def plurality_budget(eps_total: float, delta_total: float, Q: int) -> PerQuery:
    """The per-query (ε_q, δ_q = δ_total / (2Q)) of the DaRRM plurality aggregator (Claim 3).

    ε_q is the largest (to 40 bisection steps) whose exact optimal composition over Q queries is
    at most ``eps_total``.

    Args:
        eps_total: the total ε of the Q answers.
        delta_total: the total δ, in (0, 1).
        Q: number of queries.

    Returns:
        The :class:`PerQuery` budget and the total it composes to.

    Raises:
        ParameterError: a bad argument (naming it), or no ε_q > 0 meets the total.
    """
    eps_total = epsilon("eps_total", eps_total)
    delta_total = open_unit("delta_total", delta_total)
    Q = count("Q", Q)
    dq = delta_total / (2 * Q)

    def total(e: float) -> float:
        return float(optimal_homogeneous_epsilon(e, dq, Q, delta_total))

    lo, hi = 0.0, eps_total
    if total(hi) <= eps_total:
        return PerQuery(hi, dq, total(hi), delta_total)
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if total(mid) <= eps_total:
            lo = mid
        else:
            hi = mid
    if lo <= 0.0:
        raise ParameterError("eps_total", f"no per-query epsilon meets {eps_total} over {Q} queries")
    return PerQuery(lo, dq, total(lo), delta_total)

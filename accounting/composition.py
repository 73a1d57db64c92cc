"""Composition theorems for (ε, δ)-differential privacy.

All functions are pure and validate their inputs (``ParameterError`` names the
offending parameter).  k-fold *adaptive* composition of mechanisms that are each
(ε, δ)-DP is bounded by, from loosest to tightest:

* :func:`simple` — (kε, kδ) (Dwork et al. 2006; DaRRM paper Theorem 2.2);
* :func:`advanced_dwork_roth` — Dwork, Rothblum & Vadhan 2010 / Dwork & Roth
  2014 Theorem 3.20;
* :func:`kairouz_general` — Kairouz, Oh & Viswanath 2015 Theorem 3.4, the
  "general composition" of the DaRRM paper (Theorem 2.3), used for its Tables
  2, 3, 5, 7, 9;
* :func:`optimal_homogeneous_epsilon` — the exact (optimal) privacy profile of
  k-fold composition, Kairouz et al. Theorem 3.3, evaluated in log space for
  any real ε_total (:func:`kairouz_optimal_discrete` restricts ε_total to the
  theorem's grid {(k−2i)ε}, which is what ``dp_accounting`` implements);
* :func:`heterogeneous_pld` — heterogeneous (ε_i, δ_i) through pessimistic
  privacy-loss distributions (``dp_accounting.pld``).

:func:`parallel` documents the parallel-composition rule for mechanisms that
each see a disjoint shard of the data.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
from scipy.special import logsumexp

from darrm import validation as v
from darrm.errors import ParameterError, ParameterTypeError
from darrm.numerics.binomial import log_comb
from darrm.numerics.delta import composed_delta
from darrm.numerics.inversion import inverse_monotone

Budget = tuple[float, float]


def simple(eps: float, delta: float, k: int) -> Budget:
    """Simple composition (DaRRM Theorem 2.2): k-fold composition is (kε, min(1, kδ))-DP.

    Args:
        eps: each mechanism's ε (> 0).
        delta: each mechanism's δ, in [0, 1].
        k: the number of mechanisms composed.

    Returns:
        The total (kε, min(1, kδ)).

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    eps, delta, k = v.epsilon("eps", eps), v.half_open_unit("delta", delta), v.count("k", k)
    return k * eps, min(1.0, k * delta)


def advanced_dwork_roth(eps: float, delta: float, k: int, delta_prime: float) -> Budget:
    """Advanced composition, Dwork & Roth 2014 Theorem 3.20.

    ε_total = ε·sqrt(2k·ln(1/δ′)) + k·ε·(e^ε − 1),  δ_total = kδ + δ′.
    This is the bound the DaRRM reference code prints (the paper's Table 2); the paper's
    tables use :func:`kairouz_general` instead.

    Args:
        eps: each mechanism's ε (> 0).
        delta: each mechanism's δ, in [0, 1).
        k: the number of mechanisms composed.
        delta_prime: the slack δ′ of the theorem, in (0, 1).

    Returns:
        The total (ε_total, δ_total).

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    eps, delta, k = v.epsilon("eps", eps), v.half_open_unit("delta", delta), v.count("k", k)
    delta_prime = v.open_unit("delta_prime", delta_prime)
    eps_total = eps * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) + k * eps * math.expm1(eps)
    return eps_total, min(1.0, k * delta + delta_prime)


def kairouz_terms(eps: float, delta: float, k: int, delta_prime: float) -> tuple[float, float, float]:
    """The three candidate ε_total of Kairouz et al. Theorem 3.4 (DaRRM Theorem 2.3).

    Returns (kε,
             k·ε·tanh(ε/2) + ε·sqrt(2k·log(e + sqrt(kε²)/δ′)),
             k·ε·tanh(ε/2) + ε·sqrt(2k·log(1/δ′))),
    using (e^ε − 1)/(e^ε + 1) = tanh(ε/2).
    """
    eps, delta, k = v.epsilon("eps", eps), v.half_open_unit("delta", delta), v.count("k", k)
    delta_prime = v.open_unit("delta_prime", delta_prime)
    drift = k * eps * math.tanh(eps / 2.0)
    second = drift + eps * math.sqrt(2.0 * k * math.log(math.e + math.sqrt(k * eps * eps) / delta_prime))
    third = drift + eps * math.sqrt(2.0 * k * math.log(1.0 / delta_prime))
    return k * eps, second, third


def kairouz_general(eps: float, delta: float, k: int, delta_prime: float) -> Budget:
    """General composition, Kairouz, Oh & Viswanath 2015 Theorem 3.4 (DaRRM Theorem 2.3).

    For ε > 0, δ ∈ [0, 1), δ′ ∈ (0, 1): the k-fold adaptive composition of
    (ε, δ)-DP mechanisms is (ε_total, 1 − (1−δ)^k·(1−δ′))-DP with ε_total the
    minimum of :func:`kairouz_terms`.  (The theorem allows δ′ = 1, which is
    vacuous; it is refused here.)

    Args:
        eps: each mechanism's ε (> 0).
        delta: each mechanism's δ, in [0, 1).
        k: the number of mechanisms composed.
        delta_prime: the slack δ′ of the theorem, in (0, 1).

    Returns:
        The total (ε_total, 1 − (1−δ)^k·(1−δ′)).

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    terms = kairouz_terms(eps, delta, k, delta_prime)
    return min(terms), composed_delta(float(delta), k, float(delta_prime))


#: k above which :func:`_pure_profile` sums only a window of the binomial (its cost then grows like √k)
_WINDOW_FROM = 100_000
#: the window's half-width in standard deviations √k (Hoeffding: the terms left out weigh ≤ 2e^{−2·40²})
_WINDOW_SD = 40.0
#: k above which no window is summed (8·10⁶ terms): the closed form is refused as too costly
PURE_PROFILE_MAX_K = 10**10


def _pure_profile(eps: float, k: int, eps_total: float) -> float:
    """Exact hockey-stick divergence H_{e^{ε_total}} of k-fold ε-randomised response.

    δ(ε_total) = Σ_{l: (k−2l)ε > ε_total} C(k,l)·(e^{(k−l)ε} − e^{ε_total + lε}) / (1+e^ε)^k,
    the privacy profile of the composition of k pure ε-DP mechanisms (Kairouz
    et al. 2015, proof of Theorem 3.3), evaluated with logsumexp.

    For k > :data:`_WINDOW_FROM` only the l within :data:`_WINDOW_SD`·√k of the mean k/(1+e^ε) are
    summed, and the rest is bounded and *added*: each term is at most the Binomial(k, 1/(1+e^ε))
    mass C(k,l)e^{(k−l)ε}/(1+e^ε)^k of its l, and Hoeffding's inequality bounds the mass outside
    the window by 2·exp(−2t²/k), t the half-width.  The result stays an upper bound (exact up to
    that term, which is below 10^{−1300}), and its cost grows like √k, not k.

    Raises:
        ParameterError: k > :data:`PURE_PROFILE_MAX_K` (the window alone would be too long).
    """
    if k > PURE_PROFILE_MAX_K:
        raise ParameterError("k", f"{k} compositions: the exact homogeneous composition would sum about "
                                  f"{2 * _WINDOW_SD * math.sqrt(k):.3g} terms (k at most {PURE_PROFILE_MAX_K:g})")
    lmax = math.ceil((k - eps_total / eps) / 2.0) - 1 if eps > 0 else -1  # largest l with (k−2l)ε > ε_total
    lmax = min(lmax, k)
    if lmax < 0:
        return 0.0
    left_out = 0.0
    lo = 0
    if k > _WINDOW_FROM:
        t = _WINDOW_SD * math.sqrt(k)
        centre = k / (1.0 + math.exp(eps))
        lo = max(0, math.floor(centre - t))
        hi = math.ceil(centre + t)
        left_out = 2.0 * math.exp(-2.0 * t * t / k)
        lmax = min(lmax, hi)
        if lmax < lo:
            return float(min(1.0, left_out))
    lv = np.arange(lo, lmax + 1, dtype=float)
    losses = (k - 2.0 * lv) * eps
    mask = losses > eps_total
    if not mask.any():
        return float(min(1.0, left_out))
    lv = lv[mask]
    log_terms = (
        log_comb(k, lv)
        + (k - lv) * eps
        - k * np.logaddexp(0.0, eps)
        + np.log(-np.expm1(eps_total - losses[mask]))
    )
    return float(min(1.0, math.exp(logsumexp(log_terms)) + left_out))


def optimal_homogeneous_delta(eps: float, delta: float, k: int, eps_total: float) -> float:
    """Smallest δ_total such that k-fold composition of (ε, δ)-DP is (ε_total, δ_total)-DP.

    Exact (optimal) composition, Kairouz et al. 2015 Theorem 3.3: every (ε, δ)-DP
    mechanism is a post-processing of the four-outcome pair dominating it, so
    δ_total = 1 − (1−δ)^k·(1 − δ_pure(ε_total)) with δ_pure from the k-fold
    composition of ε-randomised response.  Valid for every real ε_total ≥ 0
    (Theorem 3.3 states it on the grid ε_total = (k−2i)ε).

    Args:
        eps: each mechanism's ε (≥ 0).
        delta: each mechanism's δ, in [0, 1).
        k: the number of mechanisms composed.
        eps_total: the total ε at which δ_total is wanted (≥ 0).

    Returns:
        The smallest δ_total.

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    eps, delta, k = v.epsilon("eps", eps), v.half_open_unit("delta", delta), v.count("k", k)
    eps_total = v.non_negative("eps_total", eps_total)
    pure = _pure_profile(eps, k, eps_total)
    return 1.0 if pure >= 1.0 else composed_delta(delta, k, pure)


def _pure_target(delta: float, k: int, delta_total: float) -> float:
    """δ_pure allowed by δ_total: 1 − (1−δ_total)/(1−δ)^k; refuses δ_total < 1 − (1−δ)^k."""
    floor = composed_delta(delta, k)
    if delta_total < floor:
        raise ParameterError(
            "delta_total",
            f"must be >= 1-(1-delta)^k = {floor:.6g}: no finite eps_total reaches {delta_total:.6g}",
        )
    return -math.expm1(math.log1p(-delta_total) - k * math.log1p(-delta))


#: mpmath digits of :func:`_certified_delta` (on top of the digits of the exponents' magnitude)
_CHECK_DIGITS = 40
#: relative bound on mpmath's rounding in :func:`_certified_delta` (N ≤ 10⁷ recurrence steps at
#: ``_CHECK_DIGITS`` digits each err ≤ 10^{-40}; 10^{-30} covers them with room)
_CHECK_RELATIVE = 1e-30


def _certified_delta(eps: float, delta: float, k: int, eps_total: float, delta_total: float) -> bool:
    """Whether 1 − (1−δ)^k·(1 − δ_pure(ε_total)) ≤ δ_total holds for the real numbers the floats
    ``eps``, ``delta``, ``eps_total``, ``delta_total`` denote (:func:`optimal_homogeneous_delta`'s
    closed form, decided in mpmath, never in float64).

    Proof of rigour.  δ_pure = Σ_{l ≤ L} B(l)·(1 − e^{ε_total − (k−2l)ε}) with B the Binomial(k, p)
    pmf, p = 1/(1+e^ε), and L the largest l with (k−2l)ε > ε_total (:func:`_pure_profile`); every
    term lies in [0, B(l)].  The terms with |l − kp| ≤ t are summed in mpmath at
    ``_CHECK_DIGITS`` + (digits of kε) decimal digits, B(l) by its exact recurrence
    B(l+1) = B(l)·(k−l)/(l+1)·e^{−ε} from one mpmath evaluation of B(l₀); each of the N ≤ 2t + 1
    steps rounds by at most 10^{−dps}, so the window's sum is within a relative 10^{−30} of its
    exact value (N ≤ 10⁷; the sum is inflated by that factor).  The terms outside the window weigh at
    most their binomial mass, ≤ 2·exp(−2(t−1)²/k) by Hoeffding's inequality (the window is placed at a
    float centre kp that errs by < 1e-5 ≤ 1 for k ≤ 10¹⁰), which is added; t is chosen so that this
    is ≤ 10^{−30}·δ_total (or the window holds every l).  The float64 L is corrected in mpmath first.
    So the computed δ_pure is an upper bound on the exact one, and the final comparison is done on the
    exact binary values of the inputs in mpmath (with 1 − (1−δ)^k at the same precision).  ∎
    """
    import mpmath

    lmax = math.ceil((k - eps_total / eps) / 2.0) - 1 if eps > 0 else -1
    lmax = min(lmax, k)
    # float64 decides lmax: re-check its neighbours exactly so the set of terms is the exact one
    digits = _CHECK_DIGITS + max(0, int(math.log10(max(1.0, k * max(eps, 1.0), eps_total))) + 1)
    with mpmath.workdps(digits):
        e, et, mk = mpmath.mpf(eps), mpmath.mpf(eps_total), mpmath.mpf(k)
        while lmax + 1 <= k and (mk - 2 * (lmax + 1)) * e > et:
            lmax += 1
        while lmax >= 0 and not (mk - 2 * lmax) * e > et:
            lmax -= 1
        tail = mpmath.mpf(0)
        lo = 0
        if lmax >= 0:
            centre = k / (1.0 + math.exp(eps))
            t = math.sqrt(k * max(1.0, math.log(2.0 / (1e-30 * delta_total))) / 2.0) + 2.0
            lo = max(0, math.floor(centre - t))
            hi = min(lmax, math.ceil(centre + t))
            if lo > 0 or hi < lmax:
                # the window holds every l with |l − kp| < t − 1 (the float centre errs by < 1e-5 for
                # k ≤ 1e10): Hoeffding at t − 1
                tail = 2 * mpmath.exp(-2 * mpmath.mpf(t - 1.0) ** 2 / mk)
            lmax = hi
        pure = mpmath.mpf(0)
        if lmax >= lo:
            b = mpmath.binomial(mk, lo) * mpmath.exp((mk - lo) * e - mk * mpmath.log1p(mpmath.exp(e)))
            shrink = mpmath.exp(-e)
            ratio = mpmath.exp(et - (mk - 2 * lo) * e)  # e^{ε_total − loss_l}
            grow = mpmath.exp(2 * e)
            for l in range(lo, lmax + 1):
                pure += b * (1 - ratio)
                b *= (mk - l) / (l + 1) * shrink
                ratio *= grow
        pure = pure * (1 + mpmath.mpf(_CHECK_RELATIVE)) + tail
        total = 1 - (1 - mpmath.mpf(delta)) ** k * (1 - pure)
        return bool(total <= mpmath.mpf(delta_total))


def optimal_homogeneous_epsilon(eps: float, delta: float, k: int, delta_total: float) -> float:
    """Smallest ε_total with k-fold (ε, δ)-DP composition (ε_total, δ_total)-DP (exact).

    Inverts :func:`optimal_homogeneous_delta` (:func:`darrm.numerics.inversion.inverse_monotone`,
    Brent's method then a checked step) in float64, then decides the candidate exactly
    (:func:`_certified_delta`: the closed form in mpmath with a proven bound on what it leaves out)
    and steps it up until δ_total holds for the real numbers: the returned ε_total is never below
    the true smallest one (float64 alone can err there: at ε = 0.1, δ = 0, k = 100,
    δ_total = 10⁻⁵ its root 4.306791372516507 has an exact δ 1.5·10⁻²¹ above δ_total).  Raises
    ``ParameterError('delta_total')`` when δ_total < 1 − (1−δ)^k, where no finite ε_total exists.

    Args:
        eps: each mechanism's ε (≥ 0).
        delta: each mechanism's δ, in [0, 1).
        k: the number of mechanisms composed.
        delta_total: the total δ, in (0, 1).

    Returns:
        The smallest ε_total, rounded up.

    Raises:
        ParameterError: a parameter is out of range, or no finite ε_total meets ``delta_total``.
    """
    eps, delta, k = v.epsilon("eps", eps), v.half_open_unit("delta", delta), v.count("k", k)
    delta_total = v.open_unit("delta_total", delta_total)
    return certified_above(eps, delta, k, delta_total, float_homogeneous_epsilon(eps, delta, k, delta_total))


def float_homogeneous_epsilon(eps: float, delta: float, k: int, delta_total: float) -> float:
    """The float64 root of :func:`optimal_homogeneous_delta` = ``delta_total`` (checked in float64
    only: pass it to :func:`certified_above` before claiming it; a caller that takes the minimum
    over several candidates certifies only the winner).  Arguments as validated by
    :func:`optimal_homogeneous_epsilon`.

    Raises:
        ParameterError: δ_total < 1 − (1−δ)^k (no finite ε_total), or k too large (named)."""
    _pure_target(delta, k, delta_total)  # refuses δ_total < 1 − (1−δ)^k
    if k > PURE_PROFILE_MAX_K:
        _pure_profile(eps, k, 0.0)  # refuses naming k
    # δ(ε_total) is non-increasing and δ(kε) = 1 − (1−δ)^k ≤ δ_total; the certified end is
    # checked on the *public* δ (which adds 1 − (1−δ)^k in float64)
    return inverse_monotone(lambda t: optimal_homogeneous_delta(eps, delta, k, t), delta_total, 0.0, k * eps,
                            increasing=False, xtol=1e-13, rtol=1e-14, name="delta_total")


def certified_above(eps: float, delta: float, k: int, delta_total: float, start: float) -> float:
    """The smallest of ``start``, ``start`` + s, ``start`` + 3s, … (s doubling) at which δ ≤ δ_total
    holds exactly (:func:`_certified_delta`): an ε_total never below the true smallest one.

    Raises:
        ParameterError: δ_total < 1 − (1−δ)^k exactly (no finite ε_total), naming ``delta_total``."""
    out = start
    # first step: float64's error in δ grows about like k·u (measured: the root is certified 1e-11, 1e-10, 1e-9
    # relative above at k = 1e5, 1e6, 1e8), so one or two exact checks usually suffice
    step = max(out * max(4e-14, 2e-17 * k), 1e-13)
    while not _certified_delta(eps, delta, k, out, delta_total):
        if out >= k * eps:  # δ_pure = 0 there: only 1 − (1−δ)^k > δ_total can fail, exactly
            raise ParameterError("delta_total", f"must be >= 1-(1-delta)^k exactly: no finite eps_total reaches "
                                                f"{delta_total:.6g}")
        out = min(k * eps, out + step)
        step *= 2.0
    return out


def kairouz_optimal_discrete(eps: float, delta: float, k: int, delta_total: float) -> float:
    """Kairouz et al. Theorem 3.3 restricted to its grid: the smallest (k−2i)ε, i ∈ {0..⌊k/2⌋},
    whose δ_i satisfies 1 − (1−δ)^k(1−δ_i) <= δ_total.

    Same quantity as ``dp_accounting.pld.accountant.advanced_composition``
    (which overflows for large kε); :func:`optimal_homogeneous_epsilon` is never larger.
    """
    eps, delta, k = v.epsilon("eps", eps), v.half_open_unit("delta", delta), v.count("k", k)
    delta_total = v.open_unit("delta_total", delta_total)
    target = _pure_target(delta, k, delta_total)
    for i in range(k // 2, -1, -1):
        if _pure_profile(eps, k, (k - 2 * i) * eps) <= target:
            return (k - 2 * i) * eps
    raise AssertionError("unreachable: i = 0 always satisfies the bound")  # pragma: no cover


def heterogeneous_pld(
    budgets: Sequence[Budget], delta_total: float, discretization: float = 1e-4
) -> float:
    """ε_total of the composition of mechanisms with heterogeneous (ε_i, δ_i) guarantees.

    Each (ε_i, δ_i) is replaced by the pessimistic privacy-loss distribution of its
    dominating pair (``dp_accounting.pld.privacy_loss_distribution.from_privacy_parameters``;
    losses rounded up to multiples of ``discretization``) and the PLDs are
    convolved.  The result is a valid upper bound; for equal budgets it exceeds
    the exact :func:`optimal_homogeneous_epsilon` by at most about
    k·``discretization``.

    Args:
        budgets: the (ε_i, δ_i) of each mechanism.
        delta_total: the total δ, in (0, 1).
        discretization: the PLD's loss grid (> 0).

    Returns:
        ε_total, a valid upper bound.

    Raises:
        ParameterError: ``budgets`` is empty, or a budget or parameter is out of range (named).
    """
    delta_total = v.open_unit("delta_total", delta_total)
    return float(heterogeneous_composition(budgets, discretization).get_epsilon_for_delta(delta_total))


def heterogeneous_composition(budgets: Sequence[Budget], discretization: float = 1e-4):
    """The pessimistic dp_accounting ``PrivacyLossDistribution`` of the composition of mechanisms
    with the (ε_i, δ_i) guarantees ``budgets`` (:func:`heterogeneous_pld`): its
    ``get_epsilon_for_delta``/``get_delta_for_epsilon`` are valid upper bounds.

    Raises:
        ParameterError: ``budgets`` is empty, or a budget or ``discretization`` is out of range (named).
    """
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.pld.common import DifferentialPrivacyParameters

    checked = Counter(budget_list("budgets", budgets))
    discretization = v.positive("discretization", discretization)
    parts = []
    for (e, d), times in checked.items():
        one = pld.from_privacy_parameters(DifferentialPrivacyParameters(e, d), discretization)
        parts.append(one.self_compose(times) if times > 1 else one)
    total = parts[0]  # budgets is not empty
    for part in parts[1:]:
        total = total.compose(part)
    return total


def budget_list(name: str, budgets: object) -> list[Budget]:
    """A non-empty sequence of (ε, δ) pairs, each checked (ε in (0, 700], δ in [0, 1)), as floats."""
    if isinstance(budgets, (str, bytes, dict)) or not isinstance(budgets, Sequence | np.ndarray):
        raise ParameterTypeError(name, f"must be a sequence of (eps, delta) pairs, got {type(budgets).__name__}")
    if len(budgets) == 0:
        raise ParameterError(name, "must contain at least one (eps, delta) pair")
    out = []
    for i, b in enumerate(budgets):
        if isinstance(b, (str, bytes)) or not isinstance(b, Sequence | np.ndarray) or len(b) != 2:
            raise ParameterError(f"{name}[{i}]", f"must be an (eps, delta) pair, got {b!r}")
        out.append((v.epsilon(f"{name}[{i}].eps", b[0]), v.half_open_unit(f"{name}[{i}].delta", b[1])))
    return out


def parallel(budgets: Sequence[Budget]) -> Budget:
    """Parallel composition over disjoint shards: (max_i ε_i, max_i δ_i).

    Rule (McSherry 2009, Thm 4): the data set is split into disjoint shards by a
    partition that does not depend on the private records' values beyond which
    shard they go to (e.g. by index), and member i is (ε_i, δ_i)-DP *with respect
    to its own shard*, its guarantee covering everything it ever outputs (e.g. a
    teacher model trained with DP-SGD, queried any number of times afterwards).
    Then the tuple of all members' outputs — and any post-processing of it,
    including any number of queries answered by the members — is
    (max ε_i, max δ_i)-DP, because neighbouring data sets differ in one record,
    hence in one shard, and the other members' outputs have the same distribution.

    Caveat: under replace-one adjacency a value-dependent partition (e.g. by
    hashing the record) can move the record to another shard and change two
    members; then use sequential composition of those two instead.

    Args:
        budgets: the (ε_i, δ_i) of each member, each with respect to its own shard.

    Returns:
        (max ε_i, max δ_i).

    Raises:
        ParameterError: ``budgets`` is empty or holds an invalid budget.
    """
    pairs = budget_list("budgets", budgets)
    return max(e for e, _ in pairs), max(d for _, d in pairs)


def compare_bounds(eps: float, delta: float, k: int, delta_prime: float) -> list[dict[str, float | str]]:
    """Every composition bound for k-fold (ε, δ)-DP, loosest first (``darrm account compose``).

    Records ``{"method", "eps_total", "delta_total"}``; the exact ones (``optimal-grid``,
    ``optimal``) are evaluated at Kairouz's δ_total, so the three last rows are comparable."""
    e_s, d_s = simple(eps, delta, k)
    e_dr, d_dr = advanced_dwork_roth(eps, delta, k, delta_prime)
    e_k, d_k = kairouz_general(eps, delta, k, delta_prime)
    return [
        {"method": "simple", "eps_total": e_s, "delta_total": d_s},
        {"method": "dwork-roth", "eps_total": e_dr, "delta_total": d_dr},
        {"method": "kairouz-general", "eps_total": e_k, "delta_total": d_k},
        {"method": "optimal-grid", "eps_total": kairouz_optimal_discrete(eps, delta, k, d_k), "delta_total": d_k},
        {"method": "optimal", "eps_total": optimal_homogeneous_epsilon(eps, delta, k, d_k), "delta_total": d_k},
    ]

"""k-RR shuffle bound of Biswas, Jung, Palamidessi (FPS 2023, arXiv 2205.08858v2).

What it is (Biswas et al., Theorem 4.1 and its proof): the tight δ of *one bin's count*
(the number of x0 reports) for *one fixed dataset* (n_x0 other users hold x0), in
one direction.  The count is a post-processing of the shuffled output, so the
correct ("exact") value is a **lower bound** on the histogram's privacy loss — never
an upper bound.  The printed Theorem 4.1 has an algebra error (a binomial
C(n-1-n_x0, s-1-r) where C(n-n_x0, s-r) is needed); its tables were computed with
it.  ``variant="paper"`` reproduces those tables and is marked invalid;
``variant="exact"`` is H_{e^ε}(P0 || P1) of the x0-count.

Computed in log space: W = I + J_B with I ~ Bin(n_x0, p), J_B ~ Bin(n-1-n_x0, p̄)
(p = e^{ε0}/(e^{ε0}+k-1), p̄ = 1/(e^{ε0}+k-1)), P0(s) = p W(s-1) + (1-p) W(s),
P1(s) = p̄ W(s-1) + (1-p̄) W(s), privacy loss v_s = ln(κ2 + (e^{ε0}-κ2) ρ_s) with ρ
clamped to [0, 1] (Biswas et al., Theorem 4.1 and its appendix).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp
from scipy.stats import binom

from darrm import validation as val
from darrm.errors import ParameterError

from .bound import Bound, NotApplicable, eps_for_delta
from .randomizers import GenericLDP, RandomizedResponse, Randomizer


def _logconv(la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """log of the convolution of two pmfs given in log space (direct, O(len a · len b))."""
    if la.size > lb.size:
        la, lb = lb, la
    out = np.full(la.size + lb.size - 1, -np.inf)
    for r, v in enumerate(la):
        if v == -np.inf:
            continue
        seg = out[r : r + lb.size]
        out[r : r + lb.size] = np.logaddexp(seg, v + lb)
    return out


def _binlog(m: int, prob: float) -> np.ndarray:
    if m < 0:
        return np.array([-np.inf])
    return binom.logpmf(np.arange(m + 1), m, prob)


def x0_count_loss(n: int, n_x0: int, k: int, eps0: float, variant: str):
    """(log P0, log P1, v) of the x0-count, s = 0..n (Biswas et al., Section 4 and Appendix A)."""
    val.choice("variant", variant, ("exact", "paper"))
    if not 0 <= n_x0 <= n - 1:
        raise ParameterError("n_x0", f"must lie in [0, n-1] = [0, {n - 1}], got {n_x0}")
    E = math.exp(eps0) + k - 1
    p, pb = math.exp(eps0) / E, 1.0 / E
    a_ = n - n_x0  # A'
    lW = _logconv(_binlog(n_x0, p), _binlog(a_ - 1, pb))  # support 0..n-1
    lW_m1 = np.concatenate(([-np.inf], lW))  # W(s-1), s = 0..n
    lW_0 = np.concatenate((lW, [-np.inf]))  # W(s)
    lP0 = np.logaddexp(math.log(p) + lW_m1, math.log1p(-p) + lW_0)
    lP1 = np.logaddexp(math.log(pb) + lW_m1, math.log1p(-pb) + lW_0)
    if variant == "exact":
        rho = np.exp(math.log(pb) + lW_m1 - lP1)
    else:
        t1 = math.log(pb) + math.log(a_) + lW_m1
        if a_ >= 2:
            lW2 = _logconv(_binlog(n_x0, p), _binlog(a_ - 2, pb))  # support 0..n-2
            lW2_m2 = np.concatenate(([-np.inf, -np.inf], lW2))
            t2 = math.log(a_ * (a_ - 1)) + 2 * math.log(pb) + lW2_m2
            num = np.logaddexp(t1, t2)
        else:
            num = t1
        rho = np.exp(num - 2 * math.log(a_) - lP1)
    rho = np.clip(np.nan_to_num(rho, nan=0.0), 0.0, 1.0)
    kappa2 = (k - 1) / (math.exp(eps0) + k - 2)
    v = np.log(kappa2 + (math.exp(eps0) - kappa2) * rho)
    return lP0, lP1, v


def krr_delta(eps: float, n: int, n_x0: int, k: int, eps0: float, variant: str, direction: str = "forward") -> float:
    """δ(ε) of the x0-count for one dataset (Biswas et al., Theorem 4.1); "max" = both directions (exact only)."""
    lP0, lP1, v = x0_count_loss(n, n_x0, k, eps0, variant)
    val.choice("direction", direction, ("forward", "reverse", "max"))
    if variant == "paper" and direction != "forward":
        raise ParameterError("direction", "the paper variant is not a log-ratio: only 'forward' is defined")

    def fwd():
        m = v > eps
        return float(np.exp(logsumexp(lP0[m] + np.log(-np.expm1(eps - v[m]))))) if m.any() else 0.0

    def rev():
        m = -v > eps
        return float(np.exp(logsumexp(lP1[m] + np.log(-np.expm1(eps + v[m]))))) if m.any() else 0.0

    if direction == "forward":
        return fwd()
    if direction == "reverse":
        return rev()
    return max(fwd(), rev())


_MAX_N = 20000
#: the methods' names in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
LOWER_NAME = "krr-exact"
PAPER_NAME = "krr-paper"
_LOW_NOTE = ("Biswas et al. corrected ('exact') single-bin x0-count divergence, max over n_x0 in {0,1,2} "
             "and both directions: a post-processing of the shuffled histogram of one dataset, so a LOWER bound")
_PAPER_NOTE = ("Biswas et al. Thm 4.1 as printed (with the algebra error of its proof); single bin, fixed dataset, "
               "one direction: not a DP guarantee; reproduces the paper's tables only")


def lower_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    if isinstance(randomizer, GenericLDP):
        randomizer = RandomizedResponse(randomizer.eps0, 2)
    if not isinstance(randomizer, RandomizedResponse):
        raise NotApplicable("randomizer", "the k-RR bound applies to k-ary randomized response only")
    if n > _MAX_N:
        raise NotApplicable("n", f"the k-RR lower bound is computed for n <= {_MAX_N}")
    return max(
        krr_delta(eps, n, m, randomizer.k, randomizer.eps0, "exact", "max") for m in range(min(3, n))
    )


def lower_delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    eps, n = val.epsilon("eps", eps, allow_zero=True), val.count("n", n)
    return Bound(LOWER_NAME, "lower", True, eps, lower_delta(randomizer, n, eps), _LOW_NOTE)


def lower_eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    delta, n = val.open_unit("delta", delta), val.count("n", n)
    e = eps_for_delta(lambda x: lower_delta(randomizer, n, x), delta, randomizer.eps0, "lower")
    return Bound(LOWER_NAME, "lower", True, e, delta, _LOW_NOTE)


def paper_eps_bound(randomizer: RandomizedResponse, n: int, delta: float, n_x0: int | None = None) -> Bound:
    """The printed Theorem 4.1 (variant "paper") at n_x0 = 0.8 n as in its tables; invalid."""
    delta, n = val.open_unit("delta", delta), val.count("n", n)
    if n > _MAX_N:
        raise NotApplicable("n", f"the k-RR bound is computed for n <= {_MAX_N}")
    m = int(0.8 * n) if n_x0 is None else n_x0
    m = min(m, n - 1)
    f = lambda x: krr_delta(x, n, m, randomizer.k, randomizer.eps0, "paper")  # noqa: E731
    e = eps_for_delta(f, delta, randomizer.eps0, "upper")
    return Bound(PAPER_NAME, "upper", False, e, delta, _PAPER_NOTE)

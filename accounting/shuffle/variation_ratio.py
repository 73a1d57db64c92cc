"""Variation-ratio reduction (Wang et al., "Privacy Amplification via Shuffling:
Unified, Simplified, and Tightened", arXiv:2304.05007).

Core: the dominating pair of Theorem 4.7, P = (A+Δ1, C-A+Δ2) vs Q = (A+Δ2, C-A+Δ1)
with C ~ Bin(n-1, 2r), A|C ~ Bin(C, 1/2), (Δ1, Δ2) = (1,0) w.p. pα, (0,1) w.p. α,
(0,0) w.p. g; α = β/(p-1), g = 1-(p+1)α, r = αp/q.  :func:`vr_delta` evaluates
Theorem 4.1 = 4.8 in a numerically stable form (log space,
Wang et al. §4), with the sum over c truncated to a window whose
dropped mass (x pα, an upper bound on each term) is added to δ.

Validity (read before use).  Su et al. (§3.3) show that the post-processing step of
the stronger-clone reduction is flawed, and the variation-ratio reduction inherits
it whenever the victim's decomposition has a left-over part, g > 0: the analyser
cannot tell whether the non-clone messages contain the victim's left-over Q_1 or
only the others' Q_i.  Hence:

* g = 0 (β = (p-1)/(p+1), or p = ∞ with β = 1): the pair *is* a general-clone
  reduction pair (Su et al. Def. 8, Thm 4) and the bound is valid **provided the
  decomposition exists**, i.e. R_i(y) >= r (R(x^0)(y) + R(x^1)(y)) for all inputs —
  with r = p/((p+1)q).  For an arbitrary ε0-LDP randomizer this holds only with
  r = e^{-ε0}/2 (that is the clone bound, :mod:`.clones`), *not* with q = e^{ε0};
  so the "general" parameters of Table 5 (= the generic stronger-clone bound of
  FMT23a, which FMT23b restrict to a sub-class of randomizers) are **not** a valid
  generic bound.  For a specific finite randomizer we compute the largest valid r
  from its matrix (for k-RR it is 1/(e^{ε0}+1): the general parameters are valid
  for k-RR).
* g > 0: the printed formula (``separate_leftover=False``) is marked invalid.  The
  corrected statement implemented here (``separate_leftover=True``, spec-author
  derivation) keeps the victim's left-over as its own symbol of the general-clone
  histogram; outcomes where the victim is in Q_1 are identical under both
  hypotheses and contribute nothing, so δ = Σ_c w_c[(p-e^ε)α b_c(k1-1) +
  (1-e^ε)(p+1)α T_c(k1)] with the thresholds computed at g = 0.  It is valid for a
  pair whose *actual* TV is β (its monotonicity in β is not known, so it is only
  used with the exact per-pair β of a specific randomizer).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.numerics import binomial as B
from darrm.numerics.inversion import inverse_monotone

from .bound import Bound, eps_for_delta
from .randomizers import GenericLDP, RandomizedResponse, Randomizer, as_finite


@dataclass(frozen=True)
class VRParams:
    """(p, β, q) of Wang et al. §4 (p may be math.inf for multi-message protocols)."""

    p: float
    beta: float
    q: float

    def __post_init__(self) -> None:
        p, beta, q = float(self.p), float(self.beta), float(self.q)
        if math.isnan(p) or p <= 1:
            raise ParameterError("p", f"must be > 1 (or inf), got {p}")
        bmax = 1.0 if math.isinf(p) else (p - 1) / (p + 1)
        if math.isnan(beta) or beta < 0 or beta > bmax * (1 + 1e-12):
            raise ParameterError("beta", f"must lie in [0, (p-1)/(p+1)] = [0, {bmax}], got {beta}")
        if math.isnan(q) or q < 1 or math.isinf(q):
            raise ParameterError("q", f"must be a finite number >= 1, got {q}")
        object.__setattr__(self, "beta", min(beta, bmax))
        if 2 * self.r > 1 + 1e-12:
            raise ParameterError("q", f"clone probability 2r = {2 * self.r} > 1: q too small for β")

    @property
    def alpha(self) -> float:
        return 0.0 if math.isinf(self.p) else self.beta / (self.p - 1)

    @property
    def p_alpha(self) -> float:
        return self.beta if math.isinf(self.p) else self.p * self.beta / (self.p - 1)

    @property
    def g(self) -> float:
        if math.isinf(self.p):
            return 1.0 - self.beta
        return max(0.0, 1.0 - self.beta * (self.p + 1) / (self.p - 1))

    @property
    def r(self) -> float:
        return self.p_alpha / self.q

    @property
    def has_leftover(self) -> bool:
        return self.g > 1e-12


def general_params(eps0: float) -> VRParams:
    """Wang et al. Table 2 "general mechanisms": p = q = e^{ε0}, β = (e^{ε0}-1)/(e^{ε0}+1)."""
    p = math.exp(eps0)
    return VRParams(p, (p - 1) / (p + 1), p)


def vr_delta(eps: float, n: int, params: VRParams, *, separate_leftover: bool = False,
             kind: str = "upper", count_law: B.CountLaw | None = None) -> float:
    """δ(ε) = D_{e^ε}(P ‖ Q) of the variation-ratio pair (Thm 4.1/4.8, stable form).

    ``separate_leftover=True`` gives the corrected (general-clone) pair described in
    the module docstring; it coincides with the printed formula when g = 0.
    ``kind``: the sum over c is truncated to a window; its dropped mass times a bound on
    each term's magnitude is added (``"upper"``) or subtracted (``"lower"``, for a pair
    that is itself a post-processing of a real dataset pair, :func:`krr_count_lower_delta`).

    ``count_law`` (``kind="lower"`` only): C has this law instead of Bin(n − 1, 2r) (``n`` is then
    unused).  Proof of the general form: writing t = a + b for an output (a, b) and
    W(a, b) = P(C = t) C(t, a)/2^t, P(a, b) − e^ε Q(a, b) =
    C(t, a)/2^t [2 P(C = t−1)/t · α((p − e^ε) a + (1 − e^ε p) b) + g (1 − e^ε) P(C = t)], which is
    >= 0 iff a >= ℓ(t) = (α(e^ε p − 1) t + g (e^ε − 1) t ρ_t/2) / (α (p − 1)(1 + e^ε)),
    ρ_t = P(C = t)/P(C = t − 1) (for the binomial t ρ_t/2 = (n − t) r/(1 − 2r), the formula
    below); summing the slice t over a >= ⌈ℓ(t)⌉ gives the terms grouped by c = t − 1 (k1) and
    c = t (k0).  Every threshold gives Σ_{o in S} (P − e^ε Q)(o) <= the divergence for its set S
    of outputs, so thresholds from the approximate law stay valid.  P and Q are linear in the law
    of C through Markov kernels: with π = π_w + π_out
    (:class:`~darrm.numerics.binomial.CountLaw`), π_out adds >= 0 to P(S) and at most
    e^ε·dropped to e^ε Q(S), and |w − π_w| <= rel·w changes each c's contribution by at most
    rel·w_c·(its P-part + e^ε × its Q-part); both are subtracted, plus
    :data:`darrm.numerics.binomial.RHO` × 8 × the terms' magnitude for the Bin(c, 1/2) pmfs and
    tails and 2048 u per tail value for the recurrence of
    :func:`darrm.numerics.binomial.upper_tail_along` (re-anchored every 512 steps).
    """
    v.choice("kind", kind, ("upper", "lower"))
    if count_law is not None and kind != "lower":
        raise ParameterError("count_law", "a general law of C is supported for kind='lower' only")
    eps = v.epsilon("eps", eps, allow_zero=True)
    n = v.count("n", n)
    pr = params
    if pr.beta == 0.0:
        return 0.0
    p, beta = pr.p, pr.beta
    inf = math.isinf(p)
    if not inf and eps >= math.log(p):
        return 0.0
    ee = math.exp(eps)
    g = 0.0 if separate_leftover else pr.g
    two_r = min(1.0, 2.0 * pr.r)
    gk = 0.0 if (g == 0.0 or two_r >= 1.0) else g * pr.r / (1.0 - two_r)
    if inf:
        a1 = beta  # (p - e^ε) α
        a_sum = beta  # (p + 1) α
        num_coef = ee * beta  # (e^ε p - 1) α
    else:
        alpha = pr.alpha
        a1 = (p - ee) * alpha
        a_sum = (p + 1) * alpha
        num_coef = (ee * p - 1) * alpha
    den = beta * (ee + 1)
    if count_law is None:
        win = B.window_pmf(n - 1, two_r)
        c, w, dropped = win.c, win.w, win.dropped

        def ell(m: np.ndarray) -> np.ndarray:
            return (num_coef * m + (ee - 1) * gk * (n - m)) / den

        k1 = np.ceil(ell(c + 1)).astype(np.int64)
        k0 = np.ceil(ell(c)).astype(np.int64) if g > 0 else k1
    else:
        c, w = count_law.c, count_law.w
        k1, k0 = _law_thresholds(c, w, num_coef, (ee - 1) * g, den)
    pm = B.pmf_at(k1 - 1, c)
    tail1 = B.upper_tail_along(k1, c, pm)
    val = a1 * pm + (1 - ee) * a_sum * tail1
    if g > 0:
        tail0 = B.upper_tail_along(k0, c)
        val = val + (1 - ee) * g * tail0
    if count_law is not None:
        left = g * tail0 if g > 0 else 0.0
        mag = abs(a1) * pm + (ee - 1) * (a_sum * tail1 + left)
        p_alpha = pr.p_alpha
        alpha = p_alpha / p if not inf else 0.0
        # P-part + e^ε Q-part of each c: α(p + e^ε) pm + (1 + e^ε)((p + 1) α tail1 + g tail0)
        mag_pq = (p_alpha + ee * alpha) * pm + (1 + ee) * (a_sum * tail1 + left)
        # upper_tail_along's recurrence: absolute error <= ~chunk (512) roundings per tail value
        tail_abs = 2048 * float(np.finfo(float).eps) * (ee - 1) * (a_sum + g) * float(np.sum(w))
        charge = (ee * count_law.dropped + count_law.rel * float(np.dot(w, mag_pq))
                  + 8 * B.RHO * float(np.dot(w, mag)) + tail_abs)
        return min(1.0, max(0.0, float(np.dot(w, val)) - charge))
    # val_c mixes output slices of totals c and c+1, so single terms may be
    # negative; only the sum is a hockey-stick divergence (>= 0).
    if kind == "lower":
        term_max = abs(a1) + (ee - 1) * (a_sum + g)  # |val_c| <= this (pm, tails <= 1)
        return min(1.0, max(0.0, float(np.dot(w, val)) - dropped * term_max))
    delta = max(0.0, float(np.dot(w, val))) + dropped * pr.p_alpha
    return min(1.0, delta)


def _law_thresholds(c: np.ndarray, w: np.ndarray, num_coef: float, g_coef: float, den: float
                    ) -> tuple[np.ndarray, np.ndarray]:
    """⌈ℓ(t)⌉ of :func:`vr_delta`'s general form at t = c + 1 (k1) and t = c (k0), from the
    law's own ratios ρ_t = w(t)/w(t − 1) (0 outside the window: the slice c_lo has no clone
    term and gets an empty set, threshold c + 1; ρ past the window is 0)."""
    t = np.arange(int(c[0]), int(c[-1]) + 2, dtype=float)
    wt = np.concatenate((w, [0.0]))  # w(t), t = c_lo .. c_hi + 1
    wprev = np.concatenate(([0.0], w))  # w(t - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        half = np.where(wprev > 0, t * wt / (2 * np.where(wprev > 0, wprev, 1.0)), 0.0)
    ell = (num_coef * t + g_coef * half) / den
    thr = np.where(wprev > 0, np.ceil(np.minimum(ell, t + 1)), t + 1).astype(np.int64)
    return thr[1:], thr[:-1]


def krr_count_lower_delta(eps: float, n: int, eps0: float, k: int) -> float:
    """δ(ε) of the counts (N_x0, N_x1) of the dataset pair (x0 | x2, ..., x2) vs (x1 | x2, ..., x2)
    under k-RR, k >= 3 (Wang et al. Thm 5.1, ``amplificationLB``): a valid LOWER bound on the
    shuffled k-RR.

    Claim: with Wang et al.'s Table 2 GRR parameters p = q = e^{ε0}, β = (e^{ε0}-1)/(e^{ε0}+k-1),
    the pair (P, Q) of Thm 4.7 is the law of (N_x0, N_x1) in the shuffled histogram of that
    dataset pair, so D_{e^ε}(P ‖ Q) <= that pair's divergence <= the protocol's δ(ε); for
    k = 3 the counts determine the histogram and it is the pair's exact divergence.

    Proof: each other user (input x2) reports x0 and x1 with probability 1/(e^{ε0}+k-1) each,
    so C = N_x0 + N_x1 over them is Bin(n-1, 2r) with 2r = 2α = 2/(e^{ε0}+k-1) and the split
    is Bin(C, 1/2); the victim reports its own input with probability pα = e^{ε0}/(e^{ε0}+k-1),
    the other of {x0, x1} with probability α, and any other output with g = 1 - (p+1)α.  The
    counts are a post-processing of the histogram (data-processing inequality); both
    directions are equal by the symmetry x0 <-> x1.

    Args:
        eps: the ε of the hockey-stick divergence (>= 0).
        n: the number of users.
        eps0: the local budget of k-RR.
        k: the number of classes (>= 3: the filler input x2 must differ from x0 and x1).

    Returns:
        δ(ε) with the window truncation subtracted (a lower bound on the exact value).

    Raises:
        ParameterError: k < 3 or a parameter out of range.
    """
    k = v.count("k", k, minimum=3)
    return vr_delta(eps, n, grr_paper_params(eps0, k), kind="lower")


def vr_eps(
    delta: float,
    n: int,
    params: VRParams,
    *,
    T: int = 30,
    separate_leftover: bool = False,
    kind: str = "upper",
    eps_cap: float = 50.0,
) -> float:
    """Algorithm 1 (Wang et al.): bisection on [0, ln p] for ε(δ).

    Returns ε_H (valid upper end, a grid point k·ln p / 2^T, as in the paper) for
    ``kind="upper"`` and ε_L for ``kind="lower"``.  For p = ∞ the search interval is
    [0, h] with h doubled from 1 up to ``eps_cap``; an unreachable δ returns ∞.
    """
    delta = v.open_unit("delta", delta)
    f = lambda e: vr_delta(e, n, params, separate_leftover=separate_leftover)  # noqa: E731
    if math.isinf(params.p):
        hi = 1.0
        while f(hi) > delta:
            hi *= 2
            if hi > eps_cap:
                return math.inf
    else:
        hi = math.log(params.p)
    # Algorithm 1: fixed T halvings of [0, ln p], return ε_H (the paper does not
    # test δ(0) first, so the smallest output is ln(p)/2^T).
    return inverse_monotone(f, delta, 0.0, hi, increasing=False, side="certified" if kind == "upper" else "uncertified",
                            method="bisect", xtol=0.0, rtol=0.0, maxiter=T, check_ends=False)


# ---------------------------------------------------------------------------
# Per-randomizer parameters and Bound-returning front ends.

def _pair_params(m: np.ndarray, eps0: float) -> tuple[VRParams, list[VRParams]]:
    """(global g = 0 params, per-pair exact params) of a finite randomizer.

    Global: p = e^{ε0}, β = (p-1)/(p+1), q = p/((p+1) r*) with
    r* = min over x0 != x1, x, y of R(x)(y) / (R(x0)(y) + R(x1)(y)) (capped at 1/2).
    Per pair (x0, x1): p = max pointwise ratio, β = TV, q = max_{x, y}
    max(R(x0)(y), R(x1)(y)) / R(x)(y) (Lemma 4.4 with the pair's exact values).
    """
    p = math.exp(eps0)
    k = m.shape[0]
    col_min = m.min(axis=0)
    r_star = 0.5
    pairs: list[VRParams] = []
    for a in range(k):
        for b in range(a + 1, k):
            s = m[a] + m[b]
            r_star = min(r_star, float(np.min(col_min / s)))
            tv = 0.5 * float(np.abs(m[a] - m[b]).sum())
            if tv <= 1e-15:
                continue
            pp = float(max(np.max(m[a] / m[b]), np.max(m[b] / m[a])))
            pp = max(pp, 1 + 1e-12)
            qq = float(np.max(np.maximum(m[a], m[b]) / col_min))
            bmax = (pp - 1) / (pp + 1)
            pairs.append(VRParams(pp, min(tv, bmax), max(qq, 1.0)))
    q_glob = p / ((p + 1) * r_star)
    return VRParams(p, (p - 1) / (p + 1), q_glob), pairs


def _specific_delta_fn(randomizer: Randomizer, n: int):
    fin = as_finite(randomizer)
    assert fin is not None
    glob, pairs = _pair_params(fin.array, fin.eps0)
    if isinstance(randomizer, RandomizedResponse) or not SEPARATE_LEFTOVER_PAIRS:
        # Default: only the g = 0 general-clone pair (Su et al. Thm 4 with the randomizer's
        # own clone probability r*), whose proof is published.  The per-pair form with the
        # victim's left-over kept separate is an unreviewed derivation (module docstring),
        # checked only numerically at small n, so it is opt-in.  For k-RR it was never
        # smaller in our checks.
        pairs = []

    def f(eps: float) -> float:
        d_glob = vr_delta(eps, n, glob)
        worst = 0.0
        for pp in pairs:
            worst = max(worst, min(d_glob, vr_delta(eps, n, pp, separate_leftover=True)))
        return worst if pairs else d_glob

    return f, fin.eps0


#: the method's name in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "variation-ratio"
#: Wang et al.'s printed k-RR parameters (reproduction only; invalid for k >= 3)
PAPER_KRR_NAME = "variation-ratio-paper-krr"

#: Opt in to the per-pair "separate left-over" refinement for finite randomizers (not peer-reviewed).
SEPARATE_LEFTOVER_PAIRS = False

_GENERIC_NOTE = (
    "generic parameters p=q=e^eps0 (= FMT23a stronger clone): the reduction's "
    "post-processing is flawed (Su et al. §3.3; FMT23b restrict it to a sub-class), "
    "so this is not a valid bound for an arbitrary eps0-LDP randomizer; reproduces Table 5 only"
)
_SPECIFIC_NOTE = (
    "valid general-clone form (Su et al. Thm 4): g = 0 decomposition with the "
    "randomizer's own clone probability"
)


def delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    """Variation-ratio δ(ε) upper bound for ``randomizer`` (see module docstring)."""
    eps = v.epsilon("eps", eps, allow_zero=True)
    n = v.count("n", n)
    if isinstance(randomizer, GenericLDP):
        d = vr_delta(eps, n, general_params(randomizer.eps0))
        return Bound(NAME, "upper", False, eps, d, _GENERIC_NOTE)
    f, _ = _specific_delta_fn(randomizer, n)
    return Bound(NAME, "upper", True, eps, f(eps), _SPECIFIC_NOTE)


def eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    """Variation-ratio ε(δ) upper bound (root of δ(ε) = δ; the returned ε is checked
    to satisfy δ(ε) <= δ, like Algorithm 1's ε_H but without its 2^-T grid)."""
    delta = v.open_unit("delta", delta)
    n = v.count("n", n)
    if isinstance(randomizer, GenericLDP):
        pr = general_params(randomizer.eps0)
        e = eps_for_delta(lambda x: vr_delta(x, n, pr), delta, randomizer.eps0, "upper")
        return Bound(NAME, "upper", False, e, delta, _GENERIC_NOTE)
    f, eps0 = _specific_delta_fn(randomizer, n)
    e = eps_for_delta(f, delta, eps0, "upper")
    return Bound(NAME, "upper", True, e, delta, _SPECIFIC_NOTE)


def grr_paper_params(eps0: float, k: int) -> VRParams:
    """Wang et al. Table 2 GRR row: p = q = e^{ε0}, β = (e^{ε0}-1)/(e^{ε0}+k-1)."""
    p = math.exp(eps0)
    return VRParams(p, (p - 1) / (p + k - 1), p)


def paper_specific_eps_bound(randomizer: RandomizedResponse, n: int, delta: float) -> Bound:
    """The paper's k-RR-specific bound (Table 2 GRR β, printed Thm 4.1).

    Valid only for k = 2 (then g = 0); for k >= 3 g > 0 and the proof is the
    flawed stronger-clone post-processing (Su et al. §3.3): marked invalid.
    """
    params = grr_paper_params(randomizer.eps0, randomizer.k)
    e = eps_for_delta(lambda x: vr_delta(x, n, params), delta, randomizer.eps0, "upper")
    valid = not params.has_leftover
    note = "Wang et al. Table 2 GRR parameters" + (
        "" if valid else "; g > 0 so the proof relies on the flawed stronger-clone reduction (Su et al. §3.3)"
    )
    return Bound(PAPER_KRR_NAME, "upper", valid, e, delta, note)

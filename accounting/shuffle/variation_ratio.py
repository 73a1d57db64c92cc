"""Variation-ratio reduction (Wang et al., "Privacy Amplification via Shuffling:
Unified, Simplified, and Tightened", arXiv:2304.05007).

Core: the dominating pair of Theorem 4.7, P = (A+Δ1, C-A+Δ2) vs Q = (A+Δ2, C-A+Δ1)
with C ~ Bin(n-1, 2r), A|C ~ Bin(C, 1/2), (Δ1, Δ2) = (1,0) w.p. pα, (0,1) w.p. α,
(0,0) w.p. g; α = β/(p-1), g = 1-(p+1)α, r = αp/q.  :func:`vr_delta` evaluates
Theorem 4.1 = 4.8 in a numerically stable form (log space,
Wang et al. §4), with the sum over c truncated to a window, and rounds it up (upper bound) or
down (lower bound) by rigorous error terms (:func:`vr_sum`): the dropped mass, the window values'
relative error, scipy's pmf and tails, the roundings.

Real versus float parameters.  The floats (p, β, q) are roundings of the real randomizer's (p = e^{ε0}
is irrational for a float ε0, and math.exp may round it down).  The bound is for the REAL pair when
the parameters carry its box (:class:`RealPair`, attached by :func:`general_params`,
:func:`grr_paper_params`, :func:`_pair_params` and :func:`.clones.clone_params`): δ moves by at most
κ (:func:`_real_pair_charge`: P − e^ε Q is linear in the victim's masses (a1, a2, g) with
probability-measure coefficients) plus the law's move to the real clone rate, charged like the floats'
own 2r rounding over the interval of rates (:func:`_rate_interval`), and e^ε >= p by
:func:`_beyond_ratio`.  κ is absolute, of order (1 + e^ε)·u (u = 2^-53; <= 2.4e-15 measured for
ε0 <= 8): upper bounds below it are raised to it and lower bounds below it drop to 0.  A
:class:`VRParams` built by hand (``real=None``, e.g. the per-pair parameters and the multi-message
laws) is bounded for the pair of its floats read exactly.

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
from dataclasses import dataclass, field
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.numerics import binomial as B
from darrm.numerics.inversion import inverse_monotone

from .bound import Bound, eps_for_delta
from .randomizers import GenericLDP, RandomizedResponse, Randomizer, as_finite


@dataclass(frozen=True)
class RealPair:
    """Rational intervals holding the parameters of the REAL pair a float :class:`VRParams` stands for:
    the victim's masses a1 = pα (on (1, 0)), a2 = α (on (0, 1)), g (on (0, 0)) and the clone rate
    x = 2r of the others (C ~ Bin(n − 1, x)), each as (lo, hi).

    Why: the floats (p, β, q) are roundings of the real randomizer's parameters (p = e^{ε0} for a float
    ε0 is irrational), and :func:`vr_sum` bounds the divergence of the pair of the floats read exactly;
    with this attached it charges the move to any pair in the box (:func:`_real_pair_charge`).
    """

    a1: tuple[Fraction, Fraction]
    a2: tuple[Fraction, Fraction]
    g: tuple[Fraction, Fraction]
    x: tuple[Fraction, Fraction]

    @classmethod
    def no_leftover(cls, p: tuple[Fraction, Fraction], x: tuple[Fraction, Fraction]) -> "RealPair":
        """The g = 0 pair of a ratio p in [p_lo, p_hi] (a1 = p/(p + 1), a2 = 1/(p + 1), both monotone in
        p) with the clone rate in [x_lo, x_hi]."""
        lo, hi = p
        return cls((lo / (lo + 1), hi / (hi + 1)), (1 / (hi + 1), 1 / (lo + 1)), (Fraction(0), Fraction(0)), x)


def exp_enclosure(eps0: float) -> tuple[Fraction, Fraction]:
    """Rationals lo <= e^{ε0} <= hi for the float ε0 read exactly, 1e-45 apart relatively.

    Proof: ``Decimal(eps0)`` is exact and :meth:`decimal.Decimal.exp` is correctly rounded (Python's
    documentation) to 50 significant digits, i.e. within 1e-49 relatively; widened to 1e-45.
    """
    with localcontext() as ctx:
        ctx.prec = 50
        d = Fraction(Decimal(eps0).exp())
    tol = Fraction(1, 10**45)
    return d * (1 - tol), d * (1 + tol)


@dataclass(frozen=True)
class VRParams:
    """(p, β, q) of Wang et al. §4 (p may be math.inf for multi-message protocols).

    ``real``: where the floats stand for a real randomizer's pair (e.g. p = e^{ε0}), the box its
    parameters lie in (:class:`RealPair`); :func:`vr_sum` then bounds that pair's divergence.  Without
    it (None) the bound is for the pair of the floats (p, β, q) read exactly.
    """

    p: float
    beta: float
    q: float
    real: RealPair | None = field(default=None, repr=False)

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
    """Wang et al. Table 2 "general mechanisms": p = q = e^{ε0}, β = (e^{ε0}-1)/(e^{ε0}+1) (g = 0,
    2r = 2/(e^{ε0} + 1)), with the real pair of the real e^{ε0} attached (:class:`RealPair`)."""
    p = math.exp(eps0)
    lo, hi = exp_enclosure(eps0)
    real = RealPair.no_leftover((lo, hi), (2 / (hi + 1), 2 / (lo + 1)))
    return VRParams(p, (p - 1) / (p + 1), p, real)


def vr_delta(eps: float, n: int, params: VRParams, *, separate_leftover: bool = False,
             kind: str = "upper", count_law: B.CountLaw | None = None) -> float:
    """δ(ε) = D_{e^ε}(P ‖ Q) of the variation-ratio pair (Thm 4.1/4.8, stable form), rounded up
    (``kind="upper"``) or down (``kind="lower"``, for a pair that is itself a post-processing of a
    real dataset pair, :func:`krr_count_lower_delta`) by the error bounds of :class:`VRSum`.

    ``separate_leftover=True`` gives the corrected (general-clone) pair described in
    the module docstring; it coincides with the printed formula when g = 0.
    ``count_law`` (``kind="lower"`` only): C has this law instead of Bin(n − 1, 2r) (``n`` is then
    unused); see :func:`vr_sum`.  With ``params.real`` set the bound is for the real pair in that box
    (module docstring), otherwise for the pair of the floats (p, β, q) read exactly.
    """
    v.choice("kind", kind, ("upper", "lower"))
    if count_law is not None and kind != "lower":
        raise ParameterError("count_law", "a general law of C is supported for kind='lower' only")
    eps = v.epsilon("eps", eps, allow_zero=True)
    n = v.count("n", n)
    s = vr_sum(eps, n, params, separate_leftover=separate_leftover, count_law=count_law)
    return s.lower() if kind == "lower" else s.upper()


@dataclass(frozen=True)
class VRSum:
    """The computed sum of :func:`vr_sum` and its error bounds: the divergence lies in
    [``value`` − ``err`` − ``out_lower``, ``value`` + ``err`` + ``out_upper``].

    Attributes:
        value: Σ_c w_c val_c as computed (no error term).
        err: the bound on |Σ_{c in window} π_c V_c − value|: the law's relative error on the window,
            scipy's pmf and tails, the tail recurrence and the roundings (the same for both kinds).
        out_lower: what the mass outside the window can take away (e^ε × dropped).
        out_upper: what it can add (pα × dropped) plus, for the binomial law, what the rounding of
            the thresholds can hide (:func:`_threshold_charge`).
    """

    value: float
    err: float
    out_lower: float
    out_upper: float

    def upper(self) -> float:
        """The value rounded up: an upper bound on δ(ε) (in [0, 1])."""
        return min(1.0, max(0.0, self.value + self.err + self.out_upper))

    def lower(self) -> float:
        """The value rounded down: a lower bound on δ(ε) (in [0, 1])."""
        return min(1.0, max(0.0, self.value - self.err - self.out_lower))


def vr_sum(eps: float, n: int, params: VRParams, *, separate_leftover: bool = False,
           count_law: B.CountLaw | None = None) -> VRSum:
    """The sum over c of the stable form of Thm 4.1/4.8 with its error bounds (:class:`VRSum`).

    C ~ Bin(n − 1, 2r) (``count_law=None``: :func:`darrm.numerics.binomial.window_pmf`, a
    :class:`~darrm.numerics.binomial.CountLaw`) or C ~ ``count_law``; both go through the same
    error accounting below.

    Proof of the general form: writing t = a + b for an output (a, b) and
    W(a, b) = P(C = t) C(t, a)/2^t, P(a, b) − e^ε Q(a, b) =
    C(t, a)/2^t [2 P(C = t−1)/t · α((p − e^ε) a + (1 − e^ε p) b) + g (1 − e^ε) P(C = t)]
    = C(t, a)/2^t · 2 P(C = t−1)/t · β(1 + e^ε)(a − ℓ(t)), which is
    >= 0 iff a >= ℓ(t) = (α(e^ε p − 1) t + g (e^ε − 1) t ρ_t/2) / (α (p − 1)(1 + e^ε)),
    ρ_t = P(C = t)/P(C = t − 1) (for the binomial t ρ_t/2 = (n − t) r/(1 − 2r); for 2r = 1, C = n − 1
    and the slice t = n − 1 has only the left-over part, ≤ 0: its set is empty); summing the slice t
    over a >= ⌈ℓ(t)⌉ gives the terms grouped by c = t − 1 (k1) and c = t (k0): val_c below.
    Every threshold gives Σ_{o in S} (P − e^ε Q)(o) <= the divergence for its set S of outputs, so
    thresholds from an approximate law stay valid for the lower bound; the upper bound uses the
    binomial's exact ratio and charges the thresholds' rounding (:func:`_threshold_charge`).

    Errors.  P and Q are linear in the law of C through Markov kernels: with π = π_w + π_out
    (the CountLaw), π_out adds >= 0 to P(S) and at most e^ε·dropped to e^ε Q(S) (``out_lower``),
    and at most dropped × TV(P_c, Q_c) <= dropped·β <= dropped·pα to the divergence
    (``out_upper``; P_c, Q_c the pair given C = c, which differ only in the victim's (Δ1, Δ2)).
    On the window, |w − π_w| <= rel·w changes Σ_c π_c V_c by at most rel·Σ_c w_c |V_c|, and
    |V_c| <= |val_c| + err_c, where err_c bounds |val_c − V_c| for the computed val_c (the same
    thresholds): scipy's Bin(c, 1/2) pmf (relative :data:`darrm.numerics.binomial.RHO`, plus
    :data:`~darrm.numerics.binomial.TINY`), the tails' own error bounds
    (:func:`darrm.numerics.binomial.upper_tail_along_bounds`: scipy's survival function and the
    recurrence between its anchors) and 10u × the P- plus e^ε × Q-part of c (mag_pq_c) for the
    roundings of the coefficients (each within a few u of its P- and Q-parts; u the unit roundoff);
    the dot product of L terms adds (L + 1)u Σ_c w_c |val_c|.  ``err`` is the sum of these, times
    1.01.  For the binomial law, the floats' own rounding: 2r's (measured exactly in rationals,
    :func:`_rate_rounding`) joins rel and dropped, and g's, dg, moves the left-over part
    (1 − e^ε) g π_c T_c(k0_c) by at most dg (e^ε − 1) π_c × a bound on T_c(k0_c)
    (:func:`_leftover_tail_bound`).  With ``params.real`` (:class:`RealPair`) the real pair is
    charged too: κ of :func:`_real_pair_charge` joins ``err``, the rates of :func:`_rate_interval` (the
    floats' exact 2r and the box's) replace the single exact rate in the law's and the thresholds'
    charges, and for e^ε >= p (the floats' pair then has δ = 0) ``err`` is :func:`_beyond_ratio`.
    """
    pr = params
    if pr.beta == 0.0:
        return VRSum(0.0, 0.0, 0.0, 0.0)
    p = pr.p
    inf = math.isinf(p)
    if not inf and eps >= math.log(p):
        return VRSum(0.0, _beyond_ratio(pr, eps), 0.0, 0.0)
    co = _coefficients(eps, pr, separate_leftover)
    ee, em1, g, two_r, a1, a_sum, den = co.ee, co.em1, co.g, co.two_r, co.a1, co.a_sum, co.den
    if count_law is None:
        law = B.window_pmf(n - 1, two_r)
        c = law.c
        ell = _binomial_ell(c + 1, n, co)  # ℓ(t) at t = c + 1
        ell0 = _binomial_ell(c, n, co)  # ℓ(t) at t = c
        k1 = np.ceil(ell).astype(np.int64)
        if g == 0:
            k0 = k1
        elif two_r >= 1.0:
            k0 = c + 1  # C = n − 1: the slice t = n − 1 holds the left-over part only (<= 0): empty
        else:
            k0 = np.ceil(ell0).astype(np.int64)
        x, dg = _param_rounding(pr, g, separate_leftover)
        xs = _rate_interval(pr, x)
        grow, dropped = _rate_rounding(n - 1, two_r, xs, law)
        rel = law.rel + grow + law.rel * grow
    else:
        law = count_law
        c = law.c
        k1, k0 = _law_thresholds(c, law.w, co.num_coef, em1 * g, den)
        rel, dropped, dg = law.rel, law.dropped, 0.0
    w = law.w
    pm = B.pmf_at(k1 - 1, c)
    tail1, e1 = B.upper_tail_along_bounds(k1, c, pm)
    val = a1 * pm + (1 - ee) * a_sum * tail1
    left: np.ndarray | float = 0.0
    e_left: np.ndarray | float = 0.0
    tail0 = e0 = None
    if g > 0:
        tail0, e0 = B.upper_tail_along_bounds(k0, c)
        val = val + (1 - ee) * g * tail0
        left, e_left = g * tail0, g * e0
    # val_c mixes output slices of totals c and c+1, so single terms may be
    # negative; only the sum is a hockey-stick divergence (>= 0).
    value = float(np.dot(w, val))
    p_alpha = pr.p_alpha
    alpha_ = p_alpha / p if not inf else 0.0
    u = float(np.finfo(float).eps) / 2
    # P-part + e^ε Q-part of each c: α(p + e^ε) pm + (1 + e^ε)((p + 1) α tail1 + g tail0)
    mag_pq = (p_alpha + ee * alpha_) * pm + (1 + ee) * (a_sum * tail1 + left)
    # |computed val_c − exact V_c|: scipy's pmf, the tails' bounds, the coefficients' roundings
    err_c = abs(a1) * (B.RHO * pm + B.TINY) + (ee - 1) * (a_sum * e1 + e_left) + 10 * u * mag_pq
    abs_val = np.abs(val)
    # the law's relative error (on |V_c| <= |val_c| + err_c), the dot product's roundings, g's rounding
    err = 1.01 * (float(np.dot(w, err_c)) + rel * float(np.dot(w, abs_val + err_c))
                  + (len(w) + 1) * u * float(np.dot(w, abs_val)))
    if dg > 0:
        t0_bound = _leftover_tail_bound(g, k1, pm, tail1, e1, tail0, e0)
        err += 1.01 * dg * (ee - 1) * (1 + rel) * float(np.dot(w, t0_bound))
    if pr.real is not None:
        err += _real_pair_charge(pr, ee, separate_leftover)
    out_upper = dropped * p_alpha
    if count_law is None:
        # slices t = c + 1 (P(C = t − 1) = π_c <= w_c (1 + rel), or <= 2 TINY where window_pmf set an
        # underflowing value to 0) and t = c_lo (P(C = c_lo − 1) <= dropped)
        t = np.concatenate(([float(c[0])], c + 1.0))
        ell_t = np.concatenate(([ell0[0]], ell))
        pi_prev = np.concatenate(([dropped], w * (1 + rel) + 2 * B.TINY))
        if g == 0 or two_r >= 1.0:  # the slice t = c_lo has no left-over threshold in use
            t, ell_t, pi_prev = t[1:], ell_t[1:], pi_prev[1:]
        eta = _ell_error(t, ell_t, n, co, xs, dg)
        out_upper += _threshold_charge(t, ell_t, eta, pi_prev, den)
    return VRSum(value, err, ee * dropped, out_upper)


class _Coefficients(NamedTuple):
    """The floats :func:`vr_sum` computes from (ε, p, β, q)."""

    ee: float  # e^ε
    em1: float  # e^ε − 1 (expm1)
    g: float  # the left-over probability in use (0 with it kept separate)
    two_r: float  # 2r, capped at 1
    gk: float  # g r/(1 − 2r) (0 for g = 0 or 2r = 1)
    a1: float  # (p − e^ε) α
    a_sum: float  # (p + 1) α
    num_coef: float  # (e^ε p − 1) α
    den: float  # β (1 + e^ε) = α (p − 1)(1 + e^ε)


def _coefficients(eps: float, pr: VRParams, separate_leftover: bool) -> _Coefficients:
    ee, em1 = math.exp(eps), math.expm1(eps)
    g = 0.0 if separate_leftover else pr.g
    two_r = min(1.0, 2.0 * pr.r)
    gk = 0.0 if (g == 0.0 or two_r >= 1.0) else g * pr.r / (1.0 - two_r)
    beta = pr.beta
    if math.isinf(pr.p):
        a1 = a_sum = beta
        num_coef = ee * beta
    else:
        p, alpha = pr.p, pr.alpha
        a1, a_sum = (p - ee) * alpha, (p + 1) * alpha
        num_coef = (em1 * p + (p - 1)) * alpha  # (e^ε p − 1) α as a sum of non-negative terms
    return _Coefficients(ee, em1, g, two_r, gk, a1, a_sum, num_coef, beta * (ee + 1))


def _binomial_ell(t: np.ndarray, n: int, co: _Coefficients) -> np.ndarray:
    """ℓ(t) of :func:`vr_sum` for C ~ Bin(n − 1, 2r): (N t + (e^ε − 1) g r/(1 − 2r)(n − t))/D."""
    return (co.num_coef * t + co.em1 * co.gk * (n - t)) / co.den


def _ell_error(t: np.ndarray, ell: np.ndarray, n: int, co: _Coefficients, xs: tuple[Fraction, Fraction],
               dg: float) -> np.ndarray:
    """η_t >= |ℓ̃(t) − ℓ(t)|: a forward error bound of :func:`_binomial_ell` against ℓ(t) of the exact
    pair of the floats (p, β, q) with its law C ~ Bin(n − 1, x) for any rate x in ``xs`` (the exact
    2r of the floats and, with :attr:`VRParams.real`, the real pair's; :func:`_rate_interval`), g
    within ``dg`` of the one in use.

    Proof: ℓ̃(t) = (Ñ t + G̃ (n − t))/D̃ with G̃ = expm1(ε)·gk.  Ñ = (expm1(ε) p + (p − 1))·β/(p − 1)
    (or e^ε β for p = ∞) is a sum of non-negative terms within 8u of the exact N = (e^ε p − 1)α
    (u the unit roundoff; exp and expm1 within 2u); D̃ = β(e^ε + 1) within 4u; gk = g r/(1 − 2r)
    within |ρ/ρ̃ − 1| (ρ = x/(2(1 − x)), x = 2r; computed exactly from rationals, so it holds however
    close x is to 1; ρ is monotone in x, so the largest over the interval ``xs`` is at an end) plus 7u
    for its own operations and expm1, plus ``dg``·ρ for g's; the final
    products, sum and quotient add 4u of ℓ̃.  The u-level terms to first order, hence the factor 1.1.
    """
    u = float(np.finfo(float).eps) / 2
    gterm: np.ndarray | float = 0.0
    if (co.gk > 0 or dg > 0) and co.two_r < 1.0:
        xf = Fraction(co.two_r)
        if xs[1] >= 1:
            raise ParameterError("q", f"the clone probability 2r rounds to {co.two_r} < 1 but is >= 1")
        # ρ = x/(2(1 − x)) of the exact rate against that of the float: |ρ/ρ̃ − 1|, exactly, at both ends
        rate_rel = max(float(abs(x * (1 - xf) / (xf * (1 - x)) - 1)) for x in xs) * 1.01
        rho = 0.5 * co.two_r / (1.0 - co.two_r) * (1 + rate_rel) * (1 + 4 * u)
        gterm = (n - t) * co.em1 * (co.gk * (rate_rel + 7 * u) + dg * rho)
    return 1.1 * ((8 * u * co.num_coef * t + gterm) / co.den + 8 * u * np.abs(ell))


def _leftover_tail_bound(g: float, k1: np.ndarray, pm: np.ndarray, tail1: np.ndarray, e1: np.ndarray,
                         tail0: np.ndarray | None, e0: np.ndarray | None) -> np.ndarray:
    """Upper bounds on the left-over tails T_c(k0_c) of :func:`vr_sum`'s set, for g's rounding.

    With g > 0 they are computed (plus their error bounds).  With g = 0 in use the slice t = c has the
    threshold k1_{c−1} = ⌈ℓ̃(c)⌉ >= k1_c − 1 when the path steps by at most one, so
    T_c(k0_c) <= T_c(k1_c − 1) = T_c(k1_c) + P(Bin(c, 1/2) = k1_c − 1), i.e. tail1 + pm and their
    errors; 1 for the first c (its previous threshold is not computed) or a path with larger steps.
    """
    if tail0 is not None and e0 is not None and g > 0:
        return tail0 + e0
    if k1.size > 1 and np.any(np.diff(k1) > 1):
        return np.ones(k1.size)
    out = np.minimum(1.0, tail1 + e1 + pm * (1 + B.RHO) + B.TINY)
    out[0] = 1.0
    return out


def _param_rounding(pr: VRParams, g_used: float, separate_leftover: bool) -> tuple[Fraction, float]:
    """The exact clone probability 2r = 2pα/q (capped at 1) of the pair given by the floats (p, β, q)
    and the rounding |g_used − g| of its left-over g = 1 − (p + 1)α (0 with the left-over kept
    separate: the pair then has no left-over part), from rationals (a float is one)."""
    beta, q = Fraction(pr.beta), Fraction(pr.q)
    if math.isinf(pr.p):
        x, g = 2 * beta / q, 1 - beta
    else:
        p = Fraction(pr.p)
        alpha = beta / (p - 1)
        x, g = 2 * p * alpha / q, 1 - (p + 1) * alpha
    return min(Fraction(1), x), 0.0 if separate_leftover else float(abs(Fraction(g_used) - g)) * 1.01


def _beyond_ratio(pr: VRParams, eps: float) -> float:
    """δ(ε) of the real pair (:attr:`VRParams.real`; 0 without it) for e^ε >= the floats' p.

    Proof: the real pair has g >= 0, and P − e^ε Q = (a1 − e^ε a2) M1 + (a2 − e^ε a1) M2
    + g (1 − e^ε) M0 (:func:`_real_pair_charge`), whose last two coefficients are <= 0 (a1 >= a2), so
    δ <= max(0, a1 − e^ε a2) <= max(0, a1_hi − e^ε_lo a2_lo): 0 unless the real ratio exceeds e^ε,
    which a rounding of p can only make a few u."""
    if pr.real is None:
        return 0.0
    gap = pr.real.a1[1] - exp_enclosure(eps)[0] * pr.real.a2[0]
    return float(max(Fraction(0), gap)) * 1.01


def _rate_interval(pr: VRParams, x: Fraction) -> tuple[Fraction, Fraction]:
    """The rates the law of C must be charged for: the exact 2r = ``x`` of the floats and, with
    :attr:`VRParams.real`, every rate of the real pair (the hull, capped at 1)."""
    if pr.real is None:
        return x, x
    lo, hi = pr.real.x
    return min(x, lo), min(Fraction(1), max(x, hi))


def _real_pair_charge(pr: VRParams, ee: float, separate_leftover: bool) -> float:
    """κ: how far the divergence of the real pair (any point of :attr:`VRParams.real`) can lie from that
    of the pair of the floats (p, β, q) read exactly, with the same law of C (the law's move to the real
    rate is charged by :func:`_rate_rounding` and :func:`_ell_error` over :func:`_rate_interval`).

    Proof: given C = c, the victim adds (1, 0), (0, 1) or (0, 0) to (A, C − A), with laws M1_c, M2_c,
    M0_c (probability measures), so P − e^ε Q = Σ_c π_c [(a1 − e^ε a2) M1_c + (a2 − e^ε a1) M2_c
    + g (1 − e^ε) M0_c] is linear in (a1, a2, g).  For every set S the move changes (P − e^ε Q)(S) by at
    most (1 + e^ε)(|Δa1| + |Δa2|) + (e^ε − 1)|Δg| (each M(S) in [0, 1], Σ π_c = 1), hence also the
    supremum over S (δ) and, for a fixed S, the lower bound's (P − e^ε Q)(S).  With the left-over kept
    separate the (0, 0) outputs are equal under both hypotheses and g does not enter.  The Δ's are the
    largest distances from the floats' exact a1 = pβ/(p − 1), a2 = β/(p − 1), g = 1 − a1 − a2 (a1 = β,
    a2 = 0 for p = ∞) to the box's ends, in rationals; 1.01 covers the float e^ε (within 2u) and the
    final roundings.
    """
    real = pr.real
    assert real is not None
    beta = Fraction(pr.beta)
    if math.isinf(pr.p):
        a1, a2 = beta, Fraction(0)
    else:
        a2 = beta / (Fraction(pr.p) - 1)
        a1 = Fraction(pr.p) * a2
    g = 1 - a1 - a2

    def dist(v: Fraction, box: tuple[Fraction, Fraction]) -> float:
        return float(max(abs(box[0] - v), abs(box[1] - v)))

    d1, d2 = dist(a1, real.a1), dist(a2, real.a2)
    dg = 0.0 if separate_leftover else dist(g, real.g)
    return 1.01 * ((1 + ee) * (d1 + d2) + (ee - 1) * dg)


def _rate_rounding(N: int, x_used: float, xs: tuple[Fraction, Fraction], law: B.CountLaw) -> tuple[float, float]:
    """(extra relative error on the window, bound on the mass outside it) when Bin(N, x_used) on the
    window of ``law`` stands for Bin(N, x), x any rate in ``xs`` = (lo, hi) (:func:`_rate_interval`).

    Proof: d log P(C = c)/dx = (c − N x)/(x (1 − x)), so with x_lo, x_hi the extreme rates (x_used,
    ``xs``'s ends) and Δx the largest distance from x_used to an end of ``xs``,
    |log P_x(c) − log P_{x_used}(c)| <= |Δx| (|c − N x_used| + N |Δx|)/(x_lo (1 − x_hi)) = s_c, largest
    on the window at an end; the mass outside is 1 − Σ_window P_x <= dropped + Σ_window P_{x_used}·
    (e^{s} − 1) <= dropped + e^{s} − 1, and also <= dropped·e^{s'} with s' the bound for every
    c (|c − N x_used| <= N).  For x_used = 1 and x < 1 the window is the atom N:
    P_x(N) = x^N >= 1 − N (1 − x) >= 1 − N (1 − lo), and the rest lies outside.
    """
    xu = Fraction(x_used)
    dx = max(abs(xu - xs[0]), abs(xu - xs[1]))
    if dx == 0 or N == 0:
        return 0.0, law.dropped
    if x_used >= 1.0:
        s = float(N * (1 - xs[0])) * 1.01
        return s, law.dropped + s
    lo, hi = min(xu, xs[0]), max(xu, xs[1])
    if lo <= 0 or hi >= 1:
        raise ParameterError("q", f"the clone probability 2r = {x_used} is too close to 0 or 1 to bound its rounding")
    scale = dx / (lo * (1 - hi))
    edge = max(abs(float(law.c[0]) - N * x_used), abs(float(law.c[-1]) - N * x_used)) + 1.0
    grow = math.expm1(float(scale * (Fraction(edge) + N * dx)) * 1.01) * 1.01
    s_all = float(scale * (N + N * dx)) * 1.01  # |c − N x_used| <= N for every c
    return grow, min(law.dropped * math.exp(min(s_all, 700.0)), law.dropped + grow)


def _threshold_charge(t: np.ndarray, ell: np.ndarray, eta: np.ndarray, pi_prev: np.ndarray, den: float) -> float:
    """What the rounding of the thresholds ⌈ℓ(t)⌉ can hide from the upper bound of :func:`vr_sum`.

    The upper bound needs the optimal set S* = {a >= ℓ(t)} in every slice t; the computed set
    S = {a >= ⌈ℓ̃(t)⌉} differs from it only at the points a between ℓ̃(t) and ℓ(t), within
    η_t >= |ℓ̃(t) − ℓ(t)| (:func:`_ell_error`) of ℓ̃(t), and there |(P − e^ε Q)(a, t − a)| =
    C(t, a)/2^t · 2P(C = t−1)/t · β(1 + e^ε)|a − ℓ(t)| <= C(t, a)/2^t · 2P(C = t−1)/t · den·2η_t (proof of
    :func:`vr_sum`; den within 4u of β(1 + e^ε), covered by the factor 2), so
    δ <= (P − e^ε Q)(S) + Σ_t (that summed over the band).  The band's Σ_a C(t, a)/2^t is at most its
    size times the pmf at its point nearest t/2 (the mode).  ``pi_prev`` bounds P(C = t − 1).
    """
    a_lo = np.maximum(0.0, np.ceil(ell - eta))
    a_hi = np.minimum(t, np.floor(ell + eta))
    band = (a_hi >= a_lo) & (pi_prev > 0) & (t >= 1)
    if not np.any(band):
        return 0.0
    tb, lo, hi = t[band], a_lo[band], a_hi[band]
    near = np.clip(tb / 2, lo, hi)  # the band point nearest the mode of Bin(t, 1/2): its largest pmf
    near = np.where(np.abs(np.floor(near) - tb / 2) <= np.abs(np.ceil(near) - tb / 2), np.floor(near), np.ceil(near))
    near = np.clip(near, lo, hi)
    mass = np.minimum(1.0, (hi - lo + 1) * (B.pmf_at(near, tb) * (1 + B.RHO) + B.TINY))
    charge = 2 * pi_prev[band] / tb * den * 2 * eta[band] * mass
    return float(np.sum(charge)) * (1 + 1e-6)


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
        δ(ε) rounded down by :func:`vr_sum`'s error terms (a lower bound on the exact value).

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

def _pair_params(m: np.ndarray, eps0: float, krr: bool = False) -> VRParams:
    """The global g = 0 params of a finite randomizer.

    p = e^{ε0}, β = (p-1)/(p+1), q = p/((p+1) r*) with
    r* = min over x0 != x1, x, y of R(x)(y) / (R(x0)(y) + R(x1)(y)) (capped at 1/2), with the real
    pair attached (:class:`RealPair`, g = 0; the divergence is non-decreasing in p, so any p >= the
    largest ratio R_max of a column is valid, and we take R_max itself).  ``krr``: m is the float
    matrix of k-RR at ε0, whose real R_max = e^{ε0} and r* = 1/(e^{ε0} + 1) (for k = 2 and k >= 3 alike)
    enclose through :func:`exp_enclosure`.  Otherwise m (floats) is the randomizer itself: each
    computed column ratio fl(max/min) and quotient fl(min/fl(a + b)) is within (1 ± u)/(1 ∓ u) of its
    exact value, so R_max lies within 2u and r* within 3u (relatively) of the computed ones.

    Only this pair is used: a per-pair refinement that keeps the victim's left-over as its own symbol
    (``vr_delta(..., separate_leftover=True)`` with each pair's own p, TV and q) is an unreviewed
    derivation, checked only numerically at small n, and was never smaller for k-RR in our checks.
    """
    p = math.exp(eps0)
    k = m.shape[0]
    col_min = m.min(axis=0)
    r_star = 0.5
    for a in range(k):
        for b in range(a + 1, k):
            r_star = min(r_star, float(np.min(col_min / (m[a] + m[b]))))
    q_glob = p / ((p + 1) * r_star)
    u = Fraction(1, 2**53)
    if krr:
        lo, hi = exp_enclosure(eps0)
        real = RealPair.no_leftover((lo, hi), (2 / (hi + 1), 2 / (lo + 1)))
    else:
        ratio = Fraction(float(np.max(m.max(axis=0) / col_min)))
        rs = Fraction(r_star)
        real = RealPair.no_leftover((ratio * (1 - 2 * u), ratio * (1 + 2 * u)),
                                    (2 * rs * (1 - 3 * u), min(Fraction(1), 2 * rs * (1 + 3 * u))))
    return VRParams(p, (p - 1) / (p + 1), q_glob, real)


def _randomizer_params(randomizer: Randomizer) -> tuple[VRParams, float]:
    """:func:`_pair_params` of a specific randomizer and its ε0; k-RR's real pair is that of its own
    ε0 (its float matrix's log-ratio may differ from it by a rounding)."""
    fin = as_finite(randomizer)
    assert fin is not None
    if isinstance(randomizer, RandomizedResponse):
        return _pair_params(fin.array, randomizer.eps0, krr=True), randomizer.eps0
    return _pair_params(fin.array, fin.eps0), fin.eps0


def _specific_delta_fn(randomizer: Randomizer, n: int):
    """δ(ε) of the g = 0 general-clone pair (Su et al. Thm 4 with the randomizer's own clone
    probability r*), whose proof is published, and the randomizer's ε0."""
    glob, eps0 = _randomizer_params(randomizer)
    return (lambda eps: vr_delta(eps, n, glob)), eps0


#: the method's name in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "variation-ratio"
#: Wang et al.'s printed k-RR parameters (reproduction only; invalid for k >= 3)
PAPER_KRR_NAME = "variation-ratio-paper-krr"

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
    """Wang et al. Table 2 GRR row: p = q = e^{ε0}, β = (e^{ε0}-1)/(e^{ε0}+k-1), with the real pair of
    k-RR at the real e^{ε0} attached: a1 = p/(p + k − 1), a2 = 1/(p + k − 1), g = (k − 2)/(p + k − 1),
    2r = 2/(p + k − 1), each monotone in p, so p's enclosure gives their intervals."""
    p = math.exp(eps0)
    lo, hi = exp_enclosure(eps0)
    m_lo, m_hi = lo + k - 1, hi + k - 1
    real = RealPair((lo / m_lo, hi / m_hi), (1 / m_hi, 1 / m_lo), ((k - 2) / m_hi, (k - 2) / m_lo),
                    (2 / m_hi, 2 / m_lo))
    return VRParams(p, (p - 1) / (p + k - 1), p, real)


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

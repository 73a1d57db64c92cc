"""The privacy condition, evaluated in float64 with a rigorous verdict.

DaRRM_γ is (ε_tot, δ)-DP iff for every admissible configuration, both outputs o and both
directions,

    Pr[A(D) = o] − e^{ε_tot}·Pr[A(D′) = o] − δ ≤ 0                      (Lemma 3.4, Eq. 1)

(ε_tot = mε for shared members, the target ε for disjoint ones).  The certificates compute
the two probabilities in float64, so the verdict must survive rounding.  This module holds
the one rule every certificate uses.

**How the probabilities are computed.**  Every certificate computes Pr[A = 1] = Σ_l α_l w_l
and Pr[A = 0] = Σ_l α_l w_{K−l} (γ symmetric: Pr[A = 0 | L = l] = w_{K−l} *exactly*) from
non-negative numbers only: binomial pmfs by the recurrence Bin(n) = (q, p) ⊛ Bin(n−1) with
the complement q = 1 − p of each corner given in closed form (:func:`darrm.privacy.corners.complements`),
convolutions and dot products of non-negative vectors.  Nothing is ever subtracted before the
final comparison, in particular Pr[A = 0] is never formed as 1 − Pr[A = 1] (that
cancellation, multiplied by e^{mε}, is what made the old tolerance grow with e^{mε}).

**Forward-error bound.**  For non-negative data the textbook bounds hold in any summation
order (Higham, *Accuracy and Stability of Numerical Algorithms*, §3.1 and §3.5):
a sum or dot product of n terms has relative error ≤ γ_n = nu/(1−nu), u = 2⁻⁵³, and a
product of perturbed factors has the sum of their relative errors (to first order).  A
binomial pmf entry of degree n built by the recurrence carries ≤ 2n roundings and n corner
factors, each corner within 7u of its exact value (exp, log1p accurate to 1 ulp: IEEE-754
round-to-nearest, a conventional non-Strassen matrix product, which numpy's BLAS and torch's
float64 kernels are); the tables of :mod:`darrm.privacy.sweep` and the disjoint certificate add two
convolutions/dot products of ≤ K+1 terms and the weights w (3u).  The total, for
every probability P of a K-member configuration, is

    |P̂ − P| ≤ ρ·P + η,   ρ = RHO_FACTOR·(K + 2)·u,   η = 4·(K + 2)³·2⁻¹⁰⁷⁴ + 8·(K + 2)·τ

(the derivation gives 13K + 7 ≤ 16(K + 2) roundings, :data:`RHO_FACTOR` = 16; the first term of
η bounds what gradual underflow can lose, the second what :func:`flush_tiny` drops: the
sweeps set table entries below τ = :data:`FLUSH_BELOW` = 2⁻⁵⁰⁰ to zero, so that no product of
two entries is subnormal (subnormal arithmetic is ~100× slower on x86 and K = 1001 tables are
full of binomial tails); each of at most four truncated levels (a pmf row, a table built from
it) loses < τ per term of a sum of ≤ K + 2 terms whose other factors are ≤ 1 (to first order),
and nothing else changes.  τ is absolute and ~1e-151: 8(K+2)τ ≈ 2e-147 at K = 101, far below
any margin a repair or a δ leaves).  Disjoint certificates also add the mass their windows leave out.

**The verdict.**  Then the exact violation is ≤ 0 whenever the float64 value

    v̂ = P̂_a − e_c·P̂_b − δ_c + η·(1 + 2e^{ε_tot})

is ≤ 0, where e_c ≤ e^{ε_tot}·(1−ρ)/(1+ρ) and δ_c ≤ δ·(1−ρ) are shrunk by a further 8u
(that slack absorbs the rounding of the comparison itself; the sign of a float64 sum is
exact).  Proof: P_a ≤ (P̂_a + η)/(1−ρ) and P_b ≥ (P̂_b − η)/(1+ρ), so
P_a − e P_b − δ ≤ (1−ρ)⁻¹·[P̂_a − e(1−ρ)/(1+ρ)·P̂_b − (1−ρ)δ + η(1+e)] ≤ (1−ρ)⁻¹·v̂.
A table is *certified* iff the largest v̂ over every configuration, output and direction
is ≤ 0; there is no tolerance to widen.  When v̂ > 0 the exact violation is ≤ v̂/(1−ρ).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

#: unit roundoff of float64
UNIT_ROUNDOFF = 2.0**-53
#: ρ = RHO_FACTOR·(K+2)·u (module docstring: 13K + 7 ≤ 16(K + 2) roundings derived)
RHO_FACTOR = 16.0
_TINY = 2.0**-1074  # smallest subnormal
#: τ: the sweeps' tables hold no entry in (0, τ) (:func:`flush_tiny`; accounted for in η)
FLUSH_BELOW = 2.0**-500
#: A repair aims REPAIR_MARGIN_ULPS·√(K+2)·u below zero: between the evaluation before a repair
#: and the one after, v̂ moves by its actual rounding (typically ~√K·u, the worst case ρ is far
#: rarer); if the next certificate still fails, :func:`darrm.privacy.certify.certify_and_repair` repairs
#: again from the new value.  (Aiming ρ below zero would cost ~ρ/rhs of objective for nothing.)
REPAIR_MARGIN_ULPS = 64.0


def relative_error_bound(K: int) -> float:
    """ρ(K): relative forward-error bound of every output probability of a K-member
    configuration as the certificates compute it (module docstring)."""
    return RHO_FACTOR * (K + 2) * UNIT_ROUNDOFF


@dataclass(frozen=True)
class Check:
    """Constants of the rigorous float64 test v̂ = P_a − e·P_b − δ + slack ≤ 0.

    e: e_c ≤ e^{ε_tot}(1−ρ)/(1+ρ); delta: δ_c ≤ δ(1−ρ); slack: η(1 + 2e^{ε_tot});
    rho: ρ(K); exp_eps: e^{ε_tot} itself (for repairs and reports); margin: how far below 0 a
    repair aims (:func:`repair_factor`).
    """

    e: float
    delta: float
    slack: float
    rho: float
    exp_eps: float
    margin: float = 0.0

    @property
    def rhs(self) -> float:
        """2·(−v̂ at γ ≡ 0) = e_c − 1 + 2δ_c − 2·slack: the room a repair can scale into.

        With γ ≡ 0 both probabilities are ½, so v̂(0) = ½ − ½e_c − δ_c + slack."""
        return (self.e - 1.0) + 2.0 * self.delta - 2.0 * self.slack


def check(eps_total: float, delta: float, K: int) -> Check:
    """The rigorous test's constants for an (ε_tot, δ) claim about K-member configurations."""
    rho = relative_error_bound(K)
    e_hat = math.exp(eps_total)
    # exp is accurate to 1 ulp and ε_tot may itself be a rounded product (m·ε): shrink
    # by (|ε_tot| + 2)·2u, then by (1−ρ)/(1+ρ) and 8u for the comparison's own rounding
    e_low = e_hat * (1.0 - (abs(eps_total) + 2.0) * 2.0 * UNIT_ROUNDOFF)
    e_c = e_low * (1.0 - rho) / (1.0 + rho) * (1.0 - 8.0 * UNIT_ROUNDOFF)
    d_c = float(delta) * (1.0 - rho) * (1.0 - 8.0 * UNIT_ROUNDOFF)
    eta = 4.0 * float(K + 2) ** 3 * _TINY + 8.0 * float(K + 2) * FLUSH_BELOW
    slack = 2.0 * eta * (1.0 + 2.0 * e_hat)
    margin = REPAIR_MARGIN_ULPS * math.sqrt(K + 2) * UNIT_ROUNDOFF + 4.0 * slack
    return Check(e=e_c, delta=d_c, slack=slack, rho=rho, exp_eps=e_hat, margin=margin)


def normalised_check(checks: list[Check], K: int) -> Check:
    """The test that one repair factor scales with when configuration groups owe different targets.

    A certificate over groups g with their own tests ``checks[g]`` reports group g's bound v̂_g in
    units of its own room, ṽ_g = 2·v̂_g / rhs_g.  Each v̂_g(s·γ) = −rhs_g/2 + s·(v̂_g(γ) + rhs_g/2)
    (:func:`repair_factor`), so ṽ_g(s·γ) = −1 + s·(ṽ_g + 1): the returned Check has rhs 2 (e = 3,
    no δ, no slack) and the margin max_g 2·m_g / rhs_g, so that one factor (1 − M)/(1 + max_g ṽ_g)
    puts every group at or below its own margin.  ``exp_eps`` is the largest e^{ε_g} (reports)."""
    margin = max(2.0 * c.margin / c.rhs for c in checks)
    return Check(e=3.0, delta=0.0, slack=0.0, rho=relative_error_bound(K),
                 exp_eps=max(c.exp_eps for c in checks), margin=margin)


class GroupTargets:
    """Per-group targets (ε_g, δ_g) of a release (mixed into :class:`darrm.ShardGroupParams` and
    :class:`darrm.WeightedShardParams`): the normalised test, its rows' right-hand side and the
    budget an accountant may compose.  The class provides ``groups`` (items with ``target_eps`` and
    ``target_delta``), ``K`` and ``check_for(g)``, group g's own :class:`Check`."""

    if TYPE_CHECKING:
        groups: tuple[Any, ...]

        @property
        def K(self) -> int: ...

        def check_for(self, g: int) -> Check: ...

    @property
    def check(self) -> Check:
        """The *normalised* test that :func:`darrm.privacy.certify.repair` scales with
        (:func:`normalised_check` of every group's :meth:`check_for`)."""
        return normalised_check([self.check_for(i) for i in range(len(self.groups))], self.K)

    @property
    def rhs(self) -> float:
        """Right-hand side of the normalised LP rows: 1 (each group's folded row divided by its rhs)."""
        return 1.0

    @property
    def query_budget(self) -> tuple[float, float]:
        """(max_g ε_g, max_g δ_g): one release is (ε_g, δ_g)-DP for the records of group g, so it is
        this pair for every record (the weakest guarantee, the one an accountant may compose)."""
        return max(g.target_eps for g in self.groups), max(g.target_delta for g in self.groups)

    @property
    def exp_eps(self) -> float:
        """e^{max_g ε_g}."""
        return math.exp(self.query_budget[0])


def flush_tiny(a: np.ndarray) -> np.ndarray:
    """Set the entries of a non-negative table below :data:`FLUSH_BELOW` to 0, in place; returns it.

    Then every product of two entries is ≥ 2⁻¹⁰⁰⁰ or 0, never subnormal.  What is dropped is
    part of η in :func:`check` (module docstring), so certificates stay rigorous."""
    a[a < FLUSH_BELOW] = 0.0
    return a


def folded_rows(alpha: np.ndarray, alpha_p: np.ndarray, exp_meps: float) -> np.ndarray:
    """Lemma 3.4 in row form, for the LP: rows (N, (K+1)/2) over x = γ(mid..K) with
    row·x ≤ e^{mε} − 1 + 2δ (:func:`rhs`) iff the four inequalities (two outputs, two
    directions) hold at that configuration (α, α′); (row·x − rhs)/2 is the violation of
    output 1, D → D′.  Exact-constant floats: the LP's rows, not the certificate's verdict."""
    K = alpha.shape[1] - 1
    mid = (K + 1) // 2
    up = alpha[:, mid:] - exp_meps * alpha_p[:, mid:]
    # index K−l for l = mid..K is (K−mid)..0, i.e. the lower half reversed
    low = exp_meps * alpha_p[:, : K + 1 - mid][:, ::-1] - alpha[:, : K + 1 - mid][:, ::-1]
    return up + low


def rhs(eps_total: float, delta: float) -> float:
    """Right-hand side of the folded rows (Lemma 3.4, Eq. 1): e^{ε_tot} − 1 + 2δ."""
    return math.expm1(eps_total) + 2.0 * float(delta)


def pair_violation(pa, pb, chk: Check, xp=np):
    """v̂ for both directions of one output: max(P_a − e·P_b, P_b − e·P_a) − δ + slack,
    elementwise; ``pa``/``pb`` are Pr[A(D)=o], Pr[A(D′)=o]; ``xp`` is numpy or torch.  (Numpy
    arrays of one shape: the same operations in the same order, in two buffers.)"""
    if xp is np and isinstance(pa, np.ndarray) and isinstance(pb, np.ndarray) and pa.shape == pb.shape:
        t = np.multiply(pb, chk.e)
        np.subtract(pa, t, out=t)
        u = np.multiply(pa, chk.e)
        np.subtract(pb, u, out=u)
        np.maximum(t, u, out=t)
        t -= chk.delta
        t += chk.slack
        return t
    return xp.maximum(pa - chk.e * pb, pb - chk.e * pa) - chk.delta + chk.slack


def pair_violation_extremes(pa, pb_min, pb_max, chk: Check, xp=np):
    """max over b ∈ [pb_min, pb_max] of :func:`pair_violation` (pa, b), bit for bit, when pb_min
    and pb_max are values the other probability actually takes (the sweep's running extremes).

    IEEE-754 rounding is monotone, so fl(pa − fl(e·b)) is non-increasing and fl(b − fl(e·pa))
    non-decreasing in b; the max, − δ and + slack are monotone too.  So the largest v̂ over a set
    of b values is attained at its minimum (first term) or its maximum (second term), computed
    with exactly the operations of :func:`pair_violation`."""
    return xp.maximum(pa - chk.e * pb_min, pb_max - chk.e * pa) - chk.delta + chk.slack


def violation(pa, pb, chk: Check):
    """v̂ of one direction: P_a − e·P_b − δ + slack (elementwise)."""
    return pa - chk.e * pb - chk.delta + chk.slack


def repair_factor(chk: Check, worst: float) -> float:
    """Scale s ∈ [0, 1) for γ → s·γ after which the largest v̂ is about −margin < 0.

    Both probabilities are ½ + s(P − ½) (Algorithm 1: Pr[A = 1 | L] = ½ + γ(L)(1{L ≥ mid} − ½)),
    so every v̂ is affine in s with the same value −rhs/2 at s = 0 (:attr:`Check.rhs`), and
    v̂(sγ) = −rhs/2 + s·(v̂(γ) + rhs/2) is increasing in v̂(γ): the factor that puts the worst
    configuration at −margin puts every other one below it.  The margin leaves room for the
    rounding of the next evaluation; 0 is returned when there is no room at all.
    """
    margin = chk.margin
    rhs = chk.rhs
    if not rhs > 2.0 * margin:
        return 0.0
    s = (rhs - 2.0 * margin) / (rhs + 2.0 * max(float(worst), 0.0))
    return float(np.nextafter(min(s, 1.0), 0.0))

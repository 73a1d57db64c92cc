"""One round of shuffled randomised-response votes: its exact central privacy.

K members each hold a bit (any function of their own data) and report it through
ε0-randomised response: the true bit with probability q = e^{ε0}/(e^{ε0}+1), the other
with r = 1 − q.  A shuffler hides who sent what, so the aggregator sees only the count
L of reported ones.  Neighbouring data sets change one member (the "victim"); the
others' bits are the same under D and D′.

**Exact privacy profile.**  With the victim at input 1 (D) or 0 (D′) and n1 of the
other K−1 members at input 1,

    L_D = B_q + X,   L_D′ = B_r + X,   X ~ Bin(n1, q) ⊕ Bin(K−1−n1, r),

and the mechanism is (ε, δ)-DP iff δ ≥ δ(ε) := max_{n1} max(H_{e^ε}(L_D‖L_D′), H_{e^ε}(L_D′‖L_D)),
H_{e^ε}(P‖P′) = Σ_l (P_l − e^ε P′_l)_+ (hockey-stick divergence).  No other data set
pair is worse: a member's input is a bit, so its report probability is r or q — the
others enter X only through n1 (permutation invariance), and a victim with a
randomised bit is a mixture, which cannot increase H (H(P‖P′) = sup_S P(S) − e^εP′(S)
is affine in each member's probability, so the vertex argument of
:mod:`darrm.models.disjoint` applies).  Anything computed from L — the majority, DaRRM's
γ(L), the histogram itself — is post-processing, so at most that private.

Neighbouring relation: one member's data changes (``REPLACE_ONE``, the relation of
shuffling; :data:`NEIGHBORING_RELATION`).

Numerics: the law of X comes from :func:`darrm.numerics.binomial.others_pmfs` (windowed
binomial recurrences, direct convolution); a bound on the mass left out (≤ ~4e-30) is added to
δ(ε), so the reported δ(ε) is never below the exact value by more than float64 rounding
of the sums (relative ~1e-15).  ε(δ) is found by
:func:`darrm.numerics.inversion.inverse_monotone` (bisection) and the *upper* end (the
safe one) is returned, within 1e-12 of the exact value; it is ≤ ε0 because the victim's
report alone is ε0-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from darrm import validation as v
from darrm.neighboring import NeighboringRelation
from darrm.numerics.binomial import OthersPmfs, others_pmfs
from darrm.numerics.inversion import inverse_monotone

from ..shuffle.best import best_upper_bound
from ..shuffle.randomizers import RandomizedResponse

EPS_TOL = 1e-12

#: one member's data is replaced by another's (what a shuffler protects)
NEIGHBORING_RELATION = NeighboringRelation.REPLACE_ONE


@dataclass(frozen=True)
class ShuffledBinaryRR:
    """K members, ε0-randomised response, shuffled: the aggregator sees only the count L.

    Attributes:
        K: the number of members (voters).
        eps0: each vote's randomised-response ε0 (> 0).
    """

    K: int
    eps0: float
    neighboring_relation = NEIGHBORING_RELATION

    def __post_init__(self) -> None:
        object.__setattr__(self, "K", v.count("K", self.K))
        object.__setattr__(self, "eps0", v.epsilon("eps0", self.eps0))

    @property
    def q(self) -> float:
        """e^{ε0}/(1 + e^{ε0}): the probability that RR reports the member's bit."""
        return float(expit(self.eps0))

    @property
    def r(self) -> float:
        """1/(1 + e^{ε0}) = 1 − q: the probability that RR flips the bit."""
        return float(expit(-self.eps0))

    @cached_property
    def others(self) -> OthersPmfs:
        """Pmfs of the count of the K − 1 other members' RR reports, per number of them voting 1."""
        return others_pmfs(self.K - 1, self.r, self.q)

    @cached_property
    def _shifted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat (X_{l−1}, X_l) over l ∈ [offset, offset+len] for every n1, and block starts."""
        o = self.others
        ends = np.append(o.starts[1:], o.values.size)
        prev, cur, starts = [], [], []
        size = 0
        for a, b in zip(o.starts, ends, strict=True):
            x = o.values[a:b]
            prev.append(np.concatenate(([0.0], x)))
            cur.append(np.concatenate((x, [0.0])))
            starts.append(size)
            size += x.size + 1
        return np.concatenate(prev), np.concatenate(cur), np.array(starts)

    def delta_per_n1(self, eps: float) -> np.ndarray:
        """Hockey-stick H_{e^ε} for each n1 ∈ {0..K−1}, both directions, plus the bound on the truncated mass.

        Args:
            eps: ε ≥ 0.

        Returns:
            A (K, 2) array: per n1, the directions (D‖D′) and (D′‖D).
        """
        eps = v.epsilon("eps", eps, allow_zero=True)
        e = math.exp(min(eps, 700.0))
        q, r = self.q, self.r
        prev, cur, starts = self._shifted
        out = np.empty((self.K, 2))
        for j, (c1, c0) in enumerate(((q - e * r, r - e * q), (r - e * q, q - e * r))):
            out[:, j] = np.add.reduceat(np.maximum(c1 * prev + c0 * cur, 0.0), starts)
        return out + self.others.dropped[:, None]

    def delta(self, eps: float) -> float:
        """Exact δ(ε) of the shuffled count (worst data set pair), clipped to [0, 1].

        Args:
            eps: ε ≥ 0.

        Returns:
            δ(ε).
        """
        return float(min(1.0, self.delta_per_n1(eps).max()))

    def worst_n1(self, eps: float) -> int:
        """The number of other members at input 1 attaining δ(ε).

        Args:
            eps: ε ≥ 0.

        Returns:
            n1.
        """
        return int(np.unravel_index(int(np.argmax(self.delta_per_n1(eps))), (self.K, 2))[0])

    def epsilon(self, delta: float) -> float:
        """Smallest ε (to within 1e-12, rounded up) with δ(ε) ≤ ``delta``; at most ε0.

        Args:
            delta: the target δ, in [0, 1).

        Returns:
            ε.
        """
        delta = v.half_open_unit("delta", delta)
        if self.delta(0.0) <= delta:
            return 0.0
        # δ(ε0) = 0 (the victim's own report is ε0-DP), exactly, though the computed δ(ε0)
        # carries the ~1e-30 bound on the truncated mass: ε0 is the certified end by proof
        return inverse_monotone(self.delta, delta, 0.0, self.eps0, increasing=False, method="bisect",
                                xtol=EPS_TOL, rtol=EPS_TOL, check_ends=False)


def per_query_epsilon(K: int, eps0: float, delta: float, classes: int = 2) -> tuple[float, str]:
    """(ε, method) of one round for target δ: exact for binary RR (``classes`` = 2); for
    k-ary RR the best *valid* upper bound of :func:`darrm.accounting.shuffle.best_upper_bound`."""
    classes = v.count("classes", classes, minimum=2)
    if classes == 2:
        return ShuffledBinaryRR(K, eps0).epsilon(delta), "exact"
    b = best_upper_bound(RandomizedResponse(eps0, classes), K, delta=delta)
    return min(b.eps, v.epsilon("eps0", eps0)), b.method  # the victim's report alone is ε0-DP



"""Exact central privacy of shuffled binary randomised-response votes (issue 8, part 3).

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
:mod:`darrm.disjoint` applies).  Anything computed from L — the majority, DaRRM's
γ(L), the histogram itself — is post-processing, so at most that private.

Numerics: the law of X comes from :func:`darrm.numerics.binomial.others_pmfs` (log-space
binomials, direct convolution); a bound on the mass left out (≤ ~4e-30) is added to
δ(ε), so the reported δ(ε) is never below the exact value by more than float64 rounding
of the sums (relative ~1e-15).  ε(δ) is found by bisection and the *upper* end (the
safe one) is returned, within 1e-12 of the exact value; it is ≤ ε0 because the victim's
report alone is ε0-DP.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.special import expit

from darrm.accounting import composition
from darrm import validation as v
from darrm.errors import ParameterError
from darrm.numerics.binomial import OthersPmfs, others_pmfs

EPS_TOL = 1e-12


@dataclass(frozen=True)
class ShuffledBinaryRR:
    """K members, ε0-randomised response, shuffled: the aggregator sees only the count L."""

    K: int
    eps0: float

    def __post_init__(self) -> None:
        if isinstance(self.K, bool) or not isinstance(self.K, (int, np.integer)) or self.K < 1:
            raise ParameterError("K", f"must be an integer >= 1, got {self.K!r}")
        e0 = v.positive("eps0", self.eps0)
        if e0 > 700.0:
            raise ParameterError("eps0", f"must be <= 700, got {self.eps0!r}")
        object.__setattr__(self, "K", int(self.K))
        object.__setattr__(self, "eps0", e0)

    @property
    def q(self) -> float:
        return float(expit(self.eps0))

    @property
    def r(self) -> float:
        return float(expit(-self.eps0))

    @cached_property
    def others(self) -> OthersPmfs:
        return others_pmfs(self.K - 1, self.r, self.q)

    @cached_property
    def _shifted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Flat (X_{l−1}, X_l) over l ∈ [offset, offset+len] for every n1, and block starts."""
        o = self.others
        ends = np.append(o.starts[1:], o.values.size)
        prev, cur, starts = [], [], []
        size = 0
        for a, b in zip(o.starts, ends):
            x = o.values[a:b]
            prev.append(np.concatenate(([0.0], x)))
            cur.append(np.concatenate((x, [0.0])))
            starts.append(size)
            size += x.size + 1
        return np.concatenate(prev), np.concatenate(cur), np.array(starts)

    def delta_per_n1(self, eps: float) -> np.ndarray:
        """(K, 2): hockey-stick H_{e^ε} for each n1 ∈ {0..K−1}, directions (D‖D′), (D′‖D),
        plus the bound on the truncated mass."""
        eps = v.non_negative("eps", eps)
        e = math.exp(min(eps, 700.0))
        q, r = self.q, self.r
        prev, cur, starts = self._shifted
        out = np.empty((self.K, 2))
        for j, (c1, c0) in enumerate(((q - e * r, r - e * q), (r - e * q, q - e * r))):
            out[:, j] = np.add.reduceat(np.maximum(c1 * prev + c0 * cur, 0.0), starts)
        return out + self.others.dropped[:, None]

    def delta(self, eps: float) -> float:
        """Exact δ(ε) of the shuffled count (worst data set pair), clipped to [0, 1]."""
        return float(min(1.0, self.delta_per_n1(eps).max()))

    def worst_n1(self, eps: float) -> int:
        """The number of other members at input 1 attaining δ(ε)."""
        return int(np.unravel_index(int(np.argmax(self.delta_per_n1(eps))), (self.K, 2))[0])

    def epsilon(self, delta: float) -> float:
        """Smallest ε (to within 1e-12, rounded up) with δ(ε) ≤ ``delta``; at most ε0."""
        delta = v.half_open_unit("delta", delta)
        if self.delta(0.0) <= delta:
            return 0.0
        lo, hi = 0.0, self.eps0  # δ(ε0) = 0: the victim's own report is ε0-DP
        while hi - lo > EPS_TOL * max(1.0, hi):
            mid = 0.5 * (lo + hi)
            if self.delta(mid) <= delta:
                hi = mid
            else:
                lo = mid
        return hi


@dataclass(frozen=True)
class VotesGuarantee:
    """Central guarantee of Q rounds of shuffled ε0-RR votes from K members.

    ``eps_total`` composes the count's own privacy-loss distribution
    (:mod:`darrm.accounting.shuffled_votes_pld`, valid for adaptive queries); ``eps_total_generic``
    composes the per-query (ε, δ) (:func:`compose_queries`), both at ``delta_total``.
    """

    K: int
    eps0: float
    queries: int
    eps_query: float
    delta_query: float
    eps_total: float
    delta_total: float
    worst_n1: int
    eps_total_generic: float

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def compose_queries(eps: float, delta: float, queries: int, delta_prime: float) -> tuple[float, float]:
    """Q-fold composition of an (ε, δ)-DP query: exact optimal composition
    (:func:`darrm.accounting.composition.optimal_homogeneous_epsilon`) at
    δ_total = 1 − (1−δ)^Q(1−δ′); Q = 1 returns (ε, δ) unchanged.

    Valid for any (ε, δ)-DP query but loose for the shuffled count: prefer
    :func:`tight_total_epsilon`, which composes the count's privacy-loss distribution."""
    queries = v.count("queries", queries)
    if queries == 1:
        return eps, delta
    delta_prime = v.open_unit("delta_prime", delta_prime)
    delta_total = -math.expm1(queries * math.log1p(-delta) + math.log1p(-delta_prime))
    if eps == 0.0:  # Q-fold composition of (0, δ)-DP is (0, 1−(1−δ)^Q)-DP
        return 0.0, delta_total
    return composition.optimal_homogeneous_epsilon(eps, delta, queries, delta_total), delta_total


def tight_total_epsilon(K: int, eps0: float, queries: int, delta_total: float) -> float:
    """ε of Q (adaptive) rounds of shuffled binary ε0-RR votes at total δ: exact per-query ε for
    Q = 1, else the composed dominating PLD (:func:`darrm.accounting.shuffled_votes_pld.composed_epsilon`)."""
    queries = v.count("queries", queries)
    if queries == 1:
        return ShuffledBinaryRR(K, eps0).epsilon(delta_total)
    from darrm.accounting.shuffled_votes_pld import composed_epsilon

    return composed_epsilon(K, eps0, queries, delta_total)


def shuffled_votes_guarantee(
    K: int, eps0: float, delta: float, queries: int = 1, delta_prime: float | None = None
) -> VotesGuarantee:
    """Per-query exact (ε, δ) of the shuffled count and its Q-fold total at
    δ_total = 1 − (1−δ)^Q(1−δ′) (δ′ defaults to δ): tight (PLD) and generic (per-query) composition."""
    m = ShuffledBinaryRR(K, eps0)
    delta = v.open_unit("delta", delta)
    eq = m.epsilon(delta)
    eg, dt = compose_queries(eq, delta, queries, delta if delta_prime is None else delta_prime)
    et = eq if queries == 1 else min(eg, tight_total_epsilon(m.K, m.eps0, queries, dt))
    return VotesGuarantee(m.K, m.eps0, int(queries), eq, delta, et, dt, m.worst_n1(eq), eg)


def per_query_epsilon(K: int, eps0: float, delta: float, k: int = 2) -> tuple[float, str]:
    """(ε, method) of one round for target δ: exact for binary RR (k = 2); for k-ary RR the
    best *valid* upper bound of :func:`darrm.accounting.shuffle.best.best_upper_bound`."""
    k = v.count("k", k, minimum=2)
    if k == 2:
        return ShuffledBinaryRR(K, eps0).epsilon(delta), "exact"
    from darrm.accounting.shuffle.best import best_upper_bound
    from darrm.accounting.shuffle.randomizers import RandomizedResponse

    b = best_upper_bound(RandomizedResponse(eps0, k), K, delta=delta)
    return min(b.eps, v.positive("eps0", eps0)), b.method  # the victim's report alone is ε0-DP


def largest_eps0(
    K: int, target_eps: float, target_delta: float, queries: int = 1, *, k: int = 2, eps0_max: float = 50.0,
    rel_tol: float = 1e-9,
) -> float:
    """Largest ε0 (to within ``rel_tol`` relative, rounded down) for which Q rounds of shuffled
    ε0-k-RR votes from K members are (target_eps, target_delta)-DP.

    Binary votes (k = 2): the total is :func:`tight_total_epsilon` at δ = target_delta (exact
    for Q = 1, composed dominating PLD for Q > 1).  k-ary votes: per-query ε from
    :func:`per_query_epsilon` composed by :func:`compose_queries` with δ′ = target_delta/2 and
    per-query δ_q such that 1 − (1−δ_q)^Q(1−δ′) = target_delta.  Privacy only decreases with ε0
    (RR with a smaller ε0 is a post-processing of each report), so bisection applies; the
    returned ε0 is checked to satisfy the target.
    """
    target_eps = v.positive("target_eps", target_eps)
    target_delta = v.open_unit("target_delta", target_delta)
    queries = v.count("queries", queries)
    k = v.count("k", k, minimum=2)
    if queries == 1:
        dq, dprime = target_delta, target_delta
    else:
        dprime = target_delta / 2.0
        dq = -math.expm1((math.log1p(-target_delta) - math.log1p(-dprime)) / queries)

    def ok(e0: float) -> bool:
        if k == 2:
            return tight_total_epsilon(K, e0, queries, target_delta) <= target_eps
        eq, _ = per_query_epsilon(K, e0, dq, k)
        return compose_queries(eq, dq, queries, dprime)[0] <= target_eps

    x = min(target_eps, eps0_max)
    if ok(x):  # grow: ε0 ≤ target ε is enough when Q = 1 (post-processing)
        lo, hi = x, 2.0 * x
        while hi < eps0_max and ok(hi):
            lo, hi = hi, 2.0 * hi
        hi = min(hi, eps0_max)
        if ok(hi):
            return hi
    else:  # shrink (Q > 1)
        lo, hi = x / 2.0, x
        while not ok(lo):
            if lo < 1e-9:
                raise ParameterError("target_eps", f"no ε0 >= 1e-9 reaches ({target_eps}, {target_delta}) over {queries} queries")
            lo, hi = lo / 2.0, lo
    while hi - lo > rel_tol * max(1.0, hi):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if ok(mid) else (lo, mid)
    return lo

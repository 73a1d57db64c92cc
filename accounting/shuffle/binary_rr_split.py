"""The exact curve of one split of shuffled binary RR from FFT-free count tails (large n).

For n users, j of the n-1 others holding 1 and m = n-1-j holding 0, the count of the others'
1-reports is Y_j = Bin(j, p) + Bin(m, 1-p), and (:mod:`.binary_rr_exact`, proof (iii))

    H_j(ε) = max_{s0} [TP(s0) - e^ε TQ(s0)],   ε_j(δ) = max_{s0} ln((TP(s0) - δ)/TQ(s0)),
    TP(s0) = p F̄(s0-1) + (1-p) F̄(s0),   TQ(s0) = (1-p) F̄(s0-1) + p F̄(s0),   F̄(s) = P(Y_j ≥ s).

Here F̄ and the pmf y(s) = P(Y_j = s) come from :class:`darrm.numerics.binomial_sum.CountTails` as certified
intervals (relative error ~1e-9, no FFT), at a few s0 only.  Which s0?

Claim (localisation).  Write inc(s) = TP(s) - e^ε TQ(s) - (TP(s+1) - e^ε TQ(s+1))
= α y(s-1) - β y(s) with α = p - e^ε(1-p), β = e^ε p - (1-p) > 0.  If α > 0, inc(a) ≤ 0 and
inc(b) ≥ 0 for some a < b, then max_{s0} [TP(s0) - e^ε TQ(s0)] is attained in [a+1, b].
Proof.  Y_j is log-concave with contiguous support, so y(s-1)/y(s) is non-decreasing on the
support and inc(s) ≤ 0 ⟺ y(s-1)/y(s) ≤ β/α: the sign of inc is - up to some s and + after
(outside the support inc = -β y(0) < 0 at s = 0, α y(n'-1) > 0 at s = n', 0 elsewhere).
So inc(s) ≤ 0 for every s ≤ a and inc(s) ≥ 0 for every s ≥ b; the value at s0 ≤ a is that at
a+1 plus the increments inc(s0..a) ≤ 0, the value at s0 > b that at b minus inc(b..s0-1) ≥ 0. ∎

Upper bound on ε_j(δ): with s* the (numerically) best s0, take [s_a, s_b] ∋ s*,
e^{ε_c} = max_{s0 ∈ [s_a, s_b]} (TP⁺ - δ)/TQ⁻ (⁺/⁻: the upper/lower ends of the intervals,
log rounded up) and certify inc(s_a - 1) ≤ 0 and inc(s_b) ≥ 0 at ε_c with interval
arithmetic.  Then every s0 in [s_a, s_b] has TP - e^{ε_c} TQ ≤ δ, and by the claim so has every
other s0: H_j(ε_c) ≤ δ, i.e. ε_j(δ) ≤ ε_c.  If the check fails, [s_a, s_b] is widened; if it
still fails, ε0 is returned (the protocol is ε0-DP; never seen).  Lower bound: any s0 gives
ε_j(δ) ≥ ln((TP⁻ - δ)/TQ⁺), rounded down.  δ(ε) alike: the crossing of inc is located, certified,
and the upper bound is max over [s_a, s_b] of TP⁺ - e^ε TQ⁻ (lower: TP⁻ - e^ε TQ⁺ at any s0).

Every split of n users (blocks).  Write H_j(n) for the divergence of split j with n users.
Claim: H_j(n) ≤ H_{j-1}(n-1) (j ≥ 1) and H_j(n) ≤ H_j(n-1) (j ≤ n-2).
Proof: take one of the others holding 1 (resp. 0) out: Y_j = W + B_p (resp. W + B_{1-p}) with
W the count of the remaining n-2 others, independent of that user's report.  So P_j and Q_j are
the same mixture, with weights p and 1-p (resp. 1-p and p), of the laws of W + 1 + B_p vs
W + 1 + B_{1-p} and of W + B_p vs W + B_{1-p}; the hockey-stick divergence is jointly convex and
invariant under a shift, so H_j(n) is at most that of W + B_p vs W + B_{1-p}, the pair of n-1
users with j-1 (resp. j) others holding 1.  ∎
Hence on a block of splits j ∈ [j0, j0 + g), H_j(n) ≤ H_{j0}(n - g + 1) (take j - j0 one-holders
and g-1-(j-j0) zero-holders out); :func:`coin_pair_anchor` keeps part of those g - 1 users.  The
upper bound is the maximum over blocks covering 0..n-1 of their anchors' bounds
(:func:`blocks_eps_upper`, :func:`blocks_delta_upper`), blocks being cut finer where that can
lower the maximum (:func:`_refined_max`); the lower bound the maximum over some splits of n users
(:func:`lower_scan`: real dataset pairs).  Each block costs one split, O(sqrt(min(j, m))) work.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats

from darrm.numerics.binomial import RHO
from darrm.numerics.binomial_sum import CountTails

_U = float(np.finfo(float).eps) / 2
#: s0 is searched in [mean - 2, mean + _K_T·sd + _K_T²] (the argmax lies above the mode for ε ≥ 0)
_K_T = 12.0
#: widenings of [s_a, s_b] tried before giving up
_WIDEN = 6
#: half-width of the s0 range searched around a neighbouring split's argmax
_NARROW = 48
#: the search's fixed cost, in table entries (≈ 1 ms)
_CELLS_PER_SPLIT = 30_000


def _p(eps0: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps0))


class Split:
    """Certified tails of Y_j for n users, split j, over the s0 range where the argmax can be."""

    def __init__(self, n: int, j: int, eps0: float, tol: float, offset: float | None = None) -> None:
        self.n, self.j, self.p = n, j, _p(eps0)
        p = self.p
        m = n - 1 - j
        self.mean = j * p + m * (1 - p)
        sd = math.sqrt(max(n - 1, 1) * p * (1 - p))
        if offset is None:  # every s0 where the argmax can be
            self.lo = max(-1, math.floor(self.mean) - 2)
            self.hi = min(n + 1, math.ceil(self.mean + _K_T * sd + _K_T**2))
        else:  # a narrow range around mean + offset (a neighbouring split's argmax)
            c = round(self.mean + offset)
            self.lo, self.hi = max(-1, c - _NARROW), min(n + 1, c + _NARROW)
        self.narrow = offset is not None
        small = (j, p, m, 1 - p) if j <= m else (m, 1 - p, j, p)
        # t from lo - 2 (pmf at s_a - 2) to hi + 1
        self.ct = CountTails(small[0], small[1], small[2], small[3], self.lo - 2, self.hi + 1, tol)
        #: work done (table entries, plus a fixed charge for the search)
        self.cells = len(self.ct.px) + len(self.ct.sv) + _CELLS_PER_SPLIT

    def tp_tq(self, s0: np.ndarray, side: str) -> tuple[np.ndarray, np.ndarray]:
        """(TP, TQ) at s0: upper TP and lower TQ (``side="upper"``), or the reverse."""
        s0 = np.asarray(s0, dtype=np.int64)
        lo, hi = self.ct.survival(np.concatenate([s0 - 1, s0]))
        k = len(s0)
        p = self.p
        if side == "upper":
            tp = (p * hi[:k] + (1 - p) * hi[k:]) * (1 + 3 * _U)
            tq = (((1 - p) * lo[:k] + p * lo[k:]) * (1 - 3 * _U))
        else:
            tp = (p * lo[:k] + (1 - p) * lo[k:]) * (1 - 3 * _U)
            tq = ((1 - p) * hi[:k] + p * hi[k:]) * (1 + 3 * _U)
        return tp, tq

    def g_mid(self, s0: int, delta: float) -> float:
        """(TP - δ)/TQ from the intervals' midpoints (a search value, not a bound)."""
        lo, hi = self.ct.survival(np.array([s0 - 1, s0]))
        f = 0.5 * (lo + hi)
        p = self.p
        tq = (1 - p) * f[0] + p * f[1]
        return (p * f[0] + (1 - p) * f[1] - delta) / tq if tq > 0 else -math.inf

    def argmax_s0(self, delta: float, hint: int | None) -> int:
        """The s0 maximising g_mid: uphill from ``hint`` (or golden section over the range)."""
        lo, hi = self.lo + 1, self.hi
        if hint is not None and lo < hint < hi:
            s, step = hint, 1
            g = self.g_mid(s, delta)
            up = self.g_mid(min(hi, s + 1), delta)
            direction = 1 if up > g else -1
            a, b = (s - 1, s + 1)
            while True:  # exponential steps uphill until the value drops, then golden section
                nxt = min(hi, max(lo, s + direction * step))
                gn = self.g_mid(nxt, delta)
                if gn <= g or nxt in (lo, hi):
                    a, b = (min(s - step // 2 - 1, nxt), max(s + step // 2 + 1, nxt))
                    break
                s, g, step = nxt, gn, step * 2
            lo, hi = max(lo, a), min(hi, b)
        phi = (math.sqrt(5) - 1) / 2
        while hi - lo > 3:
            c = hi - int(round(phi * (hi - lo)))
            d = lo + int(round(phi * (hi - lo)))
            if c >= d:
                d = c + 1
            if self.g_mid(c, delta) >= self.g_mid(d, delta):
                hi = d
            else:
                lo = c
        vals = [(self.g_mid(s, delta), s) for s in range(lo, hi + 1)]
        return max(vals)[1]

    def _certified(self, ee: float, a: int, b: int) -> bool:
        """inc(a - 1) ≤ 0 and inc(b) ≥ 0 at e^ε = ee (module docstring), interval arithmetic."""
        p = self.p
        ee_hi, ee_lo = ee * (1 + 4 * _U), ee * (1 - 4 * _U)
        slack = 8 * _U * (1 + ee)
        al_lo, al_hi = p - ee_hi * (1 - p) - slack, p - ee_lo * (1 - p) + slack
        be_lo, be_hi = ee_lo * p - (1 - p) - slack, ee_hi * p - (1 - p) + slack
        if al_lo <= 0 or be_lo <= 0:
            return False
        ylo, yhi = self.ct.pmf(np.array([a - 2, a - 1, b - 1, b]))
        left = al_hi * yhi[0] * (1 + 4 * _U) <= be_lo * ylo[1] * (1 - 4 * _U)
        right = al_lo * ylo[2] * (1 - 4 * _U) >= be_hi * yhi[3] * (1 + 4 * _U)
        return bool(left and right)


def _log_up(x: float) -> float:
    v = math.log(x)
    return v + 4 * _U * abs(v) + 1e-300


def _log_down(x: float) -> float:
    v = math.log(x)
    return v - 4 * _U * abs(v) - 1e-300


def split_eps(n: int, j: int, eps0: float, delta: float, kind: str, tol: float,
              offset: float | None = None) -> tuple[float, float, int]:
    """(bound on ε_j(δ) on the side ``kind``, offset of the best s0 from Y_j's mean, cells) for
    n users, split j; cells = the table sizes computed (a deterministic measure of the work).

    ``tol``: the largest mass of the summed binomial left outside its window (added to the
    upper tails); ``offset``: where to look first (a neighbouring split's offset; the full range
    is searched when the best s0 is at the narrow range's edge or cannot be certified there)."""
    cells = 0
    for off in ((offset, None) if offset is not None else (None,)):
        sp = Split(n, j, eps0, tol, off)
        cells += sp.cells
        hint = None if off is None else round(sp.mean + off)
        s_star = sp.argmax_s0(delta, hint)
        if sp.narrow and not (sp.lo + 3 <= s_star <= sp.hi - 3):
            continue
        out = _eps_at(sp, s_star, eps0, delta, kind)
        if out is not None:
            return out, s_star - sp.mean, cells
    return eps0, 0.0, cells


def _eps_at(sp: Split, s_star: int, eps0: float, delta: float, kind: str) -> float | None:
    """The bound of :func:`split_eps` around s_star (None: not certified inside the range)."""
    if kind == "lower":
        s0 = np.arange(s_star - 1, s_star + 2)
        s0 = s0[(s0 > sp.lo) & (s0 <= sp.hi)]
        tp, tq = sp.tp_tq(s0, "lower")
        ok = (tp > delta) & (tq > 0)
        if not ok.any():
            return 0.0
        num = (tp[ok] - delta) - 2 * _U * (tp[ok] + delta)
        ok2 = num > 0
        if not ok2.any():
            return 0.0
        best = max(_log_down(float(x)) for x in num[ok2] * (1 - 2 * _U) / (tq[ok][ok2] * (1 + 2 * _U)))
        return min(max(best, 0.0), eps0)
    w = 1
    for _ in range(_WIDEN):
        a, b = max(sp.lo + 1, s_star - w), min(sp.hi, s_star + w)
        s0 = np.arange(a, b + 1)
        tp, tq = sp.tp_tq(s0, "upper")
        if np.any((tp > delta) & (tq <= 0)):
            return eps0
        num = (tp - delta) + 2 * _U * (tp + delta)
        g = np.where(tp > delta, num / np.where(tq > 0, tq, 1.0) * (1 + 4 * _U), 0.0)
        gmax = float(g.max())
        eps_c = _log_up(gmax) if gmax > 1.0 else 0.0
        if eps_c >= eps0:
            return eps0
        if sp._certified(math.exp(eps_c), a, b):
            return eps_c
        w *= 3
    return None if sp.narrow else eps0


def split_delta(n: int, j: int, eps0: float, eps: float, kind: str, tol: float,
                offset: float | None = None) -> tuple[float, float, int]:
    """(bound on H_j(ε) on the side ``kind``, offset of the crossing from Y_j's mean, cells) for
    n users, split j (``offset`` as in :func:`split_eps`)."""
    if eps >= eps0:
        return 0.0, 0.0, 0  # P(s) ≤ e^{ε0} Q(s) for every s: the protocol is ε0-DP
    ee = math.exp(eps)
    p = _p(eps0)
    al, be = p - ee * (1 - p), ee * p - (1 - p)
    if al <= 0:
        return (0.0 if kind == "lower" else 1.0), 0.0, 0
    cells = 0
    for off in ((offset, None) if offset is not None else (None,)):
        sp = Split(n, j, eps0, tol, off)
        cells += sp.cells
        lo, hi = sp.lo + 1, sp.hi

        def inc(s: int, sp: Split = sp) -> float:
            y = sp.ct.pmf_point(np.array([s - 1, s]))  # no error terms: far tails keep their ratios
            return al * y[0] - be * y[1]

        while hi - lo > 1:  # the first s in [lo, hi] with inc(s) ≥ 0 (bisection on the sign)
            mid = (lo + hi) // 2
            if inc(mid) >= 0:
                hi = mid
            else:
                lo = mid
        s_star = hi
        if sp.narrow and not (sp.lo + 3 <= s_star <= sp.hi - 3):
            continue
        if kind == "lower":
            s0 = np.array([s_star - 1, s_star, s_star + 1])
            s0 = s0[(s0 > sp.lo) & (s0 <= sp.hi)]
            tp, tq = sp.tp_tq(s0, "lower")
            eq = ee * (1 + 4 * _U) * tq
            return float(min(1.0, max(0.0, float(np.max(tp - eq - 4 * _U * (tp + eq)))))), s_star - sp.mean, cells
        w = 1
        for _ in range(_WIDEN):
            a, b = max(sp.lo + 1, s_star - w), min(sp.hi, s_star + w)
            if sp._certified(ee, a, b):
                tp, tq = sp.tp_tq(np.arange(a, b + 1), "upper")
                eq = ee * (1 - 4 * _U) * tq
                val = float(np.max(tp - eq + 4 * _U * (tp + eq)))
                return float(min(1.0, max(0.0, val))), s_star - sp.mean, cells
            w *= 3
    return (0.0 if kind == "lower" else 1.0), 0.0, cells


# --- all splits of n users: blocks of splits, each bounded by one split (large n) ----------

def coin_pair_anchor(n: int, j0: int, g: int, p: float, budget: float) -> tuple[int, int, float]:
    """(users n_a, split j_a, slack) with H_j(n) ≤ slack + H_{j_a}(n_a) for every j in [j0, j0 + g).

    Claim (coin pairs).  Split the n-1 others into a core of n - g (j0 holding 1) and g - 1 block
    users (k = j - j0 holding 1).  Each block user's report is a mixture: Bern(p) =
    (2p-1)·δ_1 + 2(1-p)·Bern(1/2) and Bern(1-p) = (2p-1)·δ_0 + 2(1-p)·Bern(1/2), so given the set
    of the L ~ Bin(g-1, 2(1-p)) users whose report is a fair coin, the block's count is a shift
    of Bin(L, 1/2), whatever k.  Pair the coins (an odd one is dropped): a pair's law
    Bin(2, 1/2) = λ·v + (1-λ)·(δ_0 + δ_2)/2 with v = Bern(p) * Bern(1-p) (one RR user holding 1 and
    one holding 0) and λ = 1/(2(p² + (1-p)²)) ∈ (1/2, 1] (check the three masses).  So the block's
    count is a mixture of shifts of v^{*M} * w with M ~ Bin(⌊L/2⌋, λ) given L.  The hockey-stick
    divergence of (count + B_p, count + B_{1-p}) is jointly convex in the pair of laws and shift
    invariant, and convolving with a law w never raises it (Jensen over w's shifts), so
    H_j(n) ≤ E_M F(M) with F(M) the divergence of the core plus M users holding 1 and M holding 0:
    the split j0 + M of n - g + 1 + 2M users.  F is non-increasing in M (the same argument), so
    H_j(n) ≤ P(M < M0) + F(M0), and P(M < M0) ≤ P(L < L1) + P(Bin(⌊L1/2⌋, λ) < M0) (M is
    stochastically increasing in L).  ∎  With M0 = 0 this is the plain bound H_j(n) ≤ H_{j0}(n-g+1)
    (module docstring); the pairs keep a fraction (1-p)/(p²+(1-p)²) of the block's users
    (0.86 at ε0 = 0.25, 0.44 at ε0 = 1, 0.02 at ε0 = 4).  L1 and M0 are the largest (in steps of
    1/4 sd) whose slack, scipy's binomial cdfs (relative RHO), stays ≤ ``budget``.
    """
    M0, slack = _coin_pairs(g, p, budget)
    if M0 <= 0:
        return n - g + 1, j0, 0.0
    return n - g + 1 + 2 * M0, j0 + M0, slack


@functools.lru_cache(maxsize=4096)
def _coin_pairs(g: int, p: float, budget: float) -> tuple[int, float]:
    """(M0, slack) of :func:`coin_pair_anchor` for a block of g splits (M0 = 0: none)."""
    if g < 3:
        return 0, 0.0
    c, lam = 2 * (1 - p), 1.0 / (2 * (p * p + (1 - p) * (1 - p)))
    mean_l, sd_l = (g - 1) * c, math.sqrt((g - 1) * c * (1 - c))
    k = max(2.0, math.sqrt(2 * math.log(1 / budget)) - 2) if budget < 1 else 2.0
    while k < 60:
        L1 = math.floor(mean_l - k * sd_l)
        pairs = max(0, L1 // 2)
        M0 = math.floor(pairs * lam - k * math.sqrt(pairs * lam * (1 - lam)))
        if L1 <= 0 or M0 <= 0:
            return 0, 0.0
        slack = (float(stats.binom.cdf(L1 - 1, g - 1, c)) + float(stats.binom.cdf(M0 - 1, pairs, lam)))
        slack = slack * (1 + 2 * RHO) + 1e-300
        if slack <= budget:
            return M0, slack
        k += 0.25
    return 0, 0.0


def _partition(n: int, pieces: int, lo: int = 0, hi: int | None = None) -> list[tuple[int, int]]:
    """[lo, hi] (default [0, n-1]) cut into ``pieces`` contiguous blocks (j0, g)."""
    hi = n - 1 if hi is None else hi
    pieces = max(1, min(pieces, hi - lo + 1))
    edges = [lo + ((hi - lo + 1) * i) // pieces for i in range(pieces + 1)]
    return [(edges[i], edges[i + 1] - edges[i]) for i in range(pieces) if edges[i + 1] > edges[i]]


#: first partition of the splits; the bracket aimed at first, and the tightest one aimed at
#: while the work stays within :data:`CELL_BUDGET`
FIRST_BLOCKS = 16
TARGET_MAX = 1e-3
TARGET_MIN = 1e-4
#: table entries computed by one bound (≈ 30 million a second; see benchmarks/RESULTS.md): the
#: target is halved while the work is under a third of it, and refinement stops at 4 times it
CELL_BUDGET = 25_000_000
#: most split evaluations of one bound
MAX_EVALS = 1000
#: the mass left outside the summed binomial's window, relative to δ
_TOL = 1e-10


def _refined_max(n: int, p: float, evaluate, scale, slack_budget: float, target_max: float = TARGET_MAX) -> float:
    """max over blocks of proven block bounds, the blocks refined where that can lower the max.

    ``evaluate(n_a, j_a, slack, offset) -> (bound, offset, cells)`` bounds every split of a block
    from its anchor (:func:`coin_pair_anchor`, slack ≤ ``slack_budget``); ``scale(bound, n_a)``
    estimates the anchor's value with n users (it steers the refinement only).  A block is cut
    finer while its bound exceeds the largest estimate by more than the target; the target
    starts at ``target_max`` and is halved (down to :data:`TARGET_MIN`) while the work done is
    under a third of :data:`CELL_BUDGET` (a halving costs about twice the work before it); no
    block is cut once the work reaches 4·:data:`CELL_BUDGET` (the bound stays proven, only looser)."""
    todo = _partition(n, FIRST_BLOCKS)
    done: list[tuple[float, float, int, int]] = []  # (bound, estimate with n users, j0, g)
    offset: float | None = None
    spent, evals, target = 0, 0, target_max
    while True:
        for j0, g in todo:
            n_a, j_a, slack = coin_pair_anchor(n, j0, g, p, slack_budget)
            val, offset, cells = evaluate(n_a, j_a, slack, offset)
            spent, evals = spent + cells, evals + 1
            done.append((val, scale(val, n_a), j0, g))
        best = max(d[1] for d in done)
        keep, todo = [], []
        for d in done:
            val, est, j0, g = d
            if (val <= best * (1 + target) or g == 1 or evals + len(todo) >= MAX_EVALS or est <= 0
                    or spent >= 4 * CELL_BUDGET):
                keep.append(d)
                continue
            room = best * (1 + target) / est - 1
            loss = val / est - 1
            pieces = min(64, g, max(2, math.ceil(loss / (0.85 * max(room, 1e-12)))))
            todo.extend(_partition(n, pieces, j0, j0 + g - 1))
        done = keep
        if todo:
            continue
        if target / 2 < TARGET_MIN or 3 * spent > CELL_BUDGET or evals >= MAX_EVALS:
            return max(d[0] for d in done)
        target /= 2


#: the slack of a block's anchor, relative to δ (taken off δ, or added to δ(ε))
_SLACK = 1e-6
#: δ(ε): the outside mass allowed (absolute; δ(ε) of interest is far above it)
_TOL_DELTA = 1e-25


def _exponent(f, n: int, lo: float, hi: float, default: float) -> float:
    """The local exponent a of f(m) ∝ m^{-a} near m = n, from f at n and n - n/16 (at the
    split j = m - 1: one binomial, cheap); ``default`` where f is 0 or not finite.  It only steers
    the refinement (:func:`_refined_max`)."""
    m = n - max(1, n // 16)
    f1, f2 = f(n), f(m)
    if not (f1 > 0 and f2 > 0 and math.isfinite(f1) and math.isfinite(f2)) or f1 == f2:
        return default
    return min(hi, max(lo, math.log(f2 / f1) / math.log(n / m)))


def blocks_eps_upper(n: int, eps0: float, delta: float) -> float:
    """A proven upper bound on ε(δ) of shuffled binary RR with n users, over every split.

    Blocks of splits (:func:`coin_pair_anchor`, whose slack is taken off δ), refined by
    :func:`_refined_max` with the estimate ε·(n_a/n)^a, a the local exponent of ε ∝ n^{-a}
    (:func:`_exponent`; 1/2 for small δ, larger where ε is far below 1/sqrt(n))."""
    p = _p(eps0)
    tol = delta * _TOL

    def evaluate(n_a: int, j_a: int, slack: float, offset: float | None):
        # δ' ≤ δ - slack despite rounding: H_j(n) ≤ slack + H_anchor ≤ slack + δ' ≤ δ
        d = delta * (1 - 4 * _U) - slack * (1 + 4 * _U)
        return split_eps(n_a, j_a, eps0, d, "upper", tol, offset)

    a = _exponent(lambda m: split_eps(m, m - 1, eps0, delta, "upper", tol)[0], n, 0.25, 8.0, 0.5)
    return min(_refined_max(n, p, evaluate, lambda v, n_a: v * (n_a / n) ** a, delta * _SLACK), eps0)


def blocks_delta_upper(n: int, eps0: float, eps: float) -> float:
    """A proven upper bound on δ(ε) of shuffled binary RR with n users, over every split
    (the anchors' slack added), refined with the estimate exp(ln δ·(n/n_a)^b), b the local
    exponent of -ln δ ∝ n^b (:func:`_exponent`; 1 in the Gaussian regime)."""
    if eps >= eps0:
        return 0.0
    p = _p(eps0)
    tol = _TOL_DELTA

    def evaluate(n_a: int, j_a: int, slack: float, offset: float | None):
        val, off, cells = split_delta(n_a, j_a, eps0, eps, "upper", tol, offset)
        return min(1.0, (val + slack) * (1 + 2 * _U)), off, cells

    def minus_log(m: int) -> float:
        v = split_delta(m, m - 1, eps0, eps, "upper", tol)[0]
        return 1.0 / -math.log(v) if 0 < v < 1 else math.inf

    b = _exponent(minus_log, n, 0.1, 4.0, 1.0)

    def scale(v: float, n_a: int) -> float:
        return math.exp(math.log(v) * (n / n_a) ** b) if 0 < v < 1 else v

    return min(1.0, _refined_max(n, p, evaluate, scale, _TOL_DELTA, target_max=2e-2))


def lower_scan(n: int, eps0: float, target: float, kind: str = "eps", first: int = 17,
               rounds: int = 2, sub: int = 8) -> float:
    """A lower bound on ε(δ = target) (``kind="eps"``) or δ(ε = target) (``"delta"``): a maximum
    over splits j of n users (real dataset pairs): ``first`` splits evenly spread over
    0..n-1, then ``rounds`` times ``sub`` splits between the best one's neighbours."""
    js = sorted({round(x) for x in np.linspace(0, n - 1, first)})
    seen: dict[int, float] = {}
    offset: float | None = None
    for _ in range(rounds + 1):
        for j in js:
            if j not in seen:
                if kind == "eps":
                    seen[j], offset, _ = split_eps(n, j, eps0, target, "lower", target * _TOL, offset)
                else:
                    seen[j], offset, _ = split_delta(n, j, eps0, target, "lower", _TOL_DELTA, offset)
        order = sorted(seen)
        b = max(order, key=lambda j: seen[j])
        i = order.index(b)
        lo, hi = order[max(0, i - 1)], order[min(len(order) - 1, i + 1)]
        js = sorted({round(x) for x in np.linspace(lo, hi, sub + 2)})
    return max(seen.values())

"""Binomial pmfs and log-binomial coefficients: the one home of these numerics for all layers.

Four ways to a Binomial(n, p) pmf, each where it is the right tool:

* :func:`binomial_pmf` — log space, O(n) per pmf; tails underflow to 0 instead of
  overflowing.  Its relative accuracy depends on ``gammaln``; used where a value, not a
  proof, is wanted (LP rows, error curves, accounting).
* :func:`binomial_rows` — every n ≤ n_max at once by the non-negative recurrence, with the
  complement q = 1 − p given; relative error ≤ 2n·u plus n times that of p and q: the
  certificates' forward-error analysis (:mod:`darrm.privacy.condition`) rests on it.
* :func:`binomial_windows` — the same recurrence on windows that drop entries below a cutoff
  and account for the mass left out (O(n^{3/2}) for all n; the disjoint-member certificate).
* :func:`pmf_on_window` — one n on a given window, by exact ratios from one scipy value at the
  mode, with a proven relative error bound (O(window), n up to 1e8); :func:`window_pmf` takes
  the window of :func:`tail_window`, and :func:`mass_above_bound` / :func:`mass_below_bound`
  bound the mass outside a window.  The sums of binomials with rigorous error terms built from
  them are in :mod:`.binomial_sum`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from ..backends import resources
from ..errors import ParameterError
from .poisson_binomial import _as_probs


def log_comb(n, k):
    """log C(n, k), elementwise (arrays broadcast); −inf outside 0 ≤ k ≤ n is the caller's job."""
    n = np.asarray(n, dtype=np.float64)
    k = np.asarray(k, dtype=np.float64)
    return special.gammaln(n + 1.0) - special.gammaln(k + 1.0) - special.gammaln(n - k + 1.0)


def binomial_pmf(K: int, p: float | np.ndarray) -> np.ndarray:
    """Binomial(K, p) pmf evaluated in log space; p may be an array -> (..., K+1).

    log C(K,l) + l·log p + (K−l)·log1p(−p), with 0·log 0 = 0, so p ∈ {0, 1} and subnormal
    p are exact and deep tails underflow to 0 instead of overflowing.
    """
    shape = np.shape(p)
    p = _as_probs(np.asarray(p, dtype=np.float64).reshape(*shape, 1), "p").reshape(shape)
    ls = np.arange(K + 1, dtype=np.float64)
    logc = log_comb(K, ls)
    pe = p[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(ls == 0, 0.0, ls * np.log(pe))
        t2 = np.where(ls == K, 0.0, (K - ls) * np.log1p(-pe))
    out = np.exp(logc + t1 + t2)
    return out


def binomial_rows(n_max: int, p: float, q: float) -> np.ndarray:
    """B[n, j] = Bin(n, p)(j) for n, j = 0..n_max (zero for j > n), q = 1 − p given.

    Built by the recurrence Bin(n) = q·Bin(n−1) + p·shift(Bin(n−1)): every entry is a sum of
    products of non-negative numbers with at most 2n roundings, so its relative error is
    ≤ 2n·u plus n times the relative errors of p and q — the bound the certificates'
    forward-error analysis uses (:mod:`darrm.privacy.condition`).  O(n_max²) work.
    """
    B = np.zeros((n_max + 1, n_max + 1), dtype=np.float64)
    B[0, 0] = 1.0
    for n in range(1, n_max + 1):
        prev = B[n - 1, :n]
        B[n, :n] = q * prev
        B[n, 1 : n + 1] += p * prev
    return B


#: entries below this are trimmed from :func:`binomial_windows` (their mass is accounted for)
PMF_CUTOFF = 1e-30


def binomial_windows(N: int, p: float, q: float, cutoff: float = PMF_CUTOFF) -> tuple[np.ndarray, list, np.ndarray]:
    """Bin(n, p) for n = 0..N on windows: (offsets, pmfs, bounds on the mass left out).

    The recurrence Bin(n) = q·Bin(n−1) + p·shift(Bin(n−1)) (q = 1 − p given in closed form)
    runs on the window of n−1; entries below ``cutoff`` at either end are trimmed (binomial
    pmfs are unimodal, so the window stays contiguous).  Every kept entry is a sum of products
    of non-negative numbers (relative error ≤ 2n·u plus n times that of p and q) and never
    exceeds the exact value by more than that; the mass left out is bounded by twice the
    running float sum of what was trimmed (convolving with a probability vector preserves
    mass, so earlier losses carry over, never grow).
    """
    offs = np.zeros(N + 1, dtype=np.int64)
    lost = np.zeros(N + 1)
    rows = [np.ones(1)]
    cur, off, gone = rows[0], 0, 0.0
    for n in range(1, N + 1):
        nxt = np.zeros(cur.size + 1)
        nxt[:-1] = q * cur
        nxt[1:] += p * cur
        keep = np.flatnonzero(nxt >= cutoff)
        i, j = int(keep[0]), int(keep[-1]) + 1
        gone += float(nxt[:i].sum() + nxt[j:].sum())
        cur, off = nxt[i:j], off + i
        rows.append(cur)
        offs[n], lost[n] = off, 2.0 * gone
    return offs, rows, lost


@dataclass(frozen=True)
class OthersPmfs:
    """For n = 0..N: the law of X = Bin(n, hi) ⊕ Bin(N−n, lo) on its window, stored flat.

    Entry t of the flat arrays is Pr[X = pos[t]] for the n whose block starts at
    ``starts[n]`` (blocks are contiguous windows of support points); ``dropped[n]`` is
    the (tiny) mass outside the window of n.
    """

    N: int
    pos: np.ndarray
    values: np.ndarray
    starts: np.ndarray
    dropped: np.ndarray

    def pmf(self, n: int) -> tuple[int, np.ndarray]:
        """(offset, window) of the law of X for n members at ``hi``."""
        a = int(self.starts[n])
        b = int(self.starts[n + 1]) if n < self.N else self.values.size
        return int(self.pos[a]), self.values[a:b]


#: measured peak bytes per N^1.5 of :func:`others_pmfs` and its users (K = 10⁴: 0.9 GiB, K = 10⁵:
#: 24 GiB on the 2-core machine), rounded up: windows of width ~12√n for every n ≤ N
OTHERS_BYTES_PER_N15 = 1000.0


def others_pmfs_bytes(N: int) -> float:
    """Estimated peak memory of :func:`others_pmfs` for N other members (bytes)."""
    return OTHERS_BYTES_PER_N15 * float(N) ** 1.5


def others_pmfs(N: int, lo: float, hi: float, cutoff: float = PMF_CUTOFF) -> OthersPmfs:
    """Laws of the unchanged members' vote count for every number n ∈ {0..N} of them at ``hi``.

    ``lo`` and ``hi`` are complements (hi = 1 − lo: every member model's ends are), so each
    serves as the other's 1 − p in the recurrence of :func:`binomial_windows`."""
    if not (0.0 <= lo <= hi <= 1.0 and abs((lo + hi) - 1.0) <= 4 * 2.0**-53):
        raise ParameterError("ends", f"must be complementary probabilities lo <= hi = 1 - lo, got ({lo!r}, {hi!r})")
    need, have = others_pmfs_bytes(N), resources.available_memory()
    if have is not None and need > have:
        raise ParameterError(
            "K", f"K = {N + 1} needs about {need / 2**30:.1f} GiB for the laws of the other members' counts "
            f"(~{OTHERS_BYTES_PER_N15:g}·K^1.5 bytes), more than the {have / 2**30:.1f} GiB available")
    off_h, win_h, lost_h = binomial_windows(N, hi, lo, cutoff)
    off_l, win_l, lost_l = binomial_windows(N, lo, hi, cutoff)
    pos, vals, starts, drop = [], [], np.zeros(N + 1, dtype=np.int64), np.zeros(N + 1)
    size = 0
    for n in range(N + 1):
        x = np.convolve(win_h[n], win_l[N - n])
        a = int(off_h[n] + off_l[N - n])
        starts[n] = size
        size += x.size
        pos.append(np.arange(a, a + x.size))
        vals.append(x)
        drop[n] = lost_h[n] + lost_l[N - n]
    return OthersPmfs(N, np.concatenate(pos), np.concatenate(vals), starts, drop)


def expected_weights(others: OthersPmfs, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(E[w_X], E[w_{X+1}]) for every n: arrays of length N+1 (w has length N+2 = K+1)."""
    a = np.add.reduceat(others.values * w[others.pos], others.starts)
    b = np.add.reduceat(others.values * w[others.pos + 1], others.starts)
    return a, b


# ----------------------------------------------------------------------------
# Binomial windows and tails at large n (the shuffle bounds' truncated sums).  Every
# truncated sum returns the probability mass it dropped, so that the caller can add
# (dropped mass) × (largest possible term) to δ — never drop it.

#: mass left outside :func:`tail_window` (before it is added back to δ as an error term);
#: far below any δ of practical interest
TAIL = 1e-25


def tail_window(n: int, prob: float, tail: float = TAIL) -> tuple[int, int, float]:
    """[lo, hi] covering all but ``dropped`` mass of Bin(n, prob), and that mass.

    Starts from mean +- K sd (+ K^2 on the upper side, a Bernstein-type margin for
    skewed binomials) and widens until the exactly computed dropped mass is
    <= ``tail``.  (scipy's ``binom.isf`` is unreliable at 1e-30 for n ~ 1e8.)
    """
    if n == 0 or prob <= 0.0:
        return 0, 0, 0.0
    if prob >= 1.0:
        return n, n, 0.0
    from scipy import stats  # scipy.stats costs ~0.3 s to import: only where it is used

    mu = n * prob
    sd = math.sqrt(n * prob * (1 - prob))
    k = 11.0
    while True:
        lo = max(0, int(math.floor(mu - k * sd - 1)))
        hi = min(n, int(math.ceil(mu + k * sd + k * k + 1)))
        dropped = 0.0
        if lo > 0:
            dropped += float(stats.binom.cdf(lo - 1, n, prob))
        if hi < n:
            dropped += float(stats.binom.sf(hi, n, prob))
        if dropped <= tail or (lo == 0 and hi == n):
            return lo, hi, dropped
        k *= 1.5


def upper_tail(k: np.ndarray, c: np.ndarray | int, prob: float = 0.5) -> np.ndarray:
    """Pr[Bin(c, prob) >= k] (1 for k <= 0, 0 for k > c), via the survival function."""
    from scipy import stats

    return np.asarray(stats.binom.sf(k - 1, c, prob))


def pmf_at(k: np.ndarray, c: np.ndarray | int, prob: float = 0.5) -> np.ndarray:
    """Pr[Bin(c, prob) = k] elementwise (scipy's Boost pmf; 0 outside 0 ≤ k ≤ c)."""
    from scipy import stats

    return np.asarray(stats.binom.pmf(k, c, prob))


# ----------------------------------------------------------------------------
# A binomial pmf on a window with a rigorous relative error bound, and rigorous bounds on the
# mass outside a window: the pieces every sum of binomials with error terms is built from.

#: relative accuracy assumed of scipy's (Boost) binomial pmf, cdf and survival function
#: (measured ≤ 3e-11 against mpmath for n ≤ 1e7, :mod:`darrm.accounting.shuffle.count_sums`)
RHO = 1e-9
_U = float(np.finfo(float).eps) / 2
#: a computed entry below this may be subnormal: it is covered by an absolute term of this size
TINY = 1e-300


def pmf_on_window(N: int, q: float, lo: int, hi: int) -> tuple[np.ndarray, float]:
    """Pr[Bin(N, q) = a] for a = lo..hi (0 ≤ lo ≤ hi ≤ N) and a bound ``rel`` on their relative error.

    Anchored at the window point nearest the mode, where scipy's ``stats.binom.pmf`` (Boost's
    ``ibeta_derivative``) gives c = P(anchor) to a relative :data:`RHO`; the other entries by the
    exact ratios P(a+1)/P(a) = (N-a)/(a+1)·q/(1-q) going up and P(a-1)/P(a) = a/(N-a+1)·(1-q)/q
    going down.  Proof of ``rel`` = RHO + 6(k+1)u (u the unit roundoff, k the largest distance
    from the anchor): (N-a) and (a+1) are exact in float64 (N < 2^53), q/(1-q) is within 2u,
    each ratio within 4u, each running product adds one rounding, so an entry k steps from the
    anchor is within a relative (1+5u)^k − 1 ≤ 6ku of the true value times c.  Entries decrease
    away from the anchor (a binomial pmf is unimodal), so an entry that underflows stays below
    :data:`TINY`: an absolute TINY per entry (the caller's) covers it.  Measured against mpmath
    (n = 1e8, q = 0.27, 97 675 entries): ≤ 2e-12 relative, where scipy's pmf at every point is
    off by up to 2e-11; and ~7x faster than it.

    Args:
        N: the number of trials (>= 0).
        q: the success probability in [0, 1] (0 and 1: the point mass, exact).
        lo: the window's first point.
        hi: the window's last point.

    Returns:
        (the pmf on lo..hi, rel).
    """
    if q <= 0.0 or q >= 1.0 or N == 0:
        atom = 0 if (q <= 0.0 or N == 0) else N
        return np.where(np.arange(lo, hi + 1) == atom, 1.0, 0.0), 0.0
    from scipy import stats

    mode = min(N, max(0, math.floor((N + 1) * q)))
    anchor = min(hi, max(lo, mode))
    c = float(stats.binom.pmf(anchor, N, q))
    cq = q / (1.0 - q)
    out = np.empty(hi - lo + 1)
    out[anchor - lo] = c
    if hi > anchor:  # out[a+1] = out[a]·(N-a)/(a+1)·cq, in place (the same roundings)
        a = np.arange(anchor, hi, dtype=float)
        r = np.subtract(N, a)
        a += 1.0
        r /= a
        r *= cq
        np.cumprod(r, out=r)
        r *= c
        out[anchor - lo + 1:] = r
    if lo < anchor:  # out[a-1] = out[a]·a/(N-a+1)/cq
        a = np.arange(anchor, lo, -1, dtype=float)
        r = np.subtract(N + 1.0, a)
        np.divide(a, r, out=r)
        r /= cq
        np.cumprod(r, out=r)
        r *= c
        out[:anchor - lo][::-1] = r
    k = max(hi - anchor, anchor - lo)
    return out, RHO + 6.0 * (k + 1) * _U


def mass_above_bound(N: int, q: float, hi: np.ndarray) -> np.ndarray:
    """Upper bounds on Pr[Bin(N, q) > hi], elementwise over the integers ``hi``; 1.0 where hi is not
    past the mode.

    Proof: a binomial pmf is log-concave, so its ratios P(a+1)/P(a) are non-increasing and beyond
    hi, where the ratio r = (N-hi)/(hi+1)·q/(1-q) < 1, Σ_{a > hi} P(a) ≤ P(hi)·r/(1-r) (a geometric
    series); P(hi) from scipy's pmf (relative :data:`RHO`, plus :data:`TINY` for underflow), r
    and the quotient each rounded up by 8u.

    Args:
        N: the number of trials (>= 0).
        q: the success probability in [0, 1].
        hi: the last points kept.

    Returns:
        The bounds (0 where hi >= N).
    """
    hi = np.asarray(hi, dtype=float)
    if q <= 0.0 or N == 0:
        return np.zeros(hi.shape)
    if q >= 1.0:
        return np.where(hi >= N, 0.0, 1.0)
    from scipy import stats

    h = np.minimum(hi, N)
    r = (N - h) / (h + 1.0) * (q / (1.0 - q)) * (1 + 8 * _U)
    pm = stats.binom.pmf(h, N, q) * (1 + RHO) + TINY
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(r < 1.0, pm * r / (1.0 - r) * (1 + 8 * _U), 1.0)
    return np.where(hi >= N, 0.0, out)


def mass_below_bound(N: int, q: float, lo: np.ndarray) -> np.ndarray:
    """Upper bounds on Pr[Bin(N, q) < lo], elementwise: :func:`mass_above_bound` of N − Bin(N, q).

    Args:
        N: the number of trials (>= 0).
        q: the success probability in [0, 1].
        lo: the first points kept.

    Returns:
        The bounds (0 where lo <= 0).
    """
    lo = np.asarray(lo, dtype=float)
    if 0.0 < q < 1.0:
        return mass_above_bound(N, 1.0 - q, N - lo)
    return np.where((q >= 1.0) & (lo > 0) & (lo <= N), 1.0, 0.0)


def sf_bound(N: int, q: float, v: np.ndarray) -> np.ndarray:
    """Upper bounds on Pr[Bin(N, q) ≥ v], elementwise (scipy's survival function, relative
    :data:`RHO`, plus :data:`TINY`; exact outside 1 ≤ v ≤ N).

    Args:
        N: the number of trials (>= 0).
        q: the success probability in [0, 1].
        v: the thresholds.

    Returns:
        The bounds, in [0, 1].
    """
    from scipy import stats

    v = np.asarray(v, dtype=float)
    sf = np.minimum(1.0, stats.binom.sf(v - 1, N, q) * (1 + RHO) + TINY)
    return np.where(v <= 0, 1.0, np.where(v > N, 0.0, sf))


@dataclass(frozen=True)
class CountLaw:
    """The law of a count (a binomial, :func:`window_pmf`; a sum of binomials,
    :func:`darrm.numerics.binomial_sum.binomial_sum_law`) on a window, with rigorous error terms.

    The exact law is π = π_w + π_out with π_w >= 0 supported on the window, ‖π_out‖₁ <= ``dropped``
    (π_out >= 0, anywhere), and |w − π_w| <= ``rel``·w pointwise.

    Attributes:
        c: consecutive integers, the window.
        w: approximate probabilities on it (>= 0).
        dropped: the bound on ‖π_out‖₁.
        rel: the bound on the window values' relative error.
    """

    c: np.ndarray
    w: np.ndarray
    dropped: float
    rel: float


_W_CACHE: dict[tuple[int, float], CountLaw] = {}


def window_pmf(n: int, prob: float) -> CountLaw:
    """Bin(n, prob) on the window of :func:`tail_window` (all but ≤ :data:`TAIL` of its mass), memoised.

    The values by :func:`pmf_on_window` (relative error ≤ its ``rel``), those below :data:`TINY`
    (which may have underflowed) set to 0 and counted as dropped with 2·TINY each (their true
    value is below TINY·(1 + rel)); ``dropped`` also has :func:`tail_window`'s scipy cdf +
    survival function, each relative :data:`RHO`, times (1 + 2·RHO): an upper bound on the mass
    outside the window.

    Args:
        n: the number of trials (>= 0).
        prob: the success probability in [0, 1].

    Returns:
        The :class:`CountLaw` (its arrays are shared by the memo: do not modify them).
    """
    key = (n, prob)
    hit = _W_CACHE.get(key)
    if hit is None:
        lo, hi, dropped = tail_window(n, prob)
        w, rel = pmf_on_window(n, prob, lo, hi)
        under = w < TINY
        w[under] = 0.0
        if len(_W_CACHE) > 64:
            _W_CACHE.clear()
        hit = _W_CACHE[key] = CountLaw(np.arange(lo, hi + 1, dtype=np.int64), w,
                                       dropped * (1 + 2 * RHO) + 2 * TINY * int(under.sum()), rel)
    return hit


def upper_tail_along(k: np.ndarray, c: np.ndarray, pm_km1: np.ndarray | None = None, chunk: int = 512) -> np.ndarray:
    """T_c(k_c) = Pr[Bin(c, 1/2) >= k_c] along consecutive c with |k_{c+1} - k_c| <= 1.

    scipy's binomial survival function costs ~20 us per call for c ~ 1e8, so
    along a path of consecutive c we use the exact recurrence
    T_{c+1}(k) = T_c(k) + b_c(k-1)/2 plus one pmf for a unit change of k, and
    re-anchor with an exact ``sf`` every ``chunk`` steps (rounding error stays
    ~1e-16 x chunk in absolute value).  ``pm_km1`` may pass b_c(k_c - 1) if the
    caller already has it (scipy's pmf: relative :data:`RHO`).  Falls back to ``sf`` everywhere when
    the path has larger jumps.

    :func:`upper_tail_along_bounds` also returns a bound on each value's absolute error.
    """
    return _tail_along(k, c, pm_km1, chunk, False)[0]


def upper_tail_along_bounds(k: np.ndarray, c: np.ndarray, pm_km1: np.ndarray | None = None, chunk: int = 512
                            ) -> tuple[np.ndarray, np.ndarray]:
    """(:func:`upper_tail_along`, a bound on each value's absolute error).

    Proof: scipy's sf and
    pmf are within a relative :data:`RHO` (plus :data:`TINY` for underflow); in a chunk from the
    anchor v, T_j = v + s_j with s_j = Σ_{i<j} inc_i, each increment a sum of at most two pmfs (error
    <= (RHO + 3u)·|inc|_i, |inc|_i the sum of their magnitudes, u the unit roundoff), each partial sum
    rounded once (<= u |s_i|, accumulated) and the final addition once (<= u |T_j|); clipping to
    [0, 1] only moves toward the exact value.  The bound is that sum times 1.01 (the cumulative sums
    of non-negative terms carry their own few-u relative error).
    """
    t, err = _tail_along(k, c, pm_km1, chunk, True)
    assert err is not None
    return t, err


def _tail_along(k: np.ndarray, c: np.ndarray, pm_km1: np.ndarray | None, chunk: int, with_error: bool
                ) -> tuple[np.ndarray, np.ndarray | None]:
    k = np.asarray(k, dtype=np.int64)
    c = np.asarray(c, dtype=np.int64)
    if c.size <= 2 * chunk or np.any(np.diff(c) != 1) or np.any(np.abs(np.diff(k)) > 1):
        t = upper_tail(k, c)
        return t, (1.01 * (RHO * t + TINY) if with_error else None)
    if pm_km1 is None:
        pm_km1 = pmf_at(k - 1, c)
    dk = np.diff(k)
    inc = 0.5 * pm_km1[:-1]
    mag = inc.copy()
    up = np.nonzero(dk == 1)[0]
    down = np.nonzero(dk == -1)[0]
    if up.size:
        q = pmf_at(k[up], c[up + 1])
        inc[up] -= q
        mag[up] += q
    if down.size:
        q = pmf_at(k[down] - 1, c[down + 1])
        inc[down] += q
        mag[down] += q
    out = np.empty(c.size)
    err = np.empty(c.size) if with_error else None
    anchors = np.arange(0, c.size, chunk)
    anchor_vals = upper_tail(k[anchors], c[anchors])
    for a, v in zip(anchors.tolist(), anchor_vals, strict=True):
        b = min(a + chunk, c.size)
        out[a] = v
        np.cumsum(inc[a : b - 1], out=out[a + 1 : b])
        if err is not None:
            err[a] = RHO * v + TINY
            partial = np.abs(out[a + 1 : b])
            err[a + 1 : b] = (RHO * v + TINY + (RHO + 3 * _U) * np.cumsum(mag[a : b - 1])
                              + _U * np.cumsum(partial) + 2 * TINY * np.arange(1, b - a))
        out[a + 1 : b] += v
    out = np.clip(out, 0.0, 1.0)
    return out, (1.01 * (err + _U * out) if err is not None else None)

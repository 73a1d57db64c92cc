"""E[(G_1 + ... + G_n)_+] for a GPARV with few atoms, as exact sums over counts.

Su et al. (decomposition-optimal) Thm 13 gives the optimal (blanket) bound as
δ = (1/n) E[(ΣG_i)_+] and Thm 14 the lower bound in the same form.  For k-ary
randomized response the GPARV has three non-zero atoms (Su et al. Example 4.1:
e^{ε0} - e^ε, 1 - e^{ε0+ε}, 1 - e^ε, and 0 for the residual), so ΣG_i is a
function of multinomial counts and needs no discretisation grid:

    ΣG = A·N_A + B·N_B + D·N_D,   (N_A, N_B, N_D, rest) ~ Mult(n; w_A, w_B, w_D, w_0)

with A the largest atom (> 0), B the smallest (< 0), D the middle one.  With
S = N_A + N_B ~ Bin(n, w_A + w_B), N_A | S=s ~ Bin(s, p), N_D | S=s ~ Bin(n-s, q)
independent, write X = Δ·N_A + C_s − e·J (Δ = A − B > 0, e ≥ 0; J = N_D, or
n − s − N_D when D > 0).  X ≥ 0 iff N_A ≥ t(J) = ⌈(eJ − C_s)/Δ⌉, and t(J) is
constant on runs of J ("cells"), so for each s

    E[X_+ 1{J ∈ cell}] = Δ·E[(N_A − t)_+]·P(J ∈ cell) + P(N_A ≥ t)·E[(Δt + C_s − eJ) 1{J ∈ cell}]

with closed forms for binomial tails, stop-loss transforms
E[(N − t)_+] = (mp − t)·P(Bin(m−1,p) ≥ t+1) + p(m − t)·P(Bin(m−1,p) = t) and
E[(x − J)_+] = (x − mq)·P(Bin(m−1,q) ≤ x) + q(m − x)·P(Bin(m−1,q) = x).
The number of cells is ≈ (#s) × (1 + e·width(J)/Δ): a few per s at the ε of
interest, whatever n.

Rigour (``kind="upper"`` adds, ``"lower"`` drops or subtracts):

* truncation of S, J and N_A to windows: the dropped probability (computed
  exactly with the regularised incomplete beta function) times the largest
  possible value of X_+ (n·A, or Δ·s for the top N_A tail) is added;
* when the cells would be too many (large e, i.e. ε far above the answer), runs
  of ``g`` cells are merged and J is rounded to the run's low end (upper: X only
  grows) or high end (lower: X only shrinks) — still a bound, slightly looser;
* floating point: cell thresholds computed in floating point can misplace a J
  only where |X| ≤ η = 64·ulp·(Δ(s+1) + |C_s| + e·(n−s)) at the threshold; cells
  where that can happen are detected and get η added (subtracted);
  special-function values are assumed accurate to a relative ``RHO`` = 1e-9
  (scipy's Boost ``betainc``/``binom.pmf``; measured ≤ 3e-11 against mpmath for
  n ≤ 1e7), and RHO × (sum of the magnitudes of all the terms combined) is
  added (upper) or subtracted (lower).

More than three non-zero atoms: :func:`coarsen` merges atoms into three groups,
each rounded to the group's largest value (upper; pointwise larger sum) or smallest
(lower), choosing the grouping with the least rounded mass.
"""

from __future__ import annotations

import math

import numpy as np

from darrm.numerics import binomial as B

from . import beta_tables
from . import s_blocks as SB

#: relative accuracy assumed of scipy's special functions (:data:`darrm.numerics.binomial.RHO`)
RHO = B.RHO
ULP = np.finfo(float).eps
K_SD = 11.0
#: above this many cells (s, t), runs of cells are merged (see module docstring)
MAX_CELLS = 1_500_000


def coarsen(vals: np.ndarray, w: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray, bool]:
    """At most three non-zero atoms (plus 0): contiguous groups of the sorted
    non-zero atoms, each replaced by its max (upper) or min (lower); the grouping
    minimises the rounded mass Σ w |v − v'|.  Returns (values, weights, exact)."""
    vals = np.asarray(vals, dtype=float)
    w = np.asarray(w, dtype=float)
    nz = (w > 0) & (vals != 0)
    v, ww = vals[nz], w[nz]
    order = np.argsort(v)
    v, ww = v[order], ww[order]
    # merge exact duplicates
    uv, inv = np.unique(v, return_inverse=True)
    uw = np.zeros(len(uv))
    np.add.at(uw, inv, ww)
    if len(uv) <= 3:
        return uv, uw, True
    m = len(uv)

    def cost(i: int, j: int) -> float:  # group uv[i:j]
        tgt = uv[j - 1] if kind == "upper" else uv[i]
        return float(np.dot(uw[i:j], np.abs(uv[i:j] - tgt)))

    best, cut = math.inf, (1, 2)
    for a in range(1, m - 1):
        for b in range(a + 1, m):
            c = cost(0, a) + cost(a, b) + cost(b, m)
            if c < best:
                best, cut = c, (a, b)
    a, b = cut
    groups = [(0, a), (a, b), (b, m)]
    nv = np.array([uv[j - 1] if kind == "upper" else uv[i] for i, j in groups])
    nw = np.array([uw[i:j].sum() for i, j in groups])
    return nv, nw, False


# --- binomial primitives (vectorised, exact edge cases) ---------------------

def _sf(x, m, p):
    """P(Bin(m, p) >= x)."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    out = np.where(x <= 0, 1.0, 0.0)
    mid = (x > 0) & (x <= m)
    if np.any(mid):
        xm, mm = x[mid], m[mid]
        out[mid] = beta_tables.betainc(xm, mm - xm + 1, p) if 0 < p < 1 else (1.0 if p >= 1 else 0.0)
    return out


def _cdf(x, m, p):
    """P(Bin(m, p) <= x)."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    out = np.where(x >= m, 1.0, 0.0)
    mid = (x >= 0) & (x < m)
    if np.any(mid):
        xm, mm = x[mid], m[mid]
        out[mid] = beta_tables.betainc(mm - xm, xm + 1, 1 - p) if 0 < p < 1 else (1.0 if p <= 0 else 0.0)
    return out


def _pmf(x, m, p):
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    ok = (x >= 0) & (x <= m) & (m >= 0)
    out = np.zeros(x.shape)
    if np.any(ok):
        out[ok] = beta_tables.binom_pmf(x[ok], m[ok], p)
    return out


def _interval_masses(lo: np.ndarray, hi: np.ndarray, n: int, w: float) -> tuple[np.ndarray, np.ndarray]:
    """P(lo <= S <= hi), S ~ Bin(n, w), elementwise for integer arrays lo <= hi, and a bound on
    each value's error: two tails on their accurate side (both ends below the mean: CDFs, both
    above: survival functions, else 1 minus both tails), each accurate to a relative RHO."""
    mean = n * w
    below = hi < mean
    above = lo > mean
    f_hi, f_lo = _cdf(hi, n, w), _cdf(lo - 1, n, w)
    s_lo, s_hi = _sf(lo, n, w), _sf(hi + 1, n, w)
    mid = ~below & ~above
    val = np.where(below, f_hi - f_lo, np.where(above, s_lo - s_hi, 1.0 - f_lo - s_hi))
    err = np.where(below, f_hi + f_lo, np.where(above, s_lo + s_hi, f_lo + s_hi))
    err = 2 * RHO * err + np.where(mid, 4 * ULP, 2 * ULP * np.abs(val))
    return np.maximum(val, 0.0), err


def _stop_loss_above(t, m, p):
    """E[(N − t)_+], N ~ Bin(m, p), for t >= 0 (0 for m = 0)."""
    t, m = np.broadcast_arrays(np.asarray(t, dtype=float), np.asarray(m, dtype=float))
    out = np.zeros(t.shape)
    ok = m >= 1
    if np.any(ok):
        tt, mm = t[ok], m[ok]
        out[ok] = (mm * p - tt) * _sf(tt + 1, mm - 1, p) + p * (mm - tt) * _pmf(tt, mm - 1, p)
    return np.maximum(out, 0.0)


def _stop_loss_below(x, m, q):
    """E[(x − J)_+], J ~ Bin(m, q) (0 for x < 0)."""
    x, m = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(m, dtype=float))
    out = np.zeros(x.shape)
    big = x >= m
    out[big] = x[big] - m[big] * q
    ok = (x >= 0) & ~big & (m >= 1)
    if np.any(ok):
        xx, mm = x[ok], m[ok]
        out[ok] = (xx - mm * q) * _cdf(xx, mm - 1, q) + q * (mm - xx) * _pmf(xx, mm - 1, q)
    return np.maximum(out, 0.0)


def _windows(mean: np.ndarray, sd: np.ndarray, lo: np.ndarray, hi: np.ndarray, k: float):
    a = np.maximum(lo, np.floor(mean - k * sd - 1)).astype(np.int64)
    b = np.minimum(hi, np.ceil(mean + k * sd + k * k + 1)).astype(np.int64)
    return a, b


def _segments(ngroups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row, column) of each cell in a (#s) x (max cells per s) padded layout."""
    first = np.repeat(np.cumsum(ngroups) - ngroups, ngroups)
    rows = np.repeat(np.arange(len(ngroups)), ngroups)
    return rows, np.arange(int(ngroups.sum())) - first


def _na_tails(t, s, p, idx, ngroups, tb):
    """T(t) = P(N_A >= t) and SL(t) = E[(N_A − t)_+], N_A ~ Bin(s, p), for runs of
    consecutive t per s: one incomplete-beta evaluation at the top t of each s,
    then T(t) = T(t+1) + P(N_A = t) and SL(t) = SL(t+1) + T(t+1) going down
    (sums of positive terms: no cancellation)."""
    rows, cols = _segments(ngroups)
    width = int(ngroups.max()) if len(ngroups) else 0
    if width == 0 or len(ngroups) * width > 4 * len(t) + 1024:
        return _sf(t, s, p), _stop_loss_above(t, s, p)
    ns = len(ngroups)
    top = np.nonzero(ngroups)[0]
    t_top = tb[top].astype(float)
    s_top = s[np.cumsum(ngroups)[top] - 1]
    T_top = _sf(t_top, s_top, p)
    SL_top = _stop_loss_above(t_top, s_top, p)
    b = np.zeros((ns, width))
    b[rows, cols] = _pmf(t, s, p)
    last = np.zeros((ns, width), dtype=bool)
    last[top, ngroups[top] - 1] = True
    b[last] = 0.0  # T(t_top) is the anchor, not b(t_top)
    # reverse cumulative sums within each row
    Tm = np.cumsum(b[:, ::-1], axis=1)[:, ::-1]
    Tm[top] += T_top[:, None]
    Tm[np.arange(width)[None, :] >= ngroups[:, None]] = 0.0
    T = Tm[rows, cols]
    # SL(t) = SL_top + Σ_{i=t+1}^{t_top} T(i)
    Tshift = np.zeros((ns, width))
    Tshift[:, :-1] = Tm[:, 1:]
    SLm = np.cumsum(Tshift[:, ::-1], axis=1)[:, ::-1]
    SLm[top] += SL_top[:, None]
    return np.minimum(T, 1.0), SLm[rows, cols]


def _j_parts(a, b, m, q, idx, ngroups):
    """P(a < J <= b), E[(b − J) 1{a < J <= b}] and the magnitude of the latter's
    terms, J ~ Bin(m, q),
    evaluating each boundary once on its accurate side (CDF below the mean,
    survival function above)."""
    # boundaries: for each s, a of its first cell then b of each cell
    rows, cols = _segments(ngroups)
    firsts = cols == 0
    nb = len(b) + int(firsts.sum())
    pos_b = np.arange(len(b)) + np.cumsum(firsts)  # boundary index of each cell's b
    pos_a = pos_b - 1
    x = np.empty(nb)
    mm = np.empty(nb)
    x[pos_b] = b
    mm[pos_b] = m
    x[pos_a[firsts]] = a[firsts]
    mm[pos_a[firsts]] = m[firsts]
    up = x >= mm * q
    F = np.zeros(nb)
    S = np.zeros(nb)
    L = np.zeros(nb)
    U = np.zeros(nb)
    lo = ~up
    F[lo] = _cdf(x[lo], mm[lo], q)
    S[lo] = 1.0 - F[lo]
    L[lo] = _stop_loss_below(x[lo], mm[lo], q)
    S[up] = _sf(x[up] + 1, mm[up], q)
    F[up] = 1.0 - S[up]
    U[up] = _stop_loss_above(x[up], mm[up], q)
    ia, ib = pos_a, pos_b
    w = b - a
    both_up = up[ia]
    both_lo = ~up[ib]
    mixed = ~both_up & ~both_lo
    out = np.zeros(len(b))
    mag = np.zeros(len(b))
    pj = np.where(both_up, S[ia] - S[ib], np.where(both_lo, F[ib] - F[ia], 1.0 - F[ia] - S[ib]))
    out[both_up] = U[ib][both_up] - U[ia][both_up] + w[both_up] * S[ia][both_up]
    mag[both_up] = U[ib][both_up] + U[ia][both_up] + w[both_up] * S[ia][both_up]
    out[both_lo] = L[ib][both_lo] - L[ia][both_lo] - w[both_lo] * F[ia][both_lo]
    mag[both_lo] = L[ib][both_lo] + L[ia][both_lo] + w[both_lo] * F[ia][both_lo]
    hb = b[mixed] - m[mixed] * q + U[ib][mixed]
    out[mixed] = hb - L[ia][mixed] - w[mixed] * F[ia][mixed]
    mag[mixed] = np.abs(b[mixed] - m[mixed] * q) + U[ib][mixed] + L[ia][mixed] + w[mixed] * F[ia][mixed]
    return np.where(w > 0, pj, 0.0), np.where(w > 0, out, 0.0), np.where(w > 0, mag, 0.0)


# --- the sum -------------------------------------------------------------

def expected_positive_part(vals, w, n: int, kind: str, max_cells: int = MAX_CELLS,
                           s_block: int | None = None) -> tuple[float, bool]:
    """Bound on E[(Σ_{i<=n} G_i)_+] (upper: >=, lower: <=) and whether it is exact
    up to the error terms (no coarsening, no cell merging).

    Args:
        vals: the GPARV's atoms.
        w: their probabilities.
        n: the number of summands.
        kind: ``"upper"`` or ``"lower"``.
        max_cells: above this many cells, runs of cells are merged (module docstring).
        s_block: the width g of the blocks of S summed through one value each
            (:mod:`.s_blocks`); None: :func:`.s_blocks.block_width`, 1: every S.

    Returns:
        (bound, exact): ``exact`` is False when atoms were coarsened or cells merged (blocks
        of S do not count: their bound is as rigorous, see :mod:`.s_blocks`).
    """
    if kind not in ("upper", "lower"):
        raise ValueError(kind)
    vals = np.asarray(vals, dtype=float)
    w = np.asarray(w, dtype=float)
    w = w / w.sum()
    v, ww, exact = coarsen(vals, w, kind)
    if len(v) == 0 or v[-1] <= 0:
        return 0.0, exact
    if v[0] >= 0:  # no negative atom: (ΣG)_+ = ΣG
        return n * float(np.dot(v, ww)) * (1 + (4 * RHO if kind == "upper" else -4 * RHO)), exact
    A, wA, Bv, wB = float(v[-1]), float(ww[-1]), float(v[0]), float(ww[0])
    if len(v) == 3:
        Dv, wD = float(v[1]), float(ww[1])
    else:
        Dv, wD = 0.0, 0.0
    upper = kind == "upper"
    wS = min(1.0, wA + wB)
    p = wA / (wA + wB)
    Delta = A - Bv
    # --- s window (S ~ Bin(n, wS)) ---
    s_lo, s_hi, drop_s = B.tail_window(n, wS)
    rest = 1.0 - wS
    q = 0.0 if (wD <= 0 or rest <= 0) else min(1.0, wD / rest)
    # blocks of S (s_blocks): one representative per block, the block's mass, X shifted by c
    kappa = SB.drift(A, Bv, Dv, p)
    g = SB.block_width(v, ww, n, p, Delta, kappa) if s_block is None else max(1, int(s_block))
    s, first, last, shift = SB.blocks(s_lo, s_hi, g, kappa, kind)
    if wS >= 1:
        PS, PS_err = np.ones(len(s)), np.zeros(len(s))
    elif g == 1:
        PS, PS_err = _pmf(s, n, wS), np.zeros(len(s))
    else:
        PS, PS_err = _interval_masses(first, last, n, wS)
    m = n - s
    sf = s.astype(float)
    mf = m.astype(float)
    if Dv > 0:
        q, e, C = 1.0 - q, Dv, Bv * sf + Dv * mf + shift
    else:
        e, C = -Dv, Bv * sf + shift
    # --- J windows (J | s ~ Bin(m, q)); det: J is a constant ---
    det = e == 0.0 or q <= 0.0 or q >= 1.0
    drop_j = np.zeros(len(s))
    if e == 0.0 or q <= 0.0:
        jl = np.zeros(len(s), dtype=np.int64)
        jh = jl.copy()
    elif q >= 1.0:
        jl = m.copy()
        jh = m.copy()
    else:
        k = K_SD
        while True:
            jl, jh = _windows(mf * q, np.sqrt(mf * q * (1 - q)), np.zeros(len(s)), mf, k)
            drop_j = _cdf(jl - 1, m, q) + _sf(jh + 1, m, q)
            if float(np.max(drop_j)) <= 1e-22 or k > 40:
                break
            k *= 1.5
    # --- N_A windows (N_A | s ~ Bin(s, p)) ---
    k = K_SD
    while True:
        t_floor, t_top = _windows(sf * p, np.sqrt(sf * p * (1 - p)), np.zeros(len(s)), sf, k)
        t_cap = t_top + 2  # cells with t >= t_cap are bounded (P(N_A >= t_top + 1) tiny), not summed
        low_tail = _cdf(t_floor - 1, s, p)
        high_tail = _sf(t_cap - 1, s, p)
        if float(np.max(low_tail + high_tail)) <= 1e-22 or k > 40:
            break
        k *= 1.5

    def t_of(j, Cv):
        return np.ceil((e * j - Cv) / Delta)

    ta = np.clip(t_of(jl.astype(float), C), t_floor, t_cap).astype(np.int64)
    tb = np.clip(t_of(jh.astype(float), C), t_floor, t_cap - 1).astype(np.int64)
    ncell = np.where(ta < t_cap, np.maximum(tb - ta + 1, 0), 0)
    total = int(ncell.sum())
    g = max(1, -(-total // max_cells))
    if g > 1:
        exact = False
    ngroups = -(-ncell // g)
    # ---- cell arrays ----
    idx = np.repeat(np.arange(len(s)), ngroups)
    first = np.repeat(np.cumsum(ngroups) - ngroups, ngroups)
    r = np.arange(len(idx)) - first
    t1 = ta[idx] + r * g  # first t of the group
    t2 = np.minimum(t1 + g - 1, tb[idx])  # last t of the group
    Ci, mi, si = C[idx], mf[idx], sf[idx]

    def j_last(t):  # largest J with t(J) <= t
        if e == 0:
            return jh[idx].astype(float)
        return np.floor((Delta * t + Ci) / e)

    jl_i, jh_i = jl[idx].astype(float), jh[idx].astype(float)
    lo_j = np.where(r == 0, jl_i, np.minimum(jh_i, j_last(t1 - 1)) + 1)
    # the last run of an s keeps every J up to jh unless t(jh) >= t_cap (those J
    # are bounded by Δ·s·P(N_A >= t_cap − 1) in ``trunc``)
    top_ok = t_of(jh.astype(float), C)[idx] <= t_cap[idx] - 1
    hi_j = np.where((t2 >= tb[idx]) & top_ok, jh_i, np.minimum(jh_i, j_last(t2)))
    # consistent partition of [jl, jh]: cell = (previous boundary, own boundary]
    hi_j = np.clip(hi_j, jl_i - 1, jh_i)
    prev = np.empty(len(hi_j))
    prev[1:] = hi_j[:-1]
    lo_j = np.where(r == 0, jl_i, prev + 1)
    keep = hi_j >= lo_j
    if det:
        PJ = np.where(keep, 1.0, 0.0)
    elif g == 1:
        PJ, extra, mag_extra = _j_parts(lo_j - 1, hi_j, mi, q, idx, ngroups)
        PJ = np.where(keep, np.maximum(PJ, 0.0), 0.0)
    else:
        mid_lo = lo_j > mi * q
        PJ = np.where(
            mid_lo,
            _sf(lo_j, mi, q) - _sf(hi_j + 1, mi, q),
            _cdf(hi_j, mi, q) - _cdf(lo_j - 1, mi, q),
        )
        PJ = np.where(keep, np.maximum(PJ, 0.0), 0.0)
    if g == 1:
        t = t1.astype(float)
        T, SL = _na_tails(t, si, p, idx, ngroups, tb)
        base = Delta * t + Ci - e * hi_j
        if not det:
            extra, mag_extra = e * extra, e * mag_extra
        else:
            extra = np.zeros(len(t))
            mag_extra = extra
        bracket = base * PJ + extra
        val = Delta * SL * PJ + T * bracket
        mag = Delta * SL * PJ + T * (np.abs(base) * PJ + mag_extra)
    else:
        # merged runs: J rounded to the run's low end (upper) / high end (lower)
        jr = lo_j if upper else hi_j
        t = np.clip(t_of(jr, Ci), t_floor[idx], None)
        T = _sf(t, si, p)
        SL = _stop_loss_above(t, si, p)
        base = Delta * t + Ci - e * jr
        val = PJ * (Delta * SL + T * base)
        mag = PJ * (Delta * SL + T * np.abs(base))
    val = np.where(keep, val, 0.0)
    mag = np.where(keep, mag, 0.0)
    per_s = np.bincount(idx, weights=val, minlength=len(s))
    mag_s = np.bincount(idx, weights=mag, minlength=len(s))
    main = float(np.dot(PS, per_s))
    # cell thresholds are computed in floating point; a J can only be misplaced
    # (t off by one) where X at the threshold is within eta_s of 0, so such "risky"
    # cells get eta_s (times their probability <= 1) added / subtracted
    eta_s = 64 * ULP * (Delta * (sf + 1) + np.abs(C) + e * mf)
    eta_c = eta_s[idx]
    jr = hi_j if g == 1 else (lo_j if upper else hi_j)
    x_in = Delta * t + Ci - e * jr
    x_prev = Delta * (t - 1) + Ci - e * (lo_j if g == 1 else jr)
    risky = keep & ((x_in < eta_c) | ((x_prev > -eta_c) & (t > t_floor[idx])))
    risk_s = np.bincount(idx, weights=risky * eta_c, minlength=len(s))
    # PS_err: the block masses' own error (blocks of S only), times the largest |per-s term|
    fp = RHO * 8 * float(np.dot(PS, mag_s)) + float(np.dot(PS, risk_s)) + float(np.dot(PS_err, mag_s))
    if not upper:
        return max(0.0, main - fp), exact
    xmax = n * A + max(shift, 0.0)  # X + c <= n·A + c
    trunc = xmax * drop_s + float(
        np.dot(PS + PS_err, xmax * drop_j + xmax * low_tail + (Delta * sf + max(shift, 0.0)) * high_tail)
    )
    return main + fp + trunc, exact

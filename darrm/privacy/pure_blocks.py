"""The blocks of an exhaustive sweep for Δ = 0 members: the four corners (0,0), (1,1), (hi,lo),
(lo,hi), one block per c = n_(hi,lo) covering every d = n_(lo,hi) ≤ c and s = n_(1,1) at once by
two chained triangular-times-Hankel products (:func:`pure_block`, :func:`sweep_c`): O(K²) memory
per block, which reaches K in the thousands.  The tables come from :mod:`darrm.privacy.sweep_tables`.
"""

from __future__ import annotations

import numpy as np

from .condition import Check, flush_tiny, pair_violation
from .sweep_results import SweepBlockResult, TopCollector, _as_numpy, _worst
from .sweep_tables import PureTables

#: levels per link of the chained products of :func:`pure_block` (:func:`_triangular_hankel_product`)
PURE_CHAIN = 32

def _triangular_hankel_product(B, x, D: int, n: int, xp=np):
    """P[d, s] = Σ_{j≤d} B[d, j]·x[s + j] for d < D, s < n − d, where B[d] = Bin(d, p) (the pmf
    rows of :func:`darrm.numerics.binomial.binomial_rows`): P[d, s] = E[x(s + Bin(d, p))].

    Computed as a **chain** of links of :data:`PURE_CHAIN` levels: with Y = P[d₀] (row d₀),
    P[d₀ + e, s] = Σ_{j≤e} Bin(e, p)_j·Y[s + j] for e ≤ E (Bin(d₀ + e) = Bin(d₀) ⊛ Bin(e)), one
    (E+1)×(E+1) by (E+1)×n product per link instead of a D-term dot product per entry: D·E·n
    multiply-adds instead of D²·n/2 (K = 1001: ~20× fewer).  Entries with s ≥ n − d are not
    multisets: they hold partial sums (the sweep masks them) and never feed a valid entry.

    Rounding (:mod:`darrm.privacy.condition`): Bin(e) carries ≤ 2e roundings and e corner factors
    (≤ 9e·u); a link's dot product of ≤ E + 1 non-negative terms and its products add E + 2.  An
    entry of row d = bE + e has passed b links and one partial link: ≤ (10d + 2b + 2)·u ≤
    (11d + 2)·u, against (10d + 2)·u for the plain product: with X's ≤ (10c + 5)·u and c + d ≤ K
    the total stays ≤ (11K + 7)·u, inside ρ = 16(K + 2)·u.  Each link's row Y is flushed below
    τ (:func:`darrm.privacy.condition.flush_tiny`: no subnormal products); the loss, < τ per
    entry per link, is carried through convex combinations (pmf weights sum to 1), so all links
    together lose < K·τ, inside η's allowance of 8(K + 2)·τ (≤ 4(K + 2)·τ used elsewhere)."""
    E = PURE_CHAIN
    out = np.zeros((D, n)) if xp is np else xp.zeros((D, n), dtype=xp.float64, device=x.device)
    y = x[:n]
    for d0 in range(0, D, E):
        k = min(E, D - 1 - d0)  # rows d0 .. d0 + k from Y = P[d0]
        m = n - d0  # Y's valid length
        ypad = y[:m]
        if xp is np:
            ypad = np.concatenate([ypad, np.zeros(k)])
            st = ypad.strides[0]
            H = np.lib.stride_tricks.as_strided(ypad, shape=(k + 1, m), strides=(st, st), writeable=False)
        else:
            ypad = xp.cat([ypad, xp.zeros(k, dtype=ypad.dtype, device=ypad.device)])
            H = ypad.unfold(0, m, 1)[: k + 1]  # H[j, s] = Y[s + j]
        blk = B[: k + 1, : k + 1] @ H
        out[d0 : d0 + k + 1, :m] = blk
        if k == 0:
            break
        y = flush_tiny(blk[k])
    return out

def pure_block(tables: PureTables, c: int, xp=np) -> tuple:
    """Δ = 0, n_(hi,lo) = c: (Pr[A(D)=1], Pr[A(D′)=1]) as (D, n) arrays over d = n_(lo,hi) < D =
    min(c, K−c) + 1 and s = n_(1,1) < n = K − c + 1 (entries with s + d > K − c are not multisets):

        Pr[A(D)=1]  = V(s, c, d) = Σ_{j≤d} Bin(d, lo)_j·X_hi[c, s+j],
        Pr[A(D′)=1] = V(s, d, c) = Σ_{i≤d} Bin(d, hi)_i·X_lo[c, s+i]

    (α′ = z^s·Bin(d, hi)⊛Bin(c, lo): the same triangular-times-Hankel product with hi and lo
    exchanged).  Both are products of non-negative numbers, so :mod:`darrm.privacy.condition`'s
    bound holds; O(K²) memory per c, so blocks run in parallel sharing only the tables."""
    K = tables.K
    n, D = K - c + 1, min(c, K - c) + 1
    pa = _triangular_hankel_product(tables.Blo, tables.Xhi[c], D, n, xp)
    pb = _triangular_hankel_product(tables.Bhi, tables.Xlo[c], D, n, xp)
    return pa, pb

def sweep_c(
    tables: PureTables, c: int, chk: Check, top: int, threshold: float, per_block: int | None = None,
    xp=np,
) -> SweepBlockResult:
    """Δ = 0: every multiset with n_(hi,lo) = c and n_(lo,hi) = d ≤ c (swap symmetry covers d > c),
    all d at once (:func:`pure_block`; the entries that are not multisets are masked out)."""
    K = tables.K
    n = K - c + 1
    D = min(c, K - c) + 1
    d = np.arange(D)
    pa, pb = pure_block(tables, c, xp)
    viol = pair_violation(pa, pb, chk, xp=xp)
    mask = np.arange(n)[None, :] > (n - 1 - d)[:, None]
    viol[mask if xp is np else xp.from_numpy(mask).to(viol.device)] = -np.inf
    checked = int(np.sum((n - d) * np.where(d < c, 2, 1)))
    col = TopCollector(top, threshold, 4)

    def select(k: int) -> tuple[np.ndarray, np.ndarray]:
        p = n if per_block is None else min(per_block, n)
        v = _as_numpy(viol, xp)
        if p >= n:
            rows, cols = np.divmod(_worst(v.ravel(), k), n)
        elif p == 1:  # the worst of each (c, d) pair (argmax: ~10× faster than a partition)
            cols = v.argmax(axis=1)
            keep = _worst(v[d, cols], k)
            rows, cols = d[keep], cols[keep]
        else:  # at most p per (c, d) pair: cuts spread over the corner space
            part = np.argpartition(v, -p, axis=1)[:, -p:]
            rows = np.repeat(d, p)
            cols = part.ravel()
            keep = _worst(v[rows, cols], k)
            rows, cols = rows[keep], cols[keep]
        vv = v[rows, cols]
        ok = np.isfinite(vv)
        rows, cols, vv = rows[ok], cols[ok], vv[ok]
        return np.stack([K - cols - c - rows, cols, np.full_like(cols, c), rows], axis=1), vv

    col.add(float(viol.max()), select)
    return col.result(checked)

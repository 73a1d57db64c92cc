"""Exact, memory-bounded sweep of the DP inequalities over ALL corner multisets.

The output probability Pr[A(D)=1] = α·w with w_l = γ(l)·1{l≥mid} + ½(1−γ(l)) depends on a
corner multiset only through the vote-count pmf α, and α factorises over the corners
(the generating function of a Poisson binomial is ∏_i (1 − p_i + p_i z)).  With the
corner order of :func:`darrm.privacy.corners.corners` — (0,0), (1,1), (0,Δ), (Δ,0), (1−Δ,1),
(1,1−Δ), (hi,lo), (lo,hi) with hi = (e^ε+Δ)/(e^ε+1), lo = (1−Δ)/(e^ε+1) — and counts n_0..n_7:

    α(z)  = z^{n_1+n_5} · (1−Δ+Δz)^{n_3} · (Δ+(1−Δ)z)^{n_4} · (1−hi+hi·z)^{n_6} · (1−lo+lo·z)^{n_7}
    α′(z) = z^{n_1+n_4} · (1−Δ+Δz)^{n_2} · (Δ+(1−Δ)z)^{n_5} · (1−hi+hi·z)^{n_7} · (1−lo+lo·z)^{n_6}

(corners with p ∈ {0, 1} are factors 1 and z).  So both probabilities are values of ONE
table  V(s, a, b, c, d) = Σ_l w_l·[z^l] z^s·Bin(a,Δ)·Bin(b,1−Δ)·Bin(c,hi)·Bin(d,lo)
over 5-tuples with s+a+b+c+d ≤ K (C(K+5,5) entries instead of C(K+7,7) multisets):

    V(s,a,b,c,d) = g_{ab}ᵀ · Hank_s(w) · h_{cd},   g_{ab} = Bin(a,Δ)⊛Bin(b,1−Δ),  h_{cd} = Bin(c,hi)⊛Bin(d,lo),

computed as one matrix product.  The sweep then visits every multiset (n_6, n_7 in an outer
loop, the other six counts vectorised) and gathers Pr[A(D)=1] = V(n_1+n_5, n_3, n_4, n_6, n_7)
and Pr[A(D′)=1] = V(n_1+n_4, n_2, n_5, n_7, n_6): a few arithmetic operations per multiset.
For Δ = 0 only (0,0), (1,1), (hi,lo), (lo,hi) exist (a = b = 0) and
:func:`build_pure_tables` stores V(s, c, d) per c as matrices of size (K−c+1)², built with
two matrix products, which reaches K in the thousands.

Every value is a sum of products of non-negative numbers (binomial pmfs by the recurrence of
:func:`darrm.numerics.binomial.binomial_rows`, weights in [0, 1]), so there is no cancellation
before the final difference and each probability is within the relative bound ρ(K) of
:mod:`darrm.privacy.condition`; the comparison uses that module's rigorous test.  Only output 1 is
evaluated: for a symmetric γ, Pr[A = 0] at a multiset equals Pr[A = 1] at its reflection
(p → 1 − p maps the corner set onto itself, :func:`darrm.privacy.corners.complements`), which the sweep
visits too, so both outputs are covered without ever forming 1 − Pr[A = 1].  Tests compare the
sweep with the direct per-multiset computation of :func:`darrm.privacy.certify.certify_reference`,
which evaluates both outputs separately.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

from ..backends.devices import TorchDevice
from ..backends.executors import Executor, SerialExecutor
from ..mechanism import output_weights
from ..numerics.binomial import binomial_rows
from ..params import PrivacyParams
from .condition import Check, pair_violation
from .corners import count_vectors


@dataclass(frozen=True)
class SweepTables:
    """The table V (rows: (s,a,b) triples, columns: (c,d) pairs) and its rank look-ups."""

    K: int
    V: np.ndarray  # shape (n_pairs, n_triples): V[r2(c,d), r3(s,a,b)]
    r3: np.ndarray  # dense (K+1)^3 look-up of triple ranks (-1 where s+a+b > K)
    r2: np.ndarray  # dense (K+1)^2 look-up of pair ranks


def _ranks(shape_limit: int, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """All non-negative integer tuples of length ``dims`` with sum ≤ limit, and a dense rank table."""
    tuples = count_vectors(shape_limit, dims + 1)[:, :dims]  # the slack coordinate drops
    lut = -np.ones((shape_limit + 1,) * dims, dtype=np.int64)
    lut[tuple(tuples.T)] = np.arange(tuples.shape[0])
    return tuples, lut


def _conv_table(K: int, p: float, q: float, pairs: np.ndarray) -> np.ndarray:
    """Rows Bin(x, p) ⊛ Bin(y, q) padded to length K+1, for each (x, y) in ``pairs``;
    q = 1 − p here (the pairs (Δ, 1−Δ) and (hi, lo)), so each is the other's complement."""
    out = np.zeros((pairs.shape[0], K + 1))
    tab_p = binomial_rows(K, p, q)
    tab_q = binomial_rows(K, q, p)
    for i, (x, y) in enumerate(pairs):
        v = np.convolve(tab_p[x, : x + 1], tab_q[y, : y + 1])
        out[i, : v.shape[0]] = v
    return out


def build_tables(gamma: np.ndarray, params: PrivacyParams) -> SweepTables:
    """Δ > 0: V(s,a,b,c,d) for all 5-tuples with sum ≤ K (module docstring)."""
    K = params.K
    e = math.exp(params.eps)
    Delta = params.member_delta
    hi, lo = (e + Delta) / (e + 1.0), (1.0 - Delta) / (e + 1.0)
    w = output_weights(np.asarray(gamma, dtype=np.float64))
    pairs, r2 = _ranks(K, 2)
    H = _conv_table(K, hi, lo, pairs)  # (n_pairs, K+1), independent of γ
    triples, r3 = _ranks(K, 3)
    G = _conv_table(K, Delta, 1.0 - Delta, pairs)  # (a, b) pairs share the (c, d) ranking
    g_rows = G[r2[triples[:, 1], triples[:, 2]]]
    # U[t, j] = Σ_i g_t[i] · w[s_t + i + j]  (w padded with zeros beyond K)
    wpad = np.concatenate([w, np.zeros(2 * K + 2)])
    idx = np.arange(K + 1)
    U = np.empty((triples.shape[0], K + 1))
    for s in range(K + 1):
        sel = triples[:, 0] == s
        if np.any(sel):
            U[sel] = g_rows[sel] @ wpad[s + idx[:, None] + idx[None, :]]  # Hankel of w from s
    V = H @ U.T  # (n_pairs, n_triples)
    return SweepTables(K=K, V=np.ascontiguousarray(V), r3=r3, r2=r2)


@dataclass(frozen=True)
class SweepBlockResult:
    max_violation: float
    candidates: np.ndarray  # (n, 8) or (n, 4) count vectors
    violations: np.ndarray  # (n,) their violations
    checked: int


class TopCollector:
    """Running maximum and the (up to) ``top`` worst multisets above ``threshold``."""

    def __init__(self, top: int, threshold: float, C: int, per_block: int | None = None):
        self.top, self.threshold, self.C = top, threshold, C
        # at most this many candidates from one block: fewer, more diverse cuts
        self.per_block = top if per_block is None else min(top, per_block)
        self.best = -np.inf
        self.cands: list[np.ndarray] = []
        self.viols: list[np.ndarray] = []

    def add(self, m: float, select: Callable[[int], tuple[np.ndarray, np.ndarray]]) -> None:
        """``m``: the block's max; ``select(k)`` returns (counts, violations) of its k worst."""
        self.best = max(self.best, m)
        if self.top > 0 and m > self.threshold:
            counts, vv = select(self.per_block)
            keep = vv > self.threshold
            self.cands.append(np.asarray(counts, dtype=np.int64)[keep])
            self.viols.append(vv[keep])

    def result(self, checked: int) -> "SweepBlockResult":
        cand = np.concatenate(self.cands) if self.cands else np.zeros((0, self.C), dtype=np.int64)
        vv = np.concatenate(self.viols) if self.viols else np.zeros(0)
        if cand.shape[0] > self.top > 0:
            keep = np.argpartition(vv, -self.top)[-self.top :]
            cand, vv = cand[keep], vv[keep]
        return SweepBlockResult(self.best, cand, vv, checked)


def _worst(viol: np.ndarray, k: int) -> np.ndarray:
    k = min(k, viol.shape[0])
    return np.argpartition(viol, -k)[-k:]


def _top(viol, k: int, xp=np) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of the k largest entries of a 1-d array, as numpy, for numpy or torch."""
    if xp is np:
        sel = _worst(viol, k)
        return sel, viol[sel]
    vals, idx = xp.topk(viol, min(k, viol.numel()))
    return idx.cpu().numpy(), vals.cpu().numpy()


def _on(tables, a: np.ndarray, xp=np):
    """``a`` as an array of the tables' library and device (int64 indices for torch)."""
    if xp is np:
        return a
    return xp.from_numpy(np.ascontiguousarray(a, dtype=np.int64)).to(tables.V.device)


#: largest number of inner count vectors handled at once by :func:`sweep_R` (memory bound:
#: ~60 bytes each for the counts, ranks, probabilities and violations)
SWEEP_CHUNK = 1 << 22


def _inner_chunks(R: int) -> Iterator[np.ndarray]:
    """All 6-tuples of counts summing to R, in chunks of at most ~:data:`SWEEP_CHUNK` rows
    (split by the first count when needed; K = 101 has 1.1e8 of them for R = K)."""
    if math.comb(R + 5, 5) <= SWEEP_CHUNK:
        yield count_vectors(R, 6)
        return
    for n0 in range(R + 1):
        tail = count_vectors(R - n0, 5)
        yield np.concatenate([np.full((tail.shape[0], 1), n0, dtype=tail.dtype), tail], axis=1)


def sweep_R(
    tables: SweepTables, R: int, chk: Check, top: int, threshold: float, per_block: int | None = None,
    xp=np,
) -> SweepBlockResult:
    """Δ > 0: every multiset with n_6 + n_7 = K − R (n_6, n_7: counts of (hi,lo), (lo,hi)),
    streamed in memory-bounded chunks of the other six counts.  ``xp`` is numpy, or torch
    with ``tables.V`` and ``tables.r3`` on a torch device (:mod:`darrm.backends.devices`)."""
    K = tables.K
    col = TopCollector(top, threshold, 8, per_block)
    cd = K - R
    # Swap symmetry: swap(v) exchanges n_6 ↔ n_7 (and n_2 ↔ n_3, n_4 ↔ n_5) and its four
    # values are v's with the directions exchanged, which we evaluate anyway; so the
    # blocks with n_6 < n_7 repeat blocks with n_6 > n_7 and are skipped.
    cs = range((cd + 1) // 2, cd + 1)
    best = {c: -np.inf for c in cs}
    found: dict[int, list] = {c: [] for c in cs}
    checked = 0
    for inner in _inner_chunks(R):
        n1, n2, n3, n4, n5 = (_on(tables, inner[:, i], xp) for i in (1, 2, 3, 4, 5))
        ia = tables.r3[n1 + n5, n3, n4]
        ib = tables.r3[n1 + n4, n2, n5]
        checked += inner.shape[0] * (cd + 1)  # covered, incl. the swapped blocks
        for c in cs:
            d = cd - c
            pa = tables.V[int(tables.r2[c, d])][ia]  # Pr[A(D)=1]
            pb = tables.V[int(tables.r2[d, c])][ib]  # Pr[A(D′)=1]
            viol = pair_violation(pa, pb, chk, xp=xp)
            m = float(viol.max())
            best[c] = max(best[c], m)
            if col.per_block > 0 and m > threshold:
                sel, vv = _top(viol, col.per_block, xp)
                n = sel.shape[0]
                counts = np.concatenate([inner[sel], np.full((n, 1), c), np.full((n, 1), d)], axis=1)
                found[c].append((counts, vv))
    for c in cs:

        def select(k: int, c=c) -> tuple[np.ndarray, np.ndarray]:
            counts = np.concatenate([f[0] for f in found[c]])
            vv = np.concatenate([f[1] for f in found[c]])
            keep = _worst(vv, k)
            return counts[keep], vv[keep]

        col.add(best[c], select)
    return col.result(checked)


@dataclass(frozen=True)
class SweepResult:
    """Largest violation over all multisets (probability units), and the top violators."""

    max_violation: float
    candidates: np.ndarray
    violations: np.ndarray
    checked: int


def merge(results: Iterable[SweepBlockResult], top: int) -> SweepResult:
    best, checked = -np.inf, 0
    cands, viols = [], []
    for r in results:
        best = max(best, r.max_violation)
        checked += r.checked
        if r.candidates.shape[0]:
            cands.append(r.candidates)
            viols.append(r.violations)
    if cands:
        cand, vv = np.concatenate(cands), np.concatenate(viols)
        order = np.argsort(-vv)[: max(top, 0)]
        cand, vv = cand[order], vv[order]
    else:
        cand, vv = np.zeros((0, 0), dtype=np.int64), np.zeros(0)
    return SweepResult(best, cand, vv, checked)


#: row blocks of the triangular products in :func:`build_pure_tables`
PURE_BLOCKS = 8


@dataclass(frozen=True)
class PureTables:
    """Δ = 0: Z[c][d, s] = Pr[A=1] for α = z^s·Bin(c, hi)⊛Bin(d, lo), d + s ≤ K − c."""

    K: int
    Z: list


def build_pure_tables(gamma: np.ndarray, params: PrivacyParams) -> PureTables:
    """Δ = 0 tables in O(K⁴/4) flops and K³/3 floats (pure DP has 4 corners: (0,0), (1,1),
    (hi,lo), (lo,hi), so α = z^s·Bin(c,hi)⊛Bin(d,lo) with s = n_(1,1), c = n_(hi,lo), d = n_(lo,hi)).

    X[c, t] = Σ_i Bin(c,hi)_i·w[t+i]  (one matrix product with the Hankel matrix of w), then
    Z_c[d, s] = Σ_j Bin(d,lo)_j·X[c, s+j]  (one matrix product per c, of size K−c+1).
    """
    K = params.K
    e = math.exp(params.eps)
    hi, lo = e / (e + 1.0), 1.0 / (e + 1.0)
    w = output_weights(np.asarray(gamma, dtype=np.float64))
    wpad = np.concatenate([w, np.zeros(2 * K + 2)])
    idx = np.arange(K + 1)
    X = binomial_rows(K, hi, lo) @ wpad[idx[:, None] + idx[None, :]]  # (c, t), t = 0..K
    Xpad = np.concatenate([X, np.zeros((K + 1, K + 1))], axis=1)
    Blo = binomial_rows(K, lo, hi)
    Z = []
    for c in range(K + 1):
        n = K - c + 1
        j = np.arange(n)
        H = Xpad[c][j[:, None] + j[None, :]]  # Hankel: H[j, s] = X[c, s + j]
        Zc = np.zeros((n, n))
        # Only the anti-triangle s ≤ n−1−d is ever read (s counts the (1,1) corners, so
        # d + s ≤ K − c), and Bin(d, lo) is zero beyond j = d: row block [d0, d1) needs
        # j < d1 and s < n − d0.  Skipping the rest is exact (those terms are structural
        # zeros or unread) and cuts the flops from n³ to about n³/4 with 8 blocks.
        edges = np.unique(np.linspace(0, n, min(n, PURE_BLOCKS) + 1).astype(int))
        for d0, d1 in zip(edges[:-1], edges[1:]):
            Zc[d0:d1, : n - d0] = Blo[d0:d1, :d1] @ H[:d1, : n - d0]
        Z.append(Zc)
    return PureTables(K, Z)


def sweep_c(
    tables: PureTables, c: int, chk: Check, top: int, threshold: float, per_block: int | None = None,
    xp=np,
) -> SweepBlockResult:
    """Δ = 0: every multiset with n_(hi,lo) = c and n_(lo,hi) = d ≤ c (swap symmetry covers d > c),
    all d at once: rows d, columns s = n_(1,1) ≤ K − c − d (the rest is masked out).  ``xp``:
    numpy, or torch with the Z matrices on a torch device."""
    K = tables.K
    n = K - c + 1
    D = min(c, K - c) + 1
    d = np.arange(D)
    pa = tables.Z[c][:D, :n]  # Pr[A(D)=1]
    # Pr[A(D′)=1]: the hi/lo counts exchange under p ↔ p′, so it is row c of Z_d
    pb = xp.stack([tables.Z[j][c, :n] for j in range(D)])
    viol = pair_violation(pa, pb, chk, xp=xp)
    mask = np.arange(n)[None, :] > (n - 1 - d)[:, None]
    viol[mask if xp is np else xp.from_numpy(mask).to(viol.device)] = -np.inf
    checked = int(np.sum((n - d) * np.where(d < c, 2, 1)))
    col = TopCollector(top, threshold, 4)

    def select(k: int) -> tuple[np.ndarray, np.ndarray]:
        p = n if per_block is None else min(per_block, n)
        v = viol if xp is np else viol.cpu().numpy()
        if p >= n:
            rows, cols = np.divmod(_worst(v.ravel(), k), n)
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


def _sweep_task(shared: tuple, R: int) -> SweepBlockResult:
    tables, chk, top, threshold, per_block = shared
    return sweep_R(tables, R, chk, top, threshold, per_block)


def _sweep_pure_task(shared: tuple, c: int) -> SweepBlockResult:
    tables, chk, top, threshold, per_block = shared
    return sweep_c(tables, c, chk, top, threshold, per_block)


def sweep(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    top: int = 0,
    threshold: float = 0.0,
    executor: Executor | TorchDevice | None = None,
    progress: bool | None = None,
    diverse: bool = True,
) -> SweepResult:
    """Largest violation of Pr[A(D)=o] ≤ e^{mε}Pr[A(D′)=o] + δ over every corner multiset,
    both outputs and both directions, as the rigorous bound v̂ of :mod:`darrm.privacy.condition`
    (v̂ ≤ 0 proves the exact violation ≤ 0); with ``top`` > 0 also the (up to) ``top`` multisets
    violating by more than ``threshold``, worst first (for constraint generation).

    ``diverse`` (Δ > 0): take at most one candidate per (n_(hi,lo), n_(lo,hi)) block, so the
    cuts spread over the corner space (measured: 18 → 7 rounds at K = 41); the maximum is
    exact either way."""
    g = np.asarray(gamma, dtype=np.float64)
    if isinstance(executor, TorchDevice):
        return _sweep_on_device(g, params, executor, top=top, threshold=threshold, diverse=diverse)
    K = params.K
    if params.member_delta > 0:
        tables: object = build_tables(g, params)
        fn, items = _sweep_task, list(range(K, -1, -1))  # biggest blocks first
    else:
        tables = build_pure_tables(g, params)
        fn, items = _sweep_pure_task, list(range(K + 1))
    shared = (tables, params.check, int(top), float(threshold), 1 if diverse else None)
    ex = executor or SerialExecutor()
    total = math.comb(K + (7 if params.member_delta > 0 else 3), K)
    bar = tqdm(total=total, desc="sweep", unit="multiset", unit_scale=True, leave=False,
               disable=(not progress) if progress is not None else None)
    results = []
    with bar:
        for r in ex.run(fn, shared, items):
            results.append(r)
            bar.update(r.checked)
    return merge(results, top)


def _sweep_on_device(
    gamma: np.ndarray, params: PrivacyParams, dev: TorchDevice, *, top: int, threshold: float, diverse: bool
) -> SweepResult:
    """:func:`sweep` with the tables on a torch device: the same block functions
    (:func:`sweep_R`, :func:`sweep_c`, memory-bounded chunks included) with ``xp`` = torch."""
    K, chk = params.K, params.check
    per_block = 1 if diverse else None
    if params.member_delta > 0:
        T = build_tables(gamma, params)
        Tt = SweepTables(K, dev.put(T.V), dev.put(T.r3), T.r2)
        results = [sweep_R(Tt, R, chk, top, threshold, per_block, xp=dev.xp) for R in range(K, -1, -1)]
    else:
        P = build_pure_tables(gamma, params)
        Pt = PureTables(K, [dev.put(z) for z in P.Z])
        results = [sweep_c(Pt, c, chk, top, threshold, per_block, xp=dev.xp) for c in range(K + 1)]
    return merge(results, top)

"""Exact, memory-bounded sweep of the DP inequalities over ALL corner multisets.

The output probability Pr[A(D)=1] = α·w with w_l = γ(l)·1{l≥mid} + ½(1−γ(l)) depends on a
corner multiset only through the vote-count pmf α, and α factorises over the corners
(the generating function of a Poisson binomial is ∏_i (1 − p_i + p_i z)).  With the
corner order of :func:`darrm.corners.corners` — (0,0), (1,1), (0,Δ), (Δ,0), (1−Δ,1),
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
For Δ = 0 only (0,0), (1,1), (hi,lo), (lo,hi) exist and a = b = 0.

Every value is a sum of products of non-negative numbers (binomial pmfs and weights in
[0, 1]), so there is no cancellation before the final difference; float64 rounding is
O(K·1e-16).  Tests compare the sweep with the direct per-multiset computation of
:func:`darrm.certify.certify_reference`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING
from dataclasses import dataclass

import numpy as np

from .corners import count_vectors
from .mechanism import output_weights
from .params import PrivacyParams
from .poisson_binomial import binomial_pmf

if TYPE_CHECKING:
    from .executor import Executor


@dataclass(frozen=True)
class SweepTables:
    """The table V (rows: (s,a,b) triples, columns: (c,d) pairs) and its rank look-ups."""

    K: int
    eight: bool  # Δ > 0 (8 corners) or Δ = 0 (4 corners)
    V: np.ndarray  # shape (n_pairs, n_triples): V[r2(c,d), r3(s,a,b)]
    r3: np.ndarray  # dense (K+1)^3 look-up of triple ranks (-1 where s+a+b > K); Δ=0: (K+1,1,1)
    r2: np.ndarray  # dense (K+1)^2 look-up of pair ranks


def _ranks(shape_limit: int, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """All non-negative integer tuples of length ``dims`` with sum ≤ limit, and a dense rank table."""
    tuples = count_vectors(shape_limit, dims + 1)[:, :dims]  # the slack coordinate drops
    lut = -np.ones((shape_limit + 1,) * dims, dtype=np.int64)
    lut[tuple(tuples.T)] = np.arange(tuples.shape[0])
    return tuples, lut


def _conv_table(K: int, p: float, q: float, pairs: np.ndarray) -> np.ndarray:
    """Rows Bin(x, p) ⊛ Bin(y, q) padded to length K+1, for each (x, y) in ``pairs``."""
    out = np.zeros((pairs.shape[0], K + 1))
    tab_p = [binomial_pmf(n, p) for n in range(K + 1)]
    tab_q = [binomial_pmf(n, q) for n in range(K + 1)]
    for i, (x, y) in enumerate(pairs):
        v = np.convolve(tab_p[x], tab_q[y])
        out[i, : v.shape[0]] = v
    return out


def build_tables(gamma: np.ndarray, params: PrivacyParams) -> SweepTables:
    """V(s,a,b,c,d) for all 5-tuples with sum ≤ K (module docstring)."""
    K = params.K
    e = math.exp(params.eps)
    Delta = params.Delta
    hi, lo = (e + Delta) / (e + 1.0), (1.0 - Delta) / (e + 1.0)
    w = output_weights(np.asarray(gamma, dtype=np.float64))
    eight = Delta > 0
    pairs, r2 = _ranks(K, 2)
    H = _conv_table(K, hi, lo, pairs)  # (n_pairs, K+1)
    if eight:
        triples, r3 = _ranks(K, 3)
        ab, rab = _ranks(K, 2)
        G = _conv_table(K, Delta, 1.0 - Delta, ab)
        g_rows = G[rab[triples[:, 1], triples[:, 2]]]
    else:
        triples = np.zeros((K + 1, 3), dtype=np.int64)
        triples[:, 0] = np.arange(K + 1)
        r3 = np.arange(K + 1, dtype=np.int64).reshape(K + 1, 1, 1)
        g_rows = np.zeros((K + 1, K + 1))
        g_rows[:, 0] = 1.0
    # U[t, j] = Σ_i g_t[i] · w[s_t + i + j]  (w padded with zeros beyond K)
    wpad = np.concatenate([w, np.zeros(2 * K + 2)])
    idx = np.arange(K + 1)
    U = np.empty((triples.shape[0], K + 1))
    for s in range(K + 1):
        sel = triples[:, 0] == s
        if np.any(sel):
            U[sel] = g_rows[sel] @ wpad[s + idx[:, None] + idx[None, :]]  # Hankel of w from s
    V = H @ U.T  # (n_pairs, n_triples)
    return SweepTables(K=K, eight=eight, V=np.ascontiguousarray(V), r3=r3, r2=r2)


@dataclass(frozen=True)
class SweepBlockResult:
    max_violation: float
    candidates: np.ndarray  # (n, 8) or (n, 4) count vectors
    violations: np.ndarray  # (n,) their violations
    checked: int


def _inner_counts(R: int, eight: bool) -> np.ndarray:
    """Counts of the corners other than (hi,lo), (lo,hi) with sum R: (n, 6) or (n, 2)."""
    return count_vectors(R, 6 if eight else 2)


def sweep_R(tables: SweepTables, R: int, e_meps: float, delta: float, top: int, threshold: float) -> SweepBlockResult:
    """Every multiset with n_6 + n_7 = K − R (n_6, n_7: counts of (hi,lo), (lo,hi))."""
    K = tables.K
    inner = _inner_counts(R, tables.eight)
    if tables.eight:
        n1, n2, n3, n4, n5 = (inner[:, i] for i in (1, 2, 3, 4, 5))
        ia = tables.r3[n1 + n5, n3, n4]
        ib = tables.r3[n1 + n4, n2, n5]
    else:
        ia = ib = tables.r3[inner[:, 1], 0, 0]
    best = -np.inf
    cands: list[np.ndarray] = []
    viols: list[np.ndarray] = []
    cd = K - R
    # Swap symmetry: swap(v) exchanges n_6 ↔ n_7 (and n_2 ↔ n_3, n_4 ↔ n_5) and its four
    # values are v's with the directions exchanged, which we evaluate anyway; so the
    # blocks with n_6 < n_7 repeat blocks with n_6 > n_7 and are skipped.
    for c in range((cd + 1) // 2, cd + 1):
        d = cd - c
        pa = tables.V[tables.r2[c, d]][ia]  # Pr[A(D)=1]
        pb = tables.V[tables.r2[d, c]][ib]  # Pr[A(D′)=1]
        v1 = pa - e_meps * pb
        v2 = pb - e_meps * pa
        v3 = (1.0 - pa) - e_meps * (1.0 - pb)
        v4 = (1.0 - pb) - e_meps * (1.0 - pa)
        viol = np.maximum(np.maximum(v1, v2), np.maximum(v3, v4)) - delta
        m = float(viol.max())
        best = max(best, m)
        if top > 0 and m > threshold:
            k = min(top, viol.shape[0])
            sel = np.argpartition(viol, -k)[-k:]
            sel = sel[viol[sel] > threshold]
            full = np.concatenate([inner[sel], np.full((sel.shape[0], 1), c), np.full((sel.shape[0], 1), d)], axis=1)
            cands.append(full.astype(np.int64))
            viols.append(viol[sel])
    C = 8 if tables.eight else 4
    cand = np.concatenate(cands) if cands else np.zeros((0, C), dtype=np.int64)
    vv = np.concatenate(viols) if viols else np.zeros(0)
    if cand.shape[0] > top > 0:
        keep = np.argpartition(vv, -top)[-top:]
        cand, vv = cand[keep], vv[keep]
    return SweepBlockResult(best, cand, vv, inner.shape[0] * (cd + 1))  # covered, incl. swapped blocks


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


def _sweep_task(shared: tuple, R: int) -> SweepBlockResult:
    tables, e_meps, delta, top, threshold = shared
    return sweep_R(tables, R, e_meps, delta, top, threshold)


def sweep(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    top: int = 0,
    threshold: float = 0.0,
    executor: "Executor | None" = None,
    progress: bool | None = None,
) -> SweepResult:
    """Largest violation of Pr[A(D)=o] ≤ e^{mε}Pr[A(D′)=o] + δ over every corner multiset,
    both outputs and both directions; with ``top`` > 0 also the (up to) ``top`` multisets
    violating by more than ``threshold``, worst first (for constraint generation)."""
    from tqdm.auto import tqdm

    from .executor import SerialExecutor

    tables = build_tables(np.asarray(gamma, dtype=np.float64), params)
    shared = (tables, params.exp_meps, float(params.delta), int(top), float(threshold))
    ex = executor or SerialExecutor()
    items = list(range(params.K, -1, -1))  # biggest blocks first
    K, eight = params.K, tables.eight
    total = math.comb(K + (7 if eight else 3), K)
    bar = tqdm(total=total, desc="sweep", unit="multiset", unit_scale=True, leave=False,
               disable=(not progress) if progress is not None else None)
    results = []
    with bar:
        for r in ex.run(_sweep_task, shared, items):
            results.append(r)
            bar.update(r.checked)
    return merge(results, top)

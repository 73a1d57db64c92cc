"""The γ tables every block of an exhaustive sweep shares (:mod:`darrm.privacy.sweep` explains the
reduction): :class:`SweepTables` for Δ > 0 (C(K+4, 4) floats, the values V(s, a, b, c, d) as one
matrix product per block) and :class:`PureTables` for Δ = 0 (4(K+1)² floats).

Every entry is a sum of products of non-negative numbers (binomial pmfs by the recurrence of
:func:`darrm.numerics.binomial.binomial_rows`, weights in [0, 1]), flushed below τ
(:func:`darrm.privacy.condition.flush_tiny`), so the rounding bound ρ(K) of
:mod:`darrm.privacy.condition` holds for every value the blocks form from them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..mechanism import output_weights
from ..numerics.binomial import binomial_rows
from ..params import PrivacyParams
from .condition import flush_tiny
from .corners import count_vectors
from .per_r_cache import per_r_cache

if TYPE_CHECKING:
    from .sweep_recipe import SweepRecipe


def _on(like, a: np.ndarray, xp=np):
    """``a`` as an array of ``like``'s library and device (int64 indices for torch)."""
    if xp is np:
        return a
    # a copy (torch.tensor), not a view (from_numpy): cached index arrays are read-only, which
    # torch warns about for views; these arrays are small
    return xp.tensor(np.asarray(a, dtype=np.int64), device=like.device)

@functools.lru_cache(maxsize=4)
def _pair_convolutions(K: int, p: float, q: float) -> tuple[np.ndarray, np.ndarray]:
    """γ-free, so cached across the rounds of a solve: the rows Bin(x, p) ⊛ Bin(y, q) of every
    pair x + y ≤ K, padded to length K+1, and their rank look-up; q = 1 − p is given (the pairs
    (Δ, 1−Δ) and (hi, lo) are each other's complements).  Read-only arrays."""
    pairs, lut = _ranks(K, 2)
    out = np.zeros((pairs.shape[0], K + 1))
    tab_p = flush_tiny(binomial_rows(K, p, q))
    tab_q = flush_tiny(binomial_rows(K, q, p))
    for i, (x, y) in enumerate(pairs):
        v = np.convolve(tab_p[x, : x + 1], tab_q[y, : y + 1])
        out[i, : v.shape[0]] = v
    flush_tiny(out)
    out.flags.writeable = False
    lut.flags.writeable = False
    return out, lut

def _ranks(shape_limit: int, dims: int) -> tuple[np.ndarray, np.ndarray]:
    """All non-negative integer tuples of length ``dims`` with sum ≤ limit, and a dense rank table."""
    tuples = count_vectors(shape_limit, dims + 1)[:, :dims]  # the slack coordinate drops
    lut = -np.ones((shape_limit + 1,) * dims, dtype=np.int64)
    lut[tuple(tuples.T)] = np.arange(tuples.shape[0])
    return tuples, lut

@dataclass(frozen=True)
class SweepTables:
    """Δ > 0, one γ: what every block of a sweep shares (module docstring).

    U[σ][t, j] = Σ_i g_t[i]·w[s_t + i + j] for the triples t = (s, a, b) with s + a + b = σ, in
    the order (s, a) (b = σ − s − a), and j = 0..K−σ (a multiset whose triple sums to σ has
    c + d ≤ K − σ): C(K+4, 4) floats in all.  H, lut: the γ-free rows Bin(c, hi) ⊛ Bin(d, lo)
    and their rank look-up."""

    K: int
    U: tuple
    H: np.ndarray
    lut: np.ndarray

    @property
    def floats(self) -> int:
        return int(sum(u.shape[0] * u.shape[1] for u in self.U))

def build_tables(gamma: np.ndarray, params: PrivacyParams) -> SweepTables:
    """Δ > 0: the tables U of :class:`SweepTables` for ``gamma`` (≈ K⁵/60 multiply-adds) and the
    γ-free convolution rows (cached across calls with the same K, ε, Δ)."""
    K = params.K
    e = math.exp(params.eps)
    Delta = params.member_delta
    hi, lo = (e + Delta) / (e + 1.0), (1.0 - Delta) / (e + 1.0)
    w = output_weights(np.asarray(gamma, dtype=np.float64))
    wpad = np.concatenate([w, np.zeros(K + 1)])
    G, glut = _pair_convolutions(K, Delta, 1.0 - Delta)
    H, hlut = _pair_convolutions(K, hi, lo)
    U = []
    for sigma in range(K + 1):
        j = np.arange(K - sigma + 1)
        parts = []
        for s in range(sigma + 1):
            q = sigma - s  # a + b
            a = np.arange(q + 1)
            g = G[glut[a, q - a], : q + 1]  # rows Bin(a, Δ) ⊛ Bin(q − a, 1 − Δ)
            parts.append(g @ wpad[s + a[:, None] + j[None, :]])  # Σ_i g[i]·w[s + i + j]
        U.append(flush_tiny(np.concatenate(parts)))
    return SweepTables(K=K, U=tuple(U), H=H, lut=hlut)

@dataclass(frozen=True)
class PureTables:
    """Δ = 0, one γ: X_hi[c, t] = Σ_i Bin(c, hi)_i·w[t+i] and X_lo[c, t] = Σ_i Bin(c, lo)_i·w[t+i]
    for t ≤ K − c (the entries the sweep reads; the others are 0), and the pmf rows Bin(n, hi),
    Bin(n, lo): 4(K+1)² floats."""

    K: int
    Xhi: Any
    Xlo: Any
    Bhi: Any
    Blo: Any

@functools.lru_cache(maxsize=4)
def _pure_pmf_rows(K: int, p: float, q: float) -> np.ndarray:
    """Bin(n, p) rows for n ≤ K (:func:`darrm.numerics.binomial.binomial_rows`), flushed below τ;
    γ-free, so cached across the rounds of a solve.  Read-only."""
    B = flush_tiny(binomial_rows(K, p, q))
    B.flags.writeable = False
    return B

#: row blocks of the products that build :class:`PureTables` (each skips what its rows never use)
PURE_TABLE_BLOCKS = 32

def build_pure_tables(gamma: np.ndarray, params: PrivacyParams) -> PureTables:
    """Δ = 0 (four corners (0,0), (1,1), (hi,lo), (lo,hi); α = z^s·Bin(c,hi)⊛Bin(d,lo) with
    s = n_(1,1), c = n_(hi,lo), d = n_(lo,hi)): X_hi and X_lo by matrix products with the
    Hankel matrix of w, in row blocks that skip the structural zeros of Bin(c) (i > c) and the
    columns t > K − c that :func:`pure_block` never reads (~K³/6 multiply-adds each instead of
    K³); the chained products of :func:`pure_block` do the rest."""
    K = params.K
    e = math.exp(params.eps)
    hi, lo = e / (e + 1.0), 1.0 / (e + 1.0)
    w = output_weights(np.asarray(gamma, dtype=np.float64))
    wpad = np.concatenate([w, np.zeros(K + 1)])
    idx = np.arange(K + 1)
    hank = wpad[idx[:, None] + idx[None, :]]  # hank[i, t] = w[i + t] (0 past K)
    Bhi, Blo = _pure_pmf_rows(K, hi, lo), _pure_pmf_rows(K, lo, hi)
    Xhi, Xlo = np.zeros((K + 1, K + 1)), np.zeros((K + 1, K + 1))
    edges = np.unique(np.linspace(0, K + 1, min(K + 1, PURE_TABLE_BLOCKS) + 1).astype(int))
    for c0, c1 in zip(edges[:-1].tolist(), edges[1:].tolist(), strict=True):
        T = K - c0 + 1  # rows c ≥ c0 read t ≤ K − c ≤ K − c0; Bin(c) is zero past c < c1
        Xhi[c0:c1, :T] = Bhi[c0:c1, :c1] @ hank[:c1, :T]
        Xlo[c0:c1, :T] = Blo[c0:c1, :c1] @ hank[:c1, :T]
    return PureTables(K, flush_tiny(Xhi), flush_tiny(Xlo), Bhi, Blo)


@per_r_cache
def _triple_cells(R: int) -> np.ndarray:
    """Flat cell (s·S + a)·S + b (S = R + 1) of every triple with s + a + b ≤ R, in the order of
    the U tables (σ = s + a + b ascending, then s, then a).  Read-only, cached (depends on R only;
    a sweep asks for each R up to three times in a row, a screening pass again every round)."""
    S = R + 1
    out = []
    for sigma in range(R + 1):
        s = np.repeat(np.arange(sigma + 1), np.arange(sigma + 1, 0, -1))
        a = np.concatenate([np.arange(sigma - x + 1) for x in range(sigma + 1)])
        out.append((s * S + a) * S + (sigma - s - a))
    cells = np.concatenate(out).astype(np.int64)
    cells.flags.writeable = False
    return cells


def block_rows(tables: SweepTables, R: int, xp: Any = np) -> Any:
    """Δ > 0: the rows V(·, c, K − R − c) for c = 0..K − R over the triples with s + a + b ≤ R (in the
    order of :func:`_triple_cells`), one matrix product: row c holds Pr[A(D)=1] of the block
    (n_(hi,lo), n_(lo,hi)) = (c, K − R − c) and row K − R − c its Pr[A(D′)=1]
    (:mod:`darrm.privacy.sweep`).  ``xp``: numpy, or torch with ``tables`` on a torch device."""
    S, cd = R + 1, tables.K - R
    cat = np.concatenate if xp is np else xp.cat
    UR = cat([u[:, : cd + 1] for u in tables.U[:S]])
    c_all = np.arange(cd + 1)
    return tables.H[_on(tables.H, tables.lut[c_all, cd - c_all], xp)][:, : cd + 1] @ UR.T


def build_for(recipe: SweepRecipe) -> Any:
    """The tables a recipe's blocks read (Δ > 0: :func:`build_tables`; Δ = 0: :func:`build_pure_tables`)."""
    if recipe.delta_positive:
        return build_tables(recipe.gamma, recipe.params)
    return build_pure_tables(recipe.gamma, recipe.params)

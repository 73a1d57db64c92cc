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

computed per block of equal n_6 + n_7 as one matrix product from tables U (C(K+4,4) floats,
:class:`SweepTables`).  Pr[A(D)=1] = V(n_1+n_5, n_3, n_4, n_6, n_7) does not depend on n_2, the
count of (0, Δ), and Pr[A(D′)=1] = V(n_1+n_4, n_2, n_5, n_7, n_6) depends on neither n_3 nor n_0;
so :func:`sweep_R` takes running minima and maxima of the second over n_2 and visits the
C(K+6, 6) tuples (n_1, n_3, n_4, n_5, n_6, n_7) instead of the C(K+7, 7) multisets, with exactly
the same largest bound (rounding is monotone; K = 101: 1.6 G tuples instead of 27.9 G multisets).
For Δ = 0 only (0,0), (1,1), (hi,lo), (lo,hi) exist (a = b = 0): :func:`pure_block` computes
V(s, c, d) and V(s, d, c) for one c and every d, s from two (K+1)² tables with two triangular
matrix products and O(K²) memory, which reaches K in the thousands.

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

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..backends.devices import TorchDevice
from ..backends.executors import Executor, ProcessExecutor, SerialExecutor, available_cores, one_blas_thread
from ..errors import ParameterError
from ..logs import get_logger
from ..mechanism import output_weights
from ..numerics.binomial import binomial_rows
from ..params import PrivacyParams
from .block_maxima import ExtremeCubes, block_maximum, blocks_to_visit
from .condition import Check, flush_tiny, pair_violation, pair_violation_extremes
from .corners import count_vectors
from .sweep_recipe import SweepRecipe, forget, run_blocks, tables_for, warm

log = get_logger("sweep")


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


@functools.lru_cache(maxsize=4)
def _triple_cells(R: int) -> np.ndarray:
    """Flat cell (s·S + a)·S + b (S = R + 1) of every triple with s + a + b ≤ R, in the order of
    the U tables (σ = s + a + b ascending, then s, then a).  Read-only, cached (depends on R only;
    a sweep asks for each R up to three times in a row)."""
    S = R + 1
    out = []
    for sigma in range(R + 1):
        s = np.repeat(np.arange(sigma + 1), np.arange(sigma + 1, 0, -1))
        a = np.concatenate([np.arange(sigma - x + 1) for x in range(sigma + 1)])
        out.append((s * S + a) * S + (sigma - s - a))
    cells = np.concatenate(out).astype(np.int64)
    cells.flags.writeable = False
    return cells


@functools.lru_cache(maxsize=8)
def _tetrahedron(R: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The triples (n_1, n_3, n_5) ≥ 0 with n_1 + n_3 + n_5 ≤ R, ordered by their sum (so those
    with sum ≤ M are a prefix, of length C(M+3, 3)), and their flat cells in the two layouts
    of :func:`sweep_R` (S = R + 1):

        A_t[n_4] at (n_1 + n_5)·S + n_3,   B_f + n_4·(S² + S) at n_1·(S² + S) + n_3·S² + n_5·(S² + 1).

    Also returned: the (n_1, n_3, n_5) columns themselves.  Read-only, cached (depends on R only)."""
    S = R + 1
    trip = np.concatenate([count_vectors(tau, 3) for tau in range(R + 1)]).astype(np.int64)
    n1, n3, n5 = trip[:, 0], trip[:, 1], trip[:, 2]
    ia = (n1 + n5) * S + n3
    ib = n1 * (S * S + S) + n3 * S * S + n5 * (S * S + 1)
    for x in (trip, ia, ib):
        x.flags.writeable = False
    return trip, ia, ib


def _layout_cells(R: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat cells, in the order of the U tables (:func:`_triple_cells`), of each triple (s, a, b)
    in the two layouts of :func:`sweep_R` (S = R + 1): A_t[b, s, a] (A transposed: n_4 first)
    and B_f[R − a, s, b] (the n_2 axis reversed and outermost)."""
    S = R + 1
    t = _triple_cells(R)
    s, a, b = t // (S * S), (t // S) % S, t % S
    return (b * S + s) * S + a, ((R - a) * S + s) * S + b


class _BlockBuffers:
    """Per-R work arrays of :func:`sweep_R`, allocated once and reused by every block of that R.
    Cells outside the valid region are never read (see :func:`sweep_R`), so they are zeroed once
    and then left as they are."""

    def __init__(self, R: int, xp=np, like=None):
        S = R + 1
        n = math.comb(R + 3, 3)

        def zeros(k: int):
            return np.zeros(k) if xp is np else xp.zeros(k, dtype=xp.float64, device=like.device)

        self.At, self.Bf, self.Bmin, self.Bmax = (zeros(S**3) for _ in range(4))
        self.a, self.x, self.y, self.z = (zeros(max(n, 2 * MIN_GATHER)) for _ in range(4))


#: :func:`sweep_R` gathers the tuples of consecutive n_4 together until a gather has at least
#: this many (fewer Python-level calls for the small n_4-slices)
MIN_GATHER = 1 << 15


@dataclass(frozen=True)
class _Group:
    """One gather of :func:`sweep_R`: cells ``ia`` of A_t from ``off_a`` and ``ib`` of B_f from
    ``off_b``, covering the prefixes of :func:`_tetrahedron` of lengths ``lengths`` for the
    consecutive n_4 values ``n4s``, one after the other."""

    off_a: int
    off_b: int
    ia: Any
    ib: Any
    n4s: tuple[int, ...]
    lengths: tuple[int, ...]

    @property
    def length(self) -> int:
        return sum(self.lengths)

    def locate(self, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(n_4, index into :func:`_tetrahedron`) of gather positions ``pos``."""
        ends = np.cumsum(self.lengths)
        k = np.searchsorted(ends, pos, side="right")
        return np.asarray(self.n4s)[k], pos - (ends[k] - np.asarray(self.lengths)[k])


def _gather_groups(R: int, ia, ib, xp=np, like=None) -> list[_Group]:
    """n_4 = 0..R as gathers: one per n_4 with ≥ :data:`MIN_GATHER` tuples (a prefix of the
    cached cells plus an offset), consecutive smaller ones merged (cells with offsets baked in)."""
    S = R + 1
    plane, stride_b = S * S, S * S + S
    groups: list[_Group] = []
    pending: list[int] = []

    def flush() -> None:
        if not pending:
            return
        Ls = [math.comb(R - n4 + 3, 3) for n4 in pending]
        cat = np.concatenate if xp is np else xp.cat
        ga = cat([ia[:L] + n4 * plane for n4, L in zip(pending, Ls, strict=True)])
        gb = cat([ib[:L] + n4 * stride_b for n4, L in zip(pending, Ls, strict=True)])
        groups.append(_Group(0, 0, ga, gb, tuple(pending), tuple(Ls)))
        pending.clear()

    for n4 in range(S):
        L = math.comb(R - n4 + 3, 3)
        if L >= MIN_GATHER:
            groups.append(_Group(n4 * plane, n4 * stride_b, ia[:L], ib[:L], (n4,), (L,)))
            continue
        pending.append(n4)
        if sum(math.comb(R - x + 3, 3) for x in pending) >= MIN_GATHER:
            flush()
    flush()
    return groups


def _running_reversed(src, out, S: int, kind: str, xp=np) -> None:
    """``out`` = running minimum (``kind`` "min") or maximum of the flat S³ array ``src`` along its
    first axis from the last index down (B_f's reversed n_2 axis: the extreme over n_2 ≤ t), one
    contiguous S² plane at a time (≈ 10× faster than ``ufunc.accumulate`` along that axis)."""
    a, o = src.reshape(S, S, S), out.reshape(S, S, S)
    f = (np.minimum if kind == "min" else np.maximum) if xp is np else (xp.minimum if kind == "min" else xp.maximum)
    o[S - 1] = a[S - 1]
    for y in range(S - 2, -1, -1):
        f(o[y + 1], a[y], out=o[y])


def _block_counts(A: Callable[[int, int, int], float], B: Callable[[int, int, int], float], quads: np.ndarray,
                  R: int, c: int, d: int, chk: Check) -> np.ndarray:
    """Full count vectors (n_0..n_7) of reported (n_1, n_3, n_4, n_5): the n_2 ≤ t (t = R − n_1 −
    n_3 − n_4 − n_5) whose B value is the extreme that gave the larger term (:func:`sweep_R`);
    A, B: the functions (s, a, b) ↦ V(s, a, b, c, d) and V(s, a, b, d, c) of the block."""
    out = np.zeros((quads.shape[0], 8), dtype=np.int64)
    for i, (n1, n3, n4, n5) in enumerate(quads.tolist()):
        t = R - n1 - n3 - n4 - n5
        a = A(n1 + n5, n3, n4)
        col = np.array([B(n1 + n4, n2, n5) for n2 in range(t + 1)])
        lo_i, hi_i = int(np.argmin(col)), int(np.argmax(col))
        n2 = lo_i if a - chk.e * col[lo_i] >= col[hi_i] - chk.e * a else hi_i
        out[i] = (t - n2, n1, n2, n3, n4, n5, c, d)
    return out


def _as_numpy(a, xp=np) -> np.ndarray:
    return a if xp is np else a.cpu().numpy()


def sweep_R(
    tables: SweepTables, R: int, chk: Check, top: int, threshold: float, per_block: int | None = None,
    xp=np, only: frozenset[int] | None = None, points: Callable[..., None] | None = None,
    prune: bool = False,
) -> SweepBlockResult:
    """Δ > 0: every multiset with n_6 + n_7 = K − R (n_6, n_7: counts of (hi,lo), (lo,hi)).

    In the block (n_6, n_7) = (c, d), Pr[A(D)=1] = A[n_1+n_5, n_3, n_4] does not depend on n_2
    (the count of (0, Δ)) and Pr[A(D′)=1] = B[n_1+n_4, n_2, n_5] depends on neither n_3 nor n_0
    (A, B: V(·, c, d) and V(·, d, c) of the module docstring).  So the largest violation over
    n_2 ≤ t (t: what n_1, n_3, n_4, n_5 leave of R) is

        max( A − e·min_{n_2≤t} B,  max_{n_2≤t} B − e·A ) − δ + slack,

    and running minima and maxima of B along n_2 leave C(R+4, 4) tuples per block instead of
    C(R+5, 5) multisets.  This is *exactly* the largest per-multiset bound v̂ of
    :func:`darrm.privacy.condition.pair_violation`, bit for bit: IEEE-754 rounding is monotone,
    so fl(a − fl(e·b)) is non-increasing and fl(b − fl(e·a)) non-decreasing in b, and the
    extreme b gives the extreme v̂ (:func:`darrm.privacy.condition.pair_violation_extremes`; the
    −δ + slack is applied to the maximum only, which is monotone too).

    Layout: A is stored transposed, A_t[n_4, n_1+n_5, n_3], and B with its n_2 axis reversed and
    outermost, B_f[R − n_2, n_1+n_4, n_5], so B at n_2 = t sits at (n_1+n_3+n_4+n_5)·S² + (n_1+n_4)·S + n_5:
    for each n_4 an offset plus a cell of one cached list of (n_1, n_3, n_5) whose prefixes are
    the tuples with n_1 + n_3 + n_5 ≤ R − n_4 (:func:`_tetrahedron`).  Every cell read lies in the
    valid region (s + a + b ≤ R), and the running extremes run from a = 0 upward, so they see
    valid cells only: nothing outside that region needs initialising.  The n_2 of a reported
    multiset is recovered afterwards (:func:`_block_counts`).  ``xp``: numpy, or torch with
    ``tables`` on a torch device (:mod:`darrm.backends.devices`).  ``only``: visit just the blocks
    with these n_6 (≥ n_7) — a screening pass (:func:`sweep`'s ``blocks``), not a certificate.
    ``points``: called as points(A, min_{n_2} B, max_{n_2} B, xp) for every gather instead of the
    verdict (the privacy profile's cloud, :mod:`darrm.privacy.profile`; the arrays are reused).
    ``prune`` (numpy): each block's exact maximum from :func:`darrm.privacy.block_maxima.block_maximum`
    without its tuples; only blocks that report candidates are visited (same maximum bit for bit,
    same candidates up to ties)."""
    S, cd = R + 1, tables.K - R
    col = TopCollector(top, threshold, 8, per_block)
    like = tables.H

    def dev(a: np.ndarray):
        return _on(like, a, xp)

    # V(·, c, cd − c) at every triple with s + a + b ≤ R, for c = 0..cd: one matrix product
    cat = np.concatenate if xp is np else xp.cat
    UR = cat([u[:, : cd + 1] for u in tables.U[:S]])
    c_all = np.arange(cd + 1)
    VR = tables.H[dev(tables.lut[c_all, cd - c_all])][:, : cd + 1] @ UR.T
    cell_a, cell_b = (dev(x) for x in _layout_cells(R))
    trip, ia_np, ib_np = _tetrahedron(R)
    ia, ib = dev(ia_np), dev(ib_np)
    buf = _BlockBuffers(R, xp, like)
    groups = _gather_groups(R, ia, ib, xp, like)
    k_each = col.per_block
    e = chk.e
    take: Callable[..., Any]
    if xp is np:
        take, mul, sub, mx = np.take, np.multiply, np.subtract, np.maximum
    else:
        def take(src: Any, idx: Any, out: Any) -> Any:
            return xp.index_select(src, 0, idx, out=out)
        mul, sub, mx = xp.mul, xp.sub, xp.maximum
    # Swap symmetry: swap(v) exchanges n_6 ↔ n_7 (and n_2 ↔ n_3, n_4 ↔ n_5) and its four
    # values are v's with the directions exchanged, which are evaluated anyway; so the
    # blocks with n_6 < n_7 repeat blocks with n_6 > n_7 and are skipped.
    cs = range((cd + 1) // 2, cd + 1)
    visited = 0
    wanted = list(cs if only is None else sorted(set(cs) & only))
    for c in wanted:
        visited += 1 if c == cd - c else 2
    if prune and xp is np and points is None:
        # exact block maxima without the tuples (:mod:`darrm.privacy.block_maxima`); only the
        # blocks that must report candidates are visited below
        cubes = ExtremeCubes(R)
        maxima = {c: block_maximum(VR[c], VR[cd - c], R, chk, cubes) for c in wanted}
        col.best = max([col.best, *maxima.values()])
        wanted = sorted(blocks_to_visit(maxima, col.top, threshold, col.per_block))
    for c in wanted:
        d = cd - c
        buf.At[cell_a] = VR[c]
        buf.Bf[cell_b] = VR[d]
        _running_reversed(buf.Bf, buf.Bmin, S, "min", xp)
        _running_reversed(buf.Bf, buf.Bmax, S, "max", xp)
        best, found = -np.inf, []
        for g in groups:
            L = g.length
            a, x, y, z = buf.a[:L], buf.x[:L], buf.y[:L], buf.z[:L]
            take(buf.At[g.off_a :], g.ia, out=a)
            take(buf.Bmin[g.off_b :], g.ib, out=x)
            take(buf.Bmax[g.off_b :], g.ib, out=y)
            if points is not None:
                points(a, x, y, xp)
                continue
            if k_each == 1:
                # pair_violation_extremes with the same operations in place, its − δ + slack
                # applied to the maximum only (monotone, so the same maximum bit for bit)
                mul(x, e, out=x)
                sub(a, x, out=x)
                mul(a, e, out=z)
                sub(y, z, out=y)
                mx(x, y, out=x)
                i = int(x.argmax())
                m = float(x[i]) - chk.delta + chk.slack
                sel, vv = np.array([i]), np.array([m])
            else:
                v = _as_numpy(pair_violation_extremes(a, x, y, chk, xp=xp), xp)
                m = float(v.max())
                sel, vv = _top(v, k_each) if (k_each > 0 and m > threshold) else (np.zeros(0, dtype=np.int64), v[:0])
            best = max(best, m)
            if k_each > 0 and m > threshold:
                n4, t_idx = g.locate(sel)
                q = trip[t_idx]  # (n_1, n_3, n_5)
                found.append((np.stack([q[:, 0], q[:, 1], n4, q[:, 2]], axis=1), vv))

        def select(k: int, found=found, c=c, d=d) -> tuple[np.ndarray, np.ndarray]:
            qs = np.concatenate([f[0] for f in found])
            vs = np.concatenate([f[1] for f in found])
            keep = _worst(vs, k)
            tc = _triple_cells(R)
            va, vb = np.zeros(S**3), np.zeros(S**3)
            va[tc], vb[tc] = _as_numpy(VR[c], xp), _as_numpy(VR[d], xp)

            def A(s_: int, a_: int, b_: int) -> float:
                return float(va[(s_ * S + a_) * S + b_])

            def B(s_: int, a_: int, b_: int) -> float:
                return float(vb[(s_ * S + a_) * S + b_])

            return _block_counts(A, B, qs[keep], R, c, d, chk), vs[keep]

        col.add(best, select)
    return col.result(math.comb(R + 5, 5) * visited)  # covered, incl. the swapped blocks


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


#: levels per link of the chained products of :func:`pure_block` (:func:`_triangular_hankel_product`)
PURE_CHAIN = 32


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


def sweep(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    top: int = 0,
    threshold: float = 0.0,
    executor: Executor | TorchDevice | None = None,
    progress: bool | None = None,
    diverse: bool = True,
    blocks: Iterable | None = None,
    prune: bool | None = None,
) -> SweepResult:
    """Largest violation of Pr[A(D)=o] ≤ e^{mε}Pr[A(D′)=o] + δ over every corner multiset,
    both outputs and both directions, as the rigorous bound v̂ of :mod:`darrm.privacy.condition`
    (v̂ ≤ 0 proves the exact violation ≤ 0); with ``top`` > 0 also the (up to) ``top`` multisets
    violating by more than ``threshold``, worst first (for constraint generation).

    ``diverse`` (Δ > 0): take at most one candidate per (n_(hi,lo), n_(lo,hi)) block, so the
    cuts spread over the corner space (measured: 18 → 7 rounds at K = 41); the maximum is
    exact either way.

    ``blocks``: visit only these blocks — (n_(hi,lo), n_(lo,hi)) pairs for Δ > 0 (oriented with
    the first ≥ the second), n_(hi,lo) values for Δ = 0 — a *screening* pass for constraint
    generation (its maximum is over those blocks only: never a certificate).

    ``prune`` (Δ > 0; None: :data:`PRUNE`): take each block's exact maximum from
    :mod:`darrm.privacy.block_maxima` and visit tuple by tuple only the blocks that report
    candidates; the maximum is the same bit for bit, the candidates the same up to ties.

    ``executor`` receives a :class:`~darrm.privacy.sweep_recipe.SweepRecipe` (γ and the
    parameters), never the tables: each worker builds them once per γ
    (:mod:`darrm.privacy.sweep_recipe`); this process and forked local workers use the tables
    built here.  Every block is accounted for: a block lost with a worker is run again, else
    :class:`darrm.errors.WorkerLostError` is raised (:func:`~darrm.privacy.sweep_recipe.run_blocks`)."""
    from ..backends.adapters import as_executor

    g = np.asarray(gamma, dtype=np.float64)
    executor = as_executor(executor)
    if isinstance(executor, TorchDevice):
        return _sweep_on_device(g, params, executor, top=top, threshold=threshold, diverse=diverse)
    K = params.K
    if executor is None:
        ex = SerialExecutor() if blocks is not None else default_executor(params)
    else:
        ex = executor
    total = math.comb(K + (7 if params.member_delta > 0 else 3), K)
    bar = tqdm(total=total, desc="sweep", unit="multiset", unit_scale=True, leave=False,
               disable=(not progress) if progress is not None else None)
    recipe = SweepRecipe(g, params, int(top), float(threshold), 1 if diverse else None,
                         PRUNE if prune is None else bool(prune))
    local = isinstance(ex, (SerialExecutor, ProcessExecutor))
    # Δ = 0: the γ tables are two (K+1)³ products, built before BLAS is limited to one thread;
    # only for this process and forked workers (a cluster's workers build their own)
    if local and params.member_delta == 0:
        warm(recipe, build_pure_tables(g, params))
    try:
        return _run_sweep(recipe, ex, local, blocks, bar)
    finally:
        forget(recipe)


def _run_sweep(recipe: SweepRecipe, ex: Executor, local: bool, blocks: Iterable | None, bar: Any) -> SweepResult:
    """:func:`sweep`'s blocks: the order (biggest first), the screening subset, the run."""
    params, g, top = recipe.params, recipe.gamma, recipe.top
    K = params.K
    with bar, one_blas_thread():
        items: list
        if params.member_delta > 0:
            if local:
                warm(recipe, build_tables(g, params))
            items = sorted(range(K + 1), key=lambda R: -_block_cost(K, R, True))
            if blocks is not None:
                by_R: dict[int, set[int]] = {}
                for c, d in blocks:
                    by_R.setdefault(K - int(c) - int(d), set()).add(int(c))
                items = [(R, frozenset(by_R[R])) for R in items if R in by_R]
        else:
            items = sorted(range(K + 1), key=lambda c: -_block_cost(K, c, False))
            if blocks is not None:
                wanted = {int(c) for c in blocks}
                items = [c for c in items if c in wanted]
        # biggest blocks first: balanced workers
        results = run_blocks(ex, recipe, items, run_block, on_result=lambda r: bar.update(r.checked))
    return merge(results, top)


def _block_cost(K: int, i: int, delta_positive: bool) -> int:
    """Relative cost of one block: Δ > 0, R = i: ⌈(K−R+1)/2⌉ blocks of C(R+4, 4) tuples;
    Δ = 0, c = i: two triangular products of ~D²·n/2 multiply-adds (D = min(c, K−c)+1, n = K−c+1)."""
    if delta_positive:
        return (K - i + 2) // 2 * math.comb(i + 4, 4)
    return (min(i, K - i) + 1) ** 2 * (K - i + 1)


#: :func:`sweep` prunes Δ > 0 blocks by their exact maxima unless told otherwise
PRUNE = True


#: below this much work (in units of :func:`_block_cost`, summed) a sweep runs in this process:
#: starting worker processes costs more than it saves (measured: a K = 41, Δ > 0 sweep takes
#: ~0.3 s serially)
PARALLEL_MIN_WORK = 10**8


def default_executor(params: PrivacyParams, max_memory: float | None = None) -> Executor:
    """The executor a sweep uses when none is given: local processes, one per available core
    (fewer if :func:`sweep_memory` says more would not fit ``max_memory``, default: the memory
    available now), when the sweep is big enough to pay for them, else this process.

    Raises:
        ParameterError: not even one process fits (the message gives the estimate)."""
    budget = memory_budget(max_memory)
    need1 = sweep_memory(params, 1)
    if budget is not None and need1 > budget:
        name = "max_memory" if max_memory is not None else "K"
        raise ParameterError(name, f"an exhaustive sweep at K={params.K} needs about {need1 / 2**30:.2f} GiB, more "
                                   f"than the {budget / 2**30:.2f} GiB {'allowed' if max_memory else 'available'}")
    n = available_cores()
    if budget is not None:
        while n > 1 and sweep_memory(params, n) > budget:
            n -= 1
    return ProcessExecutor(n) if (n > 1 and sweep_work(params) >= PARALLEL_MIN_WORK) else SerialExecutor()


def sweep_executor(params: PrivacyParams, executor: Executor | TorchDevice | None,
                   max_memory: float | None) -> Executor | TorchDevice:
    """The executor of a solve's or a certificate's sweeps, after the memory check, before any work:
    as many local processes as fit (:func:`default_executor`, which refuses when not even one fits
    ``max_memory``), or the local executor given (serial or processes), checked the same way.  A
    Dask cluster or a GPU (:class:`TorchDevice`) runs the blocks in its own memory: used as given."""
    if executor is not None and not isinstance(executor, (SerialExecutor, ProcessExecutor)):
        return executor
    auto = default_executor(params, max_memory)
    chosen = auto if executor is None else executor
    if isinstance(chosen, ProcessExecutor) and chosen is not auto:
        budget = memory_budget(max_memory)
        if budget is not None and sweep_memory(params, chosen.workers) > budget:
            fit = max(n for n in range(1, chosen.workers + 1) if n == 1 or sweep_memory(params, n) <= budget)
            need = sweep_memory(params, chosen.workers) / 2**30
            raise ParameterError("executor", f"local:{chosen.workers} needs about {need:.2f} GiB for the sweeps at "
                                             f"K={params.K}, more than the {budget / 2**30:.2f} GiB "
                                             f"{'allowed (max_memory)' if max_memory is not None else 'available'}; "
                                             f"at most local:{fit} fits")
    workers = int(getattr(chosen, "workers", 1))
    log.debug("sweeps at K=%d: %d worker(s), about %.0f MiB peak (estimate)",
              params.K, workers, sweep_memory(params, workers) / 2**20)
    return chosen


def memory_budget(max_memory: float | None) -> float | None:
    """``max_memory`` (bytes) if given, else the memory available now (None: unknown)."""
    from ..backends import resources

    avail = resources.available_memory()
    if max_memory is None:
        return None if avail is None else float(avail)
    return float(max_memory)


#: resident memory of one Python process with numpy and darrm loaded (measured ~110-150 MiB)
PROCESS_BASE_BYTES = 160 * 2**20


def sweep_memory(params: PrivacyParams, workers: int = 1) -> int:
    """Estimated peak resident memory (bytes) of one exhaustive sweep: the γ tables shared by
    every worker plus, per worker, a Python process and its largest block's arrays (:func:`sweep_R`:
    the V rows, the cubes and buffers, the cached cells and gathers; :func:`pure_block`: a few
    D×n arrays), with 25 % to spare.  Measured peak RSS (serial): K = 61: 140 MiB, 81: 216 MiB,
    101: 356 MiB; this gives 239, 300 and 416 MiB."""
    K, f = params.K, 8
    if params.member_delta > 0:
        shared = f * (math.comb(K + 4, 4) + 2 * math.comb(K + 2, 2) * (K + 1))
        per = 0
        for R in range(K + 1):
            S, T = R + 1, math.comb(R + 3, 3)
            per = max(per, f * (2 * (K - R + 1) * T + 4 * S**3 + 8 * T + 5 * math.comb(S + 2, 3)
                                + 2 * math.comb(R + 4, 4) + 8 * MIN_GATHER))
    else:
        shared = f * 5 * (K + 1) ** 2
        per = f * 8 * ((K + 1) // 2 + 1) * (K + 1)
    return int(1.25 * (shared + workers * (PROCESS_BASE_BYTES + per)))


def sweep_work(params: PrivacyParams) -> int:
    """The size of one exhaustive sweep in units of :func:`_block_cost` (K = 101, Δ > 0: 9.3e8)."""
    dp = params.member_delta > 0
    return sum(_block_cost(params.K, i, dp) for i in range(params.K + 1))


def _sweep_on_device(
    gamma: np.ndarray, params: PrivacyParams, dev: TorchDevice, *, top: int, threshold: float, diverse: bool
) -> SweepResult:
    """:func:`sweep` with the tables on a torch device: the same block functions
    (:func:`sweep_R`, :func:`sweep_c`, memory-bounded chunks included) with ``xp`` = torch."""
    K, chk = params.K, params.check
    per_block = 1 if diverse else None
    if params.member_delta > 0:
        T = build_tables(gamma, params)
        Tt = SweepTables(K, tuple(dev.put(u) for u in T.U), dev.put(np.array(T.H)), T.lut)
        results = [sweep_R(Tt, R, chk, top, threshold, per_block, xp=dev.xp) for R in range(K, -1, -1)]
    else:
        P = build_pure_tables(gamma, params)
        Pt = PureTables(K, *(dev.put(a) for a in (P.Xhi, P.Xlo, P.Bhi, P.Blo)))
        results = [sweep_c(Pt, c, chk, top, threshold, per_block, xp=dev.xp) for c in range(K + 1)]
    return merge(results, top)


def build_for(recipe: SweepRecipe) -> Any:
    """The tables a recipe's blocks read (Δ > 0: :func:`build_tables`; Δ = 0: :func:`build_pure_tables`)."""
    if recipe.delta_positive:
        return build_tables(recipe.gamma, recipe.params)
    return build_pure_tables(recipe.gamma, recipe.params)


def run_block(recipe: SweepRecipe, item: Any) -> tuple[Any, Any]:
    """(item, :class:`SweepBlockResult`) of one block, the function every executor runs: Δ > 0,
    ``item`` is R (or (R, n_(hi,lo) values) for a screening pass); Δ = 0, it is n_(hi,lo) = c.  The
    tables come from this process's cache (:func:`darrm.privacy.sweep_recipe.tables_for`).
    Module-level, so any executor can pickle it by reference."""
    tables = tables_for(recipe, build_for)
    chk = recipe.params.check
    with one_blas_thread():
        if recipe.delta_positive:
            R, only = item if isinstance(item, tuple) else (item, None)
            res = sweep_R(tables, R, chk, recipe.top, recipe.threshold, recipe.per_block, only=only,
                          prune=recipe.prune)
        else:
            res = sweep_c(tables, item, chk, recipe.top, recipe.threshold, recipe.per_block)
    return item, res

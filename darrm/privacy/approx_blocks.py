"""The blocks of an exhaustive sweep for Δ > 0 members: every corner multiset with
n_(hi,lo) + n_(lo,hi) = K − R, visited as C(R+4, 4) tuples instead of C(R+5, 5) multisets
(:func:`sweep_R`; the reduction is exact bit for bit, see its docstring and
:mod:`darrm.privacy.sweep`).  The tables come from :mod:`darrm.privacy.sweep_tables`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .block_maxima import ExtremeCubes, block_maximum, blocks_to_visit
from .condition import Check, pair_violation_extremes
from .corners import count_vectors
from .per_r_cache import per_r_cache
from .sweep_results import SweepBlockResult, TopCollector, _as_numpy, _top, _worst
from .sweep_tables import SweepTables, _on, _triple_cells, block_rows


@per_r_cache
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

@per_r_cache
def _layout_cells(R: int) -> tuple[np.ndarray, np.ndarray]:
    """Flat cells, in the order of the U tables (:func:`_triple_cells`), of each triple (s, a, b)
    in the two layouts of :func:`sweep_R` (S = R + 1): A_t[b, s, a] (A transposed: n_4 first)
    and B_f[R − a, s, b] (the n_2 axis reversed and outermost).  Read-only, cached."""
    S = R + 1
    t = _triple_cells(R)
    s, a, b = t // (S * S), (t // S) % S, t % S
    out = ((b * S + s) * S + a, ((R - a) * S + s) * S + b)
    for x in out:
        x.flags.writeable = False
    return out

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
    VR = block_rows(tables, R, xp)
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
    if not wanted:  # every block pruned (or none asked for): no tuple to visit
        return col.result(math.comb(R + 5, 5) * visited)
    cell_a, cell_b = (dev(x) for x in _layout_cells(R))
    trip, ia_np, ib_np = _tetrahedron(R)
    ia, ib = dev(ia_np), dev(ib_np)
    buf = _BlockBuffers(R, xp, like)
    groups = _gather_groups(R, ia, ib, xp, like)
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

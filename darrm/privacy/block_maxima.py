"""Exact maximum of a whole Δ > 0 sweep block without visiting its tuples, so blocks can be skipped.

In the block (n_(hi,lo), n_(lo,hi)) = (c, d) of :func:`darrm.privacy.approx_blocks.sweep_R` (R = K − c − d)
the two output probabilities are values of two tables over triples (:mod:`darrm.privacy.sweep`):

    Pr[A(D)=1]  = A(s, a, b)    at (s, a, b)    = (n_1 + n_5, n_3, n_4),
    Pr[A(D′)=1] = B(s′, a′, b′) at (s′, a′, b′) = (n_1 + n_4, n_2, n_5).

**Claim.** For one A-triple (s, a, b) (σ = s + a + b ≤ R) the multisets that share it are exactly
n_1 ∈ [0, s] (n_5 = s − n_1, n_4 = b) and n_2 ∈ [0, R − σ], and their B-triples are exactly

    {(s′, a′, k − s′) : b ≤ s′ ≤ k, 0 ≤ a′ ≤ R − σ},   k = s + b.

*Proof.* s′ = n_1 + b runs over [b, s + b] as n_1 runs over [0, s], and b′ = n_5 = s − n_1 = k − s′;
a′ = n_2 is free up to what the others leave, R − σ (then s′ + a′ + b′ = k + a′ ≤ R − a ≤ R). ∎

So with Bmin(k, j, ℓ) = min{B(s′, a′, k − s′) : ℓ ≤ s′ ≤ k, a′ ≤ j} and Bmax likewise, the largest
bound v̂ of :func:`darrm.privacy.condition.pair_violation` over the whole block is

    max over A-triples of  max( A − e·Bmin(k, R − σ, b),  Bmax(k, R − σ, b) − e·A ) − δ + slack,

**bit for bit** the maximum the tuple-by-tuple sweep finds: IEEE-754 rounding is monotone, so
fl(A − fl(e·x)) is non-increasing and fl(x − fl(e·A)) non-decreasing in x, and the extreme x gives
the extreme value (:func:`darrm.privacy.condition.pair_violation_extremes`; minima and maxima do
not round).  This is Lemma 5.1's corner reduction carried one step further: A does not depend on
how s splits into n_1 + n_5, just as it does not depend on n_2.  The cost per block is two
suffix/prefix extreme passes over an (R+1)³ cube and one gather of C(R+3, 3) triples, instead of
C(R+4, 4) tuples (the work drops by about (R + 4)/4 per block before the cube passes).

The sweep uses these maxima to *prune*: a block is visited tuple by tuple only when it must report
candidates (its maximum exceeds the reporting threshold and ranks among the ``top``); every other
block contributes its exact maximum and nothing else, so the sweep's maximum, and its candidates
up to ties, are unchanged.  Tests compare with the unpruned sweep bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .condition import Check
from .per_r_cache import per_r_cache
from .sweep_tables import SweepTables, _triple_cells, block_rows


@per_r_cache
def collapse_cells(R: int) -> tuple[np.ndarray, np.ndarray]:
    """For the triples in the order of the sweep's tables (σ ascending, then s, then a;
    :func:`darrm.privacy.sweep_tables._triple_cells`), S = R + 1, in the cube laid out [a′, s′, k′]
    (flat (a′·S + s′)·S + k′: both extreme passes then run over contiguous planes or rows):

    - ``read``: the cell (j, ℓ, k) = (R − σ, b, s + b) that the triple, as an A-triple (s, a, b), reads;
    - ``write``: the cell (a′, s′, s′ + b′) of the triple as a B-triple (s′, a′, b′).

    Read-only, cached (depends on R only)."""

    S = R + 1
    t = _triple_cells(R)
    s, a, b = t // (S * S), (t // S) % S, t % S
    read = ((R - s - a - b) * S + b) * S + (s + b)
    write = (a * S + s) * S + (s + b)
    for x in (read, write):
        x.flags.writeable = False
    return read, write


class ExtremeCubes:
    """Work cubes of one R, reused by every block of that R (:func:`block_maximum`).

    The valid cells (s′ ≤ k′, a′ + k′ ≤ R) are exactly the cells some triple writes, so every block
    overwrites all of them.  The others are set to ±inf once and never change: the passes touch
    only (a′ ≤ R − s′, k′ ≥ s′) in the s′ pass and (s′, k′ ≤ R − a′) in the a′ pass, and an invalid
    cell there combines only with invalid cells (the s′ pass at fixed (a′, k′), the a′ pass at
    k′ ≤ R − a′, where every cell of the plane a′ − 1 is valid or has s′ > k′).  The passes thus
    cover about a third of the cube (Σ (R − x)² ≈ R³/3 cells each) instead of all of it."""

    def __init__(self, R: int):
        S = R + 1
        self.R = R
        self.lo = np.full((S, S, S), np.inf)
        self.hi = np.full((S, S, S), -np.inf)

    def fill(self, B: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Bmin, Bmax) of the module docstring, flat, from one block's B values (tables' triple order)."""
        R = self.R
        _, write = collapse_cells(R)
        lo, hi = self.lo, self.hi
        flo, fhi = lo.reshape(-1), hi.reshape(-1)
        flo[write] = B
        fhi[write] = B
        for s in range(R - 1, -1, -1):  # suffix extremes along s′ (ℓ ≤ s′ ≤ k′)
            n = R - s + 1
            np.minimum(lo[:n, s + 1, s:], lo[:n, s, s:], out=lo[:n, s, s:])
            np.maximum(hi[:n, s + 1, s:], hi[:n, s, s:], out=hi[:n, s, s:])
        for a in range(1, R + 1):  # prefix extremes along a′ (a′ ≤ j)
            n = R - a + 1
            np.minimum(lo[a - 1, :n, :n], lo[a, :n, :n], out=lo[a, :n, :n])
            np.maximum(hi[a - 1, :n, :n], hi[a, :n, :n], out=hi[a, :n, :n])
        return flo, fhi


def block_maximum(A: np.ndarray, B: np.ndarray, R: int, chk: Check, cubes: ExtremeCubes | None = None) -> float:
    """The largest v̂ over every multiset of one Δ > 0 block (module docstring), from the block's
    A and B values (the rows V(·, c, d) and V(·, d, c) of :func:`darrm.privacy.approx_blocks.sweep_R`), with
    the operations of the sweep's own evaluation, in the same order.  ``cubes``: work arrays of
    this R to reuse (:class:`ExtremeCubes`)."""
    read, _ = collapse_cells(R)
    lo, hi = (cubes or ExtremeCubes(R)).fill(B)
    x = lo[read]
    y = hi[read]
    np.multiply(x, chk.e, out=x)
    np.subtract(A, x, out=x)
    z = np.multiply(A, chk.e)
    np.subtract(y, z, out=y)
    np.maximum(x, y, out=x)
    return float(x.max()) - chk.delta + chk.slack


def blocks_to_visit(maxima: dict[int, float], top: int, threshold: float, per_block: int | None) -> set[int]:
    """The blocks a pruned sweep must still visit tuple by tuple to report its candidates: none when
    ``top`` is 0; else those whose maximum exceeds ``threshold`` — with one candidate per block
    (``per_block`` = 1, whose value is the block's maximum) only the ``top`` largest of them."""
    if top <= 0:
        return set()
    above = sorted((c for c, m in maxima.items() if m > threshold), key=lambda c: -maxima[c])
    if per_block == 1:
        return set(above[:top])
    return set(above)



@dataclass(frozen=True)
class RowMaxima:
    """The exact maxima of every block with n_(hi,lo) + n_(lo,hi) = K − R (one R), without a visit.

    Attributes:
        R: what the blocks leave to the other six corners.
        blocks: the n_(hi,lo) values c ≥ K − R − c of the blocks (the swapped ones repeat them,
            :func:`darrm.privacy.approx_blocks.sweep_R`).
        maxima: each block's largest v̂ (:func:`block_maximum`), bit for bit the tuple-by-tuple one.
        checked: the multisets these blocks cover, the swapped blocks included.
    """

    R: int
    blocks: np.ndarray
    maxima: np.ndarray
    checked: int


def row_maxima(tables: SweepTables, R: int, chk: Check) -> RowMaxima:
    """:class:`RowMaxima` of one R: the rows of :func:`darrm.privacy.sweep_tables.block_rows`
    and one :func:`block_maximum` per block, reusing one :class:`ExtremeCubes`."""
    cd = tables.K - R
    VR = block_rows(tables, R)
    cubes = ExtremeCubes(R)
    cs = np.arange((cd + 1) // 2, cd + 1)
    maxima = np.array([block_maximum(VR[c], VR[cd - c], R, chk, cubes) for c in cs.tolist()])
    covered = sum(1 if 2 * c == cd else 2 for c in cs.tolist()) * math.comb(R + 5, 5)
    return RowMaxima(R, cs, maxima, covered)

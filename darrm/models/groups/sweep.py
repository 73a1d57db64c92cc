"""The factorised grouped certificate: running extremes group by group, over tuples instead of multisets.

Today's exhaustive certificate (:mod:`darrm.models.groups.certificate`) visits every configuration, one
corner multiset per group: Π_g C(K_g + 7, 7) of them, 4.2·10¹⁰ for two groups of 16 and 15.
This module finds the same largest rigorous bound v̂ (up to rounding, see *Rounding*) while
visiting Π_g C(K_g + 5, 5) tuple combinations (3.2·10⁸ there).

**Tables.**  With the corner order of :func:`darrm.privacy.corners.corners` and a group's counts
n_0..n_7, the group's vote-count pmfs factorise (:mod:`darrm.privacy.sweep`'s identity, group by group)

    α_g  = β_g(n_1 + n_5, n_3, n_4, n_6, n_7),   α′_g = β_g(n_1 + n_4, n_2, n_5, n_7, n_6),
    β_g(s, a, b, c, d) = z^s · Bin(a, Δ_g) ⊛ Bin(b, 1 − Δ_g) ⊛ Bin(c, hi_g) ⊛ Bin(d, lo_g),

(for Δ_g = 0 only a = b = 0 occurs: α_g = β_g(n_1, 0, 0, n_(hi,lo), n_(lo,hi)), α′_g with c and d
exchanged).  So both output probabilities of a configuration are values of ONE table over tuple
combinations (τ_1, …, τ_G), τ_g = (s, a, b, c, d) with s + a + b + c + d ≤ K_g:

    V(τ_1, …, τ_G) = Σ_k Π_g β_g(τ_g)[k_g] · w_{k_1 + ⋯ + k_G},

Pr[A(D) = 1] = V(A-tuples of the configuration) and Pr[A(D′) = 1] = V(B-tuples).  For the
per-group form (:mod:`darrm.models.groups.per_group`) w_{k_1 + ⋯ + k_G} is replaced by the weights
W(k_1, …, k_G) (:func:`darrm.models.groups.contraction.joint_inner_table`); nothing below uses more
than that V is a non-negative contraction of the β rows, and the joint reflection still maps
output 0 to output 1.

**Claim (box by box).**  Fix each group's A-tuple τ_g = (s, a, b, c, d) (R = K_g − c − d, σ = s + a + b).
The configurations sharing the A-tuples (τ_1, …, τ_G) are exactly the products of each group's
multisets with n_1 ∈ [0, s], n_2 ∈ [0, R − σ] (:mod:`darrm.privacy.block_maxima`'s claim), and
their B-tuples are exactly the product over groups of the boxes

    S_g(τ_g) = {(s′, a′, k − s′, d, c) : b ≤ s′ ≤ k, 0 ≤ a′ ≤ R − σ},   k = s + b

(*proof*: the groups' counts are independent; within a group s′ = n_1 + b runs over [b, k] and
a′ = n_2 over [0, R − σ], freely and independently; Δ_g = 0: the box is the one tuple
(s, 0, 0, d, c)).  So the largest v̂ = fl(V(τ) − e·V(τ′)) − δ + slack over those configurations is
attained at the minimum of V over the product box (IEEE-754 rounding is monotone:
:func:`darrm.privacy.condition.pair_violation_extremes`).  The minimum over a product set is the
iterated minimum, one group's box at a time, and each box is a suffix range in s′ and a prefix
range in a′ at fixed (k, c′, d′): in a layout where each group's tuples are ordered by block
(c, d), then k′ = s′ + b′, a′, s′, one suffix-minimum pass along s′ and one prefix-minimum pass
along a′ per (block, k′) rectangle, then a gather at the cell (k′, a′, s′) = (s + b, R − σ, b) of
block (d, c), turn "V at B-tuples" into "minimum of V over the box of each A-tuple", along that
group's axis.  After all G axes, one elementwise pass gives every A-combination's largest v̂;
their maximum is the largest v̂ over every configuration, **bit for bit** what evaluating each
configuration from the same V values gives (minima do not round).

**One direction, one output.**  Each group's corner set is closed under the swap (p, p′) →
(p′, p) and the reflection (p, p′) → (1 − p, 1 − p′) (:mod:`darrm.models.groups.params`), applied to all
members at once.  The swap exchanges D and D′, so the exact violation of D′ → D at a configuration
is that of D → D′ at the swapped one; the reflection maps L to K − L, so (γ symmetric) Pr[A = 0]
at a configuration is Pr[A = 1] at the reflected one.  Both images are configurations of the
product, which the sweep visits, and each v̂ bounds its configuration's exact violation: the
largest v̂ of output 1, D → D′, over every configuration bounds all four families.

**Blocks.**  A-tuples of block (c, d) read only B-tuples of block (d, c); each group's layout puts
the two next to each other, so the tuple combinations are processed in chunks of whole block pairs
per group (:data:`CHUNK_ENTRIES`), and the memory is the β tables, one inner table and a few
chunk arrays, whatever the product.

**Rounding.**  Every number is a sum of products of non-negative numbers: binomial rows by the
recurrence (:func:`darrm.numerics.binomial.binomial_rows`, ≤ 9n roundings for degree n with the
corners' closed-form complements), three convolutions of ≤ K_g + 1 terms (≤ 3(K_g + 1)), and per
group one level of the contraction (≤ K_g + 1), w's 3u: ≤ Σ_g(13K_g + 4) + 3 = 13K + 4G + 3 ≤
16(K + 2) since G ≤ K, so ρ(K) of :func:`darrm.privacy.condition.check` bounds every probability's
relative error (in any summation order, BLAS included).  Nothing is flushed; gradual underflow
adds ≤ 2⁻¹⁰⁷⁴ per product, carried on with weights whose sums are ≤ 1: ≤ 8 Σ_g (K_g + 1)² for the
β rows and ≤ (K + 1)(K + G) for the contraction; with Σ_g (K_g + 1) = K + G ≤ 2K that is
≤ 34K² + 2K ≤ 40(K + 2)² products, so ≤ 40(K + 2)²·2⁻¹⁰⁷⁴ in all, which
:func:`darrm.models.groups.params.group_check` adds to η.  The verdict v̂ ≤ 0 ⇒ exact violation ≤ 0
then follows as in :mod:`darrm.privacy.condition`.  Against the exhaustive certificate, which
rounds differently, the largest v̂ agrees to 2ρ(1 + e^ε) (tests).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from ...numerics.binomial import binomial_rows
from ...privacy.condition import violation
from .contraction import inner_table, outer
from .params import GroupParams, MemberGroup
from .per_group import group_output_weights, validate_group_gamma

#: entries of V one chunk may hold (about six float64 arrays of this size live at once)
CHUNK_ENTRIES = 1 << 22


@dataclass(frozen=True)
class GroupTuples:
    """One group's tuples τ = (s, a, b, c, d) in the sweep's layout (γ-free, cached).

    Attributes:
        size: K_g.
        pure: Δ_g = 0 (only a = b = 0).
        tuples: (T, 5) int64, the layout order: block pairs {(c, d), (d, c)}, then k′ = s + b, a, s.
        beta: (T, K_g + 1) the pmfs β_g(τ) (module docstring).
        rects: (off, nA, nS) of each (block, k′) rectangle, a′ major and s′ minor (Δ_g > 0).
        read: (T,) the position of the cell each tuple, as an A-tuple, reads after the passes.
        pairs: (start, stop) of each block pair, in order.
    """

    size: int
    pure: bool
    tuples: np.ndarray
    beta: np.ndarray
    rects: tuple[tuple[int, int, int], ...]
    read: np.ndarray
    pairs: tuple[tuple[int, int], ...]


def _rect_offset(R: np.ndarray, k: np.ndarray) -> np.ndarray:
    """Offset of rectangle k′ inside a Δ > 0 block of R: Σ_{j<k′} (R + 1 − j)(j + 1) cells."""
    return ((R + 1) * k * (k + 1)) // 2 - ((k - 1) * k * (k + 1)) // 3


@functools.lru_cache(maxsize=16)
def group_tuples(size: int, eps: float, Delta: float) -> GroupTuples:
    """The layout and β rows of one group (:class:`GroupTuples`); read-only arrays, cached."""
    K = int(size)
    pure = Delta == 0.0
    e = math.exp(eps)
    hi, lo = (e + Delta) / (e + 1.0), (1.0 - Delta) / (e + 1.0)
    Bh, Bl = binomial_rows(K, hi, lo), binomial_rows(K, lo, hi)
    if not pure:
        Bd, Bu = binomial_rows(K, Delta, 1.0 - Delta), binomial_rows(K, 1.0 - Delta, Delta)
    offs = np.full((K + 1, K + 1), -1, dtype=np.int64)
    rows, rects, pairs = [], [], []
    pos = 0
    for c in range(K + 1):
        for d in range(c, K + 1 - c):
            start = pos
            for cc, dd in ((c, d), (d, c)) if c != d else ((c, d),):
                R = K - cc - dd
                offs[cc, dd] = pos
                for k in range(R + 1):
                    if pure:
                        rows.append((k, 0, 0, cc, dd))
                        pos += 1
                        continue
                    nA, nS = R - k + 1, k + 1
                    rects.append((pos, nA, nS))
                    for a in range(nA):
                        for s in range(nS):
                            rows.append((s, a, k - s, cc, dd))
                    pos += nA * nS
            pairs.append((start, pos))
    tup = np.array(rows, dtype=np.int64)
    s, a, b, c, d = tup.T
    R = K - c - d
    if pure:
        read = offs[d, c] + s
    else:
        k = s + b
        read = offs[d, c] + _rect_offset(R, k) + (R - s - a - b) * (k + 1) + b
    beta = np.zeros((tup.shape[0], K + 1))
    cache: dict[tuple[int, int, int, int], np.ndarray] = {}
    for i, (s_, a_, b_, c_, d_) in enumerate(rows):
        key = (a_, b_, c_, d_)
        f = cache.get(key)
        if f is None:
            f = np.convolve(Bh[c_, : c_ + 1], Bl[d_, : d_ + 1])
            if not pure:
                f = np.convolve(np.convolve(Bd[a_, : a_ + 1], Bu[b_, : b_ + 1]), f)
            cache[key] = f
        beta[i, s_: s_ + f.shape[0]] = f
    for x in (tup, read, beta):
        x.flags.writeable = False
    return GroupTuples(K, pure, tup, beta, tuple(rects), read, tuple(pairs))


def tuples_of(group: MemberGroup) -> GroupTuples:
    """:func:`group_tuples` of a :class:`MemberGroup`."""
    return group_tuples(group.size, group.eps, group.Delta)


def _segments(lays: list[GroupTuples], budget: int) -> list[list[tuple[int, int]]]:
    """Each group's axis cut into runs of whole block pairs, so that one chunk (one run per group)
    holds about ``budget`` entries (never less than one block pair per group)."""
    sizes = [lay.tuples.shape[0] for lay in lays]
    floor = [max(b - a for a, b in lay.pairs) for lay in lays]
    cap = list(sizes)
    while math.prod(cap) > budget:
        g = max((i for i in range(len(cap)) if cap[i] // 2 >= floor[i]), key=lambda i: cap[i], default=None)
        if g is None:
            break
        cap[g] //= 2
    out = []
    for lay, cg in zip(lays, cap, strict=True):
        runs: list[tuple[int, int]] = []
        for a, b in lay.pairs:
            if runs and b - runs[-1][0] <= cg:
                runs[-1] = (runs[-1][0], b)
            else:
                runs.append((a, b))
        out.append(runs)
    return out


def _passes(X: np.ndarray, axis: int, lay: GroupTuples, start: int, stop: int, fn) -> None:
    """In place along ``axis`` of X (positions start..stop−1 of the group's layout): the suffix
    extremes along s′ and then the prefix extremes along a′ of every (block, k′) rectangle in the
    range (``fn`` is np.minimum or np.maximum; module docstring)."""
    Y = np.moveaxis(X, axis, 0)
    rest = Y.shape[1:]
    for off, nA, nS in lay.rects:
        if off < start or off >= stop or nA * nS == 1:
            continue
        r = Y[off - start: off - start + nA * nS].reshape((nA, nS) + rest)
        if not np.may_share_memory(r, X):  # pragma: no cover - splitting one axis is always a view
            raise AssertionError("the passes would work on a copy")
        for s in range(nS - 2, -1, -1):
            fn(r[:, s + 1], r[:, s], out=r[:, s])
        for a in range(1, nA):
            fn(r[a - 1], r[a], out=r[a])


def collapse(V: np.ndarray, lays: list[GroupTuples], runs: tuple[tuple[int, int], ...], fn) -> np.ndarray:
    """The extreme (``fn``: np.minimum or np.maximum) of V over each A-combination's product box
    (module docstring): for each group's axis in turn, the passes and the gather at the read cells."""
    X = V.copy()
    for g, (lay, (a, b)) in enumerate(zip(lays, runs, strict=True)):
        if not lay.pure:
            _passes(X, g, lay, a, b, fn)
        X = np.take(X, lay.read[a:b] - a, axis=g)
    return X


@dataclass(frozen=True)
class GroupSweepResult:
    """What :func:`sweep_groups` found.

    Attributes:
        max_violation: the largest v̂ over every configuration (output 1, D → D′; the other
            outputs and directions are its images, module docstring).
        worst: (0, the configuration's count vectors per group, concatenated) attaining it; 0 is
            the direction D → D′, the key format of the grouped solver's cuts.
        candidates: up to ``top`` (v̂, 0, counts) above the threshold, most violated first.
        checked: the configurations covered, Π_g C(K_g + C_g − 1, C_g − 1).
    """

    max_violation: float
    worst: tuple[int, tuple[int, ...]]
    candidates: tuple[tuple[float, int, tuple[int, ...]], ...]
    checked: int


def inner_first(T: np.ndarray) -> np.ndarray:
    """The inner table (:func:`darrm.models.groups.contraction.inner_table`) with its s axis first, contiguous."""
    return np.ascontiguousarray(np.moveaxis(T, -1, 0))


def table(beta_first: np.ndarray, inner: np.ndarray) -> np.ndarray:
    """V[n_1, n_2, …] = Σ_s beta_first[n_1, s]·inner[s, n_2, …]: the outermost group's sum as one
    plain matrix product (dot products of K_1 + 1 non-negative terms; :func:`inner_first`'s layout)."""
    return (beta_first @ inner.reshape(inner.shape[0], -1)).reshape((beta_first.shape[0],) + inner.shape[1:])


def _positions(flat: int, shape: tuple[int, ...], runs: tuple[tuple[int, int], ...]) -> tuple[int, ...]:
    """The groups' layout positions of a flat index into a chunk array over the layout ranges ``runs``."""
    return tuple(int(i) + r[0] for i, r in zip(np.unravel_index(flat, shape), runs, strict=True))


def iter_chunks(w: np.ndarray, lays: list[GroupTuples],
                chunk_entries: int | None = None) -> Iterator[tuple[tuple[tuple[int, int], ...], np.ndarray]]:
    """(runs, V) over the chunks of tuple combinations: V = Pr[A = 1] (weights ``w``: over L, or
    per group count) at every combination of the groups' tuples in the layout ranges ``runs``
    (module docstring; one inner table per chunk of the other groups, one matrix product per chunk)."""
    segs = _segments(lays, CHUNK_ENTRIES if chunk_entries is None else int(chunk_entries))
    for rest in itertools.product(*segs[1:]):
        inner = inner_first(inner_table([lays[0].beta] + [lay.beta[a:b] for lay, (a, b) in
                                         zip(lays[1:], rest, strict=True)], w))
        for first in segs[0]:
            yield (first,) + rest, table(lays[0].beta[first[0]:first[1]], inner)


def sweep_groups(gamma: np.ndarray, params: GroupParams, *, top: int = 0, threshold: float = 0.0,
                 exclude: frozenset | set = frozenset(), chunk_entries: int | None = None) -> GroupSweepResult:
    """The largest rigorous bound v̂ over every configuration of one corner multiset per group (output
    1, D → D′; the other three by the joint swap and reflection, module docstring), and the ``top``
    most violated configurations above ``threshold`` not in ``exclude``.

    Args:
        gamma: the full symmetric table γ(0..K), or the per-group table when ``params.per_group``
            (:mod:`darrm.models.groups.per_group`: the same sweep over W(l_1, …, l_G); the joint
            reflection gives the other output).
        params: the grouped members and the target.
        top: how many candidates to report (constraint generation's cuts); 0 for none.
        threshold: a candidate's v̂ must exceed it.
        exclude: (0, counts) keys not to report (cuts already in the LP).
        chunk_entries: the chunk size (default :data:`CHUNK_ENTRIES`).

    Returns:
        The :class:`GroupSweepResult`.

    Raises:
        ParameterError: a bad γ.
    """
    g = validate_group_gamma(gamma, params)
    chk = params.check
    lays = [tuples_of(gr) for gr in params.groups]
    w = group_output_weights(g, params)
    keep = int(top) + len(exclude)
    best, best_at = -math.inf, (0,) * len(lays)
    found: list[tuple[float, tuple[int, ...]]] = []
    for runs, V in iter_chunks(w, lays, chunk_entries):
        v = violation(V, collapse(V, lays, runs, np.minimum), chk)
        at = int(np.argmax(v))
        m = float(v.flat[at])
        if m > best:
            best, best_at = m, _positions(at, v.shape, runs)
        if keep > 0 and m > threshold:
            flat = v.ravel()
            hot = np.flatnonzero(flat > threshold)
            if hot.shape[0] > keep:
                hot = hot[np.argpartition(flat[hot], -keep)[-keep:]]
            found += [(float(flat[i]), _positions(int(i), v.shape, runs)) for i in hot]
        if len(found) > 4 * keep:
            found = sorted(found, key=lambda t: -t[0])[:keep]
    found.sort(key=lambda t: -t[0])
    cands: list[tuple[float, int, tuple[int, ...]]] = []
    for v, pos in found:
        if len(cands) >= top:
            break
        counts = resolve(lays, pos, w)
        if (0, counts) not in exclude:
            cands.append((v, 0, counts))
    return GroupSweepResult(best, (0, resolve(lays, best_at, w)), tuple(cands), params.configurations)


def _box(lay: GroupTuples, p: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The B-tuple positions of the box of A-tuple ``p`` (module docstring) and their (s′, a′)."""
    s, a, b, c, d = (int(x) for x in lay.tuples[p])
    if lay.pure:
        return np.array([int(lay.read[p])]), np.array([s]), np.array([0])
    R, k = lay.size - c - d, s + b
    sp = np.arange(b, k + 1)
    ap = np.arange(0, R - s - a - b + 1)
    grid_s, grid_a = np.meshgrid(sp, ap, indexing="ij")
    S, A = grid_s.ravel(), grid_a.ravel()
    # the cell (k, a′, s′) of block (d, c) is the read cell of (k, R − σ, b) moved to (a′, s′)
    base = int(lay.read[p]) - (R - s - a - b) * (k + 1) - b
    return base + A * (k + 1) + S, S, A


def counts_of(lay: GroupTuples, p: int, s_prime: int, a_prime: int) -> tuple[int, ...]:
    """The group's corner counts (order of :func:`darrm.privacy.corners.corners`) of the multiset
    with A-tuple ``p`` and B-tuple (s′, a′, ·): n_6 = c, n_7 = d, n_3 = a, n_4 = b, n_1 = s′ − b,
    n_5 = s − n_1, n_2 = a′ (Δ_g = 0: (n_0, n_1, n_(hi,lo), n_(lo,hi)) = (·, s, c, d))."""
    s, a, b, c, d = (int(x) for x in lay.tuples[p])
    if lay.pure:
        return (lay.size - s - c - d, s, c, d)
    n1 = s_prime - b
    n = [0, n1, a_prime, a, b, s - n1, c, d]
    n[0] = lay.size - sum(n)
    return tuple(n)


def resolve(lays: list[GroupTuples], pos: tuple[int, ...], w: np.ndarray) -> tuple[int, ...]:
    """A configuration attaining the minimum of V (Pr[A(D′) = 1]) over the product box of the
    A-tuples ``pos``, as concatenated count vectors."""
    boxes = [_box(lay, p) for lay, p in zip(lays, pos, strict=True)]
    inner = inner_table([lays[0].beta] + [lay.beta[bx[0]] for lay, bx in zip(lays[1:], boxes[1:], strict=True)], w)
    V = outer(lays[0].beta[boxes[0][0]], inner)
    at = np.unravel_index(int(np.argmin(V)), V.shape)
    out: list[int] = []
    for lay, p, bx, i in zip(lays, pos, boxes, at, strict=True):
        out += counts_of(lay, p, int(bx[1][i]), int(bx[2][i]))
    return tuple(out)


def sweep_memory(params: GroupParams, chunk_entries: int | None = None) -> float:
    """Estimated peak bytes of :func:`sweep_groups`: the β rows, one inner table and six chunk
    arrays (a chunk holds about ``chunk_entries`` entries, or one block pair per group if larger)."""
    sizes = [math.comb(g.size + 5, 5) if g.Delta > 0 else math.comb(g.size + 3, 3) for g in params.groups]
    pair = [2 * math.comb(g.size + 3, 3) if g.Delta > 0 else 2 * (g.size + 1) for g in params.groups]
    budget = CHUNK_ENTRIES if chunk_entries is None else int(chunk_entries)
    chunk = float(min(math.prod(sizes), max(budget, math.prod(min(p, t) for p, t in zip(pair, sizes, strict=True)))))
    beta = 8.0 * sum(t * (g.size + 1) for t, g in zip(sizes, params.groups, strict=True))
    inner = 8.0 * math.prod(sizes[1:]) * (params.groups[0].size + 1)
    return beta + min(inner, 8.0 * chunk * (params.groups[0].size + 1)) + 6.0 * 8.0 * chunk

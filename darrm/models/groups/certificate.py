"""The rigorous certificate for grouped members: Lemma 3.4 over the product of the groups' corner multisets.

**Claim.**  DaRRM_γ (γ symmetric) is (ε, δ)-DP for :class:`~darrm.models.groups.params.GroupParams` iff
for every configuration — one corner multiset n_g per group (:mod:`darrm.models.groups.params` proves
that these are the worst cases) — both outputs and both directions satisfy Lemma 3.4 (Eq. 1).

**Evaluation.**  Group g's vote count L_g has the pmfs α_g = PB(p_g), α′_g = PB(p′_g) of its
multiset (:func:`darrm.privacy.corner_pmfs.pmf_pairs`, by the non-negative recurrence with
the corners' complements in closed form).  L = Σ_g L_g, so with w_l = Pr[A = 1 | L = l]

    Pr[A = 1] = Σ_{k_1} α_1[k_1] Σ_{k_2} α_2[k_2] ⋯ Σ_{k_G} α_G[k_G] · w_{k_1 + ⋯ + k_G}

and Pr[A = 0] the same with w reversed (Pr[A = 0 | L = l] = w_{K−l} for a symmetric γ, never
1 − Pr[A = 1]).  The sums are contracted innermost-first, group G to group 2, into a table
T[n_2, …, n_G, s] (s = 0..K_1), and the last level is one matrix product α_1 · Tᵀ: every
configuration's probability in Π_g N_g products of (K_1 + 1) terms, no convolution materialised.
The first group's multisets are streamed in blocks (:data:`BLOCK_BYTES`), so the memory is T's and
one block's, not the product's.

**Rounding.**  Every number is non-negative and nothing is subtracted before the comparison, so
Higham's bounds (§3.1, §3.5) hold in any order: a term Π_g α_g[k_g]·w carries the pmf entries'
≤ 9K_g relative roundings (2K_g recurrence steps, K_g corner factors of ≤ 7u each, as in
:mod:`darrm.privacy.condition`), w's 3u, one product per level and a sum of ≤ K_g + 1 terms per
level: ≤ Σ_g(9K_g + K_g + 1) + 3 = 10K + G + 3 ≤ 16(K + 2) roundings since G ≤ K, so ρ(K) of
:func:`darrm.privacy.condition.check` bounds the relative error of every probability.  Gradual
underflow can add ≤ 2⁻¹⁰⁷⁴ per rounding; a probability's tree has ≤ (2G + 2)·Π_g(K_g + 2) of
them, each carried on by factors ≤ 1, so η_G = (2G + 2)·Π_g(K_g + 2)·2⁻¹⁰⁷⁴ is added to η
(:func:`darrm.models.groups.params.group_check`; nothing is flushed here).  The verdict is then
v̂ ≤ 0 ⇒ exact violation ≤ 0, with the proof of :mod:`darrm.privacy.condition`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ...privacy.certify import Certificate
from ...privacy.condition import violation
from ...privacy.corner_pmfs import pmf_pairs
from ...privacy.corners import complements, corners, count_vectors
from ..group_lists import refuse_over
from .contraction import inner_table, outer
from .params import GroupParams, MemberGroup
from .per_group import group_output_weights, validate_group_gamma
from .sweep import sweep_groups, sweep_memory

#: bytes per configuration the certificate holds at once (four probabilities, violations, indices)
BYTES_PER_CONFIGURATION = 64


def group_pmfs(group: MemberGroup) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count vectors (N_g, C_g), α_g (N_g, K_g+1), α′_g) over every corner multiset of the group,
    with the corners' complements in closed form (:func:`darrm.privacy.corners.complements`)."""
    cs, comp = corners(group.eps, group.Delta), complements(group.eps, group.Delta)
    counts = count_vectors(group.size, cs.shape[0])
    a, ap = pmf_pairs(counts, cs, comp)
    return counts, a, ap


#: bytes a block of the first group's configurations may take (the four violation arrays and the
#: two probability arrays of each output)
BLOCK_BYTES = 128 * 2**20


def _inner_size(params: GroupParams) -> int:
    return math.prod(g.multisets for g in params.groups[1:])


def block_rows(params: GroupParams) -> int:
    """How many of the first group's multisets one block holds (:data:`BLOCK_BYTES`)."""
    return max(1, min(params.groups[0].multisets, BLOCK_BYTES // (_inner_size(params) * BYTES_PER_CONFIGURATION)))


def _memory(params: GroupParams) -> float:
    """Peak bytes: the inner tables (four, of K_1 + 1 entries per inner configuration) and one block."""
    inner = _inner_size(params)
    return 4.0 * inner * (params.groups[0].size + 1) * 8 + float(block_rows(params)) * inner * BYTES_PER_CONFIGURATION


def check_memory(params: GroupParams, max_memory: float | None, *, exhaustive: bool = False) -> float:
    """The certificate's estimated peak bytes (the factorised sweep's,
    :func:`darrm.models.groups.sweep.sweep_memory`, or with ``exhaustive`` this module's product
    evaluation's), refused up front when over ``max_memory``.

    Raises:
        ParameterError: naming ``max_memory`` (or ``groups`` when no budget was given and the
            estimate exceeds 8 GiB).
    """
    need = _memory(params) if exhaustive else sweep_memory(params)
    return refuse_over(need, max_memory if max_memory is not None else 8.0 * 2**30,
                       "max_memory" if max_memory is not None else "groups",
                       f"the certificate of the groups' {params.configurations} corner configurations needs")


def iter_probability_blocks(gamma: np.ndarray, params: GroupParams,
                            pmfs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
                            rows: int | None = None) -> Iterator[tuple[int, list[tuple[np.ndarray, np.ndarray]]]]:
    """(start, [(Pr[A(D) = 1], Pr[A(D′) = 1]), (Pr[A(D) = 0], Pr[A(D′) = 0])]) over blocks of the
    first group's multisets, each array (b, N_2, …, N_G) over configurations (start..start+b−1,
    n_2, …, n_G) (module docstring; non-negative contractions, relative error ≤ ρ(K))."""
    g = np.asarray(gamma, dtype=np.float64)
    if pmfs is None:
        pmfs = [group_pmfs(gr) for gr in params.groups]
    rows = block_rows(params) if rows is None else int(rows)
    w = group_output_weights(g, params)
    a = [p[1] for p in pmfs]
    ap = [p[2] for p in pmfs]
    tables = [(inner_table(a, ww), inner_table(ap, ww)) for ww in (w, np.flip(w).copy())]
    n1 = a[0].shape[0]
    for start in range(0, n1, rows):
        b = min(rows, n1 - start)
        yield start, [(outer(a[0][start:start + b], T), outer(ap[0][start:start + b], Tp)) for T, Tp in tables]


def iter_violation_blocks(gamma: np.ndarray, params: GroupParams,
                          pmfs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None,
                          rows: int | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """(start, V) over blocks of the first group's multisets: V (4, b, N_2, …, N_G) holds v̂ of
    configurations (start..start+b−1, n_2, …, n_G) for output 1 D→D′, output 1 D′→D, output 0
    D→D′, output 0 D′→D (rigorous bounds, :mod:`darrm.privacy.condition`)."""
    chk = params.check
    for start, probs in iter_probability_blocks(gamma, params, pmfs, rows):
        V = np.empty((4,) + probs[0][0].shape)
        for o, (P, Pp) in enumerate(probs):
            V[2 * o] = violation(P, Pp, chk)
            V[2 * o + 1] = violation(Pp, P, chk)
        yield start, V


def configuration_violations(gamma: np.ndarray, params: GroupParams,
                             pmfs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None) -> np.ndarray:
    """v̂ of every configuration at once, shape (4, N_1, …, N_G) (:func:`iter_violation_blocks` in one block)."""
    return next(iter_violation_blocks(gamma, params, pmfs, rows=params.groups[0].multisets))[1]


def certify_groups(gamma: np.ndarray, params: GroupParams, *, tol: float = 0.0,
                   max_memory: float | None = None, exhaustive: bool = False) -> Certificate:
    """Largest rigorous DP violation bound of DaRRM_γ over every configuration of group corner
    multisets, both outputs and both directions.

    By default by the factorised sweep (:func:`darrm.models.groups.sweep.sweep_groups`: running minima
    group by group over tuples, output 1, D → D′, the other three families being its images under
    the joint swap and reflection), at any size that fits memory; with ``exhaustive`` by visiting
    every configuration's four probabilities (module docstring): the reference the sweep is tested
    against, small products only.  Both give the same largest v̂ up to rounding (2ρ(1 + e^ε)).

    Args:
        gamma: the full symmetric table γ(0..K), or the per-group table (shape (K_1 + 1, …,
            K_G + 1), symmetric under the joint reflection) when ``params.per_group``
            (:mod:`darrm.models.groups.per_group`: Pr[A = 1] is the contraction with W(l_1, …, l_G) instead
            of w(Σ_g l_g), Pr[A = 0] with W reflected; everything else is unchanged).
        params: the grouped members and the target.
        tol: the threshold ≤ 0 (default 0).
        max_memory: refuse before any work when the estimate exceeds this many bytes.
        exhaustive: visit every configuration instead of sweeping tuples.

    Returns:
        The :class:`~darrm.Certificate`; ``worst_counts`` concatenates the groups' count vectors.

    Raises:
        ParameterError: a bad γ, or the evaluation does not fit the memory budget.
    """
    g = validate_group_gamma(gamma, params)
    chk = params.check
    check_memory(params, max_memory, exhaustive=exhaustive)
    if not exhaustive:
        res = sweep_groups(g, params)
        return Certificate(res.max_violation, res.worst[1], 1, "D,D'", res.checked, tol, chk.rho)
    total = params.configurations
    pmfs = [group_pmfs(gr) for gr in params.groups]
    best, idx = -math.inf, (0,) * (len(pmfs) + 1)
    for start, V in iter_violation_blocks(g, params, pmfs):
        at = np.unravel_index(int(np.argmax(V)), V.shape)
        if float(V[at]) > best:
            best = float(V[at])
            idx = (int(at[0]), int(at[1]) + start, *(int(i) for i in at[2:]))
    j = idx[0]
    worst = tuple(int(c) for gi, p in zip(idx[1:], pmfs, strict=True) for c in p[0][gi])
    return Certificate(best, worst, 1 if j < 2 else 0, "D,D'" if j % 2 == 0 else "D',D", total, tol,
                       chk.rho)


def iter_group_pmfs(params: GroupParams, block: int = 1 << 15) -> Iterator[tuple[list[np.ndarray], list[np.ndarray]]]:
    """(α_g per group (B, K_g + 1), α′_g per group) of the configurations of the product of the
    groups' multisets (C order), in blocks (the LP's rows: :mod:`darrm.models.groups.solver`)."""
    pmfs = [group_pmfs(gr) for gr in params.groups]
    sizes = [p[1].shape[0] for p in pmfs]
    total = math.prod(sizes)
    for start in range(0, total, block):
        flat = np.arange(start, min(total, start + block))
        idx = np.unravel_index(flat, sizes)
        yield [p[1][i] for p, i in zip(pmfs, idx, strict=True)], [p[2][i] for p, i in zip(pmfs, idx, strict=True)]


def joint_pmf(pmfs: list[np.ndarray], idx: np.ndarray) -> np.ndarray:
    """The pmf of Σ_g L_g for configurations ``idx`` (B, G): the convolution of the groups' pmfs."""
    out = pmfs[0][idx[:, 0]]
    for gi in range(1, len(pmfs)):
        b = pmfs[gi][idx[:, gi]]
        Kb = b.shape[1] - 1
        new = np.zeros((out.shape[0], out.shape[1] + Kb))
        for k in range(Kb + 1):
            new[:, k:k + out.shape[1]] += b[:, k:k + 1] * out
        out = new
    return out

"""The record-groups certificate (the reduction of :mod:`darrm.models.shard_groups`) and its LP rows."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement

import numpy as np

from ...gamma import validate_gamma
from ...logs import get_logger
from ...mechanism import output_weights
from ...privacy.certify import Certificate, validate_max_memory, validate_tol
from ...privacy.condition import folded_rows, rhs, violation
from .params import ShardGroupParams

DIRECTIONS = ("D,D'", "D',D")
_TINY = 2.0**-1074

log = get_logger("certify")


@lru_cache(maxsize=64)
def vertex_multisets(vertices: int, copies: int) -> np.ndarray:
    """Every multiset of ``copies`` vertices out of ``vertices``, as sorted index rows (M, copies):
    C(copies + vertices − 1, vertices − 1) rows."""
    return np.array(list(combinations_with_replacement(range(vertices), copies)), dtype=np.int64)


def changed_pmfs(p: np.ndarray, q: np.ndarray, multisets: np.ndarray) -> np.ndarray:
    """(M, r+1): the law of the changed members' vote count, one row per multiset of vertices.

    ``p``/``q`` are the vertices' vote probabilities and their closed-form complements; each row
    is built by the non-negative recurrence π ← q·π + p·shift(π) (no subtraction: the rounding
    bound of :mod:`darrm.privacy.condition`)."""
    M, r = multisets.shape
    pi = np.zeros((M, r + 1))
    pi[:, 0] = 1.0
    for k in range(r):
        pk, qk = p[multisets[:, k]][:, None], q[multisets[:, k]][:, None]
        nxt = qk * pi
        nxt[:, 1:] += pk * pi[:, :-1]
        pi = nxt
    return pi


def shifted_expectations(params: ShardGroupParams, copies: int, w: np.ndarray) -> np.ndarray:
    """(r+1, N+1): E[w_{X+y}] for y = 0..r and every number n of unchanged members at the upper end
    (X = their vote count, N = K − r)."""
    o = params.others(copies)
    return np.stack([np.add.reduceat(o.values * w[o.pos + y], o.starts) for y in range(copies + 1)])


@dataclass(frozen=True)
class GroupViolations:
    """One record group's rigorous bounds, normalised by its room: shape (M, N+1, 2, 2) =
    (vertex multiset, n at the upper end, output, direction)."""

    group: int
    multisets: np.ndarray
    values: np.ndarray


def violations(gamma: np.ndarray, params: ShardGroupParams) -> list[GroupViolations]:
    """For every record group g: ṽ_g = 2·v̂_g / rhs_g over every configuration (:mod:`darrm.models.shard_groups`).

    v̂_g is the rigorous bound of :mod:`darrm.privacy.condition` on
    Pr[A(D)=o] − e^{ε_g}·Pr[A(D′)=o] − δ_g (plus the mass the windows leave out), computed from
    Algorithm 1's output probabilities (Pr[A = 0] with the reversed weights), never from LP rows;
    rhs_g > 0 is group g's room (:meth:`ShardGroupParams.check_for`).  A positive v̂_g stays positive
    after normalising (clamped to the smallest subnormal), so ṽ_g ≤ 0 iff v̂_g ≤ 0.
    """
    g_ = validate_gamma(gamma, params.K)
    w1 = output_weights(g_)
    w0 = w1[::-1]
    vs, vc = params.member.changed_vertices(), params.member.changed_complements()
    out = []
    for gi, grp in enumerate(params.groups):
        r = grp.copies
        chk = params.check_for(gi)
        ms = vertex_multisets(vs.shape[0], r)
        pi = changed_pmfs(vs[:, 0], vc[:, 0], ms)   # under D
        pip = changed_pmfs(vs[:, 1], vc[:, 1], ms)  # under D′
        dropped = params.others(r).dropped
        V = np.empty((ms.shape[0], params.K - r + 1, 2, 2))
        for oi, w in ((0, w0), (1, w1)):
            E = shifted_expectations(params, r, w)
            P, Pp = pi @ E, pip @ E
            V[:, :, oi, 0] = violation(P, Pp, chk) + dropped[None, :]
            V[:, :, oi, 1] = violation(Pp, P, chk) + dropped[None, :]
        scaled = V * (2.0 / chk.rhs)
        out.append(GroupViolations(gi, ms, np.where(V > 0.0, np.maximum(scaled, _TINY), scaled)))
    return out


def flat_violations(per_group: list[GroupViolations]) -> np.ndarray:
    """Every group's normalised bounds, concatenated (the constraint-generation loop's index space)."""
    return np.concatenate([v.values.ravel() for v in per_group])


def locate(params: ShardGroupParams, index: int) -> tuple[int, int, int, int, int]:
    """(group, multiset row, n, output, direction) of a :func:`flat_violations` index."""
    C = params.member.changed_vertices().shape[0]
    for gi, grp in enumerate(params.groups):
        shape = (vertex_multisets(C, grp.copies).shape[0], params.K - grp.copies + 1, 2, 2)
        size = int(np.prod(shape))
        if index < size:
            m, n, o, d = np.unravel_index(index, shape)
            return gi, int(m), int(n), int(o), int(d)
        index -= size
    raise IndexError(index)


def certify_shard_groups(gamma: np.ndarray, params: ShardGroupParams, *, tol: float | None = None,
                         max_memory: float | None = None) -> Certificate:
    """The largest normalised bound ṽ = max_g 2·v̂_g / rhs_g of DaRRM_γ over every record group,
    multiset of the changed members' vertices, number of unchanged members at the upper end, both
    outputs and both directions.  Certified iff ≤ ``tol`` (0, or stricter); then every group's
    exact violation is ≤ 0 (:mod:`darrm.privacy.condition`).

    Args:
        gamma: γ(0..K), symmetric.
        params: the ensemble and its record groups.
        tol: None (0) or a stricter threshold ≤ 0.
        max_memory: refuse before any work when :meth:`ShardGroupParams.memory` exceeds it (bytes).

    Returns:
        The certificate; ``worst_counts`` = (group, count per vertex…, n at the upper end).

    Raises:
        ParameterError: a malformed γ, ``tol`` or ``max_memory``, or too little memory.
    """
    t = validate_tol(tol)
    need = params.check_memory(validate_max_memory(max_memory))
    log.debug("record-groups certificate at K=%d: about %.0f MiB peak (estimate)", params.K, need / 2**20)
    per = violations(gamma, params)
    flat = flat_violations(per)
    i = int(np.argmax(flat))
    gi, m, n, o, d = locate(params, i)
    C = params.member.changed_vertices().shape[0]
    counts = np.bincount(per[gi].multisets[m], minlength=C)
    return Certificate(float(flat[i]), (gi, *(int(c) for c in counts), n), o, DIRECTIONS[d], int(flat.size // 4), t,
                       params.check_for(gi).rho)


# ----------------------------------------------------------------------------- LP rows
def _alpha(params: ShardGroupParams, copies: int, n: int, pi: np.ndarray) -> np.ndarray:
    """pmf of L = Y + X (Y ~ ``pi``, the changed members' count), full length K+1."""
    off, x = params.others(copies).pmf(n)
    full = np.zeros(params.K - copies + 1)
    full[off:off + x.size] = x
    return np.convolve(pi, full)


def constraint_row(params: ShardGroupParams, index: int) -> np.ndarray:
    """The normalised folded LP row of a :func:`flat_violations` index: (row·x − 1)·rhs_g/2 is that
    configuration's violation (Lemma 3.4's row form, :func:`darrm.privacy.condition.folded_rows`,
    divided by group g's exact rhs e^{ε_g} − 1 + 2δ_g)."""
    gi, m, n, o, d = locate(params, index)
    grp = params.groups[gi]
    vs, vc = params.member.changed_vertices(), params.member.changed_complements()
    ms = vertex_multisets(vs.shape[0], grp.copies)[m:m + 1]
    a = _alpha(params, grp.copies, n, changed_pmfs(vs[:, 0], vc[:, 0], ms)[0])
    ap = _alpha(params, grp.copies, n, changed_pmfs(vs[:, 1], vc[:, 1], ms)[0])
    if d == 1:
        a, ap = ap, a
    row = folded_rows(a[None, :], ap[None, :], float(np.exp(grp.target_eps)))[0] / rhs(grp.target_eps,
                                                                                        grp.target_delta)
    return row if o == 1 else -row

"""The budget-groups certificate (the reduction of :mod:`darrm.models.weighted_shards`) and its LP rows."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from ...logs import get_logger
from ...privacy.certify import Certificate, validate_max_memory, validate_tol
from ...privacy.condition import rhs, violation
from ..groups.contraction import contract
from ..groups.per_group import joint_folded_rows, joint_weights
from .params import WeightedShardParams

DIRECTIONS = ("D,D'", "D',D")
_TINY = 2.0**-1074

log = get_logger("certify")


def _layout(params: WeightedShardParams) -> Any:
    """``params`` for the per-group helpers of :mod:`darrm.models.groups.per_group`, which read only the
    layout (``groups[g].size``, ``K``, ``mid``, ``per_group``) that both parameter types share."""
    return cast(Any, params)


def unchanged_laws(params: WeightedShardParams, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(A, dropped): A[j, k] = Pr[X = k] for X the vote count of n unchanged members, j of them at
    the upper end (dense (n+1, n+1), from the windows of :func:`darrm.numerics.binomial.others_pmfs`),
    and the mass each window leaves out."""
    key = ("dense", n)
    if key not in params._others:  # cached with the windows (params.others)
        o = params.others(n)
        A = np.zeros((n + 1, n + 1))
        for j in range(n + 1):
            off, x = o.pmf(j)
            A[j, off:off + x.size] = x
        params._others[key] = (A, np.asarray(o.dropped, dtype=np.float64))
    return params._others[key]


def changed_laws(params: WeightedShardParams, g: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(α_g, α′_g, dropped): the law of group g's count when one of its members changes, rows
    v·K_g + j for the changed member at vertex v and j of the K_g − 1 others at the upper end,
    under D (p_v) and D′ (p′_v); the non-negative step π ← q·π + p·shift(π) with the vertices'
    closed-form complements (no subtraction)."""
    Kg = params.groups[g].size
    A, dropped = unchanged_laws(params, Kg - 1)
    vs, vc = params.member.changed_vertices(), params.member.changed_complements()
    out = []
    for col in (0, 1):
        rows = np.zeros((vs.shape[0], Kg, Kg + 1))
        rows[:, :, :Kg] = vc[:, col, None, None] * A[None, :, :]
        rows[:, :, 1:] += vs[:, col, None, None] * A[None, :, :]
        out.append(rows.reshape(vs.shape[0] * Kg, Kg + 1))
    return out[0], out[1], np.tile(dropped, vs.shape[0])


@dataclass(frozen=True)
class GroupViolations:
    """Budget group g's rigorous bounds, normalised by its room: shape (B_1, …, B_G, 2, 2) = (one
    axis per group: j members at the upper end, or for group g the changed member's vertex and j;
    output; direction)."""

    group: int
    values: np.ndarray


def output_pairs(gamma: np.ndarray, params: WeightedShardParams) -> Iterator[tuple[int, int, np.ndarray, np.ndarray,
                                                                                   np.ndarray]]:
    """The pairs (Pr[A(D)=o], Pr[A(D′)=o]) of every configuration of :mod:`darrm.models.weighted_shards`'s
    reduction, block by block: (group g, output o, P, P′, left-out mass), P and P′ of shape
    (one axis per group: j members at the upper end, or for group g the changed member's vertex and
    j), the mass the windows leave out (Σ_h of each group's) broadcast to it.

    Algorithm 1's output probabilities Σ_l Π_h α_h[l_h]·W(l) (:func:`darrm.models.groups.contraction.contract`;
    Pr[A = 0 | l] = W(K⃗ − l), the table flipped), never LP rows; the certificate
    (:func:`violations`) and the privacy profile (:mod:`darrm.models.weighted_shards.profile`) read them.
    """
    g_ = params.validate_table(gamma)
    W1 = joint_weights(g_, _layout(params))
    W0 = np.flip(W1)
    G = len(params.groups)
    laws = [unchanged_laws(params, grp.size) for grp in params.groups]
    for gi in range(G):
        a, ap, drop_g = changed_laws(params, gi)
        pm = [a if h == gi else laws[h][0] for h in range(G)]
        pmp = [ap if h == gi else laws[h][0] for h in range(G)]
        drops = [drop_g if h == gi else laws[h][1] for h in range(G)]
        dropped = cast(np.ndarray, sum(d.reshape((1,) * h + (-1,) + (1,) * (G - h - 1)) for h, d in enumerate(drops)))
        for oi, W in ((0, W0), (1, W1)):
            yield gi, oi, contract(pm, W), contract(pmp, W), dropped


def violations(gamma: np.ndarray, params: WeightedShardParams) -> list[GroupViolations]:
    """For every budget group g: ṽ_g = 2·v̂_g / rhs_g over every configuration (:mod:`darrm.models.weighted_shards`).

    v̂_g is the rigorous bound of :mod:`darrm.privacy.condition` on
    Pr[A(D)=o] − e^{ε_g}·Pr[A(D′)=o] − δ_g (plus the mass the windows leave out), computed from
    :func:`output_pairs`; rhs_g > 0 is group g's room (:meth:`WeightedShardParams.check_for`).  A positive
    v̂_g stays positive after normalising (clamped to the smallest subnormal), so ṽ_g ≤ 0 iff v̂_g ≤ 0.
    """
    out = []
    V = np.empty(0)
    for gi, oi, P, Pp, dropped in output_pairs(gamma, params):
        chk = params.check_for(gi)
        if oi == 0:
            V = np.empty(P.shape + (2, 2))
        V[..., oi, 0] = violation(P, Pp, chk) + dropped
        V[..., oi, 1] = violation(Pp, P, chk) + dropped
        if oi == 1:
            scaled = V * (2.0 / chk.rhs)
            out.append(GroupViolations(gi, np.where(V > 0.0, np.maximum(scaled, _TINY), scaled)))
    return out


def flat_violations(per_group: list[GroupViolations]) -> np.ndarray:
    """Every group's normalised bounds, concatenated (the constraint-generation loop's index space)."""
    return np.concatenate([v.values.ravel() for v in per_group])


def _shape(params: WeightedShardParams, g: int) -> tuple[int, ...]:
    C = params.member.changed_vertices().shape[0]
    return tuple(C * grp.size if h == g else grp.size + 1 for h, grp in enumerate(params.groups)) + (2, 2)


def locate(params: WeightedShardParams, index: int) -> tuple[int, tuple[int, ...], int, int]:
    """(group, per-group row indices, output, direction) of a :func:`flat_violations` index."""
    for gi in range(len(params.groups)):
        shape = _shape(params, gi)
        size = int(np.prod(shape))
        if index < size:
            *cells, o, d = (int(i) for i in np.unravel_index(index, shape))
            return gi, tuple(cells), o, d
        index -= size
    raise IndexError(index)


def certify_weighted_shards(gamma: np.ndarray, params: WeightedShardParams, *, tol: float | None = None,
                            max_memory: float | None = None) -> Certificate:
    """The largest normalised bound ṽ = max_g 2·v̂_g / rhs_g of DaRRM_γ over every budget group, the
    changed member's vertex, the number of unchanged members at the upper end in every group, both
    outputs and both directions.  Certified iff ≤ ``tol`` (0, or stricter); then every group's exact
    violation is ≤ 0 (:mod:`darrm.privacy.condition`).

    Args:
        gamma: γ(l_1, …, l_G), symmetric under the joint reflection (and of the weighted form when
            ``params.weights`` is set).
        params: the budget groups.
        tol: None (0) or a stricter threshold ≤ 0.
        max_memory: refuse before any work when :meth:`WeightedShardParams.memory` exceeds it (bytes).

    Returns:
        The certificate; ``worst_counts`` = (group, changed member's vertex, members at the upper end
        in each group).

    Raises:
        ParameterError: a malformed γ, ``tol`` or ``max_memory``, or too little memory.
    """
    t = validate_tol(tol)
    need = params.check_memory(validate_max_memory(max_memory))
    log.debug("budget-groups certificate at K=%d: about %.0f MiB peak (estimate)", params.K, need / 2**20)
    flat = flat_violations(violations(gamma, params))
    i = int(np.argmax(flat))
    gi, cells, o, d = locate(params, i)
    Kg = params.groups[gi].size
    ups = tuple(c % Kg if h == gi else c for h, c in enumerate(cells))
    return Certificate(float(flat[i]), (gi, cells[gi] // Kg, *ups), o, DIRECTIONS[d], int(flat.size // 4), t,
                       params.check_for(gi).rho)


# ----------------------------------------------------------------------------- LP rows
def lp_variables(params: WeightedShardParams) -> np.ndarray:
    """For every cell l of U = {l : Σ_g l_g ≥ mid} (C order, :func:`darrm.models.groups.per_group.upper_mask`)
    the index of its LP variable: itself in the per-group form, its class of equal weighted count in
    the weighted form (:meth:`WeightedShardParams.weighted_classes`; every class meets U, since the
    reflection keeps the class and maps U's complement onto U)."""
    from ..groups.per_group import upper_mask

    mask = upper_mask(_layout(params))
    if params.weights is None:
        return np.arange(int(mask.sum()))
    return params.weighted_classes()[mask]


def constraint_row(params: WeightedShardParams, index: int, variables: np.ndarray | None = None) -> np.ndarray:
    """The normalised folded LP row of a :func:`flat_violations` index over the LP variables:
    (row·x − 1)·rhs_g/2 is that configuration's violation (Lemma 3.4's row form over the per-group
    cells, :func:`darrm.models.groups.per_group.joint_folded_rows`, divided by group g's exact rhs
    e^{ε_g} − 1 + 2δ_g; in the weighted form the cells of one class summed, since they share γ)."""
    gi, cells, o, d = locate(params, index)
    a_parts, ap_parts = [], []
    for h, grp in enumerate(params.groups):
        if h == gi:
            a, ap, _ = changed_laws(params, h)
            a_parts.append(a[cells[h]:cells[h] + 1])
            ap_parts.append(ap[cells[h]:cells[h] + 1])
        else:
            A = unchanged_laws(params, grp.size)[0][cells[h]:cells[h] + 1]
            a_parts.append(A)
            ap_parts.append(A)
    if d == 1:
        a_parts, ap_parts = ap_parts, a_parts
    grp = params.groups[gi]
    row = joint_folded_rows(a_parts, ap_parts, float(np.exp(grp.target_eps)), _layout(params))[0]
    row = row / rhs(grp.target_eps, grp.target_delta)
    var = lp_variables(params) if variables is None else variables
    if params.weights is not None:
        row = np.bincount(var, weights=row, minlength=int(var.max()) + 1)
    return row if o == 1 else -row

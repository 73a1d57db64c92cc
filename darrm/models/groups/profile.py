"""The privacy profile of one DaRRM_γ query over grouped members, from the groups' corners.

**Claim.**  For :class:`~darrm.models.groups.params.GroupParams` (either γ form) the exact profile
δ_γ(ε′) = sup_{D≃D′} H_{e^{ε′}}(A(D)‖A(D′)) is the maximum, over every configuration of one corner
multiset per group, both outputs and both directions, of max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]),
and the upper concave envelope of the cloud of points (Pr[A(D′)=o], Pr[A(D)=o]) gives the
dominating pair.  *Proof.*  :mod:`darrm.privacy.profile`'s Claims 1 and 2 use only that each
Pr[A(·)=o] is affine in each member's (p_i, p′_i) — true here (:mod:`darrm.models.groups.params`,
:mod:`darrm.models.groups.per_group`: with the other members fixed, the joint count pmf is affine in
member i's pair), so every member may be put at a vertex of its *own* region and only each group's
multiset matters — and that the cloud is symmetric under (x, y) → (1 − y, 1 − x), which the joint
swap and reflection give (they map the product of the groups' corner sets onto itself).  ∎

**Evaluation.**  ``exhaustive``: every configuration's four probabilities
(:func:`darrm.models.groups.certificate.iter_probability_blocks`), small products only.  Otherwise the
factorised sweep's chunks (:func:`darrm.models.groups.sweep.iter_chunks`): for each combination of the
groups' A-tuples, y = Pr[A(D)=1] = V(A) is shared by the configurations of the product box of
their B-tuples, so only the smallest x = min over the box of V can be on the (non-decreasing)
envelope, and for the swapped point (V(A), V(B)) only the largest; the running minima and maxima
group by group (:func:`darrm.models.groups.sweep.collapse`) give both.  Output 0 and the direction D′ → D
are output 1, D → D′, at the reflected and swapped configurations, which the sweep visits: the
cloud's envelope is the same.

**Rounding.**  Every probability is a non-negative contraction with relative error ≤ ρ(K)
(:mod:`darrm.models.groups.certificate`, :mod:`darrm.models.groups.sweep`) and an absolute underflow term
≤ η_G = [(2G + 2)·Π_g(K_g + 2) + 40(K + 2)²]·2⁻¹⁰⁷⁴ (:func:`darrm.models.groups.params.group_check`);
:func:`darrm.privacy.profile.finish` rounds the envelope outward with both.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...privacy.profile import Envelope, PrivacyProfile, finish
from .certificate import check_memory, iter_probability_blocks
from .params import GroupParams, validate_group_gamma
from .per_group import group_output_weights
from .sweep import collapse, iter_chunks, tuples_of

#: ``exhaustive=None`` visits every configuration up to this many (else the factorised sweep)
DIRECT_MAX_CONFIGURATIONS = 20_000


def underflow_bound(params: GroupParams) -> float:
    """η_G (module docstring): what gradual underflow can add to any computed probability."""
    return ((2 * len(params.groups) + 2) * math.prod(g.size + 2 for g in params.groups)
            + 40 * (params.K + 2) ** 2) * 2.0**-1074


def group_profile_cloud(gamma: np.ndarray, params: GroupParams, *, exhaustive: bool | None = None,
                        chunk_entries: int | None = None) -> tuple[Envelope, int]:
    """(the envelope of every configuration's points, how many points it covers), module docstring.

    Args:
        gamma: a validated table of the parameters' form.
        params: the grouped members (only the groups matter: the profile is over every ε′).
        exhaustive: visit every configuration (None: when there are at most
            :data:`DIRECT_MAX_CONFIGURATIONS`).
        chunk_entries: the sweep's chunk size (:func:`darrm.models.groups.sweep.iter_chunks`).

    Returns:
        The :class:`~darrm.privacy.profile.Envelope` (not yet rounded outward) and the number of
        points (4 per configuration).
    """
    env = Envelope()
    if exhaustive is None:
        exhaustive = params.configurations <= DIRECT_MAX_CONFIGURATIONS
    if exhaustive:
        for _, probs in iter_probability_blocks(gamma, params):
            for P, Pp in probs:
                env.add(Pp, P)
                env.add(P, Pp)
        return env, 4 * params.configurations
    lays = [tuples_of(gr) for gr in params.groups]
    w = group_output_weights(np.asarray(gamma, dtype=np.float64), params)
    for runs, V in iter_chunks(w, lays, chunk_entries):
        env.add(collapse(V, lays, runs, np.minimum), V)
        env.add(V, collapse(V, lays, runs, np.maximum))
    return env, 4 * params.configurations


def group_profile(gamma: Any, params: GroupParams, max_memory: float | None,
                  exhaustive: bool | None) -> PrivacyProfile:
    """The profile (module docstring), the envelope rounded outward with η_G added
    (:func:`darrm.privacy.profile.finish`; no mass is left out).

    Raises:
        ParameterError: a γ of the wrong form, or the evaluation does not fit ``max_memory``.
    """
    g = validate_group_gamma(gamma, params)
    check_memory(params, max_memory, exhaustive=bool(exhaustive))
    env, n = group_profile_cloud(g, params, exhaustive=exhaustive)
    return finish(env.x, env.y, params.K, "groups", n, extra_eta=underflow_bound(params))

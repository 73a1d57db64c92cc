"""The privacy profile of one DaRRM_γ query for each record group on shards, and for every record.

**Claim (one record group).**  For :class:`~darrm.models.shard_groups.params.ShardGroupParams` and a
record group g with r_g copies, the exact profile of the records of group g,

    δ_g(ε′) = sup over pairs D ≃ D′ that change one record of group g of H_{e^{ε′}}(A(D)‖A(D′)),

is the maximum, over every multiset of the r_g changed members' vertices, every number n of
unchanged members at the upper end, both outputs o and both directions, of
max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]); and the upper concave envelope of the cloud of points
(Pr[A(D′)=o], Pr[A(D)=o]) over those configurations gives a dominating pair of the release for the
records of group g, both directions, every s = e^{ε′} ≥ 0.
*Proof.*  :mod:`darrm.privacy.profile`'s Claim 1 needs only that, for fixed s, the function
Pr[A(D)=o] − s·Pr[A(D′)=o] is affine in each member's probabilities with the others fixed; the
reduction of :mod:`darrm.models.shard_groups` ((a)–(c)) proves exactly that for the r_g changed members'
pairs (p_i, p′_i) and the unchanged members' p_j = p′_j (it never uses the value s = e^{ε_g}), so
the supremum is attained with the changed members at vertices of F (a multiset) and the unchanged
members at lo or hi (only their number n at hi matters).  Claim 2 needs the cloud to contain both
directions (it does: both are listed) and to be symmetric under (x, y) → (1 − y, 1 − x): the
points of output 0 are (1 − Pr[A(D′)=1], 1 − Pr[A(D)=1]), the images of output 1's swapped
points, and both outputs are listed.  ∎

**Claim (every record).**  The union of the groups' clouds has the envelope whose profile is
max_g δ_g(ε′) (the maximum of y − s·x over a union is the maximum of the maxima), so its pair
dominates the release for every record, whatever its group: that is what
:func:`darrm.privacy_profile` reports for these parameters (``model`` =
"shard-groups"), and what a composition over tables of different ensembles may use.  For one
ensemble, each group's own total composes its own pair (:func:`record_group_profiles`;
:func:`darrm.accounting.queries.record_group_bounds`): a record of group g meets its group's
total, and the largest of the groups' totals holds for every record (tighter than composing the
union pair, which mixes groups' worst cases query by query).

**Rounding.**  Each probability is computed as in :func:`darrm.models.shard_groups.certificate.violations`
(non-negative recurrences and sums; relative error ≤ ρ(K), absolute error ≤ η(K) of
:mod:`darrm.privacy.condition`, as that module's docstring argues); the unchanged members' windows
leave out at most ``dropped[n]`` of mass, so the true Pr[A(·)=o] lies in
[(P̂ − η)/(1 + ρ), (P̂ + η)/(1 − ρ) + dropped].  :func:`darrm.privacy.profile.finish`
rounds the envelope outward with ρ(K) and η(K), and adds the largest dropped mass to y only
(as for disjoint members): the reported profile and pair are upper bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...errors import ParameterError
from ...gamma import validate_gamma
from ...mechanism import output_weights
from ...privacy.certify import validate_max_memory
from ...privacy.profile import Envelope, PrivacyProfile, finish
from ...table import GammaTable
from .certificate import changed_pmfs, shifted_expectations, vertex_multisets
from .params import ShardGroupParams

__all__ = ["record_group_profiles", "shard_group_cloud", "shard_group_profile"]


def shard_group_cloud(gamma: np.ndarray, params: ShardGroupParams) -> tuple[Envelope, int, float]:
    """(the envelope of every record group's points, how many points, the largest mass left out).

    Groups with the same number of copies share their points (the cloud does not depend on the
    targets), so each distinct r_g is visited once.

    Args:
        gamma: γ(0..K), validated and symmetric.
        params: the ensemble and its record groups.

    Returns:
        The :class:`~darrm.privacy.profile.Envelope` (not yet rounded outward), the number of points
        (4 per configuration: two outputs, two directions) and max over r_g and n of the windows'
        left-out mass.
    """
    w1 = output_weights(gamma)
    vs, vc = params.member.changed_vertices(), params.member.changed_complements()
    env, points, dropped = Envelope(), 0, 0.0
    for r in params.copies():
        ms = vertex_multisets(vs.shape[0], r)
        pi = changed_pmfs(vs[:, 0], vc[:, 0], ms)   # the changed members' count law under D
        pip = changed_pmfs(vs[:, 1], vc[:, 1], ms)  # under D′
        for w in (w1, w1[::-1]):                    # output 1, and output 0 (γ symmetric)
            E = shifted_expectations(params, r, w)
            P, Pp = pi @ E, pip @ E
            env.add(Pp, P)  # (Pr[A(D′)=o], Pr[A(D)=o])
            env.add(P, Pp)  # the other direction
            points += 2 * P.size
        dropped = max(dropped, float(np.max(params.others(r).dropped, initial=0.0)))
    return env, points, dropped


def shard_group_profile(gamma: Any, params: ShardGroupParams, max_memory: float | None) -> PrivacyProfile:
    """The profile every record meets (module docstring), the envelope rounded outward with the
    largest left-out mass added to y (:func:`darrm.privacy.profile.finish`).

    Raises:
        ParameterError: a malformed γ, or the laws of the unchanged members do not fit ``max_memory``.
    """
    g = validate_gamma(gamma, params.K)
    params.check_memory(max_memory)
    env, n, dropped = shard_group_cloud(g, params)
    return finish(env.x, env.y, params.K, "shard-groups", n, extra_y=dropped)


def record_group_profiles(table: GammaTable | np.ndarray, params: ShardGroupParams | None = None, *,
                          max_memory: float | None = None) -> tuple[PrivacyProfile, ...]:
    """Each record group's own privacy profile δ_g(ε′) of one DaRRM_γ query (module docstring),
    rounded outward, in the order of ``params.groups``.

    Args:
        table: a :class:`~darrm.GammaTable` of record groups (its parameters are used) or γ(0..K)
            (then ``params`` is required).
        params: the ensemble and its record groups.
        max_memory: the memory budget in bytes (None: the memory available).

    Returns:
        One :class:`~darrm.privacy.profile.PrivacyProfile` per record group (``model`` =
        "shard-groups"); a certified table's group-g profile at ε_g is ≤ δ_g.

    Raises:
        ParameterError: not a record-groups table or parameters, a malformed γ, or too little memory.
    """
    if isinstance(table, GammaTable):
        own: Any = table.params  # any member model's; checked here
        if params is not None and (not isinstance(params, ShardGroupParams) or params != own):
            raise ParameterError("params", "differs from the table's parameters; pass one or the other")
        if not isinstance(own, ShardGroupParams):
            raise ParameterError("table", f"must be a table of record groups on shards (darrm.ShardGroupParams), "
                                          f"not of {own.members!r} members: use darrm.privacy_profile")
        params, gamma = own, table.gamma
    else:
        if params is None:
            raise ParameterError("table", f"must be a darrm.GammaTable of record groups, or γ(0..K) with params, "
                                          f"got {table!r}")
        if not isinstance(params, ShardGroupParams):
            raise ParameterError("params", f"must be a darrm.ShardGroupParams (records copied into shards), got "
                                           f"{params!r}")
        gamma = table
    budget = validate_max_memory(max_memory)
    return tuple(shard_group_profile(gamma, params.record_group_params(g), budget)
                 for g in range(len(params.groups)))

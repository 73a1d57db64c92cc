"""The privacy profile of one DaRRM_γ query for budget groups on one-group shards, for every record.

**Claim.**  For :class:`~darrm.models.weighted_shards.params.WeightedShardParams` the exact profile of the
release for every record, δ(ε′) = sup over pairs D ≃ D′ that change one record (of any budget
group) of H_{e^{ε′}}(A(D)‖A(D′)), is the maximum over the budget group g of the changed record, the
changed member's vertex, the number of unchanged members at the upper end in every group, both
outputs and both directions, of max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]); the upper concave envelope
of the union of these points (Pr[A(D′)=o], Pr[A(D)=o]) over every group gives a dominating pair.
*Proof.*  :mod:`darrm.privacy.profile`'s Claim 1 needs only that Pr[A(D)=o] − s·Pr[A(D′)=o] is
affine in each member's probabilities with the others fixed: the reduction of
:mod:`darrm.models.weighted_shards` ((a)–(c)) proves that for the changed member's pair and every unchanged
member's p_j = p′_j, and never uses s = e^{ε_g}.  The maximum over a union of clouds is the maximum
of the maxima, so the union's envelope gives max_g δ_g(ε′), the profile every record meets.  Claim 2
needs both directions (both are listed) and the symmetry (x, y) → (1 − y, 1 − x): output 0 is
output 1 with the table flipped, both listed.  ∎

**Rounding.**  The pairs are the certificate's (:func:`darrm.models.weighted_shards.certificate.output_pairs`):
relative error ≤ ρ(K), absolute error ≤ η(K) plus the product evaluation's gradual underflow
η_G = (2G + 2)·Π_h(K_h + 2)·2⁻¹⁰⁷⁴ (:meth:`WeightedShardParams.check_for`); the windows' left-out mass
is added to y only.  :func:`darrm.privacy.profile.finish` rounds the envelope outward with them.
"""

from __future__ import annotations

import math

import numpy as np

from ...privacy.profile import Envelope, PrivacyProfile, finish
from .certificate import output_pairs
from .params import WeightedShardParams

_TINY = 2.0**-1074


def weighted_shard_cloud(gamma: np.ndarray, params: WeightedShardParams) -> tuple[Envelope, int, float]:
    """(the envelope of every budget group's points, how many points, the largest left-out mass)."""
    env, points, dropped = Envelope(), 0, 0.0
    for _, _, P, Pp, drop in output_pairs(gamma, params):
        env.add(Pp, P)  # (Pr[A(D′)=o], Pr[A(D)=o])
        env.add(P, Pp)  # the other direction
        points += 2 * P.size
        dropped = max(dropped, float(np.max(drop, initial=0.0)))
    return env, points, dropped


def weighted_shard_profile(gamma: np.ndarray, params: WeightedShardParams,
                           max_memory: float | None) -> PrivacyProfile:
    """The profile for every record (module docstring), rounded outward.

    Raises:
        ParameterError: a malformed γ, or the evaluation does not fit ``max_memory``.
    """
    params.check_memory(max_memory)
    env, n, dropped = weighted_shard_cloud(gamma, params)
    eta_g = (2 * len(params.groups) + 2) * math.prod(h.size + 2 for h in params.groups) * _TINY
    return finish(env.x, env.y, params.K, "weighted-shards", n, extra_y=dropped, extra_eta=eta_g)

"""The privacy profile of one DaRRM_γ query for members on disjoint shards.

**Claim.**  For :class:`~darrm.models.disjoint.params.DisjointParams` the exact profile
δ(ε′) = sup_{D≃D′} H_{e^{ε′}}(A(D)‖A(D′)) is the maximum, over the changed member's vertex v of F,
the number n of unchanged members at the upper end, both outputs and both directions, of
max(0, Pr[A(D)=o] − e^{ε′}·Pr[A(D′)=o]); the upper concave envelope of these points
(Pr[A(D′)=o], Pr[A(D)=o]) gives a dominating pair.
*Proof.*  :mod:`darrm.privacy.profile`'s Claim 1 needs only that Pr[A(D)=o] − s·Pr[A(D′)=o] is
affine in each member's probabilities with the others fixed: the reduction of :mod:`darrm.models.disjoint`
((a)–(c)) proves it for the changed member's pair and the unchanged members' p_j = p′_j without
using s = e^{ε}.  Claim 2 needs both directions (listed) and the symmetry (x, y) → (1 − y, 1 − x)
(output 0 is output 1 with the weights reversed, both listed).  ∎

**Rounding.**  The probabilities are computed as in :func:`darrm.models.disjoint.certificate.violations`
(relative error ≤ ρ(K), absolute ≤ η(K)); the unchanged members' windows leave out at most
``others.dropped`` of mass, which :func:`darrm.privacy.profile.finish` adds to y only.
"""

from __future__ import annotations

import numpy as np

from ...mechanism import output_weights
from ...numerics.binomial import expected_weights
from ...privacy.profile import Envelope, PrivacyProfile, both_directions, finish
from .params import DisjointParams


def disjoint_cloud(g: np.ndarray, params: DisjointParams) -> tuple[Envelope, int, float]:
    """(the envelope of the O(K) configurations' points, how many points, the largest mass the
    unchanged members' windows leave out)."""
    w1 = output_weights(g)
    o = params.others
    vs, vc = params.member.changed_vertices(), params.member.changed_complements()
    env, n = Envelope(), 0
    for w in (w1, w1[::-1]):
        a, b = expected_weights(o, w)
        P = vc[:, :1] * a[None, :] + vs[:, :1] * b[None, :]
        Pp = vc[:, 1:] * a[None, :] + vs[:, 1:] * b[None, :]
        both_directions(env, P, Pp)
        n += 2 * P.size
    return env, n, float(np.max(o.dropped, initial=0.0))


def disjoint_profile(g: np.ndarray, params: DisjointParams, max_memory: float | None) -> PrivacyProfile:
    """The profile (module docstring), rounded outward; ``g`` validated.

    Raises:
        ParameterError: the unchanged members' laws do not fit ``max_memory``.
    """
    params.check_memory(max_memory)
    env, n, dropped = disjoint_cloud(g, params)
    return finish(env.x, env.y, params.K, "disjoint", n, extra_y=dropped)

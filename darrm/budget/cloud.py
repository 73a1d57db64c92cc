"""The worst configurations of one query of K members on disjoint shards, as functions of γ.

For members on disjoint shards a neighbouring pair changes one member's shard; the worst cases are the
O(K) configurations of :mod:`darrm.models.disjoint` (the changed member at a vertex of its region, n unchanged
members at the high end; for non-private members the vote counts (L, L + 1)).  Each configuration,
output o and direction gives a point (x, y) = (Pr[A(D′)=o], Pr[A(D)=o]) affine in γ: the cloud whose
upper envelope is the query's privacy profile (:mod:`darrm.privacy.profile`, Claims 1–2).  The
total-budget design bounds it by a target (LP rows, :meth:`Cloud.row`) and certifies it
(:meth:`Cloud.gdp_mu`).
"""

from __future__ import annotations

import math

import numpy as np

from ..mechanism import output_weights
from ..models.disjoint.certificate import vote_count_pmf
from ..models.disjoint.members import MemberPrivacy
from ..models.disjoint.params import DisjointParams
from ..models.profile import privacy_profile
from ..numerics.binomial import expected_weights
from ..privacy.condition import folded_rows
from ..privacy.profile import PrivacyProfile
from ..validation import odd_count
from .targets import certified_gdp_mu


def points_gdp_mu(P: np.ndarray, Pp: np.ndarray, prof: PrivacyProfile) -> float:
    """The certified μ (:func:`darrm.budget.targets.certified_gdp_mu`) of a query whose worst
    configurations give Pr[A(D)=o] = ``P`` and Pr[A(D′)=o] = ``Pp`` (same shapes, every output): both
    directions' points with x + y ≤ 1 (+ 1e-9, a selection margin; the mirror of each point is
    checked in its place), rounded outward with the profile's ρ and η (which include the mass the
    windows leave out)."""
    xs, ys = np.concatenate([Pp.ravel(), P.ravel()]), np.concatenate([P.ravel(), Pp.ravel()])
    sel = xs + ys <= 1.0 + 1e-9
    x = np.clip((xs[sel] - prof.eta) / (1.0 + prof.rho), 0.0, 1.0)
    y = np.clip((ys[sel] + prof.eta) / (1.0 - prof.rho), 0.0, 1.0)
    return certified_gdp_mu(x, y)


class Cloud:
    """The worst configurations of one disjoint-members query, as functions of γ (module docstring)."""

    def __init__(self, K: int, member: MemberPrivacy):
        self.K = odd_count("K", K)
        self.member = member
        self.params = DisjointParams(self.K, member, 1.0)  # the per-query target does not enter the cloud
        self.others = self.params.others
        self.vs, self.vc = member.changed_vertices(), member.changed_complements()

    def probs(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, P′), each (2, C, K): Pr[A(D)=o] and Pr[A(D′)=o] for o = 0, 1 at every (vertex, n)
        (the arithmetic of :func:`darrm.models.disjoint.certificate.violations`)."""
        w1 = output_weights(g)
        P, Pp = [], []
        for w in (w1[::-1], w1):
            a, b = expected_weights(self.others, w)
            P.append(self.vc[:, :1] * a[None, :] + self.vs[:, :1] * b[None, :])
            Pp.append(self.vc[:, 1:] * a[None, :] + self.vs[:, 1:] * b[None, :])
        return np.stack(P), np.stack(Pp)

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        """The table's exact profile (:func:`darrm.models.profile.privacy_profile`)."""
        return privacy_profile(g, self.params)

    def gdp_mu(self, g: np.ndarray, prof: PrivacyProfile | None = None) -> float:
        """The certified μ of the table (:func:`darrm.budget.targets.certified_gdp_mu`): the cloud's
        points with x + y ≤ 1 (+ 1e-9, a selection margin), rounded outward with the profile's
        ρ and η (which include the mass the windows leave out)."""
        prof = self.profile(g) if prof is None else prof
        return points_gdp_mu(*self.probs(g), prof)

    def row(self, o: int, d: int, v: int, n: int, eps: float) -> np.ndarray:
        """The folded row r with r·x ≤ e^{ε′} − 1 + 2T(ε′) of output o, direction d, vertex v, n."""
        p, pp = self.vs[v]
        a = vote_count_pmf(self.others, n, float(p), self.K)
        ap = vote_count_pmf(self.others, n, float(pp), self.K)
        if d == 1:
            a, ap = ap, a
        r = folded_rows(a[None, :], ap[None, :], math.exp(eps))[0]
        return r if o == 1 else -r

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
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import ParameterError
from ..mechanism import output_weights
from ..models import model_of
from ..models.disjoint.certificate import vote_count_pmf
from ..models.disjoint.members import MemberPrivacy
from ..models.disjoint.params import DisjointParams
from ..models.groups.certificate import certify_groups, group_pmfs, iter_probability_blocks, joint_pmf
from ..models.groups.params import GroupParams
from ..models.groups.profile import group_profile
from ..models.profile import privacy_profile
from ..numerics.binomial import expected_weights
from ..privacy.condition import folded_rows
from ..privacy.profile import PrivacyProfile
from ..validation import function, odd_count
from .targets import certified_gdp_mu

#: most configurations (product of the groups' corner multisets) a :class:`MemberGroupsCloud` evaluates
GROUP_CONFIGURATIONS = 20_000


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


class MemberGroupsCloud:
    """The worst configurations of one query of grouped members on shared data (the product of the
    groups' corner multisets: the first group's multiset a, the others' flattened b), as functions of γ."""

    def __init__(self, params: GroupParams):
        if params.per_group:
            raise ParameterError("params", "a total-budget design reads the total vote count (gamma_form 'total'), "
                                           "not each group's count")
        if params.configurations > GROUP_CONFIGURATIONS:
            raise ParameterError("params", f"{params.configurations} corner configurations exceed the "
                                           f"{GROUP_CONFIGURATIONS} the total-budget design evaluates")
        self.params, self.K = params, params.K
        self.pmfs = [group_pmfs(gr) for gr in params.groups]
        self.shape = tuple(p[1].shape[0] for p in self.pmfs)

    def probs(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, P′), each (2, N_1, N_2·…·N_G): Pr[A(D)=o] and Pr[A(D′)=o] for o = 0, 1
        (:func:`darrm.models.groups.certificate.iter_probability_blocks`, one block)."""
        _, probs = next(iter_probability_blocks(g, self.params, self.pmfs, rows=self.shape[0]))
        (P1, Pp1), (P0, Pp0) = probs
        n = self.shape[0]
        return np.stack([P0, P1]).reshape(2, n, -1), np.stack([Pp0, Pp1]).reshape(2, n, -1)

    def row(self, o: int, d: int, a: int, b: int, eps: float) -> np.ndarray:
        """The folded row r with r·x ≤ e^{ε′} − 1 + 2T(ε′) of output o, direction d, configuration (a, b)."""
        rest = [int(i) for i in np.unravel_index(b, self.shape[1:])] if len(self.shape) > 1 else []
        idx = np.array([[a, *rest]], dtype=np.int64)
        A, Ap = joint_pmf([p[1] for p in self.pmfs], idx), joint_pmf([p[2] for p in self.pmfs], idx)
        if d == 1:
            A, Ap = Ap, A
        r = folded_rows(A, Ap, math.exp(eps))[0]
        return r if o == 1 else -r

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        """The query's exact profile, rounded outward (:func:`darrm.models.groups.profile.group_profile`)."""
        return group_profile(g, self.params, None, None)

    def gdp_mu(self, g: np.ndarray, prof: PrivacyProfile) -> float:
        """The certified μ (:func:`darrm.budget.cloud.points_gdp_mu`)."""
        return points_gdp_mu(*self.probs(g), prof)


#: the cloud of one query's worst configurations, by member-model name (:func:`register_cloud`): what a
#: table's certified GDP parameter is computed from (:func:`table_gdp_mu`)
CLOUDS: dict[str, Callable[[Any], Any]] = {}


def register_cloud(model_name: str, make: Callable[[Any], Any]) -> None:
    """Register ``make(params)``: the cloud (``profile(γ)``, ``gdp_mu(γ, profile)``) of the member model
    ``model_name``'s queries.

    Raises:
        ParameterError: naming ``make``, not callable."""
    CLOUDS[model_name] = function("make", make)


def table_gdp_mu(gamma: np.ndarray, params: Any) -> float:
    """The certified GDP parameter μ of one query of the table (γ, ``params``): its cloud's
    :meth:`Cloud.gdp_mu` (:func:`points_gdp_mu`: every worst configuration's points under the
    μ-Gaussian trade-off curve, checked in mpmath), the same number a total-budget design charges;
    inf for a member model with no registered cloud or one its cloud refuses (too many configurations).
    Computed from γ and the parameters alone."""
    make = CLOUDS.get(model_of(params).name)
    if make is None:
        return math.inf
    try:
        cloud = make(params)
    except ParameterError:
        return math.inf
    return float(cloud.gdp_mu(gamma, cloud.profile(gamma)))


register_cloud("disjoint", lambda p: Cloud(p.K, p.member))
register_cloud("groups", MemberGroupsCloud)


def groups_pair_certified(gamma: np.ndarray, params: GroupParams, eps_q: float, delta_q: float) -> bool:
    """Whether grouped members' γ is (ε_q, δ_q)-DP per query by the model's certificate
    (:func:`darrm.models.groups.certificate.certify_groups` at that target; δ_q must cover every group's Δ_g)."""
    return delta_q >= max(gr.Delta for gr in params.groups) and \
        bool(certify_groups(gamma, GroupParams(params.groups, eps_q, delta_q)).certified)


#: the model's certificate of a per-query pair (ε_q, δ_q) for a one-part table, by member-model name
#: (:func:`pair_certified`)
PAIR_CERTIFICATES: dict[str, Callable[[np.ndarray, Any, float, float], bool]] = {"groups": groups_pair_certified}


def pair_certified(gamma: np.ndarray, params: Any, eps_q: float, delta_q: float) -> bool:
    """Whether the table (γ, ``params``) is (ε_q, δ_q)-DP per query by its member model's certificate
    (False for a model with none registered): what confirms a per-query pair a design records besides
    the table's own profile (:func:`darrm.accounting.queries.confirmed_pairs`)."""
    check = PAIR_CERTIFICATES.get(model_of(params).name)
    return check is not None and check(gamma, params, eps_q, delta_q)

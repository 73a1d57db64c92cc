"""The worst configurations of one query for the records of one group, as functions of γ: the record
groups of :mod:`darrm.models.shard_groups` (:class:`RecordGroupCloud`) and the budget groups of
:mod:`darrm.models.weighted_shards` (:class:`BudgetGroupCloud`).

Each record belongs to one group, and changing it moves only what its group's worst configurations cover,
so a record of group g is owed the composition of group g's pair alone; the largest group total is a total
for every record.  :func:`record_group_clouds` gives a table's clouds (their profiles and certified GDP
parameters) and the model's certificate of a per-query pair for one group: what the total-budget designs
charge (:mod:`darrm.accounting.budget.parts`) and what every door composes
(:func:`darrm.accounting.queries.record_group_totals`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..mechanism import output_weights
from ..models import model_of
from ..models.groups.contraction import contract
from ..models.groups.per_group import joint_folded_rows, joint_weights
from ..models.shard_groups.certificate import (
    _alpha,
    certify_shard_groups,
    changed_pmfs,
    shifted_expectations,
    vertex_multisets,
)
from ..models.shard_groups.params import RecordGroup, ShardGroupParams
from ..models.shard_groups.profile import shard_group_profile
from ..models.weighted_shards.certificate import (
    _layout,
    certify_weighted_shards,
    changed_laws,
    unchanged_laws,
)
from ..models.weighted_shards.params import BudgetGroup, WeightedShardParams
from ..privacy.condition import folded_rows
from ..privacy.profile import Envelope, PrivacyProfile, finish
from ..validation import function
from .cloud import points_gdp_mu

__all__ = ["GROUP_CLOUDS", "BudgetGroupCloud", "RecordGroupCloud", "record_group_clouds", "register_group_clouds",
           "shard_groups_at", "weighted_shards_at"]

class RecordGroupCloud:
    """The worst configurations of one query for the records of one group (r copies): a multiset of
    the r changed members' vertices (row m) and the number n of unchanged members at the upper end,
    each output and direction (:mod:`darrm.models.shard_groups`'s reduction), as functions of γ."""

    def __init__(self, params: ShardGroupParams, group: int):
        self.params = params.record_group_params(group)
        self.K, self.copies = params.K, params.groups[group].copies
        vs, vc = params.member.changed_vertices(), params.member.changed_complements()
        ms = vertex_multisets(vs.shape[0], self.copies)
        self.pi, self.pip = changed_pmfs(vs[:, 0], vc[:, 0], ms), changed_pmfs(vs[:, 1], vc[:, 1], ms)

    def probs(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, P′), each (2, M, K − r + 1): Pr[A(D)=o] and Pr[A(D′)=o] for o = 0, 1 at every (multiset, n)
        (the arithmetic of :func:`darrm.models.shard_groups.certificate.violations`)."""
        w1 = output_weights(g)
        P, Pp = [], []
        for w in (w1[::-1], w1):
            E = shifted_expectations(self.params, self.copies, w)
            P.append(self.pi @ E)
            Pp.append(self.pip @ E)
        return np.stack(P), np.stack(Pp)

    def row(self, o: int, d: int, m: int, n: int, eps: float) -> np.ndarray:
        """The folded row r with r·x ≤ e^{ε′} − 1 + 2T(ε′) of output o, direction d, multiset m, n."""
        a = _alpha(self.params, self.copies, n, self.pi[m])
        ap = _alpha(self.params, self.copies, n, self.pip[m])
        if d == 1:
            a, ap = ap, a
        r = folded_rows(a[None, :], ap[None, :], math.exp(eps))[0]
        return r if o == 1 else -r

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        """Group g's exact profile, rounded outward (:func:`darrm.models.shard_groups.profile.shard_group_profile`)."""
        return shard_group_profile(g, self.params, None)

    def gdp_mu(self, g: np.ndarray, prof: PrivacyProfile) -> float:
        """Group g's certified μ (:func:`darrm.budget.cloud.points_gdp_mu`)."""
        return points_gdp_mu(*self.probs(g), prof)


def shard_groups_at(params: ShardGroupParams, targets: list[tuple[float, float]]) -> ShardGroupParams:
    """The same ensemble at per-group per-query targets (ε_q,g, δ_q,g)."""
    return ShardGroupParams(params.K, params.member, [RecordGroup(grp.copies, float(e), float(d)) for grp, (e, d)
                                                      in zip(params.groups, targets, strict=True)])


_TINY = 2.0**-1074


class BudgetGroupCloud:
    """The worst configurations of one query for the records of budget group g: one axis per group (j
    members at the upper end, or for group g the changed member's vertex and j), flattened to b (a = 0);
    both outputs and directions, as functions of the per-group table γ(l).

    **Claim.**  The upper concave envelope of these points is a dominating pair of the release for every
    record of group g.  *Proof.*  :mod:`darrm.models.weighted_shards`' reduction ((a)–(c)) shows, for a
    record of group g and any fixed s = e^{ε′}, that Pr[A(D)=o] − s·Pr[A(D′)=o] is maximised with the
    changed member at a vertex and every unchanged member at an end (it never uses the target's value of
    s); so :mod:`darrm.privacy.profile`'s Claims 1–2 apply to group g's configurations alone (both
    directions and both outputs are listed, and the reflection maps them onto themselves), exactly as
    :mod:`darrm.models.weighted_shards.profile` applies them to the union of every group's.  ∎"""

    def __init__(self, params: WeightedShardParams, group: int):
        self.params, self.group, self.K = params, group, params.K
        G = len(params.groups)
        laws = [unchanged_laws(params, grp.size) for grp in params.groups]
        a, ap, drop = changed_laws(params, group)
        self.pm = [a if h == group else laws[h][0] for h in range(G)]
        self.pmp = [ap if h == group else laws[h][0] for h in range(G)]
        drops = [drop if h == group else laws[h][1] for h in range(G)]
        self.shape = tuple(p.shape[0] for p in self.pm)
        self.dropped = float(sum(float(np.max(d, initial=0.0)) for d in drops))

    def probs(self, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(P, P′), each (2, 1, N): Pr[A(D)=o] and Pr[A(D′)=o] for o = 0, 1 at every configuration
        (Algorithm 1's output probabilities, :func:`darrm.models.weighted_shards.certificate.output_pairs`'
        arithmetic for this group)."""
        W1 = joint_weights(np.asarray(g, dtype=np.float64), _layout(self.params))
        P, Pp = [], []
        for W in (np.flip(W1), W1):
            P.append(contract(self.pm, W).reshape(1, -1))
            Pp.append(contract(self.pmp, W).reshape(1, -1))
        return np.stack(P), np.stack(Pp)

    def row(self, o: int, d: int, a: int, b: int, eps: float) -> np.ndarray:
        """The folded row r with r·x ≤ e^{ε′} − 1 + 2T(ε′) over the per-group LP's variables."""
        cells = np.unravel_index(b, self.shape)
        a_parts = [p[int(c):int(c) + 1] for p, c in zip(self.pm, cells, strict=True)]
        ap_parts = [p[int(c):int(c) + 1] for p, c in zip(self.pmp, cells, strict=True)]
        if d == 1:
            a_parts, ap_parts = ap_parts, a_parts
        r = joint_folded_rows(a_parts, ap_parts, math.exp(eps), _layout(self.params))[0]
        return r if o == 1 else -r

    def profile(self, g: np.ndarray) -> PrivacyProfile:
        """Group g's exact profile, rounded outward as
        :func:`darrm.models.weighted_shards.profile.weighted_shard_profile` rounds the union's (the windows'
        left-out mass summed over the groups added to y)."""
        P, Pp = self.probs(g)
        env = Envelope()
        env.add(Pp.ravel(), P.ravel())
        env.add(P.ravel(), Pp.ravel())
        eta_g = (2 * len(self.params.groups) + 2) * math.prod(h.size + 2 for h in self.params.groups) * _TINY
        return finish(env.x, env.y, self.K, "weighted-shards", 2 * P.size, extra_y=self.dropped, extra_eta=eta_g)

    def gdp_mu(self, g: np.ndarray, prof: PrivacyProfile) -> float:
        """Group g's certified μ (:func:`darrm.budget.cloud.points_gdp_mu`)."""
        return points_gdp_mu(*self.probs(g), prof)


def weighted_shards_at(params: WeightedShardParams, targets: list[tuple[float, float]]) -> WeightedShardParams:
    """The same ensemble at per-group per-query targets (ε_q,g, δ_q,g)."""
    return WeightedShardParams(params.member, [BudgetGroup(grp.size, float(e), float(d)) for grp, (e, d)
                                               in zip(params.groups, targets, strict=True)])


def certified_per_group(gamma: np.ndarray, targets: list[tuple[float, float]],
                        at: Callable[[list[tuple[float, float]]], Any],
                        certify: Callable[[np.ndarray, Any], Any]) -> Callable[[int, float, float], bool]:
    """``certified_at(i, ε_q, δ_q)``: the model's certificate of γ at the table's own per-query targets
    (``targets``) with group i's replaced by that pair."""
    def certified_at(i: int, eq: float, dq: float) -> bool:
        return bool(certify(gamma, at([(eq, dq) if j == i else t for j, t in enumerate(targets)])).certified)

    return certified_at


#: a member model's record groups (:func:`register_group_clouds`), by model name
GROUP_CLOUDS: dict[str, Callable[[np.ndarray, Any], tuple[list[Any], Callable[[int, float, float], bool]]]] = {}


def register_group_clouds(model_name: str,
                          make: Callable[[np.ndarray, Any], tuple[list[Any], Callable[[int, float, float], bool]]]
                          ) -> None:
    """Register ``make(γ, params)`` → (one cloud per record group, ``certified_at(group, ε_q, δ_q)``) for the
    member model ``model_name``, whose records fall in groups each owed its own total.

    Raises:
        ParameterError: naming ``make``, not callable."""
    GROUP_CLOUDS[model_name] = function("make", make)


def record_group_clouds(gamma: np.ndarray,
                        params: Any) -> tuple[list[Any], Callable[[int, float, float], bool]] | None:
    """(one cloud per record group, the model's certificate of a per-query pair for one group) of the
    table (γ, ``params``); None for a member model without record groups."""
    make = GROUP_CLOUDS.get(model_of(params).name)
    return None if make is None else make(gamma, params)


def _targets(params: Any) -> list[tuple[float, float]]:
    return [(grp.target_eps, grp.target_delta) for grp in params.groups]


register_group_clouds("shard-groups", lambda g, p: (
    [RecordGroupCloud(p, i) for i in range(len(p.groups))],
    certified_per_group(g, _targets(p), lambda t: shard_groups_at(p, t), certify_shard_groups)))
register_group_clouds("weighted-shards", lambda g, p: (
    [BudgetGroupCloud(p, i) for i in range(len(p.groups))],
    certified_per_group(g, _targets(p), lambda t: weighted_shards_at(p, t), certify_weighted_shards)))

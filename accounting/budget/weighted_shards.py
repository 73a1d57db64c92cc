"""γ per group count for budget groups on one-group shards, designed for one total budget per group over
Q queries.

**The problem.**  :mod:`darrm.models.weighted_shards`: group g's K_g members are each trained on a
disjoint shard of group-g records, so a record of group g changes one member of group g, and group g is
owed (ε_g,total, δ_g,total) over the same Q queries.  γ(l_1, …, l_G) reads each group's vote count
(the per-group form); the release is the majority of all K votes w.p. γ(l), else a fair coin.  A record
of group g sees the Q-fold composition of γ's *group-g* pair: the envelope of the configurations of
:mod:`darrm.models.weighted_shards`' reduction for group g (the changed member at a vertex, every group's
unchanged members at the ends), both outputs and directions (:class:`BudgetGroupCloud`).

**The design** is :mod:`.parts`' search with one part per budget group, over the per-group LP's variables
(:func:`darrm.models.weighted_shards.solver.table_form`).  The baselines it contains: RR, the per-query
design with the generic composition (:func:`~darrm.models.weighted_shards.solve_gamma_opt_weighted_shards`
at per-group (ε_q,g, δ_q)), and binary GNMax on the total count (γ(l) = 2Φ(|Σ_g l_g − K/2|/s) − 1; one
record moves the count by at most 1, sensitivity 1 for every group, i.e. GNMax at the worst budget).
GNMax *weighting* (Individualized PATE: the noisy argmax of the weighted histogram) is not in this family:
DaRRM releases the unweighted majority whenever it does not flip a coin, while weighted GNMax may
release the weighted majority against it.  The weighted γ form (γ of Σ_g w_g·l_g) is not designed here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from darrm.budget.cloud import points_gdp_mu
from darrm.budget.design import BudgetDesign
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.errors import ParameterError
from darrm.models.groups.contraction import contract
from darrm.models.groups.per_group import joint_folded_rows, joint_of_total, joint_weights
from darrm.models.weighted_shards.certificate import (
    _layout,
    certify_weighted_shards,
    changed_laws,
    unchanged_laws,
)
from darrm.models.weighted_shards.params import BudgetGroup, WeightedShardParams
from darrm.models.weighted_shards.solver import solve_gamma_opt_weighted_shards, table_form
from darrm.prior import Prior
from darrm.privacy.profile import Envelope, PrivacyProfile, finish
from darrm.table import GammaTable
from darrm.validation import instance

from .parts import SHAPES, certified_per_group, design_per_group, verify_parts

__all__ = ["BudgetGroupCloud", "design", "record_groups", "verify"]

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


def _at(params: WeightedShardParams, targets: list[tuple[float, float]]) -> WeightedShardParams:
    return WeightedShardParams(params.member, [BudgetGroup(grp.size, float(e), float(d)) for grp, (e, d)
                                               in zip(params.groups, targets, strict=True)])


def design(params: WeightedShardParams, budget: TotalBudget | GroupBudgets, prior: Prior | None = None, *,
           shapes: tuple[str, ...] = SHAPES, log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The per-group γ(l) of smallest expected error whose certified Q-fold composition meets every
    budget group's total (module docstring; :mod:`.parts`).  γ ≡ 1 when it fits.

    Args:
        params: the budget groups (their per-query targets are not used: the budgets replace them); the
            per-group γ form only (``weights`` None).
        budget: one :class:`~darrm.TotalBudget` per budget group (:class:`~darrm.budget.spec.GroupBudgets`),
            or one TotalBudget for every group.
        prior: the objective's prior (default i.i.d. mean 0.75).
        shapes: the shapes searched (a non-empty subset of :data:`darrm.accounting.budget.parts.SHAPES`).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.budget.design.BudgetDesign` (:func:`darrm.accounting.budget.parts.design_parts`).

    Raises:
        ParameterError: a bad argument, or the weighted γ form.
        CertificationError: no shape meets every group's budget.
    """
    instance("params", params, WeightedShardParams, "a darrm.WeightedShardParams")
    if params.weights is not None:
        raise ParameterError("params", "a total-budget design reads every group's count (weights=None), not the "
                                       "weighted count")
    layout: Any = _layout(params)
    return design_per_group(params, budget, prior, shapes, log, what="budget group",
                            clouds=[BudgetGroupCloud(params, i) for i in range(len(params.groups))],
                            at=lambda t: _at(params, t), solve=solve_gamma_opt_weighted_shards,
                            certify=certify_weighted_shards, sensitivity=np.ones(len(params.groups)),
                            form=lambda pr: table_form(params, pr), lift=lambda gl: joint_of_total(gl, layout))


def verify(table: GammaTable) -> float:
    """Re-certify a designed budget-groups table's per-group totals from its γ alone
    (:func:`darrm.accounting.budget.parts.verify_parts` over :func:`record_groups`; a recorded per-query pair
    re-checked by
    :func:`~darrm.models.weighted_shards.certify_weighted_shards` at that group's target).

    Returns:
        max over the budget groups of the re-certified total ε.

    Raises:
        ParameterError: not a γ table of budget groups.
        CertificationError: the record is malformed, or some group's total exceeds its budget or its record.
    """
    return verify_parts(table, *record_groups(table))


def record_groups(table: GammaTable) -> tuple[list[BudgetGroupCloud], Callable[[int, float, float], bool]]:
    """The table's groups as the accountant composes them: one cloud per group and the model's certificate
    of a per-query pair for one group (:func:`darrm.accounting.budget.parts.certified_per_group`), for
    :func:`darrm.accounting.budget.group_parts` and :func:`verify`.

    Raises:
        ParameterError: ``table`` is not a table of this model."""
    params = instance("table.params", instance("table", table, GammaTable, "a darrm.GammaTable").params,
                      WeightedShardParams, "budget groups (darrm.WeightedShardParams)")
    return ([BudgetGroupCloud(params, i) for i in range(len(params.groups))],
            certified_per_group(table, [(grp.target_eps, grp.target_delta) for grp in params.groups],
                                lambda t: _at(params, t), certify_weighted_shards))

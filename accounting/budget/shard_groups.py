"""γ for records with their own budgets (record groups copied into r_g shards), designed for one total
budget per record group over Q queries.

**The problem.**  :mod:`darrm.models.shard_groups`: K members on shards, each record of group g copied
into r_g of them, group g owed (ε_g,total, δ_g,total) over the same Q queries (members answering with
fresh randomness).  One γ(L) answers every query; a record of group g sees the Q-fold composition of
that γ's *group-g* pair (:func:`darrm.models.shard_groups.profile.record_group_profiles`: the worst
configurations for one record of group g — a multiset of its r_g copies' vertices and the number n of
unchanged members at the upper end, both outputs, both directions).  The per-query design
(:func:`darrm.models.shard_groups.solve_gamma_opt_shard_groups` at per-group (ε_q,g, δ_q) from the
generic composition) is nearly a pure-ε constraint, which γ pays for far from the threshold, while a
Gaussian-shaped profile composes as √Q.

**The design** is :mod:`.parts`' search with one part per record group (:class:`RecordGroupCloud`):
each group's profile bounded by its own target, every group's total certified and charged.  The
baselines it contains: RR, the per-query design with the generic composition, and the Gaussian
threshold on the count, which is Individualized PATE's *upsampling* GNMax (σ = max_g r_g·σ(ε_g): a
record of group g moves the count by at most r_g, sensitivity r_g, so the search starts at
s = max_g r_g·√Q/μ_g,total, the exact Gaussian calibration of every group).  GNMax *weighting* (votes
weighted per teacher group) is not in this family: γ reads the unweighted count L of members that each
hold copies of several groups' records (it is a different ensemble: :mod:`darrm.models.weighted_shards`).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from darrm.budget.cloud import points_gdp_mu
from darrm.budget.design import BudgetDesign
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.mechanism import output_weights
from darrm.models.shard_groups.certificate import (
    _alpha,
    certify_shard_groups,
    changed_pmfs,
    shifted_expectations,
    vertex_multisets,
)
from darrm.models.shard_groups.params import RecordGroup, ShardGroupParams
from darrm.models.shard_groups.profile import shard_group_profile
from darrm.models.shard_groups.solver import solve_gamma_opt_shard_groups
from darrm.prior import Prior
from darrm.privacy.condition import folded_rows
from darrm.privacy.profile import PrivacyProfile
from darrm.table import GammaTable
from darrm.validation import instance

from .parts import SHAPES, certified_per_group, design_per_group, verify_parts

__all__ = ["RecordGroupCloud", "design", "record_groups", "verify"]


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


def _at(params: ShardGroupParams, targets: list[tuple[float, float]]) -> ShardGroupParams:
    """The same ensemble at per-group per-query targets (ε_q,g, δ_q,g)."""
    return ShardGroupParams(params.K, params.member, [RecordGroup(grp.copies, float(e), float(d)) for grp, (e, d)
                                                      in zip(params.groups, targets, strict=True)])


def design(params: ShardGroupParams, budget: TotalBudget | GroupBudgets, prior: Prior | None = None, *,
           shapes: tuple[str, ...] = SHAPES, log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The γ(L) of smallest expected error whose certified Q-fold composition meets every record
    group's total (module docstring; :mod:`.parts`).  γ ≡ 1 (the plain majority) when it fits.

    Args:
        params: the ensemble and its record groups (their per-query targets are not used: the budgets
            replace them).
        budget: one :class:`~darrm.TotalBudget` per record group (:class:`~darrm.budget.spec.GroupBudgets`),
            or one TotalBudget for every group.
        prior: the objective's prior (default i.i.d. mean 0.75).
        shapes: the shapes searched (a non-empty subset of :data:`darrm.accounting.budget.parts.SHAPES`).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.budget.design.BudgetDesign` (:func:`darrm.accounting.budget.parts.design_parts`);
        its table's parameters are at the per-query targets its group profiles allow.

    Raises:
        ParameterError: a bad argument.
        CertificationError: no shape meets every group's budget.
    """
    instance("params", params, ShardGroupParams, "a darrm.ShardGroupParams")
    return design_per_group(params, budget, prior, shapes, log, what="record group",
                            clouds=[RecordGroupCloud(params, i) for i in range(len(params.groups))],
                            at=lambda t: _at(params, t), solve=solve_gamma_opt_shard_groups,
                            certify=certify_shard_groups,
                            sensitivity=np.array([grp.copies for grp in params.groups], dtype=np.float64))


def verify(table: GammaTable) -> float:
    """Re-certify a designed record-groups table's per-group totals from its γ alone
    (:func:`darrm.accounting.budget.parts.verify_parts` over :func:`record_groups`; a recorded per-query pair
    re-checked by
    :func:`~darrm.models.shard_groups.certify_shard_groups` at that group's target).

    Args:
        table: a γ table of :class:`~darrm.ShardGroupParams` with ``info["group_budgets"]``.

    Returns:
        The largest re-certified total ε over the groups.

    Raises:
        CertificationError: a malformed record, or a group's total above its budget or the record.
        ParameterError: ``table`` is not a record-groups γ table.
    """
    return verify_parts(table, *record_groups(table))


def record_groups(table: GammaTable) -> tuple[list[RecordGroupCloud], Callable[[int, float, float], bool]]:
    """The table's groups as the accountant composes them: one cloud per group and the model's certificate
    of a per-query pair for one group (:func:`darrm.accounting.budget.parts.certified_per_group`), for
    :func:`darrm.accounting.budget.group_parts` and :func:`verify`.

    Raises:
        ParameterError: ``table`` is not a table of this model."""
    params = instance("table.params", instance("table", table, GammaTable, "a darrm.GammaTable").params,
                      ShardGroupParams, "record groups (darrm.ShardGroupParams)")
    return ([RecordGroupCloud(params, i) for i in range(len(params.groups))],
            certified_per_group(table, [(grp.target_eps, grp.target_delta) for grp in params.groups],
                                lambda t: _at(params, t), certify_shard_groups))

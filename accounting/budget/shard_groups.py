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

from collections.abc import Callable

import numpy as np

from darrm.budget.design import BudgetDesign
from darrm.budget.group_clouds import RecordGroupCloud, record_group_clouds, shard_groups_at
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.models.shard_groups.certificate import (
    certify_shard_groups,
)
from darrm.models.shard_groups.params import ShardGroupParams
from darrm.models.shard_groups.solver import solve_gamma_opt_shard_groups
from darrm.prior import Prior
from darrm.table import GammaTable
from darrm.validation import instance

from .parts import SHAPES, design_per_group, verify_parts

__all__ = ["RecordGroupCloud", "design", "verify"]


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
                            at=lambda t: shard_groups_at(params, t), solve=solve_gamma_opt_shard_groups,
                            certify=certify_shard_groups,
                            sensitivity=np.array([grp.copies for grp in params.groups], dtype=np.float64))


def verify(table: GammaTable) -> float:
    """Re-certify a designed record-groups table's per-group totals from its γ alone
    (:func:`darrm.accounting.budget.parts.verify_parts` over
    :func:`darrm.budget.group_clouds.record_group_clouds`; a recorded per-query pair re-checked by
    :func:`~darrm.models.shard_groups.certify_shard_groups` at that group's target).

    Args:
        table: a γ table of :class:`~darrm.ShardGroupParams` with ``info["group_budgets"]``.

    Returns:
        The largest re-certified total ε over the groups.

    Raises:
        CertificationError: a malformed record, or a group's total above its budget or the record.
        ParameterError: ``table`` is not a record-groups γ table.
    """
    params = instance("table.params", instance("table", table, GammaTable, "a darrm.GammaTable").params,
                      ShardGroupParams, "record groups (darrm.ShardGroupParams)")
    groups = record_group_clouds(table.gamma, params)
    assert groups is not None  # registered in darrm.budget.group_clouds
    return verify_parts(table, *groups)


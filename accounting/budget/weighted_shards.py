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

from collections.abc import Callable
from typing import Any

import numpy as np

from darrm.budget.design import BudgetDesign
from darrm.budget.group_clouds import BudgetGroupCloud, record_group_clouds, weighted_shards_at
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.errors import ParameterError
from darrm.models.groups.per_group import joint_of_total
from darrm.models.weighted_shards.certificate import (
    _layout,
    certify_weighted_shards,
)
from darrm.models.weighted_shards.params import WeightedShardParams
from darrm.models.weighted_shards.solver import solve_gamma_opt_weighted_shards, table_form
from darrm.prior import Prior
from darrm.table import GammaTable
from darrm.validation import instance

from .parts import SHAPES, design_per_group, verify_parts

__all__ = ["BudgetGroupCloud", "design", "verify"]

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
                            at=lambda t: weighted_shards_at(params, t), solve=solve_gamma_opt_weighted_shards,
                            certify=certify_weighted_shards, sensitivity=np.ones(len(params.groups)),
                            form=lambda pr: table_form(params, pr), lift=lambda gl: joint_of_total(gl, layout))


def verify(table: GammaTable) -> float:
    """Re-certify a designed budget-groups table's per-group totals from its γ alone
    (:func:`darrm.accounting.budget.parts.verify_parts` over
    :func:`darrm.budget.group_clouds.record_group_clouds`; a recorded per-query pair re-checked by
    :func:`~darrm.models.weighted_shards.certify_weighted_shards` at that group's target).

    Returns:
        max over the budget groups of the re-certified total ε.

    Raises:
        ParameterError: not a γ table of budget groups.
        CertificationError: the record is malformed, or some group's total exceeds its budget or its record.
    """
    params = instance("table.params", instance("table", table, GammaTable, "a darrm.GammaTable").params,
                      WeightedShardParams, "budget groups (darrm.WeightedShardParams)")
    groups = record_group_clouds(table.gamma, params)
    assert groups is not None  # registered in darrm.budget.group_clouds
    return verify_parts(table, *groups)


"""γ for grouped members on shared data (each group's members (ε_g, Δ_g)-DP), designed for a total budget
(ε_total, δ_total) over Q queries.

**The problem.**  :mod:`darrm.models.groups`: every member may depend on the changed record; group g's K_g
members are (ε_g, Δ_g)-DP, and the worst configurations of one query are the product over groups of the
corner multisets of each group's region (Lemma 5.1 group by group, :mod:`darrm.models.groups.params`).
Each configuration, output and direction gives a point (Pr[A(D′)=o], Pr[A(D)=o]) affine in γ(L); their
upper envelope is the query's exact profile (:mod:`darrm.models.groups.profile`).

**The design** is :mod:`.parts`' search with one part (every record): the query's profile bounded by a
μ-GDP target whose Q-fold composition meets the budget, or by one (ε_q, δ_q) pair (per-query γ_opt at every
real ε_q, the shared designer's real-m search generalised: there is no common member ε here), or RR; the
per-query γ_opt at the ε_q whose optimal homogeneous composition meets the budget
(:func:`darrm.models.groups.solver.solve_gamma_opt_groups`, certified) is a candidate, so the design is
never worse than it.  Each candidate is charged the smallest of its certified GDP total, its own pair's
PLD and the generic composition of its per-query pair.  No Gaussian-threshold shape: on shared data the
threshold's privacy comes from the members' own ε, not from a bounded move of the count.

**Size.**  The LP's constraint generation evaluates every configuration at every grid point each round,
so the design is limited to :data:`MAX_CONFIGURATIONS` configurations (γ(L) form only).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from darrm.budget.cloud import GROUP_CONFIGURATIONS, MemberGroupsCloud, groups_pair_certified
from darrm.budget.design import BudgetDesign
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.errors import ParameterError
from darrm.models.groups.certificate import certify_groups
from darrm.models.groups.params import GroupParams
from darrm.models.groups.solver import solve_gamma_opt_groups
from darrm.prior import Prior
from darrm.table import GammaTable
from darrm.validation import instance

from .parts import (
    SHAPES,
    PartSearch,
    certified_targets,
    check_shapes,
    design_parts,
    per_query_epsilon,
    prior_for,
    verify_parts,
)

__all__ = ["MAX_CONFIGURATIONS", "MemberGroupsCloud", "design", "verify"]

#: most configurations (product of the groups' corner multisets) the design evaluates (the cloud's own limit)
MAX_CONFIGURATIONS = GROUP_CONFIGURATIONS


def _at(params: GroupParams, eps_q: float, delta_q: float) -> GroupParams:
    return GroupParams(params.groups, eps_q, delta_q)


def design(params: GroupParams, budget: TotalBudget, prior: Prior | None = None, *,
           shapes: tuple[str, ...] = SHAPES, log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The γ(L) of smallest expected error whose certified Q-fold composition meets ``budget``
    (module docstring; :mod:`.parts`).  γ ≡ 1 (the plain majority) when it fits.

    Args:
        params: the member groups (their per-query target is not used: the budget replaces it).
        budget: the total (ε, δ) over Q queries (:class:`~darrm.TotalBudget`).
        prior: the objective's prior (default i.i.d. mean 0.75).
        shapes: the shapes searched (a non-empty subset of :data:`darrm.accounting.budget.parts.SHAPES`;
            ``threshold`` is not searched here).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.budget.design.BudgetDesign` (:func:`darrm.accounting.budget.parts.design_parts`, one
        part); its table's parameters are at a per-query target its profile allows.

    Raises:
        ParameterError: a bad argument, a per-group γ form, or too many configurations.
        CertificationError: no shape meets the budget.
    """
    t0 = time.perf_counter()
    instance("params", params, GroupParams, "a darrm.GroupParams")
    instance("budget", budget, TotalBudget, "a darrm.TotalBudget")
    cloud = MemberGroupsCloud(params)
    worst = max(gr.Delta for gr in params.groups)

    def per_query(eq: np.ndarray, dq: np.ndarray) -> np.ndarray:
        return solve_gamma_opt_groups(_at(params, float(eq[0]), max(float(dq[0]), worst)), search.prior).gamma

    search = PartSearch(params.K, [cloud], GroupBudgets((budget,)), prior_for(prior, params.K), log, per_query)
    shapes = check_shapes(shapes)
    if worst > search.delta_q[0]:  # each query leaks Δ_g already: the per-query pair needs δ_q ≥ max Δ_g
        search.delta_q[0] = worst
        try:
            search.eps_q0[0] = per_query_epsilon(budget, worst)
        except ParameterError:  # Q queries of δ_q = max Δ_g exceed δ_total: no per-query design exists
            shapes = tuple(sh for sh in shapes if sh not in ("per-query", "eps-delta")) or ("gdp",)
    return design_parts(search, shapes, lambda g, profs: certified_targets(
        g, profs, search.budgets, lambda t: _at(params, *t[0]), certify_groups, worst), t0)


def verify(table: GammaTable) -> float:
    """Re-certify a designed grouped-members table's total from its γ alone
    (:func:`darrm.accounting.budget.parts.verify_parts`, one part; a recorded per-query pair re-checked by
    :func:`~darrm.models.groups.certificate.certify_groups` at that target).

    Returns:
        The re-certified total ε.

    Raises:
        CertificationError: a malformed record, or the total above its budget or the record.
        ParameterError: ``table`` is not a grouped-members γ table.
    """
    instance("table", table, GammaTable, "a darrm.GammaTable")
    params = instance("table.params", table.params, GroupParams, "member groups (darrm.GroupParams)")

    return verify_parts(table, [MemberGroupsCloud(params)],
                        lambda i, eq, dq: groups_pair_certified(table.gamma, params, eq, dq), whole_table=True)

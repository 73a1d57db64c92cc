"""γ designed for a total budget (ε_total, δ_total) over Q queries, charged by the accountant.

:func:`design_for_budget` chooses the member model by the type of its first argument: shared
members (:class:`~darrm.PrivacyParams`: :mod:`darrm.budget.design`) or members on disjoint shards
(:class:`~darrm.DisjointParams`, whose per-query target is replaced by the budget:
:mod:`.disjoint`).  The core keeps the budget and the targets (:mod:`darrm.budget`); composing a
table over queries is the accountant's (:mod:`darrm.accounting.queries`), so the design lives here.
"""

from __future__ import annotations

from collections.abc import Callable

from darrm.budget.design import BudgetDesign
from darrm.budget.spec import TotalBudget
from darrm.errors import ParameterError
from darrm.models.disjoint.params import DisjointParams
from darrm.params import PrivacyParams
from darrm.prior import Prior

__all__ = ["design_for_budget"]


def design_for_budget(params: object, budget: TotalBudget, prior: Prior | None = None, *,
                      log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The γ of smallest expected error whose certified Q-fold composition meets ``budget``.

    Args:
        params: the members: :class:`~darrm.PrivacyParams` (shared data; only K, ε and Δ are used)
            or :class:`~darrm.DisjointParams` (disjoint shards; only K and the member model are used).
        budget: the total (ε, δ) over Q queries (:class:`~darrm.TotalBudget`).
        prior: the objective's prior (default i.i.d. mean 0.75).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.BudgetDesign` (the certified table, the winning shape, each shape's best).

    Raises:
        ParameterError: a bad argument, or a member model without a total-budget design.
        CertificationError: nothing meets the budget.
    """
    if isinstance(params, DisjointParams):
        from .disjoint import design_disjoint

        return design_disjoint(params.K, params.member, budget, prior, log=log)
    if isinstance(params, PrivacyParams):
        from darrm.budget.design import design_for_budget as shared

        from .shared import shared_charge

        return shared(params.K, params.eps, params.member_delta, budget, prior, log=log,
                      charge=shared_charge(budget))
    raise ParameterError("params", f"a total-budget design covers members on shared data (PrivacyParams) and on "
                                   f"disjoint shards (DisjointParams), not {type(params).__name__}")

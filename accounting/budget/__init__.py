"""γ designed for a total budget (ε_total, δ_total) over Q queries, charged by the accountant.

**One registry, keyed by the member model.**  A member model that declares the ``"total-budget"``
capability (:class:`darrm.models.base.MemberModel`) has one designer here, registered in one line
by :func:`register_designer`: ``design(params, budget, prior, *, log) -> BudgetDesign`` (the γ of
smallest expected error whose certified Q-fold composition meets the budget) and
``verify(table) -> float`` (the total recomputed from the table, CertificationError when it is above the
recorded budget or above the record).  :func:`design_for_budget`, :func:`verify_charged_total`,
``darrm solve --total-eps`` and ``darrm verify`` and the labelling session find them through
:func:`designer_for`; nothing else names a model.  The core keeps the budget and the targets
(:mod:`darrm.budget`); composing a table over queries is the accountant's
(:mod:`darrm.accounting.queries`), so the designs live here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from darrm.budget.design import BudgetDesign
from darrm.budget.spec import GroupBudgets, TotalBudget
from darrm.budget.verify import recorded_budget
from darrm.errors import ParameterError
from darrm.models import model_named, model_of
from darrm.prior import Prior
from darrm.table import GammaTable
from darrm.validation import function, instance

from . import disjoint, groups, shard_groups, shared, weighted_shards

__all__ = ["DESIGNERS", "Designer", "design_for_budget", "designer_for", "register_designer",
           "verify_charged_total"]


@dataclass(frozen=True)
class Designer:
    """A member model's total-budget design and the re-check of its record (module docstring).

    Attributes:
        design: ``(params, budget, prior, *, log) -> BudgetDesign``.
        verify: ``(table) -> float``, the re-certified recorded total (CertificationError otherwise).
    """

    design: Callable[..., BudgetDesign]
    verify: Callable[[GammaTable], float]


#: the designers, by member-model name (:func:`register_designer`)
DESIGNERS: dict[str, Designer] = {}


def register_designer(model_name: str, *, design: Callable[..., BudgetDesign],
                      verify: Callable[[GammaTable], float]) -> Designer:
    """Register the total-budget designer of the member model ``model_name``.

    Raises:
        ParameterError: naming ``model_name`` (not a registered model, one without the
            ``"total-budget"`` capability, or one already registered), ``design`` or ``verify``."""
    model = model_named(model_name, "model_name")
    model.require("total-budget", "model_name")
    if DESIGNERS.get(model.name) is not None:
        raise ParameterError("model_name", f"the {model.name} member model already has a total-budget designer")
    d = DESIGNERS[model.name] = Designer(function("design", design), function("verify", verify))
    return d


def designer_for(params: object, parameter: str = "params") -> Designer:
    """The designer of the member model of ``params``.

    Raises:
        ParameterError: naming ``parameter``, the model and the capability, when the model has no
            ``"total-budget"`` capability or no designer is registered for it."""
    model = model_of(params)
    model.require("total-budget", parameter)
    designer = DESIGNERS.get(model.name)
    if designer is None:
        raise ParameterError(parameter, f"the {model.name} member model declares the 'total-budget' capability but "
                                        "no designer is registered for it (darrm.accounting.budget.register_designer)")
    return designer


def design_for_budget(params: object, budget: TotalBudget, prior: Prior | None = None, *,
                      log: Callable[[str], None] | None = None) -> BudgetDesign:
    """The γ of smallest expected error whose certified Q-fold composition meets ``budget``, by the
    designer of the member model of ``params`` (:func:`designer_for`).

    Args:
        params: the members, of any model with the ``"total-budget"`` capability (shared data:
            only K, ε and Δ are used; disjoint shards: only K and the member model).
        budget: the total (ε, δ) over Q queries (:class:`~darrm.TotalBudget`).
        prior: the objective's prior (default i.i.d. mean 0.75).
        log: called with one line per candidate.

    Returns:
        A :class:`~darrm.BudgetDesign` (the certified table, the winning shape, each shape's best).

    Raises:
        ParameterError: a bad argument, or a member model without a total-budget design (naming
            the model and the capability).
        CertificationError: nothing meets the budget.
    """
    designer = designer_for(params)
    instance("budget", budget, (TotalBudget, GroupBudgets), "a darrm.TotalBudget (or, for models whose groups "
                                                        "have their own totals, a darrm.GroupBudgets)")
    return designer.design(params, budget, prior, log=function("log", log, allow_none=True))


def verify_charged_total(table: GammaTable) -> float | None:
    """The total a table records, re-certified by its member model's verifier (None when it claims
    none): the composition recomputed from the table alone by the one accountant (for a
    ``total_budget`` record, :func:`~darrm.accounting.budget.charge.charged_total`, the number every
    door gives for the recorded count and δ), within the budget and at most the record
    (:func:`~darrm.accounting.budget.charge.check_recorded`).

    Args:
        table: a γ table; ``table.info["total_budget"]`` (one total over Q queries) or
            ``table.info["group_budgets"]`` (one total per record group or part, each re-checked:
            :func:`~darrm.accounting.budget.parts.verify_parts`) holds the claim, if any.

    Returns:
        The re-checked total ε (for group budgets, the largest over the groups), or None.

    Raises:
        CertificationError: the table does not meet its recorded total or budget, or the record is
            malformed or names a model without a total-budget design.
        ParameterError: naming ``table``, not a GammaTable."""
    instance("table", table, GammaTable, "a darrm.GammaTable")
    if recorded_budget(table) is None and "group_budgets" not in table.info:
        return None
    return designer_for(table.params, "table").verify(table)


register_designer("shared", design=shared.design_shared, verify=shared.verify_shared)
register_designer("disjoint", design=disjoint.design, verify=disjoint.verify_disjoint)
register_designer("groups", design=groups.design, verify=groups.verify)
register_designer("shard-groups", design=shard_groups.design, verify=shard_groups.verify)
register_designer("weighted-shards", design=weighted_shards.design, verify=weighted_shards.verify)

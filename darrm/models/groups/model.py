"""Grouped members on shared data as one :class:`~darrm.models.base.MemberModel` (:mod:`darrm.models.groups`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ParameterError
from ..base import Exposures, MemberModel
from .params import MAX_ROUNDS, GroupParams

if TYPE_CHECKING:
    import numpy as np

    from ...families import Family
    from ...prior import Prior
    from ...privacy.certify import Certificate
    from ...privacy.profile import PrivacyProfile
    from ...solver.options import SolveOptions
    from ...table import GammaTable


class PerGroupTables:
    """What a model whose γ may read each group's count (γ(l_1, …, l_G), :mod:`darrm.models.groups.per_group`)
    does with its tables: labels from each group's count, the expected error, text and error curves
    (grouped members, and budget groups on shards, whose parameters share the groups' layout)."""

    def label_counts(self, params: Any) -> int:
        return len(params.groups) if params.per_group else 1

    def counts(self, votes: object, params: Any) -> np.ndarray:
        if not params.per_group:
            return MemberModel.counts(self, votes, params)  # type: ignore[arg-type]
        from .labels import group_counts

        return group_counts(votes, params)

    def check_counts(self, counts: object, params: Any) -> np.ndarray:
        if not params.per_group:
            return MemberModel.check_counts(self, counts, params)  # type: ignore[arg-type]
        from .labels import check_group_counts

        return check_group_counts(counts, params)

    def release(self, counts: np.ndarray, gamma: np.ndarray, params: Any, rng: Any, secure: bool) -> np.ndarray:
        if not params.per_group:
            return MemberModel.release(self, counts, gamma, params, rng, secure)  # type: ignore[arg-type]
        from .labels import label_group_counts

        return label_group_counts(counts, gamma, params, rng, secure)

    def expected_error(self, gamma: np.ndarray, params: Any, prior: Prior) -> float:
        """γ(L) as every model; γ(l_1, …, l_G) — weighted tables too, which are stored per group
        count — by :func:`darrm.models.groups.per_group.joint_expected_error` (the objective its LP minimises)."""
        if not params.per_group:
            return MemberModel.expected_error(self, gamma, params, prior)  # type: ignore[arg-type]
        from .per_group import joint_expected_error

        return joint_expected_error(gamma, params, prior)

    def table_text(self, table: GammaTable) -> str:
        params: Any = table.params
        if not params.per_group:
            return MemberModel.table_text(self, table)  # type: ignore[arg-type]
        from .per_group import per_group_text

        return per_group_text(table.gamma, params)

    def evaluation(self, table: GammaTable) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
        """No closed-form baselines: the table alone, for i.i.d. members (a per-group table as its
        level average γ̄(L), :func:`darrm.models.groups.per_group.level_average`)."""
        params: Any = table.params
        if params.per_group:
            from .per_group import level_average

            avg = level_average(table.gamma, params)
            # γ̄(L) is symmetric; its float sums need not be: average it with its mirror (commutative)
            gammas = {table.family: 0.5 * (avg + avg[::-1])}
        else:
            gammas = {table.family: table.gamma}
        return gammas, {"title": params.describe()}, self.table_text(table)


class GroupsModel(PerGroupTables, MemberModel):
    """Every member sees the record; each group has its own (ε_g, Δ_g): one corner multiset per group."""

    name: ClassVar[str] = "groups"
    max_rounds: ClassVar[int] = MAX_ROUNDS
    params_type: ClassVar[type[Any]] = GroupParams
    gamma_format: ClassVar[str] = "darrm-gamma-groups/1"
    guarantee: ClassVar[str] = "(target_eps, target_delta)"
    scope: ClassVar[str] = "every configuration of one corner multiset per group"
    capabilities: ClassVar[frozenset[str]] = frozenset({"profile", "fixed-members", "cli", "total-budget"})
    budget_replaces: ClassVar[tuple[tuple[str, Any], ...]] = (("target_eps", 1.0), ("target_delta", 0.5))
    fixed_bound: ClassVar[str] = "members-groups-composition"
    cli_options: ClassVar[tuple[str, ...]] = ("groups", "gamma_form", "target_eps", "target_delta", "total_eps",
                                              "total_delta", "queries")
    cli_selector: ClassVar[str | None] = "groups"
    cli_example: ClassVar[tuple[str, ...]] = ("--groups", "2:0.2:1e-4,3:0.6:1e-4", "--target-eps", "0.8",
                                              "--target-delta", "1e-3")

    def example(self) -> GroupParams:
        return GroupParams(((2, 0.2, 1e-4), (3, 0.6, 1e-4)), 0.8, 1e-3)

    def check(self, params: Any, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None) -> None:
        from .request import check_groups

        check_groups(params, family, options, executor, checkpoint)

    def solve(self, params: Any, prior: Prior, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
        from .solver import solve_gamma_opt_groups

        return solve_gamma_opt_groups(params, prior, options=options, log=log)

    def certify(self, gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                max_memory: float | None, executor: Any = None) -> Certificate:
        # the groups' corner product is streamed in blocks in this process: the executor is not used
        from .certificate import certify_groups

        return certify_groups(gamma, params, tol=tol, max_memory=max_memory)

    def profile(self, gamma: Any, params: Any, executor: Any, method: str,
                max_memory: float | None) -> PrivacyProfile:
        """In this process: "direct" visits every configuration, "sweep" runs the factorised sweep."""
        from .profile import group_profile

        self.in_process(executor)
        return group_profile(gamma, params, max_memory, {"auto": None, "direct": True, "sweep": False}[method])

    def exposures(self, params: Any) -> Exposures:
        """Every member: K_g members of (ε_g, Δ_g) per group."""
        from ..disjoint.members import ApproxDP

        return tuple((g.size, ApproxDP(g.eps, g.Delta)) for g in params.groups)

    def fixed_members(self, params: Any) -> Any:
        return repr(params.groups)

    def params_from_cli(self, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> GroupParams:
        from .params import parse_groups

        if values.get("groups") is None:
            raise ParameterError("groups", "is required with --members groups (COUNT:EPS:DELTA per group)")
        if values.get("target_eps") is None:
            raise ParameterError("target-eps", "grouped members need the per-query target --target-eps")
        params = GroupParams(parse_groups(values["groups"]), values["target_eps"],
                             0.0 if values.get("target_delta") is None else values["target_delta"],
                             "total" if values.get("gamma_form") is None else values["gamma_form"])
        if values.get("K") is not None and values["K"] != params.K:
            raise ParameterError("K", f"is {values['K']} but the --groups sizes sum to {params.K}; drop --K or fix "
                                      "the groups")
        return params

"""Budget groups on one-group shards as one :class:`~darrm.models.base.MemberModel`
(:mod:`darrm.models.weighted_shards`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ParameterError
from ..base import Exposures, MemberModel
from ..disjoint.params import MAX_ROUNDS
from ..groups.model import PerGroupTables
from .params import WeightedShardParams

if TYPE_CHECKING:
    import numpy as np

    from ...families import Family
    from ...prior import Prior
    from ...privacy.certify import Certificate
    from ...privacy.profile import PrivacyProfile
    from ...solver.options import SolveOptions
    from ...table import GammaTable


class WeightedShardsModel(PerGroupTables, MemberModel):
    """One record of budget group g changes the one member of group g whose shard holds it."""

    name: ClassVar[str] = "weighted-shards"
    max_rounds: ClassVar[int] = MAX_ROUNDS
    params_type: ClassVar[type[Any]] = WeightedShardParams
    gamma_format: ClassVar[str] = "darrm-gamma-weighted-shards/1"
    guarantee: ClassVar[str] = "(eps_g, delta_g) per budget group"
    scope: ClassVar[str] = "every (budget group, changed member's vertex, high members per group)"
    per_query: ClassVar[str] = "per query for every record (each group its own target)"
    capabilities: ClassVar[frozenset[str]] = frozenset({"profile", "fixed-members", "cli", "total-budget"})
    fixed_bound: ClassVar[str] = "members-disjoint-post-processing"
    cli_options: ClassVar[tuple[str, ...]] = ("member_privacy", "budget_groups", "vote_weights")
    cli_selector: ClassVar[str | None] = "budget_groups"
    cli_example: ClassVar[tuple[str, ...]] = ("--member-privacy", "0.3,1e-5", "--budget-groups",
                                              "2:0.5:1e-4,3:1.0:1e-4")

    def example(self) -> WeightedShardParams:
        from ..disjoint.members import ApproxDP

        return WeightedShardParams(ApproxDP(0.3, 1e-5), ((2, 0.5, 1e-4), (3, 1.0, 1e-4)))

    def check(self, params: Any, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None) -> None:
        from .request import check_weighted_shards

        check_weighted_shards(params, family, options, executor, checkpoint)

    def solve(self, params: Any, prior: Prior, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
        from .solver import solve_gamma_opt_weighted_shards

        return solve_gamma_opt_weighted_shards(params, prior, options=options, log=log)

    def certify(self, gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                max_memory: float | None, executor: Any = None) -> Certificate:
        # one contraction per budget group in this process: the executor is not used
        from .certificate import certify_weighted_shards

        return certify_weighted_shards(gamma, params, tol=tol, max_memory=max_memory)

    def profile(self, gamma: Any, params: Any, executor: Any, method: str,
                max_memory: float | None) -> PrivacyProfile:
        from .profile import weighted_shard_profile

        self.in_process(executor)
        return weighted_shard_profile(gamma, params, max_memory)

    def exposures(self, params: Any) -> Exposures:
        """One member: the one (of the record's budget group) whose shard holds the record."""
        return ((1, params.member),)

    def fixed_members(self, params: Any) -> Any:
        return repr((params.member.to_dict(), tuple(g.size for g in params.groups)))

    def params_from_cli(self, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> WeightedShardParams:
        from ..disjoint.members import parse_member
        from .params import parse_budget_groups, parse_vote_weights

        if values.get("member_privacy") is None:
            raise ParameterError("member-privacy", "is required with --budget-groups (the members' privacy with "
                                                   "respect to their own shard; nonprivate for PATE's teachers)")
        if values.get("budget_groups") is None:
            raise ParameterError("budget-groups", "is required with --members weighted-shards (SIZE:EPS:DELTA per "
                                                  "budget group)")
        groups = parse_budget_groups(values["budget_groups"])
        weights = None if values.get("vote_weights") is None else parse_vote_weights(values["vote_weights"])
        if weights is not None and len(weights) != len(groups):
            raise ParameterError("vote-weights", f"needs one weight per budget group ({len(groups)}), got "
                                                 f"{len(weights)}")
        params = WeightedShardParams(parse_member(values["member_privacy"]), groups, weights)
        if values.get("K") is not None and values["K"] != params.K:
            raise ParameterError("K", f"is {values['K']} but the --budget-groups sizes sum to {params.K}; drop --K "
                                      "or fix the groups")
        return params

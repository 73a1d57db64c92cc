"""Record groups copied into r_g shards as one :class:`~darrm.models.base.MemberModel`
(:mod:`darrm.models.shard_groups`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ParameterError
from ..base import Exposures, MemberModel
from ..disjoint.params import MAX_ROUNDS
from .params import ShardGroupParams

if TYPE_CHECKING:
    import numpy as np

    from ...families import Family
    from ...prior import Prior
    from ...privacy.certify import Certificate
    from ...privacy.profile import PrivacyProfile
    from ...solver.options import SolveOptions
    from ...table import GammaTable


class ShardGroupsModel(MemberModel):
    """One record of group g changes the r_g members holding its copies."""

    name: ClassVar[str] = "shard-groups"
    max_rounds: ClassVar[int] = MAX_ROUNDS
    params_type: ClassVar[type[Any]] = ShardGroupParams
    gamma_format: ClassVar[str] = "darrm-gamma-shard-groups/1"
    guarantee: ClassVar[str] = "(eps_g, delta_g) per record group"
    scope: ClassVar[str] = "every (record group, multiset of its copies' vertices, number of high members)"
    per_query: ClassVar[str] = "per query for every record (each group its own target)"
    capabilities: ClassVar[frozenset[str]] = frozenset({"profile", "fixed-members", "cli", "total-budget",
                                                         "record-groups"})
    fixed_bound: ClassVar[str] = "members-record-copies-composition"
    cli_options: ClassVar[tuple[str, ...]] = ("member_privacy", "record_groups")
    cli_selector: ClassVar[str | None] = "record_groups"
    cli_example: ClassVar[tuple[str, ...]] = ("--K", "5", "--member-privacy", "0.3,1e-5", "--record-groups",
                                              "1:0.5:1e-4,2:1.0:1e-4")

    def example(self) -> ShardGroupParams:
        from ..disjoint.members import ApproxDP

        return ShardGroupParams(5, ApproxDP(0.3, 1e-5), [(1, 0.5, 1e-4), (2, 1.0, 1e-4)])

    def check(self, params: Any, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None) -> None:
        from .request import check_shard_groups

        check_shard_groups(params, family, options, executor, checkpoint)

    def solve(self, params: Any, prior: Prior, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
        from .solver import solve_gamma_opt_shard_groups

        return solve_gamma_opt_shard_groups(params, prior, options=options, log=log)

    def certify(self, gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                max_memory: float | None, executor: Any = None) -> Certificate:
        # O(K) configurations per record group in this process: the executor is not used
        from .certificate import certify_shard_groups

        return certify_shard_groups(gamma, params, tol=tol, max_memory=max_memory)

    def profile(self, gamma: Any, params: Any, executor: Any, method: str,
                max_memory: float | None) -> PrivacyProfile:
        from .profile import shard_group_profile

        self.in_process(executor)
        return shard_group_profile(gamma, params, max_memory)

    def exposures(self, params: Any) -> Exposures:
        """The copies of the most copied record group's record."""
        return ((max(params.copies()), params.member),)

    def fixed_members(self, params: Any) -> Any:
        return repr((params.member.to_dict(), params.copies()))

    def params_from_cli(self, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> ShardGroupParams:
        from ..disjoint.members import parse_member
        from .params import parse_record_groups

        if values.get("member_privacy") is None:
            raise ParameterError("member-privacy", "is required with --record-groups (the members' privacy with "
                                                   "respect to their own shard; nonprivate for PATE's teachers)")
        if values.get("record_groups") is None:
            raise ParameterError("record-groups", "is required with --members shard-groups (COPIES:EPS:DELTA per "
                                                  "record group)")
        K = defaults["K"] if values.get("K") is None else values["K"]
        return ShardGroupParams(K, parse_member(values["member_privacy"]), parse_record_groups(values["record_groups"]))

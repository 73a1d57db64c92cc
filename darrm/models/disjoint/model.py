"""Members on disjoint shards as one :class:`~darrm.models.base.MemberModel` (:mod:`darrm.models.disjoint`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ParameterError
from ..base import Exposures, MemberModel
from .params import MAX_ROUNDS, DisjointParams

if TYPE_CHECKING:
    import numpy as np

    from ...families import Family
    from ...prior import Prior
    from ...privacy.certify import Certificate
    from ...privacy.profile import PrivacyProfile
    from ...solver.options import SolveOptions
    from ...table import GammaTable


class DisjointModel(MemberModel):
    """One record changes one member: the O(K) reduction of :mod:`darrm.models.disjoint`."""

    name: ClassVar[str] = "disjoint"
    max_rounds: ClassVar[int] = MAX_ROUNDS
    params_type: ClassVar[type[Any]] = DisjointParams
    gamma_format: ClassVar[str] = "darrm-gamma-disjoint/1"
    guarantee: ClassVar[str] = "(target_eps, target_delta)"
    scope: ClassVar[str] = "every (changed-member vertex, number of high members)"
    capabilities: ClassVar[frozenset[str]] = frozenset({"profile", "fixed-members", "cli", "total-budget"})
    fixed_bound: ClassVar[str] = "members-disjoint-post-processing"
    cli_options: ClassVar[tuple[str, ...]] = ("member_privacy", "target_eps", "target_delta", "total_eps",
                                              "total_delta", "queries")
    cli_example: ClassVar[tuple[str, ...]] = ("--K", "5", "--member-privacy", "0.3,1e-5", "--target-eps", "0.6",
                                              "--target-delta", "1e-4")
    budget_replaces: ClassVar[tuple[tuple[str, Any], ...]] = (("target_eps", 1.0), ("target_delta", None))

    def example(self) -> DisjointParams:
        from .members import ApproxDP

        return DisjointParams(5, ApproxDP(0.3, 1e-5), 0.6, 1e-4)

    def check(self, params: Any, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None) -> None:
        from .request import check_disjoint

        check_disjoint(params, family, options, executor, checkpoint)

    def solve(self, params: Any, prior: Prior, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
        from .solver import solve_gamma_opt_disjoint

        return solve_gamma_opt_disjoint(params, prior, options=options, log=log)

    def certify(self, gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                max_memory: float | None, executor: Any = None) -> Certificate:
        # O(K) vertices in this process: there is nothing to distribute, so the executor is not used
        from .certificate import certify_disjoint

        return certify_disjoint(gamma, params, tol=tol, max_memory=max_memory)

    def profile(self, gamma: Any, params: Any, executor: Any, method: str,
                max_memory: float | None) -> PrivacyProfile:
        from ...gamma import validate_gamma
        from .profile import disjoint_profile

        return disjoint_profile(validate_gamma(gamma, params.K), params, max_memory)

    def exposures(self, params: Any) -> Exposures:
        """One member: the one whose shard holds the record."""
        return ((1, params.member),)

    def fresh_only(self, params: Any) -> str | None:
        """Non-private or local-RR members: only DaRRM's per-query coins randomise the answers."""
        from .members import ApproxDP

        if isinstance(params.member, ApproxDP):
            return None
        return (f"{params.member.to_dict()['kind']!r} members on disjoint shards (they have no privacy of their "
                "own to post-process)")

    def fixed_members(self, params: Any) -> Any:
        return repr(params.member.to_dict())

    def params_from_cli(self, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> DisjointParams:
        from .members import parse_member

        if values.get("member_privacy") is None:
            raise ParameterError("member-privacy", "is required with --members disjoint (nonprivate for PATE's "
                                                   "teachers)")
        if values.get("target_eps") is None:
            raise ParameterError("members", "disjoint members need --target-eps (or a total budget: --total-eps …)")
        target_delta = 0.0 if values.get("target_delta") is None else values["target_delta"]
        K = defaults["K"] if values.get("K") is None else values["K"]
        return DisjointParams(K, parse_member(values["member_privacy"]), values["target_eps"], target_delta)

"""Members on shared data (Problem 1.1): every member may see the record that differs.

The paper's setting: K (ε, Δ)-DP members, a per-query target (mε, δ); the certificate is Lemma 3.4
over Lemma 5.1's corner multisets (:mod:`darrm.privacy.certify`), γ_opt the LP of Section 5
(:mod:`darrm.solver`), the closed forms of :mod:`darrm.families`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from ..params import PrivacyParams
from ..solver.schedule import MAX_ROUNDS
from .base import Exposures, MemberModel

if TYPE_CHECKING:
    import numpy as np

    from ..families import Family
    from ..prior import Prior
    from ..privacy.certify import Certificate
    from ..privacy.profile import PrivacyProfile
    from ..solver.options import SolveOptions
    from ..table import GammaTable


class SharedModel(MemberModel):
    """Members on shared data: one record may change every member (module docstring)."""

    name: ClassVar[str] = "shared"
    max_rounds: ClassVar[int] = MAX_ROUNDS
    params_type: ClassVar[type[Any]] = PrivacyParams
    gamma_format: ClassVar[str] = "darrm-gamma/1"
    guarantee: ClassVar[str] = "(mε, δ)"
    scope: ClassVar[str] = "all corner multisets"
    capabilities: ClassVar[frozenset[str]] = frozenset({"profile", "fixed-members", "cli", "total-budget"})
    fixed_bound: ClassVar[str] = "members-shared-composition"
    cli_options: ClassVar[tuple[str, ...]] = ("m", "eps", "member_delta", "delta", "total_eps", "total_delta",
                                              "queries")
    cli_example: ClassVar[tuple[str, ...]] = ("--K", "5", "--m", "2", "--eps", "0.3", "--member-delta", "1e-5")
    budget_replaces: ClassVar[tuple[tuple[str, Any], ...]] = (("m", 1.0), ("delta", None))

    def example(self) -> PrivacyParams:
        return PrivacyParams(5, 2, 0.3, 1e-5)

    def check(self, params: Any, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None) -> None:
        from ..solver.request import check_shared

        check_shared(params, family, options, executor, checkpoint)

    def solve(self, params: Any, prior: Prior, family: Family, options: SolveOptions, executor: Any,
              checkpoint: Path | None, progress: bool | None, log: Callable[[str], None] | None) -> GammaTable:
        from ..solver.request import solve_shared

        return solve_shared(params, prior, family, options, executor, checkpoint, progress, log)

    def certify(self, gamma: np.ndarray, params: Any, tol: float, progress: bool | None,
                max_memory: float | None, executor: Any = None) -> Certificate:
        from ..privacy.certify import certify

        return certify(gamma, params, tol=tol, progress=progress, max_memory=max_memory, executor=executor)

    def profile(self, gamma: Any, params: Any, executor: Any, method: str,
                max_memory: float | None) -> PrivacyProfile:
        from ..gamma import validate_gamma
        from ..privacy.profile import shared_profile

        return shared_profile(validate_gamma(gamma, params.K), params, executor, method, max_memory)

    def exposures(self, params: Any) -> Exposures:
        """Every one of the K (ε, Δ)-DP members sees the record."""
        from .disjoint.members import ApproxDP

        return ((params.K, ApproxDP(params.eps, params.member_delta)),)

    def fixed_members(self, params: Any) -> Any:
        return (params.K, params.eps, params.member_delta)

    def params_from_cli(self, values: Mapping[str, Any], defaults: Mapping[str, Any]) -> PrivacyParams:
        def given(name: str) -> Any:
            return defaults[name] if values.get(name) is None else values[name]

        return PrivacyParams(K=given("K"), m=given("m"), eps=given("eps"), member_delta=given("member_delta"),
                             delta=values.get("delta"))

    def evaluation(self, table: GammaTable) -> tuple[dict[str, np.ndarray], dict[str, Any], str]:
        """The table beside the closed-form families that apply (:func:`baselines`)."""
        from ..report import gamma_table_text

        params: Any = table.params
        gammas = baselines(params, table.gamma)
        if table.family != "opt":
            gammas = {table.family: table.gamma, **{k: v for k, v in gammas.items() if k != "opt"}}
        return gammas, {"params": table.params}, gamma_table_text(gammas)


def baselines(params: PrivacyParams, gamma_opt: np.ndarray) -> dict[str, np.ndarray]:
    """γ_opt beside the closed-form families that apply (:meth:`darrm.families.Family.applies_to`),
    each at its default options (``darrm demo``, ``darrm evaluate``)."""
    from ..families import REGISTRY

    out = {"opt": gamma_opt}
    for name, fam in REGISTRY.items():
        if fam.closed_form is not None and fam.applies_to(params):
            out[name] = fam.closed_form(params)
    return out

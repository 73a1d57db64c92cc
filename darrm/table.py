"""A γ table together with the parameters, prior and certificate it was made for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from . import families
from .errors import ParameterError
from .gamma import validate_gamma
from .member_params import MemberParams
from .status import SolveReport
from .validation import choice, instance, real

if TYPE_CHECKING:  # the member models build on this module; a table only needs their protocol
    from .models.disjoint.params import DisjointParams
    from .models.groups.params import GroupParams
    from .params import PrivacyParams


def validate_table_gamma(gamma: object, params: MemberParams) -> np.ndarray:
    """γ checked against the parameters: their own ``validate_table`` where they have one (grouped
    members' per-group form, :mod:`darrm.models.groups.per_group`), else γ(0..K) (:func:`darrm.gamma.validate_gamma`).

    Raises:
        ParameterError: naming ``gamma``.
    """
    check = getattr(params, "validate_table", None)
    return check(gamma) if check is not None else validate_gamma(gamma, params.K)


@dataclass(frozen=True, eq=False)
class GammaTable:
    """A symmetric γ: {0..K} → [0, 1] for a given (K, m, ε, Δ, δ).

    Attributes:
        params: the privacy parameters the table is certified for (``PrivacyParams``, or
            ``DisjointParams`` for members on disjoint shards).
        gamma: the full table γ(0..K) (length K+1, symmetric); for grouped members in the per-group
            form the table γ(l_1, …, l_G) (``params.gamma_shape``, symmetric under the joint reflection).
        family: a γ family of :mod:`darrm.families`, or "custom" (a table made by hand).
        prior: description of the prior the objective used (γ_opt), else None.
        objective: expected (signed) error under the prior, ½Σ_{l≥mid} E[α_l − α_{K−l}]·(1 − γ(l)).
        violation: the certificate's largest DP violation (≤ tol when certified).
        solver: the LP solver that produced it (γ_opt).
        status: the solve's verdict (γ_opt), e.g. "optimal".
        info: extra facts (rows in the LP, repair factor, timings).
    """

    params: PrivacyParams | DisjointParams | GroupParams
    gamma: np.ndarray
    family: str
    violation: float
    prior: dict | None = None
    objective: float | None = None
    solver: str | None = None
    status: str | None = None
    info: dict = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Checks every field (a table built by hand is used by :func:`darrm.aggregate` as is)."""
        instance("params", self.params, MemberParams, "a member model's parameters (darrm.PrivacyParams, "
                                                      "DisjointParams)")
        object.__setattr__(self, "gamma", validate_table_gamma(self.gamma, self.params))
        choice("family", self.family, families.table_names())
        object.__setattr__(self, "violation", real("violation", self.violation, allow_inf=True))
        instance("prior", self.prior, dict, "a dict (Prior.to_dict()) or None", allow_none=True)
        if self.objective is not None:
            object.__setattr__(self, "objective", real("objective", self.objective))
        instance("solver", self.solver, str, "a string or None", allow_none=True)
        instance("status", self.status, str, "a string or None", allow_none=True)
        instance("info", self.info, dict, "a dict")

    @property
    def report(self) -> SolveReport:
        """How this table was obtained, typed (stop reason, proven gap, rounds, repair, time)."""
        return SolveReport.from_info(self.info)

    @property
    def K(self) -> int:
        """The number of members K (``params.K``)."""
        return self.params.K

    def __call__(self, L: np.ndarray | int) -> np.ndarray:
        """γ(L) for vote counts L.

        Raises:
            ParameterError: naming ``L``, for a per-group table (γ(l_1, …, l_G) reads each group's
                count: index ``table.gamma`` with the counts, or aggregate the votes).
        """
        if self.gamma.ndim != 1:  # a per-group table γ(l_1, …, l_G)
            raise ParameterError("L", "a per-group table reads one vote count per group, not their total: "
                                      "index table.gamma[l_1, ..., l_G] or use darrm.aggregate")
        return self.gamma[np.asarray(L)]

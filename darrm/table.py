"""A γ table together with the parameters, prior and certificate it was made for."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .gamma import validate_gamma
from .params import PrivacyParams
from .solver.status import SolveReport
from .validation import choice, instance, real

#: what a table's ``family`` may be: the solver's families and "custom" (a hand-made table)
FAMILY_NAMES = ("opt", "sub", "dsub", "const", "custom", "budget")

if TYPE_CHECKING:  # darrm.disjoint builds on this module
    from .disjoint.params import DisjointParams


@dataclass(frozen=True, eq=False)
class GammaTable:
    """A symmetric γ: {0..K} → [0, 1] for a given (K, m, ε, Δ, δ).

    Attributes:
        params: the privacy parameters the table is certified for (``PrivacyParams``, or
            ``DisjointParams`` for members on disjoint shards).
        gamma: the full table γ(0..K) (length K+1, symmetric).
        family: "opt", "sub", "dsub", "const", "custom" or "budget" (designed for a total budget,
            :mod:`darrm.budget.design`).
        prior: description of the prior the objective used (γ_opt), else None.
        objective: expected (signed) error under the prior, ½Σ_{l≥mid} E[α_l − α_{K−l}]·(1 − γ(l)).
        violation: the certificate's largest DP violation (≤ tol when certified).
        solver, status: how it was obtained (γ_opt).
        info: extra facts (rows in the LP, repair factor, timings).
    """

    params: PrivacyParams | DisjointParams
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
        from .disjoint.params import DisjointParams  # at call time: darrm.disjoint builds on this module

        instance("params", self.params, (PrivacyParams, DisjointParams), "a darrm.PrivacyParams or DisjointParams")
        object.__setattr__(self, "gamma", validate_gamma(self.gamma, self.params.K))
        choice("family", self.family, FAMILY_NAMES)
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
        """γ(L) for vote counts L."""
        return self.gamma[np.asarray(L)]

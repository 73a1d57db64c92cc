"""What a total-budget design returns: the certified table, the winning shape, each shape's best.

The search itself composes tables over queries, which is the accountant's work, so it lives a layer
above (:mod:`darrm.accounting.budget`: one designer per member model, found through one registry);
the core keeps the budget (:mod:`.spec`), the targets (:mod:`.targets`) and these result types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..table import GammaTable

#: the shared-members baselines (per-query families), the default of :attr:`BudgetDesign.baselines`
BASELINE_FAMILIES = ("opt", "sub", "const")


@dataclass(frozen=True)
class Candidate:
    """One γ of the search: family, its parameter (m, or μ for "gdp"), expected error, composed ε."""

    family: str
    parameter: float
    gamma: np.ndarray = field(repr=False)
    error: float
    epsilon_total: float

    def to_dict(self) -> dict:
        """JSON-ready, without γ."""
        return {"family": self.family, "parameter": self.parameter, "error": self.error,
                "epsilon_total": self.epsilon_total if math.isfinite(self.epsilon_total) else None}


@dataclass(frozen=True)
class BudgetDesign:
    """The result of :func:`darrm.design_for_budget`.

    Attributes:
        table: the certified winner (family "budget"; ``info["total_budget"]`` holds the budget,
            its certified composed ε and the accountant that charged it).
        winner: the winning candidate.
        best: the best feasible candidate of each family searched (family → Candidate).
        baselines: the families of ``best`` that are baselines (:attr:`best_per_query`).
    """

    table: GammaTable
    winner: Candidate
    best: dict
    baselines: tuple[str, ...] = BASELINE_FAMILIES

    @property
    def best_per_query(self) -> Candidate | None:
        """The best feasible baseline (shared members: γ_opt, γ_Sub or γ_const at its best m;
        disjoint members: the Gaussian threshold or RR), or None."""
        base = [c for f, c in self.best.items() if f in self.baselines]
        return min(base, key=lambda c: c.error) if base else None

    @property
    def improvement(self) -> float:
        """Expected error of the best per-query family minus the winner's (≥ 0)."""
        b = self.best_per_query
        return 0.0 if b is None else b.error - self.winner.error

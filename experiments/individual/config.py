"""Settings of the individualised-budgets study (validated, torch-free)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from darrm.errors import ParameterError
from darrm.experiments.pate.student_config import StudentConfig
from darrm.validation import count, epsilon, odd_count, open_unit

__all__ = ["IndividualConfig", "quick_config"]

#: Individualized PATE's MNIST setting (Boenisch et al., PoPETs 2023): budgets and their shares
PAPER_BUDGETS = (1.0, 2.0, 3.0)
PAPER_SHARES = (0.34, 0.43, 0.23)
#: the shapes the budget-groups design (γ per group count) searches by default: its baselines.  The LP
#: shapes ("gdp", "eps-delta") add dense rows over every per-group cell, (K_1 + 1)(K_2 + 1)(K_3 + 1) =
#: 37,800 cells at K = 101, and outgrew 4 GiB within their first LP there; the record-groups design
#: (γ of the count, K + 1 cells) searches every shape
BUDGET_GROUP_SHAPES = ("threshold", "const", "per-query")


@dataclass(frozen=True)
class IndividualConfig:
    """One run of the study.

    Attributes:
        dataset: "mnist" or "fashion-mnist" (the two-class task ``classes``).
        classes: the two digits.
        K: the number of teachers (odd: DaRRM's majority has no ties).
        budgets: each group's total ε over the Q queries.
        shares: the fraction of the training records in each group (sum 1).
        copies: r_g, the shards each record of group g is copied into (upsampling).
        delta_total: every group's total δ.
        queries: the numbers Q of queries (each a run; the budgets are totals over Q).
        draws: repetitions (fresh queries and fresh noise) per Q.
        seed: seeds the groups, the shards, the teachers, the queries and the noise.
        teacher: how each teacher is trained (the PATE study's MLP, no self-training).
        splits: the shared-data simulation's numbers of members at the better budget.
        budget_group_shapes: the shapes searched by the total-budget design on the weighting teachers
            (:mod:`darrm.accounting.budget.parts`' SHAPES; default :data:`BUDGET_GROUP_SHAPES`).
    """

    dataset: str = "mnist"
    classes: tuple[int, int] = (5, 8)
    K: int = 101
    budgets: tuple[float, ...] = PAPER_BUDGETS
    shares: tuple[float, ...] = PAPER_SHARES
    copies: tuple[int, ...] = (1, 2, 3)
    delta_total: float = 1e-5
    queries: tuple[int, ...] = (100,)
    draws: int = 5
    seed: int = 0
    teacher: StudentConfig = field(default_factory=lambda: StudentConfig(steps=100, self_training=False))
    splits: tuple[int, ...] = (1, 3, 5, 7, 9)
    budget_group_shapes: tuple[str, ...] = BUDGET_GROUP_SHAPES

    def __post_init__(self) -> None:
        from darrm.accounting.budget.parts import SHAPES

        odd_count("K", self.K)
        G = len(self.budgets)
        if G == 0 or len(self.shares) != G or len(self.copies) != G:
            raise ParameterError("budgets", f"budgets, shares and copies need one entry per group, got "
                                            f"{len(self.budgets)}, {len(self.shares)}, {len(self.copies)}")
        for b in self.budgets:
            epsilon("budgets", b)
        for s in self.shares:
            open_unit("shares", s)
        if not math.isclose(sum(self.shares), 1.0, abs_tol=1e-9):
            raise ParameterError("shares", f"must sum to 1, got {sum(self.shares)}")
        for r in self.copies:
            count("copies", r, 1, self.K)
        open_unit("delta_total", self.delta_total)
        if not self.queries:
            raise ParameterError("queries", "need at least one number of queries")
        for q in self.queries:
            count("queries", q)
        count("draws", self.draws)
        for k in self.splits:
            count("splits", k, 1, 10)
        if not self.budget_group_shapes or any(sh not in SHAPES for sh in self.budget_group_shapes):
            raise ParameterError("budget_group_shapes", f"must be a non-empty subset of {SHAPES}, "
                                                        f"got {self.budget_group_shapes!r}")
        if self.teacher.self_training:
            raise ParameterError("teacher", "teachers are trained on their shard's labels only (no self-training)")

    @property
    def worst(self) -> int:
        """The index of the group with the smallest budget."""
        return min(range(len(self.budgets)), key=lambda g: self.budgets[g])

    def as_dict(self) -> dict:
        """A JSON-ready record (results.json)."""
        return asdict(self)


def quick_config(**overrides) -> IndividualConfig:
    """A smoke-test configuration (seconds): 21 teachers, 20 queries, 2 draws, one split."""
    base = dict(K=21, queries=(20,), draws=2, splits=(5,), teacher=StudentConfig(steps=30, self_training=False))
    return IndividualConfig(**{**base, **overrides})

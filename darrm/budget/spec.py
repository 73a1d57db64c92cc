"""A total privacy budget over Q queries answered by one γ table."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ParameterError
from ..validation import choice, count, epsilon, open_unit

#: how the members answer successive queries; only "fresh" has a proven composition theorem
MEMBER_RANDOMNESS = ("fresh",)


@dataclass(frozen=True)
class TotalBudget:
    """(ε_total, δ_total) for Q adaptively chosen queries of one DaRRM table.

    Attributes:
        epsilon: ε_total ∈ (0, 700].
        delta: δ_total ∈ (0, 1).
        queries: Q ≥ 1.
        member_randomness: "fresh" (each member answers each query with fresh randomness, so
            the Q answers are an adaptive composition and the Q-fold composition of the query's
            dominating pair bounds them; Zhu, Dong & Wang 2022, Theorem 10).  Fixed trained
            members are not covered by that theorem and are refused here.

    Raises:
        ParameterError: a value out of range (named).
    """

    epsilon: float
    delta: float
    queries: int
    member_randomness: str = "fresh"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", epsilon("epsilon", self.epsilon))
        object.__setattr__(self, "delta", open_unit("delta", self.delta))
        object.__setattr__(self, "queries", count("queries", self.queries))
        if self.member_randomness not in MEMBER_RANDOMNESS:
            raise ParameterError(
                "member_randomness",
                f"must be 'fresh' for a total budget (composition over queries is proven only for members "
                f"answering each query with fresh randomness), got {self.member_randomness!r}")
        choice("member_randomness", self.member_randomness, MEMBER_RANDOMNESS)

    def to_dict(self) -> dict:
        """JSON-ready (stored in γ files).

        Returns:
            ``{"epsilon", "delta", "queries", "member_randomness"}`` with their values.
        """
        return {"epsilon": self.epsilon, "delta": self.delta, "queries": self.queries,
                "member_randomness": self.member_randomness}

    @classmethod
    def from_dict(cls, d: dict) -> TotalBudget:
        """Inverse of :meth:`to_dict`.

        Args:
            d: a :meth:`to_dict` description (``member_randomness`` defaults to ``"fresh"``).

        Returns:
            The budget, validated like any construction.

        Raises:
            ParameterError: missing or bad keys.
        """
        if not isinstance(d, dict) or any(k not in d for k in ("epsilon", "delta", "queries")):
            raise ParameterError("budget", f"must be a dict with epsilon, delta, queries; got {d!r}")
        return cls(d["epsilon"], d["delta"], d["queries"], d.get("member_randomness", "fresh"))


@dataclass(frozen=True)
class GroupBudgets:
    """One total budget per record group, over the same Q queries of one table (records with their
    own budgets: each group g is owed (ε_g,total, δ_g,total)).

    Attributes:
        budgets: one :class:`TotalBudget` per group, in the order of the parameters' groups, all
            with the same number of queries.

    Raises:
        ParameterError: naming ``budgets``: empty, not TotalBudgets, or different query counts.
    """

    budgets: tuple[TotalBudget, ...]

    def __post_init__(self) -> None:
        b = self.budgets
        if isinstance(b, (str, bytes, dict)) or not hasattr(b, "__iter__"):
            raise ParameterError("budgets", f"must be a sequence of darrm.TotalBudget, got {b!r}")
        b = tuple(b)
        if not b or not all(isinstance(x, TotalBudget) for x in b):
            raise ParameterError("budgets", f"must hold at least one darrm.TotalBudget and nothing else, got {b!r}")
        if len({x.queries for x in b}) != 1:
            raise ParameterError("budgets", f"every group's budget must count the same queries, got "
                                            f"{[x.queries for x in b]}")
        object.__setattr__(self, "budgets", b)

    @property
    def queries(self) -> int:
        """Q, the number of queries every group's budget covers."""
        return self.budgets[0].queries

    def to_dict(self) -> dict:
        """JSON-ready (stored in γ files).

        Returns:
            ``{"groups": [TotalBudget.to_dict(), …]}``.
        """
        return {"groups": [b.to_dict() for b in self.budgets]}

    @classmethod
    def from_dict(cls, d: dict) -> GroupBudgets:
        """Inverse of :meth:`to_dict`.

        Args:
            d: a :meth:`to_dict` description (``{"groups": [TotalBudget.to_dict(), …]}``).

        Returns:
            The per-group budgets, validated like any construction.

        Raises:
            ParameterError: missing or bad keys.
        """
        if not isinstance(d, dict) or not isinstance(d.get("groups"), list):
            raise ParameterError("budget", f"must be a dict with a list of groups' budgets, got {d!r}")
        return cls(tuple(TotalBudget.from_dict(x) for x in d["groups"]))

"""Parameters of a disjoint-members DaRRM: K members, their privacy model, a per-query target."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from ...errors import ParameterError
from ...member_params import TargetQueryBudget
from ...neighboring import NeighboringRelation
from ...numerics.binomial import OthersPmfs, others_pmfs, others_pmfs_bytes
from ...privacy.condition import Check, check, rhs
from ...validation import epsilon, half_open_unit, odd_count
from ..group_lists import MemoryChecked
from .members import MemberPrivacy, member_from_dict

#: the round limit of the loop of the disjoint members (and of the record and budget groups that run it) when
#: ``SolveOptions.max_rounds`` is None (:attr:`darrm.models.base.MemberModel.max_rounds`): a round costs O(K)
#: rows and one warm HiGHS re-solve (measured: K = 2001 converges in ≤ ~300 rounds, docs/disjoint.md)
MAX_ROUNDS = 3000


@dataclass(frozen=True)
class DisjointParams(MemoryChecked, TargetQueryBudget):
    """K members on disjoint shards, each described by ``member``; target per-query (ε, δ).

    Attributes:
        K: the number of members (odd).
        member: the members' privacy (:class:`ApproxDP`, :class:`LocalRR` or :class:`NonPrivate`).
        target_eps: the target per-query ε (> 0).
        target_delta: the target per-query δ, in [0, 1).
    """

    K: int
    member: MemberPrivacy
    target_eps: float
    target_delta: float = 0.0

    def __post_init__(self) -> None:
        K = odd_count("K", self.K)
        if not isinstance(self.member, MemberPrivacy):
            raise ParameterError("member", f"must be NonPrivate, ApproxDP or LocalRR, got {self.member!r}")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "target_eps", epsilon("target_eps", self.target_eps))
        object.__setattr__(self, "target_delta", half_open_unit("target_delta", self.target_delta))

    #: the member model's name (:class:`darrm.member_params.MemberParams`)
    members: ClassVar[str] = "disjoint"
    #: the memory refusal's words (:class:`darrm.models.group_lists.MemoryChecked`)
    memory_who: ClassVar[str] = "disjoint members"
    memory_for: ClassVar[str] = "for the laws of the other members' counts"
    #: a neighbouring pair changes the shard of exactly one member
    neighboring: ClassVar[NeighboringRelation] = NeighboringRelation.ONE_MEMBER_CHANGES

    @property
    def check(self) -> Check:
        """Constants of the rigorous float64 privacy test (:mod:`darrm.privacy.condition`)."""
        return check(self.target_eps, self.target_delta, self.K)

    @property
    def rhs(self) -> float:
        """Right-hand side of the folded rows (Lemma 3.4 form): e^ε − 1 + 2δ."""
        return rhs(self.target_eps, self.target_delta)

    def memory(self) -> float:
        """Estimated peak bytes of the certificate and the solver.

        The laws of the other members' counts (:func:`darrm.numerics.binomial.others_pmfs_bytes`,
        ~1000·K^1.5).

        Returns:
            The estimate, in bytes.
        """
        return others_pmfs_bytes(self.K - 1)

    @cached_property
    def others(self) -> "OthersPmfs":
        """Pmfs of the vote count of the K − 1 members whose shards are unchanged."""
        lo, hi = self.member.unchanged_ends()
        return others_pmfs(self.K - 1, lo, hi)

    def to_dict(self) -> dict:
        """A JSON-ready description (stored in γ files).

        Returns:
            ``{"members": "disjoint", "K", "member", "target_eps", "target_delta"}``.
        """
        return {"members": "disjoint", "K": self.K, "member": self.member.to_dict(),
                "target_eps": self.target_eps, "target_delta": self.target_delta}

    def file_fields(self) -> dict[str, Any]:
        """The γ file's fields for these parameters ("model": the member-privacy model).

        Returns:
            ``{"K", "model", "target_eps", "target_delta"}`` with their values.
        """
        return {"K": self.K, "model": self.member.to_dict(), "target_eps": self.target_eps,
                "target_delta": self.target_delta}

    @classmethod
    def file_keys(cls) -> tuple[str, ...]:
        """The keys of :meth:`file_fields`.

        Returns:
            ``("K", "model", "target_eps", "target_delta")``.
        """
        return ("K", "model", "target_eps", "target_delta")

    @classmethod
    def from_file_fields(cls, d: dict[str, Any]) -> "DisjointParams":
        """The inverse of :meth:`file_fields` (validated like any construction).

        Args:
            d: a γ file's fields, holding at least :meth:`file_keys`.

        Returns:
            The parameters.

        Raises:
            ParameterError: a field is out of its domain or the model is unknown.
        """
        return cls(d["K"], member_from_dict(d["model"]), d["target_eps"], d["target_delta"])

    def record_fields(self) -> dict[str, Any]:
        """The JSON record's parameter fields: the member-privacy model.

        Returns:
            ``{"member_privacy": <the model's description>}``.
        """
        return {"member_privacy": self.member.to_dict()}

    def describe(self) -> str:
        """One line for logs and reports.

        Returns:
            ``K=… <member model> on disjoint shards``.
        """
        return f"K={self.K} {self.member.describe()} on disjoint shards"

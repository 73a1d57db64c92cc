"""Parameters of a DaRRM over members on shards whose records carry per-group budgets.

Individualized PATE (Boenisch et al., PoPETs 2023) lets each data owner choose a budget: the
records fall into groups g with their own target (ε_g, δ_g).  Its *upsampling* variant copies
every record of group g into r_g teachers' shards, so that a group with a larger budget is seen
by more teachers.  :class:`ShardGroupParams` describes that ensemble for DaRRM: K members on
shards, one member-privacy model (:mod:`darrm.models.disjoint.members`), and for each record group its
number of copies r_g and its per-query target.  A neighbouring pair changes one record of some
group g, hence exactly the r_g members whose shards hold its copies
(:attr:`~darrm.neighboring.NeighboringRelation.RECORD_COPIES_CHANGE`); the release must be
(ε_g, δ_g)-DP for that pair.  The worst case and its proof are in :mod:`darrm.models.shard_groups`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from ...errors import ParameterError
from ...neighboring import NeighboringRelation
from ...numerics.binomial import OthersPmfs, others_pmfs, others_pmfs_bytes
from ...privacy.condition import Check, GroupTargets, check
from ...validation import colon_groups, group_item, odd_count
from ..disjoint.members import MemberPrivacy, member_from_dict
from ..group_lists import MemoryChecked, TargetGroup


@dataclass(frozen=True)
class RecordGroup(TargetGroup):
    """Records of one budget: each sits in ``copies`` shards and is owed (target_eps, target_delta)
    (validated by :class:`~darrm.models.group_lists.TargetGroup`).

    Attributes:
        copies: r_g ≥ 1, the number of members whose shards hold a copy of each record.
        target_eps: the per-query ε_g > 0 owed to these records.
        target_delta: the per-query δ_g ∈ [0, 1).
    """

    count_field: ClassVar[str] = "copies"
    copies: int
    target_eps: float
    target_delta: float = 0.0


def parse_record_groups(text: object) -> tuple[RecordGroup, ...]:
    """Record groups from ``copies:eps:delta,copies:eps:delta,…`` (``darrm solve --record-groups``).

    Raises:
        ParameterError: naming ``record-groups``, for a malformed item or a value out of its domain.
    """
    return colon_groups("record-groups", text, "copies:eps:delta", "count of copies", RecordGroup)


@dataclass(frozen=True)
class ShardGroupParams(MemoryChecked, GroupTargets):
    """K members on shards; records in groups g, each record copied into r_g shards and owed (ε_g, δ_g).

    Attributes:
        K: the number of members (odd).
        member: the members' privacy with respect to their own shard (:class:`~darrm.models.disjoint.ApproxDP`,
            :class:`~darrm.models.disjoint.LocalRR` or :class:`~darrm.models.disjoint.NonPrivate`: PATE's teachers).
        groups: the record groups (:class:`RecordGroup` or ``(copies, eps, delta)``); copies ≤ K.
    """

    K: int
    member: MemberPrivacy
    groups: tuple[RecordGroup, ...]
    _others: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    if TYPE_CHECKING:  # the constructor takes (copies, eps[, delta]) tuples too; the attribute holds RecordGroups

        def __init__(self, K: int, member: MemberPrivacy,
                     groups: Sequence[RecordGroup | tuple[int, float, float] | tuple[int, float]]) -> None: ...

    #: the member model's name (:class:`darrm.member_params.MemberParams`)
    members: ClassVar[str] = "shard-groups"
    #: the memory refusal's words (:class:`darrm.models.group_lists.MemoryChecked`)
    memory_who: ClassVar[str] = "record groups"
    memory_for: ClassVar[str] = "for the laws of the unchanged members' counts"
    #: a neighbouring pair changes the r_g members holding the copies of one record of group g
    neighboring: ClassVar[NeighboringRelation] = NeighboringRelation.RECORD_COPIES_CHANGE

    def __post_init__(self) -> None:
        K = odd_count("K", self.K)
        if not isinstance(self.member, MemberPrivacy):
            raise ParameterError("member", f"must be NonPrivate, ApproxDP or LocalRR, got {self.member!r}")
        if isinstance(self.groups, (str, bytes)) or not hasattr(self.groups, "__iter__"):
            raise ParameterError("groups", f"must be a sequence of record groups, got {self.groups!r}")
        groups = tuple(group_item("groups", g, i, RecordGroup, "copies, eps, delta") for i, g in enumerate(self.groups))
        if not groups:
            raise ParameterError("groups", "must hold at least one record group")
        for i, g in enumerate(groups):
            if g.copies > K:
                raise ParameterError("groups", f"group {i} copies each record into {g.copies} shards, more than "
                                               f"the K={K} members")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "groups", groups)
        room = [self.check_for(i).rhs for i in range(len(groups))]
        if not all(r > 0.0 for r in room):
            raise ParameterError("groups", "a group's target leaves no room in float64 (e^eps - 1 + 2 delta "
                                           "below the rounding bound): raise its target_eps")

    # ------------------------------------------------------------------ the privacy tests
    def check_for(self, g: int) -> Check:
        """Constants of the rigorous float64 test (:mod:`darrm.privacy.condition`) for group g's target.

        Every configuration has K members, so ρ(K) bounds every probability's rounding.

        Args:
            g: the record group's index.

        Returns:
            The test's constants for (target_eps, target_delta) of group g at K members.
        """
        grp = self.groups[g]
        return check(grp.target_eps, grp.target_delta, self.K)


    def record_group_params(self, g: int) -> "ShardGroupParams":
        """The same ensemble with record group g only (its own profile, its own total).

        It shares this object's cache of the unchanged members' laws (they depend on K, the member
        model and r_g only).

        Args:
            g: the record group's index.

        Returns:
            The parameters of that one group.

        Raises:
            ParameterError: ``g`` is not a group index.
        """
        if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g < len(self.groups):
            raise ParameterError("g", f"must be a record-group index in 0..{len(self.groups) - 1}, got {g!r}")
        sub = ShardGroupParams(self.K, self.member, (self.groups[g],))
        object.__setattr__(sub, "_others", self._others)
        return sub

    # ------------------------------------------------------------------ the unchanged members
    def copies(self) -> tuple[int, ...]:
        """The distinct numbers of copies r_g, ascending.

        Returns:
            The r_g, each once.
        """
        return tuple(sorted({g.copies for g in self.groups}))

    def memory(self) -> float:
        """Estimated peak bytes: the laws of the unchanged members' count for every distinct r_g.

        Returns:
            The estimate, in bytes.
        """
        return float(sum(others_pmfs_bytes(self.K - r) for r in self.copies()))

    def others(self, copies: int) -> OthersPmfs:
        """Laws of the vote count of the K − r unchanged members (cached per r).

        Args:
            copies: r, the number of shards a changed record is copied to.

        Returns:
            The laws (:class:`~darrm.numerics.binomial.OthersPmfs`), for every number of them at the
                upper end.
        """
        if copies not in self._others:
            lo, hi = self.member.unchanged_ends()
            self._others[copies] = others_pmfs(self.K - copies, lo, hi)
        return self._others[copies]

    # ------------------------------------------------------------------ records and files
    def to_dict(self) -> dict:
        """A JSON-ready description.

        Returns:
            ``{"members", "K", "member", "record_groups"}`` with their values.
        """
        return {"members": self.members, "K": self.K, "member": self.member.to_dict(),
                "record_groups": [g.to_list() for g in self.groups]}

    def file_fields(self) -> dict[str, Any]:
        """The γ file's fields for these parameters.

        Returns:
            ``{"K", "model", "record_groups"}`` with their values.
        """
        return {"K": self.K, "model": self.member.to_dict(), "record_groups": [g.to_list() for g in self.groups]}

    @classmethod
    def file_keys(cls) -> tuple[str, ...]:
        """The keys of :meth:`file_fields`.

        Returns:
            ``("K", "model", "record_groups")``.
        """
        return ("K", "model", "record_groups")

    @classmethod
    def from_file_fields(cls, d: dict[str, Any]) -> "ShardGroupParams":
        """The inverse of :meth:`file_fields` (validated like any construction).

        Args:
            d: a γ file's fields, holding at least :meth:`file_keys`.

        Returns:
            The parameters.

        Raises:
            ParameterError: a field is out of its domain or malformed.
        """
        groups = d["record_groups"]
        if not isinstance(groups, list):
            raise ParameterError("record_groups", f"must be a list of [copies, eps, delta], got {groups!r}")
        return cls(d["K"], member_from_dict(d["model"]), tuple(groups))

    def record_fields(self) -> dict[str, Any]:
        """The JSON record's parameter fields: the member-privacy model and the record groups.

        Returns:
            ``{"member_privacy": …, "record_groups": [[copies, ε, δ], …]}``.
        """
        return {"member_privacy": self.member.to_dict(), "record_groups": [g.to_list() for g in self.groups]}

    def describe(self) -> str:
        """One line for logs and reports.

        Returns:
            ``K=… <member model> on shards; record groups copies×(target ε, δ): …``.
        """
        gs = ", ".join(f"{g.copies}×({g.target_eps:g}, {g.target_delta:g})" for g in self.groups)
        return f"K={self.K} {self.member.describe()} on shards; record groups copies×(target ε, δ): {gs}"

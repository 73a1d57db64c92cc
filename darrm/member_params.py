"""What every member model's parameters provide: the protocol a γ table is validated against.

A *member model* says which members a neighbouring pair of data sets may change: every member
(shared data, Problem 1.1) or one member (disjoint shards, :mod:`darrm.models.disjoint`).  Its
parameters type is all that :class:`darrm.GammaTable`, γ files, the accounting and the command
line need to know about it; which certificate and which solver go with it is decided in one
place, :mod:`darrm.api`.  A new model (groups, classes) implements this protocol and adds one
entry there (docs/contributing.md).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Protocol, runtime_checkable

from .neighboring import NeighboringRelation


@runtime_checkable
class MemberParams(Protocol):
    """The parameters of one member model (``PrivacyParams``, ``DisjointParams``).

    Attributes:
        members: the model's name ("shared", "disjoint"): the key of :data:`darrm.models.MEMBER_MODELS`
            and the ``members`` field of the command lines' JSON records.
        K: the number of members (odd).
        neighboring: which members a neighbouring pair may change.
    """

    members: ClassVar[str]
    neighboring: ClassVar[NeighboringRelation]

    @property
    def K(self) -> int:
        """The number of members (odd)."""
        ...

    @property
    def query_budget(self) -> tuple[float, float]:
        """(ε, δ) of one DaRRM release certified for these parameters."""
        ...

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready description (tables' and sessions' records)."""
        ...

    def file_fields(self) -> dict[str, Any]:
        """The fields of a γ file that hold these parameters (:mod:`darrm.gamma_file`)."""
        ...

    @classmethod
    def file_keys(cls) -> tuple[str, ...]:
        """The keys of :meth:`file_fields`."""
        ...

    @classmethod
    def from_file_fields(cls, d: dict[str, Any]) -> Any:
        """The parameters a γ file's fields describe (the inverse of :meth:`file_fields`)."""
        ...

    def record_fields(self) -> dict[str, Any]:
        """The model's own fields of a command line's JSON record (library names; ``canonical`` renames)."""
        ...

    def describe(self) -> str:
        """One line naming the model and its parameters (``darrm solve``'s header)."""
        ...


class TargetQueryBudget:
    """For member models whose per-query guarantee is a target (ε, δ) of their own fields
    ``target_eps``/``target_delta`` (:class:`~darrm.DisjointParams`, :class:`~darrm.GroupParams`),
    not derived from the members' budgets: the :class:`MemberParams` budget properties, once."""

    target_eps: float
    target_delta: float

    @property
    def query_budget(self) -> tuple[float, float]:
        """(target_eps, target_delta): the guarantee of one release."""
        return float(self.target_eps), float(self.target_delta)

    @property
    def exp_eps(self) -> float:
        """e^{target_eps}."""
        return math.exp(self.target_eps)

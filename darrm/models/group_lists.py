"""What the models with per-group targets share: one group item owed (ε_g, δ_g), and the memory refusal.

:class:`TargetGroup` is the item of a group list: a count (the record copies of
:class:`darrm.models.shard_groups.RecordGroup`, the members of :class:`darrm.models.weighted_shards.BudgetGroup`)
and the per-query target owed to the group's records, validated once at construction with
:mod:`darrm.validation`'s checks.  :func:`refuse_over` is the one up-front refusal of a solve or a
certificate whose estimated peak memory exceeds what is allowed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from ..errors import ParameterError
from ..validation import count, epsilon, half_open_unit


class TargetGroup:
    """A group owed one per-query target; a frozen dataclass subclass declares the fields ``<count_field>``,
    ``target_eps`` and ``target_delta`` (in that order, ``to_list``'s order).

    Attributes:
        count_field: the name of the count (≥ 1), also the name its errors carry.
    """

    count_field: ClassVar[str]
    if TYPE_CHECKING:  # the subclass's dataclass fields
        target_eps: float
        target_delta: float

    def __post_init__(self) -> None:
        name = self.count_field
        object.__setattr__(self, name, count(name, getattr(self, name), 1))
        object.__setattr__(self, "target_eps", epsilon("target_eps", self.target_eps))
        object.__setattr__(self, "target_delta", half_open_unit("target_delta", self.target_delta))

    def to_list(self) -> list:
        """The group as stored in γ files and JSON records.

        Returns:
            ``[count, target_eps, target_delta]``.
        """
        return [getattr(self, self.count_field), self.target_eps, self.target_delta]


class MemoryChecked:
    """:meth:`check_memory` for parameters that estimate their peak bytes (``memory()``), mixed into the
    parameters of the disjoint members, the record groups and the budget groups.

    Attributes:
        memory_who: the refusal's subject ("disjoint members").
        memory_for: what the bytes hold ("for the laws of the other members' counts").
    """

    memory_who: ClassVar[str]
    memory_for: ClassVar[str]
    if TYPE_CHECKING:

        @property
        def K(self) -> int: ...

        def memory(self) -> float: ...

    def check_memory(self, max_memory: float | None) -> float:
        """``memory()``, refused up front when it exceeds ``max_memory`` bytes.

        Args:
            max_memory: the most bytes allowed; None: no limit here (the laws of the unchanged members'
                counts are still checked against the memory available when they are built,
                :func:`~darrm.numerics.binomial.others_pmfs`, naming ``K``).

        Returns:
            ``memory()``.

        Raises:
            ParameterError: naming ``max_memory``, when the estimate exceeds it.
        """
        return refuse_over(self.memory(), max_memory, "max_memory", f"{self.memory_who} at K={self.K} need",
                           self.memory_for)


def refuse_over(need: float, limit: float | None, parameter: str, who: str, purpose: str = "") -> float:
    """``need`` bytes, refused up front when above ``limit`` (None: no limit).

    Args:
        need: the estimated peak bytes.
        limit: the most bytes allowed, or None.
        parameter: the parameter the refusal names (``max_memory``).
        who: the message's subject with its verb ("disjoint members at K=11 need").
        purpose: what the bytes hold ("for the laws of …"), or "".

    Returns:
        ``need``.

    Raises:
        ParameterError: naming ``parameter``, when ``need`` exceeds ``limit``.
    """
    if limit is not None and need > limit:
        what = f" {purpose}" if purpose else ""
        raise ParameterError(parameter, f"{who} about {need / 2**30:.2f} GiB{what}, more than the "
                                        f"{limit / 2**30:.2f} GiB allowed")
    return need

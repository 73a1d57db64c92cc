"""Requests for record groups on shards: what their solver cannot use is refused, naming it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...families import Family
from ...solver.options import SolveOptions
from ..disjoint.request import check_disjoint
from .params import ShardGroupParams

if TYPE_CHECKING:
    from ...backends import Executor, TorchDevice


def check_shard_groups(params: ShardGroupParams, family: Family, opts: SolveOptions,
                       executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what the record-groups solve would drop silently: the same as the disjoint members'
    (:func:`darrm.models.disjoint.request.check_disjoint`; the same loop, in this process).

    Raises:
        ParameterError: a ``checkpoint``, an ``executor`` other than this process, the full LP
            ``method``, or an option the loop does not use.
    """
    check_disjoint(params, family, opts, executor, checkpoint)  # type: ignore[arg-type]

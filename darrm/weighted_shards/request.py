"""Requests for budget groups on one-group shards: what their solver cannot use is refused, naming it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..disjoint.request import check_disjoint
from ..families import Family
from ..solver.options import SolveOptions
from .params import WeightedShardParams

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice


def check_weighted_shards(params: WeightedShardParams, family: Family, opts: SolveOptions,
                          executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what the budget-groups solve would drop silently: the same as the disjoint members'
    (:func:`darrm.disjoint.request.check_disjoint`; the same loop, in this process).

    Raises:
        ParameterError: a ``checkpoint``, an ``executor`` other than this process, the full LP
            ``method``, or an option the loop does not use.
    """
    check_disjoint(params, family, opts, executor, checkpoint)  # type: ignore[arg-type]

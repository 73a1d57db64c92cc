"""Requests for budget groups on one-group shards: what their solver cannot use is refused, naming it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...families import Family
from ...solver.in_process import refuse_distribution, refuse_ignored
from ...solver.options import SolveOptions
from ..disjoint.request import DISJOINT_IGNORED
from .params import WeightedShardParams

if TYPE_CHECKING:
    from ...backends import Executor, TorchDevice


def check_weighted_shards(params: WeightedShardParams, family: Family, opts: SolveOptions,
                          executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what the budget-groups solve would drop silently: it runs in this process (the sparse
    full LP or the disjoint members' constraint generation, ``method`` "full" / "cutting-planes" /
    "auto"), so no checkpoint, no executor but this process, and no option of
    :data:`darrm.models.disjoint.request.DISJOINT_IGNORED`.

    Raises:
        ParameterError: a ``checkpoint``, an ``executor`` other than this process, or an unused option.
    """
    refuse_distribution(executor, checkpoint, "budget groups are solved in this process (one sparse LP, or "
                                              "constraint generation): nothing to distribute or checkpoint")
    refuse_ignored(opts, DISJOINT_IGNORED, " (constraint generation over corner multisets); the budget-groups "
                                           "solver does not use it")

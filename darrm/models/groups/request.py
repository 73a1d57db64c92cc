"""Requests for grouped members: what their solver cannot use is refused, naming it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...families import Family
from ...solver.in_process import refuse_distribution, refuse_ignored
from ...solver.options import SolveOptions
from .params import GroupParams

if TYPE_CHECKING:
    from ...backends import Executor, TorchDevice

#: :class:`SolveOptions` fields the grouped solver ignores (no screening)
GROUPS_IGNORED = ("screen", "warm_start")

_WHY = "the grouped certificate runs in this process (one factorised sweep per round): it is not distributed and " \
       "has nothing to checkpoint yet"


def check_groups(params: GroupParams, family: Family, opts: SolveOptions,
                 executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what the grouped solve would drop silently.

    Raises:
        ParameterError: a ``checkpoint``, an ``executor`` other than this process, or an option of
            :data:`GROUPS_IGNORED`.
    """
    refuse_distribution(executor, checkpoint, _WHY)
    refuse_ignored(opts, GROUPS_IGNORED, "; the grouped solver does not use it")

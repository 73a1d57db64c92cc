"""Requests for grouped members: what their solver cannot use is refused, naming it."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..backends.executors import SerialExecutor
from ..errors import ParameterError
from ..families import Family
from ..solver.options import SolveOptions
from .params import GroupParams

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice

#: :class:`SolveOptions` fields the grouped solver ignores (no screening)
GROUPS_IGNORED = ("screen",)

_WHY = "the grouped certificate runs in this process (one factorised sweep per round): it is not distributed and " \
       "has nothing to checkpoint yet"


def check_groups(params: GroupParams, family: Family, opts: SolveOptions,
                 executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what the grouped solve would drop silently.

    Raises:
        ParameterError: a ``checkpoint``, an ``executor`` other than this process, or an option of
            :data:`GROUPS_IGNORED`.
    """
    if checkpoint is not None:
        raise ParameterError("checkpoint", f"applies to shared members only; {_WHY}")
    if executor is not None and not isinstance(executor, SerialExecutor):
        raise ParameterError("executor", f"applies to shared members only; {_WHY}")
    ignored = opts.first_changed(GROUPS_IGNORED)
    if ignored is not None:
        raise ParameterError(ignored, "applies to shared members only; the grouped solver does not use it")

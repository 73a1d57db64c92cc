"""Requests for the member models whose solvers run in this process (disjoint shards, grouped
members): what only the shared-members engine uses — a checkpoint, a distributed executor, its
options — is refused, naming it, instead of being dropped silently."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..backends.executors import SerialExecutor
from ..errors import ParameterError
from .options import SolveOptions

if TYPE_CHECKING:
    from ..backends import Executor, TorchDevice


def refuse_distribution(executor: Executor | TorchDevice | None, checkpoint: Path | None, why: str) -> None:
    """Refuse a ``checkpoint`` and an ``executor`` other than this process.

    Args:
        executor: where sweeps would run (only this process applies).
        checkpoint: the checkpoint file, if any (none applies).
        why: why the model's solver runs in this process (the end of both errors).

    Raises:
        ParameterError: naming ``checkpoint`` or ``executor``.
    """
    if checkpoint is not None:
        raise ParameterError("checkpoint", f"applies to shared members only; {why}")
    if executor is not None and not isinstance(executor, SerialExecutor):
        raise ParameterError("executor", f"applies to shared members only; {why}")


def refuse_ignored(opts: SolveOptions, ignored: tuple[str, ...], unused: str) -> None:
    """Refuse the first option of ``ignored`` changed from its default.

    Args:
        opts: the solve options (defaults filled in).
        ignored: :class:`SolveOptions` fields the model's solver does not use.
        unused: the end of the error ("applies to shared members only" + ``unused``).

    Raises:
        ParameterError: naming that option.
    """
    changed = opts.first_changed(ignored)
    if changed is not None:
        raise ParameterError(changed, f"applies to shared members only{unused}")

"""Requests for members on disjoint shards: what the O(K) solver cannot use is refused."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ParameterError
from ...families import Family
from ...solver.in_process import refuse_distribution, refuse_ignored
from ...solver.options import SolveOptions
from .params import DisjointParams

if TYPE_CHECKING:
    from ...backends import Executor, TorchDevice

#: :class:`SolveOptions` fields the disjoint-members solver ignores (it is always constraint
#: generation over its O(K) rows, with plain Kelley cuts and no screening)
DISJOINT_IGNORED = ("stabilize", "screen", "warm_start")

_WHY = "the disjoint LP has O(K) rows per round and is solved in this process: no sweep to distribute and " \
       "nothing to checkpoint"


def check_disjoint(params: DisjointParams, family: Family, opts: SolveOptions,
                   executor: Executor | TorchDevice | None, checkpoint: Path | None) -> None:
    """Refuse what the disjoint-members solve would drop silently.

    Args:
        params: the request's parameters.
        family: the γ family asked for (its members include "disjoint": checked by the caller).
        opts: the solve options (defaults filled in).
        executor: where sweeps would run (only this process applies).
        checkpoint: the checkpoint file, if any (none applies).

    Raises:
        ParameterError: a ``checkpoint``, an ``executor`` other than this process, the full LP
            ``method``, or an option of :data:`DISJOINT_IGNORED`.
    """
    refuse_distribution(executor, checkpoint, _WHY)
    if opts.method == "full":
        raise ParameterError("method", "disjoint members are always solved by constraint generation over "
                                       "their O(K) rows; 'full' applies to shared members only")
    refuse_ignored(opts, DISJOINT_IGNORED,
                   " (constraint generation over corner multisets); the disjoint solver does not use it")

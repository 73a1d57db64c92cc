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
    solve_memory(params, opts)


def solve_memory(params: WeightedShardParams, opts: SolveOptions) -> float:
    """The budget-groups solve's estimated peak bytes, refused up front (before any work) when above
    ``opts.max_memory`` or, without one, above the memory available
    (:meth:`WeightedShardParams.check_memory`).

    The sparse full LP (chosen as the solver chooses it) needs
    :data:`~darrm.models.weighted_shards.full_lp.BYTES_PER_NONZERO` per non-zero of its rows.
    Constraint generation needs the certificate's arrays and, from its first round on, the dense rows
    it adds: ``cuts_per_round`` rows over the per-group form's Π_g(K_g + 1)/2 LP variables, held twice
    (the rows and the LP's copy), 8 bytes each (a floor: later rounds add more; the weighted form's
    rows are over fewer variables and are not counted).  At 25 groups of size 1 that floor is
    64 GiB, and the certificate's arrays 12 GiB more.

    Raises:
        ParameterError: naming ``max_memory``.
    """
    import math

    from .full_lp import BYTES_PER_NONZERO, FULL_LP_NONZEROS, row_nonzeros

    nnz = row_nonzeros(params)
    if opts.method == "full" or (opts.method == "auto" and nnz <= FULL_LP_NONZEROS):
        return params.check_memory(opts.max_memory, max(params.memory(), BYTES_PER_NONZERO * float(nnz)),
                                   "the sparse full LP's rows")
    rows = 0.0
    if params.weights is None:
        rows = 2.0 * 8.0 * opts.cuts_per_round * (math.prod(params.gamma_shape) // 2)
    return params.check_memory(opts.max_memory, params.memory() + rows,
                               "the certificate's arrays and the first round's dense LP rows")

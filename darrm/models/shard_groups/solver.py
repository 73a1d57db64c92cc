"""γ_opt for record groups on shards: constraint generation over every group's rows, proven gap."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...prior import Prior
from ...solver.options import SolveOptions
from ...table import GammaTable
from ..disjoint.solver import constraint_generation
from .certificate import certify_shard_groups, constraint_row, flat_violations, violations
from .params import ShardGroupParams


def solve_gamma_opt_shard_groups(
    params: ShardGroupParams,
    prior: Prior | None = None,
    *,
    options: SolveOptions | None = None,
    tol: float | None = None,
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
) -> GammaTable:
    """Certified γ_opt for members on shards with record groups (:mod:`darrm.models.shard_groups`).

    The loop of the disjoint members (:func:`darrm.models.disjoint.solver.constraint_generation`) over
    Σ_g 4·C(r_g + C − 1, C − 1)·(K − r_g + 1) configurations: each round evaluates every
    group's normalised bound ṽ_g (:func:`~darrm.models.shard_groups.certificate.violations`), keeps
    the best repaired point as an upper bound, bounds the LP from below with the duals of the
    exact objective (Lagrangian bound), and adds the most violated rows.  The LP is the full LP
    of the reduction (every row of every group, each divided by its group's e^{ε_g} − 1 + 2δ_g),
    so the proven gap is to the optimum over all private γ for this model.  The returned table is
    certified by :func:`~darrm.models.shard_groups.certificate.certify_shard_groups` (repaired by one
    scale factor for every group: :attr:`ShardGroupParams.check`); "optimal" iff its final gap
    ≤ ``gap_tol``, else :class:`~darrm.errors.SolveError` unless ``accept_gap``.

    Args:
        params: the ensemble and its record groups.
        prior: the prior of the objective (None: i.i.d. uniform).
        options: :class:`~darrm.SolveOptions` (round limit: :data:`darrm.models.disjoint.params.MAX_ROUNDS`).
        tol: the certificate's threshold (None: 0).
        solver_opts: options for the LP back end.
        log: one line per round (and first the memory estimate).

    Returns:
        The certified :class:`~darrm.GammaTable` with ``info["optimality_gap"]``.

    Raises:
        SolveError: the proven gap exceeds ``gap_tol`` and ``accept_gap`` is off.
        ParameterError: ``max_memory`` is exceeded (checked before any work).
    """
    opts = SolveOptions() if options is None else options
    return constraint_generation(
        params, prior, opts, what="record groups on shards",
        violations_fn=lambda g: flat_violations(violations(g, params)),
        row_fn=lambda key: constraint_row(params, key[0]),
        certify_fn=lambda g: certify_shard_groups(g, params, tol=tol, max_memory=opts.max_memory),
        method="shard-groups-cutting-planes", solver_opts=solver_opts, log=log)


def all_rows(params: ShardGroupParams) -> np.ndarray:
    """Every row of every group at once, over γ(mid..K) (the full LP of
    :func:`darrm.solver.full_lp.solve_all_rows`: the tests' reference for constraint generation)."""
    n = flat_violations(violations(np.zeros(params.K + 1), params)).size
    return np.array([constraint_row(params, i) for i in range(n)])

"""γ_opt for budget groups on one-group shards: the sparse full LP or constraint generation, proven gap.

**Which method, and why.**  The rows number 4·Σ_g C·K_g·Π_{h≠g}(K_h + 1) (≈ 1.8·10⁶ at
Individualized PATE's K = 34 + 44 + 23) over Π_g(K_g + 1)/2 per-group variables (18 900 there).
For non-private and (ε, Δ)-DP members each row has at most four non-zeros
(:mod:`darrm.models.weighted_shards.full_lp`), so "auto" solves the sparse full LP in one HiGHS call while
it has at most :data:`~darrm.models.weighted_shards.full_lp.FULL_LP_NONZEROS` non-zeros.  Otherwise
(randomised-response members, whose rows are dense; or ``method="cutting-planes"``) the loop of the
disjoint members (:func:`darrm.models.disjoint.solver.constraint_generation`) runs with this model's table
form: every violation is one tensor contraction per group
(:func:`~darrm.models.weighted_shards.certificate.violations`) and only the violated rows enter the LP —
but it holds them densely, which at K = 101 in the per-group form grew past 5 GB (measured), so it is
for small K or few variables (the weighted form).  :func:`all_rows` gives the every-row
LP densely for small K (tests).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ...prior import IIDPrior, Prior
from ...solver.finalize import TableForm
from ...solver.options import SolveOptions
from ...table import GammaTable
from ..disjoint.solver import constraint_generation
from ..group_lists import refuse_over
from ..groups.per_group import joint_from_upper, joint_objective, upper_of
from .certificate import _layout, certify_weighted_shards, constraint_row, flat_violations, lp_variables, violations
from .params import WeightedShardParams


def table_form(params: WeightedShardParams, prior: Prior) -> TableForm:
    """The LP's variables and objective: γ(l) on U = {l : Σ_g l_g ≥ mid} (the per-group form,
    :func:`darrm.models.groups.per_group.joint_objective`), or one γ per class of equal weighted count, whose
    cost is the sum of its cells' costs (the weighted form: x ↦ the per-group point x[class(l)], a
    linear map, so every weighted table is a per-group table and the weighted LP is the per-group
    LP restricted to that subspace: its optimum is never better)."""
    c, A = joint_objective(_layout(params), prior)
    var = lp_variables(params)
    if params.weights is None:
        return TableForm(c, A, lambda x: joint_from_upper(x, _layout(params)), lambda g: upper_of(g, _layout(params)))
    n = int(var.max()) + 1
    rep = np.full(n, -1)
    rep[var[::-1]] = np.arange(var.size)[::-1]  # the first U cell of each class
    return TableForm(np.bincount(var, weights=c, minlength=n), A,
                     lambda x: joint_from_upper(np.asarray(x)[var], _layout(params)),
                     lambda g: upper_of(g, _layout(params))[rep])


def solve_gamma_opt_weighted_shards(
    params: WeightedShardParams,
    prior: Prior | None = None,
    *,
    options: SolveOptions | None = None,
    tol: float | None = None,
    solver_opts: dict | None = None,
    log: Callable[[str], None] | None = None,
) -> GammaTable:
    """Certified γ_opt for members in budget groups on one-group shards (:mod:`darrm.models.weighted_shards`).

    The sparse full LP (:func:`darrm.models.weighted_shards.full_lp.solve_full_lp`) when ``options.method``
    is "full", or "auto" and the rows are sparse enough (module docstring); else the loop of the
    disjoint members (:func:`darrm.models.disjoint.solver.constraint_generation`) over every group's
    configurations: each round evaluates every group's normalised bound ṽ_g
    (:func:`~darrm.models.weighted_shards.certificate.violations`), keeps the best repaired point as an upper
    bound, bounds the LP from below with the duals of the exact objective (Lagrangian bound), and
    adds the most violated rows.  The LP is the full LP of the reduction (every row of every group,
    each divided by its group's e^{ε_g} − 1 + 2δ_g), so the proven gap is to the optimum over every
    private γ of the parameters' form.  The returned table is certified by
    :func:`~darrm.models.weighted_shards.certificate.certify_weighted_shards` (repaired by one scale factor
    for every group: :attr:`WeightedShardParams.check`); "optimal" iff its final gap ≤ ``gap_tol``,
    else :class:`~darrm.errors.SolveError` unless ``accept_gap``.

    Args:
        params: the budget groups (and the weights of the weighted form).
        prior: the prior of the objective (None: i.i.d. uniform); exchangeable or ``means:``
            (:func:`darrm.models.groups.per_group.joint_margins`).
        options: :class:`~darrm.SolveOptions`: ``method`` ("auto", "full", "cutting-planes"), the
            round limit (:data:`darrm.models.disjoint.params.MAX_ROUNDS`), ``gap_tol``, ``accept_gap``,
            ``max_memory``.
        tol: the certificate's threshold (None: 0).
        solver_opts: options for the LP back end.
        log: one line per round (and first the memory estimate).

    Returns:
        The certified :class:`~darrm.GammaTable` (γ(l_1, …, l_G)) with ``info["optimality_gap"]``.

    Raises:
        SolveError: the proven gap exceeds ``gap_tol`` and ``accept_gap`` is off.
        ParameterError: ``max_memory`` is exceeded (checked before any work), or the prior has no
            per-group margins.
    """
    from .full_lp import BYTES_PER_NONZERO, FULL_LP_NONZEROS, row_nonzeros, solve_full_lp

    opts = SolveOptions() if options is None else options
    prior = IIDPrior() if prior is None else prior
    full = opts.method == "full" or (opts.method == "auto" and row_nonzeros(params) <= FULL_LP_NONZEROS)
    if full:
        params.check_memory(opts.max_memory)
        refuse_over(BYTES_PER_NONZERO * row_nonzeros(params), opts.max_memory, "max_memory",
                    "the sparse full LP of these budget groups needs")
        if log:
            log(f"budget groups on one-group shards: the sparse full LP ({row_nonzeros(params)} non-zeros at most)")
        table = solve_full_lp(params, prior, opts, table_form(params, prior), tol)
        table.info["gamma_form"] = params.gamma_form
        return table
    var = lp_variables(params)
    table = constraint_generation(
        params, prior, opts, what="budget groups on one-group shards",
        violations_fn=lambda g: flat_violations(violations(g, params)),
        row_fn=lambda key: constraint_row(params, key[0], var),
        certify_fn=lambda g: certify_weighted_shards(g, params, tol=tol, max_memory=opts.max_memory),
        method="weighted-shards-cutting-planes", solver_opts=solver_opts, log=log,
        form=table_form(params, prior))
    table.info["gamma_form"] = params.gamma_form
    return table


def all_rows(params: WeightedShardParams) -> np.ndarray:
    """Every row of every group at once, dense, over the form's LP variables (the full LP of
    :func:`darrm.solver.full_lp.solve_all_rows`: the tests' reference for constraint generation at
    small K; ``method="full"`` holds them sparsely, :mod:`darrm.models.weighted_shards.full_lp`)."""
    var = lp_variables(params)
    n = flat_violations(violations(np.zeros(params.gamma_shape), params)).size
    return np.array([constraint_row(params, i, var) for i in range(n)])

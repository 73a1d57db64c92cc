"""γ_opt for grouped members: the LP over the product of the groups' corner multisets.

The variables are γ(mid..K), the paper's form (γ reads the total vote count L); a configuration's
row is Lemma 3.4's folded row (:func:`darrm.privacy.condition.folded_rows`) of the pmf of
L = Σ_g L_g, the convolution of the groups' pmfs (:func:`darrm.models.groups.certificate.joint_pmf`).
In the per-group form (``params.gamma_form == "per-group"``, :mod:`darrm.models.groups.per_group`) the
variables are γ(l) on U = {l : Σ_g l_g ≥ mid} and the rows are
:func:`darrm.models.groups.per_group.joint_folded_rows`; everything below is the same
(:func:`table_form` maps LP points to tables).
Because the configurations are closed under the joint swap and reflection
(:mod:`darrm.models.groups.params`), the rows of output 1, D → D′ over every configuration are the whole
LP.  Two methods, with the contract of :func:`darrm.solver.gamma_opt.solve_gamma_opt`:

- "full": every configuration's row that can bind inside the box (:func:`darrm.solver.rows.possibly_binding`),
  one LP (cvxpy + HiGHS, as :mod:`darrm.solver.full_lp`); small products only.
- constraint generation: each round solves the restricted LP, finds the largest rigorous violation
  v̂ over every configuration and the most violated ones by the factorised sweep
  (:func:`darrm.models.groups.sweep.sweep_groups`: running minima group by group) at the separation point
  of :class:`darrm.solver.engine.Stabilizer` (in-out separation, Ben-Ameur & Neto 2007: a
  configuration violated between a feasible point and the LP point is violated at the LP point, so
  every cut cuts it off; "auto" separates at the LP point until its violation first rises), keeps the
  best repaired point as an upper bound, bounds the optimum from below by the Lagrangian of the
  restricted LP's duals (:func:`darrm.solver.restricted_lp.lagrangian_bound`, valid for any
  y ≥ 0 since the restricted feasible set contains the full one), and adds the rows of the most
  violated (configuration, output, direction) triples.

The returned table is certified by :func:`darrm.models.groups.certificate.certify_groups` (scaled toward
0 if needed) and labelled by its proven gap (:func:`darrm.solver.finalize.certified_gamma_opt`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import numpy as np

from ...prior import IIDPrior, Prior
from ...privacy.condition import folded_rows
from ...privacy.corner_pmfs import pmf_pairs
from ...privacy.corners import complements, corners
from ...solver.engine import Oracle, Stabilizer, constraint_generation
from ...solver.finalize import TableForm, certified_gamma_opt, total_form
from ...solver.full_lp import solve_all_rows
from ...solver.options import SolveOptions
from ...solver.restricted_lp import lagrangian_bound
from ...solver.rows import possibly_binding
from ...status import StopReason
from ...table import GammaTable
from .certificate import certify_groups, check_memory, iter_group_pmfs, joint_pmf
from .params import MAX_ROUNDS, GroupParams
from .per_group import joint_folded_rows, joint_from_upper, joint_objective, upper_of, variables
from .sweep import sweep_groups

#: Subtracted from every scaled LP cost: among (near-)optimal γ prefer the largest (as the other solvers).
TIE_BREAK = 1e-8

#: A (configuration, output, direction) whose rigorous violation bound exceeds this becomes a cut.
TOL_CP = 1e-13

#: Above this many configurations "auto" uses constraint generation instead of every row.
FULL_LP_LIMIT = 20_000


def _rows_of(a_parts: list[np.ndarray], ap_parts: list[np.ndarray], params: GroupParams) -> np.ndarray:
    """The folded rows (output 1, D → D′) of configurations given by each group's pmfs (B, K_g + 1):
    over γ(mid..K) of the convolved pmfs of L, or over the per-group variables
    (:func:`darrm.models.groups.per_group.joint_folded_rows`)."""
    if params.per_group:
        return joint_folded_rows(a_parts, ap_parts, params.exp_eps, params)
    idx = np.tile(np.arange(a_parts[0].shape[0])[:, None], (1, len(a_parts)))
    return folded_rows(joint_pmf(a_parts, idx), joint_pmf(ap_parts, idx), params.exp_eps)


def group_rows(params: GroupParams, *, prune: bool = True) -> np.ndarray:
    """Every configuration's folded row (output 1, D → D′), possibly-binding ones only when
    ``prune``, exact duplicates removed (several multisets can give one pmf pair)."""
    keep = []
    for a, ap in iter_group_pmfs(params):
        rows = _rows_of(a, ap, params)
        keep.append(rows[possibly_binding(rows, params.rhs)] if prune else rows)
    rows = np.concatenate(keep, axis=0)
    return np.unique(rows, axis=0) if rows.shape[0] else rows


def _config_rows(params: GroupParams, keys: list[tuple[int, tuple[int, ...]]]) -> np.ndarray:
    """The folded rows of (direction, concatenated count vectors) keys
    (:func:`darrm.models.groups.sweep.sweep_groups`' candidates): the configuration itself for direction
    0 (D → D′) and its swap for 1 (D′ → D), each a configuration of the product."""
    sizes = [g.corners for g in params.groups]
    split = np.cumsum([0] + sizes)
    swap = np.array([k[0] == 1 for k in keys])[:, None]
    a_parts, ap_parts = [], []
    for gi, gr in enumerate(params.groups):
        counts = np.array([k[1][split[gi]:split[gi + 1]] for k in keys], dtype=np.int64)
        a, ap = pmf_pairs(counts, corners(gr.eps, gr.Delta), complements(gr.eps, gr.Delta))
        a_parts.append(np.where(swap, ap, a))
        ap_parts.append(np.where(swap, a, ap))
    return _rows_of(a_parts, ap_parts, params)


def _separate(gamma: np.ndarray, params: GroupParams, seen: set,
              top: int) -> tuple[float, list[tuple[int, tuple[int, ...]]]]:
    """(largest v̂ over every configuration, output and direction; the ``top`` most violated keys
    (direction, counts) above :data:`TOL_CP` not in ``seen``), by the factorised sweep
    (:func:`darrm.models.groups.sweep.sweep_groups`)."""
    res = sweep_groups(gamma, params, top=top, threshold=TOL_CP, exclude=seen)
    return res.max_violation, [(j, counts) for _, j, counts in res.candidates]


def cuts_per_round(params: GroupParams, opts: SolveOptions) -> int:
    """The cuts added per round: ``opts.cuts_per_round`` for γ(L); for γ(l_1, …, l_G) that many per
    (K + 1)/2 LP variables (the γ(L) LP's size), i.e. times ⌈Π_g(K_g + 1) / (K + 1)⌉.

    The per-group LP has far more variables and needs proportionally more binding rows, while a
    round's cost is dominated by one sweep over every configuration, which finds many cuts as
    cheaply as few: at G = 3, K = 15 (5 + 5 + 5, 128 variables) 256 cuts per round took 49 rounds
    and 41.6 CPU s, 256 × 16 = 4096 took 15 rounds and 17.7 CPU s (benchmarks/RESULTS.md)."""
    n = int(opts.cuts_per_round)
    if not params.per_group:
        return n
    return n * math.ceil(variables(params) / ((params.K + 1) // 2))


def table_form(params: GroupParams, prior: Prior) -> TableForm:
    """The LP's variables and objective for the parameters' γ form: γ(mid..K) (the paper's), or
    γ(l) on U = {l : Σ_g l_g ≥ mid} (:mod:`darrm.models.groups.per_group`)."""
    if not params.per_group:
        return total_form(params.K, prior)
    c, A = joint_objective(params, prior)
    return TableForm(c, A, lambda x: joint_from_upper(x, params), lambda g: upper_of(g, params))


def choose_method(params: GroupParams, method: str) -> str:
    """``method``, with "auto" resolved: "full" up to :data:`FULL_LP_LIMIT` configurations."""
    if method != "auto":
        return method
    return "full" if params.configurations <= FULL_LP_LIMIT else "cutting-planes"


def solve_gamma_opt_groups(
    params: GroupParams,
    prior: Prior | None = None,
    *,
    options: SolveOptions | None = None,
    log: Callable[[str], None] | None = None,
) -> GammaTable:
    """Certified γ_opt(L) for grouped members with a proven optimality gap (module docstring).

    Args:
        params: the grouped members and the per-query target.
        prior: the objective's prior (default i.i.d. mean 0.75).
        options: :class:`~darrm.SolveOptions`: ``method`` ("full", "cutting-planes", "auto"),
            ``max_rounds`` (default :data:`~darrm.models.groups.params.MAX_ROUNDS`), ``cuts_per_round`` (per (K + 1)/2
            variables in the per-group form: :func:`cuts_per_round`), ``gap_tol``,
            ``accept_gap``, ``lp_backend``, ``max_memory`` (the configurations' violations must fit).
        log: called with one line per round.

    Returns:
        The certified :class:`~darrm.GammaTable`, status "optimal" iff its proven gap ≤ gap_tol.

    Raises:
        SolveError: the LP failed, or the gap was not proven and ``accept_gap`` is off.
        ParameterError: the product of configurations does not fit ``max_memory``.
    """
    opts = SolveOptions() if options is None else options
    check_memory(params, opts.max_memory)
    prior = IIDPrior() if prior is None else prior
    t0 = time.perf_counter()
    rhs = params.rhs
    form = table_form(params, prior)
    c = form.costs
    scale = float(np.max(np.abs(c))) or 1.0
    method = choose_method(params, opts.method)
    cuts = cuts_per_round(params, opts)
    if log:
        log(f"groups: {params.configurations} configurations, method {method}"
            + (f", {cuts} cuts per round" if method != "full" else ""))

    def cert(g: np.ndarray):
        return certify_groups(g, params, max_memory=opts.max_memory)

    if method == "full":
        rows = group_rows(params)
        x, y = solve_all_rows(rows, rhs, c / scale)
        lb = lagrangian_bound(c, rows, rhs, scale * y)
        info = {"method": "groups-full-lp", "stop": StopReason.FULL_LP.value, "rounds": 1,
                "gamma_form": params.gamma_form,
                "lp_lower_bound": lb, "lp_rows": int(rows.shape[0]), "configurations": params.configurations,
                "seconds_solve": time.perf_counter() - t0}
        return certified_gamma_opt(np.clip(x, 0.0, 1.0), params, prior, cert, opts, info, lp_backend="cvxpy",
                                   form=form)

    oracle = Oracle(separate=lambda g, seen, top: _separate(g, params, seen, top),
                    rows=lambda keys: _config_rows(params, keys),
                    violation=lambda g: _separate(g, params, set(), 0)[0])
    out = constraint_generation(params, form, oracle, max_rounds=opts.rounds(MAX_ROUNDS), cuts_per_round=cuts,
                                gap_tol=opts.gap_tol, lp_backend=opts.lp_backend,
                                stabilizer=Stabilizer(opts.stabilize), tie_break=TIE_BREAK, tol=TOL_CP, log=log)
    info = {"method": "groups-cutting-planes", "stop": out.stop.value, "rounds": out.rounds,
            "lp_lower_bound": out.lower_bound, "gamma_form": params.gamma_form,
            "lp_rows": int(out.lp.rows.shape[0]), "lp_backend": opts.lp_backend,
            "configurations": params.configurations, "seconds_solve": time.perf_counter() - t0}
    return certified_gamma_opt(out.x, params, prior, cert, opts, info, lp_backend=opts.lp_backend, form=form)

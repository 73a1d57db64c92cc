"""The two-phase pruned sweep (Δ > 0): every block's exact maximum first, then only the worst blocks visited.

A Δ > 0 sweep has ⌈(K−R+1)/2⌉ blocks (n_(hi,lo), n_(lo,hi)) per R (:func:`darrm.privacy.approx_blocks.sweep_R`).
:mod:`darrm.privacy.block_maxima` gives each block's largest bound v̂ exactly, bit for bit the maximum
the tuple-by-tuple visit finds, without visiting it.  The per-R pruned sweep still visits, in every
R, the blocks that report candidates (for a certificate, top = 1: one block per R, 5.7 % of the
tuples at K = 201).  Two phases decide globally instead:

1. **Maxima** (:func:`run_row_maxima`, one task per R on any executor): every block's exact maximum.
   The sweep's maximum is their maximum, so the verdict (v̂ ≤ threshold or not) and the reported
   maximum violation are final here, exact, and never a bound.
2. **Visits**: only the ``top`` blocks with the largest maxima above the reporting threshold
   (:func:`worst_blocks`) are visited tuple by tuple, for the candidates (the multisets that
   become cuts, or a certificate's worst multiset).

**Claim.** The two-phase result equals the exhaustive sweep's: the same maximum and coverage bit
for bit, the same reported violations (the candidates up to ties).

*Proof.* The maximum over a partition is the maximum of the parts' maxima, each exact
(:mod:`darrm.privacy.block_maxima`).  A block reports only multisets with v̂ > threshold, each ≤ its
maximum, and a block whose maximum exceeds the threshold reports that maximum itself (its worst
multiset).  So the ``top`` visited blocks hold ``top`` candidates whose smallest is ≥ the smallest
visited maximum ≥ the maximum of every unvisited block, which bounds every candidate an unvisited
block could give: the ``top`` largest reported values are the exhaustive sweep's (a tie can only
swap equal values), with one candidate per block or many.  ∎

A certificate (top = 1) thus visits one block in all (C(R+4, 4) tuples: 0.14 % at K = 201), and a
constraint-generation sweep at most ``cuts_per_round`` blocks.  Both phases run through
:func:`darrm.privacy.sweep_recipe.run_blocks`, so a lost worker's block is run again or the sweep
ends in :class:`darrm.errors.WorkerLostError`, in either phase.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..backends.executors import Executor, one_blas_thread
from .block_maxima import RowMaxima, row_maxima
from .sweep_recipe import SweepRecipe, run_blocks, tables_for
from .sweep_results import SweepResult, merge
from .sweep_tables import build_for


def run_row_maxima(recipe: SweepRecipe, R: int) -> tuple[int, RowMaxima]:
    """(R, :class:`~darrm.privacy.block_maxima.RowMaxima`) of one R: phase 1's task, run by any
    executor (module-level, so it pickles by reference; the tables come from this process's cache,
    :func:`darrm.privacy.sweep_recipe.tables_for`)."""
    tables = tables_for(recipe, build_for)
    with one_blas_thread():
        return R, row_maxima(tables, R, recipe.params.check)


def worst_blocks(rows: Iterable[RowMaxima], threshold: float, top: int) -> list[tuple[int, int, float]]:
    """(R, n_(hi,lo), maximum) of the ``top`` blocks with the largest maxima above ``threshold``,
    worst first (ties in the order of (R, n_(hi,lo)), so the choice is deterministic)."""
    out = [(r.R, int(c), float(m)) for r in rows for c, m in zip(r.blocks.tolist(), r.maxima.tolist(), strict=True)
           if m > threshold]
    out.sort(key=lambda t: (-t[2], t[0], t[1]))
    return out[: max(top, 0)]


def _items(blocks: Sequence[tuple[int, int, float]]) -> list[tuple[int, frozenset[int]]]:
    """The visits as the sweep's screening items (R, n_(hi,lo) values), biggest R first."""
    by_R: dict[int, set[int]] = {}
    for R, c, _ in blocks:
        by_R.setdefault(R, set()).add(c)
    return [(R, frozenset(by_R[R])) for R in sorted(by_R, reverse=True)]


def two_phase_sweep(
    recipe: SweepRecipe, executor: Executor, visit_executor: Executor,
    visit: Callable[[SweepRecipe, Any], tuple[Any, Any]], on_result: Callable[[Any], None] | None = None,
) -> SweepResult:
    """The sweep of ``recipe`` (Δ > 0) in two phases (module docstring): the exact maximum and
    coverage from every block's maximum, the candidates from the worst blocks only.

    Args:
        recipe: the sweep's recipe (``top``, ``threshold``, ``per_block`` as for the exhaustive sweep).
        executor: runs phase 1 (one task per R).
        visit_executor: runs the visits when they are a single task (a local sweep: its own process,
            which holds the tables; ``executor`` runs more).
        visit: the block function of the visits (:func:`darrm.privacy.sweep.run_block`), given the
            items (R, n_(hi,lo) values) of a screening pass.
        on_result: called with each phase-1 result (a progress bar: its ``checked``).

    Returns:
        The :class:`~darrm.privacy.sweep_results.SweepResult` of the exhaustive sweep (same maximum
        and coverage bit for bit, same reported violations).

    Raises:
        WorkerLostError: a block of either phase was lost even after the retries.
    """
    K, top = recipe.params.K, recipe.top
    rows = run_blocks(executor, recipe, list(range(K, -1, -1)), run_row_maxima, on_result)
    best = max(float(r.maxima.max()) for r in rows)
    checked = sum(r.checked for r in rows)
    items = _items(worst_blocks(rows, recipe.threshold, top))
    # the visits only report candidates: the per-R pruning would recompute maxima phase 1 has
    plain = dataclasses.replace(recipe, prune=False)
    found = run_blocks(visit_executor if len(items) <= 1 else executor, plain, items, visit) if items else []
    cands = merge(found, top)
    return SweepResult(best, cands.candidates, cands.violations, checked)

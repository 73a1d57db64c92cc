"""Line search for pure-DP constraint generation: one exhaustive sweep of a point x_a that also says
how far toward a second point x_b every privacy inequality allows (Δ = 0 members).

**Claim.**  Let g_j(γ) = P_a,j(γ) − e^{mε}·P_b,j(γ) − δ be the violation of inequality j (a multiset,
an output, a direction; Lemma 3.4, Eq. 1), x_a with g_j(x_a) ≤ 0 for every j, and x_b any table.
Then along x_λ = x_a + λ(x_b − x_a), λ ∈ [0, 1], every inequality holds for all λ ≤

    λ* = min(1, min over j with g_j(x_b) > 0 of  g_j(x_a) / (g_j(x_a) − g_j(x_b))),

and no larger λ keeps them all (the minimising j is violated just past λ*).

**Proof.**  Pr[A = 1] = Σ_l α_l·w_l with w_l = ½ + γ(l)(1{l ≥ mid} − ½) affine in γ and α not
depending on γ, so each g_j is affine in γ and g_j(x_λ) = (1 − λ)·g_j(x_a) + λ·g_j(x_b).  With
g_j(x_a) ≤ 0 this is ≤ 0 for every λ ∈ [0, 1] when g_j(x_b) ≤ 0, and exactly for λ ≤
g_j(x_a)/(g_j(x_a) − g_j(x_b)) when g_j(x_b) > 0.  The minimum over j is the largest common λ.  ∎

**What is rigorous and what is not.**  :func:`segment_c` computes, per block, the sweep's rigorous
bound v̂ at x_a exactly as :func:`darrm.privacy.pure_blocks.sweep_c` does (the same
:func:`darrm.privacy.pure_blocks.pure_block` and :func:`darrm.privacy.condition.pair_violation`, the
same mask): so :attr:`SegmentResult.max_violation` *is* the exhaustive sweep of x_a, bit for bit, and
certifies x_a (or its repair by scaling) on its own.  λ* is computed in plain float64 from the same
probabilities (g with e^{mε} itself, no rounding allowance): it is only a *proposal*.  The caller
(:func:`darrm.solver.cutting_planes.solve_cutting_planes`) steps a little short of it and certifies
the new point by the next exhaustive sweep (repairing by scaling if rounding put it a hair outside),
so no bound ever rests on λ*.

The cuts it reports are inequalities violated at x_b by more than ``threshold`` (rows of the full LP
that cut off x_b), at most one per (n_(hi,lo), n_(lo,hi)) pair and kind: those that block the segment
first (smallest λ_j: where the segment leaves the feasible region, in-out separation at λ* itself)
and, with ``deep``, those most violated at x_b (Kelley cuts).  Only output 1
is evaluated, as in the sweep: output 0 of a multiset is output 1 of its reflection, which is
visited too (γ symmetric).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..backends.executors import ProcessExecutor, SerialExecutor, one_blas_thread
from ..errors import ParameterError
from ..params import PrivacyParams
from .condition import Check, pair_violation
from .pure_blocks import pure_block
from .sweep_recipe import SweepRecipe, forget, run_blocks, tables_for, warm
from .sweep_results import _worst
from .sweep_tables import PureTables, build_pure_tables


@dataclass(frozen=True)
class SegmentResult:
    """:func:`segment_sweep`'s answer: the exhaustive sweep of x_a and the line search toward x_b.

    Attributes:
        max_violation: the rigorous largest bound v̂ at x_a over every multiset (a certificate of x_a
            when ≤ 0; as :attr:`darrm.privacy.sweep_results.SweepResult.max_violation`).
        step: λ* of the module docstring, in float64 (a proposal, never a certificate).
        violation_b: the largest float64 violation at x_b above the threshold (−inf if none).
        candidates: up to ``top`` multisets: the ``top − deep`` that block the segment first (smallest
            λ_j first), then the ``deep`` most violated at x_b not among them.
        steps: the λ_j of the blocking ones (the first ``len(steps)`` candidates).
        checked: multisets covered.
    """

    max_violation: float
    step: float
    violation_b: float
    candidates: np.ndarray
    steps: np.ndarray
    checked: int


@dataclass(frozen=True)
class SegmentBlockResult(SegmentResult):
    """One block (n_(hi,lo) = c) of :func:`segment_c`.

    Attributes:
        max_violation: the rigorous bound v̂ at x_a over the block (as :func:`~darrm.privacy.pure_blocks.sweep_c`).
        step: the block's λ* (1.0 when nothing in it is violated at x_b).
        violation_b: the largest float64 violation at x_b above the threshold, −inf if none (a report only).
        candidates: (n, 4) corner counts of the blocking inequalities (one per row d at most).
        steps: their λ_j.
        checked: multisets covered.
        deep: (n, 4) corner counts of the block's inequalities most violated at x_b (one per row d at most).
        deep_violations: their violations at x_b.
    """

    deep: np.ndarray = field(default_factory=lambda: np.zeros((0, 4), dtype=np.int64))
    deep_violations: np.ndarray = field(default_factory=lambda: np.zeros(0))


@dataclass(frozen=True)
class SegmentRecipe(SweepRecipe):
    """A :class:`~darrm.privacy.sweep_recipe.SweepRecipe` for x_a (``gamma``) with the second table
    x_b (``toward``); the checksum covers both, so a worker's cached tables are the pair's."""

    toward: Any = field(default=None)

    def __post_init__(self) -> None:
        super().__post_init__()
        t = np.array(self.toward, dtype=np.float64)
        t.flags.writeable = False
        object.__setattr__(self, "toward", t)
        import hashlib

        h = hashlib.sha256(self.checksum.encode())
        h.update(b"segment")
        h.update(t.tobytes())
        object.__setattr__(self, "checksum", h.hexdigest())


def build_segment(recipe: SweepRecipe) -> tuple[PureTables, PureTables]:
    """The tables of x_a and x_b of a :class:`SegmentRecipe` (:func:`darrm.privacy.sweep_tables.build_pure_tables`)."""
    assert isinstance(recipe, SegmentRecipe)
    return build_pure_tables(recipe.gamma, recipe.params), build_pure_tables(recipe.toward, recipe.params)


def segment_c(ta: PureTables, tb: PureTables, c: int, chk: Check, top: int, threshold: float) -> SegmentBlockResult:
    """Block n_(hi,lo) = c of :func:`segment_sweep` (every d = n_(lo,hi) ≤ c and s = n_(1,1)).

    v̂ at x_a exactly as :func:`darrm.privacy.pure_blocks.sweep_c`; for each multiset and direction with
    g_j(x_b) > ``threshold``, λ_j = max(0, −g_j(x_a))/(g_j(x_b) − g_j(x_a)) (module docstring; 0 where
    the float64 values put x_a on the wrong side), and per row d the entry with the smallest λ_j as a
    candidate.  ``violation_b`` is the largest g_j(x_b) above ``threshold`` (−inf if none)."""
    K = ta.K
    n, D = K - c + 1, min(c, K - c) + 1
    d = np.arange(D)
    pa, pb = pure_block(ta, c)
    viol = pair_violation(pa, pb, chk)
    mask = np.arange(n)[None, :] > (n - 1 - d)[:, None]
    viol[mask] = -np.inf
    checked = int(np.sum((n - d) * np.where(d < c, 2, 1)))
    qa, qb = pure_block(tb, c)
    e = chk.exp_eps
    # λ_j only where x_b violates (few entries): the rest of the block bounds nothing
    rows_l, cols_l, lam_l, gb_l = [], [], [], []
    vb = -np.inf
    for (a_in, b_in), (a_out, b_out) in (((pa, pb), (qa, qb)), ((pb, pa), (qb, qa))):
        gb = np.multiply(b_out, e)
        np.subtract(a_out, gb, out=gb)
        if not gb.max() > threshold:  # (the entries that are not multisets are finite: a safe skip)
            continue
        r, s = np.nonzero(gb > threshold)
        ok = s <= n - 1 - r  # multisets only (the other entries hold partial sums)
        r, s = r[ok], s[ok]
        if r.size:
            g_b = gb[r, s]
            g_a = a_in[r, s] - e * b_in[r, s]
            rise = g_b - g_a
            with np.errstate(divide="ignore", invalid="ignore"):
                lam_l.append(np.where(rise > 0.0, np.maximum(-g_a, 0.0) / rise, 0.0))
            rows_l.append(r)
            cols_l.append(s)
            gb_l.append(g_b)
            vb = max(vb, float(g_b.max()))
    step = 1.0
    cand = deep = np.zeros((0, 4), dtype=np.int64)
    steps = deep_v = np.zeros(0)

    def per_row(rows: np.ndarray, cols: np.ndarray, key: np.ndarray) -> tuple:
        # per row d the entry with the smallest key, then the ``top`` smallest of those
        order = np.lexsort((key, rows))
        first = np.ones(order.size, dtype=bool)
        first[1:] = rows[order][1:] != rows[order][:-1]
        pick = order[first]
        rows, cols, key = rows[pick], cols[pick], key[pick]
        if rows.size > top:
            sel = _worst(-key, top)
            rows, cols, key = rows[sel], cols[sel], key[sel]
        return np.stack([K - cols - c - rows, cols, np.full_like(cols, c), rows], axis=1).astype(np.int64), key

    if lam_l:
        rows, cols, lam = np.concatenate(rows_l), np.concatenate(cols_l), np.concatenate(lam_l)
        step = min(1.0, float(lam.min()))
        if top > 0:
            cand, steps = per_row(rows, cols, lam)
            deep, neg = per_row(rows, cols, -np.concatenate(gb_l))
            deep_v = -neg
    return SegmentBlockResult(float(viol.max()), step, vb, cand, steps, checked, deep, deep_v)


def run_segment_block(recipe: SweepRecipe, c: int) -> tuple[int, SegmentBlockResult]:
    """(c, :class:`SegmentBlockResult`), the function every executor runs (module-level: picklable)."""
    ta, tb = tables_for(recipe, build_segment)
    with one_blas_thread():
        return c, segment_c(ta, tb, c, recipe.params.check, recipe.top, recipe.threshold)


def segment_sweep(gamma_a: np.ndarray, gamma_b: np.ndarray, params: PrivacyParams, *, top: int = 0,
                  threshold: float = 0.0, executor: Any = None, deep: int = 0) -> SegmentResult:
    """The exhaustive sweep of ``gamma_a`` (full tables γ(0..K)) with the line search toward ``gamma_b``
    (module docstring), over every block n_(hi,lo) = 0..K on ``executor`` (an
    :class:`~darrm.backends.executors.Executor` or a ``concurrent.futures.Executor``; None: this
    process).  Blocks lost with a worker are run again (:func:`~darrm.privacy.sweep_recipe.run_blocks`).
    Of the ``top`` candidates, ``deep`` are the multisets most violated at x_b (one per
    (n_(hi,lo), n_(lo,hi)) pair, as a plain sweep's cuts at x_b), the rest those that block the segment first.

    Raises:
        ParameterError: ("params") Δ > 0: the line search is for pure-DP members only.
    """
    if params.member_delta != 0:
        raise ParameterError("params", "the segment sweep is for pure-DP members (member_delta = 0)")
    from ..backends.adapters import as_executor
    from .sweep import _block_cost

    K = params.K
    ex = as_executor(executor) or SerialExecutor()
    recipe = SegmentRecipe(np.asarray(gamma_a, dtype=np.float64), params, int(top), float(threshold), 1, False,
                           toward=np.asarray(gamma_b, dtype=np.float64))
    if isinstance(ex, (SerialExecutor, ProcessExecutor)):
        warm(recipe, build_segment(recipe))
    try:
        with one_blas_thread():
            items = sorted(range(K + 1), key=lambda c: -_block_cost(K, c, False))
            results = run_blocks(ex, recipe, items, run_segment_block)
    finally:
        forget(recipe)
    blocking = top - min(max(deep, 0), top)
    cands = [r.candidates for r in results if r.candidates.shape[0]]
    if cands:
        cand = np.concatenate(cands)
        steps = np.concatenate([r.steps for r in results if r.candidates.shape[0]])
        order = np.argsort(steps, kind="stable")[: max(blocking, 0)]
        cand, steps = cand[order], steps[order]
    else:
        cand, steps = np.zeros((0, 4), dtype=np.int64), np.zeros(0)
    if top - blocking > 0:
        deeps = [r.deep for r in results if r.deep.shape[0]]
        if deeps:
            dc = np.concatenate(deeps)
            dv = np.concatenate([r.deep_violations for r in results if r.deep.shape[0]])
            dc = dc[np.argsort(-dv, kind="stable")]
            if cand.shape[0]:
                seen = {tuple(r) for r in cand.tolist()}
                dc = dc[[tuple(r) not in seen for r in dc.tolist()]]
            cand = np.concatenate([cand, dc[: top - blocking]])
    return SegmentResult(max(r.max_violation for r in results), min(r.step for r in results),
                         max(r.violation_b for r in results), cand, steps, sum(r.checked for r in results))

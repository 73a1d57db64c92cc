"""Exact, memory-bounded sweep of the DP inequalities over ALL corner multisets.

The output probability Pr[A(D)=1] = α·w with w_l = γ(l)·1{l≥mid} + ½(1−γ(l)) depends on a
corner multiset only through the vote-count pmf α, and α factorises over the corners
(the generating function of a Poisson binomial is ∏_i (1 − p_i + p_i z)).  With the
corner order of :func:`darrm.privacy.corners.corners` — (0,0), (1,1), (0,Δ), (Δ,0), (1−Δ,1),
(1,1−Δ), (hi,lo), (lo,hi) with hi = (e^ε+Δ)/(e^ε+1), lo = (1−Δ)/(e^ε+1) — and counts n_0..n_7:

    α(z)  = z^{n_1+n_5} · (1−Δ+Δz)^{n_3} · (Δ+(1−Δ)z)^{n_4} · (1−hi+hi·z)^{n_6} · (1−lo+lo·z)^{n_7}
    α′(z) = z^{n_1+n_4} · (1−Δ+Δz)^{n_2} · (Δ+(1−Δ)z)^{n_5} · (1−hi+hi·z)^{n_7} · (1−lo+lo·z)^{n_6}

(corners with p ∈ {0, 1} are factors 1 and z).  So both probabilities are values of ONE
table  V(s, a, b, c, d) = Σ_l w_l·[z^l] z^s·Bin(a,Δ)·Bin(b,1−Δ)·Bin(c,hi)·Bin(d,lo)
over 5-tuples with s+a+b+c+d ≤ K (C(K+5,5) entries instead of C(K+7,7) multisets):

    V(s,a,b,c,d) = g_{ab}ᵀ · Hank_s(w) · h_{cd},   g_{ab} = Bin(a,Δ)⊛Bin(b,1−Δ),  h_{cd} = Bin(c,hi)⊛Bin(d,lo),

computed per block of equal n_6 + n_7 as one matrix product from tables U (C(K+4,4) floats,
:class:`SweepTables`).  Pr[A(D)=1] = V(n_1+n_5, n_3, n_4, n_6, n_7) does not depend on n_2, the
count of (0, Δ), and Pr[A(D′)=1] = V(n_1+n_4, n_2, n_5, n_7, n_6) depends on neither n_3 nor n_0;
so :func:`sweep_R` takes running minima and maxima of the second over n_2 and visits the
C(K+6, 6) tuples (n_1, n_3, n_4, n_5, n_6, n_7) instead of the C(K+7, 7) multisets, with exactly
the same largest bound (rounding is monotone; K = 101: 1.6 G tuples instead of 27.9 G multisets).
For Δ = 0 only (0,0), (1,1), (hi,lo), (lo,hi) exist (a = b = 0): :func:`pure_block` computes
V(s, c, d) and V(s, d, c) for one c and every d, s from two (K+1)² tables with two triangular
matrix products and O(K²) memory, which reaches K in the thousands.

Every value is a sum of products of non-negative numbers (binomial pmfs by the recurrence of
:func:`darrm.numerics.binomial.binomial_rows`, weights in [0, 1]), so there is no cancellation
before the final difference and each probability is within the relative bound ρ(K) of
:mod:`darrm.privacy.condition`; the comparison uses that module's rigorous test.  Only output 1 is
evaluated: for a symmetric γ, Pr[A = 0] at a multiset equals Pr[A = 1] at its reflection
(p → 1 − p maps the corner set onto itself, :func:`darrm.privacy.corners.complements`), which the sweep
visits too, so both outputs are covered without ever forming 1 − Pr[A = 1].  Tests compare the
sweep with the direct per-multiset computation of :func:`darrm.privacy.certify.certify_reference`,
which evaluates both outputs separately.

The sweep is split by job: the shared γ tables (:mod:`darrm.privacy.sweep_tables`), the Δ > 0
blocks (:mod:`darrm.privacy.approx_blocks`), the Δ = 0 blocks (:mod:`darrm.privacy.pure_blocks`),
the blocks' results and their merge (:mod:`darrm.privacy.sweep_results`); this module is the
driver: which blocks, on which executor, within which memory.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..backends.devices import TorchDevice
from ..backends.executors import Executor, ProcessExecutor, SerialExecutor, available_cores, one_blas_thread
from ..errors import ParameterError
from ..logs import get_logger
from ..params import PrivacyParams
from .approx_blocks import MIN_GATHER, sweep_R
from .pure_blocks import sweep_c
from .sweep_recipe import SweepRecipe, forget, run_blocks, tables_for, warm
from .sweep_results import SweepResult, merge
from .sweep_tables import PureTables, SweepTables, build_for, build_pure_tables, build_tables
from .two_phase import two_phase_sweep

log = get_logger("sweep")

def sweep(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    top: int = 0,
    threshold: float = 0.0,
    executor: Executor | TorchDevice | None = None,
    progress: bool | None = None,
    diverse: bool = True,
    blocks: Iterable | None = None,
    prune: bool = True,
) -> SweepResult:
    """Largest violation of Pr[A(D)=o] ≤ e^{mε}Pr[A(D′)=o] + δ over every corner multiset,
    both outputs and both directions, as the rigorous bound v̂ of :mod:`darrm.privacy.condition`
    (v̂ ≤ 0 proves the exact violation ≤ 0); with ``top`` > 0 also the (up to) ``top`` multisets
    violating by more than ``threshold``, worst first (for constraint generation).

    ``diverse`` (Δ > 0): take at most one candidate per (n_(hi,lo), n_(lo,hi)) block, so the
    cuts spread over the corner space (measured: 18 → 7 rounds at K = 41); the maximum is
    exact either way.

    ``blocks``: visit only these blocks — (n_(hi,lo), n_(lo,hi)) pairs for Δ > 0 (oriented with
    the first ≥ the second), n_(hi,lo) values for Δ = 0 — a *screening* pass for constraint
    generation (its maximum is over those blocks only: never a certificate).

    ``prune`` (Δ > 0): take each block's exact maximum from
    :mod:`darrm.privacy.block_maxima` and visit tuple by tuple only the blocks that report
    candidates; the maximum is the same bit for bit, the candidates the same up to ties.  Over
    every block this runs in two phases (:mod:`darrm.privacy.two_phase`): all maxima, then only the
    worst blocks (a certificate visits one block in all).  ``prune=False`` visits every tuple: the
    independent reference the tests compare the pruned sweep with.

    ``executor`` receives a :class:`~darrm.privacy.sweep_recipe.SweepRecipe` (γ and the
    parameters), never the tables: each worker builds them once per γ
    (:mod:`darrm.privacy.sweep_recipe`); this process and forked local workers use the tables
    built here.  Every block is accounted for: a block lost with a worker is run again, else
    :class:`darrm.errors.WorkerLostError` is raised (:func:`~darrm.privacy.sweep_recipe.run_blocks`)."""
    from ..backends.adapters import as_executor

    g = np.asarray(gamma, dtype=np.float64)
    executor = as_executor(executor)
    if isinstance(executor, TorchDevice):
        return _sweep_on_device(g, params, executor, top=top, threshold=threshold, diverse=diverse)
    K = params.K
    if executor is None:
        ex = SerialExecutor() if blocks is not None else default_executor(params)
    else:
        ex = executor
    total = math.comb(K + (7 if params.member_delta > 0 else 3), K)
    bar = tqdm(total=total, desc="sweep", unit="multiset", unit_scale=True, leave=False,
               disable=(not progress) if progress is not None else None)
    recipe = SweepRecipe(g, params, int(top), float(threshold), 1 if diverse else None, bool(prune))
    local = isinstance(ex, (SerialExecutor, ProcessExecutor))
    # Δ = 0: the γ tables are two (K+1)³ products, built before BLAS is limited to one thread;
    # only for this process and forked workers (a cluster's workers build their own)
    if local and params.member_delta == 0:
        warm(recipe, build_pure_tables(g, params))
    try:
        return _run_sweep(recipe, ex, local, blocks, bar)
    finally:
        forget(recipe)


def _run_sweep(recipe: SweepRecipe, ex: Executor, local: bool, blocks: Iterable | None, bar: Any) -> SweepResult:
    """:func:`sweep`'s blocks: the order (biggest first), the screening subset, the run."""
    params, g, top = recipe.params, recipe.gamma, recipe.top
    K = params.K
    with bar, one_blas_thread():
        items: list
        if params.member_delta > 0:
            if local:
                warm(recipe, build_tables(g, params))
            if recipe.prune and blocks is None:
                return two_phase_sweep(recipe, ex, SerialExecutor() if local else ex, run_block,
                                       on_result=lambda r: bar.update(r.checked))
            items = sorted(range(K + 1), key=lambda R: -_block_cost(K, R, True))
            if blocks is not None:
                by_R: dict[int, set[int]] = {}
                for c, d in blocks:
                    by_R.setdefault(K - int(c) - int(d), set()).add(int(c))
                items = [(R, frozenset(by_R[R])) for R in items if R in by_R]
        else:
            items = sorted(range(K + 1), key=lambda c: -_block_cost(K, c, False))
            if blocks is not None:
                wanted = {int(c) for c in blocks}
                items = [c for c in items if c in wanted]
        # biggest blocks first: balanced workers
        results = run_blocks(ex, recipe, items, run_block, on_result=lambda r: bar.update(r.checked))
    return merge(results, top)


def _block_cost(K: int, i: int, delta_positive: bool) -> int:
    """Relative cost of one block: Δ > 0, R = i: ⌈(K−R+1)/2⌉ blocks of C(R+4, 4) tuples;
    Δ = 0, c = i: two triangular products of ~D²·n/2 multiply-adds (D = min(c, K−c)+1, n = K−c+1)."""
    if delta_positive:
        return (K - i + 2) // 2 * math.comb(i + 4, 4)
    return (min(i, K - i) + 1) ** 2 * (K - i + 1)


#: below this much work (in units of :func:`_block_cost`, summed) a sweep runs in this process:
#: starting worker processes costs more than it saves (measured: a K = 41, Δ > 0 sweep takes
#: ~0.3 s serially)
PARALLEL_MIN_WORK = 10**8


def default_executor(params: PrivacyParams, max_memory: float | None = None) -> Executor:
    """The executor a sweep uses when none is given: local processes, one per available core
    (fewer if :func:`sweep_memory` says more would not fit ``max_memory``, default: the memory
    available now), when the sweep is big enough to pay for them, else this process.

    Raises:
        ParameterError: not even one process fits (the message gives the estimate)."""
    budget = memory_budget(max_memory)
    need1 = sweep_memory(params, 1)
    if budget is not None and need1 > budget:
        name = "max_memory" if max_memory is not None else "K"
        raise ParameterError(name, f"an exhaustive sweep at K={params.K} needs about {need1 / 2**30:.2f} GiB, more "
                                   f"than the {budget / 2**30:.2f} GiB {'allowed' if max_memory else 'available'}")
    n = available_cores()
    if budget is not None:
        while n > 1 and sweep_memory(params, n) > budget:
            n -= 1
    return ProcessExecutor(n) if (n > 1 and sweep_work(params) >= PARALLEL_MIN_WORK) else SerialExecutor()


def sweep_executor(params: PrivacyParams, executor: Executor | TorchDevice | None,
                   max_memory: float | None) -> Executor | TorchDevice:
    """The executor of a solve's or a certificate's sweeps, after the memory check, before any work:
    as many local processes as fit (:func:`default_executor`, which refuses when not even one fits
    ``max_memory``), or the local executor given (serial or processes), checked the same way.  A
    Dask cluster or a GPU (:class:`TorchDevice`) runs the blocks in its own memory: used as given."""
    from ..backends.adapters import JoblibExecutor

    local = (SerialExecutor, ProcessExecutor, JoblibExecutor)  # joblib:N: local (loky) workers, same rule
    if executor is not None and not isinstance(executor, local):
        return executor
    auto = default_executor(params, max_memory)
    chosen = auto if executor is None else executor
    if isinstance(chosen, (ProcessExecutor, JoblibExecutor)) and chosen is not auto:
        kind = "joblib" if isinstance(chosen, JoblibExecutor) else "local"
        budget = memory_budget(max_memory)
        if budget is not None and sweep_memory(params, chosen.workers) > budget:
            fit, too_many = 1, chosen.workers  # bisection: the estimate grows with the workers
            while too_many - fit > 1:
                mid = (fit + too_many) // 2
                fit, too_many = (mid, too_many) if sweep_memory(params, mid) <= budget else (fit, mid)
            need = sweep_memory(params, chosen.workers) / 2**30
            raise ParameterError("executor", f"{kind}:{chosen.workers} needs about {need:.2f} GiB for the sweeps at "
                                             f"K={params.K}, more than the {budget / 2**30:.2f} GiB "
                                             f"{'allowed (max_memory)' if max_memory is not None else 'available'}; "
                                             f"at most {kind}:{fit} fits")
    workers = int(getattr(chosen, "workers", 1))
    log.debug("sweeps at K=%d: %d worker(s), about %.0f MiB peak (estimate)",
              params.K, workers, sweep_memory(params, workers) / 2**20)
    return chosen


def memory_budget(max_memory: float | None) -> float | None:
    """``max_memory`` (bytes) if given, else the memory available now (None: unknown)."""
    from ..backends import resources

    avail = resources.available_memory()
    if max_memory is None:
        return None if avail is None else float(avail)
    return float(max_memory)


#: resident memory of one Python process with numpy and darrm loaded (measured ~110-150 MiB)
PROCESS_BASE_BYTES = 160 * 2**20


def sweep_memory(params: PrivacyParams, workers: int = 1) -> int:
    """Estimated peak resident memory (bytes) of one exhaustive sweep: the γ tables shared by
    every worker plus, per worker, a Python process and its largest block's arrays (:func:`sweep_R`:
    the V rows, the cubes and buffers, the cached cells and gathers; :func:`pure_block`: a few
    D×n arrays), with 25 % to spare.  Measured peak RSS (serial): K = 61: 140 MiB, 81: 216 MiB,
    101: 356 MiB; this gives 239, 300 and 416 MiB."""
    K, f = params.K, 8
    if params.member_delta > 0:
        shared = f * (math.comb(K + 4, 4) + 2 * math.comb(K + 2, 2) * (K + 1))
        per = 0
        for R in range(K + 1):
            S, T = R + 1, math.comb(R + 3, 3)
            per = max(per, f * (2 * (K - R + 1) * T + 4 * S**3 + 8 * T + 5 * math.comb(S + 2, 3)
                                + 2 * math.comb(R + 4, 4) + 8 * MIN_GATHER))
    else:
        shared = f * 5 * (K + 1) ** 2
        per = f * 8 * ((K + 1) // 2 + 1) * (K + 1)
    return int(1.25 * (shared + workers * (PROCESS_BASE_BYTES + per)))


def sweep_work(params: PrivacyParams) -> int:
    """The size of one exhaustive sweep in units of :func:`_block_cost` (K = 101, Δ > 0: 9.3e8)."""
    dp = params.member_delta > 0
    return sum(_block_cost(params.K, i, dp) for i in range(params.K + 1))


def _sweep_on_device(
    gamma: np.ndarray, params: PrivacyParams, dev: TorchDevice, *, top: int, threshold: float, diverse: bool
) -> SweepResult:
    """:func:`sweep` with the tables on a torch device: the same block functions
    (:func:`sweep_R`, :func:`sweep_c`, memory-bounded chunks included) with ``xp`` = torch."""
    K, chk = params.K, params.check
    per_block = 1 if diverse else None
    if params.member_delta > 0:
        T = build_tables(gamma, params)
        Tt = SweepTables(K, tuple(dev.put(u) for u in T.U), dev.put(np.array(T.H)), T.lut)
        results = [sweep_R(Tt, R, chk, top, threshold, per_block, xp=dev.xp) for R in range(K, -1, -1)]
    else:
        P = build_pure_tables(gamma, params)
        Pt = PureTables(K, *(dev.put(a) for a in (P.Xhi, P.Xlo, P.Bhi, P.Blo)))
        results = [sweep_c(Pt, c, chk, top, threshold, per_block, xp=dev.xp) for c in range(K + 1)]
    return merge(results, top)


def run_block(recipe: SweepRecipe, item: Any) -> tuple[Any, Any]:
    """(item, :class:`SweepBlockResult`) of one block, the function every executor runs: Δ > 0,
    ``item`` is R (or (R, n_(hi,lo) values) for a screening pass); Δ = 0, it is n_(hi,lo) = c.  The
    tables come from this process's cache (:func:`darrm.privacy.sweep_recipe.tables_for`).
    Module-level, so any executor can pickle it by reference."""
    tables = tables_for(recipe, build_for)
    chk = recipe.params.check
    with one_blas_thread():
        if recipe.delta_positive:
            R, only = item if isinstance(item, tuple) else (item, None)
            res = sweep_R(tables, R, chk, recipe.top, recipe.threshold, recipe.per_block, only=only,
                          prune=recipe.prune)
        else:
            res = sweep_c(tables, item, chk, recipe.top, recipe.threshold, recipe.per_block)
    return item, res

"""What an executor ships to run one block of an exhaustive sweep: a *recipe*, never the tables.

A sweep's blocks share read-only tables (:class:`darrm.privacy.sweep_tables.SweepTables`: C(K+4, 4)
floats, 545 MiB at K = 201; :class:`darrm.privacy.sweep_tables.PureTables` for Δ = 0).  Sending them to
every task of a cluster costs more than the blocks themselves, so a task carries only a
:class:`SweepRecipe` — γ (K + 1 floats), the parameters and the reporting options, a few kB —
and each worker builds the tables once and keeps them in a small per-process cache keyed by the
recipe's :attr:`SweepRecipe.checksum` (SHA-256 of γ's float64 bytes and the numbers the tables
depend on: K, ε, Δ).  A forked local process inherits the cache the parent filled before the fork,
so it builds nothing.

Claim: a block computed from a recipe is bit for bit the block computed from the parent's tables.
Proof: the tables are a deterministic function of (γ, K, ε, Δ) computed by the same code
(:func:`darrm.privacy.sweep_tables.build_tables`, :func:`darrm.privacy.sweep_tables.build_pure_tables`) under
the same one-thread BLAS (:func:`darrm.backends.executors.one_blas_thread`), and the checksum
identifies those inputs exactly (γ by its bytes, the floats by ``repr``, which round-trips).

:func:`run_blocks` drives any executor over the blocks and enforces **completeness**: every
block's result is tagged with its block, duplicates (a retried block that had finished after
all) are dropped, and a block lost with its worker (a killed process: ``BrokenExecutor``,
loky's ``TerminatedWorkerError``, Dask's ``KilledWorker`` or a future the scheduler
forgot with its dead worker, ``FutureCancelledError``) is run again, up to
:data:`RETRIES` times; a sweep that still misses a block raises :class:`darrm.errors.WorkerLostError`.
So a lost worker ends in a retried block or a clean error, never in a maximum over fewer blocks.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import WorkerLostError
from ..logs import get_logger
from ..params import PrivacyParams

log = get_logger("sweep")

#: tables kept per process (one γ per sweep: a solve's next round replaces the last one; at
#: K = 201 one set of Δ > 0 tables is 545 MiB)
CACHE_TABLES = 1
#: how many times :func:`run_blocks` runs the blocks a lost worker took with it
RETRIES = 2

_cache: OrderedDict[str, Any] = OrderedDict()
_cache_lock = threading.Lock()
_build_locks: dict[str, threading.Lock] = {}


@dataclass(frozen=True)
class SweepRecipe:
    """Everything a worker needs to run blocks of one sweep (a few kB on the wire).

    Attributes:
        gamma: the full table γ(0..K), float64, read-only.
        params: the privacy parameters (K, m, ε, Δ, δ).
        top: candidates to report (constraint generation), 0 for a bare maximum.
        threshold: report only multisets violating by more than this.
        per_block: at most this many candidates per (n_(hi,lo), n_(lo,hi)) block (None: no limit).
        prune: Δ > 0: skip the tuples of blocks whose exact maximum says they report nothing
            (:mod:`darrm.privacy.block_maxima`).
    """

    gamma: np.ndarray
    params: PrivacyParams
    top: int = 0
    threshold: float = 0.0
    per_block: int | None = None
    prune: bool = False
    checksum: str = field(init=False, compare=False)

    def __post_init__(self) -> None:
        g = np.array(self.gamma, dtype=np.float64)
        g.flags.writeable = False
        object.__setattr__(self, "gamma", g)
        p = self.params
        h = hashlib.sha256(g.tobytes())
        h.update(repr((int(p.K), float(p.eps), float(p.member_delta))).encode())
        object.__setattr__(self, "checksum", h.hexdigest())

    @property
    def delta_positive(self) -> bool:
        return self.params.member_delta > 0


def tables_for(recipe: SweepRecipe, build: Callable[[SweepRecipe], Any]) -> Any:
    """The recipe's tables, ``build(recipe)`` in this process at most once per checksum
    (thread-safe: the threads of one Dask worker share one build).  The builder is the sweep's
    (:func:`darrm.privacy.sweep.build_for`): this module only caches, so it imports no sweep code."""
    key = recipe.checksum
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
            return hit
        lock = _build_locks.setdefault(key, threading.Lock())
    with lock:
        with _cache_lock:
            hit = _cache.get(key)
        if hit is None:
            hit = build(recipe)
            with _cache_lock:
                _cache[key] = hit
                while len(_cache) > CACHE_TABLES:
                    _cache.popitem(last=False)
                _build_locks.pop(key, None)
        return hit


def warm(recipe: SweepRecipe, tables: Any) -> None:
    """Put tables the caller already built into this process's cache (before forking workers)."""
    with _cache_lock:
        _cache[recipe.checksum] = tables
        while len(_cache) > CACHE_TABLES:
            _cache.popitem(last=False)


def forget(recipe: SweepRecipe) -> None:
    """Drop the recipe's tables from this process's cache (the parent, once its sweep is done)."""
    with _cache_lock:
        _cache.pop(recipe.checksum, None)


def clear_cache() -> None:
    """Drop this process's cached tables."""
    with _cache_lock:
        _cache.clear()


def worker_lost_errors() -> tuple[type[BaseException], ...]:
    """The exception types that mean "a worker died with its blocks", for the pool libraries
    already imported (an executor of joblib or Dask has imported its library; a plain certificate
    imports neither)."""
    from concurrent.futures import BrokenExecutor

    kinds: list[type[BaseException]] = [BrokenExecutor, EOFError, ConnectionError]
    loky = sys.modules.get("joblib.externals.loky.process_executor")
    if loky is not None:
        kinds.append(loky.TerminatedWorkerError)
    dist = sys.modules.get("distributed")
    if dist is not None:
        kinds.append(dist.KilledWorker)
        # the scheduler forgets the tasks of a worker that died while their results were being
        # gathered: the futures end "cancelled for reason: already forgotten" (seen under load)
        cancelled = getattr(sys.modules.get("distributed.client"), "FutureCancelledError", None)
        if cancelled is not None:
            kinds.append(cancelled)
    return tuple(kinds)


def run_blocks(executor: Any, recipe: SweepRecipe, items: Sequence[Hashable],
               fn: Callable[[SweepRecipe, Any], tuple[Any, Any]],
               on_result: Callable[[Any], None] | None = None,
               retries: int = RETRIES) -> list[Any]:
    """Every block's result, exactly once, from ``executor.run(fn, recipe, items)``.

    Args:
        executor: anything with ``run(fn, shared, items)`` yielding ``fn(shared, item)`` in any order.
        recipe: the sweep's recipe (``shared``).
        items: the blocks (hashable, distinct).
        on_result: called with each block's result as it arrives (a progress bar).
        fn: the block function, returning (item, result): :func:`darrm.privacy.sweep.run_block`
            (tests wrap it to kill workers).
        retries: how many times the blocks of lost workers are run again.

    Returns:
        The results, one per item.

    Raises:
        WorkerLostError: blocks still missing after ``retries`` further runs (the message names
            how many and why); no partial maximum is ever returned.
    """
    pending: dict[Hashable, Any] = {it: it for it in items}
    done: dict[Hashable, Any] = {}
    why = "the executor returned without them"
    for attempt in range(retries + 1):
        if attempt:
            log.warning("sweep: %d block(s) lost (%s); running them again (%d of %d)",
                        len(pending), why, attempt, retries)
        try:
            for item, res in executor.run(fn, recipe, list(pending.values())):
                if item in pending:
                    del pending[item]
                    done[item] = res
                    if on_result is not None:
                        on_result(res)
        except Exception as exc:  # only a lost worker is retried; anything else propagates
            if not isinstance(exc, worker_lost_errors()):
                raise
            why = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else 'a worker died'}"
        if not pending:
            return [done[it] for it in items]
    raise WorkerLostError(f"the sweep lost {len(pending)} of {len(items)} block(s) even after {retries} "
                          f"retries ({why}); no verdict is given for an incomplete sweep")


"""Executors over other libraries' worker pools: joblib (any backend) and ``concurrent.futures``.

Both implement the :class:`~darrm.backends.executors.Executor` protocol: ``run(fn, shared, items)``
yields ``fn(shared, item)`` for every item, in any order.  The sweeps pass a *recipe* as
``shared`` (:mod:`darrm.privacy.sweep_recipe`: γ and the parameters, a few kB), so it may be
sent with every task; the workers build and cache the tables themselves.  Neither adapter retries
anything: a task lost with its worker surfaces as the pool's own exception, and the sweep's
:func:`~darrm.privacy.sweep_recipe.run_blocks` runs the missing blocks again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor as FuturesPool
from concurrent.futures import as_completed
from typing import Any

from ..errors import ParameterTypeError, require
from ..validation import count


class JoblibExecutor:
    """Runs the items through ``joblib.Parallel`` with whatever backend is active: loky (the
    default: local processes), or Dask, Ray or Spark inside ``joblib.parallel_config(backend=...)``
    (``pip install joblib``; the cluster's own joblib backend package for the others).

    Args:
        n_jobs: workers (None: the active ``parallel_config``'s, which is 1 outside one; -1: every core).
    """

    def __init__(self, n_jobs: int | None = None):
        require("joblib", "joblib", "the joblib executor")
        if n_jobs is not None and n_jobs != -1:
            count("n_jobs", n_jobs)
        self.n_jobs = n_jobs

    @property
    def workers(self) -> int:
        from joblib import effective_n_jobs

        return int(effective_n_jobs(self.n_jobs))

    def run(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> Iterator[Any]:
        from joblib import Parallel, delayed

        par = Parallel(n_jobs=self.n_jobs, return_as="generator_unordered")
        yield from par(delayed(fn)(shared, it) for it in items)


class FuturesExecutor:
    """Runs the items on any ``concurrent.futures.Executor``: a ``ProcessPoolExecutor``, Dask's
    ``client.get_executor()``, ``mpi4py.futures.MPIPoolExecutor``, Ray's pool.  The pool is the
    caller's: it is neither started nor shut down here.

    Args:
        pool: the ``concurrent.futures.Executor`` to submit to.
    """

    def __init__(self, pool: FuturesPool):
        if not callable(getattr(pool, "submit", None)):
            raise ParameterTypeError("executor", f"must be a concurrent.futures.Executor (with submit), "
                                                 f"got {type(pool).__name__}")
        self.pool = pool

    def run(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> Iterator[Any]:
        futures = [self.pool.submit(fn, shared, it) for it in items]
        try:
            for f in as_completed(futures):
                yield f.result()
        finally:
            for f in futures:
                f.cancel()


def as_executor(executor: Any) -> Any:
    """``executor`` itself when it has a ``run`` method (an :class:`~darrm.backends.executors.Executor`
    or a :class:`~darrm.backends.devices.TorchDevice`), a :class:`FuturesExecutor` over it when it
    is a ``concurrent.futures.Executor``, None for None."""
    if executor is None or callable(getattr(executor, "run", None)):
        return executor
    if isinstance(executor, FuturesPool):
        return FuturesExecutor(executor)
    return executor

"""Executors for embarrassingly parallel sweeps: serial, local processes, or Dask.

An executor runs ``fn(shared, item)`` for every item and yields the results in any
order.  ``shared`` is a large read-only object (the sweep table) sent to each worker
once: inherited by forked processes, broadcast with ``Client.scatter`` on Dask.
"""

from __future__ import annotations

import multiprocessing as mp
import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol

from ..errors import ParameterError, require
from .devices import TorchDevice


class Executor(Protocol):
    def run(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> Iterator[Any]: ...


class SerialExecutor:
    """Runs every item in this process (the default; no start-up cost)."""

    def run(self, fn, shared, items):
        for it in items:
            yield fn(shared, it)


_SHARED: Any = None


def _init(shared: Any) -> None:
    global _SHARED
    _SHARED = shared


def _call(fn: Callable, item: Any) -> Any:
    return fn(_SHARED, item)


class ProcessExecutor:
    """Local worker processes (fork start method on POSIX, so ``shared`` is not copied)."""

    def __init__(self, workers: int | None = None):
        n = os.cpu_count() or 1 if workers is None else int(workers)
        if n < 1:
            raise ParameterError("workers", f"must be >= 1, got {workers}")
        self.workers = n

    def run(self, fn, shared, items):
        method = "fork" if "fork" in mp.get_all_start_methods() else None
        ctx = mp.get_context(method)
        with ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init, initargs=(shared,)) as pool:
            futures = [pool.submit(_call, fn, it) for it in items]
            for f in as_completed(futures):
                yield f.result()


class DaskExecutor:
    """Runs the items on a Dask distributed cluster (``pip install 'darrm[distributed]'``).

    Args:
        client: a ``distributed.Client``, or a scheduler address such as "tcp://host:8786".
    """

    def __init__(self, client: Any):
        Client = require("distributed", "distributed", "the Dask executor").Client
        self.client = client if isinstance(client, Client) else Client(client)

    def run(self, fn, shared, items):
        from distributed import as_completed as das_completed

        fut_shared = self.client.scatter(shared, broadcast=True)
        futures = self.client.map(fn, [fut_shared] * len(items), list(items), pure=False)
        for f in das_completed(futures):
            yield f.result()


def make_executor(spec: str | None) -> "Executor | TorchDevice":
    """CLI helper: "serial", "local[:N]" (processes), "dask:ADDRESS" or "torch[:DEVICE]"
    (a :class:`~darrm.backends.devices.TorchDevice`: the sweep accepts either)."""
    if spec in (None, "", "serial"):
        return SerialExecutor()
    kind, _, arg = spec.partition(":")
    if kind == "local":
        return ProcessExecutor(int(arg) if arg else None)
    if kind == "torch":
        return TorchDevice(arg or None)
    if kind == "dask":
        if not arg:
            raise ParameterError("executor", "dask needs a scheduler address: dask:tcp://HOST:PORT")
        return DaskExecutor(arg)
    raise ParameterError("executor", f"unknown executor {spec!r}; use serial, local[:N], dask:ADDRESS or torch[:DEVICE]")

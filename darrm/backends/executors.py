"""Executors for embarrassingly parallel sweeps: serial, local processes, or Dask.

An executor runs ``fn(shared, item)`` for every item and yields the results in any
order.  ``shared`` is a large read-only object (the sweep table) sent to each worker
once: inherited by forked processes, broadcast with ``Client.scatter`` on Dask.
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol

from ..errors import ParameterError, ParameterTypeError, SolveError, require
from ..logs import get_logger
from ..validation import count
from .devices import TorchDevice


class Executor(Protocol):
    def run(self, fn: Callable[[Any, Any], Any], shared: Any, items: Sequence[Any]) -> Iterator[Any]: ...


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports it)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def process_limit() -> int | None:
    """The soft limit on this user's processes (``RLIMIT_NPROC``); None where unlimited or unknown.
    Checked for root too (root may be exempt, but a refusal there costs nothing)."""
    try:
        import resource

        soft, _ = resource.getrlimit(resource.RLIMIT_NPROC)
    except (ImportError, AttributeError, OSError, ValueError):  # pragma: no cover - not POSIX
        return None
    return None if soft == resource.RLIM_INFINITY or soft < 0 else int(soft)


class SerialExecutor:
    """Runs every item in this process (the default; no start-up cost)."""

    def run(self, fn, shared, items):
        for it in items:
            yield fn(shared, it)


_SHARED: Any = None


def _die_with_parent() -> None:
    """Linux: ask the kernel to SIGTERM this worker when its parent dies (no orphans after a
    crash or ``kill -9`` of the solver).  A no-op elsewhere or when prctl is unavailable."""
    if not sys.platform.startswith("linux"):
        return
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - exotic libc
        pass


#: this process's BLAS is limited to one thread for good (a local pool's worker, :func:`_init`)
_BLAS_LIMITED_FOR_LIFE = False
#: depth of :func:`one_blas_thread` contexts open in this thread
_BLAS_DEPTH = threading.local()


class _OneBlasThread:
    """:func:`one_blas_thread`'s context: the threadpoolctl limit on the outermost entry only."""

    def __init__(self) -> None:
        self._limit: Any = None

    def __enter__(self) -> _OneBlasThread:
        depth = getattr(_BLAS_DEPTH, "n", 0)
        if depth == 0 and not _BLAS_LIMITED_FOR_LIFE:
            from threadpoolctl import threadpool_limits

            self._limit = threadpool_limits(limits=1, user_api="blas")
        _BLAS_DEPTH.n = depth + 1
        return self

    def __exit__(self, *exc: object) -> None:
        _BLAS_DEPTH.n -= 1
        if self._limit is not None:
            self._limit.restore_original_limits()
            self._limit = None


def one_blas_thread() -> _OneBlasThread:
    """A context manager limiting BLAS to one thread (threadpoolctl).  The sweep's blocks are
    many small matrix products: a multi-threaded BLAS spends more on waking its threads than on
    the products, and on a busy machine far more (measured: a K = 1001 pure-DP block 200× slower
    with OpenBLAS's two threads while another process held a core).  Parallelism comes from the
    executor's processes instead.  Nested inside another one (a sweep's blocks run serially inside
    the sweep's own context) or in a worker limited for life it does nothing: threadpoolctl scans
    the loaded libraries on every limit, ~2 ms, which a screening pass paid once per block."""
    return _OneBlasThread()


def _init(shared: Any) -> None:
    global _SHARED, _BLAS_LIMITED_FOR_LIFE
    _die_with_parent()
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=1, user_api="blas")  # for the life of the worker
    _BLAS_LIMITED_FOR_LIFE = True
    _SHARED = shared


def _call_batch(fn: Callable, items: Sequence[Any]) -> list:
    return [fn(_SHARED, it) for it in items]


#: a process pool gets about this many batches per worker (fewer round trips than one task per
#: item: a K = 1001 pure-DP sweep has 1,002 small items, ~0.5 s of dispatch in the parent)
BATCHES_PER_WORKER = 8


class ProcessExecutor:
    """Local worker processes (fork start method on POSIX, so ``shared`` is not copied)."""

    def __init__(self, workers: int | None = None):
        self.workers = available_cores() if workers is None else count("workers", workers)

    def run(self, fn, shared, items):
        method = "fork" if "fork" in mp.get_all_start_methods() else None
        ctx = mp.get_context(method)
        items = list(items)
        # strided batches: the items come biggest first, so each batch gets a mix of sizes
        nb = min(len(items), self.workers * BATCHES_PER_WORKER)
        batches = [items[i::nb] for i in range(nb)]
        with ProcessPoolExecutor(self.workers, mp_context=ctx, initializer=_init, initargs=(shared,)) as pool:
            try:
                futures = [pool.submit(_call_batch, fn, b) for b in batches]
            except OSError as exc:  # fork failed (RLIMIT_NPROC, memory): end the started workers, do not wait
                _abandon(pool)
                raise ParameterError("executor", f"cannot start {self.workers} worker processes "
                                                 f"({exc.strerror or exc}); use fewer (local:N) or serial") from None
            for f in as_completed(futures):
                yield from f.result()


def _abandon(pool: ProcessPoolExecutor) -> None:
    """Kill the workers a pool started and shut it down without waiting for work it never got
    (a failed fork leaves ProcessPoolExecutor's manager waiting for them: the process would hang)."""
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.kill()
            proc.join(5)
        except (OSError, ValueError, AssertionError):  # pragma: no cover - already gone
            pass
    pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """Runs the items on a Dask distributed cluster (``pip install 'darrm[distributed]'``).

    Args:
        client: a ``distributed.Client``, or a scheduler address such as "tcp://host:8786".
    """

    #: seconds to wait for a scheduler given by its address
    CONNECT_TIMEOUT = 5.0

    def __init__(self, client: Any, connect_timeout: float | None = None):
        Client = require("distributed", "distributed", "the Dask executor").Client
        if isinstance(client, Client):
            self.client = client
            return
        t = self.CONNECT_TIMEOUT if connect_timeout is None else connect_timeout
        try:
            _probe_scheduler(client, t)
            self.client = Client(client, timeout=t)
        except (OSError, TimeoutError, ValueError, TypeError) as exc:
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise ParameterError("executor", f"cannot connect to the Dask scheduler {client!r} within {t:g} s "
                                             f"({why})") from None

    def run(self, fn, shared, items):
        from distributed import as_completed as das_completed

        try:
            fut_shared = self.client.scatter(shared, broadcast=True)
            futures = self.client.map(fn, [fut_shared] * len(items), list(items), pure=False)
            for f in das_completed(futures):
                yield f.result()
        except (OSError, RuntimeError, TimeoutError) as exc:
            # the cluster went away mid-run ("ConnectionPool closing.", CommClosedError, timeouts):
            # one line naming the executor, not an internal error
            if isinstance(exc, RuntimeError) and not _is_connection_loss(exc):
                raise
            why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise SolveError(f"executor: the Dask cluster stopped answering during the run ({why})") from None


def _is_connection_loss(exc: BaseException) -> bool:
    """A RuntimeError of distributed's that means the connection to the cluster is gone."""
    return "ConnectionPool" in str(exc) or "closed" in str(exc).lower() or type(exc).__name__ == "CommClosedError"


def _probe_scheduler(address: str, timeout: float) -> None:
    """Ask the scheduler at ``address`` for its identity within ``timeout`` seconds (the whole
    exchange), so that an address which accepts TCP but does not speak Dask's protocol is refused
    in time: ``distributed.Client`` itself waits for its registration reply without a limit.

    Raises:
        TimeoutError: no Dask reply in time.  OSError: the connection was refused or closed.
        ValueError: the reply is not a Dask scheduler's identity.
    """
    import asyncio

    from distributed.comm import connect

    async def ask() -> object:
        comm = await connect(address, timeout=timeout)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    try:
        asyncio.get_running_loop()
        return  # inside a running event loop (a notebook): Client's own timeout is all there is
    except RuntimeError:
        pass
    try:
        reply = asyncio.run(asyncio.wait_for(ask(), timeout))
    except asyncio.TimeoutError:
        raise TimeoutError(f"no Dask reply within {timeout:g} s (is this a Dask scheduler's address?)") from None
    except Exception as exc:  # distributed's CommClosedError and the like
        raise OSError(str(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    if not isinstance(reply, dict) or reply.get("type") != "Scheduler":
        raise ValueError("the reply is not a Dask scheduler's identity")


def check_executor(name: str, executor: object) -> None:
    """``executor`` is None, an :class:`Executor` (anything with a ``run`` method) or a
    :class:`~darrm.backends.devices.TorchDevice` or a ``concurrent.futures.Executor`` (run through
    :class:`~darrm.backends.adapters.FuturesExecutor`); a spec string goes through :func:`make_executor`."""
    from concurrent.futures import Executor as FuturesPool

    if executor is None or isinstance(executor, (TorchDevice, FuturesPool)) or callable(getattr(executor, "run", None)):
        return
    hint = f" (for a spec string use darrm.backends.executors.make_executor({executor!r}))" if isinstance(
        executor, str) else ""
    raise ParameterTypeError(name, "must be an Executor, a concurrent.futures.Executor, a TorchDevice or None, "
                                   f"got {type(executor).__name__}{hint}")


def local_workers(kind: str, arg: str) -> int:
    """The worker count N of a local executor spec ``KIND:N`` (``local``, ``joblib``), by one rule:
    an integer N ≥ 1 below the process limit (``RLIMIT_NPROC``, ``ulimit -u``) where there is one.
    The memory rule (N workers' sweeps must fit the memory budget) is applied to both kinds when
    the sweeps' size is known (:func:`darrm.privacy.sweep.sweep_executor`).

    Raises:
        ParameterError: (``executor``) N is no integer ≥ 1 or exceeds either bound.
    """
    try:
        n = int(arg)
    except ValueError:
        n = 0
    if n < 1:
        raise ParameterError("executor", f"{kind}:N needs a number of worker processes N >= 1, got {arg!r}")
    limit = process_limit()
    if limit is not None and n >= limit:
        raise ParameterError("executor", f"{kind}:{n} asks for more worker processes than the process "
                                         f"limit allows (RLIMIT_NPROC = {limit}, `ulimit -u`); use {kind}:N "
                                         f"with N < {limit}")
    return n


def make_executor(spec: str | None) -> Executor | TorchDevice:
    """CLI helper: "serial", "local[:N]" (processes), "joblib[:N]" (joblib's active backend, loky by
    default: :class:`~darrm.backends.adapters.JoblibExecutor`), "dask:ADDRESS" or "torch[:DEVICE]"
    (a :class:`~darrm.backends.devices.TorchDevice`: the sweep accepts either)."""
    if spec is not None and not isinstance(spec, str):  # e.g. Python 3.11's argparse: `--executor=--` → []
        raise ParameterError("executor", f"must be serial, local[:N], joblib[:N], dask:ADDRESS or torch[:DEVICE], "
                                          f"got {spec!r}")
    if spec in (None, "", "serial"):
        return SerialExecutor()
    kind, _, arg = spec.partition(":")
    if kind == "local":
        return ProcessExecutor(local_workers(kind, arg) if arg else None)
    if kind == "joblib":
        from .adapters import JoblibExecutor

        return JoblibExecutor(local_workers(kind, arg) if arg else -1)
    if kind == "torch":
        device = TorchDevice(arg or None)
        if device.device.type == "cpu":
            # measured: a K = 31, Δ > 0 certificate sweep ~8× slower than serial numpy (torch runs
            # the blocks in one process and without the exact pruning of darrm.privacy.block_maxima)
            get_logger("executor").warning(
                "--executor torch runs on the CPU here (torch sees no GPU): slower than the default "
                "(local processes, numpy, pruned sweeps); torch is for a CUDA device")
        return device
    if kind == "dask":
        if not arg:
            raise ParameterError("executor", "dask needs a scheduler address: dask:tcp://HOST:PORT")
        return DaskExecutor(arg)
    raise ParameterError("executor",
                         f"unknown executor {spec!r}; use serial, local[:N], joblib[:N], dask:ADDRESS "
                                      f"or torch[:DEVICE]")

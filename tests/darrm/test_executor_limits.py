"""Executors are bounded before any work: `local:N` by the memory estimate and the process limit,
a failed fork ends the command instead of hanging it, a Dask address that does not speak Dask
times out, and BLAS is single-threaded under process or address-space limits."""

from __future__ import annotations

import resource
import socket
import subprocess
import sys
import threading
import time

import pytest

from darrm.backends import executors
from darrm.backends.executors import DaskExecutor, ProcessExecutor, make_executor
from darrm.errors import ParameterError


def _one_line(err: str, name: str) -> bool:
    return err.count("\n") == 1 and err.startswith(f"darrm: error: {name}: ")


def _with_limit(limit: int, value: int):
    def set_it():
        soft, hard = resource.getrlimit(limit)
        resource.setrlimit(limit, (value, hard))
    return set_it


def test_local_n_beyond_the_memory_estimate_is_refused_naming_the_option(cli):
    t0 = time.monotonic()
    rc, out, err = cli("--no-progress", "solve", "--K", "101", "--m", "5", "--eps", "0.1", "--member-delta", "1e-5",
                       "--executor", "local:300", "--max-memory", "1G")
    assert rc == 2 and _one_line(err, "executor") and "GiB" in err and "at most local:" in err and out == ""
    assert time.monotonic() - t0 < 20  # refused before any solving (a K = 101 solve takes minutes)


@pytest.mark.parametrize("kind", ["local", "joblib"])
def test_every_local_executor_is_bounded_by_one_rule(kind):
    """joblib:N starts N local (loky) workers like local:N: the same memory and process-limit rule
    refuses a runaway N at once (joblib:999 used to start 999 workers and not finish in a minute)."""
    pytest.importorskip("joblib")
    t0 = time.monotonic()
    try:
        r = subprocess.run([sys.executable, "-m", "darrm.cli", "--no-progress", "solve", "--K", "5", "--m", "1",
                            "--executor", f"{kind}:999", "--max-memory", "1G"], capture_output=True, text=True,
                           timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{kind}:999 was neither refused nor finished in 30 s")
    assert r.returncode == 2 and _one_line(r.stderr, "executor") and f"at most {kind}:" in r.stderr, r.stderr
    assert time.monotonic() - t0 < 20
    r = subprocess.run([sys.executable, "-m", "darrm.cli", "--no-progress", "solve", "--K", "5", "--executor",
                        f"{kind}:60"], capture_output=True, text=True, timeout=60,
                       preexec_fn=_with_limit(resource.RLIMIT_NPROC, 50))
    assert r.returncode == 2 and _one_line(r.stderr, "executor") and "RLIMIT_NPROC = 50" in r.stderr


def test_local_n_beyond_the_process_limit_is_refused():
    r = subprocess.run([sys.executable, "-m", "darrm.cli", "--no-progress", "solve", "--K", "5", "--executor",
                        "local:60"], capture_output=True, text=True, timeout=60,
                       preexec_fn=_with_limit(resource.RLIMIT_NPROC, 50))
    assert r.returncode == 2 and _one_line(r.stderr, "executor") and "RLIMIT_NPROC = 50" in r.stderr


_FORK_FAILS = """
import os
from darrm.backends.executors import ProcessExecutor
from darrm.errors import ParameterError
real, n = os.fork, [0]
def fork():
    n[0] += 1
    if n[0] > 1:
        raise BlockingIOError(11, "Resource temporarily unavailable")
    return real()
os.fork = fork
try:
    list(ProcessExecutor(4).run(lambda s, x: x, None, list(range(8))))
except ParameterError as exc:
    print(exc)
"""


def test_a_failed_fork_ends_with_an_error_instead_of_hanging():
    r = subprocess.run([sys.executable, "-c", _FORK_FAILS], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.startswith("executor: cannot start 4 worker processes")


def test_a_tcp_server_that_does_not_speak_dask_times_out():
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []

    def accept():
        try:
            while True:
                held.append(server.accept()[0])  # accept and say nothing
        except OSError:
            return

    threading.Thread(target=accept, daemon=True).start()
    outcome: list[BaseException] = []

    def connect():
        try:
            DaskExecutor(f"tcp://127.0.0.1:{server.getsockname()[1]}", connect_timeout=1.0)
        except BaseException as exc:  # noqa: BLE001 - recorded for the assertion
            outcome.append(exc)

    pytest.importorskip("distributed")
    t = threading.Thread(target=connect, daemon=True)
    t.start()
    t.join(20)
    server.close()
    for c in held:
        c.close()
    assert not t.is_alive(), "the connection to a silent server hangs"
    assert len(outcome) == 1 and isinstance(outcome[0], ParameterError)
    assert str(outcome[0]).startswith("executor: cannot connect to the Dask scheduler") and "\n" not in str(outcome[0])


def test_make_executor_counts_the_process_limit(monkeypatch):
    monkeypatch.setattr(executors, "process_limit", lambda: 8)
    assert make_executor("local:7").workers == 7
    with pytest.raises(ParameterError, match="^executor: local:8 .*RLIMIT_NPROC = 8"):
        make_executor("local:8")
    assert isinstance(ProcessExecutor(300), ProcessExecutor)  # the API object itself is not refused


_THREADS = """
from darrm.cli import main
main(["verify", "missing-file.json"])
import os, threadpoolctl
print(os.environ.get("OPENBLAS_NUM_THREADS"), max(i["num_threads"] for i in threadpoolctl.threadpool_info()))
"""


@pytest.mark.parametrize("limit", [resource.RLIMIT_NPROC, resource.RLIMIT_AS])
def test_blas_is_single_threaded_under_process_or_memory_limits(limit):
    value = 4096 if limit == resource.RLIMIT_NPROC else 8 * 2**30
    env = {k: v for k, v in __import__("os").environ.items() if not k.endswith("_NUM_THREADS")}
    r = subprocess.run([sys.executable, "-c", _THREADS], capture_output=True, text=True, timeout=60, env=env,
                       preexec_fn=_with_limit(limit, value))
    assert r.stdout.split() == ["1", "1"], r.stderr


class _ClusterGone:
    def scatter(self, *a, **kw):
        raise RuntimeError("ConnectionPool closing.")


def test_a_dask_cluster_that_goes_away_is_one_solve_error_line():
    pytest.importorskip("distributed")
    from darrm.errors import SolveError

    ex = DaskExecutor.__new__(DaskExecutor)
    ex.client = _ClusterGone()
    with pytest.raises(SolveError, match=r"^executor: the Dask cluster stopped answering .*ConnectionPool closing"):
        list(ex.run(lambda s, x: x, None, [1, 2]))

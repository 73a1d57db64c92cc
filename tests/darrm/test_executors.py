"""Executors: the worker count is honoured, and local workers die with their parent (Linux)."""

from __future__ import annotations

import ctypes
import signal
import sys

import pytest

from darrm.backends.executors import ProcessExecutor, make_executor
from darrm.errors import ParameterError


def test_worker_count_is_honoured_and_validated():
    assert ProcessExecutor(3).workers == 3
    assert make_executor("local:5").workers == 5
    for bad in (0, -1, 2.5, "3", True):
        with pytest.raises(ParameterError, match="workers"):
            ProcessExecutor(bad)
    for spec in ("local:abc", "local:0", "local:-2", "local:1.5"):
        with pytest.raises(ParameterError, match="executor"):
            make_executor(spec)


def _pdeathsig(shared, item):
    sig = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
    return sig.value


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux only")
def test_local_workers_die_with_their_parent():
    got = set(ProcessExecutor(2).run(_pdeathsig, None, [0, 1, 2]))
    assert got == {int(signal.SIGTERM)}

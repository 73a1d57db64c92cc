"""Fault and concurrency probes (issue 24): failing system calls, SIGKILLs and racing processes
against darrm's writers and its labelling ledger.  Each probe is tallied as a *fault run* or a
*concurrency run* (``tests/fuzz/conftest.py`` prints the counts; tests/fuzz/README.md records them).

* An atomic write whose n-th ``fsync``/``replace``/``fchmod``/``mkstemp``/``write`` fails (ENOSPC,
  EIO, EFBIG, EDQUOT, an interrupt) leaves its target exactly old or exactly new, no temporary file,
  and no lock held: another descriptor can take the lock at once.
* A labelling batch whose n-th system call fails is either released and recorded, or raises; in
  both cases a reload charges at least every released query (never fewer) and at most the
  attempted ones, and the ledger stays loadable.
* A labelling process SIGKILLed at random moments never released a label its ledger forgot.
* Processes racing on one ledger (resuming, labelling and closing in turns, or creating it at the
  same moment) leave it exact: recorded = released.
"""

from __future__ import annotations

import errno
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import darrm
from darrm import atomic
from darrm.accounting import LabellingSession
from darrm.atomic import atomic_write_bytes
from darrm.errors import DarrmError
from darrm.locking import lock_file

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

pytestmark = pytest.mark.skipif(fcntl is None or not hasattr(os, "fork"), reason="POSIX fork and flock")

FORK = mp.get_context("fork")
PROBES = settings(max_examples=30, deadline=None, derandomize=True, database=None)

#: the system calls a fault is injected into (as the ``os``/``tempfile`` attribute darrm calls)
CALLS = ["fsync", "replace", "fchmod", "mkstemp", "write"]
FAULTS = [OSError(errno.ENOSPC, "No space left on device"), OSError(errno.EIO, "Input/output error"),
          OSError(errno.EFBIG, "File too large"), OSError(errno.EDQUOT, "Disk quota exceeded"),
          KeyboardInterrupt()]
K = 5


@pytest.fixture(scope="module")
def table():
    return darrm.solve(darrm.PrivacyParams(K=K, m=3, eps=0.1, member_delta=1e-5), family="sub")


class Injected:
    """Make the ``nth`` call (0-based) of ``call`` raise ``fault``; the other calls go through."""

    def __init__(self, monkeypatch, call: str, nth: int, fault: BaseException):
        self.seen, self.fired = 0, False
        module = atomic.tempfile if call == "mkstemp" else os
        real = getattr(module, call)

        def wrapper(*a, **kw):
            i, self.seen = self.seen, self.seen + 1
            if i == nth:
                self.fired = True
                raise fault
            return real(*a, **kw)

        monkeypatch.setattr(module, call, wrapper)


def _lock_is_free(target: Path) -> bool:
    """Whether a new open file description can take the sidecar's flock (a leaked fd would hold it)."""
    lock = lock_file(target)
    if not lock.exists():
        return True
    fd = os.open(lock, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


@PROBES
@given(call=st.sampled_from(CALLS), nth=st.integers(0, 3), fault=st.sampled_from(FAULTS), exists=st.booleans())
def test_fault_in_an_atomic_write_leaves_old_or_new_and_no_lock(tmp_path_factory, tally, call, nth, fault, exists):
    tally("faults: a system call fails during an atomic write", "fault")
    d = tmp_path_factory.mktemp("fault-write")
    target = d / "g.json"
    old, new = b"old contents\n" * 100, b"new contents\n" * 200
    if exists:
        target.write_bytes(old)
    mp_ = pytest.MonkeyPatch()
    try:
        inj = Injected(mp_, call, nth, fault)
        try:
            atomic_write_bytes(target, new, name="out")
            raised = None
        except (OSError, KeyboardInterrupt, DarrmError) as exc:
            raised = exc
    finally:
        mp_.undo()
    if inj.fired:
        assert raised is not None or call in ("fsync", "write"), "a failed call was swallowed"
    else:
        assert raised is None, raised
    content = target.read_bytes() if target.exists() else None
    assert content in ((old, new) if exists else (None, new)), "a torn or lost target"
    if raised is None:
        assert content == new
    assert [p.name for p in d.iterdir() if p.name.endswith(".tmp")] == [], "a temporary file was left"
    assert _lock_is_free(target), "the lock leaked"


def _session(table, path, **kw):
    """A ledger-backed session.  Fixed members: the journal, the ledger's atomic save before any
    release and its lock are the same code for either member randomness, and a fixed-members total is
    a closed form, so each probe exercises the writes instead of a second-long PLD composition per batch."""
    return LabellingSession(table, budget_epsilon=1e6, delta=1e-3, member_randomness="fixed", path=path, **kw)


def _votes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 2, size=(n, K))


@PROBES
@given(call=st.sampled_from(CALLS), nth=st.integers(0, 6), fault=st.sampled_from(FAULTS),
       batches=st.lists(st.integers(1, 4), min_size=1, max_size=3))
def test_fault_during_labelling_never_forgets_a_released_query(tmp_path_factory, table, tally, call, nth, fault,
                                                               batches):
    tally("faults: a system call fails during a labelling batch", "fault")
    path = tmp_path_factory.mktemp("fault-ledger") / "ledger.json"
    _session(table, path).close()
    released = attempted = 0
    s = LabellingSession.load(path, table)
    try:
        mp_ = pytest.MonkeyPatch()
        try:
            Injected(mp_, call, nth, fault)
            for n in batches:
                attempted += n
                try:
                    labels = s.label(_votes(n))
                except (OSError, KeyboardInterrupt, DarrmError):
                    continue
                assert len(labels) == n
                released += n
        finally:
            mp_.undo()
    finally:
        s.close()
    assert _lock_is_free(path), "the ledger's lock leaked"
    with LabellingSession.load(path, table) as again:
        assert released <= again.queries <= attempted, (released, again.queries, attempted)


def _label_forever(path: str, table, w) -> None:  # pragma: no cover - runs in a killed child
    s = LabellingSession.load(path, table)
    total = 0
    while True:
        s.label(_votes(2))
        total += 2
        os.write(w, f"{total}\n".encode())  # released: the caller has the labels now


KILLS = 12


def test_sigkill_mid_label_never_releases_an_unrecorded_label(tmp_path, table, tally):
    path = tmp_path / "ledger.json"
    _session(table, path).close()
    rng = np.random.default_rng(24)
    released = 0
    for _ in range(KILLS):
        tally("faults: SIGKILL of a labelling process", "fault")
        r, w = os.pipe()
        p = FORK.Process(target=_label_forever, args=(str(path), table, w))
        p.start()
        os.close(w)
        time.sleep(0.05 + rng.uniform(0.0, 0.4))
        os.kill(p.pid, signal.SIGKILL)
        p.join(30)
        with os.fdopen(r, "rb") as fh:
            lines = fh.read().split()
        base = released
        if lines:
            released = base + int(lines[-1])
        with LabellingSession.load(path, table) as s:
            assert s.queries >= released, (s.queries, released)
            released = s.queries  # the next child resumes from the recorded count


def _take_turns(path: str, table, rounds: int, q) -> None:  # pragma: no cover - runs in a child
    released = 0
    for i in range(rounds):
        while True:
            try:
                s = LabellingSession.load(path, table)
                break
            except DarrmError as exc:
                if "in use" not in str(exc) and "being written" not in str(exc):
                    raise
                time.sleep(0.001 * (os.getpid() % 7 + 1))
        try:
            released += len(s.label(_votes(1 + i % 3)))
        finally:
            s.close()
    q.put(released)


@pytest.mark.parametrize("processes", [2, 3, 4])
def test_processes_taking_turns_on_one_ledger_keep_it_exact(tmp_path, table, tally, processes):
    tally("concurrency: processes resuming and labelling one ledger", "concurrency")
    path = tmp_path / "ledger.json"
    _session(table, path).close()
    q = FORK.Queue()
    ps = [FORK.Process(target=_take_turns, args=(str(path), table, 4, q)) for _ in range(processes)]
    for p in ps:
        p.start()
    for p in ps:
        p.join(120)
        assert p.exitcode == 0
    released = sum(q.get(timeout=10) for _ in ps)
    with LabellingSession.load(path, table) as s:
        assert s.queries == released


def _create_and_label(path: str, table, start, delay: float, q) -> None:  # pragma: no cover - in a child
    start.wait()
    time.sleep(delay)
    try:
        s = _session(table, path)
    except DarrmError:
        q.put(0)
        return
    released = 0
    try:
        for _ in range(3):
            released += len(s.label(_votes(1)))
            time.sleep(0.01)
    finally:
        s.close()
        q.put(released)


#: two creators at the same moment, the others while the first one's session is open or after it closed
DELAYS = [0.0, 0.0, 0.02, 0.3]


@pytest.mark.parametrize("processes", [2, 3, 4])
def test_processes_creating_one_ledger_at_once_cannot_reset_it(tmp_path, table, tally, processes):
    tally("concurrency: processes creating one ledger at the same moment", "concurrency")
    path = tmp_path / "ledger.json"
    start = FORK.Event()
    q = FORK.Queue()
    ps = [FORK.Process(target=_create_and_label, args=(str(path), table, start, DELAYS[i], q))
          for i in range(processes)]
    for p in ps:
        p.start()
    start.set()
    for p in ps:
        p.join(120)
        assert p.exitcode == 0
    released = sorted(q.get(timeout=10) for _ in ps)
    assert released[-1] == 3 and released[:-1] == [0] * (processes - 1), released  # one creator, once
    with LabellingSession.load(path, table) as s:
        assert s.queries == 3

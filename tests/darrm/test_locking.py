"""Issue 15: a second writer of the same output is refused (one line, exit 2), never raced.

The holders here are real processes (a forked child, or ``darrm solve`` itself), because the
lock (``fcntl.flock``) is between processes; within one process claims are counted.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import darrm
from darrm import locking
from darrm.accounting import LabellingSession
from darrm.atomic import atomic_write_bytes
from darrm.cli import main
from darrm.errors import ParameterError

pytestmark = pytest.mark.skipif(locking.fcntl is None, reason="claims are enforced on POSIX only")
FORK = mp.get_context("fork")


def _hold(path: str, ready, done) -> None:
    with locking.claim("out", path):
        ready.set()
        done.wait(30)


class Holder:
    """A forked process that claims ``path`` until :meth:`stop` (or until killed)."""

    def __init__(self, path: Path):
        self.ready, self.done = FORK.Event(), FORK.Event()
        self.p = FORK.Process(target=_hold, args=(str(path), self.ready, self.done), daemon=True)
        self.p.start()
        assert self.ready.wait(20), "the holder did not start"

    def stop(self) -> None:
        self.done.set()
        self.p.join(20)


@pytest.fixture(scope="module")
def table():
    return darrm.solve(darrm.PrivacyParams(K=5, m=3, eps=0.1, member_delta=1e-5), progress=False)


def test_a_write_to_a_file_another_process_writes_is_refused(tmp_path):
    target = tmp_path / "g.json"
    target.write_bytes(b"old")
    h = Holder(target)
    try:
        msg = rf"out: {target} is being written by another process \(pid {h.p.pid}\)"
        with pytest.raises(ParameterError, match=msg):
            atomic_write_bytes(target, b"new", name="out")
        assert target.read_bytes() == b"old"
    finally:
        h.stop()
    atomic_write_bytes(target, b"new")  # released: writes again, and no lock file is left behind
    assert target.read_bytes() == b"new" and sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


def test_a_killed_holder_releases_its_claim(tmp_path):
    target = tmp_path / "g.json"
    h = Holder(target)
    os.kill(h.p.pid, signal.SIGKILL)
    h.p.join(20)
    assert locking.lock_file(target).exists()  # the crashed holder's sidecar file stays ...
    atomic_write_bytes(target, b"x")  # ... but the kernel dropped its lock: reused, then removed
    assert not locking.lock_file(target).exists() and target.read_bytes() == b"x"


def test_claims_within_one_process_are_counted(tmp_path):
    target = tmp_path / "g.json"
    with locking.claim("out", target) as c:
        atomic_write_bytes(target, b"a")  # the command that claimed its --out may write it
        assert c.count == 1 and locking.is_claimed(target)
        with pytest.raises(ParameterError, match="already in use by this process"):
            locking.claim("path", target, reentrant=False)
    assert not locking.is_claimed(target) and not locking.lock_file(target).exists()


def test_file_systems_without_flock_still_write(tmp_path, monkeypatch):
    import errno

    def unsupported(fd, op):
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(locking.fcntl, "flock", unsupported)
    atomic_write_bytes(tmp_path / "g.json", b"x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


def test_cli_outputs_are_claimed_for_the_whole_command(tmp_path, capsys, table):
    """`aggregate --out L` while another process holds L: exit 2, one line naming --out, L unchanged."""
    g, votes, out = tmp_path / "g.json", tmp_path / "v.npy", tmp_path / "labels.txt"
    darrm.save(table, g)
    np.save(votes, np.ones((3, 5), dtype=int))
    out.write_text("earlier labels\n")
    h = Holder(out)
    try:
        rc = main(["aggregate", str(g), "--votes", str(votes), "--out", str(out), "--seed", "0"])
        err = capsys.readouterr().err
        assert rc == 2 and err.count("\n") == 1 and err.startswith("darrm: error: out: ")
        assert "another process" in err and out.read_text() == "earlier labels\n"
    finally:
        h.stop()
    assert main(["aggregate", str(g), "--votes", str(votes), "--out", str(out), "--seed", "0"]) == 0
    assert len(out.read_text().split()) == 3


@pytest.mark.slow
def test_two_darrm_solve_processes_on_one_out(tmp_path):
    """Two real `darrm solve --out g.json`: the second is refused at once, before it computes."""
    out = tmp_path / "g.json"
    cmd = [sys.executable, "-c", "import sys; from darrm.cli import main; sys.exit(main())", "--no-progress",
           "solve", "--K", "41", "--m", "5", "--out", str(out)]
    first = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not locking.lock_file(out).exists():
            assert first.poll() is None and time.monotonic() < deadline, "the first solve did not start"
            time.sleep(0.05)
        t0 = time.monotonic()
        second = subprocess.run(cmd[:-6] + ["--K", "5", "--out", str(out)], capture_output=True, text=True,
                                timeout=120)
        assert second.returncode == 2, second.stderr
        assert second.stderr.count("\n") == 1 and "out: " in second.stderr and "another process" in second.stderr
        assert f"pid {first.pid}" in second.stderr and not out.exists()
        assert time.monotonic() - t0 < 30
    finally:
        first.kill()
        first.wait(30)


def test_one_live_labelling_session_per_ledger(tmp_path, table):
    """A ledger resumed twice would count each process's queries apart (the last writer's count
    wins): the second session, in this process or another, is refused before reading it."""
    ledger = tmp_path / "ledger.json"
    s = LabellingSession(table, member_randomness="fresh", budget_epsilon=5.0, delta=1e-4, rng=0, path=ledger)
    s.label(np.ones((2, 5), dtype=int))
    with pytest.raises(ParameterError, match="path: .*already in use by this process"):
        LabellingSession.load(ledger, table)
    s.close()
    with pytest.raises(darrm.DarrmError, match="closed"):
        s.label(np.ones((1, 5), dtype=int))

    def resume_in_child(ready, done):
        with LabellingSession.load(ledger, table, rng=1) as t:
            t.label(np.ones((1, 5), dtype=int))
            ready.set()
            done.wait(30)

    ready, done = FORK.Event(), FORK.Event()
    child = FORK.Process(target=resume_in_child, args=(ready, done), daemon=True)
    child.start()
    try:
        assert ready.wait(30)
        with pytest.raises(ParameterError, match="another process"):
            LabellingSession.load(ledger, table)
    finally:
        done.set()
        child.join(30)
    with LabellingSession.load(ledger, table) as t:  # released: resumes with both processes' queries
        assert t.queries == 3

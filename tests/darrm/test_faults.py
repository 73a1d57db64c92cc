"""Issue 15, fault injection: ``kill -9`` during atomic writes and during a checkpointed solve.

(a) A writer process rewriting a γ-file-sized payload in a loop is SIGKILLed at random moments,
    20 times: the target is always one complete payload (old or new, never partial), and the
    next write leaves no temporary file behind.
(b) ``darrm solve --checkpoint`` is SIGKILLed after its first checkpoint; the same command
    resumes from it and gives the uninterrupted run's table (same stop status, γ within 1e-9,
    objective within 1e-10), and the written file passes its certificate on load.
"""

from __future__ import annotations

import hashlib
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
from darrm.atomic import atomic_write_bytes
from darrm.cli import main

FORK = mp.get_context("fork")
KILLS = 20


def _payload(i: int) -> bytes:
    """Payload i: 1 MiB with a header (index, length, sha256 of the body): checkable for completeness."""
    body = np.random.default_rng(i).integers(0, 256, size=2**20 + 7 * i, dtype=np.uint8).tobytes()
    return f"{i} {len(body)} {hashlib.sha256(body).hexdigest()}\n".encode() + body


def _complete(data: bytes) -> int | None:
    """The payload index if ``data`` is one complete payload, else None."""
    head, _, body = data.partition(b"\n")
    try:
        i, n, digest = head.decode().split()
    except ValueError:
        return None
    return int(i) if len(body) == int(n) and hashlib.sha256(body).hexdigest() == digest else None


def _write_forever(path: str, start: int) -> None:
    i = start
    while True:
        atomic_write_bytes(path, _payload(i % 7))
        i += 1


def test_kill_during_atomic_writes_never_leaves_a_partial_file(tmp_path):
    target = tmp_path / "g.json"
    atomic_write_bytes(target, _payload(0))
    rng = np.random.default_rng(20240515)
    seen_tmp = 0
    # at least KILLS kills, more (up to 4×) until a quarter of them landed inside a write: where a
    # kill lands depends on the machine's load, and the property needs kills inside writes
    for k in range(4 * KILLS):
        if k >= KILLS and seen_tmp >= KILLS // 4:
            break
        before = target.stat().st_mtime_ns
        p = FORK.Process(target=_write_forever, args=(str(target), k), daemon=True)
        p.start()
        deadline = time.monotonic() + 20
        while target.stat().st_mtime_ns == before:  # at least one write done: the next is under way
            assert time.monotonic() < deadline and p.is_alive()
            time.sleep(0.001)
        time.sleep(float(rng.uniform(0.0, 0.03)))
        os.kill(p.pid, signal.SIGKILL)
        p.join(20)
        assert _complete(target.read_bytes()) is not None, f"kill {k}: the target is not a complete payload"
        seen_tmp += any(f.name.endswith(".tmp") for f in tmp_path.iterdir())
    # most kills land inside a write (a temporary file left behind); the next write sweeps them all
    assert seen_tmp >= KILLS // 4, f"only {seen_tmp} of {KILLS} kills interrupted a write"
    atomic_write_bytes(target, _payload(3))
    assert sorted(f.name for f in tmp_path.iterdir()) == ["g.json"]
    assert _complete(target.read_bytes()) == 3


# -- (b) kill during a checkpointed solve ----------------------------------------------------------

#: a problem whose constraint generation takes several rounds but only seconds
PROBLEM = ["--K", "31", "--m", "5", "--eps", "0.1", "--member-delta", "1e-5", "--method", "cutting-planes",
           "--cuts-per-round", "16"]


def _solve_cmd(out: Path, ck: Path) -> list[str]:
    return [sys.executable, "-c", "import sys; from darrm.cli import main; sys.exit(main())", "--no-progress",
            "solve", *PROBLEM, "--checkpoint", str(ck), "--out", str(out)]


@pytest.mark.slow
def test_kill_during_solve_then_resume_gives_the_same_table(tmp_path):
    ref_out = tmp_path / "ref.json"
    assert main(["--no-progress", "solve", *PROBLEM, "--out", str(ref_out)]) == 0
    ref = darrm.load(ref_out)
    assert ref.info["rounds"] >= 3, f"the test problem needs several rounds, got {ref.info['rounds']}"

    out, ck = tmp_path / "g.json", tmp_path / "ck.npz"
    first = subprocess.Popen(_solve_cmd(out, ck), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not ck.exists():
        assert first.poll() is None, "the solve ended before writing a checkpoint"
        assert time.monotonic() < deadline
        time.sleep(0.005)
    first.send_signal(signal.SIGKILL)
    first.wait(30)
    assert first.returncode == -signal.SIGKILL and not out.exists()

    resumed = subprocess.run(_solve_cmd(out, ck), capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    got = darrm.load(out)  # re-certified on load
    assert got.info["resumed"] and not ref.info["resumed"]
    assert darrm.certify(got.gamma, got.params).certified
    assert got.status == ref.status and got.info.get("stop") == ref.info.get("stop")
    assert np.max(np.abs(got.gamma - ref.gamma)) <= 1e-9
    assert abs(got.objective - ref.objective) <= 1e-10
    assert not any(f.name.endswith((".tmp", ".lock")) for f in tmp_path.iterdir())

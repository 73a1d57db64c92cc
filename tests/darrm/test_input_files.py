"""Inputs are regular files (issue 24): votes, counts and cached arrays that are, or link to, a
FIFO, a device, a socket or a folder are refused at once with one line naming the option — a FIFO
without a writer used to block ``darrm aggregate`` forever, a link to ``/dev/zero`` to be read
without end."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys

import numpy as np
import pytest

import darrm


@pytest.fixture(scope="module")
def gamma_file(tmp_path_factory):
    p = tmp_path_factory.mktemp("inputs") / "g.json"
    darrm.save(darrm.solve(darrm.PrivacyParams(K=5, m=1, eps=0.1, member_delta=1e-5), family="const"), p)
    return p


@pytest.fixture
def alarm():
    """Fail instead of hanging: a blocking open is interrupted after 10 s."""
    def on_alarm(signum, frame):
        raise TimeoutError("still blocked after 10 s: the input was not refused at once")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


_MAIN = "import sys\nfrom darrm.cli import main\nsys.exit(main(sys.argv[1:]))"


def _special(tmp_path, kind: str, suffix: str):
    p = tmp_path / f"in{suffix}"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "dev-zero":
        p.symlink_to("/dev/zero")
    elif kind == "folder":
        p.mkdir()
    else:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(p))
        return p, s
    return p, None


@pytest.mark.parametrize("suffix", [".npy", ".csv"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "socket", "folder"])
@pytest.mark.parametrize("counts", [False, True])
def test_votes_that_are_no_regular_file_are_refused_at_once(cli, tmp_path, gamma_file, alarm, kind, suffix, counts):
    path, sock = _special(tmp_path, kind, suffix)
    argv = ["aggregate", str(gamma_file), "--votes", str(path), *(["--counts"] if counts else [])]
    try:
        if kind == "dev-zero":  # a reader without the check would eat all memory: a child with 2 GiB
            r = subprocess.run([sys.executable, "-c", _MAIN, *argv], capture_output=True, text=True, timeout=120,
                               preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30)))
            rc, out, err = r.returncode, r.stdout, r.stderr
        else:
            rc, out, err = cli(*argv)
    finally:
        if sock is not None:
            sock.close()
    assert rc == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith("darrm: error: votes: ") and "not a regular file" in err


def test_a_regular_file_still_reads(tmp_path, alarm):
    from darrm.strict_json import open_regular

    p = tmp_path / "v.npy"
    np.save(p, np.eye(2, dtype=np.int64))
    link = tmp_path / "link.npy"
    link.symlink_to(p)  # symlinks are followed
    with open_regular(link) as fh:
        assert (np.load(fh) == np.eye(2)).all()


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "socket", "folder"])
def test_a_cached_array_that_is_no_regular_file_is_refused(tmp_path, alarm, kind):
    from darrm.experiments.cache import load_npy
    from darrm.strict_json import StrictJSONError

    path, sock = _special(tmp_path, kind, ".npy")
    try:
        with pytest.raises(StrictJSONError, match="not a regular file"):
            load_npy(path)
    finally:
        if sock is not None:
            sock.close()

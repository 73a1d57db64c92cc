"""The target rule of every output (darrm.atomic) and the safety of its lock sidecar (darrm.locking).

An output is a regular file: a symlink is followed to the file it names (the link stays), a
device, FIFO, socket or directory is refused (exit 2, one line naming the option) and left as it
was, a folder where nothing can be created (/proc) is refused up front, a replaced file keeps its
mode, and the rename is made durable by fsyncing the folder.  The lock sidecar is never followed
through a symlink, never a non-regular file, never another user's, and never leaks its lock.
"""

from __future__ import annotations

import errno
import os
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

import darrm
from darrm import atomic, locking
from darrm.atomic import atomic_write_bytes
from darrm.errors import ParameterError
from darrm.locking import claim, lock_file
from darrm.paths import check_writable


@pytest.fixture(scope="module")
def table():
    return darrm.solve(darrm.PrivacyParams(K=5, m=1, eps=0.1, member_delta=1e-5), family="const")


def _fifo(tmp_path):
    p = tmp_path / "fifo"
    os.mkfifo(p)
    return p


def _socket(tmp_path):
    p = tmp_path / "sock"
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(str(p))
    return p, s


def _char_device(tmp_path):
    """A private copy of /dev/null (1, 3) in tmp_path: needs root (CAP_MKNOD)."""
    p = tmp_path / "null"
    try:
        os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
    except (PermissionError, OSError) as exc:
        pytest.skip(f"cannot create a device node here: {exc}")
    return p


def _kind(p) -> int:
    return stat.S_IFMT(os.lstat(p).st_mode)


def test_a_fifo_a_socket_and_a_directory_are_refused_and_left_alone(tmp_path):
    fifo = _fifo(tmp_path)
    sock, s = _socket(tmp_path)
    folder = tmp_path / "dir"
    folder.mkdir()
    try:
        for target, kind in ((fifo, stat.S_IFIFO), (sock, stat.S_IFSOCK), (folder, stat.S_IFDIR)):
            with pytest.raises(ParameterError, match=r"^out: .*(FIFO|socket|directory).*regular files"):
                atomic_write_bytes(target, b"table", name="out")
            assert _kind(target) == kind
    finally:
        s.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "fifo", "sock"]  # no lock, no temporary


def test_a_device_node_is_refused_not_replaced_by_a_file(tmp_path):
    null = _char_device(tmp_path)
    with pytest.raises(ParameterError, match="character device"):
        atomic_write_bytes(null, b"table", name="out")
    assert stat.S_ISCHR(os.lstat(null).st_mode) and os.lstat(null).st_rdev == os.makedev(1, 3)


def test_a_symlink_to_a_device_is_refused_and_the_link_stays(tmp_path):
    null = _char_device(tmp_path)
    link = tmp_path / "out.json"
    link.symlink_to(null)
    with pytest.raises(ParameterError, match="a symlink to .* is a character device"):
        atomic_write_bytes(link, b"table", name="out")
    assert link.is_symlink() and stat.S_ISCHR(os.lstat(null).st_mode)


def test_a_symlink_to_a_regular_file_is_followed_and_kept(tmp_path):
    (tmp_path / "real").mkdir()
    real = tmp_path / "real" / "g.json"
    real.write_bytes(b"old")
    link = tmp_path / "g.json"
    link.symlink_to(real)
    atomic_write_bytes(link, b"new")
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_bytes() == b"new"
    # a dangling link creates the file it names
    dangling = tmp_path / "d.json"
    dangling.symlink_to(tmp_path / "real" / "fresh.json")
    atomic_write_bytes(dangling, b"fresh")
    assert dangling.is_symlink() and (tmp_path / "real" / "fresh.json").read_bytes() == b"fresh"


def test_a_read_only_file_keeps_its_mode(tmp_path):
    target = tmp_path / "ledger.json"
    target.write_bytes(b"old")
    target.chmod(0o444)
    atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"new" and stat.S_IMODE(os.stat(target).st_mode) == 0o444
    target.chmod(0o640)
    atomic_write_bytes(target, b"newer")
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640


def test_the_folder_is_fsynced_after_the_rename(tmp_path, monkeypatch):
    synced: list[tuple[bool, bool]] = []  # (is a folder, the target exists already)
    real_fsync = os.fsync
    target = tmp_path / "g.json"

    def spy(fd):
        synced.append((stat.S_ISDIR(os.fstat(fd).st_mode), target.exists()))
        return real_fsync(fd)

    monkeypatch.setattr(atomic.os, "fsync", spy)
    atomic_write_bytes(target, b"x")
    assert synced == [(False, False), (True, True)]  # the data before the rename, the folder after


def test_outputs_under_proc_are_refused_naming_the_option():
    for target in ("/proc/darrm-out.json", "/proc/self/status"):
        with pytest.raises(ParameterError, match=r"^out: "):
            check_writable("out", target)
    with pytest.raises(ParameterError, match=r"^out: /proc/darrm-out.json: cannot create"):
        atomic_write_bytes("/proc/darrm-out.json", b"x", name="out")


@pytest.mark.parametrize("kind", ["fifo", "symlink-to-device", "proc"])
def test_cli_refuses_a_non_regular_out_with_one_line_and_writes_nothing(cli, tmp_path, table, kind):
    g, votes = tmp_path / "g.json", tmp_path / "v.npy"
    darrm.save(table, g)
    np.save(votes, np.ones((3, 5), dtype=int))
    if kind == "fifo":
        out = _fifo(tmp_path)
    elif kind == "proc":
        out = "/proc/darrm-labels.txt"
    else:
        out = tmp_path / "labels.txt"
        out.symlink_to(_char_device(tmp_path))
    rc, _, err = cli("aggregate", str(g), "--votes", str(votes), "--out", str(out), "--seed", "0")
    assert rc == 2 and err.count("\n") == 1 and err.startswith("darrm: error: out: ")
    if kind != "proc":
        assert not stat.S_ISREG(os.stat(out).st_mode)


def test_every_writer_refuses_a_fifo(tmp_path, table):
    """γ files, checkpoints, plots, experiment figures and caches go through the same rule (labels: the
    CLI test above; ledgers: tests/accounting/test_ledger_file.py)."""
    from darrm.report import plot_gammas
    from darrm.solver.checkpoint import save_checkpoint

    fifo = _fifo(tmp_path)
    with pytest.raises(ParameterError, match="FIFO"):
        darrm.save(table, fifo)
    with pytest.raises(ParameterError, match="FIFO"):
        save_checkpoint(fifo, "fingerprint", np.zeros((1, 2), dtype=np.int64))
    with pytest.raises(ParameterError, match="FIFO"):
        plot_gammas({"const": np.asarray(table.gamma)}, str(fifo))
    from darrm.experiments.cache import save_npy
    from darrm.experiments.png import pyplot, save_png

    with pytest.raises(ParameterError, match="FIFO"):  # experiment results and caches
        save_npy(fifo, np.zeros(3))
    with pytest.raises(ParameterError, match="FIFO"):
        save_png(pyplot("figures").figure(), fifo, dpi=20)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# -- the lock sidecar ---------------------------------------------------------------------------
def test_a_symlinked_lock_sidecar_is_refused_and_its_target_untouched(tmp_path):
    victim = tmp_path / "secret"
    victim.write_bytes(b"do not truncate")
    target = tmp_path / "g.json"
    lock_file(target).symlink_to(victim)
    with pytest.raises(ParameterError, match=r"^out: .*lock file .* is a symlink"):
        atomic_write_bytes(target, b"x", name="out")
    assert victim.read_bytes() == b"do not truncate" and not target.exists()


def test_a_non_regular_lock_sidecar_is_refused(tmp_path):
    target = tmp_path / "g.json"
    os.mkfifo(lock_file(target))
    with pytest.raises(ParameterError, match="lock file .* is not a regular file"):
        atomic_write_bytes(target, b"x", name="out")
    assert not target.exists()


def _nobody() -> tuple[int, int]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    try:
        import pwd

        pw = pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        pytest.skip("no user 'nobody' on this machine")
    return pw.pw_uid, pw.pw_gid


def _as_user(uid: int, gid: int, fn) -> None:
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(gid)
            os.setuid(uid)
            fn()
            code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_another_user_cannot_make_root_truncate_a_file_through_a_lock_symlink(tmp_path, request):
    """`nobody` plants `.g.json.lock -> root's 0600 file` in a shared folder; root's write is refused
    and the file is untouched.  A lock sidecar `nobody` owns is refused too."""
    uid, gid = _nobody()
    shared = Path(tempfile.mkdtemp(prefix="darrm-shared-"))  # tmp_path's parents are 0700: nobody cannot enter
    request.addfinalizer(lambda: shutil.rmtree(shared, ignore_errors=True))
    shared.chmod(0o777)  # world-writable, not sticky: the kernel's symlink protection does not apply
    victim = tmp_path / "root-only"
    victim.write_bytes(b"root's secret")
    victim.chmod(0o600)
    target = shared / "g.json"
    _as_user(uid, gid, lambda: os.symlink(victim, lock_file(target)))
    assert os.lstat(lock_file(target)).st_uid == uid
    with pytest.raises(ParameterError, match="is a symlink"):
        atomic_write_bytes(target, b"x", name="out")
    assert victim.read_bytes() == b"root's secret"
    os.unlink(lock_file(target))

    def plant_regular():
        fd = os.open(lock_file(target), os.O_CREAT | os.O_WRONLY, 0o644)
        os.close(fd)

    _as_user(uid, gid, plant_regular)
    with pytest.raises(ParameterError, match=r"belongs to another user \(uid %d\)" % uid):
        atomic_write_bytes(target, b"x", name="out")
    assert not target.exists()


def _claim_in_child(target) -> int:
    code = ("import sys\nfrom darrm.locking import claim\nfrom darrm.errors import ParameterError\n"
            "try:\n    claim('out', sys.argv[1]).release()\nexcept ParameterError:\n    sys.exit(3)\n")
    return subprocess.run([sys.executable, "-c", code, str(target)], timeout=60).returncode


@pytest.mark.parametrize("fault", [OSError(errno.ENOSPC, "No space left on device"),
                                   OSError(errno.EFBIG, "File too large"), KeyboardInterrupt()])
def test_a_failed_pid_write_never_leaks_the_lock(tmp_path, monkeypatch, fault):
    """The write of the pid after flock fails (full disk, RLIMIT_FSIZE, an interrupt): either the
    claim is handed out and released normally, or its descriptor is closed — never a lock held
    by nobody, refusing every later writer."""
    target = tmp_path / "ledger.json"

    def failing_write(fd, data):
        raise fault

    monkeypatch.setattr(locking.os, "write", failing_write)
    try:
        claim("out", target).release()
    except KeyboardInterrupt:
        pass
    monkeypatch.undo()
    assert _claim_in_child(target) == 0

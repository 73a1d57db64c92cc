"""Outputs follow a symlink only where the kernel's protected-symlinks rule would.

In a sticky world-writable folder (``/tmp``) any user can create a name; a link planted there by
another user must not make a root command replace the file it names.  The rule (Linux
``fs/namei.c``, ``may_follow_link``): follow when the caller owns the link, or the folder is not
sticky-and-world-writable, or the folder's owner owns the link.  These tests run as root with a
second, real user (created with ``useradd`` and removed afterwards) and are skipped otherwise.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import uuid
from pathlib import Path

import numpy as np
import pytest

import darrm
from darrm.atomic import atomic_write_bytes, follow_allowed, real_target
from darrm.errors import ParameterError

pytestmark = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0 or shutil.which("useradd") is None,
                                reason="needs root and useradd (a second user plants the link)")


@pytest.fixture(scope="module")
def other_uid():
    name = f"darrmp{uuid.uuid4().hex[:8]}"
    made = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                          capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    try:
        import pwd

        yield pwd.getpwnam(name).pw_uid
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def shared(tmp_path):
    """A /tmp-like folder: owned by root, mode 1777 (sticky, world-writable)."""
    d = tmp_path / "shared"
    d.mkdir()
    os.chmod(d, 0o1777)
    return d


@pytest.fixture
def victim(tmp_path):
    """A root-only file the planted link points at."""
    p = tmp_path / "secret" / "shadow"
    p.parent.mkdir()
    p.write_text("root only\n")
    os.chmod(p, 0o600)
    return p


def _plant(link: Path, target: Path, uid: int) -> Path:
    link.symlink_to(target)
    os.lchown(link, uid, uid)
    return link


def _untouched(victim: Path) -> None:
    assert victim.read_text() == "root only\n"
    assert sorted(p.name for p in victim.parent.iterdir()) == ["shadow"], "something was written beside it"


def test_the_rule_is_the_kernels(other_uid):
    """follow_allowed against the three clauses of may_follow_link, every combination."""
    for link_uid in (0, other_uid):
        for dir_uid in (0, other_uid):
            for mode in (0o1777, 0o0777, 0o1755, 0o0755):
                link = os.stat_result((stat.S_IFLNK | 0o777, 0, 0, 1, link_uid, 0, 0, 0, 0, 0))
                folder = os.stat_result((stat.S_IFDIR | mode, 0, 0, 1, dir_uid, 0, 0, 0, 0, 0))
                protected = mode & 0o1002 == 0o1002
                expect = link_uid == 0 or not protected or link_uid == dir_uid
                assert follow_allowed(link, folder, 0) is expect, (link_uid, dir_uid, oct(mode))


def test_a_link_planted_by_another_user_is_refused_and_nothing_written(other_uid, shared, victim):
    out = _plant(shared / "out.json", victim, other_uid)
    with pytest.raises(ParameterError, match=r"^out: .*symlink owned by uid \d+ in the sticky world-writable"):
        atomic_write_bytes(out, b"gamma", name="out")
    _untouched(victim)
    assert out.is_symlink() and sorted(p.name for p in shared.iterdir()) == ["out.json"]


def test_a_planted_link_to_a_folder_on_the_way_is_refused(other_uid, shared, victim):
    hop = _plant(shared / "hop", victim.parent, other_uid)
    with pytest.raises(ParameterError, match="protected-symlinks"):
        atomic_write_bytes(hop / "shadow", b"gamma", name="out")
    _untouched(victim)


def test_links_the_kernel_follows_are_followed(other_uid, shared, tmp_path):
    # the caller's own link in the shared folder
    mine = tmp_path / "mine.json"
    (shared / "own").symlink_to(mine)
    atomic_write_bytes(shared / "own", b"a", name="out")
    assert mine.read_bytes() == b"a" and (shared / "own").is_symlink()
    # another user's link in a folder that is not sticky and world-writable
    plain = tmp_path / "plain"
    plain.mkdir()
    theirs = tmp_path / "theirs.json"
    _plant(plain / "l", theirs, other_uid)
    atomic_write_bytes(plain / "l", b"b", name="out")
    assert theirs.read_bytes() == b"b"
    # a link owned by the owner of a sticky world-writable folder (their own /tmp-like folder)
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o1777)
    os.chown(home, other_uid, other_uid)
    target = tmp_path / "owners.json"
    _plant(home / "l", target, other_uid)
    atomic_write_bytes(home / "l", b"c", name="out")
    assert target.read_bytes() == b"c"
    assert real_target(home / "l") == target


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = tmp_path_factory.mktemp("inputs")
    table = darrm.solve(darrm.PrivacyParams(K=3, m=1, eps=0.1, member_delta=1e-5), family="const")
    darrm.save(table, d / "g.json")
    np.save(d / "v.npy", np.ones((3, 3), dtype=int))
    return d, table


@pytest.mark.parametrize("option", ["solve --out", "solve --checkpoint", "aggregate --out", "shuffle --plot"])
def test_every_cli_writer_refuses_a_planted_link_exit_2(cli, other_uid, shared, victim, inputs, option):
    d, _ = inputs
    link = _plant(shared / "target", victim, other_uid)
    argv = {"solve --out": ["--no-progress", "solve", "--K", "3", "--m", "1", "--out", str(link)],
            "solve --checkpoint": ["--no-progress", "solve", "--K", "3", "--m", "1", "--out", str(shared / "g.json"),
                                   "--checkpoint", str(link)],
            "aggregate --out": ["aggregate", str(d / "g.json"), "--votes", str(d / "v.npy"), "--out", str(link),
                                "--seed", "0"],
            "shuffle --plot": ["shuffle", "--n", "500", "--eps0", "1", "--delta", "1e-6", "--plot", str(link)]}[option]
    rc, _, err = cli(*argv)
    name = option.split("--")[1]
    assert rc == 2 and err.count("\n") == 1 and err.startswith(f"darrm: error: {name}: "), err
    assert "protected-symlinks" in err
    _untouched(victim)
    assert sorted(p.name for p in shared.iterdir()) == ["target"], "an output was written"


def test_a_labelling_session_refuses_a_planted_ledger_link(other_uid, shared, victim, inputs):
    from darrm.accounting import LabellingSession

    _, table = inputs
    link = _plant(shared / "ledger.json", victim, other_uid)
    with pytest.raises(ParameterError, match=r"^path: .*protected-symlinks"):
        LabellingSession(table, budget_epsilon=1.0, delta=1e-3, member_randomness="fresh", path=link)
    with pytest.raises(ParameterError, match=r"^path: .*protected-symlinks"):
        LabellingSession(table, budget_epsilon=1.0, delta=1e-3, member_randomness="fresh").save(link)
    _untouched(victim)


def test_an_experiment_out_folder_behind_a_planted_link_is_refused_before_any_work(other_uid, shared, victim):
    from darrm.paths import check_output_dirs

    link = _plant(shared / "results", victim.parent, other_uid)
    with pytest.raises(ParameterError, match=r"^out: .*protected-symlinks"):
        check_output_dirs({"out": link})
    _untouched(victim)

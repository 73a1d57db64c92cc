"""Atomic writes leave no temporary files: not on failure, and not after earlier crashes."""

from __future__ import annotations

import os
import time

import pytest

from darrm import atomic
from darrm.atomic import atomic_write_bytes


def _tmps(d):
    return sorted(p.name for p in d.iterdir() if p.name.endswith(".tmp"))


def test_failed_write_removes_its_temporary_file_and_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "g.json"
    target.write_bytes(b"old")

    def fail(*a):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", fail)
    with pytest.raises(OSError, match="disk full"):
        atomic_write_bytes(target, b"new")
    assert target.read_bytes() == b"old" and _tmps(tmp_path) == []

    monkeypatch.setattr(atomic.os, "fsync", lambda fd: (_ for _ in ()).throw(KeyboardInterrupt()))
    with pytest.raises(KeyboardInterrupt):
        atomic_write_bytes(target, b"new")
    assert _tmps(tmp_path) == []


def test_leftovers_of_the_same_target_are_swept(tmp_path):
    """A fresh claim (darrm.locking) means no other writer of g.json is live: every leftover of
    g.json goes, whatever its age; other targets' files and foreign names stay."""
    old = time.time() - 2 * atomic.STALE_AFTER_S
    stale = tmp_path / ".g.json.abcd_123.tmp"
    young = tmp_path / ".g.json.zzzz9999.tmp"  # a kill -9 a moment ago
    other = tmp_path / ".h.json.abcd_123.tmp"  # another target's
    foreign = tmp_path / ".g.json.mine.tmp"  # not the writer's naming pattern
    for p in (stale, young, other, foreign):
        p.write_bytes(b"x")
    for p in (stale, other, foreign):
        os.utime(p, (old, old))
    atomic_write_bytes(tmp_path / "g.json", b"new")
    assert not stale.exists() and not young.exists()
    assert other.exists() and foreign.exists()
    assert (tmp_path / "g.json").read_bytes() == b"new"


def test_under_a_held_claim_only_old_leftovers_are_swept(tmp_path):
    """Under a claim this process already holds (a command's --out), another thread of it may be
    writing: only files older than STALE_AFTER_S go."""
    from darrm.locking import claim

    old = time.time() - 2 * atomic.STALE_AFTER_S
    stale, young = tmp_path / ".g.json.abcd_123.tmp", tmp_path / ".g.json.zzzz9999.tmp"
    for p in (stale, young):
        p.write_bytes(b"x")
    os.utime(stale, (old, old))
    with claim("out", tmp_path / "g.json") as c:
        c.fresh = False  # as after the command's first write
        atomic_write_bytes(tmp_path / "g.json", b"new")
    assert not stale.exists() and young.exists()

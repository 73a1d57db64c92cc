"""The labelling ledger's file handling never forgets a released query: a symlinked ledger does not
fork, two creations cannot reset it, a lowered count cannot be loaded silently, malformed ledgers
are one SessionFileError, and a refused batch is answered at once."""

from __future__ import annotations

import json
import os
import stat

import numpy as np
import pytest

import darrm
from darrm.accounting import LabellingSession, PrivacyBudgetExceeded
from darrm.accounting import session as session_module
from darrm.accounting.ledger_file import MAX_QUERIES, journal_path
from darrm.accounting.session import SessionFileError, _state_checksum
from darrm.errors import ParameterError

PARAMS = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5)


@pytest.fixture(scope="module")
def table():
    return darrm.solve(PARAMS, family="sub")


def _votes(n, seed=0):
    return np.random.default_rng(seed).integers(0, 2, size=(n, 11))


def _session(table, path, **kw):
    return LabellingSession(table, budget_epsilon=50.0, delta=1e-3, member_randomness="fresh", path=path, **kw)


def _rewrite(path, edit) -> None:
    """Edit the ledger and recompute its (unkeyed) checksum: what a deliberate hand edit does."""
    state = json.loads(path.read_text())
    edit(state)
    state["checksum"] = _state_checksum(state)
    path.write_text(json.dumps(state))


def test_a_symlinked_ledger_updates_the_file_it_names_and_cannot_fork(tmp_path, table):
    real = tmp_path / "store" / "ledger.json"
    real.parent.mkdir()
    link = tmp_path / "ledger.json"
    link.symlink_to(real)
    with _session(table, link) as s:
        for i in range(7):
            s.label(_votes(1, i))
    assert link.is_symlink() and json.loads(real.read_text())["queries"] == 7
    resumed = LabellingSession.load(link, table)
    try:
        assert resumed.queries == 7
        with pytest.raises(ParameterError, match="already in use"):  # the same ledger by its real name
            LabellingSession.load(real, table)
    finally:
        resumed.close()


def test_two_creations_on_one_path_cannot_reset_the_ledger(tmp_path, table, monkeypatch):
    """B is created while A is not yet written; A then runs 6 queries and closes before B takes the
    claim.  The existence check must come after the claim, so B is refused and the 6 stay."""
    path = tmp_path / "ledger.json"
    real_claim = session_module.claim
    ran_a = []

    def claim_after_a_lived(name, p, **kw):
        if not ran_a:
            ran_a.append(True)
            monkeypatch.setattr(session_module, "claim", real_claim)
            with _session(table, path) as a:
                a.label(_votes(6))
        return real_claim(name, p, **kw)

    monkeypatch.setattr(session_module, "claim", claim_after_a_lived)
    with pytest.raises(SessionFileError, match="exists there"):
        _session(table, path)
    monkeypatch.undo()
    assert LabellingSession.load(path, table, resume=False).queries == 6


def test_a_lowered_count_is_never_loaded(tmp_path, table, caplog):
    path = tmp_path / "ledger.json"
    with _session(table, path) as s:
        s.label(_votes(5))
        s.label(_votes(4, 1))

    def lower(state):
        state["queries"], state["batches"] = 1, [[state["table_fingerprint"], 1]]

    _rewrite(path, lower)
    resumed = LabellingSession.load(path, table)
    try:
        assert resumed.queries == 9  # the journal's count, not the edited one
        assert "journal 9: charging 9" in caplog.text
        resumed.label(_votes(1, 2))
    finally:
        resumed.close()
    assert json.loads(path.read_text())["queries"] == 10


def test_a_ledger_whose_journal_is_missing_or_rewritten_is_refused(tmp_path, table):
    path = tmp_path / "ledger.json"
    with _session(table, path) as s:
        s.label(_votes(3))
        s.label(_votes(2, 1))
    journal = journal_path(path)
    lines = journal.read_text().splitlines()
    journal.write_text(lines[0] + "\n" + lines[0] + "\n")  # totals that do not grow
    with pytest.raises(SessionFileError, match="journal is corrupt at line 2"):
        LabellingSession.load(path, table)
    journal.unlink()
    with pytest.raises(SessionFileError, match="journal is missing"):
        LabellingSession.load(path, table)
    journal.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(SessionFileError, match="symlink"):
        LabellingSession.load(path, table)


def _deep(n):
    o: object = 0
    for _ in range(n):
        o = [o]
    return o


MALFORMED = {
    "missing key": lambda s: s.pop("budget_epsilon"),
    "non-string fingerprint": lambda s: s.update(table_fingerprint=5),
    "queries = 10**12": lambda s: s.update(queries=10**12, batches=[[s["table_fingerprint"], 10**12]]),
    "secure is 'no'": lambda s: s.update(secure="no"),
    "deep nesting": lambda s: s.update(params={"x": _deep(500)}),
    "5000-deep nesting": lambda s: s.update(params="DEEP"),  # spliced in as text below (json.dumps cannot)
    "huge integer": lambda s: s.update(budget_epsilon=10**400),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_ledgers_are_one_session_file_error(tmp_path, table, case):
    path = tmp_path / "ledger.json"
    with _session(table, path):
        pass
    _rewrite(path, MALFORMED[case])
    if case == "5000-deep nesting":
        path.write_text(path.read_text().replace('"DEEP"', "[" * 5000 + "0" + "]" * 5000))
    with pytest.raises(SessionFileError) as info:
        LabellingSession.load(path, table)
    assert "\n" not in str(info.value)
    assert MAX_QUERIES < 10**12


def test_duplicate_keys_in_a_ledger_are_refused(tmp_path, table):
    path = tmp_path / "ledger.json"
    with _session(table, path):
        pass
    text = path.read_text()
    path.write_text(text.replace('"queries": 0', '"queries": 50, "queries": 0', 1))
    with pytest.raises(SessionFileError, match="duplicate key 'queries'"):
        LabellingSession.load(path, table)


def test_a_ledger_that_links_to_dev_zero_is_refused_without_reading_it(tmp_path, table):
    link = tmp_path / "ledger.json"
    link.symlink_to("/dev/zero")
    dev_lock = "/dev/.zero.lock"  # compared with before: a killed older darrm may have left one
    before = os.lstat(dev_lock).st_ino if os.path.lexists(dev_lock) else None
    with pytest.raises(SessionFileError, match="character device"):
        LabellingSession.load(link, table)
    assert not (tmp_path / ".zero.lock").exists()
    assert (os.lstat(dev_lock).st_ino if os.path.lexists(dev_lock) else None) == before, "a lock made in /dev"
    with pytest.raises(ParameterError, match="character device"):
        _session(table, link)


def test_a_read_only_ledger_keeps_its_mode(tmp_path, table):
    path = tmp_path / "ledger.json"
    with _session(table, path):
        pass
    path.chmod(0o444)
    with LabellingSession.load(path, table) as s:
        s.label(_votes(2))
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o444 and json.loads(path.read_text())["queries"] == 2


def test_a_refused_batch_does_not_search_for_the_remaining_queries(tmp_path, table, monkeypatch):
    """The refusal is immediate: its message does not run remaining_queries()'s search."""
    s = LabellingSession(table, budget_epsilon=1.0, delta=1e-3, member_randomness="fresh")

    def slow(self):
        raise AssertionError("remaining_queries() called while refusing")

    monkeypatch.setattr(LabellingSession, "remaining_queries", slow)
    with pytest.raises(PrivacyBudgetExceeded, match="nothing was released"):
        s.label(_votes(10_000))
    assert s.queries == 0


def test_a_failed_journal_append_charges_nothing_a_failed_save_charges_the_batch(tmp_path, table, monkeypatch):
    path = tmp_path / "ledger.json"
    s = _session(table, path)
    try:
        def full(*a):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(session_module, "append_journal", full)
        with pytest.raises(OSError):
            s.label(_votes(3))
        assert s.queries == 0
        monkeypatch.undo()
        monkeypatch.setattr(LabellingSession, "save", full)
        with pytest.raises(OSError):
            s.label(_votes(3))
        assert s.queries == 3  # charged, never released: the safe direction
        monkeypatch.undo()
    finally:
        s.close()
    assert LabellingSession.load(path, table, resume=False).queries == 3  # the journal remembers it


@pytest.mark.parametrize("code", [28, 27])  # ENOSPC, EFBIG
def test_a_full_disk_while_appending_to_the_journal_names_path_and_leaves_no_torn_line(tmp_path, table, monkeypatch,
                                                                                         code):
    import errno as errno_module

    from darrm.accounting import ledger_file

    assert code in (errno_module.ENOSPC, errno_module.EFBIG)
    path = tmp_path / "ledger.json"
    s = _session(table, path)
    try:
        s.label(_votes(2))
        before = journal_path(path).read_bytes()
        real_write = os.write

        def half_then_full(fd, data):  # the disk fills in the middle of the line
            if len(data) > 4:
                real_write(fd, data[: len(data) // 2])
                raise OSError(code, os.strerror(code))
            return real_write(fd, data)

        monkeypatch.setattr(ledger_file.os, "write", half_then_full)
        with pytest.raises(ParameterError, match="journal") as exc:
            s.label(_votes(3))
        assert exc.value.parameter == "path" and os.strerror(code) in str(exc.value)
        assert "\n" not in str(exc.value)
        assert s.queries == 2  # refused: nothing charged, nothing released
        assert journal_path(path).read_bytes() == before  # the half line was truncated away
        monkeypatch.undo()
        s.label(_votes(3))  # room again: the next append is a clean line
        assert s.queries == 5
    finally:
        s.close()
    assert LabellingSession.load(path, table, resume=False).queries == 5


def test_a_short_journal_write_is_completed_not_torn(tmp_path, table, monkeypatch):
    from darrm.accounting import ledger_file

    path = tmp_path / "ledger.json"
    real_write = os.write
    monkeypatch.setattr(ledger_file.os, "write", lambda fd, data: real_write(fd, data[:3]))
    s = _session(table, path)
    try:
        s.label(_votes(4))
    finally:
        s.close()
    monkeypatch.undo()
    raw = journal_path(path).read_bytes()
    assert raw.endswith(b"\n") and json.loads(raw.splitlines()[-1])["total"] == 4
    assert LabellingSession.load(path, table, resume=False).queries == 4

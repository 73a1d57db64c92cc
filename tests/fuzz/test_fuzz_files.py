"""Fuzz the files darrm writes and reads (issue 24): special files and symlink chains as outputs,
huge integers and duplicate keys in γ files and ledgers.

* an output that is (or whose symlink chain ends in) a FIFO, socket, device or folder is refused by
  ``darrm aggregate --out`` with exit 2 and one line, and left as it was; a chain ending in a regular
  file (or nowhere) is followed and every link stays a link;
* a γ file whose value is replaced by a huge integer, or which repeats a key, is refused by
  ``darrm verify`` with exit 2 and one line, though its checksum matches;
* a ledger with a huge integer, a duplicate key or a value of the wrong type is one
  ``SessionFileError`` line.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import darrm
from darrm.accounting import LabellingSession
from darrm.accounting.session import SessionFileError, _state_checksum
from darrm.gamma_file import checksum

from .test_fuzz_cli import run

#: more examples than the option fuzzers: each is a few milliseconds
FUZZ = settings(max_examples=40, deadline=None, derandomize=True, database=None)

KINDS = ["fifo", "socket", "device", "folder", "regular", "dangling"]


@pytest.fixture(scope="module")
def table():
    return darrm.solve(darrm.PrivacyParams(K=5, m=3, eps=0.1, member_delta=1e-5), family="sub")


@pytest.fixture(scope="module")
def files(tmp_path_factory, table):
    d = tmp_path_factory.mktemp("fuzz_files")
    darrm.save(table, d / "g.json")
    np.save(d / "v.npy", np.random.default_rng(0).integers(0, 2, size=(4, 5)))
    return d


def _make(kind: str, p: Path, keep: list) -> None:
    if kind == "fifo":
        os.mkfifo(p)
    elif kind == "socket":
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(str(p))
        keep.append(s)
    elif kind == "device":
        try:
            os.mknod(p, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except OSError:
            os.symlink("/dev/null", p)  # not root: the real /dev/null, behind a link
    elif kind == "folder":
        p.mkdir()
    elif kind == "regular":
        p.write_text("old labels\n")


@FUZZ
@given(kind=st.sampled_from(KINDS), depth=st.integers(0, 3), relative=st.booleans())
def test_fuzz_output_targets(files, tally, kind, depth, relative):
    tally("files: --out is a special file or a symlink chain")
    keep: list = []
    with tempfile.TemporaryDirectory(prefix="darrm-fuzz-out-") as tmp:
        d = Path(tmp)
        end = d / "end"
        _make(kind, end, keep)
        out = end
        for i in range(depth):  # link_i -> ... -> end
            link = d / f"link{i}"
            link.symlink_to(out.name if relative else out)
            out = link
        before = os.lstat(end).st_mode if os.path.lexists(end) else None
        rc, stdout, err = run(darrm.cli.main, ["aggregate", str(files / "g.json"), "--votes", str(files / "v.npy"),
                                               "--out", str(out), "--seed", "0"])
        for s in keep:
            s.close()
        for i in range(depth):
            assert (d / f"link{i}").is_symlink(), "a link of the chain was replaced"
        if kind in ("regular", "dangling"):
            assert rc == 0, err
            assert len(end.read_text().split()) == 4
        else:
            assert rc == 2 and len(err.splitlines()) == 1 and "out" in err, err
            assert os.lstat(end).st_mode == before, "the special file was replaced"


def _huge(draw_digits: int) -> int:
    return 10 ** (draw_digits - 1) + 7


@FUZZ
@given(key=st.sampled_from(["K", "m", "eps", "Delta", "delta", "objective", "violation"]),
       digits=st.integers(31, 6000), negative=st.booleans())
def test_fuzz_gamma_file_huge_integers(files, tally, key, digits, negative):
    tally("files: γ file with a huge integer")
    d = json.loads((files / "g.json").read_text())
    old = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    if old is not None:
        sys.set_int_max_str_digits(0)  # to write the file only
    try:
        d[key] = -_huge(digits) if negative else _huge(digits)
        d["checksum"] = checksum(d)
        text = json.dumps(d)
    finally:
        if old is not None:
            sys.set_int_max_str_digits(old)
    with tempfile.TemporaryDirectory(prefix="darrm-fuzz-g-") as tmp:
        p = Path(tmp) / "g.json"
        p.write_text(text)
        rc, _, err = run(darrm.cli.main, ["verify", str(p)])
    assert rc == 2 and len(err.splitlines()) == 1 and "digits" in err, err


@FUZZ
@given(key=st.sampled_from(["format", "K", "m", "eps", "Delta", "delta", "gamma", "status", "checksum", "info"]),
       value=st.sampled_from(['"x"', "0", "null", "[]", "{}", "3.5", "true"]), first=st.booleans())
def test_fuzz_gamma_file_duplicate_keys(files, tally, key, value, first):
    tally("files: γ file with a duplicate key")
    text = (files / "g.json").read_text()
    body = text.lstrip()[1:]
    injected = f'"{key}": {value}, '
    text = "{" + (injected + body if first else body.rstrip().rstrip("}") + f', "{key}": {value}' + "}")
    with tempfile.TemporaryDirectory(prefix="darrm-fuzz-g-") as tmp:
        p = Path(tmp) / "g.json"
        p.write_text(text)
        rc, _, err = run(darrm.cli.main, ["verify", str(p)])
    assert rc == 2 and len(err.splitlines()) == 1 and "duplicate key" in err, err


LEDGER_KEYS = ["format", "table_fingerprint", "params", "per_query_epsilon", "per_query_delta", "budget_epsilon",
               "delta", "queries", "secure", "member_randomness", "batches", "journal"]


@FUZZ
@given(key=st.sampled_from(LEDGER_KEYS),
       value=st.one_of(st.sampled_from(["no", "", None, [], {}, 1.5, -1, 10**12, True, [[1]], {"a": {"b": 1}}]),
                       st.integers(31, 500).map(_huge)),
       duplicate=st.booleans())
def test_fuzz_ledger_values(table, tally, key, value, duplicate):
    tally("files: ledger with a wrong value, huge integer or duplicate key")
    with tempfile.TemporaryDirectory(prefix="darrm-fuzz-l-") as tmp:
        p = Path(tmp) / "ledger.json"
        with LabellingSession(table, budget_epsilon=5.0, delta=1e-3, member_randomness="fresh", path=p):
            pass
        state = json.loads(p.read_text())
        if duplicate:  # the original value first, the drawn one second: json.loads would keep the drawn one
            state["checksum"] = _state_checksum({**state, key: value})
            text = json.dumps(state)[:-1] + f", {json.dumps(key)}: {json.dumps(value)}" + "}"
        else:
            if state.get(key) == value and type(state.get(key)) is type(value):
                return  # the same valid value
            state[key] = value
            state["checksum"] = _state_checksum(state)
            text = json.dumps(state)
        p.write_text(text)
        try:
            s = LabellingSession.load(p, table)
        except SessionFileError as exc:
            assert "\n" not in str(exc)
            return
        s.close()
        # accepted only if the value is valid for its key and changed nothing that matters
        assert not duplicate and key in ("journal", "secure") and isinstance(value, bool), (key, value)

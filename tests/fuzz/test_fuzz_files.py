"""Fuzz the files darrm writes and reads (issue 24): special files and symlink chains as outputs
and as inputs, huge integers and duplicate keys in γ files of every kind and in ledgers.

* an output that is (or whose symlink chain ends in) a FIFO, socket, device or folder is refused by
  ``darrm aggregate --out`` with exit 2 and one line, and left as it was; a chain ending in a regular
  file (or nowhere) is followed and every link stays a link;
* an input (γ file, votes, counts, ledger) that is, or whose symlink chain ends in, a FIFO, socket,
  device or folder is refused at once (no blocking on a FIFO, no endless read of ``/dev/zero``)
  with exit 2 and one line (a ``SessionFileError`` for a ledger);
* a γ file of any kind (shared members, disjoint members, grouped members, a total-budget design)
  whose value at any depth is replaced by a huge integer, or whose object at any depth repeats a
  key, is refused by ``darrm verify`` with exit 2 and one line, though its checksum matches;
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
from darrm.gamma_file import checksum, table_to_dict

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


def _reader_argv(reader: str, files: Path, path: Path) -> list[str]:
    g = str(files / "g.json")
    return {"verify": ["verify", str(path)],
            "votes-npy": ["aggregate", g, "--votes", str(path)],
            "votes-csv": ["aggregate", g, "--votes", str(path)],
            "counts": ["aggregate", g, "--votes", str(path), "--counts"],
            "account": ["account", "queries", str(path), "--queries", "2", "--delta-total", "1e-3",
                        "--member-randomness", "fresh"]}[reader]


READERS = ["verify", "votes-npy", "votes-csv", "counts", "account", "ledger"]
SUFFIX = {"votes-npy": ".npy", "votes-csv": ".csv", "counts": ".csv", "ledger": ".json"}


@FUZZ
@given(reader=st.sampled_from(READERS), kind=st.sampled_from(["fifo", "socket", "device", "folder"]),
       depth=st.integers(0, 3), relative=st.booleans())
def test_fuzz_input_special_files(files, table, bad, tally, reader, kind, depth, relative):
    tally("files: an input is a special file or a symlink chain to one")
    keep: list = []
    with tempfile.TemporaryDirectory(prefix="darrm-fuzz-in-") as tmp:
        d = Path(tmp)
        end = d / f"end{SUFFIX.get(reader, '.json')}"
        if kind == "device":  # /dev/zero: a reader that does not check would never stop
            end.symlink_to("/dev/zero")
        else:
            _make(kind, end, keep)
        path = end
        for i in range(depth):
            link = d / f"link{i}{SUFFIX.get(reader, '.json')}"
            link.symlink_to(path.name if relative else path)
            path = link
        try:
            with bad.time_limit():  # a FIFO read without O_NONBLOCK would block here
                if reader == "ledger":
                    with pytest.raises(SessionFileError) as info:
                        LabellingSession.load(path, table)
                    rc, err = 2, str(info.value) + "\n"
                else:
                    rc, _, err = run(darrm.cli.main, _reader_argv(reader, files, path))
        finally:
            for sock in keep:
                sock.close()
        assert rc == 2 and len(err.splitlines()) == 1, (rc, err)
        assert "regular file" in err, err
        assert sorted(p.name for p in d.iterdir() if p.name.endswith(".lock")) == [], "a lock was left"


GAMMA_KINDS = ["shared", "disjoint", "groups", "budget"]


@pytest.fixture(scope="module")
def gamma_files(table) -> dict[str, dict]:
    """One valid γ file (as parsed JSON) of every kind darrm writes."""
    tables = {
        "shared": table,
        "disjoint": darrm.solve(darrm.DisjointParams(5, darrm.LocalRR(1.0), 1.0)),
        "groups": darrm.solve(darrm.GroupParams(((2, 0.2, 1e-4), (1, 0.6, 1e-4)), 0.9, 1e-3)),
        # a total over one query: the same file kind and record, designed without a Q-fold composition
        "budget": darrm.design_for_budget(darrm.PrivacyParams(K=3, m=1, eps=0.3, member_delta=1e-4),
                                          darrm.TotalBudget(1.0, 1e-3, 1)).table,
    }
    out = {}
    for kind, t in tables.items():
        d = table_to_dict(t)
        assert d["format"] == {"shared": "darrm-gamma/1", "disjoint": "darrm-gamma-disjoint/1",
                               "groups": "darrm-gamma-groups/1", "budget": "darrm-gamma/1"}[kind]
        out[kind] = json.loads(json.dumps(d))
    assert "total_budget" in out["budget"]["info"] and out["groups"]["groups"]
    return out


def _paths(obj: object, want, path: tuple = ()) -> list[tuple]:
    """Paths (tuples of keys and indices) to every node of ``obj`` for which ``want(node)``."""
    found = [path] if want(obj) else []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    for k, v in items:
        if k != "checksum":
            found += _paths(v, want, path + (k,))
    return found


def _get(obj, path: tuple):
    for k in path:
        obj = obj[k]
    return obj


def _set(obj, path: tuple, value) -> object:
    """A copy of ``obj`` with the node at ``path`` replaced by ``value``."""
    if not path:
        return value
    c = dict(obj) if isinstance(obj, dict) else list(obj)
    c[path[0]] = _set(obj[path[0]], path[1:], value)
    return c


def _dumps_with_duplicate(obj, where: tuple, key: str, value, first: bool, here: tuple = ()) -> str:
    """JSON text of ``obj`` whose object at ``where`` holds ``key`` twice: ``value`` before (``first``)
    or after its own value."""
    if isinstance(obj, dict):
        pairs = [f"{json.dumps(k)}: {_dumps_with_duplicate(v, where, key, value, first, here + (k,))}"
                 for k, v in obj.items()]
        if here == where:
            extra = f"{json.dumps(key)}: {json.dumps(value)}"
            pairs = [extra] + pairs if first else pairs + [extra]
        return "{" + ", ".join(pairs) + "}"
    if isinstance(obj, list):
        return "[" + ", ".join(_dumps_with_duplicate(v, where, key, value, first, here + (i,))
                               for i, v in enumerate(obj)) + "]"
    return json.dumps(obj)


def _verify_text(text: str) -> tuple[int, str]:
    with tempfile.TemporaryDirectory(prefix="darrm-fuzz-g-") as tmp:
        p = Path(tmp) / "g.json"
        p.write_text(text)
        rc, _, err = run(darrm.cli.main, ["verify", str(p)])
    return rc, err


def _numeric(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


@FUZZ
@given(kind=st.sampled_from(GAMMA_KINDS), where=st.integers(0, 10**6), digits=st.integers(31, 6000),
       negative=st.booleans())
def test_fuzz_gamma_file_huge_integers(gamma_files, tally, kind, where, digits, negative):
    """Any number of any γ file kind, at any depth (γ entries, groups, the budget's queries …)."""
    tally("files: γ file with a huge integer")
    d = gamma_files[kind]
    paths = _paths(d, _numeric)
    path = paths[where % len(paths)]
    old = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    if old is not None:
        sys.set_int_max_str_digits(0)  # to write the file only
    try:
        e = _set(d, path, -_huge(digits) if negative else _huge(digits))
        e["checksum"] = checksum(e)
        text = json.dumps(e)
    finally:
        if old is not None:
            sys.set_int_max_str_digits(old)
    rc, err = _verify_text(text)
    assert rc == 2 and len(err.splitlines()) == 1 and "digits" in err, (kind, path, err)


@FUZZ
@given(kind=st.sampled_from(GAMMA_KINDS), where=st.integers(0, 10**6), pick=st.integers(0, 10**6),
       value=st.sampled_from(['"x"', 0, None, [], {}, 3.5, True]), first=st.booleans())
def test_fuzz_gamma_file_duplicate_keys(gamma_files, tally, kind, where, pick, value, first):
    """A repeated key in any object of any γ file kind (the top level, info, the total budget …); the
    checksum matches what json.loads would read (the last value)."""
    tally("files: γ file with a duplicate key")
    d = gamma_files[kind]
    objects = [p for p in _paths(d, lambda x: isinstance(x, dict) and bool(x))]
    at = objects[where % len(objects)]
    keys = [k for k in _get(d, at) if at or k != "checksum"]
    key = keys[pick % len(keys)]
    effective = d if first else _set(d, at + (key,), value)  # what json.loads would keep
    effective = dict(effective)
    effective["checksum"] = checksum(effective)
    if first:
        text = _dumps_with_duplicate(effective, at, key, value, True)
    else:
        text = _dumps_with_duplicate(_set(effective, at + (key,), _get(d, at + (key,))), at, key, value, False)
    rc, err = _verify_text(text)
    assert rc == 2 and len(err.splitlines()) == 1 and "duplicate key" in err, (kind, at, key, err)


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


#: values a hand edit may leave in any field: wrong types, out-of-range and non-finite numbers
ODD_VALUES = ["no", "", None, [], {}, True, False, -1, 0, 1e308, -1e-300, 2**62, 0.5, [[1]], {"a": 1}]


@FUZZ
@given(kind=st.sampled_from(GAMMA_KINDS), where=st.integers(0, 10**6), value=st.sampled_from(ODD_VALUES))
def test_fuzz_gamma_file_wrong_values(gamma_files, tally, kind, where, value):
    """Any field of any γ file kind, at any depth, set to an odd value with a recomputed checksum: one
    line and exit 2, or exit 0 where the file stays valid (never an internal error).  Accepted edits
    are metadata (``info``, ``objective``, ``prior``, ``version``: not re-derived on load) or
    parameters whose certificate still holds (a member Δ lowered to 0)."""
    tally("files: γ file with a wrong value (valid checksum)")
    d = gamma_files[kind]
    paths = _paths(d, lambda x: not isinstance(x, (dict, list)) or not x)
    path = paths[where % len(paths)]
    e = _set(d, path, value)
    e["checksum"] = checksum(e)
    rc, err = _verify_text(json.dumps(e))
    assert rc in (0, 2), (kind, path, value, err)
    if rc == 2:
        assert len(err.splitlines()) == 1, err
    else:  # accepted: metadata, or parameters the certificate re-checked; never the format, K or status
        assert path[0] not in ("format", "K", "status"), (kind, path, value)

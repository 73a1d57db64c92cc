"""Malformed γ files are refused with one GammaFileError line (exit 2), never an internal error,
never read past a bound, never read ambiguously: huge integers, duplicate keys, free-form status,
deep nesting, device files.  Each file carries a *valid* checksum, so only the defect is tested."""

from __future__ import annotations

import json
import os

import pytest

import darrm
from darrm.errors import GammaFileError
from darrm.gamma_file import checksum


@pytest.fixture(scope="module")
def good() -> dict:
    table = darrm.solve(darrm.PrivacyParams(K=5, m=1, eps=0.1, member_delta=1e-5), family="sub")
    from darrm.gamma_file import table_to_dict

    return table_to_dict(table)


def _write(path, d: dict, *, raw_patch: tuple[str, str] | None = None) -> None:
    d = dict(d)
    d["checksum"] = checksum(d)
    text = json.dumps(d)
    if raw_patch is not None:
        text = text.replace(*raw_patch, 1)
    path.write_text(text)


def _deep(n: int) -> dict:
    o: dict = {}
    for _ in range(n):
        o = {"x": o}
    return o


CASES = {
    "eps is 10**400": (lambda d: {**d, "eps": 10**400}, None, "digits"),
    "a gamma entry of 5000 digits": (lambda d: {**d, "gamma": [10**4999] + d["gamma"][1:]}, None, "digits"),
    "free-form status": (lambda d: {**d, "status": "optimal-ish, trust me"}, None, "status must be one of"),
    "info nested 500 deep": (lambda d: {**d, "info": _deep(500)}, None, "nested more than"),
    # too deep for json.dumps to write: spliced in as text (the parser must refuse it before the checksum)
    "info nested 5000 deep": (lambda d: {**d, "info": "DEEP"}, ('"DEEP"', '{"x": ' * 5000 + "{}" + "}" * 5000),
                              "nested more than"),
    # the checksum matches the dict json.loads builds (the last "K" wins); a reader seeing the first K=7 differs
    "duplicate key": (lambda d: d, ('"K": 5', '"K": 7, "K": 5'), "duplicate key 'K'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_malformed_gamma_files_are_one_gamma_file_error(tmp_path, good, case):
    edit, patch, words = CASES[case]
    p = tmp_path / "g.json"
    if case == "a gamma entry of 5000 digits":
        import sys

        if hasattr(sys, "set_int_max_str_digits"):
            old = sys.get_int_max_str_digits()
            sys.set_int_max_str_digits(0)  # only to *write* the file
            try:
                _write(p, edit(good), raw_patch=patch)
            finally:
                sys.set_int_max_str_digits(old)
        else:  # pragma: no cover
            _write(p, edit(good), raw_patch=patch)
    else:
        _write(p, edit(good), raw_patch=patch)
    with pytest.raises(GammaFileError, match=words) as info:
        darrm.load(p)
    assert "\n" not in str(info.value)


def test_cli_verify_of_a_malformed_file_is_one_line_exit_2(cli, tmp_path, good):
    p = tmp_path / "g.json"
    _write(p, {**good, "eps": 10**400})
    rc, out, err = cli("verify", str(p))
    assert rc == 2 and err.count("\n") == 1 and "digits" in err


@pytest.mark.parametrize("target", ["/dev/zero", "fifo"])
def test_a_device_or_fifo_behind_a_symlink_is_refused_without_reading_it(tmp_path, target):
    if target == "fifo":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)  # no writer: an unbounded or blocking read would hang the test
    link = tmp_path / "g.json"
    link.symlink_to(target)
    with pytest.raises(GammaFileError, match="not a regular file"):
        darrm.load(link)


def test_the_valid_file_still_loads(tmp_path, good):
    p = tmp_path / "g.json"
    _write(p, good)
    assert darrm.load(p).status is None

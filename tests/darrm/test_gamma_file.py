import json
import os

import numpy as np
import pytest

from darrm import gamma_file
from darrm.errors import GammaFileError
from darrm.gamma import gamma_sub
from darrm.params import PrivacyParams
from darrm.solver.gamma_opt import solve_gamma_opt
from darrm.table import GammaTable


@pytest.fixture(scope="module")
def table():
    return solve_gamma_opt(PrivacyParams(11, 3, 0.1, 1e-5))


def test_round_trip_is_bit_exact_and_recertified(table, tmp_path):
    path = tmp_path / "g.json"
    gamma_file.save(table, path)
    back = gamma_file.load(path)
    np.testing.assert_array_equal(back.gamma, table.gamma)
    assert back.params == table.params and back.violation <= 1e-12
    d = json.loads(path.read_text())
    for key in ("K", "m", "eps", "Delta", "delta", "prior", "gamma", "solver", "status", "violation", "version",
                "checksum"):
        assert key in d
    assert len(d["gamma"]) == 12


def _rewrite(path, mutate, fix_checksum):
    d = json.loads(path.read_text())
    mutate(d)
    if fix_checksum:
        d["checksum"] = gamma_file.checksum(d)
    path.write_text(json.dumps(d))


def test_edited_file_fails_checksum(table, tmp_path):
    path = tmp_path / "g.json"
    gamma_file.save(table, path)
    _rewrite(path, lambda d: d["gamma"].__setitem__(5, 1.0), fix_checksum=False)
    with pytest.raises(GammaFileError, match="checksum"):
        gamma_file.load(path)


def test_non_private_table_with_valid_checksum_fails_certificate(table, tmp_path):
    path = tmp_path / "g.json"
    gamma_file.save(table, path)

    def to_majority(d):
        d["gamma"] = [1.0] * 12

    _rewrite(path, to_majority, fix_checksum=True)
    with pytest.raises(GammaFileError, match="NOT"):
        gamma_file.load(path)


@pytest.mark.parametrize(
    "mutate,match",
    [
        (lambda d: d.pop("gamma"), "missing"),
        (lambda d: d.__setitem__("K", 10), "K"),
        (lambda d: d.__setitem__("eps", -1), "eps"),
        (lambda d: d.__setitem__("gamma", [0.5] * 11), "gamma"),
        (lambda d: d.__setitem__("format", "other/9"), "format"),
    ],
)
def test_invalid_content_is_rejected_with_a_clear_error(table, tmp_path, mutate, match):
    path = tmp_path / "g.json"
    gamma_file.save(table, path)
    _rewrite(path, mutate, fix_checksum=True)
    with pytest.raises(GammaFileError, match=match):
        gamma_file.load(path)


@pytest.mark.parametrize("content", [b"", b"{not json", b"[1, 2]", b"\xff\xfe"])
def test_corrupt_files_are_rejected(tmp_path, content):
    path = tmp_path / "g.json"
    path.write_bytes(content)
    with pytest.raises(GammaFileError):
        gamma_file.load(path)


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(GammaFileError, match="cannot read"):
        gamma_file.load(tmp_path / "absent.json")


def test_uncertified_table_is_never_written(tmp_path):
    P = PrivacyParams(11, 3, 0.1, 1e-5)
    bad = GammaTable(P, np.ones(12), "custom", 0.0)
    with pytest.raises(GammaFileError, match="uncertified"):
        gamma_file.save(bad, tmp_path / "g.json")
    assert not (tmp_path / "g.json").exists()


def test_failed_write_leaves_old_file_intact_and_no_temp(table, tmp_path, monkeypatch):
    path = tmp_path / "g.json"
    gamma_file.save(table, path)
    before = path.read_bytes()

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    other = GammaTable(table.params, gamma_sub(11, 3), "sub", 0.0)
    with pytest.raises(OSError):
        gamma_file.save(other, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["g.json"]

"""Folders the user names are used or refused, never skipped: an explicit --data-dir or $DARRM_DATA
is the only place searched, $DARRM_CACHE is checked before any work, a cache or output inside the
named data folder is refused, and an unreadable candidate folder is skipped, not fatal."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from darrm.errors import ParameterError
from darrm.experiments.cli import main as experiments_main
from darrm.experiments.data import loader
from darrm.experiments.data.loader import DatasetError, find_dataset_dir, load_dataset
from darrm.experiments.data import locations


def check_locations(out, cache_override, data_override) -> None:
    locations.check_locations(out, cache_override, data_override)


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for var in ("DARRM_CACHE", "DARRM_DATA"):
        monkeypatch.delenv(var, raising=False)


def _fake_files(d: Path, missing: str | None = None) -> Path:
    d.mkdir(parents=True, exist_ok=True)
    for f in loader.FILES:
        if f != missing:
            (d / f"{f}.gz").write_bytes(b"")
    return d


def test_an_explicit_data_dir_missing_a_file_is_reported_not_skipped(tmp_path, monkeypatch):
    named = _fake_files(tmp_path / "mine" / "mnist", missing="t10k-labels-idx1-ubyte")
    elsewhere = _fake_files(tmp_path / "elsewhere" / "mnist")  # a complete copy the search must not fall back to
    monkeypatch.setattr(loader, "candidate_dirs", lambda name, data_dir=None: [elsewhere])
    assert find_dataset_dir("mnist", tmp_path / "mine") is None
    with pytest.raises(DatasetError, match=r"^data-dir: .*mine does not hold the mnist files"):
        load_dataset("mnist", tmp_path / "mine", allow_download=False)
    assert named.is_dir()


def test_darrm_data_is_the_only_place_searched_and_must_be_a_folder(tmp_path, monkeypatch):
    elsewhere = _fake_files(tmp_path / "elsewhere" / "mnist")
    monkeypatch.setattr(loader, "candidate_dirs", lambda name, data_dir=None: [elsewhere])
    monkeypatch.setenv("DARRM_DATA", str(tmp_path / "empty"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"^DARRM_DATA: "):
        load_dataset("mnist", allow_download=False)
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("DARRM_DATA", str(tmp_path / "afile"))
    with pytest.raises(ParameterError, match=r"^DARRM_DATA: .* is not a directory"):
        load_dataset("mnist", allow_download=False)


def test_darrm_cache_is_checked_before_any_work(tmp_path, monkeypatch, capsys):
    (tmp_path / "afile").write_text("x")
    monkeypatch.setenv("DARRM_CACHE", str(tmp_path / "afile"))
    with pytest.raises(ParameterError, match=r"^DARRM_CACHE: .* not a directory"):
        check_locations(tmp_path / "out", None, None)
    rc = experiments_main(["pate", "--dataset", "mnist", "--out", str(tmp_path / "out"), "--quick"])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and "DARRM_CACHE" in err and not (tmp_path / "out").exists()


def test_a_cache_or_output_inside_the_data_folder_is_refused(tmp_path, monkeypatch):
    data = tmp_path / "data"
    data.mkdir()
    with pytest.raises(ParameterError, match=r"^cache-dir: .* inside the data folder data-dir"):
        check_locations(tmp_path / "out", data / "cache", data)
    with pytest.raises(ParameterError, match=r"^out: .* inside the data folder"):
        check_locations(data / "results", tmp_path / "cache", data)
    monkeypatch.setenv("DARRM_DATA", str(data))
    with pytest.raises(ParameterError, match=r"^cache-dir: .* inside the data folder DARRM_DATA"):
        check_locations(tmp_path / "out", data / "teachers", None)
    check_locations(tmp_path / "out", tmp_path / "cache", None)  # separate folders are fine


def test_an_unreadable_candidate_folder_is_skipped_not_fatal(request):
    """As `nobody`: a root-only 0700 candidate comes first; the readable copy after it is found."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    try:
        import pwd

        nobody = pwd.getpwnam("nobody")
    except (ImportError, KeyError):
        pytest.skip("no user 'nobody'")
    base = Path(tempfile.mkdtemp(prefix="darrm-cands-"))
    request.addfinalizer(lambda: shutil.rmtree(base, ignore_errors=True))
    base.chmod(0o755)
    locked = _fake_files(base / "locked" / "mnist")
    (base / "locked").chmod(0o700)
    readable = _fake_files(base / "readable" / "mnist")
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.setgid(nobody.pw_gid)
            os.setuid(nobody.pw_uid)
            loader.candidate_dirs = lambda name, data_dir=None: [locked, readable]
            code = 0 if find_dataset_dir("mnist") == readable else 3
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0

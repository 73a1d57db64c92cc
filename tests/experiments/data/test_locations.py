"""Caches and downloads never land inside an installed package (issue #16).

An installed layout is faked by pointing ``locations.PACKAGE_DIR`` at
``<tmp>/lib/python3.x/site-packages/darrm/experiments`` (with a ``pyproject.toml`` and a
``darrm/__init__.py`` planted around it, so only the install-folder rule can reject it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from darrm.experiments import cache
from darrm.experiments.data import loader, locations


def _inside(path: Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder.resolve())


@pytest.fixture
def installed(tmp_path, monkeypatch) -> Path:
    """A fake wheel install; the user's home in tmp; no DARRM_* variables."""
    site = tmp_path / "lib" / "python3.11" / "site-packages"
    pkg = site / "darrm" / "experiments"
    (pkg / "data").mkdir(parents=True)
    (site / "darrm" / "__init__.py").write_text("")
    (site / "darrm" / "pyproject.toml").write_text("")  # decoys: the install folder rule must win
    (site / "darrm" / "darrm").mkdir()
    (site / "darrm" / "darrm" / "__init__.py").write_text("")
    (site / "data" / "mnist").mkdir(parents=True)  # the old site-packages/data/<name> location
    (site / "shared" / "datasets" / "mnist").mkdir(parents=True)
    monkeypatch.setattr(locations, "PACKAGE_DIR", pkg)
    for var in ("DARRM_CACHE", "DARRM_DATA"):
        monkeypatch.delenv(var, raising=False)
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.chdir(site)  # not even the working directory may pull a path into site-packages
    return site


def test_installed_layout_is_not_a_checkout(installed):
    assert locations.source_checkout() is None


def test_nothing_resolves_inside_site_packages(installed, tmp_path):
    home = tmp_path / "home"
    assert cache.default_cache_dir() == home / ".cache" / "darrm"
    assert locations.data_dir() == home / ".local" / "share" / "darrm"
    for name in loader.DATASETS:
        cands = loader.candidate_dirs(name)
        assert cands and not any(_inside(c, installed) for c in cands), cands
        assert not any("shared" in c.parts for c in cands)  # the shared-dataset search is for checkouts only


def test_download_default_goes_to_the_user_data_dir(installed, tmp_path, monkeypatch):
    def offline(url, timeout):
        raise OSError("offline")

    monkeypatch.setattr(loader.urllib.request, "urlopen", offline)
    with pytest.raises(loader.DatasetError) as err:
        loader.download("mnist")
    message = str(err.value)
    assert str(installed) not in message
    assert not any(p for p in installed.rglob("*.gz"))


def test_overrides_win_in_order_argument_then_environment(installed, tmp_path, monkeypatch):
    assert cache.default_cache_dir(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.setenv("DARRM_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setenv("DARRM_DATA", str(tmp_path / "env-data"))
    assert cache.default_cache_dir() == tmp_path / "env-cache"
    assert cache.default_cache_dir(tmp_path / "arg") == tmp_path / "arg"
    assert locations.data_dir() == tmp_path / "env-data"
    assert locations.data_dir(tmp_path / "arg") == tmp_path / "arg"


def test_source_checkout_keeps_its_repository_folders(tmp_path, monkeypatch):
    repo = tmp_path / "work" / "repo"
    (repo / "experiments").mkdir(parents=True)
    (repo / "darrm").mkdir()
    (repo / "darrm" / "__init__.py").write_text("")
    (repo / "pyproject.toml").write_text("")
    monkeypatch.setattr(locations, "PACKAGE_DIR", repo / "experiments")
    for var in ("DARRM_CACHE", "DARRM_DATA"):
        monkeypatch.delenv(var, raising=False)
    assert locations.source_checkout() == repo
    assert cache.default_cache_dir() == repo / "data" / "cache"
    assert locations.data_dir() == repo / "data"
    cands = loader.candidate_dirs("mnist")
    assert cands[:2] == [tmp_path / "work" / "shared" / "datasets" / "mnist", repo / "data" / "mnist"]


def test_this_test_run_is_a_checkout():
    root = locations.source_checkout()
    assert root is not None and (root / "tests" / "experiments" / "data" / Path(__file__).name).is_file()


def test_missing_message_names_the_download_folder(installed, tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "candidate_dirs", lambda name, data_dir=None: [tmp_path / "nowhere"])
    with pytest.raises(loader.DatasetError) as err:
        loader.load_dataset("mnist", allow_download=False)
    assert str(tmp_path / "home" / ".local" / "share" / "darrm" / "mnist") in str(err.value)

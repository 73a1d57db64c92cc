"""The accounting and experiments layers install under the darrm namespace (issue 14)."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"darrm": "darrm", "darrm.accounting": "accounting", "darrm.experiments": "experiments"}


def test_every_package_folder_is_listed_in_pyproject():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert cfg["package-dir"] == FOLDERS
    found = set()
    for name, folder in FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / folder)
            found.add(name if rel == Path(".") else name + "." + ".".join(rel.parts))
    assert found == set(cfg["packages"])


def test_a_users_own_accounting_and_experiments_modules_cannot_shadow_darrm(tmp_path):
    (tmp_path / "accounting.py").write_text("raise SystemExit('shadowed accounting')\n")
    (tmp_path / "experiments").mkdir()
    (tmp_path / "experiments" / "__init__.py").write_text("raise SystemExit('shadowed experiments')\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    for args in (["-m", "darrm.cli", "account", "--help"], ["-m", "darrm.experiments.cli", "--help"],
                 ["-c", "import darrm.accounting, darrm.experiments; print('ok')"]):
        r = subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert r.returncode == 0 and "shadowed" not in r.stdout + r.stderr, (args, r.stderr)


def test_project_metadata_names_the_license_and_the_audience():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert "MIT License" in (ROOT / "LICENSE").read_text() and "the darrm developers" in (ROOT / "LICENSE").read_text()
    assert project["authors"] and project["keywords"]
    classifiers = set(project["classifiers"])
    for c in ("Programming Language :: Python :: 3.11", "Programming Language :: Python :: 3.12",
              "Programming Language :: Python :: 3.13", "Operating System :: OS Independent",
              "Topic :: Scientific/Engineering", "Topic :: Security"):
        assert c in classifiers
    assert not any(c.startswith("License ::") for c in classifiers)  # PEP 639: the expression replaces it
    for name in ("CITATION.cff", "CHANGELOG.md"):
        assert (ROOT / name).is_file()


def test_citation_file_prefers_the_paper():
    yaml = __import__("pytest").importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "MIT"
    paper = cff["preferred-citation"]
    assert paper["title"] == "Optimized Tradeoffs for Private Prediction with Majority Ensembling"
    assert [a["family-names"] for a in paper["authors"]] == ["Jiang", "Zhang", "Joshi"]


def test_the_wheel_carries_the_license(tmp_path):
    import shutil
    import zipfile

    import pytest

    src = tmp_path / "src"  # build a copy: pip builds in-tree and would leave build/ in the checkout
    skip = shutil.ignore_patterns("__pycache__", "*.egg-info", "results", "*.png")
    for name in ("darrm", "accounting", "experiments"):
        shutil.copytree(ROOT / name, src / name, ignore=skip)
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, src / name)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(tmp_path), str(src)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0 and ("No matching distribution" in r.stderr or "Could not find a version" in r.stderr):
        pytest.skip("the build backend (setuptools>=77) cannot be fetched here")
    assert r.returncode == 0, r.stderr
    (wheel,) = tmp_path.glob("darrm-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
        assert "darrm/accounting/session.py" in names and "darrm/secure_random.py" in names
    assert "License-Expression: MIT" in meta and "License-File: LICENSE" in meta

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

"""ruff and mypy are clean (issue #16): both run as part of the suite, their output shown on failure.

They come with the ``dev`` extra (and so with ``all``); without them the checks are skipped, saying so.
mypy has no notion of setuptools' ``package-dir`` (``accounting/`` and ``experiments/`` install as
``darrm.accounting`` and ``darrm.experiments``), so it runs in a temporary tree of symlinks laid out
as installed (``docs/hooks/installed_layout.py``, which the docs build uses too), with the
repository's ``[tool.mypy]`` configuration; reported paths are installed module paths
(``darrm/accounting/session.py`` is ``accounting/session.py`` here).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _layout_module():
    """docs/hooks/installed_layout.py: one implementation of the layout, shared with the docs build."""
    spec = importlib.util.spec_from_file_location("installed_layout", ROOT / "docs" / "hooks" / "installed_layout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


installed_layout = _layout_module().installed_layout

# TEMPORARY (issue #16, to be emptied when the branches are merged): files being rewritten on
# other branches at the time of writing; their findings are tolerated here, every other file must
# be clean.  With both sets empty the checks require a plain exit status 0.
RUFF_PENDING: frozenset[str] = frozenset()
MYPY_PENDING: frozenset[str] = frozenset()


def _tool(module: str) -> None:
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed (pip install -e '.[dev]')")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run([sys.executable, "-m", *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=600)


def _findings(output: str, pattern: str) -> set[str]:
    return {m.group(1) for m in re.finditer(pattern, output, re.M)}


def _check(r: subprocess.CompletedProcess[str], pending: frozenset[str], pattern: str) -> None:
    out = r.stdout + r.stderr
    if not pending:
        assert r.returncode == 0, out
        return
    assert r.returncode in (0, 1), out  # 1: findings; anything else is a crash or a usage error
    if r.returncode == 1:
        found = _findings(out, pattern)
        assert found, out  # exit 1 must come with findings we can read
        assert found <= pending, out


def test_ruff_is_clean():
    _tool("ruff")
    r = _run(["ruff", "check", "--no-cache", "--output-format", "concise", "."], ROOT)
    _check(r, RUFF_PENDING, r"^([^\s:]+\.py):\d+:\d+: ")


def test_installed_layout_mirrors_the_package_dir_mapping(tmp_path):
    tree = installed_layout(tmp_path)
    assert (tree / "darrm" / "__init__.py").resolve() == ROOT / "darrm" / "__init__.py"
    assert (tree / "darrm" / "accounting" / "session.py").resolve() == ROOT / "accounting" / "session.py"
    assert (tree / "darrm" / "experiments" / "cli.py").resolve() == ROOT / "experiments" / "cli.py"


def test_mypy_is_clean(tmp_path):
    _tool("mypy")
    tree = installed_layout(tmp_path / "tree")
    r = _run(["mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(tmp_path / "cache")], tree)
    _check(r, MYPY_PENDING, r"^([^\s:]+\.py):\d+: error: ")
    assert "Success" in r.stdout or r.returncode == 1, r.stdout + r.stderr

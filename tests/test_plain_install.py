"""A plain ``pip install darrm`` (no extras): the command lines work without torch and Opacus.

Each check runs in a subprocess whose import system refuses ``torch`` and ``opacus`` (a
meta-path finder raising ImportError), as on a machine where they were never installed.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

BLOCK = """
import runpy, sys
class _NoExtras:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] in ('torch', 'opacus'):
            raise ImportError(f'No module named {name!r}')
        return None
sys.meta_path.insert(0, _NoExtras())
module = sys.argv[1]
sys.argv = [module] + sys.argv[2:]
runpy.run_module(module, run_name='__main__', alter_sys=True)
"""

EXTRA = "pip install 'darrm[experiments]'"


def _run(module: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK, module, *args], capture_output=True, text=True, timeout=300)


def test_the_blocker_blocks():
    r = subprocess.run([sys.executable, "-c", BLOCK.replace("runpy.run_module", "import torch; runpy.run_module"),
                        "darrm.cli", "--help"], capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "No module named 'torch'" in r.stderr


@pytest.mark.parametrize("args", [["--help"], ["simulations", "--help"], ["pate", "--help"], ["disjoint", "--help"]])
def test_experiments_help_without_torch(args):
    r = _run("darrm.experiments.cli", *args)
    assert r.returncode == 0, r.stderr
    assert "usage: darrm-experiments" in r.stdout


def test_pate_without_torch_is_one_line_naming_the_extra(tmp_path):
    r = _run("darrm.experiments.cli", "pate", "--dataset", "mnist", "--quick", "--out", str(tmp_path / "out"))
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and EXTRA in lines[0] and "torch" in lines[0], r.stderr
    assert not (tmp_path / "out").exists()


def test_account_dpsgd_default_is_pld_without_opacus():
    r = _run("darrm.cli", "account", "dpsgd", "--noise-multiplier", "12", "--n-samples", "1024",
             "--delta", "1e-4", "--json")
    assert r.returncode == 0, r.stderr
    results = json.loads(r.stdout)["results"]
    assert [x["accountant"] for x in results] == ["pld"]
    assert 0.07 < results[0]["epsilon"] < 0.09  # the paper's teachers: PLD ≈ 0.079 (PRV 0.0892 = tight + 0.01)


@pytest.mark.parametrize("accountant", ["prv", "rdp", "all"])
def test_account_dpsgd_opacus_accountants_name_the_extra(accountant):
    r = _run("darrm.cli", "account", "dpsgd", "--noise-multiplier", "12", "--n-samples", "1024",
             "--delta", "1e-4", "--accountant", accountant)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and EXTRA in lines[0] and "opacus" in lines[0], r.stderr

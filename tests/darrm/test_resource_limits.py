"""Issue 15, resources: memory is estimated before any work, and loaded files are bounded too.

* ``available_memory`` is the smallest of MemAvailable, the memory cgroup's room and RLIMIT_AS's
  room (a container or ``ulimit -v`` kills first, not the machine);
* a certificate (``certify``, ``load``, ``darrm verify``) estimates its peak memory first and is
  refused past ``max_memory`` / ``--max-memory`` (or the memory available), naming it;
* under a real address-space limit, ``darrm solve``/``verify`` at K = 201, Δ > 0 exit 2 with one
  line instead of running into MemoryError.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import darrm
from darrm import api
from darrm.backends import resources
from darrm.errors import ParameterError
from darrm.gamma_file import table_to_dict
from darrm.privacy import certify as certify_module

GiB = 2**30
BIG = darrm.PrivacyParams(K=201, m=3, eps=0.1, member_delta=1e-5)  # sweep ≈ 2.8 GiB (sweep_memory)


def crafted(path: Path, params=BIG) -> Path:
    """A small γ file with a valid checksum claiming ``params`` (γ ≡ ½: nothing is cheap to certify)."""
    table = darrm.GammaTable(params, np.full(params.K + 1, 0.5), "custom", 0.0)
    path.write_text(json.dumps(table_to_dict(table)))
    return path


@pytest.fixture
def no_sweep(monkeypatch):
    """Fail the test if an exhaustive sweep starts (the refusal must come first)."""
    def started(*a, **k):
        raise AssertionError("the sweep started before the memory check")
    monkeypatch.setattr(certify_module, "sweep", started)




def one_line(err: str, name: str) -> bool:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    return len(lines) == 1 and "Traceback" not in err and f"{name}:" in lines[0]


# -- available_memory: the smallest of the machine, the cgroup and the address-space limit ------

def _cgroup_tree(tmp_path: Path, v2: dict | None = None, v1: dict | None = None) -> tuple[str, str]:
    """A fake /sys/fs/cgroup and /proc/self/cgroup; v2/v1: {relative folder: (limit, usage)}."""
    root = tmp_path / "cgroup"
    lines = []
    for rel, (limit, usage) in (v2 or {}).items():
        d = root / rel
        d.mkdir(parents=True, exist_ok=True)
        (d / "memory.max").write_text(f"{limit}\n")
        (d / "memory.current").write_text(f"{usage}\n")
    if v2:
        lines.append(f"0::/{max(v2, key=len)}")
    for rel, (limit, usage) in (v1 or {}).items():
        d = root / "memory" / rel
        d.mkdir(parents=True, exist_ok=True)
        (d / "memory.limit_in_bytes").write_text(f"{limit}\n")
        (d / "memory.usage_in_bytes").write_text(f"{usage}\n")
    if v1:
        lines.append(f"4:memory:/{max(v1, key=len)}")
    proc = tmp_path / "self_cgroup"
    proc.write_text("\n".join(lines) + "\n")
    return str(root), str(proc)


def test_cgroup_v2_limit_minus_usage_smallest_over_ancestors(tmp_path):
    root, proc = _cgroup_tree(tmp_path, v2={"": ("max", 10 * GiB), "a": (8 * GiB, 5 * GiB),
                                              "a/b": ("max", 1 * GiB)})
    assert resources._cgroup_available(root, proc) == 3 * GiB


def test_cgroup_v1_limit_and_unlimited_values(tmp_path):
    unlimited = 9223372036854771712  # what cgroup v1 writes for "no limit"
    root, proc = _cgroup_tree(tmp_path, v1={"": (unlimited, 7 * GiB), "svc": (4 * GiB, 3 * GiB)})
    assert resources._cgroup_available(root, proc) == 1 * GiB
    root, proc = _cgroup_tree(tmp_path / "u", v1={"": (unlimited, 7 * GiB)})
    assert resources._cgroup_available(root, proc) is None


def test_cgroup_namespace_falls_back_to_the_mount_root(tmp_path):
    root, proc = _cgroup_tree(tmp_path, v2={"": (2 * GiB, GiB // 2)})
    Path(proc).write_text("0::/not/visible/here\n")
    assert resources._cgroup_available(root, proc) == GiB + GiB // 2


def test_no_cgroup_information_is_unknown(tmp_path):
    assert resources._cgroup_available(str(tmp_path / "none"), str(tmp_path / "missing")) is None


def test_available_memory_is_the_smallest_limit(monkeypatch):
    monkeypatch.setattr(resources, "_meminfo_available", lambda: 20 * GiB)
    monkeypatch.setattr(resources, "_cgroup_available", lambda: 6 * GiB)
    monkeypatch.setattr(resources, "_address_space_available", lambda: 3 * GiB)
    assert resources.available_memory() == 3 * GiB
    monkeypatch.setattr(resources, "_address_space_available", lambda: None)
    assert resources.available_memory() == 6 * GiB
    monkeypatch.setattr(resources, "_cgroup_available", lambda: None)
    assert resources.available_memory() == 20 * GiB
    monkeypatch.setattr(resources, "_meminfo_available", lambda: None)
    assert resources.available_memory() is None


def _child(code: str, timeout: float = 120) -> subprocess.CompletedProcess:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONWARNINGS": "ignore"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, env=env)


#: in a child: import what the command needs, then allow only ~1.5 GiB more address space
_LIMIT = (
    "import resource, sys\n"
    "import darrm.cli, darrm.api, darrm.gamma_file\n"
    "size = int(open('/proc/self/status').read().split('VmSize:')[1].split()[0]) * 1024\n"
    "limit = size + 3 * 2**29\n"
    "resource.setrlimit(resource.RLIMIT_AS, (limit, resource.getrlimit(resource.RLIMIT_AS)[1]))\n"
)


def test_address_space_limit_counts(tmp_path):
    r = _child(_LIMIT + "from darrm.backends.resources import available_memory\n"
                        "a = available_memory(); print(a)\n"
                        "assert a is not None and 0 < a <= 3 * 2**29, a\n")
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("argv", [
    ["--no-progress", "solve", "--K", "201", "--member-delta", "1e-5"],
    ["--no-progress", "verify", "{f}"],
], ids=["solve", "verify"])
def test_K201_under_an_address_space_limit_is_one_line_not_memory_error(tmp_path, argv):
    """Issue 15: K = 201, Δ > 0 under a memory limit ran into MemoryError; now refused up front."""
    f = crafted(tmp_path / "k201.json")
    args = [a.format(f=f) for a in argv]
    t0 = time.monotonic()
    r = _child(_LIMIT + f"sys.exit(darrm.cli.main({args!r}))\n")
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert one_line(r.stderr, "K") and "GiB" in r.stderr and "MemoryError" not in r.stderr, r.stderr
    assert time.monotonic() - t0 < 60


# -- certificates: estimated first, refused past the budget -------------------------------------

def test_certify_refuses_past_max_memory_before_any_work(no_sweep):
    g = np.full(BIG.K + 1, 0.5)
    with pytest.raises(ParameterError, match=r"^max_memory: .*K=201.*GiB"):
        certify_module.certify(g, BIG, max_memory=GiB)
    with pytest.raises(ParameterError, match=r"^max_memory"):
        darrm.certify_tight(g, BIG, max_memory=GiB)
    with pytest.raises(ParameterError, match=r"^max_memory"):
        darrm.certify(g, BIG, max_memory=GiB)
    for bad in (0, -1.0, float("nan"), float("inf"), True, "1G"):
        with pytest.raises(ParameterError, match="max_memory"):
            certify_module.certify(g, BIG, max_memory=bad)


def test_certify_within_budget_is_unchanged():
    P = darrm.PrivacyParams(K=5, m=3, eps=0.1, member_delta=1e-5)
    g = darrm.solve(P, progress=False).gamma
    a = certify_module.certify(g, P)
    b = certify_module.certify(g, P, max_memory=4 * GiB)
    assert a == b and b.certified


def test_certify_with_too_little_memory_available_names_K(monkeypatch, no_sweep):
    monkeypatch.setattr(resources, "available_memory", lambda: GiB)
    with pytest.raises(ParameterError, match=r"^K: .*GiB available"):
        certify_module.certify(np.full(BIG.K + 1, 0.5), BIG)


def test_load_applies_max_memory_to_the_file(tmp_path, no_sweep):
    f = crafted(tmp_path / "k201.json")
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"^max_memory: .*K=201"):
        darrm.load(f, max_memory=GiB)
    assert time.monotonic() - t0 < 5


def test_disjoint_certificate_and_solve_apply_max_memory(tmp_path, monkeypatch):
    def started(*a, **k):
        raise AssertionError("the laws of the other members' counts were computed before the memory check")
    monkeypatch.setattr("darrm.models.disjoint.params.others_pmfs", started)
    P = darrm.DisjointParams(100001, darrm.LocalRR(1.0), 1.0)  # ~30 GiB of laws
    with pytest.raises(ParameterError, match=r"^max_memory: .*K=100001"):
        darrm.certify(np.full(P.K + 1, 0.5), P, max_memory=GiB)
    with pytest.raises(ParameterError, match=r"^max_memory"):
        darrm.solve(P, options=darrm.SolveOptions(max_memory=GiB))


def test_verify_max_memory_refuses_a_crafted_K201_file_at_once(cli, tmp_path, no_sweep):
    """Issue 15: a crafted 2.4 kB γ file claiming K = 201 ran `verify` into MemoryError."""
    f = crafted(tmp_path / "k201.json")
    assert f.stat().st_size < 10_000
    t0 = time.monotonic()
    rc, out, err = cli("verify", str(f), "--max-memory", "1G")
    assert rc == 2 and one_line(err, "max-memory") and "K=201" in err and out == ""
    assert time.monotonic() - t0 < 5


@pytest.mark.parametrize("params", [darrm.PrivacyParams(K=10001, m=3, eps=0.1, member_delta=0.0),
                                    darrm.DisjointParams(100001, darrm.LocalRR(1.0), 1.0)],
                         ids=["shared-pure", "disjoint"])
def test_verify_max_memory_bounds_every_kind_of_file(cli, tmp_path, monkeypatch, no_sweep, params):
    monkeypatch.setattr("darrm.models.disjoint.params.others_pmfs", lambda *a: (_ for _ in ()).throw(AssertionError()))
    f = crafted(tmp_path / "big.json", params)
    rc, _, err = cli("verify", str(f), "--max-memory", "512M")
    assert rc == 2 and one_line(err, "max-memory") and f"K={params.K}" in err


def test_verify_prints_the_estimate_with_verbose(cli, capsys, tmp_path):
    g = tmp_path / "g.json"
    assert cli("--no-progress", "solve", "--K", "5", "--out", str(g))[0] == 0
    capsys.readouterr()
    api._cache.clear()  # the solve's save certified this table: a cached verdict logs nothing
    rc, out, err = cli("-v", "verify", str(g), "--max-memory", "2G")
    assert rc == 0 and "OK" in out
    assert "about" in err and "MiB peak (estimate)" in err and "K=5" in err
    api._cache.clear()
    rc, _, err = cli("verify", str(g))
    assert rc == 0 and "estimate" not in err  # only at -v


def test_verify_max_memory_values_are_checked(cli, tmp_path):
    for bad in ("0", "-1G", "abc", "nan", "inf"):
        rc, _, err = cli("verify", str(tmp_path / "g.json"), "--max-memory", bad)
        assert rc == 2 and one_line(err, "max-memory")

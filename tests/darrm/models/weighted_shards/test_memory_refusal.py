"""Budget groups refuse, before any work, a solve or certificate whose memory estimate exceeds the limit:
``max_memory`` when given, else the memory available (not only with ``--max-memory``)."""

from __future__ import annotations

import time

import numpy as np
import pytest

import darrm
from darrm.backends import resources
from darrm.errors import ParameterError
from darrm.models.disjoint.members import ApproxDP
from darrm.models.weighted_shards.certificate import certify_weighted_shards
from darrm.models.weighted_shards.params import WeightedShardParams
from darrm.models.weighted_shards.request import solve_memory


def _singletons(g: int) -> WeightedShardParams:
    return WeightedShardParams(ApproxDP(0.3, 1e-5), tuple((1, 1.0, 1e-4) for _ in range(g)))


@pytest.fixture
def four_gib(monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: 4 * 2**30)


def test_twenty_five_singleton_groups_are_refused_by_default_naming_max_memory(four_gib, cli, tmp_path):
    out = tmp_path / "g.json"
    spec = ",".join(["1:1.0:1e-4"] * 25)
    t0 = time.perf_counter()
    rc, stdout, err = cli("solve", "--member-privacy", "0.3,1e-5", "--budget-groups", spec, "--out", str(out))
    assert time.perf_counter() - t0 < 5.0
    assert rc == 2 and stdout == "" and len(err.strip().splitlines()) == 1
    assert "max-memory" in err and "GiB available" in err and "--max-memory SIZE" in err
    assert not out.exists()


def test_the_api_refuses_the_same_solve_without_max_memory(four_gib):
    with pytest.raises(ParameterError, match="max_memory") as exc:
        darrm.solve(_singletons(25))
    assert exc.value.parameter == "max_memory"


def test_an_explicit_max_memory_is_the_limit_even_above_what_is_available(four_gib):
    params = _singletons(17)  # about 0.3 GiB for constraint generation
    need = solve_memory(params, darrm.SolveOptions(max_memory=1 * 2**30))
    assert 0.2 * 2**30 < need < 0.5 * 2**30
    with pytest.raises(ParameterError, match="max_memory"):
        solve_memory(params, darrm.SolveOptions(max_memory=0.1 * 2**30))
    assert solve_memory(_singletons(25), darrm.SolveOptions(max_memory=2.0**40)) > 64 * 2**30


def test_the_certificate_refuses_by_default_too(monkeypatch):
    params = _singletons(21)  # its certificate's arrays: 0.75 GiB
    monkeypatch.setattr(resources, "available_memory", lambda: 2**29)
    with pytest.raises(ParameterError, match="max_memory"):
        certify_weighted_shards(np.full(params.gamma_shape, 0.5), params)


def test_the_limit_falls_back_when_the_machine_says_nothing(monkeypatch):
    monkeypatch.setattr(resources, "available_memory", lambda: None)
    assert resources.memory_limit(None) == resources.FALLBACK_LIMIT_BYTES
    assert resources.memory_limit(123.0) == 123.0

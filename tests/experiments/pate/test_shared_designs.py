"""The DaRRM designs of the ten-class study are computed once and shared between runs (one per data set).

:func:`darrm.experiments.cache.compute_shared` splits jobs between processes through claim files; the
study's plurality tables read from that cache are certified again, so a tampered file is refused.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from darrm.errors import CertificationError
from darrm.experiments.cache import compute_shared


def _never() -> dict:
    raise AssertionError("computed although its result was cached or being computed elsewhere")


def test_each_job_is_computed_once_and_then_read(tmp_path: Path) -> None:
    calls: list[int] = []

    def job(i: int):
        def compute() -> dict:
            calls.append(i)
            return {"value": i * 1.5, "array": [float(i), 0.1]}
        return compute

    first = compute_shared({i: (tmp_path / f"job-{i}.json", job(i)) for i in range(3)})
    assert calls == [0, 1, 2]
    again = compute_shared({i: (tmp_path / f"job-{i}.json", _never) for i in range(3)})
    assert again == first == {i: {"value": i * 1.5, "array": [float(i), 0.1]} for i in range(3)}
    assert not list(tmp_path.glob("*.claim"))


def test_a_stale_claim_of_a_dead_process_is_taken_over(tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    path = tmp_path / "job.json"
    (tmp_path / "job.json.claim").write_text(dead.stdout.strip())
    assert compute_shared({"j": (path, lambda: {"x": 1})}, poll=0.01) == {"j": {"x": 1}}
    assert json.loads(path.read_text()) == {"x": 1}


def test_a_live_claim_is_waited_for_not_computed_again(tmp_path: Path) -> None:
    path, claim = tmp_path / "job.json", tmp_path / "job.json.claim"
    claim.write_text(str(os.getpid()))  # a live process (this one) holds the job

    def finish() -> None:
        time.sleep(0.3)
        path.write_text(json.dumps({"by": "the other process"}))
        claim.unlink()

    other = threading.Thread(target=finish)
    other.start()
    got = compute_shared({"j": (path, _never)}, poll=0.02)
    other.join()
    assert got == {"j": {"by": "the other process"}}


def _worker(folder: str, log: str) -> None:
    def job(i: int):
        def compute() -> dict:
            with open(log, "a") as fh:
                fh.write(f"{i}\n")
            time.sleep(0.2)
            return {"job": i}
        return compute

    got = compute_shared({i: (Path(folder) / f"job-{i}.json", job(i)) for i in range(6)}, poll=0.02)
    assert got == {i: {"job": i} for i in range(6)}


def test_two_processes_split_the_jobs_and_compute_each_once(tmp_path: Path) -> None:
    log = tmp_path / "computed.log"
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_worker, args=(str(tmp_path), str(log))) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    computed = sorted(int(line) for line in log.read_text().split())
    assert computed == list(range(6))  # every job once, none twice


def test_a_cached_plurality_table_is_certified_again_and_a_tampered_one_refused() -> None:
    from darrm.experiments.pate.multiclass_run import _plurality_entry
    from darrm.experiments.pate.plurality_top_two import max_divergence, solve_top_two

    solved = solve_top_two(9, 3, 0.5, 1e-6, 0.75)
    design = json.loads(json.dumps({"eps_query": solved.eps, "delta_query": solved.delta,  # through JSON, as cached
                                    "gamma": solved.gamma.tolist(), "prior_agreement": solved.expected_agreement,
                                    "certified_divergence": solved.max_divergence, "lp": solved.info}))
    entry = _plurality_entry(9, 3, design)
    table = entry["table"]
    assert table.max_divergence + 1e-12 <= design["delta_query"]
    assert max_divergence(table.gamma, 9, 3, design["eps_query"]) == table.max_divergence
    tampered = dict(design, gamma=np.minimum(1.0, np.asarray(design["gamma"]) * 1.5 + 0.2).tolist())
    with pytest.raises(CertificationError, match="fails its certificate"):
        _plurality_entry(9, 3, tampered)

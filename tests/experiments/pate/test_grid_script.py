"""experiments/pate/grid.sh starts the full ten-class grid as one run: both data sets at once, one thread
each, the grid's Q / ε_total / δ_total, one shared cache, extra options passed on, the total wall time
printed and a failed process's status returned (checked with a stand-in for ``darrm-experiments``)."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

GRID = Path(__file__).resolve().parents[3] / "experiments" / "pate" / "grid.sh"

FAKE = """#!/usr/bin/env bash
# stand-in for darrm-experiments: records its arguments, thread setting and start/end times
echo "args: $*"
echo "threads: $OMP_NUM_THREADS $MKL_NUM_THREADS $OPENBLAS_NUM_THREADS"
echo "start: $(date +%s.%N)"
sleep 1
echo "end: $(date +%s.%N)"
[[ " $* " == *" --dataset $FAIL_ON "* ]] && exit 3
exit 0
"""


def _grid(tmp_path: Path, fail_on: str = "none") -> subprocess.CompletedProcess:
    fake = tmp_path / "fake-darrm-experiments"
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    env = dict(os.environ, DARRM_EXPERIMENTS=str(fake), DATA=str(tmp_path / "data"), FAIL_ON=fail_on)
    env.pop("CACHE", None)
    return subprocess.run(["bash", str(GRID), str(tmp_path / "grid"), "--draws", "1"], env=env, capture_output=True,
                          text=True, timeout=60)


def _log(tmp_path: Path, ds: str) -> dict[str, str]:
    lines = (tmp_path / "grid" / f"{ds}.log").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines)


def test_both_data_sets_run_at_once_on_the_full_grid_with_one_shared_cache(tmp_path: Path) -> None:
    done = _grid(tmp_path)
    assert done.returncode == 0, done.stderr
    logs = {ds: _log(tmp_path, ds) for ds in ("mnist", "fashion-mnist")}
    for ds, log in logs.items():
        args = log["args"]
        assert f"pate --dataset {ds} --classes 10 --queries 100,500,1000 --total-eps 1,2,4 --total-delta 1e-5" in args
        assert f"--data-dir {tmp_path / 'data' / ds} " in args and f"--out {tmp_path / 'grid' / ds} " in args
        assert f"--cache-dir {tmp_path / 'grid' / 'cache'} " in args and args.endswith("--draws 1")
        assert log["threads"] == "1 1 1"
    a, b = logs["mnist"], logs["fashion-mnist"]
    assert float(a["start"]) < float(b["end"]) and float(b["start"]) < float(a["end"])  # concurrent
    assert {"mnist: exit 0", "fashion-mnist: exit 0"} <= {line.split(" (")[0] for line in done.stdout.splitlines()}
    wall = int(done.stdout.split("grid wall time: ")[1].split()[0])
    assert 1 <= wall < 30


@pytest.mark.parametrize("failing", ["mnist", "fashion-mnist"])
def test_a_failed_data_set_fails_the_grid_and_is_named(tmp_path: Path, failing: str) -> None:
    done = _grid(tmp_path, fail_on=failing)
    assert done.returncode == 3
    status = {line.split(": exit ")[0]: line.split(": exit ")[1].split()[0] for line in done.stdout.splitlines()
              if ": exit " in line}
    assert status == {"mnist": "0", "fashion-mnist": "0", failing: "3"} and "grid wall time: " in done.stdout


def test_no_output_folder_is_a_usage_error(tmp_path: Path) -> None:
    done = subprocess.run(["bash", str(GRID)], capture_output=True, text=True, timeout=10)
    assert done.returncode == 2 and done.stderr.startswith("usage:")


HOLDER = """
import sys, time
from darrm.paths import hold_outputs
from darrm.experiments.data.locations import check_locations
with hold_outputs():
    check_locations(sys.argv[1], sys.argv[2], None)
    print("held", flush=True)
    time.sleep(30)
"""


def test_runs_beside_each_other_share_the_cache_folder_but_never_an_out_folder(tmp_path: Path) -> None:
    import sys

    from darrm.errors import ParameterError
    from darrm.experiments.data.locations import check_locations
    from darrm.paths import hold_outputs

    cache = tmp_path / "cache"
    other = subprocess.Popen([sys.executable, "-c", HOLDER, str(tmp_path / "out-a"), str(cache)],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout is not None and other.stdout.readline().strip() == "held"
        with hold_outputs():
            check_locations(tmp_path / "out-b", cache, None)  # the same cache: shared
        with hold_outputs(), pytest.raises(ParameterError, match="out: .* being written by another process"):
            check_locations(tmp_path / "out-a", tmp_path / "cache-2", None)  # the same out: refused
    finally:
        other.kill()
        other.wait()

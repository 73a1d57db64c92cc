"""The teacher cache never unpickles code and refuses files that do not hold a CNN state dict."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("opacus")

# These modules import torch: they can only come after the importorskip above.
from darrm.experiments.data.loader import BinaryTask  # noqa: E402
from darrm.experiments.pate.ensemble import (  # noqa: E402
    CacheError,
    ensemble_dir,
    get_ensemble,
    load_teacher,
)
from darrm.experiments.pate.model import CNN  # noqa: E402
from darrm.experiments.pate.teachers import TeacherConfig  # noqa: E402


class _Evil:
    """Unpickling this calls os.system-like code: it creates the marker file."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def _task() -> BinaryTask:
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, size=(6, 28, 28), dtype=np.uint8)
    y = np.array([5, 8, 5, 8, 5, 8], dtype=np.uint8)
    return BinaryTask("mnist", (5, 8), x, y, x[:2], y[:2], np.arange(6), np.arange(2))


def _plant(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(obj, path)


def test_planted_pickle_is_refused_and_never_runs(tmp_path):
    marker = tmp_path / "pwned"
    cfg = TeacherConfig(private=False, K=3, epochs=1)
    task = _task()
    d = ensemble_dir(task, cfg, tmp_path / "cache")
    _plant(d / "teacher_00.pt", {"state_dict": _Evil(marker), "info": {}})
    with pytest.raises(CacheError, match="teacher_00.pt"):
        get_ensemble(task, cfg, tmp_path / "cache", device=torch.device("cpu"), progress=False)
    assert not marker.exists()


def test_valid_teacher_file_loads(tmp_path):
    state = CNN(10).state_dict()
    _plant(tmp_path / "t.pt", {"state_dict": state, "info": {"index": 0, "eps": 1.5, "private": True}})
    got, info = load_teacher(tmp_path / "t.pt", 10)
    assert set(got) == set(state) and info["index"] == 0


@pytest.mark.parametrize("blob", [
    [1, 2, 3],
    {"state_dict": {}, "info": {}},
    {"state_dict": {k: v[..., :1] if v.ndim else v for k, v in CNN(10).state_dict().items()}, "info": {}},
    {"state_dict": CNN(2).state_dict(), "info": {}},
    {"state_dict": CNN(10).state_dict(), "info": {"x": [1]}},
])
def test_wrong_contents_are_refused(tmp_path, blob):
    _plant(tmp_path / "t.pt", blob)
    with pytest.raises(CacheError, match=r"t\.pt"):
        load_teacher(tmp_path / "t.pt", 10)


@pytest.mark.parametrize("data", [b"", b"garbage", b"PK\x03\x04truncated"])
def test_corrupt_files_are_refused_with_one_line(tmp_path, data):
    (tmp_path / "t.pt").write_bytes(data)
    with pytest.raises(CacheError) as e:
        load_teacher(tmp_path / "t.pt", 10)
    assert "\n" not in str(e.value)
    assert os.fspath(tmp_path / "t.pt") in str(e.value)


def test_bogus_device_is_a_one_line_parameter_error(tmp_path, capsys):
    from darrm.experiments import cli

    rc = cli.main(["pate", "--device", "bogus", "--dataset", "mnist", "--quick", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert rc == 2 and "device" in err and err.count("\n") == 1 and not (tmp_path / "o").exists()


@pytest.mark.parametrize("planted", ["scalar 7", "wrong shape", "float labels", "label out of range"])
def test_a_corrupt_vote_cache_is_refused_naming_the_file(tmp_path, planted):
    """votes.npy must be the (n_test, K) integer labels get_ensemble writes: a scalar 7, another
    shape, floats or a label ≥ n_classes is a CacheError, never garbage votes."""
    cfg = TeacherConfig(private=False, K=3, epochs=1)
    task = _task()
    d = ensemble_dir(task, cfg, tmp_path / "cache")
    good = get_ensemble(task, cfg, tmp_path / "cache", device=torch.device("cpu"), progress=False).votes
    bad = {"scalar 7": np.array(7), "wrong shape": good[:1], "float labels": good.astype(np.float64) + 0.5,
           "label out of range": np.where(good == good[0, 0], 11, good)}[planted]
    np.save(d / "votes.npy", bad)
    with pytest.raises(CacheError, match="votes.npy: not a vote cache file"):
        get_ensemble(task, cfg, tmp_path / "cache", device=torch.device("cpu"), progress=False)
    np.save(d / "votes.npy", good)
    np.testing.assert_array_equal(
        get_ensemble(task, cfg, tmp_path / "cache", device=torch.device("cpu"), progress=False).votes, good)

"""Checkpoint files: anything but this problem's own checkpoint is a one-line ParameterError."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest

from darrm.errors import ParameterError
from darrm.solver.checkpoint import load_checkpoint, save_checkpoint

FP, C, K = "0123456789abcdef", 8, 13


def _good(path):
    w = np.zeros((2, C), dtype=np.int64)
    w[:, 0] = K
    w[1, :2] = K - 1, 1
    save_checkpoint(path, FP, w)
    return w


def _npz(**arrays) -> bytes:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    return buf.getvalue()


def test_round_trip_and_missing(tmp_path):
    w = _good(tmp_path / "c.npz")
    np.testing.assert_array_equal(load_checkpoint(tmp_path / "c.npz", FP, C, K), w)
    assert load_checkpoint(tmp_path / "none.npz", FP, C, K) is None


def test_foreign_checkpoint_is_refused(tmp_path):
    _good(tmp_path / "c.npz")
    with pytest.raises(ParameterError, match="checkpoint: .*another problem"):
        load_checkpoint(tmp_path / "c.npz", "ffffffffffffffff", C, K)


def _forged():
    full = _npz(fingerprint=np.array(FP), working=np.full((2, C), 1))
    yield b""
    yield full[: len(full) // 2]  # truncated
    yield b"PK\x03\x04" + b"\0" * 40  # corrupt zip
    yield b"\x93NUMPY garbage"
    yield _npz(fingerprint=np.array(FP))  # missing array
    yield _npz(fingerprint=np.array(FP), working=np.zeros((2, C)))  # floats
    yield _npz(fingerprint=np.array(FP), working=np.zeros((2, C + 1), dtype=np.int64))  # shape
    yield _npz(fingerprint=np.array(FP), working=np.full((2, C), -1, dtype=np.int64))  # negative
    yield _npz(fingerprint=np.array(FP), working=np.ones((2, C), dtype=np.int64))  # rows do not sum to K
    yield _npz(fingerprint=np.array([1, 2]), working=np.zeros((0, C), dtype=np.int64))  # odd fingerprint
    buf = io.BytesIO()
    np.save(buf, np.zeros(3))
    yield buf.getvalue()  # an .npy, not an .npz
    zb = io.BytesIO()
    with zipfile.ZipFile(zb, "w") as z:
        z.writestr("fingerprint.npy", b"not npy")
        z.writestr("working.npy", b"not npy")
    yield zb.getvalue()


@pytest.mark.parametrize("data", list(_forged()))
def test_bad_files_are_one_line_errors(tmp_path, data):
    p = tmp_path / "c.npz"
    p.write_bytes(data)
    with pytest.raises(ParameterError) as e:
        load_checkpoint(p, FP, C, K)
    assert e.value.parameter == "checkpoint" and "\n" not in str(e.value)


def test_directory_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="checkpoint"):
        load_checkpoint(tmp_path, FP, C, K)


def test_a_forged_checkpoint_cannot_declare_more_rows_than_the_problem_has(tmp_path):
    """A checkpoint with more rows than K votes over C corners have distinct multisets
    (C(K + C − 1, C − 1)) is refused from its header, before its rows are read; repeated valid rows
    are kept once (a forged file of 5 million copies of valid rows ran 41 s to a MemoryError)."""
    import math
    import time

    from darrm.solver.checkpoint import multisets

    assert multisets(K, C) == math.comb(K + C - 1, C - 1) == 77520
    row = np.zeros(C, dtype=np.int64)
    row[0] = K
    p = tmp_path / "c.npz"
    p.write_bytes(_npz(fingerprint=np.array(FP), working=np.tile(row, (multisets(K, C) + 1, 1))))
    before = p.read_bytes()
    t0 = time.monotonic()
    with pytest.raises(ParameterError, match=r"^checkpoint: .*declares 77,521 rows, more than the 77,520"):
        load_checkpoint(p, FP, C, K)
    assert time.monotonic() - t0 < 5 and p.read_bytes() == before
    other = row.copy()
    other[:2] = K - 1, 1
    p.write_bytes(_npz(fingerprint=np.array(FP), working=np.stack([other, row] * 20000)))
    np.testing.assert_array_equal(load_checkpoint(p, FP, C, K), np.stack([other, row]))

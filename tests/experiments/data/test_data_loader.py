"""The IDX reader and the verifying loader (checksums, corruption, search order, download)."""

from __future__ import annotations

import gzip
import hashlib
import io
import shutil
import struct

import numpy as np
import pytest
from darrm.experiments.data import loader
from darrm.experiments.data.idx import IdxFormatError, parse_idx
from darrm.experiments.data.loader import (
    DatasetError,
    binary_task,
    load_dataset,
    verify_file,
)


def _idx_bytes(arr: np.ndarray) -> bytes:
    return struct.pack(">BBBB", 0, 0, 0x08, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape) + arr.tobytes()


def test_parse_idx_roundtrips_and_rejects_malformed_headers():
    arr = np.arange(2 * 3 * 4, dtype=np.uint8).reshape(2, 3, 4)
    np.testing.assert_array_equal(parse_idx(_idx_bytes(arr)), arr)
    with pytest.raises(IdxFormatError, match="magic"):
        parse_idx(b"\x01\x00\x08\x01" + b"\x00" * 8)
    with pytest.raises(IdxFormatError, match="payload"):
        parse_idx(_idx_bytes(arr)[:-1])
    with pytest.raises(IdxFormatError, match="element type"):
        parse_idx(b"\x00\x00\x07\x01\x00\x00\x00\x01\x00")


def test_mnist_two_class_counts_match_paper_from_real_files(shared_datasets):
    ds = load_dataset("mnist", shared_datasets / "mnist", allow_download=False)
    assert ds.train_images.shape == (60000, 28, 28) and ds.test_images.shape == (10000, 28, 28)
    task = binary_task(ds)
    assert (task.train_labels == 5).sum() == 5421 and (task.train_labels == 8).sum() == 5851
    assert (task.test_labels == 5).sum() == 892 and (task.test_labels == 8).sum() == 974
    assert len(task.train_labels) == 11272 and len(task.test_labels) == 1866


def test_fashion_mnist_task_uses_all_12000_or_a_seeded_10000_subset(shared_datasets):
    ds = load_dataset("fashion-mnist", shared_datasets / "fashion-mnist", allow_download=False)
    full = binary_task(ds)
    assert len(full.train_labels) == 12000 and len(full.test_labels) == 2000
    sub = binary_task(ds, train_size=10000, seed=3)
    assert len(sub.train_labels) == 10000 and set(sub.train_indices) <= set(full.train_indices)
    np.testing.assert_array_equal(sub.train_indices, binary_task(ds, train_size=10000, seed=3).train_indices)


def test_every_file_checked_against_the_published_sha256sums(shared_datasets):
    """Independent check: the .gz hashes we compute equal the shared SHA256SUMS file, and the
    embedded content hashes equal a fresh gunzip + sha256."""
    sums = {}
    for line in (shared_datasets / "SHA256SUMS").read_text().splitlines():
        digest, rel = line.split()
        sums[rel] = digest
    for name in loader.DATASETS:
        ds = load_dataset(name, shared_datasets / name, allow_download=False)
        for info in ds.files:
            rel = f"{name}/{info['path'].rsplit('/', 1)[1]}"
            assert info["gz_sha256"] == sums[rel]
            raw = gzip.decompress((shared_datasets / rel).read_bytes())
            assert info["content_sha256"] == hashlib.sha256(raw).hexdigest()


def test_corrupted_or_truncated_file_is_rejected(shared_datasets, tmp_path):
    src = shared_datasets / "mnist" / "t10k-labels-idx1-ubyte.gz"
    content = bytearray(gzip.decompress(src.read_bytes()))
    content[100] ^= 1  # one label changed, still a valid IDX file
    bad = tmp_path / "t10k-labels-idx1-ubyte.gz"
    bad.write_bytes(gzip.compress(bytes(content)))
    with pytest.raises(DatasetError, match="SHA-256"):
        verify_file("mnist", bad)
    bad.write_bytes(src.read_bytes()[:-40])
    with pytest.raises(DatasetError, match="gzip|SHA-256"):
        verify_file("mnist", bad)


def test_search_order_prefers_data_dir_then_env(shared_datasets, tmp_path, monkeypatch):
    a, b = tmp_path / "a" / "mnist", tmp_path / "b"
    shutil.copytree(shared_datasets / "mnist", a)
    (b / "mnist").mkdir(parents=True)
    for f in loader.FILES:
        (b / "mnist" / f"{f}.gz").symlink_to(shared_datasets / "mnist" / f"{f}.gz")
    monkeypatch.setenv("DARRM_DATA", str(b))
    assert loader.find_dataset_dir("mnist", tmp_path / "a") == tmp_path / "a" / "mnist"
    assert loader.find_dataset_dir("mnist") == b / "mnist"
    cands = loader.candidate_dirs("fashion-mnist")
    assert cands[-1] == loader.DEBIAN_DIRS["fashion-mnist"]


def test_missing_data_raises_a_message_saying_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setattr(loader, "candidate_dirs", lambda name, data_dir=None: [tmp_path / "nowhere"])
    with pytest.raises(DatasetError, match="--data-dir") as exc:
        load_dataset("fashion-mnist", allow_download=False)
    assert "apt-get install dataset-fashion-mnist" in str(exc.value)


def test_download_verifies_content_and_discards_a_corrupt_mirror(shared_datasets, tmp_path, monkeypatch):
    """Offline: urlopen is served from the shared files; a corrupted first mirror is skipped."""
    corrupt_url = "https://bad.example/"
    monkeypatch.setitem(loader.URLS, "mnist", (corrupt_url, "https://good.example/"))

    def fake_urlopen(url, timeout=None):
        stem = url.rsplit("/", 1)[1]
        data = (shared_datasets / "mnist" / stem).read_bytes()
        if url.startswith(corrupt_url):
            # a valid gzip of the wrong content (its last byte changed); level 1: the content is the point
            data = gzip.compress(gzip.decompress(data)[:-1] + b"\x07", compresslevel=1)
        return io.BytesIO(data)

    monkeypatch.setattr(loader.urllib.request, "urlopen", fake_urlopen)
    dest = loader.download("mnist", tmp_path / "mnist")
    for f in loader.FILES:
        verify_file("mnist", dest / f"{f}.gz")
    assert not [p for p in dest.iterdir() if p.name.startswith(".")]  # no temporary files left

    def offline(url, timeout=None):
        raise loader.urllib.error.URLError("offline")

    monkeypatch.setattr(loader.urllib.request, "urlopen", offline)
    with pytest.raises(DatasetError, match="offline"):
        loader.download("mnist", tmp_path / "empty")


def test_gzip_bomb_is_refused_while_inflating(tmp_path):
    """A small .gz inflating far past the real file's size is refused after one chunk, not inflated."""
    import tracemalloc

    bomb = tmp_path / "t10k-labels-idx1-ubyte.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        zeros = bytes(1 << 20)
        for _ in range(256):  # 256 MiB of zeros in ~250 kB
            fh.write(zeros)
    assert bomb.stat().st_size < 2 << 20
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError, match="larger than the 10008 bytes"):
            verify_file("mnist", bomb)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def test_uncompressed_and_garbage_files(tmp_path):
    raw = tmp_path / "t10k-labels-idx1-ubyte"
    raw.write_bytes(bytes(20000))
    with pytest.raises(DatasetError, match="larger than"):
        verify_file("mnist", raw)
    gz = tmp_path / "t10k-labels-idx1-ubyte.gz"
    gz.write_bytes(b"\x1f\x8b" + b"junk" * 10)
    with pytest.raises(DatasetError, match="gzip"):
        verify_file("mnist", gz)
    gz.write_bytes(b"")
    with pytest.raises(DatasetError, match="SHA-256"):
        verify_file("mnist", gz)

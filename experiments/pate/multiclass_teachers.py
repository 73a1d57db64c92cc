"""K non-private teachers on disjoint shards of all ten classes, and their votes on the query pool (cached).

PATE 2018's setting (Papernot et al. 2018, Section 5: 250 teachers on disjoint shards of MNIST's
training set).  On this project's shared 2-core CPU each teacher is the student's MLP
(:class:`~.student.StudentMLP`, trained by :func:`~.student.train_student` on its shard's true
labels, no self-training) instead of PATE 2018's CNN: ~1 s per teacher instead of ~15 s (measured
under load), so 250 teachers fit in minutes.  The teachers vote only on the *query pool*; the
held-out half of the public set is never shown to them.

Cache: ``<cache_dir>/<dataset>-multiclass-<key>/`` with ``settings.json``, one ``votes_XXX.npy`` per
teacher (so an interrupted run resumes at the first missing teacher) and ``teachers.json`` (each
teacher's accuracy on its own shard is not recorded: nothing private leaves the teacher but its votes).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from darrm.atomic import atomic_write_json
from darrm.experiments.cache import load_npy, save_npy, settings_key
from darrm.experiments.pate.ensemble import CacheError
from darrm.experiments.pate.student import train_student
from darrm.experiments.pate.student_config import StudentConfig
from darrm.experiments.pate.teachers import shard_indices

__all__ = ["multiclass_votes"]


def _sha(*arrays: np.ndarray) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def multiclass_votes(name: str, train_images: np.ndarray, train_labels: np.ndarray, pool_images: np.ndarray,
                     K: int, teacher: StudentConfig, seed: int, cache_dir: Path,
                     progress: bool = True) -> tuple[np.ndarray, dict]:
    """Votes ``(n_pool, K)`` of K teachers, each trained on one disjoint shard, on the pool images.

    Args:
        name: dataset name (cache folder prefix).
        train_images: the private training images (all classes).
        train_labels: their labels 0..9.
        pool_images: the public query pool (the only images the teachers label).
        K: number of teachers.
        teacher: how each teacher is trained (``self_training`` must be off).
        seed: seeds the shards and the teachers.
        cache_dir: the cache folder.
        progress: show a progress bar.

    Returns:
        (votes, record): int64 votes, and a record (the cache key: the folder relative to
        ``cache_dir``; seconds spent training here; teachers reloaded from the cache).

    Raises:
        CacheError: a cached vote column is not K's labels of the pool in 0..9.
        ParameterError: ``K`` larger than the training set, or a bad setting (naming it).
    """
    classes = tuple(range(10))
    settings = {"dataset": name, "train_sha256": _sha(train_images, train_labels), "pool_sha256": _sha(pool_images),
                "K": int(K), "teacher": teacher.as_dict(), "seed": int(seed), "model": "StudentMLP"}
    d = Path(cache_dir) / f"{name}-multiclass-{settings_key(settings)}"
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "settings.json", settings)
    shards = shard_indices(len(train_labels), K, seed)
    cols, cached, t0 = [], 0, time.perf_counter()
    for i in tqdm(range(K), desc=f"{name}: 10-class teachers", disable=not progress, leave=False):
        path = d / f"votes_{i:03d}.npy"
        if path.is_file():
            col = load_npy(path)
            if col.shape != (len(pool_images),) or not np.issubdtype(col.dtype, np.integer) \
                    or col.min() < 0 or col.max() > 9:
                raise CacheError(f"{path}: not a vote column of {len(pool_images)} labels in 0..9; delete it")
            cached += 1
        else:
            sh = shards[i]
            st = train_student(train_images[sh], train_labels[sh], train_images[:0], classes, teacher,
                               int(np.random.default_rng([seed, 17, i]).integers(2**31 - 1)))
            col = st.predict(pool_images).astype(np.int64)
            save_npy(path, col)
        cols.append(col.astype(np.int64))
    # the cache key (the folder relative to the cache root), never a machine-specific absolute path
    return np.stack(cols, axis=1), {"cache": d.name, "seconds_training": time.perf_counter() - t0,
                                    "teachers_from_cache": cached, "shard_sizes": [int(len(s)) for s in shards]}

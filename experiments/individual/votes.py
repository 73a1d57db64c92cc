"""Votes of teachers trained on given shards, cached per teacher (resumable)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from tqdm.auto import tqdm

from darrm.atomic import atomic_write_json
from darrm.experiments.cache import load_npy, save_npy, settings_key
from darrm.experiments.pate.ensemble import CacheError
from darrm.experiments.pate.multiclass_teachers import _sha  # the PATE caches' content hash
from darrm.experiments.pate.student import train_student
from darrm.experiments.pate.student_config import StudentConfig

__all__ = ["shard_votes"]


def shard_votes(tag: str, images: np.ndarray, labels: np.ndarray, pool: np.ndarray, shards: list[np.ndarray],
                classes: tuple[int, ...], teacher: StudentConfig, seed: int, cache_dir: Path,
                progress: bool = True) -> np.ndarray:
    """Votes ``(n_pool, K)`` of one teacher per shard, each trained on its shard's true labels by the PATE
    study's :func:`~darrm.experiments.pate.student.train_student` (no self-training) and labelling the pool.

    The cache folder is keyed by the data, the shards, the teacher settings and the seed; one
    ``votes_XXX.npy`` per teacher, so an interrupted run resumes at the first missing teacher.

    Raises:
        CacheError: a cached column is not ``n_pool`` labels in ``classes``.
    """
    settings = {"tag": tag, "data": _sha(images, labels), "pool": _sha(pool), "shards": _sha(*shards),
                "teacher": teacher.as_dict(), "seed": int(seed), "classes": list(classes)}
    d = Path(cache_dir) / f"individual-{tag}-{settings_key(settings)}"
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "settings.json", settings)
    cols = []
    for i, sh in enumerate(tqdm(shards, desc=f"teachers ({tag})", disable=not progress, leave=False)):
        path = d / f"votes_{i:04d}.npy"
        if path.is_file():
            col = load_npy(path)
            if col.shape != (len(pool),) or not np.isin(col, classes).all():
                raise CacheError(f"{path}: not a vote column of {len(pool)} labels in {classes}; delete it")
        else:
            st = train_student(images[sh], labels[sh], images[:0], classes, teacher,
                               int(np.random.default_rng([seed, 43, i]).integers(2**31 - 1)))
            col = st.predict(pool).astype(np.int64)
            save_npy(path, col)
        cols.append(col.astype(np.int64))
    return np.stack(cols, axis=1)

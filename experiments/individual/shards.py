"""Which teacher sees which record: budget groups, upsampled shards, one-group shards (pure numpy)."""

from __future__ import annotations

import numpy as np

from darrm.errors import ParameterError
from darrm.experiments.pate.teachers import shard_indices

__all__ = ["assign_groups", "group_shards", "teachers_per_group", "upsampled_shards"]


def assign_groups(n: int, shares: tuple[float, ...], seed: int) -> np.ndarray:
    """Group index of each of n records: a seeded permutation cut by ``shares`` (rounded counts)."""
    counts = np.floor(np.asarray(shares) * n).astype(int)
    counts[-1] = n - counts[:-1].sum()
    groups = np.repeat(np.arange(len(shares)), counts)
    return groups[np.random.default_rng([seed, 31]).permutation(n)]


def upsampled_shards(groups: np.ndarray, copies: tuple[int, ...], K: int, seed: int) -> list[np.ndarray]:
    """Individualized PATE's upsampling: each record of group g is copied into r_g *distinct* teachers'
    shards, chosen uniformly at random independently of the records' values (so a neighbouring pair
    changes exactly the r_g teachers holding the record: :class:`darrm.ShardGroupParams`)."""
    if max(copies) > K:
        raise ParameterError("copies", f"at most K={K} distinct teachers can hold a record, got {max(copies)}")
    rng = np.random.default_rng([seed, 37])
    owners: list[list[int]] = [[] for _ in range(K)]
    for g, r in enumerate(copies):
        idx = np.flatnonzero(groups == g)
        chosen = np.argsort(rng.random((idx.size, K)), axis=1)[:, :r]  # r distinct teachers per record
        for rec, ts in zip(idx, chosen, strict=True):
            for t in ts:
                owners[int(t)].append(int(rec))
    return [np.sort(np.asarray(o, dtype=np.int64)) for o in owners]


def teachers_per_group(K: int, shares: tuple[float, ...]) -> list[int]:
    """K split over the groups in proportion to ``shares`` (largest remainders, at least one each)."""
    raw = np.asarray(shares) * K
    out = np.maximum(np.floor(raw).astype(int), 1)
    for g in np.argsort(-(raw - np.floor(raw))):
        if out.sum() >= K:
            break
        out[g] += 1
    while out.sum() > K:
        out[int(np.argmax(out))] -= 1
    return [int(k) for k in out]


def group_shards(groups: np.ndarray, K: int, shares: tuple[float, ...],
                 seed: int) -> tuple[list[np.ndarray], np.ndarray]:
    """Individualized PATE's weighting: each teacher is trained on records of one group only (disjoint
    shards within the group).  Returns (shards, the group of each teacher)."""
    shards, owner = [], []
    for g, k in enumerate(teachers_per_group(K, shares)):
        idx = np.flatnonzero(groups == g)
        for s in shard_indices(idx.size, k, seed + 101 * g):
            shards.append(idx[s])
            owner.append(g)
    return shards, np.asarray(owner, dtype=np.int64)

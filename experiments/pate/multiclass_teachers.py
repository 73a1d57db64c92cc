"""K non-private teachers on disjoint shards of all ten classes, and their votes on the query pool (cached).

PATE 2018's setting (Papernot et al. 2018, Section 5: 250 teachers on disjoint shards of MNIST's
training set).  Each teacher is the student's MLP (784 → ``hidden`` → C, :class:`~.student.StudentMLP`'s
architecture and initialisation, Adam on its shard's true labels, no self-training) instead of PATE
2018's CNN.  The K teachers are trained *together* as one model of K networks (:class:`BatchedMLP`:
stacked weights, batched matrix products, ``CHUNK`` teachers per model): teacher k's loss depends on
its own weights only and Adam is coordinate-wise, so the joint step is exactly K independent Adam
steps (``test_batched_teachers_equal_independent_training`` checks it against K separate
:class:`~.student.StudentMLP` runs on the same minibatches).  The teachers vote only on the *query
pool*; the held-out half of the public set is never shown to them.

Cache: ``<cache_dir>/<dataset>-multiclass-<key>/`` with ``settings.json`` and one ``votes_XXX.npy`` per
teacher (an interrupted run resumes at the first chunk with a missing teacher; each chunk's random stream
depends only on the seed and the chunk's index); each teacher's accuracy on its own shard is not recorded:
nothing private leaves the teacher but its votes.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
import torch
from tqdm.auto import tqdm

from darrm.atomic import atomic_write_json
from darrm.errors import ParameterError
from darrm.experiments.cache import load_npy, save_npy, settings_key
from darrm.experiments.pate.ensemble import CacheError
from darrm.experiments.pate.model import to_tensor
from darrm.experiments.pate.student_config import StudentConfig
from darrm.experiments.pate.teachers import shard_indices

__all__ = ["CHUNK", "BatchedMLP", "fit_batched", "multiclass_votes"]

#: teachers trained together in one :class:`BatchedMLP` (memory: CHUNK × pool × hidden float32 when voting)
CHUNK = 50


class BatchedMLP(torch.nn.Module):
    """K independent MLPs 784 → ``hidden`` → C held as stacked weights; ``forward`` maps ``(K, b, 784)``
    to ``(K, b, C)`` logits by batched matrix products.

    Each network is initialised like ``torch.nn.Linear`` (weights and biases uniform in ±1/√fan_in),
    as :class:`~.student.StudentMLP` is.

    Args:
        K: number of networks.
        n_classes: logits per network.
        hidden: width of the hidden layer.
        gen: the random generator of the initialisation.
    """

    def __init__(self, K: int, n_classes: int, hidden: int, gen: torch.Generator):
        super().__init__()

        def uniform(shape: tuple[int, ...], fan_in: int) -> torch.nn.Parameter:
            bound = 1.0 / fan_in ** 0.5
            return torch.nn.Parameter((torch.rand(shape, generator=gen) * 2 - 1) * bound)

        self.w1, self.b1 = uniform((K, 28 * 28, hidden), 28 * 28), uniform((K, 1, hidden), 28 * 28)
        self.w2, self.b2 = uniform((K, hidden, n_classes), hidden), uniform((K, 1, n_classes), hidden)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.baddbmm(self.b2, torch.relu(torch.baddbmm(self.b1, x, self.w1)), self.w2)


def fit_batched(model: BatchedMLP, x: torch.Tensor, y: torch.Tensor, sizes: torch.Tensor, cfg: StudentConfig,
                gen: torch.Generator) -> None:
    """``cfg.steps`` Adam steps of every network on its own shard (minibatches drawn with replacement).

    The loss is the sum over networks of each one's mean cross-entropy, so network k's gradient is
    its own shard's gradient and Adam (coordinate-wise) moves it exactly as a separate optimiser would.

    Args:
        model: the K networks.
        x: ``(K, n_max, 784)`` shard images, padded to the largest shard.
        y: ``(K, n_max)`` class indices.
        sizes: ``(K,)`` true shard sizes (a network samples only its first ``sizes[k]`` rows).
        cfg: steps, batch size (capped at the smallest shard) and learning rate.
        gen: the random generator of the minibatches.

    Raises:
        ParameterError: naming ``sizes``, when a shard is empty (no minibatch can be drawn from it).
    """
    K = x.shape[0]
    if int(sizes.min()) < 1:
        raise ParameterError("sizes", f"every shard needs at least one image, got sizes {sizes.tolist()}")
    b = min(cfg.batch_size, int(sizes.min()))
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    rows = torch.arange(K)[:, None]
    for _ in range(cfg.steps):
        i = (torch.rand(K, b, generator=gen) * sizes[:, None]).long()
        logits = model(x[rows, i])
        loss = torch.nn.functional.cross_entropy(logits.reshape(K * b, -1), y[rows, i].reshape(-1),
                                                 reduction="sum") / b
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()


@torch.no_grad()
def _votes(model: BatchedMLP, pool: torch.Tensor, batch: int = 1000) -> np.ndarray:
    """``(n_pool, K)`` argmax labels of the K networks."""
    out = [model(pool[i:i + batch].expand(model.w1.shape[0], -1, -1)).argmax(2).T for i in range(0, len(pool), batch)]
    return torch.cat(out).numpy().astype(np.int64)


def _train_chunk(train_images: np.ndarray, train_labels: np.ndarray, shards: list[np.ndarray], pool: torch.Tensor,
                 teacher: StudentConfig, gen: torch.Generator) -> np.ndarray:
    n_max = max(len(s) for s in shards)
    x = torch.zeros(len(shards), n_max, 28 * 28)
    y = torch.zeros(len(shards), n_max, dtype=torch.long)
    for k, sh in enumerate(shards):
        x[k, :len(sh)] = to_tensor(train_images[sh]).reshape(len(sh), -1)
        y[k, :len(sh)] = torch.as_tensor(train_labels[sh].astype(np.int64))
    model = BatchedMLP(len(shards), 10, teacher.hidden, gen)
    fit_batched(model, x, y, torch.as_tensor([len(s) for s in shards]), teacher, gen)
    return _votes(model, pool)


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
    settings = {"dataset": name, "train_sha256": _sha(train_images, train_labels), "pool_sha256": _sha(pool_images),
                "K": int(K), "teacher": teacher.as_dict(), "seed": int(seed),
                "model": f"BatchedMLP/{CHUNK}"}
    d = Path(cache_dir) / f"{name}-multiclass-{settings_key(settings)}"
    d.mkdir(parents=True, exist_ok=True)
    atomic_write_json(d / "settings.json", settings)
    shards = shard_indices(len(train_labels), K, seed)
    paths = [d / f"votes_{i:03d}.npy" for i in range(K)]
    cols: list[np.ndarray | None] = [None] * K
    cached, t0 = 0, time.perf_counter()
    for i, path in enumerate(paths):
        if path.is_file():
            col = load_npy(path)
            if col.shape != (len(pool_images),) or not np.issubdtype(col.dtype, np.integer) \
                    or col.min() < 0 or col.max() > 9:
                raise CacheError(f"{path}: not a vote column of {len(pool_images)} labels in 0..9; delete it")
            cols[i], cached = col.astype(np.int64), cached + 1
    pool = to_tensor(pool_images).reshape(len(pool_images), -1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a shared 2-core machine: one thread is faster than two contending ones
    try:
        starts = range(0, K, CHUNK)
        for c, s in enumerate(tqdm(starts, desc=f"{name}: 10-class teachers", disable=not progress, leave=False)):
            members = range(s, min(s + CHUNK, K))
            if all(cols[i] is not None for i in members):
                continue
            gen = torch.Generator().manual_seed(int(np.random.default_rng([seed, 17, c]).integers(2**31 - 1)))
            votes = _train_chunk(train_images, train_labels, [shards[i] for i in members], pool, teacher, gen)
            for j, i in enumerate(members):
                save_npy(paths[i], votes[:, j])
                cols[i] = votes[:, j]
    finally:
        torch.set_num_threads(threads)
    # the cache key (the folder relative to the cache root), never a machine-specific absolute path
    return np.stack([c for c in cols if c is not None], axis=1), {
        "cache": d.name, "seconds_training": time.perf_counter() - t0, "teachers_from_cache": cached,
        "batched": CHUNK, "shard_sizes": [int(len(s)) for s in shards]}

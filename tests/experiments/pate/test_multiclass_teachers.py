"""The batched ten-class teachers: one model of K networks trains each exactly as K separate MLPs on the same
minibatches would, votes like them, and the cache resumes per chunk."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from darrm.experiments.pate import multiclass_teachers as mt
from darrm.experiments.pate.multiclass_teachers import BatchedMLP, fit_batched, multiclass_votes
from darrm.experiments.pate.student import StudentMLP
from darrm.experiments.pate.student_config import StudentConfig


def _shards(K: int, sizes: list[int], seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    n = max(sizes)
    x = torch.rand(K, n, 784, generator=g)
    y = torch.randint(10, (K, n), generator=g)
    return x, y, torch.as_tensor(sizes)


def test_batched_teachers_equal_independent_training():
    """K = 3 networks (shards of 40, 39 and 41 images) trained together for 15 Adam steps end with the weights
    of three separate StudentMLPs started from the same weights and fed the same minibatches."""
    K, cfg = 3, StudentConfig(steps=15, batch_size=8, lr=1e-2, hidden=16, self_training=False)
    x, y, sizes = _shards(K, [40, 39, 41], 0)
    model = BatchedMLP(K, 10, cfg.hidden, torch.Generator().manual_seed(1))
    singles = []
    for k in range(K):
        m = StudentMLP(10, cfg.hidden)
        with torch.no_grad():
            m.net[1].weight.copy_(model.w1[k].T)
            m.net[1].bias.copy_(model.b1[k, 0])
            m.net[3].weight.copy_(model.w2[k].T)
            m.net[3].bias.copy_(model.b2[k, 0])
        singles.append(m)
    fit_batched(model, x, y, sizes, cfg, torch.Generator().manual_seed(2))
    # replay the same minibatch indices (the same generator stream) into K independent Adam optimisers
    g = torch.Generator().manual_seed(2)
    opts = [torch.optim.Adam(m.parameters(), lr=cfg.lr) for m in singles]
    b = min(cfg.batch_size, int(sizes.min()))
    for _ in range(cfg.steps):
        i = (torch.rand(K, b, generator=g) * sizes[:, None]).long()
        for k, (m, opt) in enumerate(zip(singles, opts, strict=True)):
            opt.zero_grad()
            torch.nn.functional.cross_entropy(m(x[k, i[k]]), y[k, i[k]]).backward()
            opt.step()
    for k, m in enumerate(singles):
        torch.testing.assert_close(model.w1[k].T.detach(), m.net[1].weight.detach(), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(model.w2[k].T.detach(), m.net[3].weight.detach(), rtol=1e-4, atol=1e-5)
        with torch.no_grad():
            np.testing.assert_array_equal(mt._votes(model, x[0, :40])[:, k], m(x[0, :40]).argmax(1).numpy())


def test_a_network_never_samples_past_its_own_shard():
    """Rows beyond a shard's size hold poison labels; a network that sampled them could not fit its shard."""
    x, y, _ = _shards(2, [30, 30], 3)
    y[:, 10:] = 0
    y[0, :10], y[1, :10] = 3, 7  # shard 0 is all 3s, shard 1 all 7s, over their first 10 rows
    cfg = StudentConfig(steps=60, batch_size=10, lr=1e-2, hidden=8, self_training=False)
    model = BatchedMLP(2, 10, cfg.hidden, torch.Generator().manual_seed(0))
    fit_batched(model, x, y, torch.as_tensor([10, 10]), cfg, torch.Generator().manual_seed(0))
    votes = mt._votes(model, x[0, :10])
    assert (votes[:, 0] == 3).all() and (votes[:, 1] == 7).all()


def test_votes_are_cached_per_teacher_and_an_interrupted_run_resumes(tmp_path, monkeypatch):
    rng = np.random.default_rng(0)
    tx = rng.integers(0, 256, (120, 28, 28), dtype=np.uint8)
    ty = np.tile(np.arange(10), 12)
    pool = rng.integers(0, 256, (15, 28, 28), dtype=np.uint8)
    cfg = StudentConfig(steps=5, batch_size=4, self_training=False, hidden=8)
    monkeypatch.setattr(mt, "CHUNK", 2)
    first, rec = multiclass_votes("mnist", tx, ty, pool, 5, cfg, 0, tmp_path, progress=False)
    assert first.shape == (15, 5) and rec["teachers_from_cache"] == 0
    d = tmp_path / rec["cache"]
    (d / "votes_003.npy").unlink()  # chunk 1 (teachers 2, 3) is retrained from its own stream
    again, rec2 = multiclass_votes("mnist", tx, ty, pool, 5, cfg, 0, tmp_path, progress=False)
    np.testing.assert_array_equal(first, again)
    assert rec2["teachers_from_cache"] == 4


@pytest.mark.slow
def test_batched_teachers_vote_well_on_real_mnist(shared_datasets, tmp_path):
    """50 teachers on 240 MNIST training images each (the study's shard size at K = 250): the plurality of
    their votes labels 1,000 test images at ≥ 0.85 and the mean teacher is ≥ 0.75 (chance: 0.1)."""
    from darrm.experiments.data.loader import load_dataset

    ds = load_dataset("mnist", shared_datasets / "mnist")
    cfg = StudentConfig(steps=200, self_training=False)
    votes, _ = multiclass_votes("mnist", ds.train_images[:12_000], ds.train_labels[:12_000], ds.test_images[:1000],
                                50, cfg, 0, tmp_path, progress=False)
    plurality = np.array([np.bincount(v, minlength=10).argmax() for v in votes])
    assert np.mean(plurality == ds.test_labels[:1000]) >= 0.85
    assert np.mean(votes == ds.test_labels[:1000, None]) >= 0.75


def test_an_empty_shard_is_refused_naming_sizes():
    from darrm.errors import ParameterError

    model = BatchedMLP(2, 10, 4, torch.Generator().manual_seed(1))
    x, y = torch.zeros(2, 3, 784), torch.zeros(2, 3, dtype=torch.long)
    with pytest.raises(ParameterError) as e:
        fit_batched(model, x, y, torch.as_tensor([3, 0]), StudentConfig(hidden=4, steps=1),
                    torch.Generator().manual_seed(0))
    assert e.value.parameter == "sizes"

"""K teachers on disjoint shards: DP-SGD (Opacus) private teachers and SGD non-private ones.

DaRRM paper Section 6.2 / Appendix D.2: K = 11 teachers, each trained on an
equal disjoint part of the training set, private ones with DP-SGD (σ = 12, C = 1, 5 epochs).
Batch size, sampling and accountant are not given in the paper; we use
batch 32 with Poisson sampling (Opacus ``make_private(poisson_sampling=True)``, sample
rate q = 1/⌈n/32⌉) and report each teacher's (ε, Δ) from ``darrm.accounting.dpsgd.epsilon``
(PRV accountant), cross-checked against Opacus's own PRV accountant.

Privacy of the ensemble: a training example lies in exactly one shard, so by parallel
composition the K trained teachers together are (max_i ε_i, Δ)-DP; any use of them that
does not touch the training data again (e.g. all Q majority votes) is post-processing.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import cast

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from darrm.accounting import dpsgd_epsilon
from darrm.accounting.dpsgd import Accountant
from darrm.errors import ParameterError
from darrm.experiments.pate.model import CNN, to_tensor
from darrm.experiments.pate.teacher_config import TeacherConfig

__all__ = [
    "TeacherConfig",
    "TrainedTeacher",
    "pick_device",
    "predict",
    "shard_indices",
    "teacher_epsilon",
    "train_teacher",
    "warn_weak_teachers",
]


@dataclass(frozen=True)
class TrainedTeacher:
    """A trained teacher: its weights and a record of how it was trained.

    Attributes:
        index: the teacher's index in its ensemble.
        state_dict: the CNN's weights (on the CPU).
        info: how it was trained (shard size, seed, device, steps, time; when private the sample
            rate, ε from darrm.accounting and from Opacus, and Δ).
    """

    index: int
    state_dict: dict
    info: dict


def pick_device(prefer: str | None = None) -> torch.device:
    """CUDA when present (or ``prefer``), CPU otherwise; never requires a GPU.

    Args:
        prefer: a torch device name to use instead (e.g. ``"cpu"``, ``"cuda:1"``), or None.

    Returns:
        The torch device.

    Raises:
        RuntimeError: ``prefer`` is not a valid torch device string.
    """
    if prefer:
        return torch.device(prefer)
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def warn_weak_teachers(accuracies: list[float], threshold: float, what: str) -> list[int]:
    """Warn (RuntimeWarning) about teachers whose accuracy is below ``threshold``: a failed training run
    (a diverged optimiser, a shard without some class) rather than a weak but working teacher.

    Args:
        accuracies: each teacher's accuracy on public labelled data (the test set or query pool).
        threshold: the accuracy below which a teacher is reported.
        what: where the accuracies were measured (for the message).

    Returns:
        The indices of the teachers reported (empty when none).

    Raises:
        TypeError: an accuracy is not a number.
    """
    weak = [i for i, a in enumerate(accuracies) if a < threshold]
    if weak:
        more = "…" if len(weak) > 10 else ""
        warnings.warn(f"{len(weak)} of {len(accuracies)} teachers are below {threshold} accuracy on {what} "
                      f"(teachers {weak[:10]}{more}): a failed training run", RuntimeWarning, stacklevel=2)
    return weak


def shard_indices(n: int, K: int, seed: int) -> list[np.ndarray]:
    """K disjoint shards of ``range(n)`` from a seeded permutation; sizes differ by at most one.

    Args:
        n: size of the training set.
        K: number of shards.
        seed: seeds the permutation.

    Returns:
        K sorted, disjoint index arrays covering ``range(n)``.

    Raises:
        ParameterError: ``K`` outside ``[1, n]``.
    """
    if K < 1 or n < K:
        raise ParameterError("K", f"need 1 <= K <= n, got K={K}, n={n}")
    perm = np.random.default_rng(seed).permutation(n)
    return [np.sort(s) for s in np.array_split(perm, K)]


def teacher_epsilon(noise_multiplier: float, sample_rate: float, steps: int, delta: float,
                    accountant: Accountant = "prv") -> float:
    """(ε, Δ) of DP-SGD with Poisson sampling, from the toolkit's accountant (``darrm.accounting.dpsgd``).

    Args:
        noise_multiplier: DP-SGD's σ.
        sample_rate: the Poisson sampling rate.
        steps: number of noisy steps.
        delta: Δ.
        accountant: ``"prv"`` or ``"rdp"``.

    Returns:
        ε at Δ.

    Raises:
        ParameterError: a bad value (naming it).
    """
    return float(dpsgd_epsilon(noise_multiplier, sample_rate, steps, delta, accountant=accountant))


def _sgd_epochs(model: nn.Module, optimizer, loader, criterion, epochs: int, device: torch.device) -> int:
    """``epochs`` passes of (DP-)SGD over ``loader``; the number of optimizer steps."""
    steps = 0
    model.train()
    for _ in range(epochs):
        for xb, yb in loader:
            optimizer.zero_grad(set_to_none=True)
            out = model(xb.to(device))
            loss = criterion(out, yb.to(device))
            loss.backward()
            optimizer.step()
            steps += 1
    return steps


def train_teacher(
    images: np.ndarray,
    labels: np.ndarray,
    cfg: TeacherConfig,
    index: int,
    device: torch.device | None = None,
) -> TrainedTeacher:
    """Train teacher ``index`` on (images, labels) with SGD, or DP-SGD via Opacus when ``cfg.private``.

    Args:
        images: the shard's uint8 images ``(n, 28, 28)``.
        labels: their labels.
        cfg: the ensemble's settings.
        index: the teacher's index (seeds it, with ``cfg.seed``).
        device: torch device (default: :func:`pick_device`).

    Returns:
        The :class:`TrainedTeacher`.

    Raises:
        ImportError: opacus is needed (``cfg.private``) and not installed (the CLI checks this first).
        ValueError: Opacus refuses the model or the settings.
    """
    device = device or pick_device()
    seed = cfg.seed * 1000 + index + (500 if cfg.private else 0)
    torch.manual_seed(seed)
    x, y = to_tensor(images), torch.as_tensor(labels, dtype=torch.long)
    model: nn.Module = CNN(cfg.n_classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=cfg.momentum)
    gen = torch.Generator().manual_seed(seed)
    loader = DataLoader(TensorDataset(x, y), batch_size=cfg.batch_size, shuffle=True, generator=gen)
    criterion = nn.CrossEntropyLoss()
    info: dict = {"index": index, "n_train": int(len(y)), "private": cfg.private, "seed": seed,
                  "device": str(device)}
    engine = None
    if cfg.private:
        from opacus import PrivacyEngine

        engine = PrivacyEngine(accountant=cfg.accountant)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model, optimizer, loader = engine.make_private(
                module=model,
                optimizer=optimizer,
                data_loader=loader,
                noise_multiplier=cfg.noise_multiplier,
                max_grad_norm=cfg.max_grad_norm,
                poisson_sampling=True,
            )
        info["sample_rate"] = float(loader.sample_rate)
    t0 = time.perf_counter()
    steps = _sgd_epochs(model, optimizer, loader, criterion, cfg.epochs, device)
    info["train_seconds"] = time.perf_counter() - t0
    info["steps"] = steps
    if engine is not None:  # cfg.private
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            info["eps_opacus"] = float(engine.get_epsilon(cfg.delta))
        info["eps"] = teacher_epsilon(cfg.noise_multiplier, info["sample_rate"], steps, cfg.delta,
                                      cfg.accountant)
        info["delta"] = cfg.delta
        model = cast(nn.Module, model._module)  # unwrap GradSampleModule
    state = {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}
    return TrainedTeacher(index, state, info)


@torch.no_grad()
def predict(state_dict: dict, images: np.ndarray, n_classes: int = 10,
            device: torch.device | None = None, batch: int = 2048) -> np.ndarray:
    """Predicted labels (argmax of the logits) of a teacher on ``images``; int64 array.

    Args:
        state_dict: the teacher's CNN weights.
        images: uint8 images ``(n, 28, 28)``.
        n_classes: the CNN's outputs.
        device: torch device (default: :func:`pick_device`).
        batch: images per forward pass.

    Returns:
        The n predicted labels.

    Raises:
        RuntimeError: ``state_dict`` does not fit a :class:`~darrm.experiments.pate.model.CNN` with ``n_classes``.
    """
    device = device or pick_device()
    model = CNN(n_classes).to(device)
    model.load_state_dict(state_dict)
    model.eval()
    x = to_tensor(images)
    out = [model(x[i:i + batch].to(device)).argmax(1).cpu() for i in range(0, len(x), batch)]
    return torch.cat(out).numpy().astype(np.int64)

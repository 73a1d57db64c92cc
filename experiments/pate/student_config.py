"""Settings of the PATE student (torch-free, like :mod:`.teacher_config`; training is :mod:`.student`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from darrm.validation import choice, count, flag, non_negative, open_unit, positive

__all__ = ["SemiSupervisedConfig", "StudentConfig", "TrainedStudent"]


@dataclass(frozen=True)
class StudentConfig:
    """How a student is trained (validated on construction).

    Args:
        steps: Adam steps on the labelled set (and again after pseudo-labelling).
        batch_size: minibatch size (capped at the labelled set's size).
        lr: Adam learning rate.
        self_training: one round of pseudo-labelling on the unlabelled rest of the pool.
        confidence: softmax threshold a pseudo-label must reach.
        hidden: width of the MLP's hidden layer.
    """

    steps: int = 200
    batch_size: int = 64
    lr: float = 1e-3
    self_training: bool = True
    confidence: float = 0.9
    hidden: int = 128

    def __post_init__(self) -> None:
        count("steps", self.steps)
        count("batch_size", self.batch_size)
        positive("lr", self.lr)
        flag("self_training", self.self_training)
        open_unit("confidence", self.confidence)
        count("hidden", self.hidden)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class SemiSupervisedConfig:
    """How the semi-supervised student is trained (validated on construction; the training is
    :mod:`.semi_supervised`).

    Args:
        rounds: label-spreading → CNN rounds (the first spreads on pixels, later ones on the CNN's features).
        neighbours: k of the symmetric k-nearest-neighbour graph on the pool.
        alpha: label spreading's α in (0, 1) (Zhou et al. 2004): weight of the graph against the given labels.
        steps: CNN minibatch steps (Adam) per round, whatever the pool's size.
        batch_size: CNN minibatch size.
        lr: Adam learning rate of the CNN.
        shift: largest random translation of the augmentation, in pixels.
        rotation: largest random rotation of the augmentation, in degrees.
        network: ``"cnn"`` (the small strided CNN, ≈ 0.5 M multiply-adds per image) or ``"mlp"``
            (784 → 256 → C, ≈ 2.5× cheaper, for small pools and smoke tests).

    The defaults (three rounds of 300 steps) put the student on MNIST's 5,000-image pool with true labels
    at 0.957 / 0.963 on the held-out half (Q = 100 / 500, one blind draw; experiments/RESULTS.md); two
    rounds of 120 steps gave 0.916 / 0.927.
    """

    rounds: int = 3
    neighbours: int = 10
    alpha: float = 0.99
    steps: int = 300
    batch_size: int = 128
    lr: float = 2e-3
    shift: float = 2.0
    rotation: float = 10.0
    network: str = "cnn"

    def __post_init__(self) -> None:
        count("rounds", self.rounds)
        count("neighbours", self.neighbours)
        open_unit("alpha", self.alpha)
        count("steps", self.steps)
        count("batch_size", self.batch_size)
        positive("lr", self.lr)
        non_negative("shift", self.shift)
        non_negative("rotation", self.rotation)
        choice("network", self.network, ("cnn", "mlp"))

    def as_dict(self) -> dict:
        return {"kind": "semi-supervised", **asdict(self)}


@dataclass(frozen=True)
class TrainedStudent:
    """A finished student: ``predict(images) → labels`` in the original label space, and a record.

    Attributes:
        predict: maps uint8 images ``(n, 28, 28)`` to n labels in the original label space.
        info: the training record (labelled and pseudo-labelled counts).
    """

    predict: Callable[[np.ndarray], np.ndarray]
    info: dict

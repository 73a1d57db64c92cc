"""Settings of the PATE student (torch-free, like :mod:`.teacher_config`; training is :mod:`.student`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from darrm.validation import count, flag, open_unit, positive

__all__ = ["StudentConfig"]


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

"""Settings of one teacher ensemble (torch-free, so that study settings and ``--help`` work on a
plain install; training itself is :mod:`darrm.experiments.pate.teachers`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from darrm.accounting.dpsgd import PAPER_TEACHERS
from darrm.validation import choice, count, half_open_unit, odd_count, open_unit, positive

__all__ = ["TEACHER_ACCOUNTANTS", "TeacherAccountant", "TeacherConfig"]

#: accountants both Opacus's PrivacyEngine and darrm.accounting.dpsgd implement
TeacherAccountant = Literal["prv", "rdp"]
TEACHER_ACCOUNTANTS: tuple[TeacherAccountant, ...] = ("prv", "rdp")


@dataclass(frozen=True)
class TeacherConfig:
    """Settings of one ensemble of teachers (private or not).  Validated on construction.

    Attributes:
        private: DP-SGD (Opacus) when True, plain SGD otherwise.
        K: number of teachers (odd).
        epochs: training epochs.
        batch_size: expected minibatch size (the Poisson sampling rate is batch_size / shard size).
        lr: SGD learning rate.
        momentum: SGD momentum, in [0, 1).
        noise_multiplier: σ_DPSGD (Section 6.2; private only).
        max_grad_norm: the clipping norm C (Section 6.2; private only).
        delta: Δ of each teacher's (ε, Δ) (Section 6.2; private only).
        n_classes: the CNN's outputs (the reference scripts use the 10-way head with labels 5/8).
        seed: seeds the teachers' initialisation and minibatches.
        accountant: ``"prv"`` or ``"rdp"``, the DP-SGD accountant of both Opacus and darrm.accounting.

    Raises:
        ParameterError: a bad setting, naming it (validated on construction).
    """

    private: bool
    K: int = 11
    epochs: int = PAPER_TEACHERS.epochs
    batch_size: int = PAPER_TEACHERS.batch_size
    lr: float = 0.1
    momentum: float = 0.0
    noise_multiplier: float = PAPER_TEACHERS.noise_multiplier  # σ_DPSGD (Section 6.2)
    max_grad_norm: float = PAPER_TEACHERS.max_grad_norm  # C (Section 6.2)
    delta: float = PAPER_TEACHERS.delta  # Δ (Section 6.2)
    n_classes: int = 10  # reference scripts use the 10-way head with labels 5/8
    seed: int = 0
    accountant: TeacherAccountant = "prv"

    def __post_init__(self) -> None:
        odd_count("K", self.K)
        count("epochs", self.epochs)
        count("batch_size", self.batch_size)
        positive("lr", self.lr)
        half_open_unit("momentum", self.momentum)
        if self.private:
            positive("noise_multiplier", self.noise_multiplier)
            positive("max_grad_norm", self.max_grad_norm)
            open_unit("delta", self.delta)
        count("n_classes", self.n_classes, minimum=2)
        choice("accountant", self.accountant, TEACHER_ACCOUNTANTS)

    def as_dict(self) -> dict:
        return asdict(self)

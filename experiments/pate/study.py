"""Settings of the knowledge-transfer study and its reproducible randomness (no I/O here)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from darrm.accounting.dpsgd import PAPER_TEACHERS
from darrm.errors import ParameterError
from darrm.experiments.data.loader import DATASETS
from darrm.experiments.pate.student_config import StudentConfig
from darrm.experiments.pate.teacher_config import TeacherConfig
from darrm.experiments.releases import Method
from darrm.validation import count, flag, open_unit

__all__ = ["METHODS", "StudyConfig", "query_indices"]

#: Release methods, in table order: release, votes, arguments from the per-m mechanism dict
#: (:func:`darrm.experiments.pate.run.build_mechanisms`) and the stream id for seeding.
METHODS: dict[str, Method] = {
    "gnmax-paper": Method("gnmax", "nonprivate", 1, (("sigma", "sigma_paper"),)),
    "gnmax-tight": Method("gnmax", "nonprivate", 2, (("sigma", "sigma_tight"),)),
    "darrm-sub": Method("darrm", "private", 3, (("gamma", "gamma_sub"),)),
    "darrm-opt": Method("darrm", "private", 4, (("gamma", "gamma_opt"),)),
    "majority-private-parallel": Method("majority", "private", 5),
    "majority-nonprivate": Method("majority", "nonprivate", 6),
    # GNMax on the non-private teachers at the DaRRM rows' own total (the private teachers' (ε, Δ)),
    # its σ per Q (:func:`darrm.experiments.pate.run.mechanism_at`)
    "gnmax-equal-total": Method("gnmax", "nonprivate", 7, (("sigma", "sigma_equal_total"),)),
}


@dataclass(frozen=True)
class StudyConfig:
    """The study of DaRRM paper Section 6.2 / Appendix D.2 (defaults = the full study).

    ``lr_*`` and ``batch_size`` are not given by the paper (Section 6.2, Appendix D.2); lr = 0.05
    plain SGD was chosen so that a private MNIST teacher reaches about the paper's
    m = 1 accuracy (~0.7).  ``train_size=None`` uses every training image of the two
    classes (Fashion-MNIST: 12,000, where the paper says 10,000 without saying how).

    ``student``: when set, the public (test) set is split as PATE does
    (:func:`~darrm.experiments.pate.public_split.split_public`, ``held_out_fraction`` held out):
    queries are drawn from the pool only, and a student is trained on every released label set
    and scored on the held-out half (:mod:`~darrm.experiments.pate.student_study`).

    Attributes:
        dataset: ``"mnist"`` or ``"fashion-mnist"``.
        ms: the m values (teachers per DaRRM subsample), each in [1, K].
        queries: the Q values (queries answered per draw).
        draws: repeated draws of the Q queries.
        K: number of teachers.
        epochs: teacher training epochs.
        batch_size: teacher minibatch size.
        lr_private: learning rate of the DP-SGD teachers.
        lr_nonprivate: learning rate of the non-private teachers.
        noise_multiplier: DP-SGD's σ (Section 6.2).
        max_grad_norm: DP-SGD's clipping norm C (Section 6.2).
        member_delta: each teacher's Δ (Section 6.2).
        delta_prime: δ′ of the composition over Q queries.
        train_size: a seeded subset of this many two-class training images (None: all).
        classes: the two classes of the task.
        seed: seeds the training split, the shards, the teachers, the query draws and the mechanisms.
        student: the students' settings (None: no student, every test image may be queried).
        held_out_fraction: share of the public set held out as the students' test set.
        smoke_test: the run is a smoke test (its tables say so and show no paper columns).

    Raises:
        ParameterError: a bad setting, naming it (validated on construction).
    """

    dataset: str
    ms: tuple[int, ...] = (1, 3, 5, 7)
    queries: tuple[int, ...] = (20, 50, 100)
    draws: int = 10
    K: int = 11
    epochs: int = PAPER_TEACHERS.epochs
    batch_size: int = PAPER_TEACHERS.batch_size
    lr_private: float = 0.05
    lr_nonprivate: float = 0.05
    noise_multiplier: float = PAPER_TEACHERS.noise_multiplier
    max_grad_norm: float = PAPER_TEACHERS.max_grad_norm
    member_delta: float = PAPER_TEACHERS.delta
    delta_prime: float = 1e-4
    train_size: int | None = None
    classes: tuple[int, int] = (5, 8)
    seed: int = 0
    student: StudentConfig | None = None
    held_out_fraction: float = 0.5
    smoke_test: bool = False

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ParameterError("dataset", f"must be one of {DATASETS}, got {self.dataset!r}")
        if not self.ms or any((not float(m).is_integer()) or not 1 <= m <= self.K for m in self.ms):
            raise ParameterError("ms", f"each m must be an integer in [1, K={self.K}], got {self.ms!r}")
        if not self.queries:
            raise ParameterError("queries", f"must be positive integers, got {self.queries!r}")
        for q in self.queries:
            count("queries", q)
        count("draws", self.draws)
        if self.train_size is not None:
            count("train_size", self.train_size, minimum=2)
        count("seed", self.seed, minimum=0)
        open_unit("delta_prime", self.delta_prime)
        open_unit("held_out_fraction", self.held_out_fraction)
        flag("smoke_test", self.smoke_test)
        if self.student is not None and not isinstance(self.student, StudentConfig):
            raise ParameterError("student", f"must be a StudentConfig or None, got {type(self.student).__name__}")
        object.__setattr__(self, "ms", tuple(int(m) for m in self.ms))
        object.__setattr__(self, "queries", tuple(int(q) for q in self.queries))
        object.__setattr__(self, "classes", tuple(int(c) for c in self.classes))
        self.teacher_config(True)  # validates the teacher settings
        self.teacher_config(False)

    @classmethod
    def quick(cls, dataset: str, **overrides) -> StudyConfig:
        """CI preset: 1 epoch, Q = 20, 2 draws, m = 3 — every stage, real data, minutes on CPU."""
        base: dict[str, Any] = dict(ms=(3,), queries=(20,), draws=2, epochs=1, smoke_test=True)
        base.update(overrides)
        return cls(dataset, **base)

    @classmethod
    def with_student(cls, dataset: str, quick: bool = False, **overrides) -> StudyConfig:
        """The student study: m = 3, Q ∈ {20, 50, 100, 200, 500}, 5 draws, a student per
        release; ``quick``: the smoke-test preset (1 teacher epoch, Q = 20, 2 draws, 50 student steps)."""
        base: dict[str, Any] = (dict(ms=(3,), queries=(20,), draws=2, epochs=1, student=StudentConfig(steps=50),
                                     smoke_test=True)
                                if quick else dict(ms=(3,), queries=(20, 50, 100, 200, 500), draws=5,
                                                   student=StudentConfig()))
        base.update(overrides)
        return cls(dataset, **base)

    def teacher_config(self, private: bool) -> TeacherConfig:
        return TeacherConfig(
            private=private,
            K=self.K,
            epochs=self.epochs,
            batch_size=self.batch_size,
            lr=self.lr_private if private else self.lr_nonprivate,
            noise_multiplier=self.noise_multiplier,
            max_grad_norm=self.max_grad_norm,
            delta=self.member_delta,
            seed=self.seed,
        )

    def as_dict(self) -> dict:
        return asdict(self)


def query_indices(seed: int, n_test: int, Q: int, draw: int) -> np.ndarray:
    """Indices of draw ``draw`` of Q test queries, uniformly without replacement (Appendix D.2).

    Depends only on (seed, Q, draw): every method and every m answers the same queries.

    Args:
        seed: the study's seed.
        n_test: size of the set queried.
        Q: number of queries.
        draw: the draw's index.

    Returns:
        Q distinct indices into ``range(n_test)``.

    Raises:
        ParameterError: ``Q`` outside ``[1, n_test]``.
    """
    if not 1 <= Q <= n_test:
        raise ParameterError("Q", f"must be in [1, {n_test}], got {Q}")
    return np.random.default_rng([seed, 0, Q, draw]).choice(n_test, size=Q, replace=False)

"""Settings of the ten-class PATE study at equal total budgets (torch-free; the run is :mod:`.multiclass_run`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from darrm.errors import ParameterError
from darrm.experiments.data.loader import DATASETS
from darrm.experiments.pate.student_config import SemiSupervisedConfig, StudentConfig
from darrm.validation import count, epsilon, flag, open_unit

__all__ = ["METHODS", "MulticlassConfig"]

#: the ten-class study's methods, in table order
METHODS = ("gnmax", "confident-gnmax", "darrm-plurality", "darrm-duel", "plurality-nonprivate", "true-labels")


@dataclass(frozen=True)
class MulticlassConfig:
    """The ten-class study (the C-class aggregator and the total-budget comparison at C = 10).

    Args:
        dataset: ``mnist`` or ``fashion-mnist``.
        teachers: K non-private teachers on disjoint shards (PATE 2018: 250).
        queries: the Q values.
        total_eps: the total ε budgets every aggregator is calibrated to.
        total_delta: the total δ (the study uses 1e-5).
        draws: repeated draws of the Q queries (seeds of the query sets, mechanisms and students).
        seed: the study's seed.
        held_out_fraction: share of the public (test) set held out for the students.
        train_size: a seeded subset of the training set (None: all 60,000).
        public_size: a seeded subset of the public (test) set split into pool and held-out half
            (None: all 10,000).
        teacher: how a teacher is trained (an MLP on its shard; no self-training).
        student: how the study's student is trained (default: the semi-supervised student, label
            spreading and a CNN on the pool; a :class:`StudentConfig` trains the supervised MLP).
        baseline_student: the supervised MLP student trained beside it on the same labels (the
            "supervised" baseline row), or None.
        methods: the methods run (default: all, in table order).
        prior_accuracy: the per-teacher accuracy of the DaRRM LP's data-independent prior.
        smoke_test: the ``--quick`` preset (its tables say so and show no paper columns).
    """

    dataset: str
    teachers: int = 250
    queries: tuple[int, ...] = (20, 50, 100, 500)
    total_eps: tuple[float, ...] = (0.5, 1.0, 2.0)
    total_delta: float = 1e-5
    draws: int = 3
    seed: int = 0
    held_out_fraction: float = 0.5
    train_size: int | None = None
    public_size: int | None = None
    teacher: StudentConfig = field(default_factory=lambda: StudentConfig(steps=200, self_training=False))
    student: StudentConfig | SemiSupervisedConfig = field(default_factory=SemiSupervisedConfig)
    baseline_student: StudentConfig | None = field(default_factory=StudentConfig)
    methods: tuple[str, ...] = METHODS
    prior_accuracy: float = 0.75
    smoke_test: bool = False

    def __post_init__(self) -> None:
        if self.dataset not in DATASETS:
            raise ParameterError("dataset", f"must be one of {DATASETS}, got {self.dataset!r}")
        count("teachers", self.teachers, minimum=2, maximum=60_000)  # at most one image per teacher
        if not self.queries or not self.total_eps:
            raise ParameterError("queries" if not self.queries else "total_eps", "must not be empty")
        object.__setattr__(self, "queries", tuple(count("queries", q) for q in self.queries))
        object.__setattr__(self, "total_eps", tuple(epsilon("total_eps", e) for e in self.total_eps))
        open_unit("total_delta", self.total_delta)
        from .plurality_top_two import ROUNDING_MARGIN

        if self.total_delta <= ROUNDING_MARGIN:  # every query's δ ≤ δ_total: no plurality table certifies
            raise ParameterError("total_delta", f"must exceed {ROUNDING_MARGIN:g} (the plurality certificate's "
                                                f"rounding margin, which each query's δ ≤ δ_total must exceed), "
                                                f"got {self.total_delta!r}")
        count("draws", self.draws)
        count("seed", self.seed, minimum=0)
        open_unit("held_out_fraction", self.held_out_fraction)
        if self.train_size is not None:
            count("train_size", self.train_size, minimum=self.teachers)
        if self.public_size is not None:
            count("public_size", self.public_size, minimum=4)
        open_unit("prior_accuracy", self.prior_accuracy)
        methods = tuple(self.methods) if isinstance(self.methods, list | tuple) else ()
        if not methods or len(set(methods)) != len(methods) or not set(methods) <= set(METHODS):
            raise ParameterError("methods", f"must be distinct names among {METHODS}, got {self.methods!r}")
        object.__setattr__(self, "methods", tuple(m for m in METHODS if m in methods))
        flag("smoke_test", self.smoke_test)
        if not isinstance(self.teacher, StudentConfig):
            raise ParameterError("teacher", f"must be a StudentConfig, got {type(self.teacher).__name__}")
        if not isinstance(self.student, StudentConfig | SemiSupervisedConfig):
            raise ParameterError("student", "must be a StudentConfig or a SemiSupervisedConfig, got "
                                 f"{type(self.student).__name__}")
        if self.baseline_student is not None and not isinstance(self.baseline_student, StudentConfig):
            raise ParameterError("baseline_student", "must be a StudentConfig or None, got "
                                 f"{type(self.baseline_student).__name__}")
        if self.teacher.self_training:
            raise ParameterError("teacher", "teachers train on their shard's true labels only (self_training=False)")

    @classmethod
    def quick(cls, dataset: str, **overrides: Any) -> MulticlassConfig:
        """Smoke test: 25 teachers on 5000 training images, 1,000 public images (pool 500), Q = 20,
        ε_total = 2, 2 draws, short training (semi-supervised student with the MLP network: 2 rounds of 30 steps)."""
        base: dict[str, Any] = dict(teachers=25, queries=(20,), total_eps=(2.0,), draws=2, train_size=5000,
                                    public_size=1000, teacher=StudentConfig(steps=50, self_training=False),
                                    student=SemiSupervisedConfig(rounds=2, steps=30, network="mlp"),
                                    baseline_student=StudentConfig(steps=50),
                                    smoke_test=True)
        base.update(overrides)
        return cls(dataset, **base)

    def as_dict(self) -> dict:
        out = asdict(self)
        out["student"] = self.student.as_dict()
        return out

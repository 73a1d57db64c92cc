"""Spies shared by the PATE pipeline tests: which data each student trains on, and when the
held-out half is read (the pipeline must train first and evaluate after)."""

from __future__ import annotations

import pytest

from darrm.experiments.pate.public_split import HeldOutSet


def _spy_students(mp: pytest.MonkeyPatch, owner: object, events: list[tuple]) -> None:
    """Record ("train", images, unlabelled) for every student ``owner.train_student`` trains and
    ("evaluate",) for every held-out evaluation, in the order they happen."""
    real_train, real_accuracy = owner.train_student, HeldOutSet.accuracy

    def train(images, labels, unlabelled, classes, cfg, seed):
        events.append(("train", images.copy(), unlabelled.copy()))
        return real_train(images, labels, unlabelled, classes, cfg, seed)

    def accuracy(self, predict):
        events.append(("evaluate",))
        return real_accuracy(self, predict)

    mp.setattr(owner, "train_student", train)
    mp.setattr(HeldOutSet, "accuracy", accuracy)


@pytest.fixture(scope="module")
def spy_students():
    """``spy_students(monkeypatch, module_that_calls_train_student, events)``."""
    return _spy_students

"""Students for every released label set of a study: train on the pool, score on the held-out half.

For each cell (method, m, Q, draw) of the study's releases — query *positions in the pool* and the
labels the aggregator released for them — a student (:func:`~.student.train_student`) is trained
on those pool images and labels (plus pseudo-labels on the rest of the pool with self-training)
and scored once on the held-out half through its guard (:class:`~.public_split.HeldOutSet`).
Students of the same (Q, draw) share their seed across methods and m (common random numbers), so
rows differ only by the labels they were given.
"""

from __future__ import annotations

import numpy as np
from tqdm.auto import tqdm

from darrm.experiments.pate.public_split import HeldOutSet
from darrm.experiments.pate.student import train_student
from darrm.experiments.pate.student_config import StudentConfig

__all__ = ["student_accuracies", "student_seed"]


def student_seed(seed: int, Q: int, draw: int) -> int:
    """The torch seed of the students of one (Q, draw), from the study seed (stream 13).

    Args:
        seed: the study's seed.
        Q: number of queries.
        draw: the draw's index.

    Returns:
        A seed in ``[0, 2**31 − 1)``.

    Raises:
        ValueError: a negative ``seed``, ``Q`` or ``draw`` (numpy refuses negative seed entries).
    """
    return int(np.random.default_rng([seed, 13, Q, draw]).integers(2**31 - 1))


def student_accuracies(released: dict, pool_images: np.ndarray, classes: tuple[int, ...], held_out: HeldOutSet,
                       cfg: StudentConfig, seed: int, progress: bool = True) -> dict[tuple[str, int, int], np.ndarray]:
    """Per (method, m, Q): the per-draw held-out accuracies of students trained on the released labels.

    Args:
        released: ``{(method, m, Q, draw): (pool positions, released labels)}``.
        pool_images: the query pool's images (positions index this array).
        classes: the label space of the student's head.
        held_out: the guarded held-out half (read only to score finished students).
        cfg: student training settings.
        seed: the study's seed.
        progress: show a progress bar.

    Returns:
        ``{(method, m, Q): array of accuracies in draw order}``.

    Raises:
        ParameterError: a released label outside ``classes``.
        HeldOutAccessError: something reads the held-out half outside its scoring.
    """
    out: dict[tuple[str, int, int], list[float]] = {}
    everything = np.arange(len(pool_images))
    for (method, m, Q, draw), (idx, labels) in tqdm(sorted(released.items()), desc="students",
                                                      disable=not progress, leave=False):
        rest = np.setdiff1d(everything, idx, assume_unique=True)
        student = train_student(pool_images[idx], labels, pool_images[rest], classes, cfg, student_seed(seed, Q, draw))
        out.setdefault((method, m, Q), []).append(held_out.accuracy(student.predict))
    return {k: np.asarray(v) for k, v in out.items()}

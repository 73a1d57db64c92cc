"""PATE's split of the public data: a query pool and a held-out test half that is never queried.

PATE (Papernot et al. 2017, Section 4.1; Papernot et al. 2018, Section 5) trains the student on
part of the public data and reports its accuracy on the rest: the aggregator answers queries
about, and the student sees (labelled or not), only the *query pool*; the *held-out* half is
the test set of the student.  Its images and labels are read exactly once per student, to score
a student whose training has finished.

:class:`HeldOutSet` enforces this: it keeps the held-out arrays private and offers a single
entry point, :meth:`HeldOutSet.accuracy`, which receives a finished predictor.  Reading the
arrays any other way raises :class:`HeldOutAccessError`, so a pipeline that trains or queries on
the held-out half fails instead of silently reporting an optimistic accuracy (the tests run a
deliberately leaking pipeline to show it does).  Pure numpy, no I/O, no torch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from darrm.errors import DarrmError, ParameterError
from darrm.validation import count, open_unit

__all__ = ["HeldOutAccessError", "HeldOutSet", "PublicSplit", "split_public"]


class HeldOutAccessError(DarrmError):
    """The held-out half of the public data was read outside :meth:`HeldOutSet.accuracy`."""


@dataclass(frozen=True)
class PublicSplit:
    """Indices into the public set: ``pool`` (queries and unlabelled data), ``held_out`` (student test).

    Both are sorted, disjoint, and together cover ``range(n)``.

    Attributes:
        pool: sorted indices of the query pool (queries and unlabelled data).
        held_out: sorted indices of the students' test set, never queried.
    """

    pool: np.ndarray
    held_out: np.ndarray

    def __post_init__(self) -> None:
        for name in ("pool", "held_out"):
            a = np.asarray(getattr(self, name))
            if a.ndim != 1 or not np.issubdtype(a.dtype, np.integer) or a.size == 0:
                raise ParameterError(name, f"must be a non-empty 1-D integer index array, got shape {a.shape}")
            a = np.sort(a).astype(np.int64)
            a.setflags(write=False)
            object.__setattr__(self, name, a)
        if np.intersect1d(self.pool, self.held_out).size:
            raise ParameterError("held_out", "must be disjoint from the query pool")

    def as_dict(self) -> dict:
        return {"pool": self.pool.tolist(), "held_out": self.held_out.tolist()}


def split_public(n: int, seed: int, held_out_fraction: float = 0.5) -> PublicSplit:
    """Seeded split of ``range(n)``: ``round(n·held_out_fraction)`` indices held out, the rest the pool.

    Args:
        n: size of the public set (the test images of the task).
        seed: the study's seed (stream ``[seed, 11]``, independent of query draws and mechanisms).
        held_out_fraction: share of the public set kept as the student's test set (PATE: one half).

    Returns:
        The :class:`PublicSplit`.

    Raises:
        ParameterError: ``n < 2``, or a fraction outside (0, 1) that leaves either side empty.
    """
    n = count("n", n, minimum=2)
    frac = open_unit("held_out_fraction", held_out_fraction)
    k = int(round(n * frac))
    if not 1 <= k <= n - 1:
        raise ParameterError("held_out_fraction", f"leaves an empty side for n={n}: {held_out_fraction}")
    perm = np.random.default_rng([count("seed", seed, minimum=0), 11]).permutation(n)
    return PublicSplit(pool=perm[k:], held_out=perm[:k])


class HeldOutSet:
    """The held-out images and labels behind a guard: only :meth:`accuracy` reads them.

    Args:
        images: held-out inputs (any array; copied, read-only).
        labels: their true labels (copied, read-only).

    Attribute access to the data (``images``, ``labels``, indexing, ``len``, ``np.asarray``) raises
    :class:`HeldOutAccessError`; ``evaluations`` counts the calls of :meth:`accuracy`.
    """

    __slots__ = ("_images", "_labels", "evaluations")

    def __init__(self, images: np.ndarray, labels: np.ndarray) -> None:
        images, labels = np.array(images), np.array(labels)
        if len(images) != len(labels) or len(labels) == 0:
            raise ParameterError("labels", f"need one label per image, got {len(images)} images, {len(labels)} labels")
        images.setflags(write=False)
        labels.setflags(write=False)
        self._images, self._labels = images, labels
        self.evaluations = 0

    def _refuse(self, what: str) -> HeldOutAccessError:
        return HeldOutAccessError(f"the held-out half was read via {what}: it is the student's test set and is "
                                  "read only by HeldOutSet.accuracy(predict) after training")

    @property
    def images(self) -> np.ndarray:
        raise self._refuse("images")

    @property
    def labels(self) -> np.ndarray:
        raise self._refuse("labels")

    def __getitem__(self, key):
        raise self._refuse("indexing")

    def __len__(self) -> int:
        raise self._refuse("len()")

    def __array__(self, *args, **kwargs):
        raise self._refuse("np.asarray()")

    def __iter__(self):
        raise self._refuse("iteration")

    def accuracy(self, predict: Callable[[np.ndarray], np.ndarray]) -> float:
        """Fraction of held-out images on which ``predict`` (a finished student) returns the true label.

        Args:
            predict: maps an image batch to predicted labels (same label space as ``labels``).

        Returns:
            The accuracy in [0, 1].

        Raises:
            ParameterError: ``predict`` returned the wrong number of labels.
        """
        self.evaluations += 1
        pred = np.asarray(predict(self._images))
        if pred.shape != self._labels.shape:
            raise ParameterError("predict", f"returned shape {pred.shape}, expected {self._labels.shape}")
        return float(np.mean(pred == self._labels))

"""Label-release mechanisms for the knowledge-transfer study (DaRRM paper Section 6.2, App. D.2).

Every function here sees **only the teachers' votes** (a ``(Q, K)`` array of predicted labels)
and its own randomness — never the true labels — so the released labels cannot peek at
the ground truth.  ``classes = (a, b)`` is the binary task, ``a`` the "0" label (5) and ``b``
the "1" label (8).

* :func:`darrm_release` — binary reduction of the reference code (spec §5): a teacher's
  bit is 1 when it predicts anything other than ``a``; L = number of 1-bits; DaRRM
  (Algorithm 1, ``darrm.mechanism.aggregate``) releases the majority with probability γ(L),
  else a fair coin.  Each bit is post-processing of an (ε, Δ)-DP teacher, so DaRRM's
  (mε, δ) guarantee (Lemma 3.4) applies per query.
* :func:`gnmax_release` — GNMax (Papernot et al. 2018; paper Eq. 205): argmax over the two
  classes of (vote count + N(0, σ²)); other predicted labels are not counted; ties → ``a``.
* :func:`majority_release` — plain majority of the bits (γ ≡ 1), no noise: the ceiling for
  non-private teachers, and for private teachers the "parallel composition" release whose
  total cost over any number of queries is the teachers' own (ε, Δ).
"""

from __future__ import annotations

import numpy as np

from darrm.errors import ParameterError
from darrm.mechanism import aggregate

__all__ = ["binary_votes", "darrm_release", "gnmax_release", "majority_release"]


def _votes(votes: object) -> np.ndarray:
    a = np.asarray(votes)
    if a.ndim != 2 or a.shape[1] < 1:
        raise ParameterError("votes", f"must be a (Q, K) array of predicted labels, got shape {a.shape}")
    if not np.issubdtype(a.dtype, np.integer):
        raise ParameterError("votes", f"must hold integer labels, got dtype {a.dtype}")
    return a


def _classes(classes: tuple[int, int]) -> tuple[int, int]:
    if len(classes) != 2 or classes[0] == classes[1]:
        raise ParameterError("classes", f"must be two distinct labels, got {classes!r}")
    return int(classes[0]), int(classes[1])


def binary_votes(votes: object, classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """0/1 bits: 1 where a teacher predicts a label other than ``classes[0]`` (reference reduction)."""
    a, _ = _classes(classes)
    return (_votes(votes) != a).astype(np.int64)


def darrm_release(votes: object, gamma: np.ndarray, rng: np.random.Generator,
                  classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """DaRRM_γ labels for each query row of ``votes`` (Algorithm 1 on the binary reduction)."""
    a, b = _classes(classes)
    bits = aggregate(binary_votes(votes, classes), gamma, rng)
    return np.where(bits == 1, b, a)


def gnmax_release(votes: object, sigma: float, rng: np.random.Generator,
                  classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """GNMax labels: argmax_c (n_c + N(0, σ²)) over c ∈ ``classes`` (ties → ``classes[0]``)."""
    a, b = _classes(classes)
    if not (np.isfinite(sigma) and sigma > 0):
        raise ParameterError("sigma", f"must be a positive finite number, got {sigma!r}")
    v = _votes(votes)
    counts = np.stack([(v == a).sum(axis=1), (v == b).sum(axis=1)], axis=1).astype(np.float64)
    noisy = counts + rng.normal(0.0, sigma, size=counts.shape)
    return np.where(noisy[:, 1] > noisy[:, 0], b, a)


def majority_release(votes: object, classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """Noise-free majority of the binary reduction: ``classes[1]`` iff more than K/2 bits are 1."""
    a, b = _classes(classes)
    bits = binary_votes(votes, classes)
    K = bits.shape[1]
    return np.where(bits.sum(axis=1) >= (K + 1) // 2, b, a)

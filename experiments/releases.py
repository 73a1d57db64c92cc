"""Label releases of the knowledge-transfer studies (:mod:`.pate`, :mod:`.disjoint`): one registry.

Every release function sees **only the members' votes** (a ``(Q, K)`` array of predicted labels)
and its own randomness — never the true labels — so the released labels cannot peek at the
ground truth.  ``classes = (a, b)`` is the binary task, ``a`` the "0" label (5) and ``b`` the
"1" label (8).  They share one signature, ``fn(votes, *, rng, classes, **arguments)``:

* ``"darrm"`` :func:`darrm_release` — binary reduction of the reference code (Appendix D.2): a
  teacher's bit is 1 when it predicts anything other than ``a``; L = number of 1-bits; DaRRM
  (Algorithm 1, ``darrm.mechanism.aggregate``) releases the majority with probability γ(L),
  else a fair coin.  Each bit is post-processing of an (ε, Δ)-DP teacher, so DaRRM's
  (mε, δ) guarantee (Lemma 3.4) applies per query.
* ``"gnmax"`` :func:`gnmax_release` — GNMax (Papernot et al. 2018; paper Eq. 205): argmax over
  the two classes of (vote count + N(0, σ²)); other predicted labels are not counted; ties → ``a``.
* ``"majority"`` :func:`majority_release` — plain majority of the bits (γ ≡ 1), no noise: the
  ceiling for non-private teachers, and for private teachers the "parallel composition"
  release whose total cost over any number of queries is the teachers' own (ε, Δ).
* ``"shuffled-rr"`` :func:`shuffled_rr_release` — each member's bit through ε0-RR, and from the
  shuffled count L only: the majority (γ ≡ 1) or DaRRM γ(L).

A study names its rows with :class:`Method` (which release, whose votes, which entries of the
study's per-m mechanism dict are the release's arguments, the row's random stream);
:func:`release` and :func:`mechanism_rng` serve every study.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from darrm.errors import ParameterError
from darrm.mechanism import aggregate, aggregate_counts
from darrm.validation import choice, positive

__all__ = ["RELEASES", "Method", "binary_votes", "darrm_release", "gnmax_release", "majority_release",
           "mechanism_rng", "release", "shuffled_rr_release"]


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
    """0/1 bits: 1 where a teacher predicts a label other than ``classes[0]`` (reference reduction).

    Args:
        votes: a ``(Q, K)`` integer array of the members' predicted labels.
        classes: the binary task ``(a, b)``; ``a`` is the "0" label.

    Returns:
        A ``(Q, K)`` int64 array of 0/1 bits.

    Raises:
        ParameterError: ``votes`` not a 2-D integer array, or ``classes`` not two distinct labels.
    """
    a, _ = _classes(classes)
    return (_votes(votes) != a).astype(np.int64)


def darrm_release(votes: object, gamma: np.ndarray, rng: np.random.Generator,
                  classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """DaRRM_γ labels for each query row of ``votes`` (Algorithm 1 on the binary reduction).

    Args:
        votes: a ``(Q, K)`` integer array of the members' predicted labels.
        gamma: the full table γ(0..K) (e.g. ``darrm.solve(...).gamma``).
        rng: the mechanism's randomness.
        classes: the binary task ``(a, b)``.

    Returns:
        ``Q`` released labels, each ``a`` or ``b``.

    Raises:
        ParameterError: bad ``votes``, ``classes`` or ``gamma`` (naming it).
    """
    a, b = _classes(classes)
    bits = aggregate(binary_votes(votes, classes), gamma, rng)
    return np.where(bits == 1, b, a)


def gnmax_release(votes: object, sigma: float, rng: np.random.Generator,
                  classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """GNMax labels: argmax_c (n_c + N(0, σ²)) over c ∈ ``classes`` (ties → ``classes[0]``).

    Args:
        votes: a ``(Q, K)`` integer array of the members' predicted labels.
        sigma: the Gaussian noise's standard deviation σ (> 0).
        rng: the mechanism's randomness.
        classes: the binary task ``(a, b)``; predicted labels outside it are not counted.

    Returns:
        ``Q`` released labels, each ``a`` or ``b``.

    Raises:
        ParameterError: bad ``votes``, ``classes`` or ``sigma``.
    """
    a, b = _classes(classes)
    sigma = positive("sigma", sigma)
    v = _votes(votes)
    counts = np.stack([(v == a).sum(axis=1), (v == b).sum(axis=1)], axis=1).astype(np.float64)
    noisy = counts + rng.normal(0.0, sigma, size=counts.shape)
    return np.where(noisy[:, 1] > noisy[:, 0], b, a)


def majority_release(votes: object, classes: tuple[int, int] = (5, 8),
                     rng: np.random.Generator | None = None) -> np.ndarray:
    """Noise-free majority of the binary reduction: ``classes[1]`` iff more than K/2 bits are 1.

    Args:
        votes: a ``(Q, K)`` integer array of the members' predicted labels.
        classes: the binary task ``(a, b)``.
        rng: unused (the release is deterministic); accepted for the common signature.

    Returns:
        ``Q`` released labels, each ``a`` or ``b``.

    Raises:
        ParameterError: bad ``votes`` or ``classes``.
    """
    a, b = _classes(classes)
    bits = binary_votes(votes, classes)
    K = bits.shape[1]
    return np.where(bits.sum(axis=1) >= (K + 1) // 2, b, a)


def shuffled_rr_release(votes: object, eps0: float, gamma: np.ndarray | None = None,
                        rng: np.random.Generator | int | None = None, classes: tuple[int, int] = (5, 8)) -> np.ndarray:
    """Each member's bit through ε0-RR; from the count L only: majority (γ ≡ 1) or DaRRM γ(L).

    Args:
        votes: a ``(Q, K)`` integer array of the members' predicted labels.
        eps0: each member's local randomized-response ε0 (a bit is flipped with probability
            1/(1 + e^ε0)).
        gamma: the full table γ(0..K) applied to the count of reports; None: γ ≡ 1 (the majority).
        rng: a generator, a seed, or ``None`` for fresh OS entropy (``numpy.random.default_rng``).
        classes: the binary task ``(a, b)``.

    Returns:
        ``Q`` released labels, each ``a`` or ``b``.

    Raises:
        ParameterError: bad ``votes``, ``classes`` or ``gamma``.
    """
    rng = np.random.default_rng(rng)
    bits = binary_votes(votes, classes)
    flip = rng.random(bits.shape) < expit(-eps0)
    reports = np.where(flip, 1 - bits, bits)
    K = bits.shape[1]
    g = np.ones(K + 1) if gamma is None else gamma
    out = aggregate_counts(reports.sum(axis=1), g, rng)
    return np.where(out == 1, classes[1], classes[0])


#: name → release function; each is called as ``fn(votes, rng=…, classes=…, **arguments)``
RELEASES: dict[str, Callable[..., np.ndarray]] = {
    "darrm": darrm_release,
    "gnmax": gnmax_release,
    "majority": majority_release,
    "shuffled-rr": shuffled_rr_release,
}

ENSEMBLES = ("private", "nonprivate")


@dataclass(frozen=True)
class Method:
    """One row of a study: a release applied to one ensemble's votes.

    Attributes:
        kind: the release, a :data:`RELEASES` name.
        ensemble: whose votes: "private" (DP-SGD teachers) or "nonprivate".
        stream: the id of the row's randomness (:func:`mechanism_rng`).
        arguments: (release argument, key of the study's mechanism dict) pairs.

    Raises:
        ParameterError: an unknown ``kind`` or ``ensemble``.
    """

    kind: str
    ensemble: str
    stream: int
    arguments: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        choice("kind", self.kind, tuple(RELEASES))
        choice("ensemble", self.ensemble, ENSEMBLES)

    def argument_values(self, mech: Mapping[str, object]) -> dict[str, object]:
        """The release's keyword arguments, read from the study's mechanism dict ``mech``."""
        return {arg: mech[key] for arg, key in self.arguments}


def release(methods: Mapping[str, Method], method: str, votes_private: np.ndarray, votes_nonprivate: np.ndarray,
            mech: Mapping[str, object], rng: np.random.Generator | None, classes: tuple[int, int]) -> np.ndarray:
    """Released labels of row ``method`` of ``methods`` for query rows of the two ensembles' votes
    (no true labels).

    Args:
        methods: the study's rows, name → :class:`Method`.
        method: the row to release.
        votes_private: ``(Q, K)`` predicted labels of the private (DP-SGD) teachers.
        votes_nonprivate: ``(Q, K)`` predicted labels of the non-private teachers.
        mech: the row's arguments by key (σ, γ, ε0, …).
        rng: the mechanism's randomness (:func:`mechanism_rng`).
        classes: the binary task ``(a, b)``.

    Returns:
        ``Q`` released labels.

    Raises:
        KeyError: ``method`` not in ``methods``, or an argument's key not in ``mech``.
        ParameterError: bad votes or arguments (from the release).
    """
    spec = methods[method]
    votes = votes_private if spec.ensemble == "private" else votes_nonprivate
    return RELEASES[spec.kind](votes, rng=rng, classes=classes, **spec.argument_values(mech))


def mechanism_rng(methods: Mapping[str, Method], seed: int, method: str, m: int, Q: int,
                  draw: int) -> np.random.Generator:
    """The mechanism's own randomness for one (method, m, Q, draw) cell, independent of the draw's.

    Args:
        methods: the study's rows, name → :class:`Method`.
        seed: the study's seed.
        method: the row.
        m: the privacy allowance of the cell.
        Q: the number of queries of the cell.
        draw: the index of the repetition.

    Returns:
        A generator seeded by (seed, the row's stream, m, Q, draw).

    Raises:
        KeyError: ``method`` not in ``methods``.
    """
    return np.random.default_rng([seed, methods[method].stream, m, Q, draw])

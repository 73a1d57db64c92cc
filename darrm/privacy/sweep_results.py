"""What the blocks of an exhaustive sweep report, and how their reports are merged.

A block (:func:`darrm.privacy.approx_blocks.sweep_R` for Δ > 0, :func:`darrm.privacy.pure_blocks.sweep_c`
for Δ = 0) returns a :class:`SweepBlockResult`: its largest violation bound v̂ (the rigorous bound
of :mod:`darrm.privacy.condition`), the number of multisets it covered, and its worst multisets
above a threshold (collected by :class:`TopCollector`).  :func:`merge` takes the maximum of the
blocks' maxima and the worst candidates over all blocks: the maximum over a partition of the
multisets is the maximum of the parts' maxima, so the merged result is the sweep's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SweepBlockResult:
    max_violation: float
    candidates: np.ndarray  # (n, 8) or (n, 4) count vectors
    violations: np.ndarray  # (n,) their violations
    checked: int

class TopCollector:
    """Running maximum and the (up to) ``top`` worst multisets above ``threshold``."""

    def __init__(self, top: int, threshold: float, C: int, per_block: int | None = None):
        self.top, self.threshold, self.C = top, threshold, C
        # at most this many candidates from one block: fewer, more diverse cuts
        self.per_block = top if per_block is None else min(top, per_block)
        self.best = -np.inf
        self.cands: list[np.ndarray] = []
        self.viols: list[np.ndarray] = []

    def add(self, m: float, select: Callable[[int], tuple[np.ndarray, np.ndarray]]) -> None:
        """``m``: the block's max; ``select(k)`` returns (counts, violations) of its k worst."""
        self.best = max(self.best, m)
        if self.top > 0 and m > self.threshold:
            counts, vv = select(self.per_block)
            keep = vv > self.threshold
            self.cands.append(np.asarray(counts, dtype=np.int64)[keep])
            self.viols.append(vv[keep])

    def result(self, checked: int) -> "SweepBlockResult":
        cand = np.concatenate(self.cands) if self.cands else np.zeros((0, self.C), dtype=np.int64)
        vv = np.concatenate(self.viols) if self.viols else np.zeros(0)
        if cand.shape[0] > self.top > 0:
            keep = np.argpartition(vv, -self.top)[-self.top :]
            cand, vv = cand[keep], vv[keep]
        return SweepBlockResult(self.best, cand, vv, checked)

def _worst(viol: np.ndarray, k: int) -> np.ndarray:
    k = min(k, viol.shape[0])
    return np.argpartition(viol, -k)[-k:]

def _top(viol, k: int, xp=np) -> tuple[np.ndarray, np.ndarray]:
    """(indices, values) of the k largest entries of a 1-d array, as numpy, for numpy or torch."""
    if xp is np:
        sel = _worst(viol, k)
        return sel, viol[sel]
    vals, idx = xp.topk(viol, min(k, viol.numel()))
    return idx.cpu().numpy(), vals.cpu().numpy()

def _as_numpy(a, xp=np) -> np.ndarray:
    return a if xp is np else a.cpu().numpy()

@dataclass(frozen=True)
class SweepResult:
    """Largest violation over all multisets (probability units), and the top violators."""

    max_violation: float
    candidates: np.ndarray
    violations: np.ndarray
    checked: int

def merge(results: Iterable[SweepBlockResult], top: int) -> SweepResult:
    best, checked = -np.inf, 0
    cands, viols = [], []
    for r in results:
        best = max(best, r.max_violation)
        checked += r.checked
        if r.candidates.shape[0]:
            cands.append(r.candidates)
            viols.append(r.violations)
    if cands:
        cand, vv = np.concatenate(cands), np.concatenate(viols)
        order = np.argsort(-vv)[: max(top, 0)]
        cand, vv = cand[order], vv[order]
    else:
        cand, vv = np.zeros((0, 0), dtype=np.int64), np.zeros(0)
    return SweepResult(best, cand, vv, checked)

"""Independent privacy certificate for any symmetric γ table.

Computes, from the definition of DaRRM (Algorithm 1) rather than from the LP rows,

    Pr[A(D)=1] = Σ_l α_l·(γ(l)·1{l ≥ mid} + ½(1 − γ(l))),   Pr[A(D)=0] = 1 − Pr[A(D)=1],

for every multiset of corners of the (ε, Δ) region (Lemma 5.1: no other point of ∏F
can do worse, because each output probability is affine in each (p_i, p′_i)), and
returns the largest violation of

    Pr[A(D)=o] ≤ e^{mε}·Pr[A(D′)=o] + δ

over both outputs o ∈ {0, 1} and both directions (D, D′) and (D′, D).  A table is
certified when that violation is ≤ ``tol`` (default 1e-12, i.e. float64 rounding of
probabilities of order 1, scaled by max(1, e^{mε}); see :func:`tolerance`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from tqdm.auto import tqdm

from .constraints import pmf_pairs
from .corners import corners, iter_count_vector_blocks, multiset_count
from .gamma import validate_gamma
from .mechanism import output_weights
from .params import PrivacyParams

if TYPE_CHECKING:
    from .executor import Executor

DEFAULT_TOL = 1e-12


def tolerance(params: PrivacyParams, tol: float | None = None) -> float:
    """Certification tolerance: ``tol`` if given, else 1e-12·max(1, e^{mε}).

    The inequality compares probabilities of order 1 after multiplying one of them by
    e^{mε}, so float64 rounding of the check itself grows with e^{mε} (seen: 9e-11 for an
    exactly private γ_Sub at K = 101, e^{mε} ≈ 3000).  Relative to the terms it is 1e-12.
    """
    return float(tol) if tol is not None else DEFAULT_TOL * max(1.0, params.exp_meps)


@dataclass(frozen=True)
class Certificate:
    """Result of :func:`certify`.

    violation: max over multisets, outputs and directions of Pr[A(D)=o] − e^{mε}Pr[A(D′)=o] − δ
        (negative means slack everywhere).
    worst_counts: the corner multiset (count per corner) attaining it.
    worst_output, worst_direction: o ∈ {0, 1} and "D,D'" or "D',D".
    checked: number of multisets examined.
    """

    violation: float
    worst_counts: tuple[int, ...]
    worst_output: int
    worst_direction: str
    checked: int
    tol: float = DEFAULT_TOL

    @property
    def certified(self) -> bool:
        return self.violation <= self.tol


def output_probability(alpha: np.ndarray, gamma: np.ndarray) -> np.ndarray:
    """Pr[DaRRM_γ = 1] for vote-count pmfs α (N, K+1) (Algorithm 1 / L519–523)."""
    return alpha @ output_weights(gamma)


def certify(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    tol: float | None = None,
    executor: "Executor | None" = None,
    progress: bool | None = None,
) -> Certificate:
    """Largest DP violation of DaRRM_γ over all corner multisets, outputs and directions.

    Uses the factorised exact sweep of :mod:`darrm.sweep` (a few operations per multiset,
    memory C(K+5,5) instead of C(K+7,7)); :func:`certify_reference` computes the same
    numbers by a direct Poisson-binomial pmf per multiset and is used to test it.
    """
    from .sweep import sweep

    g = validate_gamma(gamma, params.K)
    res = sweep(g, params, top=1, threshold=-np.inf, executor=executor, progress=progress)
    worst = res.candidates[0]
    cs = corners(params.eps, params.Delta)
    one = certify_reference_counts(g, params, worst[None, :], cs)
    return Certificate(res.max_violation, tuple(int(c) for c in worst), one[1], one[2], res.checked, tolerance(params, tol))


def _violations(a: np.ndarray, ap: np.ndarray, g: np.ndarray, e: float, delta: float) -> np.ndarray:
    """(N, 4) violations: output 1 D→D′, output 1 D′→D, output 0 D→D′, output 0 D′→D."""
    p1, pp1 = output_probability(a, g), output_probability(ap, g)
    p0, pp0 = 1.0 - p1, 1.0 - pp1
    return np.stack([p1 - e * pp1, pp1 - e * p1, p0 - e * pp0, pp0 - e * p0], axis=1) - delta


def certify_reference_counts(g: np.ndarray, params: PrivacyParams, counts: np.ndarray, cs: np.ndarray) -> tuple[float, int, str]:
    """(violation, output, direction) of the worst of the given multisets, computed directly."""
    a, ap = pmf_pairs(counts, cs)
    cand = _violations(a, ap, g, params.exp_meps, float(params.delta))  # type: ignore[arg-type]
    i, j = np.unravel_index(np.argmax(cand), cand.shape)
    return float(cand[i, j]), 1 if j < 2 else 0, "D,D'" if j % 2 == 0 else "D',D"


def certify_reference(
    gamma: np.ndarray,
    params: PrivacyParams,
    *,
    tol: float | None = None,
    block: int = 1 << 15,
    progress: bool | None = None,
) -> Certificate:
    """Direct certificate: the Poisson-binomial pmfs of every multiset by dynamic programming,
    then both outputs and both directions (slow; the reference for :func:`certify`)."""
    g = validate_gamma(gamma, params.K)
    cs = corners(params.eps, params.Delta)
    e = params.exp_meps
    delta = float(params.delta)  # type: ignore[arg-type]
    total = multiset_count(params.K, cs.shape[0])
    best = -np.inf
    worst: tuple = ((), 1, "D,D'")
    checked = 0
    bar = tqdm(total=total, desc="certify", unit="multiset", disable=(not progress) if progress is not None else None, leave=False)
    with bar:
        for counts in iter_count_vector_blocks(params.K, cs.shape[0], block):
            a, ap = pmf_pairs(counts, cs)
            cand = _violations(a, ap, g, e, delta)
            i, j = np.unravel_index(np.argmax(cand), cand.shape)
            if cand[i, j] > best:
                best = float(cand[i, j])
                worst = (tuple(int(c) for c in counts[i]), 1 if j < 2 else 0, "D,D'" if j % 2 == 0 else "D',D")
            checked += counts.shape[0]
            bar.update(counts.shape[0])
    return Certificate(best, worst[0], worst[1], worst[2], checked, tolerance(params, tol))

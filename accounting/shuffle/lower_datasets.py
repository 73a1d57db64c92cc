"""The datasets of the shuffle lower bound, one per distinct GPARV.

Claim.  For a finite randomizer R with k inputs, the lower bound of Su et al. Thm 14
(from GKMP20) is the maximum over victim pairs x0 != x1 and fillers x* of the exact
divergence (1/n) E[(ΣG_i)_+] of the datasets (x0 | x*, ..., x*) vs (x1 | x*, ..., x*),
where G = r0 - e^ε r1 with probability w, (r0, r1, w) = (R(x0)(y)/R(x*)(y),
R(x1)(y)/R(x*)(y), R(x*)(y)) over outputs y; plus the uniform i.i.d. mixture of the
others' inputs (:func:`.decomposition.mixture_atoms`).  Two datasets whose triples
(r0, r1, w) form the same multiset have the same G at every ε, hence the same value:
only one of them needs evaluating (a dataset's GPARV is fixed by the law of (r0, r1)
under w, which is what is fingerprinted).

Proof.  The value depends on the dataset only through the law of G, and the law of G
is the multiset of its (value, probability) pairs.  Conversely every dataset kept is
evaluated exactly, so *any* subset of the datasets yields a valid lower bound: the
deduplication can only cost tightness, never validity (a hash collision would drop a
dataset, not invent one).

Input symmetry is then automatic: inputs that a symmetry of R (a permutation of
inputs and outputs preserving the matrix, e.g. the coordinates' relabellings of a
joint of k-RR) maps to each other give the same multisets, so the k·(k-1)·k triples of
a joint of two 10-RR (990 000) collapse to the 14 orbits.  The fingerprints are
characteristic functions, one matrix product per filler x*, so the enumeration costs
about k³·d complex multiply-adds.  Above :data:`MAX_WORK` it is refused with an
estimate of its work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .bound import NotApplicable

#: refuse the lower bound's enumeration above this many complex multiply-adds (k³·d per frequency)
MAX_WORK = 2e10
#: complex multiply-adds per second assumed for the estimate in the refusal (one core)
_RATE = 1e9


@dataclass(frozen=True)
class Dataset:
    """A representative (x0, x1, x*) of one class of datasets with the same GPARV;
    ``xs=None`` is the uniform i.i.d. mixture of the others' inputs."""

    x0: int
    x1: int
    xs: int | None


#: frequencies (a0, a1) at which the characteristic function of (r0, r1) is fingerprinted
_FREQS = np.array([[0.7548776662, 0.5698402910], [1.3247179572, -0.9182872012], [-0.4142135624, 1.1892071150]])


def _fingerprints(m: np.ndarray, xs: int) -> np.ndarray:
    """(k × k × 2·|_FREQS|) fingerprints of the law of (r0, r1) = (R(x0)(y)/R(xs)(y),
    R(x1)(y)/R(xs)(y)), y ~ R(xs), for every pair (x0, x1): its characteristic function
    E[exp(i(a0 r0 + a1 r1))] at the fixed frequencies, rounded to 9 digits.  It factorises as
    Σ_y R(xs)(y) e^{i a0 r0(y)} e^{i a1 r1(y)}, a matrix product.  Equal laws (the GPARV of
    Su et al. Thm 14 at every ε) give equal fingerprints; unequal ones collide only by accident."""
    c = m[xs]
    ratio = m / c[None, :]
    parts = []
    for a0, a1 in _FREQS:
        phi = (np.exp(1j * a0 * ratio) * c[None, :]) @ np.exp(1j * a1 * ratio).T
        parts += [phi.real, phi.imag]
    return np.round(np.stack(parts, axis=2), 9)


def distinct_datasets(m: np.ndarray, *, max_work: float = MAX_WORK) -> list[Dataset]:
    """One representative per distinct GPARV among the datasets of Su et al. Thm 14.

    Args:
        m: the randomizer's probability matrix (k inputs × d outputs, pure LDP: no zeros).
        max_work: refuse above this many complex multiply-adds (k³·d per frequency).

    Returns:
        The representatives (first in the order x* = 0..k-1, then the i.i.d. mixture),
        each (x0, x1, x*) with x0 != x1.

    Raises:
        NotApplicable: the work exceeds ``max_work``; the message estimates it.
    """
    k, d = m.shape
    total = k * (k - 1) * k
    work = float(k) ** 3 * d * len(_FREQS)
    if work > max_work:
        raise NotApplicable(
            "randomizer",
            f"the lower bound would fingerprint {total:,} datasets (x0, x1, x*) of k = {k} inputs and d = {d} "
            f"outputs: {work:.1e} complex multiply-adds (about {work / _RATE:.0f} s) before evaluating the "
            f"distinct ones; limit {max_work:.1e} (lower_datasets.MAX_WORK)")
    a, b = np.nonzero(~np.eye(k, dtype=bool))  # same order as the boolean mask below
    seen: set[tuple[float, ...]] = set()
    out: list[Dataset] = []
    off_diagonal = ~np.eye(k, dtype=bool)

    def add(mat: np.ndarray, xs: int, label: int | None) -> None:
        fp = _fingerprints(mat, xs)[:k, :k][off_diagonal]
        uniq, first = np.unique(fp, axis=0, return_index=True)
        for key, i in zip(map(tuple, uniq), first, strict=True):
            if key not in seen:
                seen.add(key)
                out.append(Dataset(int(a[i]), int(b[i]), label))

    for xs in range(k):
        add(m, xs, xs)
    add(np.vstack([m, m.mean(axis=0)[None, :]]), k, None)  # the i.i.d. uniform mixture
    return out

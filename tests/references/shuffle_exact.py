"""Exact hockey-stick divergence of shuffled finite randomizers, by enumeration (a tests' reference, not shipped).

This is the ground truth the bounds are tested against.  The shuffled output of n
users is (in law) the histogram of their n messages, so for a *fixed* dataset the
output distribution is the convolution of the users' output distributions over the
histogram lattice {h in N^d : sum h = n}.  For neighbouring datasets X^0 = (x^0,
x_2..x_n) and X^1 = (x^1, x_2..x_n) (replace-one adjacency, the victim is user 1)
we return max(D_{e^ε}(P^0 || P^1), D_{e^ε}(P^1 || P^0)).

Cost: O(n * d * (n+1)^(d-1)) per dataset, so only small n and output sizes d
(tests use n <= 40 with d <= 4).  ``worst_case_delta`` maximises over every
dataset of the others (as a multiset, which is all that matters after shuffling)
and every ordered victim pair.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from darrm.accounting.shuffle.randomizers import Randomizer, as_finite
from darrm.errors import ParameterError
from darrm.numerics.inversion import inverse_monotone


def _add_user(arr: np.ndarray, row: np.ndarray) -> np.ndarray:
    """Convolve a histogram pmf (counts of outputs 0..d-2; last implicit) with one user."""
    d = row.shape[0]
    new = row[d - 1] * arr
    for y in range(d - 1):
        dst = [slice(None)] * arr.ndim
        src = [slice(None)] * arr.ndim
        dst[y] = slice(1, None)
        src[y] = slice(0, -1)
        new[tuple(dst)] += row[y] * arr[tuple(src)]
    return new


def histogram_pmf(matrix: np.ndarray, inputs: list[int] | tuple[int, ...], n_total: int) -> np.ndarray:
    """pmf of the output histogram of users with the given inputs.

    The array has one axis per output except the last, each of length
    ``n_total + 1`` (so pmfs of different user sets can be combined).
    """
    d = matrix.shape[1]
    if d == 1:
        raise ParameterError("matrix", "a randomizer with one output has nothing to shuffle")
    arr = np.zeros((n_total + 1,) * (d - 1))
    arr[(0,) * (d - 1)] = 1.0
    for x in inputs:
        arr = _add_user(arr, matrix[x])
    return arr


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """D_{e^ε}(P || Q) = sum max(0, P - e^ε Q) (Wang et al. Def. 3.1)."""
    return float(np.maximum(p - np.exp(eps) * q, 0.0).sum())


def dataset_delta(
    randomizer: Randomizer, x0: int, x1: int, others: list[int] | tuple[int, ...], eps: np.ndarray | float
) -> np.ndarray:
    """Exact δ(ε) = max of both hockey-stick directions for one neighbouring pair."""
    fin = as_finite(randomizer)
    if fin is None:
        raise ParameterError("randomizer", "exact enumeration needs a specific (finite) randomizer")
    m = fin.array
    n = len(others) + 1
    h = histogram_pmf(m, list(others), n)
    p0 = _add_user(h, m[x0])
    p1 = _add_user(h, m[x1])
    eps_arr = np.atleast_1d(np.asarray(eps, dtype=float))
    out = np.array([max(hockey_stick(p0, p1, e), hockey_stick(p1, p0, e)) for e in eps_arr])
    return out


@dataclass(frozen=True)
class WorstCase:
    """Largest exact δ(ε) over all datasets, with the dataset that attains it."""

    delta: np.ndarray
    x0: tuple[int, ...]
    x1: tuple[int, ...]
    others: tuple[tuple[int, ...], ...]


def _multisets(k: int, size: int, sym_from: int):
    """Count vectors of ``size`` users over k inputs; inputs >= sym_from are
    exchangeable, so only non-increasing counts among them are produced."""
    for counts in itertools.product(range(size + 1), repeat=k - 1):
        s = sum(counts)
        if s > size:
            continue
        c = counts + (size - s,)
        tail = c[sym_from:]
        if any(tail[i] < tail[i + 1] for i in range(len(tail) - 1)):
            continue
        yield c


def worst_case_delta(randomizer: Randomizer, n: int, eps: np.ndarray | float) -> WorstCase:
    """max over neighbouring datasets (all victim pairs, all others) of exact δ(ε).

    For k-RR the symmetry of the mechanism lets us fix the victim pair (0, 1) and
    treat inputs 2..k-1 as exchangeable; for a general finite randomizer every
    ordered victim pair and every multiset of the others is enumerated.
    """
    fin = as_finite(randomizer)
    if fin is None:
        raise ParameterError("randomizer", "exact enumeration needs a specific (finite) randomizer")
    from darrm.accounting.shuffle.randomizers import RandomizedResponse

    m = fin.array
    k = m.shape[0]
    eps_arr = np.atleast_1d(np.asarray(eps, dtype=float))
    best = np.full(eps_arr.shape, -1.0)
    arg_x0 = [0] * len(eps_arr)
    arg_x1 = [0] * len(eps_arr)
    arg_o: list[tuple[int, ...]] = [()] * len(eps_arr)
    if isinstance(randomizer, RandomizedResponse):
        pairs = [(0, 1)]
        sym_from = 2
    else:
        pairs = [(a, b) for a in range(k) for b in range(k) if a < b]
        sym_from = k
    for counts in _multisets(k, n - 1, sym_from):
        others = tuple(i for i, c in enumerate(counts) for _ in range(c))
        h = histogram_pmf(m, list(others), n)
        for a, b in pairs:
            p0 = _add_user(h, m[a])
            p1 = _add_user(h, m[b])
            for j, e in enumerate(eps_arr):
                v = max(hockey_stick(p0, p1, e), hockey_stick(p1, p0, e))
                if v > best[j]:
                    best[j], arg_x0[j], arg_x1[j], arg_o[j] = v, a, b, counts
    return WorstCase(best, tuple(arg_x0), tuple(arg_x1), tuple(arg_o))


def exact_eps(delta_of_eps, delta: float, hi: float, tol: float = 1e-10) -> float:
    """inf{ε >= 0 : δ(ε) <= delta} for a non-increasing exact δ(ε), by bisection to ``tol``
    (:func:`darrm.numerics.inversion.inverse_monotone`; the upper, certified end)."""
    return inverse_monotone(delta_of_eps, delta, 0.0, hi, increasing=False, method="bisect", xtol=tol, rtol=0.0,
                            name="delta")

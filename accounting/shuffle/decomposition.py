"""Optimal decomposition bound and lower bound by FFT (Su et al., "decomposition-optimal").

Upper bound (Su et al. Thm 5-7, 13; Algorithm 7).  The privacy-blanket
decomposition is the optimal general-clone decomposition of a specific randomizer
(Thm 6), and its hockey-stick divergence is (Thm 12/13)

    D_{e^ε}(P_0^B || P_1^B) = (1/n) E[(G_1 + ... + G_n)_+],

with G the generalised privacy amplification random variable: G = (R(x^0)(y) -
e^ε R(x^1)(y)) / c_y with probability c_y = min_x R(x)(y), and G = 0 with
probability 1 - γ, γ = Σ_y c_y.  Lower bound (Thm 14, from GKMP20): for the dataset
x_2 = ... = x_n = x*, D(M(X^0) || M(X^1)) = (1/n) E[(ΣG_i)_+] *exactly*, with
G = (R(x^0)(y) - e^ε R(x^1)(y)) / R(x*)(y), y ~ R(x*).

Numerics (Algorithm 7 with rigorous bookkeeping): atoms are rounded *up* (upper) or
*down* (lower) to multiples of a step l, so the rounded sum dominates (is
dominated by) the true one; the n-fold convolution is an FFT on a window of the
integer sum J; mass above the window is bounded by a Chernoff bound computed
exactly from the atoms and added (upper); aliased mass from outside the window is
bounded likewise and subtracted (lower); a floating-point allowance derived from
the FFT coefficients is added/subtracted.  The window covers the whole support
when it fits in ``max_points`` (small n: essentially exact).

For n ~ 1e6 the grid step forced by ``max_points`` makes the rounding shift n·l
non-negligible, so the FFT bound is valid but loose.  Hence :func:`positive_part`
uses the exact count sums of :mod:`.count_sums` whenever the GPARV has at most
three non-zero atoms (k-RR and binary RR, for the blanket GPARV, the lower-bound
datasets with x* in {x0, x1}, and the uniform i.i.d. mixture of the others'
inputs), and otherwise the better of the FFT (n <= FFT_MAX_N) and a count sum over
atoms coarsened in the safe direction.

Composition: pass :func:`darrm.accounting.shuffle.randomizers.joint` or
:func:`~darrm.accounting.shuffle.randomizers.parallel` of finite randomizers; every pair of
(product) inputs is a neighbouring pair, so all Hamming distances of Su et al. §8
are covered by the max over pairs.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError

from . import count_sums, lower_datasets
from .bound import Bound, eps_for_delta
from .randomizers import FiniteRandomizer, GenericLDP, RandomizedResponse, Randomizer, as_finite
from .variation_ratio import krr_count_lower_delta

EPS_MACH = np.finfo(float).eps


@dataclass(frozen=True)
class Atoms:
    """A finite random variable: G = r0 - e^ε r1 with probability w (Su et al. Def. 9)."""

    r0: np.ndarray
    r1: np.ndarray
    w: np.ndarray

    def values(self, eps: float) -> np.ndarray:
        return self.r0 - math.exp(eps) * self.r1


def _merge(r0: np.ndarray, r1: np.ndarray, w: np.ndarray) -> Atoms:
    """Merge atoms with equal (r0, r1) (Su et al. Thm 7, simplified decomposition)."""
    key = np.round(np.stack([r0, r1], axis=1), 12)
    uniq, inv = np.unique(key, axis=0, return_inverse=True)
    ww = np.zeros(len(uniq))
    np.add.at(ww, inv.ravel(), w)
    r0u = np.zeros(len(uniq))
    r1u = np.zeros(len(uniq))
    r0u[inv.ravel()] = r0
    r1u[inv.ravel()] = r1
    return Atoms(r0u, r1u, ww)


def blanket_atoms(m: np.ndarray, x0: int, x1: int) -> Atoms:
    """GPARV of the optimal (blanket) decomposition for the victim pair (x0, x1)."""
    c = m.min(axis=0)
    gamma = float(c.sum())
    r0 = np.append(m[x0] / c, 0.0)
    r1 = np.append(m[x1] / c, 0.0)
    w = np.append(c, max(0.0, 1.0 - gamma))
    return _merge(r0, r1, w)


def dataset_atoms(m: np.ndarray, x0: int, x1: int, xs: int) -> Atoms:
    """Lower-bound GPARV for the dataset x_2 = ... = x_n = xs (Su et al. Thm 14)."""
    return _merge(m[x0] / m[xs], m[x1] / m[xs], m[xs].copy())


def mixture_atoms(m: np.ndarray, x0: int, x1: int) -> Atoms:
    """Lower-bound GPARV when the other users' inputs are i.i.d. uniform (GKMP20's
    choice): each other output is ~ the average row π, and Thm 12 gives the
    divergence of this *mixture* of dataset pairs; by joint convexity of the
    hockey-stick divergence it is <= the worst fixed dataset pair, so it is a valid
    lower bound.  For k-RR it has three atoms (the values of the blanket GPARV scaled
    by γ), so it is computed exactly at any n."""
    pi = m.mean(axis=0)
    return _merge(m[x0] / pi, m[x1] / pi, pi.copy())


def _log_mgf(j: np.ndarray, w: np.ndarray, t: np.ndarray) -> np.ndarray:
    """log E[e^{tJ}] for an array of t (vectorised log-sum-exp)."""
    z = np.outer(np.atleast_1d(t), j) + np.log(w)[None, :]
    mx = z.max(axis=1)
    return mx + np.log(np.exp(z - mx[:, None]).sum(axis=1))


def expected_positive_part(
    vals: np.ndarray, w: np.ndarray, n: int, kind: str, max_points: int = 1 << 18, step: float | None = None
) -> float:
    """Bound on E[(Σ_{i<=n} G_i)_+] for iid G with atoms ``vals`` (probabilities ``w``).

    ``kind="upper"`` returns a value >= the true expectation, ``"lower"`` a value
    <= it (see the module docstring for the error terms).
    """
    vals = np.asarray(vals, dtype=float)
    w = np.asarray(w, dtype=float)
    keep = w > 0
    vals, w = vals[keep], w[keep] / w[keep].sum()
    if np.all(vals <= 0):
        return 0.0
    if np.all(vals >= 0):
        return n * float(np.dot(w, vals))  # no cancellation: exact for both kinds
    mean = float(np.dot(w, vals))
    sd = math.sqrt(max(float(np.dot(w, (vals - mean) ** 2)), 1e-300))
    vmin, vmax = float(vals.min()), float(vals.max())
    K = 12.0
    lo_s = max(n * vmin, n * mean - K * sd * math.sqrt(n))
    hi_s = min(n * vmax, max(n * mean + K * sd * math.sqrt(n), 0.0) + K * sd * math.sqrt(n))
    if step is None:
        step = max(hi_s - lo_s, 1e-300) / (max_points // 2)
    l = float(step)
    j = np.ceil(vals / l) if kind == "upper" else np.floor(vals / l)
    j = j.astype(np.int64)
    jmin, jmax = int(j.min()), int(j.max())
    if n * (jmax - jmin) + 1 <= max_points:
        L, U = n * jmin, n * jmax
        windowed = False
    else:
        jm = float(np.dot(w, j))
        js = math.sqrt(max(float(np.dot(w, (j - jm) ** 2)), 1.0))
        L = int(math.floor(max(n * jmin, n * jm - K * js * math.sqrt(n))))
        U = int(math.ceil(min(n * jmax, max(n * jm + K * js * math.sqrt(n), 0.0) + K * js * math.sqrt(n))))
        windowed = True
    if U <= 0:
        # the whole window is non-positive: only the Chernoff tail remains
        L, U = min(L, -1), 0
    N = 1 << int(math.ceil(math.log2(U - L + 1)))
    a = np.zeros(N)
    np.add.at(a, np.mod(j, N), w)
    F = np.fft.rfft(a)
    absF = np.abs(F)
    with np.errstate(divide="ignore", invalid="ignore"):
        logF = np.log(np.where(absF == 0, 1.0, F).astype(complex))
        Fn = np.where(absF == 0, 0.0, np.exp(n * logF))
    pmf_circ = np.fft.irfft(Fn, N)
    # floating-point allowance per entry (coefficient errors ~ eps log N, amplified
    # by n |F|^{n-1} in the power, then averaged by the inverse FFT)
    with np.errstate(under="ignore"):
        amp = float(np.sum(np.where(absF > 0, np.exp((n - 1) * np.log(np.maximum(absF, 1e-300))), 0.0)))
    e_fp = 16 * EPS_MACH * math.log2(N) * (1.0 + n * 2 * amp / N)
    Jpos = np.arange(1, U + 1, dtype=np.int64)
    pm = pmf_circ[np.mod(Jpos, N)]
    sum_pos = float(np.dot(Jpos, np.maximum(pm, 0.0))) if kind == "upper" else float(np.dot(Jpos, pm))
    fp = e_fp * float(U) * (U + 1) / 2
    ts = np.geomspace(1e-9, 50.0, 400) / max(1.0, js_scale(j, w))
    if kind == "upper":
        tail = 0.0
        if windowed and U < n * jmax:
            # E[J 1{J > U}] <= E[e^{2tJ}] e^{-tU} / (e t)  (J_+ <= e^{tJ}/(e t))
            tail = _exp_min(n * _log_mgf(j, w, 2 * ts) - ts * U - 1 - np.log(ts))
        return l * (sum_pos + fp + tail)
    alias = 0.0
    if windowed:
        p_hi = _exp_min(n * _log_mgf(j, w, ts) - ts * (L + N)) if L + N <= n * jmax else 0.0
        p_lo = _exp_min(n * _log_mgf(j, w, -ts) + ts * L) if L > n * jmin else 0.0
        alias = (min(1.0, p_hi) + min(1.0, p_lo)) * U
    return max(0.0, l * (sum_pos - fp - alias))


def _exp_min(logs) -> float:
    """exp(min(logs)) without overflow (a useless bound becomes inf)."""
    m = float(np.min(logs))
    return math.inf if m > 700 else math.exp(m)


def js_scale(j: np.ndarray, w: np.ndarray) -> float:
    m = float(np.dot(w, j))
    return math.sqrt(max(float(np.dot(w, (j - m) ** 2)), 1.0))


# ---------------------------------------------------------------------------

def _pairs(randomizer: Randomizer, fin: FiniteRandomizer) -> list[tuple[int, int]]:
    """Victim pairs (x0, x1) to maximise over; ``fin``: the randomizer's probability matrix."""
    if isinstance(randomizer, RandomizedResponse):
        return [(0, 1)]
    k = fin.n_inputs
    return [(a, b) for a in range(k) for b in range(k) if a != b]


def _lower_datasets(randomizer: Randomizer, fin: FiniteRandomizer) -> list[tuple[int, int, int | None]]:
    """(x0, x1, x*) for the datasets (x0|x*,...,x*) vs (x1|x*,...,x*); x* = None is
    the uniform i.i.d. mixture of :func:`mixture_atoms`; ``fin``: the probability matrix.
    k-RR by its symmetry; any other randomizer one dataset per distinct GPARV
    (:func:`.lower_datasets.distinct_datasets`, which refuses too large enumerations)."""
    if isinstance(randomizer, RandomizedResponse):
        if randomizer.k == 2:
            return [(0, 1, 1), (0, 1, 0), (1, 0, 0), (1, 0, 1)]
        return [(0, 1, 1), (0, 1, 0), (0, 1, None), (0, 1, 2)]
    return [(d.x0, d.x1, d.xs) for d in _distinct(fin)]


@functools.lru_cache(maxsize=16)
def _distinct(fin: FiniteRandomizer) -> tuple[lower_datasets.Dataset, ...]:
    return tuple(lower_datasets.distinct_datasets(fin.array))


#: the FFT is only worth its cost where its grid resolves the sum (small n)
FFT_MAX_N = 20_000


def positive_part(vals: np.ndarray, w: np.ndarray, n: int, kind: str) -> tuple[float, bool]:
    """Bound on E[(ΣG)_+]: the exact count sum (:mod:`.count_sums`) when G has at
    most three non-zero atoms; otherwise the FFT for n <= FFT_MAX_N (its grid then
    resolves the sum) and the count sum over atoms coarsened in the safe direction
    above.  Returns (value, exact)."""
    exact = count_sums.coarsen(vals, w, kind)[2]
    if exact or n > FFT_MAX_N:
        return count_sums.expected_positive_part(vals, w, n, kind)
    return expected_positive_part(vals, w, n, kind), False


def _optimal(randomizer: Randomizer, n: int, eps: float) -> tuple[float, bool]:
    fin = as_finite(randomizer)
    if fin is None:
        raise ParameterError("randomizer", "the optimal decomposition needs a specific randomizer")
    if eps >= fin.eps0:
        return 0.0, True
    m = fin.array
    best, all_exact = 0.0, True
    seen = set()
    for a, b in _pairs(randomizer, fin):
        at = blanket_atoms(m, a, b)
        key = tuple(np.round(np.concatenate([at.r0, at.r1, at.w]), 12))
        if key in seen:
            continue
        seen.add(key)
        v, exact = positive_part(at.values(eps), at.w, n, "upper")
        all_exact &= exact
        best = max(best, v / n)
    return min(1.0, best), all_exact


def optimal_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    """Upper bound: max over victim pairs of (1/n) E[(ΣG)_+] for the blanket GPARV
    (Su et al. Thm 13), exact count sums (k-RR) or FFT / coarsened sums."""
    return _optimal(randomizer, n, eps)[0]


def lower_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    """Lower bound: max over datasets (x0|x*^{n-1}) vs (x1|x*^{n-1}) (and the uniform
    i.i.d. mixture) of Thm 14, exact count sums or FFT / coarsened sums rounded down."""
    fin = as_finite(randomizer)
    if fin is None:
        fin = RandomizedResponse(randomizer.eps0, 2).to_finite()
        randomizer = RandomizedResponse(randomizer.eps0, 2)
    m = fin.array
    best = 0.0
    for a, b, xs in _lower_datasets(randomizer, fin):
        if isinstance(randomizer, RandomizedResponse) and xs == 2:
            # k-RR, filler outside {x0, x1}: a 4-atom GPARV (k >= 4) that the FFT / coarsened sums
            # resolve poorly on their grid; the (N_x0, N_x1) count divergence of the same dataset
            # pair (Wang et al. Thm 5.1) is a lower bound on it, computed without a grid
            best = max(best, krr_count_lower_delta(eps, n, randomizer.eps0, randomizer.k))
        at = mixture_atoms(m, a, b) if xs is None else dataset_atoms(m, a, b, xs)
        best = max(best, positive_part(at.values(eps), at.w, n, "lower")[0] / n)
    return min(1.0, best)


#: the methods' names in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "optimal-decomposition"
LOWER_NAME = "fft-lower"

_UP_NOTE = ("Su et al. optimal (blanket) decomposition, FFT with rounded-up GPARV and error terms, "
            "capped by the clone / variation-ratio general-clone pairs (Thm 6)")
_LO_NOTE = ("Su et al. Thm 14 (GKMP20): exact divergence of the dataset (x0|x*,...,x*) vs (x1|x*,...,x*), "
            "one per distinct GPARV, FFT rounded down; k-RR (k >= 3) with x* outside {x0, x1}: the exact "
            "(N_x0, N_x1) count divergence (Wang et al. Thm 5.1)")


def capped_optimal_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    """min(FFT upper bound, clone, valid variation-ratio) — all upper bounds on the
    optimal-decomposition divergence by Su et al. Thm 6 (the blanket pair is a
    post-processing of every general-clone pair), so the min is one too.  The cap
    matters only where the FFT grid is too coarse (large n)."""
    from .clones import clone_delta
    from .variation_ratio import delta_bound as vr_delta_bound

    d, exact = _optimal(randomizer, n, eps)
    if exact:  # already the optimal value (+ rigorous error terms)
        return d
    d = min(d, clone_delta(eps, n, randomizer.eps0))
    return min(d, vr_delta_bound(randomizer, n, eps).delta)


def _bracket(f, randomizer: Randomizer, n: int, delta: float) -> float:
    """A point where ``f`` <= delta, for the root search: 1.25 × the clone ε (the
    optimal and every lower δ(ε) are <= the clone δ(ε), Su et al. Thm 6) if ``f``
    is indeed <= delta there (checked), else ε0.  Keeps the search away from large
    ε, where the count sums are slow."""
    from .clones import clone_delta

    e0 = randomizer.eps0
    ec = eps_for_delta(lambda x: clone_delta(x, n, e0), delta, e0, "upper", rtol=1e-4)
    hi = min(e0, 1.25 * ec)
    return hi if hi < e0 and f(hi) <= delta else e0


def delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    eps, n = v.epsilon("eps", eps, allow_zero=True), v.count("n", n)
    return Bound(NAME, "upper", True, eps, capped_optimal_delta(randomizer, n, eps), _UP_NOTE)


def eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    f = lambda x: capped_optimal_delta(randomizer, n, x)  # noqa: E731
    e = eps_for_delta(f, delta, _bracket(f, randomizer, n, delta), "upper", rtol=1e-5)
    return Bound(NAME, "upper", True, e, delta, _UP_NOTE)


def _lower_note(randomizer: Randomizer) -> str:
    if isinstance(randomizer, GenericLDP):
        return _LO_NOTE + "; attained by binary RR, an eps0-LDP randomizer (lower bound for the generic class)"
    return _LO_NOTE


def lower_delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    eps, n = v.epsilon("eps", eps, allow_zero=True), v.count("n", n)
    return Bound(LOWER_NAME, "lower", True, eps, lower_delta(randomizer, n, eps), _lower_note(randomizer))


def lower_eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    f = lambda x: lower_delta(randomizer, n, x)  # noqa: E731
    e = eps_for_delta(f, delta, _bracket(f, randomizer, n, delta), "lower", rtol=1e-5)
    return Bound(LOWER_NAME, "lower", True, e, delta, _lower_note(randomizer))

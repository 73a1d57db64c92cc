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
from typing import Callable

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError

from . import beta_tables, count_sums, lower_datasets
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


def _window(vals: np.ndarray, w: np.ndarray, n: int, max_points: int) -> float:
    """The grid step: the sum's ±12 sd window (clipped to its support) over ``max_points``/2 points."""
    mean = float(np.dot(w, vals))
    sd = math.sqrt(max(float(np.dot(w, (vals - mean) ** 2)), 1e-300))
    K = 12.0
    lo_s = max(n * float(vals.min()), n * mean - K * sd * math.sqrt(n))
    hi_s = min(n * float(vals.max()), max(n * mean + K * sd * math.sqrt(n), 0.0) + K * sd * math.sqrt(n))
    return max(hi_s - lo_s, 1e-300) / (max_points // 2)


def _normalised(vals, w) -> tuple[np.ndarray, np.ndarray]:
    vals = np.asarray(vals, dtype=float)
    w = np.asarray(w, dtype=float)
    keep = w > 0
    return vals[keep], w[keep] / w[keep].sum()


def lattice_positive_part(j: np.ndarray, w: np.ndarray, n: int, thresholds, kind: str,
                          max_points: int = 1 << 18) -> np.ndarray:
    """Bounds on E[(J − T)_+] for J = Σ_{i<=n} j_i, iid integer atoms ``j`` with probabilities
    ``w``, one per real threshold T in ``thresholds`` (``kind="upper"``: >=, ``"lower"``: <=).

    The pmf of J is an FFT on a window of ±12 sd (the whole support when it fits in
    ``max_points``).  Upper: the pmf is clipped at 0, a floating-point allowance per entry
    (coefficient errors ~ eps log N amplified by n |F|^{n-1}) is added, and the mass above the
    window by E[(J−T)_+ 1{J > U}] <= E[e^{2t(J−T)}] e^{−t(U−T)}/(e t) (from x_+ <= e^{tx}/(e t)
    and 1{x > a} <= e^{t(x−a)}), minimised over t.  Lower: the same allowance and the mass
    aliased into the window (Chernoff bounds on P(J >= L+N), P(J < L), times the largest
    weight U − T) are subtracted."""
    j = np.asarray(j, dtype=np.int64)
    K = 12.0
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
    Ts = np.atleast_1d(np.asarray(thresholds, dtype=float))
    U = max(U, int(math.floor(min(float(Ts.min()), n * jmax))))
    L = min(L, U - 1)
    N = 1 << int(math.ceil(math.log2(U - L + 1)))
    a = np.zeros(N)
    np.add.at(a, np.mod(j, N), w)
    F = np.fft.rfft(a)
    absF = np.abs(F)
    with np.errstate(divide="ignore", invalid="ignore"):
        logF = np.log(np.where(absF == 0, 1.0, F).astype(complex))
        Fn = np.where(absF == 0, 0.0, np.exp(n * logF))
    pmf_circ = np.fft.irfft(Fn, N)
    with np.errstate(under="ignore"):
        amp = float(np.sum(np.where(absF > 0, np.exp((n - 1) * np.log(np.maximum(absF, 1e-300))), 0.0)))
    e_fp = 16 * EPS_MACH * math.log2(N) * (1.0 + n * 2 * amp / N)
    ts = np.geomspace(1e-9, 50.0, 400) / max(1.0, js_scale(j, w))
    if kind == "upper":
        lm2 = n * _log_mgf(j, w, 2 * ts)
    elif windowed:
        p_hi = min(1.0, _exp_min(n * _log_mgf(j, w, ts) - ts * (L + N))) if L + N <= n * jmax else 0.0
        p_lo = min(1.0, _exp_min(n * _log_mgf(j, w, -ts) + ts * L)) if L > n * jmin else 0.0
    out = np.empty(len(Ts))
    for i, T in enumerate(Ts):
        if T >= n * jmax:
            out[i] = 0.0
            continue
        Jpos = np.arange(int(math.floor(T)) + 1, U + 1, dtype=np.int64)
        x = Jpos - T
        pm = pmf_circ[np.mod(Jpos, N)]
        fp = e_fp * float(x.sum())
        if kind == "upper":
            tail = 0.0
            if windowed and U < n * jmax:
                tail = _exp_min(lm2 - ts * (U + T) - 1 - np.log(ts))
            out[i] = float(np.dot(x, np.maximum(pm, 0.0))) + fp + tail
        else:
            alias = (p_hi + p_lo) * max(U - T, 0.0) if windowed else 0.0
            out[i] = max(0.0, float(np.dot(x, pm)) - fp - alias)
    return out


def centred_positive_part(vals: np.ndarray, w: np.ndarray, n: int, kind: str, max_points: int = 1 << 18) -> float:
    """Bound on E[(Σ_{i<=n} G_i)_+] with atoms rounded to the *nearest* grid point and the
    rounding's mean restored: the bias n × step of rounding every atom up (or down) becomes a
    fluctuation of order √n × step.

    Claim: write G = l·j + V with j = round(G/l), V ∈ [−l/2, l/2] a function of the atom, μ = E V,
    r = max V − min V, and Z = ΣV − nμ.  For every s >= 0,

        E[(ΣG)_+] <= E[(lJ + nμ + s)_+] + E[(Z − s)_+],
        E[(ΣG)_+] >= E[(lJ + nμ − s)_+] − E[(−Z − s)_+],

    and E[(±Z − s)_+] <= ∫_s^∞ exp(−2u²/(n r²)) du = √(π n r²/8) · erfc(s √2/(r √n)).

    Proof: (a + b)_+ <= (a + c)_+ + (b − c)_+ for all reals (the positive part is subadditive),
    with a = lJ, b = ΣV, c = nμ + s (upper) and, swapped, (a + c)_+ <= (a + b)_+ + (c − b)_+ with
    c = nμ − s (lower); Z is a sum of n iid centred variables with range r, so Hoeffding gives
    P(±Z >= u) <= exp(−2u²/(n r²)), and E[(X − s)_+] = ∫_s^∞ P(X > u) du.  The first terms are
    l·E[(J − T)_+] with T = −(nμ ± s)/l (:func:`lattice_positive_part`).  The bound is the best
    over a fixed set of s (the smallest upper, the largest lower), each valid.

    Args:
        vals: the atoms' values.
        w: their probabilities.
        n: the number of summands.
        kind: ``"upper"`` or ``"lower"``.
        max_points: the FFT size budget (the grid step is the sum's window over max_points/2).

    Returns:
        A value >= (upper) or <= (lower) E[(ΣG)_+].
    """
    vals, w = _normalised(vals, w)
    if np.all(vals <= 0):
        return 0.0
    if np.all(vals >= 0):
        return n * float(np.dot(w, vals))
    l = _window(vals, w, n, max_points)
    j = np.rint(vals / l)
    V = vals - l * j
    mu = float(np.dot(w, V))
    r = float(V.max() - V.min())
    sig = r * math.sqrt(n)
    ss = np.array([0.0]) if r == 0 else sig * np.array([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0])
    tails = np.array([math.sqrt(math.pi / 8) * sig * math.erfc(x * math.sqrt(2) / sig) if sig > 0 else 0.0
                      for x in ss])
    sign = 1.0 if kind == "upper" else -1.0
    T = -(n * mu + sign * ss) / l
    core = l * lattice_positive_part(j.astype(np.int64), w, n, T, kind, max_points)
    if kind == "upper":
        return float(np.min(core + tails))
    return max(0.0, float(np.max(core - tails)))


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


#: FFT sizes tried in turn by :func:`positive_part` (more than three atoms, n <= FFT_MAX_N)
FFT_LEVELS = (1 << 16, 1 << 18, 1 << 20)
#: :func:`positive_part` stops refining once a finer grid improves its bound by <= FFT_RTOL relative
FFT_RTOL = 0.01
#: ... or, in an ε(δ) search, once the bound is more than this factor away from n·δ
FFT_BAND = 4.0


def positive_part(vals: np.ndarray, w: np.ndarray, n: int, kind: str,
                  target: float | None = None, floor: float = 0.0) -> tuple[float, bool]:
    """Bound on E[(ΣG)_+]: the exact count sum (:mod:`.count_sums`) when G has at most three
    non-zero atoms; above n = FFT_MAX_N the count sum over atoms coarsened in the safe direction;
    otherwise the centred-rounding FFT (:func:`centred_positive_part`) on the grids of
    :data:`FFT_LEVELS` in turn, until a finer grid improves the bound by at most
    :data:`FFT_RTOL` relative, or — in a search for ``target`` (n·δ) — the bound is more than
    a factor :data:`FFT_BAND` away from it (refining cannot change which side it is on), or
    an upper bound is already <= ``floor`` (a maximum over GPARVs that has reached ``floor``
    does not need it).  Every grid's bound is valid; the tightest is returned (exact = False)."""
    exact = count_sums.coarsen(vals, w, kind)[2]
    if exact or n > FFT_MAX_N:
        return count_sums.expected_positive_part(vals, w, n, kind)
    best = math.inf if kind == "upper" else 0.0
    for mp in FFT_LEVELS:
        b = centred_positive_part(vals, w, n, kind, mp)
        if kind == "upper":
            done = b >= (1 - FFT_RTOL) * best
            best = min(best, b)
        else:
            done = b <= (1 + FFT_RTOL) * best and (best > 0 or mp >= FFT_LEVELS[1])
            best = max(best, b)
        far = target is not None and (best >= FFT_BAND * target or 0 < best * FFT_BAND <= target)
        if done or far or (kind == "upper" and best <= floor):
            break
    return best, False


@functools.lru_cache(maxsize=16)
def _blanket_gparvs(randomizer: Randomizer) -> tuple[Atoms, ...]:
    """The distinct blanket GPARVs over the victim pairs (equal ones give equal δ(ε))."""
    fin = as_finite(randomizer)
    assert fin is not None
    m = fin.array
    out, seen = [], set()
    for a, b in _pairs(randomizer, fin):
        at = blanket_atoms(m, a, b)
        key = tuple(np.round(np.concatenate([at.r0, at.r1, at.w]), 12))
        if key not in seen:
            seen.add(key)
            out.append(at)
    return tuple(out)


def _optimal(randomizer: Randomizer, n: int, eps: float, target: float | None = None) -> tuple[float, bool]:
    fin = as_finite(randomizer)
    if fin is None:
        raise ParameterError("randomizer", "the optimal decomposition needs a specific randomizer")
    if eps >= fin.eps0:
        return 0.0, True
    best, all_exact = 0.0, True
    for at in _blanket_gparvs(randomizer):
        v, exact = positive_part(at.values(eps), at.w, n, "upper", None if target is None else target * n, best * n)
        all_exact &= exact
        best = max(best, v / n)
    return min(1.0, best), all_exact


def optimal_delta(randomizer: Randomizer, n: int, eps: float) -> float:
    """Upper bound: max over victim pairs of (1/n) E[(ΣG)_+] for the blanket GPARV
    (Su et al. Thm 13), exact count sums (k-RR) or FFT / coarsened sums."""
    return _optimal(randomizer, n, eps)[0]


LowerCandidate = Callable[[float, "float | None"], float]


def _lower_candidates(randomizer: Randomizer, n: int) -> list[LowerCandidate]:
    """The lower bound's candidates: one function ``f(eps, target) -> δ`` per dataset pair
    (x0|x*^{n-1}) vs (x1|x*^{n-1}) (Thm 14; the uniform i.i.d. mixture for x* = None), plus the
    (N_x0, N_x1) count divergence for k-RR with x* outside {x0, x1}; each is a lower bound on
    the protocol's δ(ε) by itself, so is the maximum over any subset of them."""
    fin = as_finite(randomizer)
    if fin is None:
        randomizer = RandomizedResponse(randomizer.eps0, 2)
        fin = randomizer.to_finite()
    m = fin.array
    out: list[LowerCandidate] = []
    for a, b, xs in _lower_datasets(randomizer, fin):
        if isinstance(randomizer, RandomizedResponse) and xs == 2:
            # k-RR, filler outside {x0, x1}: a 4-atom GPARV (k >= 4) that the FFT / coarsened sums
            # resolve poorly on their grid; the (N_x0, N_x1) count divergence of the same dataset
            # pair (Wang et al. Thm 5.1) is a lower bound on it, computed without a grid
            def count(eps: float, target: float | None, e0: float = randomizer.eps0, k: int = randomizer.k) -> float:
                return krr_count_lower_delta(eps, n, e0, k)

            out.append(count)
        at = mixture_atoms(m, a, b) if xs is None else dataset_atoms(m, a, b, xs)

        def f(eps: float, target: float | None, at: Atoms = at) -> float:
            tgt = None if target is None else target * n
            return positive_part(at.values(eps), at.w, n, "lower", tgt)[0] / n

        out.append(f)
    return out


def lower_delta(randomizer: Randomizer, n: int, eps: float, target: float | None = None) -> float:
    """Lower bound: max over datasets (x0|x*^{n-1}) vs (x1|x*^{n-1}) (and the uniform
    i.i.d. mixture) of Thm 14, exact count sums or FFT / coarsened sums rounded down."""
    return min(1.0, max(f(eps, target) for f in _lower_candidates(randomizer, n)))


#: the methods' names in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "optimal-decomposition"
LOWER_NAME = "fft-lower"

_UP_NOTE = ("Su et al. optimal (blanket) decomposition, FFT with rounded-up GPARV and error terms, "
            "capped by the clone / variation-ratio general-clone pairs (Thm 6)")
_LO_NOTE = ("Su et al. Thm 14 (GKMP20): exact divergence of the dataset (x0|x*,...,x*) vs (x1|x*,...,x*), "
            "one per distinct GPARV, FFT rounded down; k-RR (k >= 3) with x* outside {x0, x1}: the exact "
            "(N_x0, N_x1) count divergence (Wang et al. Thm 5.1)")


def capped_optimal_delta(randomizer: Randomizer, n: int, eps: float, target: float | None = None) -> float:
    """min(FFT upper bound, clone, valid variation-ratio) — all upper bounds on the
    optimal-decomposition divergence by Su et al. Thm 6 (the blanket pair is a
    post-processing of every general-clone pair), so the min is one too.  The cap
    matters only where the FFT grid is too coarse (large n)."""
    from .clones import clone_delta
    from .variation_ratio import delta_bound as vr_delta_bound

    d, exact = _optimal(randomizer, n, eps, target)
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
    f = beta_tables.search_memo(lambda x: capped_optimal_delta(randomizer, n, x, delta))
    with beta_tables.reuse_tables():  # same values, each computed once per search
        e = eps_for_delta(f, delta, _bracket(f, randomizer, n, delta), "upper", rtol=1e-5)
    return Bound(NAME, "upper", True, e, delta, _UP_NOTE)


def _lower_note(randomizer: Randomizer) -> str:
    if isinstance(randomizer, GenericLDP):
        return _LO_NOTE + "; attained by binary RR, an eps0-LDP randomizer (lower bound for the generic class)"
    return _LO_NOTE


def lower_delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    eps, n = v.epsilon("eps", eps, allow_zero=True), v.count("n", n)
    return Bound(LOWER_NAME, "lower", True, eps, lower_delta(randomizer, n, eps),
                 _lower_note(randomizer))


#: relative ε resolution of the binding-candidate shortcut in :func:`lower_eps_bound`
LOWER_EPS_RTOL = 1e-5
#: the shortcut's check point is ε_L (1 + LOWER_EPS_CHECK·ρ): a searched candidate's own root
#: may lie up to a few ρ above ε_L (Brent's tolerance plus the checked step to its side)
LOWER_EPS_CHECK = 10


def lower_eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    """ε(δ) of the lower bound, searched on the binding candidate only.

    Claim: the returned ε_L is a valid lower bound, and within a factor 1 + ρ of the search over
    the maximum of all candidates, ρ = :data:`LOWER_EPS_CHECK` × :data:`LOWER_EPS_RTOL`.
    Proof: every candidate's δ_d(ε) is a lower bound on the protocol's δ(ε)
    (:func:`_lower_candidates`), so ε_L with δ_d*(ε_L) > δ for one d* is one
    (:func:`~.bound.eps_for_delta`, side "lower").  If every δ_d(ε_L (1 + ρ)) <= δ, then, each
    being non-increasing, max_d δ_d <= δ beyond ε_L (1 + ρ), so the full search's answer is at
    most that (ε_L = 0: the full answer is 0 too); otherwise the search is repeated on the
    candidate largest at ε_L (1 + ρ) (each repeat's ε_L is again valid, and larger), at most
    once per candidate, then over the maximum of all candidates.  The first binding candidate is
    the largest at half the search's bracket, or, while every candidate is below δ/1000 there,
    at a quarter of the previous probe.  Cost: one or two searches on one candidate and a few
    passes over all instead of a search over all (10-RR, n = 1e6: 5x less time).

    Args:
        randomizer: the local randomizer of every user.
        n: the number of users.
        delta: the target δ.

    Returns:
        The lower :class:`Bound` (ε for ``delta``).

    Raises:
        ParameterError: ``n`` or ``delta`` out of range.
    """
    delta, n = v.open_unit("delta", delta), v.count("n", n)
    with beta_tables.reuse_tables():  # same values, each computed once per search
        return _lower_eps(randomizer, n, delta)


def _capped(cand: Callable[[float, float | None], float], delta: float) -> Callable[[float], float]:
    """ε ↦ min(1, cand(ε, δ)): one lower candidate as the δ(ε) of a search."""
    return lambda x: min(1.0, cand(x, delta))


def _lower_eps(randomizer: Randomizer, n: int, delta: float) -> Bound:
    cands = [beta_tables.search_memo(f) for f in _lower_candidates(randomizer, n)]
    f_all = lambda x: min(1.0, max(f(x, delta) for f in cands))  # noqa: E731
    hi = _bracket(f_all, randomizer, n, delta)
    x = 0.5 * hi
    at_probe = [f(x, delta) for f in cands]
    while max(at_probe) <= delta * 1e-3 and x > hi * 1e-4:  # every candidate far below δ: probe nearer 0
        x *= 0.25
        at_probe = [f(x, delta) for f in cands]
    d_star = cands[max(range(len(cands)), key=at_probe.__getitem__)]
    e = eps_for_delta(lambda x: min(1.0, d_star(x, delta)), delta, hi, "lower", rtol=LOWER_EPS_RTOL)
    for _ in range(len(cands)):  # another candidate binding beyond ε_L: search on it instead
        above = [f(e * (1 + LOWER_EPS_CHECK * LOWER_EPS_RTOL), delta) for f in cands]
        i = max(range(len(cands)), key=above.__getitem__)
        if above[i] <= delta:
            break
        e = eps_for_delta(_capped(cands[i], delta), delta, hi, "lower", rtol=LOWER_EPS_RTOL)
    else:
        e = eps_for_delta(f_all, delta, hi, "lower", rtol=LOWER_EPS_RTOL)
    return Bound(LOWER_NAME, "lower", True, e, delta, _lower_note(randomizer))

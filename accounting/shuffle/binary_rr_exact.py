"""The exact privacy curve of shuffled binary randomized response, over every dataset.

Claim.  Let n users each apply binary RR with ``p = e^{ε0}/(1+e^{ε0})`` (report the true bit
with probability p) and shuffle.  Under replace-one adjacency the exact δ(ε) of the shuffled
protocol is

    δ(ε) = max_{j=0..n-1} H_{e^ε}(P_j || Q_j),   P_j = Y_j + B_p,   Q_j = Y_j + B_{1-p},

where Y_j = Bin(j, p) + Bin(n-1-j, 1-p) is the number of 1-reports of the n-1 other users when
j of them hold 1, and B_r ~ Bernoulli(r) is the victim's report (input 1 under P_j, input 0
under Q_j).  Both the ``upper`` and the ``lower`` bound of this module bracket this value to
float accuracy, so for binary RR upper/lower = 1 up to the stated error terms.

Proof.
(i) *The shuffled output is the count.*  The multiset of n bits is determined by the number
of 1s, so the output's law for a dataset is that of the count; for neighbouring datasets the
others' inputs enter only through j, the number of 1s among them (exchangeability).  A
neighbouring pair with the same victim input gives identical laws; otherwise the victim holds 1
in one dataset and 0 in the other, so δ(ε) = max_j max(H(P_j||Q_j), H(Q_j||P_j)).
(ii) *One direction suffices.*  Flipping every bit maps j to n-1-j: Y_{n-1-j} has the law of
(n-1) - Y_j and P_{n-1-j} that of n - Q_j, Q_{n-1-j} that of n - P_j; the hockey-stick
divergence is invariant under the bijection s ↦ n - s, so H(Q_j||P_j) = H(P_{n-1-j}||Q_{n-1-j})
and the maximum over j of the forward direction alone is δ(ε).
(iii) *The optimal sets are upper tails.*  P_j(s)/Q_j(s) = h(r_s) with r_s = Y_j(s-1)/Y_j(s)
and h(r) = (p r + 1-p)/((1-p) r + p), increasing in r because p > 1/2.  Y_j is a sum of
independent Bernoulli variables, hence log-concave (convolutions of log-concave sequences are
log-concave) with contiguous support, so r_s is non-decreasing in s and so is the likelihood
ratio.  The set {s : P_j(s) > e^ε Q_j(s)} is therefore {s ≥ s0} for some s0 and

    H_{e^ε}(P_j||Q_j) = max_{s0} [TP_j(s0) - e^ε TQ_j(s0)],
    TP_j(s0) = p F̄_j(s0-1) + (1-p) F̄_j(s0),   TQ_j(s0) = (1-p) F̄_j(s0-1) + p F̄_j(s0),

F̄_j(s) = P(Y_j ≥ s).  Every term decreases in ε, hence the ε for a target δ is closed form:

    ε(δ) = max(0, max_{j, s0 : TP_j(s0) > δ} ln((TP_j(s0) - δ) / TQ_j(s0))),

capped at ε0 (the protocol is ε0-DP by post-processing).  No root finding is needed.

Numerics (the rigorous part).  F̄_j is read from Y_j's pmf on a window of W points, computed
as the inverse DFT of its characteristic function φ_j(t) = |f(t)|^{n-1} e^{i((2j-n+1)θ(t) +
(n-1-j)t)}, f(t) = 1-p+p e^{it} = |f| e^{iθ} (the others' 0-holders contribute
e^{it}·conj f).  Every computed survival value is within ``err_j`` of the true one, where
err_j = W·(E1 + E2 + 2u) + T_j adds up

* E1, the per-entry error from evaluating φ: a phase error ≤ (n+2)·π·4u (|2j-n+1| ≤ n times
  θ, accurate to a few ulps) and a magnitude error ≤ 10u relative plus 2u absolute
  (x·|ln x| ≤ 1/e bounds the error of exp((n-1)/2·log1p(·))), averaged over the grid;
* E2, the inverse FFT's rounding: ≤ 1.01·log2(W)·8u·‖φ‖₂/√W per entry (Higham, *Accuracy
  and Stability of Numerical Algorithms*, Thm. 24.2, with a generous η = 8u);
* 2u·W for the cumulative sum;
* T_j, the probability mass of Y_j outside the window (aliasing adds it to the window, and
  the sets beyond the window are worth at most e^ε·T_j), bounded by exact binomial tails:
  |Y_j - EY_j| ≥ h implies |Bin(j,p) - jp| ≥ h/2 or |Bin(n-1-j,1-p) - (n-1-j)(1-p)| ≥ h/2,
  each tail evaluated with scipy's regularised incomplete beta (relative accuracy ``RHO``,
  as in :mod:`.count_sums`).  W is doubled until max_j T_j is negligible against δ (or
  until the window holds Y_j's whole support, where T_j = 0).

The upper bound uses TP + err and TQ - err, the lower bound TP - err and TQ + err.  Cost: n
inverse FFTs of W ≈ 24·sqrt(n p(1-p)) points, so every split is computed for n ≤ :data:`MAX_N`.

Large n (n > :data:`MAX_N`): :mod:`.binary_rr_split` — the splits in blocks, each block
bounded by one split of fewer users (H_j(n) ≤ H_{j-1}(n-1) and ≤ H_j(n-1): taking one of the
others out never lowers the divergence, the count being a mixture of the smaller protocol's
counts and their shifts; the coin-pair refinement keeps part of the block's users), and each
split's curve from FFT-free tails of the count (:class:`darrm.numerics.binomial_sum.CountTails`, relative error ~1e-9).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from darrm import validation as val
from darrm.numerics import binomial as B

from . import binary_rr_split as S
from .bound import Bound, NotApplicable
from .randomizers import GenericLDP, RandomizedResponse, Randomizer

#: method names in :data:`~darrm.accounting.shuffle.best.METHODS` and in every Bound
NAME = "binary-rr-exact"
LOWER_NAME = "binary-rr-exact-lower"
#: largest n computed by the FFT over every split (n inverse FFTs of W points; about a second
#: at n = 20000); above it :mod:`.binary_rr_split` (blocks of splits, FFT-free tails)
MAX_N = 20000
#: largest n computed at all
MAX_N_BLOCKS = 10**10
#: relative accuracy assumed of scipy's binomial cdf/sf (:data:`darrm.numerics.binomial.RHO`)
RHO = B.RHO
_U = float(np.finfo(float).eps) / 2  # unit roundoff
_K_SD = 14.0
_CHUNK_CELLS = 1 << 21  # rows × window points per vectorised block
_NOTE = ("exact shuffled binary RR: max over every split j of the others of the count's "
         "hockey-stick divergence (upper tails, log-concave counts), rigorous FFT error terms")
_LOW_NOTE = _NOTE + "; a lower bound for every ε0-LDP randomizer (binary RR is one)"


def _p(eps0: float) -> float:
    return 1.0 / (1.0 + math.exp(-eps0))


def _tail_outside(n: int, p: float, js: np.ndarray, lo: np.ndarray, W: int) -> np.ndarray:
    """Upper bound on P(Y_j ∉ [lo_j, lo_j + W - 1]) from the two binomial parts' tails (the
    margin h split equally between them: |Y - EY| ≥ h implies one part off by h/2)."""
    m = n - 1 - js
    mu = js * p + m * (1 - p)
    h = np.minimum(mu - (lo - 1), (lo + W) - mu) * (1 - 1e-12)
    out = np.zeros(js.shape)
    for cnt, q in ((js, p), (m, 1 - p)):
        x = h / 2
        mean = cnt * q
        low = binom.cdf(np.floor(mean - x), cnt, q)
        high = binom.sf(np.ceil(mean + x) - 1, cnt, q)
        out += (low + high) * (1 + RHO)
    return np.where(h <= 0, 1.0, np.minimum(out, 1.0))


def _first_window(n: int, p: float) -> tuple[int, int]:
    """(W, full): the first window tried (≥ 14 sd) and the power of two holding the whole support."""
    full = max(2, 1 << max(1, (n - 1).bit_length()))
    sd = math.sqrt(max(n - 1, 1) * p * (1 - p))
    return min(full, max(2, 1 << math.ceil(math.log2(2 * (_K_SD * sd + 8))))), full


def _window(n: int, eps0: float, tol: float, js: np.ndarray) -> tuple[int, np.ndarray, np.ndarray]:
    """(W, lo_j, T_j) for the splits ``js``: the smallest power-of-two window (≥ 14 sd) whose
    outside mass is ≤ tol for every j, or the whole support [0, n-1] (T = 0)."""
    p = _p(eps0)
    js = js.astype(float)
    W, full = _first_window(n, p)
    while True:
        if W >= full:
            return full, np.zeros(len(js)), np.zeros(len(js))
        mu = js * p + (n - 1 - js) * (1 - p)
        lo = np.round(mu) - W // 2
        T = _tail_outside(n, p, js, lo, W)
        if float(T.max()) <= tol:
            return W, lo, T
        W *= 2


def _survivals(n: int, eps0: float, W: int, lo: np.ndarray, js: np.ndarray) -> np.ndarray:
    """G[j, r] ≈ P(Y_j ≥ lo_j + r), r = 0..W (G[:, W] = 0), from the inverse DFT of φ_j."""
    p = _p(eps0)
    k = np.arange(W // 2 + 1)
    t = 2 * math.pi * k / W
    mag = np.exp(0.5 * (n - 1) * np.log1p(-4 * p * (1 - p) * np.sin(t / 2) ** 2))
    theta = np.arctan2(p * np.sin(t), (1 - p) + p * np.cos(t))
    m = n - 1 - js.astype(np.int64)
    shift = (m - lo.astype(np.int64))[:, None] % W  # integer phase (m - lo)·k, reduced mod W
    phase = (2 * js[:, None] - n + 1) * theta[None, :] + 2 * math.pi * ((shift * k[None, :]) % W) / W
    x = mag[None, :] * np.exp(-1j * phase)  # conj(φ_j(t_k) e^{-i lo t_k})
    pmf = np.fft.irfft(x, W, axis=1)
    G = np.zeros((len(js), W + 1))
    G[:, :W] = np.cumsum(pmf[:, ::-1], axis=1)[:, ::-1]
    return G


def _entry_error(n: int, eps0: float, W: int) -> float:
    """E1 + E2 + 2u per survival entry's summand (see the module docstring)."""
    p = _p(eps0)
    k = np.arange(W // 2 + 1)
    t = 2 * math.pi * k / W
    mag = np.exp(0.5 * (n - 1) * np.log1p(-4 * p * (1 - p) * np.sin(t / 2) ** 2))
    wts = np.full(mag.shape, 2.0)
    wts[0] = 1.0
    wts[-1] = 1.0
    mean_abs = float((wts * mag).sum()) / W
    l2 = math.sqrt(float((wts * mag**2).sum()))
    e1 = ((n + 2) * math.pi * 4 * _U + 10 * _U) * mean_abs + 2 * _U
    e2 = 1.01 * math.log2(W) * 8 * _U * l2 / math.sqrt(W)
    return e1 + e2 + 2 * _U


def _blocks(n: int, eps0: float, tol: float, js: np.ndarray):
    """Yield (TP, TQ, err, T) per chunk of the splits ``js``: TP/TQ[j, r] for s0 = lo_j + r,
    r = 1..W, with the error terms of the module docstring."""
    W, lo, T = _window(n, eps0, tol, js)
    p = _p(eps0)
    e = W * _entry_error(n, eps0, W)
    rows = max(1, _CHUNK_CELLS // W)
    for a in range(0, len(js), rows):
        sel = slice(a, min(len(js), a + rows))
        G = _survivals(n, eps0, W, lo[sel], js[sel].astype(float))
        TP = p * G[:, :-1] + (1 - p) * G[:, 1:]
        TQ = (1 - p) * G[:, :-1] + p * G[:, 1:]
        yield TP, TQ, (e + T[sel])[:, None], T[sel]


def _binary(randomizer: Randomizer, n: int, kind: str) -> float:
    if isinstance(randomizer, RandomizedResponse) and randomizer.k == 2:
        return randomizer.eps0
    if kind == "lower" and isinstance(randomizer, GenericLDP):
        return randomizer.eps0
    raise NotApplicable("randomizer", "the exact curve is binary RR's (k = 2)"
                        + ("; as a lower bound also any generic eps0-LDP randomizer" if kind == "lower" else ""))


def _check_n(n: int) -> None:
    if n > MAX_N_BLOCKS:
        raise NotApplicable("n", f"the exact binary-RR curve is computed for n <= {MAX_N_BLOCKS}")


def exact_delta(eps0: float, n: int, eps: float, kind: str = "upper") -> float:
    """δ(ε) of shuffled binary RR over every neighbouring pair, on the safe side of ``kind``.

    Args:
        eps0: the local budget of binary RR.
        n: the number of users (≤ :data:`MAX_N_BLOCKS`; above :data:`MAX_N` through blocks of
            splits, see the module docstring).
        eps: the central ε ≥ 0.
        kind: "upper" (a certified upper bound on the exact δ) or "lower" (a certified lower bound).

    Returns:
        The bound on δ(ε); the two kinds differ only by the module's stated error terms.

    Raises:
        ParameterError: an argument is out of range.
        NotApplicable: n > :data:`MAX_N_BLOCKS`.
    """
    eps0, eps = val.epsilon("eps0", eps0), val.epsilon("eps", eps, allow_zero=True)
    n = val.count("n", n)
    val.choice("kind", kind, ("upper", "lower"))
    _check_n(n)
    if eps >= eps0:
        return 0.0
    if n > MAX_N:
        if kind == "upper":
            return S.blocks_delta_upper(n, eps0, eps)
        return S.lower_scan(n, eps0, eps, "delta")
    ee = math.exp(eps)
    best = 0.0
    for TP, TQ, err, T in _blocks(n, eps0, 1e-20, np.arange(n)):
        if kind == "upper":
            vals = (TP + err) - ee * np.maximum(TQ - err, 0.0)
            best = max(best, float(vals.max()), float((ee * T).max()))
        else:
            vals = (TP - err) - ee * (TQ + err)
            best = max(best, float(vals.max()))
    return min(max(best, 0.0), 1.0)


def exact_eps(eps0: float, n: int, delta: float, kind: str = "upper") -> float:
    """ε(δ) = inf{ε ≥ 0 : δ(ε) ≤ δ} of shuffled binary RR, closed form per (j, s0), safe side of ``kind``.

    Args:
        eps0: the local budget of binary RR.
        n: the number of users (≤ :data:`MAX_N_BLOCKS`; above :data:`MAX_N` through blocks of
            splits, see the module docstring).
        delta: the target δ in (0, 1).
        kind: "upper" or "lower".

    Returns:
        ε in [0, ε0].

    Raises:
        ParameterError: an argument is out of range.
        NotApplicable: n > :data:`MAX_N_BLOCKS`.
    """
    eps0, delta = val.epsilon("eps0", eps0), val.open_unit("delta", delta)
    n = val.count("n", n)
    val.choice("kind", kind, ("upper", "lower"))
    _check_n(n)
    # the window's outside mass T must satisfy e^ε T ≤ δ·1e-6 for every ε ≤ ε0 (see docstring)
    if n > MAX_N:
        if kind == "upper":
            return S.blocks_eps_upper(n, eps0, delta)
        return S.lower_scan(n, eps0, delta, "eps")
    tol = delta * 1e-6 * math.exp(-eps0)
    best = 0.0
    for TP, TQ, err, _T in _blocks(n, eps0, tol, np.arange(n)):
        if kind == "upper":
            num, den = TP + err - delta, TQ - err
            bad = (num > 0) & (den <= 0)
            if bad.any():
                return eps0  # cannot certify anything below ε0 (never seen in practice)
        else:
            num, den = TP - err - delta, TQ + err
        ok = (num > 0) & (den > 0)
        if ok.any():
            best = max(best, float(np.log(num[ok] / den[ok]).max()))
    return min(best, eps0)


def _bound(randomizer: Randomizer, n: int, kind: str, *, eps: float | None = None,
           delta: float | None = None) -> Bound:
    """δ(ε) (``eps`` given) or ε(δ) (``delta`` given) as a :class:`Bound` of ``kind``."""
    eps0 = _binary(randomizer, n, kind)
    name, note = (NAME, _NOTE) if kind == "upper" else (LOWER_NAME, _LOW_NOTE)
    if delta is None:
        assert eps is not None
        return Bound(name, "upper" if kind == "upper" else "lower", True, eps, exact_delta(eps0, n, eps, kind), note)
    return Bound(name, "upper" if kind == "upper" else "lower", True, exact_eps(eps0, n, delta, kind), delta, note)


def delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    """The exact binary-RR δ(ε) as an upper bound (a :class:`Bound`)."""
    return _bound(randomizer, n, "upper", eps=eps)


def eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    """The exact binary-RR ε(δ) as an upper bound (a :class:`Bound`)."""
    return _bound(randomizer, n, "upper", delta=delta)


def lower_delta_bound(randomizer: Randomizer, n: int, eps: float) -> Bound:
    """The exact binary-RR δ(ε) as a lower bound (also for a generic ε0-LDP randomizer)."""
    return _bound(randomizer, n, "lower", eps=eps)


def lower_eps_bound(randomizer: Randomizer, n: int, delta: float) -> Bound:
    """The exact binary-RR ε(δ) as a lower bound (also for a generic ε0-LDP randomizer)."""
    return _bound(randomizer, n, "lower", delta=delta)

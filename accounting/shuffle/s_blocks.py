"""Blocks of the count S in the exact count sums: one value of S per block, with a proven bound.

The count sums (:mod:`.count_sums`) write Su et al.'s optimal bound (decomposition-optimal,
Thm 13) and lower bound (Thm 14) as E[(ΣG)_+] = Σ_s P(S = s)·h(s), with

    X_s = A·N_A + B·(s − N_A) + D·N_D,   N_A ~ Bin(s, p),  N_D ~ Bin(n − s, q)  (independent),
    h(s) = E[(X_s)_+],   H(s, c) = E[(X_s + c)_+],

and evaluate h at every s of S's window (~22 sd of Bin(n, w_A + w_B): 83 000 values at n = 1e8).
h varies slowly with s, so a block of g consecutive s can be summed through one of them.

Claim (monotone coupling).  With μ = p·A + (1 − p)·B and κ = max(0, max(D, 0) − μ), for every
s, every t >= 0 and every real c,

    H(s, c) <= H(s + t, c + t·κ).

Proof.  For t = 1 couple the two laws: N_A^{(s+1)} = N_A^{(s)} + ξ with ξ ~ Bern(p), and
N_D^{(s)} = J' + ζ, N_D^{(s+1)} = J' with J' ~ Bin(n − s − 1, q), ζ ~ Bern(q), all independent
(a binomial is the sum of its Bernoulli terms).  With W = A·N_A^{(s)} + B·(s − N_A^{(s)}) + D·J',
X_s = W + D·ζ and X_{s+1} = W + ξ' where ξ' = A·ξ + B·(1 − ξ) has mean μ and is independent of
W.  Since D·ζ <= max(D, 0) and x ↦ x_+ is non-decreasing, H(s, c) <= E[(W + c + max(D, 0))_+];
by Jensen's inequality conditionally on W (x ↦ x_+ is convex),
H(s + 1, c') = E[(W + ξ' + c')_+] >= E[(W + μ + c')_+], which for c' = c + max(D, 0) − μ is
the previous right-hand side; as H is non-decreasing in c, c' may be raised to c + κ.
Induction on t gives the claim.  ∎

Consequences (the blocks).  For a block of g consecutive values of S:

* upper: for s in (s_i − g, s_i], h(s) = H(s, 0) <= H(s_i, (s_i − s)·κ) <= H(s_i, (g − 1)·κ), so
  Σ_{s in block} P(S = s) h(s) <= P(S ∈ block)·H(s_i, (g − 1)κ);
* lower: for s in [s_i, s_i + g), h(s) >= H(s_i, −(s − s_i)·κ) >= H(s_i, −(g − 1)·κ) (the claim
  with c = −(s − s_i)κ), so the block's sum is >= P(S ∈ block)·H(s_i, −(g − 1)κ).

Both are exact inequalities, whatever g: g only trades time against tightness.  The shift
c = ±(g − 1)κ enters the count sum as a constant added to X (its threshold); the block's mass
P(S ∈ block) is a difference of two binomial tails on their accurate side, whose rounding
(relative RHO per tail, as every special-function value of the count sums) is bounded and
added to (upper) or subtracted from (lower) the sum by :mod:`.count_sums`.

Tightness: the loss of a block is about (g − 1)κ·P(X > 0) plus h's own variation over the
block, against h ≈ P(X > 0)·(mean excess of X over 0, ≈ σ/z with z = |E ΣG|/σ).
:func:`block_width` picks g so that the estimated loss moves ε by about :data:`EPS_LOSS`
relative; the benchmark records the resulting ε against the unblocked path (``s_block=1``).
"""

from __future__ import annotations

import math

import numpy as np

#: relative loss in ε allowed to the blocks (estimated, see :func:`block_width`)
EPS_LOSS = 1e-5
#: widest block
MAX_WIDTH = 4096
#: κ is rounded up by this relative margin (its own floating-point error is a few ulps)
_KAPPA_MARGIN = 1e-12


def drift(a: float, b: float, d: float, p: float) -> float:
    """κ = max(0, max(D, 0) − (p·A + (1 − p)·B)) of the module docstring, rounded up.

    Args:
        a: the largest atom A (> 0).
        b: the smallest atom B (< 0).
        d: the middle atom D (0 when there is none).
        p: P(an A | an A or a B).

    Returns:
        κ >= 0, with H(s, c) <= H(s + t, c + tκ) (the module's claim).
    """
    kappa = max(0.0, max(d, 0.0) - (p * a + (1.0 - p) * b))
    return kappa * (1 + _KAPPA_MARGIN) + (abs(a) + abs(b) + abs(d)) * 1e-15


def block_width(v: np.ndarray, w: np.ndarray, n: int, p: float, delta_ab: float, kappa: float,
                eps_loss: float | None = None) -> int:
    """The block width g, from a Gaussian model of ΣG (mean −zσ, sd σ; used only to choose g).

    In that model h ≈ σ(ϕ(z) − zQ(z)) and P(X > 0) ≈ Q(z), so a block loses per step of g
    about κ·Q/(σ(ϕ − zQ)) (the shift) plus ½Δ²p(1−p)·ϕ/(σ²(ϕ − zQ)) (h's curvature in s),
    relative to h; and ln δ(ε) falls with slope z·Q/(ϕ − zQ) in ln ε.  g is the largest width
    whose loss, divided by that slope, is at most ``eps_loss`` relative in ε.  Measured losses
    are at most the estimate (1.2e-7 .. 2.4e-5 per step of g in δ).  Only tightness depends on g.

    Args:
        v: the (at most three) non-zero atoms.
        w: their probabilities (the rest is the atom 0).
        n: the number of summands.
        p: P(an A | an A or a B).
        delta_ab: Δ = A − B.
        kappa: :func:`drift`.
        eps_loss: the relative loss in ε allowed (default :data:`EPS_LOSS`).

    Returns:
        g in [1, :data:`MAX_WIDTH`] (1: no blocks).
    """
    m1 = float(np.dot(w, v))
    var = n * (float(np.dot(w, v * v)) - m1 * m1)
    if not var > 0:
        return 1
    sigma = math.sqrt(var)
    z = min(20.0, max(0.05, -n * m1 / sigma))
    q = 0.5 * math.erfc(z / math.sqrt(2.0))
    phi = math.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    psi = phi - z * q  # E[(N(0,1) − z)_+] > 0
    if not psi > 0:
        return 1
    slope = z * q / psi
    per_step = kappa * q / (sigma * psi) + 0.5 * delta_ab * delta_ab * p * (1.0 - p) * phi / (var * psi)
    budget = (EPS_LOSS if eps_loss is None else eps_loss) * slope
    if not budget > 0:
        return 1
    g = budget / per_step if per_step > 0 else math.inf
    return int(max(1, min(MAX_WIDTH, math.floor(g) if math.isfinite(g) else MAX_WIDTH)))


def blocks(lo: int, hi: int, g: int, kappa: float, kind: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The blocks of g consecutive values of S covering [lo, hi], their representatives and the
    shift of X.

    Args:
        lo: the window's first value of S.
        hi: its last value (>= lo).
        g: the block width (>= 1).
        kappa: :func:`drift`.
        kind: ``"upper"`` (representative: the block's last s, shift +(g − 1)κ) or
            ``"lower"`` (its first s, shift −(g − 1)κ).

    Returns:
        (representatives, first s of each block, last s of each block, shift c added to X);
        the blocks partition [lo, hi] (the last one may be shorter).
    """
    first = np.arange(lo, hi + 1, max(1, g), dtype=np.int64)
    last = np.minimum(first + max(1, g) - 1, hi)
    if g <= 1:
        return first, first, last, 0.0
    if kind == "upper":
        return last, first, last, (g - 1) * kappa
    return first, first, last, -(g - 1) * kappa

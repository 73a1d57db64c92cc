"""The Laplace mechanism over {0, 1} as a local randomizer, bracketed by two finite randomizers.

The randomizer (Su et al. §7, "the Laplace mechanism over {0,1}"): R(x) = x + Lap(1/ε0) for
x ∈ {0, 1}, which is ε0-LDP.  Its output is continuous, so the finite-randomizer bounds apply to it
through two finite randomizers with J bins, one on each side:

* :func:`laplace_dominating` (for **upper** bounds).  Claim: R is a post-processing of the finite
  randomizer D_J whose outputs j = 0..J carry likelihood ratios ℓ_j = e^{ε0(2j/J − 1)}, so every
  upper bound for shuffled D_J holds for shuffled R.  Proof: the ratio of R's densities is
  ℓ(y) = p1(y)/p0(y) = e^{−ε0} for y ≤ 0, e^{ε0(2y−1)} on [0, 1] and e^{ε0} for y ≥ 1.  On a bin
  [y_j, y_{j+1}] of [0, 1] (y_j = j/J) write p0 = α + β with β = p0·(ℓ − ℓ_j)/(ℓ_{j+1} − ℓ_j) ≥ 0 and
  α ≥ 0; then p1 = ℓ·p0 = ℓ_j·α + ℓ_{j+1}·β.  So R(x) is: draw a component — (j, "low") with mass
  ℓ_j^x·∫α, (j, "high") with mass ℓ_{j+1}^x·∫β, the two tails with ratio ℓ_0 and ℓ_J — then draw y
  from that component's density normalised, which does not depend on x.  Components with the same
  ratio are merged into one output (splitting it back is again input-independent).  Shuffling
  commutes with applying the same kernel to every message, so shuffled R is a post-processing of
  shuffled D_J.
* :func:`laplace_binned` (for **lower** bounds).  The bin of y — (−∞, 0], each [y_j, y_{j+1}),
  [1, ∞) — is a post-processing of R, so every lower bound for shuffled binned R holds for R.

As J grows both converge to R (the ratios' grid step is 2ε0/J), and the gap between the best
upper bound of D_J and the best lower bound of the binned R says how far the bracket is from the
truth.  Masses are closed-form integrals of the Laplace density (``expm1`` for accuracy).
"""

from __future__ import annotations

import math

import numpy as np

from darrm import validation as v

from .randomizers import FiniteRandomizer

#: default number of bins on [0, 1]
BINS = 32


def _bin_masses(eps0: float, bins: int) -> tuple[np.ndarray, np.ndarray]:
    """(M0, M1): P[R(0) ∈ bin], P[R(1) ∈ bin] for the bins [j/J, (j+1)/J), j = 0..J−1."""
    y = np.arange(bins + 1) / bins
    # ∫ (ε0/2) e^{−ε0 y} dy over [a, b] = ½ e^{−ε0 a} (1 − e^{−ε0 (b − a)})
    m0 = 0.5 * np.exp(-eps0 * y[:-1]) * -np.expm1(-eps0 / bins)
    # p1(y) = (ε0/2) e^{−ε0 (1 − y)} on [0, 1]: ∫ = ½ e^{−ε0 (1 − b)} (1 − e^{−ε0 (b − a)})
    m1 = 0.5 * np.exp(-eps0 * (1 - y[1:])) * -np.expm1(-eps0 / bins)
    return m0, m1


def laplace_binned(eps0: float, bins: int = BINS) -> FiniteRandomizer:
    """R(x) = x + Lap(1/ε0) reported only as its bin: (−∞, 0], J bins of [0, 1], [1, ∞).

    A post-processing of the Laplace randomizer: its **lower** bounds are lower bounds for it.

    Args:
        eps0: the local budget (> 0); the Laplace scale is 1/ε0.
        bins: J, the number of equal bins of [0, 1] (≥ 1).

    Returns:
        The 2 × (J + 2) randomizer (outputs: left tail, bins, right tail).

    Raises:
        ParameterError: ``eps0`` or ``bins`` out of range.
    """
    eps0, bins = v.epsilon("eps0", eps0), v.count("bins", bins, maximum=4096)
    m0, m1 = _bin_masses(eps0, bins)
    tail_small = 0.5 * math.exp(-eps0)
    row0 = np.concatenate(([0.5], m0, [tail_small]))
    row1 = np.concatenate(([tail_small], m1, [0.5]))
    return FiniteRandomizer.from_array(np.vstack([row0, row1]))


def laplace_dominating(eps0: float, bins: int = BINS) -> FiniteRandomizer:
    """The finite randomizer D_J of which the Laplace randomizer is a post-processing (module docstring).

    Its **upper** bounds are upper bounds for the Laplace randomizer.

    Args:
        eps0: the local budget (> 0).
        bins: J (≥ 1); outputs j = 0..J carry likelihood ratios e^{ε0(2j/J − 1)}.

    Returns:
        The 2 × (J + 1) randomizer.

    Raises:
        ParameterError: ``eps0`` or ``bins`` out of range.
    """
    eps0, bins = v.epsilon("eps0", eps0), v.count("bins", bins, maximum=4096)
    m0, m1 = _bin_masses(eps0, bins)
    lr = np.exp(eps0 * (2 * np.arange(bins + 1) / bins - 1))
    # per bin: β mass (ratio ℓ_{j+1}) = (M1 − ℓ_j M0)/(ℓ_{j+1} − ℓ_j), α mass (ratio ℓ_j) = M0 − β
    beta = np.clip((m1 - lr[:-1] * m0) / (lr[1:] - lr[:-1]), 0.0, m0)
    alpha = m0 - beta
    w0 = np.zeros(bins + 1)
    w0[:-1] += alpha
    w0[1:] += beta
    w0[0] += 0.5  # y ≤ 0: ratio e^{−ε0} = ℓ_0, mass ½ under input 0
    w0[-1] += 0.5 * math.exp(-eps0)  # y ≥ 1: ratio e^{ε0} = ℓ_J
    row1 = lr * w0
    return FiniteRandomizer.from_array(np.vstack([w0 / w0.sum(), row1 / row1.sum()]))

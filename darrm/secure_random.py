"""DaRRM's coins from the operating system's CSPRNG (a "secure mode", like Opacus's ``secure_mode``).

numpy's generators (PCG64, SFC64, …) are fast and statistically good but predictable: whoever
learns the state learns every coin, and with it which labels were the true majority.  Here every
bit comes from :func:`os.urandom` (the kernel's CSPRNG; :mod:`secrets` uses the same source).

The Bernoulli draw is *exact*, with no rounding: a float64 probability p ∈ [0, 1] is a dyadic
rational, and a uniform U ∈ [0, 1) is compared with p through its binary expansion.  Write
p·2⁶⁴ = A + f with A = ⌊p·2⁶⁴⌋ (exact: scaling by a power of two) and f ∈ [0, 1); with U64 the
first 64 random bits of U,

* U64 < A  ⇒ U < p (released 1),
* U64 > A  ⇒ U ≥ p (released 0),
* U64 = A  (probability ≤ 2⁻⁶⁴) ⇒ U < p iff the remaining bits V satisfy V < f; f = n/2ᵏ is
  exact (:meth:`float.as_integer_ratio`), so ``secrets.randbits(k) < n`` decides.

So Pr[draw = 1] = p exactly, for every float64 p (including subnormal ones), not p rounded to a
53-bit grid.
"""

from __future__ import annotations

import os
import secrets
from fractions import Fraction

import numpy as np

from .errors import ParameterError

__all__ = ["bernoulli", "fair_coins", "uniform_u64"]

_TWO64 = 2.0**64


def uniform_u64(n: int) -> np.ndarray:
    """``n`` independent uniform 64-bit integers from :func:`os.urandom`."""
    return np.frombuffer(os.urandom(8 * n), dtype="<u8").astype(np.uint64)


def fair_coins(n: int) -> np.ndarray:
    """``n`` independent fair 0/1 coins (int64) from :func:`os.urandom`."""
    n = int(n)
    if n < 0:
        raise ParameterError("n", f"must be >= 0, got {n}")
    bits = np.unpackbits(np.frombuffer(os.urandom((n + 7) // 8), dtype=np.uint8))[:n]
    return bits.astype(np.int64)


def _tail_below(fraction: Fraction) -> bool:
    """Pr = ``fraction`` (a dyadic rational in [0, 1)): the remaining bits V of U satisfy V < f."""
    num, den = fraction.numerator, fraction.denominator
    return num > 0 and secrets.randbits(den.bit_length() - 1) < num


def bernoulli(p: object) -> np.ndarray:
    """Independent draws X_i ∈ {False, True} with Pr[X_i = True] = p_i exactly, from the OS CSPRNG.

    Args:
        p: probabilities (any shape), float64 values in [0, 1].
    Returns:
        a boolean array of p's shape.
    """
    a = np.asarray(p, dtype=np.float64)
    if not np.all(np.isfinite(a)) or np.any(a < 0.0) or np.any(a > 1.0):
        raise ParameterError("p", "probabilities must lie in [0, 1]")
    flat = a.ravel()
    scaled = flat * _TWO64  # exact: a power-of-two scaling of values in [0, 1]
    inner = flat < 1.0
    A = np.zeros(flat.shape, dtype=np.uint64)
    A[inner] = np.floor(scaled[inner]).astype(np.uint64)  # integral floats < 2**64: exact
    u = uniform_u64(flat.size)
    out = np.where(inner, u < A, True)
    for i in np.flatnonzero(inner & (u == A)):  # a tie on 64 bits: decide on the exact remainder
        f = Fraction(float(flat[i])) * (1 << 64) - int(A[i])
        out[i] = _tail_below(f)
    return out.reshape(a.shape)

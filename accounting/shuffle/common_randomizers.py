"""The common local randomizers of frequency estimation, and Poisson subsampling, as finite randomizers.

Each function returns a :class:`~darrm.accounting.shuffle.randomizers.FiniteRandomizer` (its
probability matrix ``matrix[x][y] = P[R(x) = y]``), so every specific-randomizer bound — the
optimal decomposition (Su et al. Thm 13), its lower bound (Su et al. Thm 14), the general-clone
variation ratio, composition over rounds — applies to it unchanged, upper and lower:

* :func:`asymmetric_rr` — binary randomizer with unequal keep probabilities q0 ≠ q1;
* :func:`rappor` — basic one-time RAPPOR (Erlingsson, Pihur, Korolova 2014), i.e. symmetric
  unary encoding (Wang, Blocki, Li, Jha 2017, "SUE"): one-hot input, every bit flipped
  independently with probability 1/(e^{ε0/2}+1);
* :func:`oue` — optimised unary encoding (Wang et al. 2017, "OUE"): the input's bit is 1 with
  probability 1/2, every other bit with probability 1/(e^{ε0}+1);
* :func:`hadamard_response` — Hadamard response (Acharya, Sun, Zhang 2019): with K the smallest
  power of two > k and H the K × K Sylvester Hadamard matrix, input x owns the K/2 outputs
  C_x = {y : H[x+1, y] = +1}; the output is uniform on C_x with probability e^{ε0}/(e^{ε0}+1),
  else uniform on its complement;
* :func:`poisson_subsampled` — each user takes part with probability ``rate``, otherwise sends
  nothing.

Poisson subsampling as a randomizer.  Claim: shuffling the messages of the users who take part
(each independently with probability q) reveals exactly as much as shuffling n messages of the
randomizer R_q(x) = q·R(x) + (1 − q)·⊥, with ⊥ one extra, data-independent output.  Proof: the
analyser of the first protocol sees the multiset of real messages; the second's histogram is that
multiset plus the count of ⊥, which is n minus its size, and n is public — each view is a function
of the other, so every neighbouring pair has the same hockey-stick divergence in both.  ⊥ has
the same probability under every input, so it adds to every output's common mass c_y (the
"blanket" of Su et al.'s decomposition): the bounds see the amplification.  The local ε0 of R_q is
that of R (a real message keeps its likelihood ratio); the gain is in the shuffled δ(ε).
"""

from __future__ import annotations

import math

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError

from .randomizers import FiniteRandomizer, GenericLDP, RandomizedResponse, Randomizer, as_finite

#: unary encodings have 2^k outputs; beyond this many the matrix is refused
MAX_OUTPUTS = 1 << 16


def asymmetric_rr(q0: float, q1: float) -> FiniteRandomizer:
    """Binary randomizer with P[R(0) = 0] = q0 and P[R(1) = 1] = q1 (q0 ≠ q1 allowed).

    Args:
        q0: probability that input 0 is reported truthfully, in (0, 1).
        q1: probability that input 1 is reported truthfully, in (0, 1); q0 + q1 ≠ 1.

    Returns:
        The 2 × 2 randomizer; its ε0 = max(|ln(q0/(1 − q1))|, |ln((1 − q0)/q1)|).

    Raises:
        ParameterError: a probability outside (0, 1) (pure LDP needs every entry > 0), or
            q0 + q1 = 1 (the output does not depend on the input).
    """
    q0, q1 = v.open_unit("q0", q0), v.open_unit("q1", q1)
    if abs(q0 + q1 - 1.0) <= 1e-12:
        raise ParameterError("q1", f"q0 + q1 = 1 ({q0} + {q1}): the output does not depend on the input")
    return FiniteRandomizer.from_array([[q0, 1.0 - q0], [1.0 - q1, q1]])


def _bits(k: int) -> np.ndarray:
    """All 2^k bit vectors, one per row (row y holds the binary digits of y)."""
    return ((np.arange(1 << k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)


def _classes(k: object, max_classes: int) -> int:
    return v.count("k", k, minimum=2, maximum=max_classes)


def unary_encoding(k: int, p1: float, q1: float) -> FiniteRandomizer:
    """Unary encoding: one-hot input, bit x reported 1 w.p. ``p1``, every other bit w.p. ``q1``.

    Its ε0 is ln(p1(1 − q1) / ((1 − p1) q1)) (Wang et al. 2017, Thm 2): two inputs differ in two
    bits.

    Args:
        k: the number of inputs (2 ≤ k ≤ 16; there are 2^k outputs).
        p1: P[bit x = 1] for input x, in (0, 1).
        q1: P[bit j = 1] for j ≠ x, in (0, 1), ≠ p1.

    Returns:
        The k × 2^k randomizer; output y's bit j is ``(y >> j) & 1``.

    Raises:
        ParameterError: ``k``, ``p1`` or ``q1`` out of range.
    """
    k = _classes(k, int(math.log2(MAX_OUTPUTS)))
    p1, q1 = v.open_unit("p1", p1), v.open_unit("q1", q1)
    if p1 == q1:
        raise ParameterError("q1", "q1 = p1: the output does not depend on the input")
    y = _bits(k)
    base = np.prod(np.where(y, q1, 1.0 - q1), axis=1)  # every bit at the "other" rates
    own = np.where(y, p1 / q1, (1.0 - p1) / (1.0 - q1))  # bit x at the input's rate instead
    return FiniteRandomizer.from_array(base[None, :] * own.T)


def rappor(k: int, eps0: float) -> FiniteRandomizer:
    """Basic one-time RAPPOR = symmetric unary encoding: every bit of the one-hot input flipped
    w.p. 1/(e^{ε0/2}+1), so p1 = e^{ε0/2}/(e^{ε0/2}+1), q1 = 1 − p1 and the ε0 is ``eps0``.

    Args:
        k: the number of inputs (2 ≤ k ≤ 16).
        eps0: the local budget (> 0).

    Returns:
        The k × 2^k randomizer.

    Raises:
        ParameterError: ``k`` or ``eps0`` out of range.
    """
    eps0 = v.epsilon("eps0", eps0)
    f = 1.0 / (math.exp(eps0 / 2) + 1.0)
    return unary_encoding(k, 1.0 - f, f)


def oue(k: int, eps0: float) -> FiniteRandomizer:
    """Optimised unary encoding: p1 = 1/2, q1 = 1/(e^{ε0}+1) (Wang et al. 2017, Sect. 4.4);
    the ε0 is ``eps0``.

    Args:
        k: the number of inputs (2 ≤ k ≤ 16).
        eps0: the local budget (> 0).

    Returns:
        The k × 2^k randomizer.

    Raises:
        ParameterError: ``k`` or ``eps0`` out of range.
    """
    eps0 = v.epsilon("eps0", eps0)
    return unary_encoding(k, 0.5, 1.0 / (math.exp(eps0) + 1.0))


def hadamard_response(k: int, eps0: float) -> FiniteRandomizer:
    """Hadamard response (Acharya, Sun, Zhang 2019): K = the smallest power of two > k outputs,
    P[R(x) = y] = 2e^{ε0}/(K(e^{ε0}+1)) for y in C_x = {y : H[x+1, y] = +1}, else
    2/(K(e^{ε0}+1)); rows 1..k of the Sylvester Hadamard matrix each hold K/2 entries +1, so
    the rows sum to 1 and the ε0 is ``eps0``.

    Args:
        k: the number of inputs (2 ≤ k < 2^16).
        eps0: the local budget (> 0).

    Returns:
        The k × K randomizer.

    Raises:
        ParameterError: ``k`` or ``eps0`` out of range.
    """
    k = _classes(k, MAX_OUTPUTS - 1)
    eps0 = v.epsilon("eps0", eps0)
    K = 1 << int(k).bit_length()  # smallest power of two > k
    idx = np.arange(K)
    # Sylvester: H[i, j] = (-1)^{popcount(i & j)}
    both = idx[1 : k + 1, None] & idx[None, :]
    parity = np.zeros(both.shape, dtype=np.int64)
    for bit in range(K.bit_length()):  # popcount parity (numpy < 2 has no bitwise_count)
        parity ^= (both >> bit) & 1
    e = math.exp(eps0)
    m = np.where(parity == 0, 2 * e / (K * (e + 1)), 2 / (K * (e + 1)))
    return FiniteRandomizer.from_array(m)


def poisson_subsampled(randomizer: Randomizer, rate: float) -> FiniteRandomizer:
    """Each user takes part with probability ``rate`` (independently), otherwise sends nothing.

    Returns R_q(x) = q·R(x) + (1 − q)·⊥ with ⊥ an extra last output: shuffling its n messages
    is equivalent to shuffling the participants' messages (module docstring: the two views are
    functions of each other), so every bound on R_q is a bound on the subsampled protocol.

    Args:
        randomizer: a specific randomizer (:class:`RandomizedResponse` or
            :class:`FiniteRandomizer`); a generic ε0-LDP one has no matrix to extend.
        rate: the participation probability q in (0, 1].

    Returns:
        The randomizer with one more output (⊥, the last column; none when ``rate`` = 1).

    Raises:
        ParameterError: ``rate`` outside (0, 1], or a generic randomizer.
    """
    v.instance("randomizer", randomizer, (GenericLDP, RandomizedResponse, FiniteRandomizer),
               "a RandomizedResponse or FiniteRandomizer")
    rate = v.sample_rate("rate", rate)
    fin = as_finite(randomizer)
    if fin is None:
        raise ParameterError("randomizer", "Poisson subsampling needs a specific randomizer "
                             "(RandomizedResponse or FiniteRandomizer), not a generic eps0-LDP one")
    m = fin.array
    return FiniteRandomizer.from_array(np.hstack([rate * m, np.full((m.shape[0], 1), 1.0 - rate)]))


"""Local randomizers as immutable values, validated once at construction.

* :class:`GenericLDP` — "some ε0-LDP randomizer": bounds for it must hold for
  every ε0-LDP randomizer (upper) or be attained by one (lower).
* :class:`RandomizedResponse` — k-ary randomized response (Warner 1965; k = 2 is
  binary RR): R(y|x) = e^{ε0}/(e^{ε0}+k-1) if y = x, else 1/(e^{ε0}+k-1).
* :class:`FiniteRandomizer` — any randomizer with finitely many inputs and
  outputs, given by its row-stochastic probability matrix ``matrix[x][y]``.

``joint`` and ``parallel`` build the joint composition (Su et al. §4.5, Cartesian
product) and the parallel composition (Su et al. §4.6 / Wang et al. Alg. 2:
pick mechanism i with probability w_i) of finite randomizers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError


@dataclass(frozen=True)
class GenericLDP:
    """An arbitrary ε0-LDP local randomizer (only ε0 is known).

    Attributes:
        eps0: the local ε0 (> 0).
    """

    eps0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", v.epsilon("eps0", self.eps0))

    @property
    def name(self) -> str:
        """A short label for tables and plots."""
        return f"generic {self.eps0:g}-LDP"


@dataclass(frozen=True)
class RandomizedResponse:
    """k-ary randomized response with local budget ε0 (k = 2: binary RR).

    Attributes:
        eps0: the local ε0 (> 0).
        k: the number of values (≥ 2).
    """

    eps0: float
    k: int = 2

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", v.epsilon("eps0", self.eps0))
        object.__setattr__(self, "k", v.count("k", self.k, minimum=2))

    @property
    def name(self) -> str:
        """A short label for tables and plots."""
        return f"{self.k}-RR(eps0={self.eps0:g})"

    @property
    def p_true(self) -> float:
        """P[R(x) = x]."""
        return math.exp(self.eps0) / (math.exp(self.eps0) + self.k - 1)

    @property
    def p_other(self) -> float:
        """P[R(x) = y] for a fixed y != x."""
        return 1.0 / (math.exp(self.eps0) + self.k - 1)

    def to_finite(self) -> "FiniteRandomizer":
        """The k × k probability matrix of this randomizer.

        Returns:
            The same randomizer as a :class:`FiniteRandomizer`.
        """
        k = self.k
        m = np.full((k, k), self.p_other)
        np.fill_diagonal(m, self.p_true)
        return FiniteRandomizer.from_array(m)


@dataclass(frozen=True)
class FiniteRandomizer:
    """A randomizer with finite input and output sets, ``matrix[x][y] = P[R(x)=y]``.

    Rows must be probability vectors (tolerance 1e-9, then renormalised) and, for
    pure LDP, all entries in a column must be either all zero or all positive.
    ``eps0`` is computed as the largest log-ratio within a column.

    Attributes:
        matrix: the probability matrix, one row per input.
    """

    matrix: tuple[tuple[float, ...], ...]
    eps0: float = field(init=False)

    def __post_init__(self) -> None:
        try:
            m = np.array(self.matrix, dtype=float)
        except (TypeError, ValueError) as exc:
            raise ParameterError("matrix", f"not a numeric matrix: {exc}") from None
        if m.ndim != 2 or m.shape[0] < 2 or m.shape[1] < 1:
            raise ParameterError("matrix", f"must be 2-D with >= 2 rows, got shape {m.shape}")
        if not np.all(np.isfinite(m)) or np.any(m < 0):
            raise ParameterError("matrix", "entries must be finite and >= 0")
        rows = m.sum(axis=1)
        if np.any(np.abs(rows - 1.0) > 1e-9):
            raise ParameterError("matrix", f"rows must sum to 1 (got {rows})")
        m = m / rows[:, None]
        col_zero = m == 0
        mixed = col_zero.any(axis=0) & ~col_zero.all(axis=0)
        if mixed.any():
            raise ParameterError(
                "matrix", "an output has zero probability for some inputs only: not pure LDP"
            )
        keep = ~col_zero.all(axis=0)
        m = m[:, keep]
        ratio = m.max(axis=0) / m.min(axis=0)
        eps0 = float(np.log(ratio.max()))
        if eps0 <= 0:
            raise ParameterError("matrix", "all rows are equal: the randomizer reveals nothing (eps0 = 0)")
        object.__setattr__(self, "matrix", tuple(tuple(float(v) for v in row) for row in m))
        object.__setattr__(self, "eps0", eps0)

    @classmethod
    def from_array(cls, m: np.ndarray | Sequence[Sequence[float]]) -> "FiniteRandomizer":
        """A randomizer from a matrix ``m[x][y] = P[R(x)=y]`` (validated as at construction).

        Args:
            m: the matrix, rows summing to 1.

        Returns:
            The randomizer.
        """
        return cls(tuple(tuple(float(v) for v in row) for row in np.asarray(m, dtype=float)))

    @property
    def array(self) -> np.ndarray:
        """The probability matrix as a float array (rows: inputs, columns: outputs)."""
        return np.array(self.matrix, dtype=float)

    @property
    def n_inputs(self) -> int:
        """The number of inputs (rows)."""
        return len(self.matrix)

    @property
    def name(self) -> str:
        """A short label for tables and plots."""
        return f"finite randomizer {self.n_inputs}x{len(self.matrix[0])} (eps0={self.eps0:.4g})"


def joint(*parts: FiniteRandomizer, max_outputs: int = 200_000) -> FiniteRandomizer:
    """Joint composition R(x_1..x_m) = (R_1(x_1), ..., R_m(x_m)) (Su et al. Thm 8).

    Inputs and outputs are the Cartesian products (Kronecker product of the
    matrices), so every pair of product inputs — including those differing in a
    subset of coordinates (Su et al. §8) — is a neighbouring pair.
    """
    if not parts:
        raise ParameterError("parts", "need at least one randomizer")
    m = np.ones((1, 1))
    for p in parts:
        if not isinstance(p, FiniteRandomizer):
            raise ParameterError("parts", "joint composition needs FiniteRandomizer values")
        m = np.kron(m, p.array)
        if m.size > max_outputs * max(1, m.shape[0]):
            raise ParameterError("parts", f"product too large ({m.shape})")
    return FiniteRandomizer.from_array(m)


def parallel(parts: Sequence[FiniteRandomizer], weights: Sequence[float]) -> FiniteRandomizer:
    """Parallel composition: pick R_i w.p. w_i, output (i, R_i(x)) (Su et al. §4.6).

    All parts must share the input set (same number of rows); the output space is
    the disjoint union of the parts' outputs.
    """
    if len(parts) == 0 or len(parts) != len(weights):
        raise ParameterError("weights", "need one weight per randomizer")
    w = np.asarray(weights, dtype=float)
    if np.any(~np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1) > 1e-9:
        raise ParameterError("weights", f"must be a probability vector, got {weights}")
    rows = {p.n_inputs for p in parts}
    if len(rows) != 1:
        raise ParameterError("parts", "all randomizers must have the same number of inputs")
    blocks = [wi * p.array for wi, p in zip(w, parts, strict=True) if wi > 0]
    return FiniteRandomizer.from_array(np.hstack(blocks))


Randomizer = GenericLDP | RandomizedResponse | FiniteRandomizer


def as_finite(r: Randomizer) -> FiniteRandomizer | None:
    """The probability matrix of a specific randomizer, or None for GenericLDP."""
    if isinstance(r, FiniteRandomizer):
        return r
    if isinstance(r, RandomizedResponse):
        return r.to_finite()
    return None

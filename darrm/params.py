"""Privacy parameters of a DaRRM instance (Problem 1.1 of Jiang, Zhang, Joshi).

K mechanisms, each (ε, Δ)-DP, are combined into one (mε, δ)-DP majority.  The
parameters are validated once, here, and every other module trusts them.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field
from enum import Enum

from .errors import ParameterError
from .privacy.condition import Check, check


def _finite(name: str, value: float) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(name, f"must be a number, got {value!r}") from None
    if not math.isfinite(v):
        raise ParameterError(name, f"must be finite, got {value!r}")
    return v


def validate_K(K: object) -> int:
    """K must be a positive odd integer (Problem 1.1: K odd, so the majority has no ties)."""
    if isinstance(K, bool):
        raise ParameterError("K", f"must be an odd integer >= 1, got {K!r}")
    try:
        k = operator.index(K)  # int or numpy integer; floats are refused
    except TypeError:
        raise ParameterError("K", f"must be an odd integer >= 1, got {K!r}") from None
    if k < 1 or k % 2 == 0:
        raise ParameterError("K", f"must be an odd integer >= 1, got {k}")
    return int(k)


def composed_delta(Delta: float, m: float) -> float:
    """δ of m-fold composition of (ε, Δ)-DP mechanisms: 1 − (1 − Δ)^m (0 when Δ = 0).

    This is the δ the paper uses for Figure 2 (Kairouz et al. general composition
    with δ′ → 0 in its simple-composition branch); computed as -expm1(m·log1p(-Δ))
    to keep precision for tiny Δ.
    """
    if Delta == 0.0:
        return 0.0
    # ≥ Δ mathematically for m ≥ 1; the max guards rounding toward the weaker (safe) claim
    return max(Delta, -math.expm1(m * math.log1p(-Delta)))


class NeighboringRelation(str, Enum):
    """Which pairs of data sets D, D′ a guarantee is about (explicit on every parameter object).

    The last two are dp_accounting's ``NeighboringRelation`` names, used where the concept is theirs.
    """

    #: one record changes and every member may depend on it (the paper's Problem 1.1)
    EVERY_MEMBER_SEES_RECORD = "every-member-sees-record"
    #: one record changes and only the member whose disjoint shard holds it may depend on it
    ONE_MEMBER_CHANGES = "one-member-changes"
    #: one record is added or removed (DP-SGD accounting of each teacher, Opacus)
    ADD_OR_REMOVE_ONE = "add-or-remove-one"
    #: one record is replaced (privacy amplification by shuffling)
    REPLACE_ONE = "replace-one"


@dataclass(frozen=True)
class PrivacyParams:
    """Parameters of Problem 1.1.

    Attributes:
        K: number of mechanisms (odd, ≥ 1).
        m: privacy allowance, a real number in [1, K]; the output is (mε, δ)-DP.
        eps: per-mechanism ε > 0.
        Delta: per-mechanism Δ ∈ [0, 1).
        delta: target δ ∈ [Δ, 1); defaults to 1 − (1 − Δ)^m.
    """

    K: int
    m: float
    eps: float
    Delta: float = 0.0
    delta: float | None = field(default=None)

    def __post_init__(self) -> None:
        K = validate_K(self.K)
        m = _finite("m", self.m)
        if not 1.0 <= m <= K:
            raise ParameterError("m", f"must lie in [1, K={K}], got {self.m!r}")
        eps = _finite("eps", self.eps)
        if eps <= 0.0:
            raise ParameterError("eps", f"must be > 0, got {self.eps!r}")
        Delta = _finite("Delta", self.Delta)
        if not 0.0 <= Delta < 1.0:
            raise ParameterError("Delta", f"must lie in [0, 1), got {self.Delta!r}")
        if self.delta is None:
            delta = composed_delta(Delta, m)
            if delta >= 1.0:
                raise ParameterError("delta", f"the default 1-(1-Delta)^m = {delta!r} is not < 1: the guarantee would be vacuous")
        else:
            delta = _finite("delta", self.delta)
            if not 0.0 <= delta < 1.0:
                raise ParameterError("delta", f"must lie in [0, 1), got {self.delta!r}")
            if delta < Delta:
                raise ParameterError("delta", f"must be >= Delta={Delta!r}, got {self.delta!r}")
        if m * eps > 700.0:
            raise ParameterError("eps", f"m*eps={m * eps!r} is too large to represent e^(m*eps)")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "Delta", Delta)
        object.__setattr__(self, "delta", delta)

    #: every member may depend on the changed record (Problem 1.1)
    neighboring = NeighboringRelation.EVERY_MEMBER_SEES_RECORD

    @property
    def mid(self) -> int:
        """(K+1)/2: the smallest vote count whose majority is 1."""
        return (self.K + 1) // 2

    @property
    def exp_meps(self) -> float:
        """e^{mε}."""
        return math.exp(self.m * self.eps)

    @property
    def check(self) -> "Check":
        """Constants of the rigorous float64 privacy test (:mod:`darrm.privacy.condition`)."""
        return check(self.m * self.eps, float(self.delta), self.K)  # type: ignore[arg-type]

    @property
    def rhs(self) -> float:
        """Right-hand side of Lemma 3.4 (Eq. 1): e^{mε} − 1 + 2δ."""
        return math.expm1(self.m * self.eps) + 2.0 * float(self.delta)  # type: ignore[arg-type]

    def to_dict(self) -> dict:
        return {"K": self.K, "m": self.m, "eps": self.eps, "Delta": self.Delta, "delta": self.delta}

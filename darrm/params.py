"""Privacy parameters of a DaRRM instance (Problem 1.1 of Jiang, Zhang, Joshi).

K mechanisms, each (ε, Δ)-DP, are combined into one (mε, δ)-DP majority.  The
parameters are validated once, here, and every other module trusts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from .errors import ParameterError
from .neighboring import NeighboringRelation
from .numerics.delta import composed_delta
from .privacy.condition import Check, check, rhs
from .validation import half_open_unit, odd_count, positive, real


@dataclass(frozen=True)
class PrivacyParams:
    """Parameters of Problem 1.1.

    Attributes:
        K: number of mechanisms (odd, ≥ 1).
        m: privacy allowance, a real number in [1, K]; the output is (mε, δ)-DP.
        eps: per-mechanism ε > 0.
        member_delta: per-mechanism Δ ∈ [0, 1) (the paper's Δ; named apart from the target δ).
        delta: target δ ∈ [Δ, 1); defaults to 1 − (1 − Δ)^m.
    """

    K: int
    m: float
    eps: float
    member_delta: float = 0.0
    delta: float = field(default=None)  # type: ignore[assignment]  # None: resolved in __post_init__

    if TYPE_CHECKING:  # the constructor takes delta=None (the default δ); the attribute is always a float

        def __init__(self, K: int, m: float, eps: float, member_delta: float = 0.0,
                     delta: float | None = None) -> None: ...

    def __post_init__(self) -> None:
        K = odd_count("K", self.K)
        m = real("m", self.m, 1.0, float(K))
        eps = positive("eps", self.eps)
        Delta = half_open_unit("member_delta", self.member_delta)
        if self.delta is None:
            delta = composed_delta(Delta, m)  # m-fold composition, never rounded below Δ
            if delta >= 1.0:
                raise ParameterError(
                    "delta", f"the default 1-(1-member_delta)^m = {delta!r} is not < 1: the guarantee would be vacuous"
                )
        else:
            delta = half_open_unit("delta", self.delta)
            if delta < Delta:
                raise ParameterError("delta", f"must be >= member_delta={Delta!r}, got {self.delta!r}")
        if m * eps > 700.0:
            raise ParameterError("eps", f"m*eps={m * eps!r} is too large to represent e^(m*eps)")
        object.__setattr__(self, "K", K)
        object.__setattr__(self, "m", m)
        object.__setattr__(self, "eps", eps)
        object.__setattr__(self, "member_delta", Delta)
        object.__setattr__(self, "delta", delta)

    #: the member model's name (:class:`darrm.member_params.MemberParams`)
    members: ClassVar[str] = "shared"
    #: every member may depend on the changed record (Problem 1.1)
    neighboring: ClassVar[NeighboringRelation] = NeighboringRelation.EVERY_MEMBER_SEES_RECORD

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
        return check(self.m * self.eps, self.delta, self.K)

    @property
    def rhs(self) -> float:
        """Right-hand side of Lemma 3.4 (Eq. 1): e^{mε} − 1 + 2δ."""
        return rhs(self.m * self.eps, self.delta)

    @property
    def query_budget(self) -> tuple[float, float]:
        """(mε, δ): the guarantee of one release (Problem 1.1)."""
        return float(self.m * self.eps), float(self.delta)

    def to_dict(self) -> dict:
        """A JSON-ready description (stored in γ files).

        Returns:
            ``{"K", "m", "eps", "member_delta", "delta"}`` with their values.
        """
        return {"K": self.K, "m": self.m, "eps": self.eps, "member_delta": self.member_delta, "delta": self.delta}

    def file_fields(self) -> dict[str, Any]:
        """The γ file's fields for these parameters ("Delta" is the per-mechanism Δ, the format's name).

        Returns:
            ``{"K", "m", "eps", "Delta", "delta"}`` with their values.
        """
        return {"K": self.K, "m": self.m, "eps": self.eps, "Delta": self.member_delta, "delta": self.delta}

    @classmethod
    def file_keys(cls) -> tuple[str, ...]:
        """The keys of :meth:`file_fields`.

        Returns:
            ``("K", "m", "eps", "Delta", "delta")``.
        """
        return ("K", "m", "eps", "Delta", "delta")

    @classmethod
    def from_file_fields(cls, d: dict[str, Any]) -> "PrivacyParams":
        """The inverse of :meth:`file_fields` (validated like any construction).

        Args:
            d: a γ file's fields, holding at least :meth:`file_keys`.

        Returns:
            The parameters.

        Raises:
            ParameterError: a field is out of its domain.
        """
        return cls(K=d["K"], m=d["m"], eps=d["eps"], member_delta=d["Delta"], delta=d["delta"])

    def record_fields(self) -> dict[str, Any]:
        """The JSON record's parameter fields (``eps`` becomes ``epsilon`` at the command line).

        Returns:
            ``{"m", "eps", "member_delta", "delta"}`` with their values.
        """
        return {"m": self.m, "eps": self.eps, "member_delta": self.member_delta, "delta": self.delta}

    def describe(self) -> str:
        """One line for logs and reports.

        Returns:
            ``K=…, m=…, eps=…, member_delta=…, delta=…``.
        """
        return (f"K={self.K}, m={self.m:g}, eps={self.eps:g}, member_delta={self.member_delta:g}, "
                f"delta={self.delta:.6g}")

"""What is known about one member's vote probability on disjoint shards (member-privacy models).

See :mod:`darrm.models.disjoint` for how each model's vertices and ends enter the reduction.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

from ...errors import ParameterError
from ...privacy.corners import complements, corners
from ...validation import epsilon, half_open_unit


class MemberPrivacy:
    """What is known about one member's vote probability (see the module docstring)."""

    def changed_vertices(self) -> np.ndarray:  # pragma: no cover - interface
        """Vertices (C, 2) of the region of (p_i, p′_i) of the member whose shard changes."""
        raise NotImplementedError

    def changed_complements(self) -> np.ndarray:  # pragma: no cover - interface
        """(1 − p_i, 1 − p′_i) of :meth:`changed_vertices`, in closed form (no cancellation)."""
        raise NotImplementedError

    def unchanged_ends(self) -> tuple[float, float]:  # pragma: no cover - interface
        """(lo, hi): the interval of p_j = p′_j of a member whose shard is unchanged."""
        raise NotImplementedError

    def to_dict(self) -> dict:  # pragma: no cover - interface
        """A JSON-ready description (``kind`` and parameters); :func:`member_from_dict` inverts it."""
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - interface
        """A short human-readable description."""
        raise NotImplementedError


@dataclass(frozen=True)
class NonPrivate(MemberPrivacy):
    """Members with no privacy guarantee (arbitrary functions of their own shard)."""

    def changed_vertices(self) -> np.ndarray:
        """See :meth:`MemberPrivacy.changed_vertices`: a non-private member may answer anything.

        Returns:
            The four corners of the unit square, (p, p′) pairs.
        """
        return np.array([(0.0, 0.0), (1.0, 1.0), (0.0, 1.0), (1.0, 0.0)])

    def changed_complements(self) -> np.ndarray:
        """See :meth:`MemberPrivacy.changed_complements`.

        Returns:
            1 − :meth:`changed_vertices`, exact for 0 and 1.
        """
        return 1.0 - self.changed_vertices()  # exact for 0 and 1

    def unchanged_ends(self) -> tuple[float, float]:
        """See :meth:`MemberPrivacy.unchanged_ends`.

        Returns:
            (0, 1): any probability of voting 1.
        """
        return 0.0, 1.0

    def to_dict(self) -> dict:
        """See :meth:`MemberPrivacy.to_dict`.

        Returns:
            ``{"kind": "nonprivate"}``.
        """
        return {"kind": "nonprivate"}

    def describe(self) -> str:
        """See :meth:`MemberPrivacy.describe`.

        Returns:
            ``non-private members``.
        """
        return "non-private members"


@dataclass(frozen=True)
class ApproxDP(MemberPrivacy):
    """Members that are (ε, Δ)-DP with respect to their own shard.

    Attributes:
        eps: each member's ε (> 0) with respect to its own shard.
        delta: each member's Δ, in [0, 1) (0: pure DP).
    """

    eps: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps", epsilon("member.eps", self.eps))
        object.__setattr__(self, "delta", half_open_unit("member.delta", self.delta))

    def changed_vertices(self) -> np.ndarray:
        """See :meth:`MemberPrivacy.changed_vertices`.

        Returns:
            The corners of the (ε, δ) privacy region of one member, (p, p′) pairs.
        """
        return corners(self.eps, self.delta)

    def changed_complements(self) -> np.ndarray:
        """See :meth:`MemberPrivacy.changed_complements`.

        Returns:
            1 − :meth:`changed_vertices`, computed without cancellation.
        """
        return complements(self.eps, self.delta)

    def unchanged_ends(self) -> tuple[float, float]:
        """See :meth:`MemberPrivacy.unchanged_ends`.

        Returns:
            (0, 1): any probability of voting 1.
        """
        return 0.0, 1.0

    def to_dict(self) -> dict:
        """See :meth:`MemberPrivacy.to_dict`.

        Returns:
            ``{"kind": "approx-dp", "eps": ε, "delta": δ}``.
        """
        return {"kind": "approx-dp", "eps": self.eps, "delta": self.delta}

    def describe(self) -> str:
        """See :meth:`MemberPrivacy.describe`.

        Returns:
            ``(ε, δ)-DP members``.
        """
        return f"({self.eps:g}, {self.delta:g})-DP members"


@dataclass(frozen=True)
class LocalRR(MemberPrivacy):
    """Members that report their (arbitrary) bit through ε0-randomised response.

    Attributes:
        eps0: the randomised response's ε0 (> 0).
    """

    eps0: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "eps0", epsilon("member.eps0", self.eps0))

    @property
    def flip(self) -> float:
        """r = 1/(e^{ε0}+1): the probability that RR reports the other bit."""
        return float(expit(-self.eps0))

    def changed_vertices(self) -> np.ndarray:
        """See :meth:`MemberPrivacy.changed_vertices`.

        Returns:
            The four (p, p′) pairs of ε0-randomised response, with r = 1/(1 + e^ε0) and s = 1 − r.
        """
        r, s = self.flip, float(expit(self.eps0))
        return np.array([(r, r), (s, s), (s, r), (r, s)])

    def changed_complements(self) -> np.ndarray:
        """See :meth:`MemberPrivacy.changed_complements`.

        Returns:
            1 − :meth:`changed_vertices`, exact (1 − r = s).
        """
        r, s = self.flip, float(expit(self.eps0))  # 1 − r = s
        return np.array([(s, s), (r, r), (r, s), (s, r)])

    def unchanged_ends(self) -> tuple[float, float]:
        """See :meth:`MemberPrivacy.unchanged_ends`.

        Returns:
            (r, s): a member behind randomised response votes 1 with probability between them.
        """
        return self.flip, float(expit(self.eps0))

    def to_dict(self) -> dict:
        """See :meth:`MemberPrivacy.to_dict`.

        Returns:
            ``{"kind": "rr", "eps0": ε0}``.
        """
        return {"kind": "rr", "eps0": self.eps0}

    def describe(self) -> str:
        """See :meth:`MemberPrivacy.describe`.

        Returns:
            ``members behind ε0-randomised response``.
        """
        return f"members behind {self.eps0:g}-randomised response"


def _number(d: dict, key: str) -> float:
    """``d[key]`` (its range is checked by the model), or ``ParameterError('model')`` when it is missing."""
    if key not in d:
        raise ParameterError("model", f"a {d['kind']!r} model needs {key!r}, got {d!r}")
    return d[key]


def member_from_dict(d: dict) -> MemberPrivacy:
    """Inverse of ``to_dict`` (γ files)."""
    if not isinstance(d, dict) or "kind" not in d:
        raise ParameterError("model", f"must be a dict with a 'kind', got {d!r}")
    kind = d["kind"]
    if kind == "nonprivate":
        return NonPrivate()
    if kind == "approx-dp":
        return ApproxDP(_number(d, "eps"), d.get("delta", d.get("Delta", 0.0)))  # "Delta": files before 0.2
    if kind == "rr":
        return LocalRR(_number(d, "eps0"))
    raise ParameterError("model", f"unknown member model kind {kind!r}")


def parse_member(spec: str) -> MemberPrivacy:
    """CLI spelling: ``nonprivate`` | ``EPS,DELTA`` (or ``EPS``) | ``rr:EPS0``."""
    s = str(spec).strip().lower()
    if s in ("nonprivate", "non-private", "none"):
        return NonPrivate()
    try:
        if s.startswith("rr:"):
            return LocalRR(float(s[3:]))
        parts = s.split(",")
        if len(parts) in (1, 2):
            return ApproxDP(float(parts[0]), float(parts[1]) if len(parts) == 2 else 0.0)
    except ValueError:
        pass
    raise ParameterError("member-privacy", f"expected nonprivate, EPS,DELTA or rr:EPS0, got {spec!r}")

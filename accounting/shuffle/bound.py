"""The result type shared by every shuffle-amplification bound, and its ε(δ) search.

A :class:`Bound` says explicitly whether its number is an *upper* bound on the
privacy loss of the shuffled protocol (a guarantee: the protocol is (ε, δ)-DP) or a
*lower* bound (an attack: some neighbouring pair of datasets is no better than
(ε, δ)), and whether it is ``valid`` — i.e. backed by a proof that is not known to be
broken.  Invalid results exist only to reproduce published tables; they are never
returned by default nor chosen by :func:`darrm.accounting.shuffle.best.best_upper_bound`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Literal

from darrm.errors import ParameterError
from darrm.neighboring import NeighboringRelation
from darrm.numerics.inversion import inverse_monotone

Kind = Literal["upper", "lower"]


class NotApplicable(ParameterError):
    """A bound's method does not apply to these parameters (e.g. the randomizer class or
    an ``n`` beyond what it computes).  :func:`~darrm.accounting.shuffle.best.all_bounds`
    reports it as an invalid :class:`Bound` whose note is the reason; every other error
    propagates."""

#: shuffling protects one user's input being replaced by another (Wang et al., Su et al.)
NEIGHBORING_RELATION = NeighboringRelation.REPLACE_ONE


@dataclass(frozen=True)
class Bound:
    """One method's answer for one (randomizer, n, ε or δ).

    ``eps``/``delta``: the (ε, δ) pair the method certifies (upper) or exhibits
    (lower).  ``valid`` is False when the method's proof is known to be broken or
    its result is not a guarantee of the requested kind; ``note`` says why.

    Attributes:
        method: the method's name (:data:`~darrm.accounting.shuffle.best.METHODS`).
        kind: "upper" or "lower".
        valid: whether the result is a guarantee of its kind.
        eps: the ε (∞ when the method does not apply).
        delta: the δ.
        note: how it was obtained, or why it is not valid.
    """

    method: str
    kind: Kind
    valid: bool
    eps: float
    delta: float
    note: str = ""
    neighboring_relation = NEIGHBORING_RELATION

    def __post_init__(self) -> None:
        if self.kind not in ("upper", "lower"):
            raise ParameterError("kind", f"must be 'upper' or 'lower', got {self.kind!r}")
        if math.isnan(self.eps) or self.eps < 0:
            raise ParameterError("eps", f"must be >= 0, got {self.eps}")
        if math.isnan(self.delta) or not 0.0 <= self.delta <= 1.0:
            raise ParameterError("delta", f"must lie in [0, 1], got {self.delta}")

    @classmethod
    def not_applicable(cls, method: str, kind: Kind, reason: str, *, delta: float | None = None,
                       eps: float | None = None) -> "Bound":
        """An invalid Bound for a method that does not apply.

        For an ε query (``delta`` given) ε = ∞, for a δ query (``eps`` given) δ = 1 — the trivial
        values, certified by nothing.

        Args:
            method: the method's name.
            kind: ``"upper"`` or ``"lower"``.
            reason: why it does not apply (becomes the note).
            delta: the target δ of an ε query.
            eps: the target ε of a δ query.

        Returns:
            The invalid bound.
        """
        if delta is not None:
            return cls(method, kind, False, math.inf, delta, "not applicable: " + reason)
        return cls(method, kind, False, float(eps if eps is not None else 0.0), 1.0, "not applicable: " + reason)

    def as_record(self) -> dict:
        """The JSON record used by the CLI; an infinite ε (a method that does not apply) is written as null.

        Returns:
            ``{"method", "bound", "valid", "eps", "delta", "note"}`` with their values.
        """
        return {
            "method": self.method,
            "bound": self.kind,
            "valid": self.valid,
            "eps": self.eps if math.isfinite(self.eps) else None,
            "delta": self.delta,
            "note": self.note,
        }


def eps_for_delta(
    delta_of_eps: Callable[[float], float],
    delta: float,
    hi: float,
    kind: Kind,
    rtol: float = 1e-7,
) -> float:
    """ε(δ) of a non-increasing δ(ε) on [0, hi], on the safe side for a bound of ``kind``.

    :func:`darrm.numerics.inversion.inverse_monotone` (Brent's method on log δ(ε), then a
    checked step): for an upper bound the returned ε_H satisfies ``delta_of_eps(ε_H) <= delta``;
    for a lower bound ε_L satisfies ``delta_of_eps(ε_L) > delta`` (or ε_L = 0), so the true ε(δ)
    of any mechanism whose δ(ε) dominates ``delta_of_eps`` is >= ε_L.  0 when δ(0) <= ``delta``;
    ``ParameterError('delta')`` when δ(hi) > ``delta``.
    """
    return inverse_monotone(delta_of_eps, delta, 0.0, hi, increasing=False,
                            side="certified" if kind == "upper" else "uncertified",
                            log_value=True, xtol=1e-14, rtol=rtol, name="delta")

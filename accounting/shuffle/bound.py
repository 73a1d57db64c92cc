"""The result type shared by every shuffle-amplification bound, and the ε(δ) search.

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

Kind = Literal["upper", "lower"]


@dataclass(frozen=True)
class Bound:
    """One method's answer for one (randomizer, n, ε or δ).

    ``eps``/``delta``: the (ε, δ) pair the method certifies (upper) or exhibits
    (lower).  ``valid`` is False when the method's proof is known to be broken or
    its result is not a guarantee of the requested kind; ``note`` says why.
    """

    method: str
    kind: Kind
    valid: bool
    eps: float
    delta: float
    note: str = ""

    def __post_init__(self) -> None:
        if self.kind not in ("upper", "lower"):
            raise ParameterError("kind", f"must be 'upper' or 'lower', got {self.kind!r}")
        if math.isnan(self.eps) or self.eps < 0:
            raise ParameterError("eps", f"must be >= 0, got {self.eps}")
        if math.isnan(self.delta) or not 0.0 <= self.delta <= 1.0:
            raise ParameterError("delta", f"must lie in [0, 1], got {self.delta}")

    def as_record(self) -> dict:
        """The JSON record used by the CLI (``method, bound, valid, eps, delta, note``)."""
        return {
            "method": self.method,
            "bound": self.kind,
            "valid": self.valid,
            "eps": self.eps,
            "delta": self.delta,
            "note": self.note,
        }


def check_eps(eps: float, name: str = "eps") -> float:
    eps = float(eps)
    if not math.isfinite(eps) or eps < 0:
        raise ParameterError(name, f"must be a finite number >= 0, got {eps}")
    return eps


def check_delta(delta: float, name: str = "delta") -> float:
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ParameterError(name, f"must lie in (0, 1), got {delta}")
    return delta


def check_n(n: int | float, name: str = "n") -> int:
    if isinstance(n, bool):
        raise ParameterError(name, "must be an integer >= 1")
    nf = float(n)
    if not math.isfinite(nf) or nf != int(nf) or nf < 1:
        raise ParameterError(name, f"must be an integer >= 1, got {n}")
    return int(nf)


def bisect_eps(
    delta_of_eps: Callable[[float], float],
    delta: float,
    hi: float,
    kind: Kind,
    iters: int = 40,
    lo: float = 0.0,
) -> float:
    """ε for a target δ by bisection on [lo, hi]; returns the *safe* end.

    For an upper bound the returned ε_H satisfies ``delta_of_eps(ε_H) <= delta``
    (checked, so the result is valid even if the computed δ(ε) is not exactly
    monotone).  For a lower bound the returned ε_L satisfies
    ``delta_of_eps(ε_L) > delta`` (or ε_L = lo), so that the true ε(δ) of any
    mechanism whose δ(ε) dominates ``delta_of_eps`` is >= ε_L.  ``hi`` must be a
    point with ``delta_of_eps(hi) <= delta`` (e.g. ε0, where δ = 0).
    """
    if kind == "upper" and delta_of_eps(lo) <= delta:
        return lo
    if kind == "lower" and delta_of_eps(lo) <= delta:
        return lo
    a, b = lo, hi
    for _ in range(iters):
        m = 0.5 * (a + b)
        if delta_of_eps(m) > delta:
            a = m
        else:
            b = m
    return b if kind == "upper" else a


def solve_eps(
    delta_of_eps: Callable[[float], float],
    delta: float,
    hi: float,
    kind: Kind,
    rtol: float = 1e-7,
) -> float:
    """ε(δ) by Brent's method on log δ(ε), then a checked step to the safe side.

    Same contract as :func:`bisect_eps` (the returned end is verified, not assumed)
    but needs ~10-15 evaluations instead of ~30.
    """
    from scipy.optimize import brentq

    if delta_of_eps(0.0) <= delta:
        return 0.0
    if delta_of_eps(hi) > delta:
        raise ParameterError("delta", f"target delta={delta} not reached even at eps={hi}")
    ld = math.log(delta)
    f = lambda e: math.log(max(delta_of_eps(e), 1e-300)) - ld  # noqa: E731
    root = brentq(f, 0.0, hi, xtol=1e-14, rtol=rtol)
    step = max(4 * rtol * root, 1e-13)
    if kind == "upper":
        e = min(root, hi)
        while delta_of_eps(e) > delta:
            e = min(hi, e + step)
            step *= 2
        return e
    e = root
    while e > 0 and delta_of_eps(e) <= delta:
        e = max(0.0, e - step)
        step *= 2
    return e

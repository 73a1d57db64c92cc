"""One safe inversion of a monotone function: every ε(δ), σ(ε) and ε0 search in darrm.accounting.

Like ``dp_accounting.pld.common.inverse_monotone_function`` (and the bracket search of
``dp_accounting.mechanism_calibration``), but it returns the *safe* end, checked:

* a point x is **certified** when ``func(x) <= value`` (e.g. δ(ε) ≤ target δ, ε(σ) ≤ target ε);
* ``side="certified"`` (upper bounds, calibrations) returns a certified x within the
  tolerance of the boundary x* between certified and uncertified points;
* ``side="uncertified"`` (lower bounds) returns an x with ``func(x) > value`` within the
  tolerance of x* (or the interval's uncertified end when every point is certified), so
  that the true x* of anything dominating ``func`` is on the other side of it.

The result is verified by evaluating ``func`` — never assumed from the root finder — so it is
on its side even when the computed ``func`` is not exactly monotone.

``increasing`` says how ``func`` varies: a decreasing func (δ(ε), ε(σ)) is certified on
[x*, upper], an increasing one (ε_total(ε0)) on [lower, x*].

Tolerance: the bracket is narrowed until its width is ≤ max(xtol, rtol·|x|) (``"bisect"``, or
``maxiter`` halvings), or Brent's method is run to ``xtol``/``rtol`` and the result stepped to
the requested side by steps of max(4·rtol·|x|, 10·xtol) that double each time (``"brent"``).
With ``geometric=True`` the search runs on log x (x > 0); with ``log_value=True`` Brent's
method sees log func − log value (for a func spanning many decades, such as δ(ε)).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal

from ..errors import ParameterError

Side = Literal["certified", "uncertified"]


def inverse_monotone(
    func: Callable[[float], float],
    value: float,
    lower: float,
    upper: float,
    *,
    increasing: bool,
    side: Side = "certified",
    method: Literal["brent", "bisect"] = "brent",
    xtol: float = 1e-12,
    rtol: float = 1e-10,
    maxiter: int = 1000,
    geometric: bool = False,
    log_value: bool = False,
    expand: float | None = None,
    limits: tuple[float, float] = (-math.inf, math.inf),
    check_ends: bool = True,
    name: str = "value",
) -> float:
    """The boundary of {x : func(x) ≤ value} in [lower, upper], on the requested ``side``.

    Args:
        func: monotone in x (``increasing`` says which way).
        value: the target; x is certified when ``func(x) <= value``.
        lower, upper: the search interval (``lower <= upper``).
        side: ``"certified"`` (safe for an upper bound or a calibration) or
            ``"uncertified"`` (safe for a lower bound); see the module docstring.
        method: ``"brent"`` (scipy's brentq, then a checked step) or ``"bisect"``.
        xtol, rtol, maxiter: stopping rule (module docstring).
        geometric: search on log x (requires x > 0): geometric midpoints, Brent on log x.
        log_value: Brent's method on log func − log value (value > 0).
        expand: a factor > 1: multiply or divide the (positive) ends by it until they
            bracket x*, within ``limits``; the uncertified end stops at its limit and is
            returned if certified there.
        check_ends: evaluate the ends first (``False`` trusts the caller that the
            uncertified end is uncertified and the certified end certified, as in
            Wang et al.'s Algorithm 1, which halves a fixed number of times).
        name: the parameter named by the ``ParameterError`` raised when no certified
            point exists in the interval (or within ``limits`` when expanding).

    Returns:
        x on the requested side of the boundary (see the module docstring).
    """
    ok = lambda x: func(x) <= value  # noqa: E731
    # c: certified end, u: uncertified end
    c, u = (lower, upper) if increasing else (upper, lower)
    c_lim, u_lim = (limits[0], limits[1]) if increasing else (limits[1], limits[0])

    def outward(x: float, toward: float, factor: float) -> float:
        return x * factor if toward > x else x / factor

    def beyond(x: float, lim: float, ref: float) -> bool:
        return (x > lim) if lim > ref else (x < lim)

    if check_ends:
        if expand is not None:
            while ok(u):
                nxt = outward(u, u_lim, expand)
                if beyond(nxt, u_lim, u) or nxt == u:
                    return u_lim if ok(u_lim) else _finish(
                        func, value, u, u_lim, ok, side, method, xtol, rtol, maxiter, geometric, log_value)
                c, u = u, nxt
            while not ok(c):
                nxt = outward(c, c_lim, expand)
                if beyond(nxt, c_lim, c) or nxt == c:
                    raise ParameterError(name, f"target {value!r} is not reached within {limits}")
                c, u = nxt, c
        else:
            if ok(u):
                return u
            if not ok(c):
                raise ParameterError(name, f"target {value!r} not reached even at {c!r}")
    return _finish(func, value, c, u, ok, side, method, xtol, rtol, maxiter, geometric, log_value)


def _finish(func, value, c, u, ok, side, method, xtol, rtol, maxiter, geometric, log_value) -> float:
    """Narrow the bracket (c certified, u not) and return the requested end."""
    fwd = (lambda x: math.log(x)) if geometric else (lambda x: x)  # noqa: E731
    back = (lambda t: math.exp(t)) if geometric else (lambda t: t)  # noqa: E731
    if method == "bisect":
        for _ in range(maxiter):
            if abs(c - u) <= max(xtol, rtol * max(abs(c), abs(u))):
                break
            mid = math.sqrt(c * u) if geometric else 0.5 * (c + u)
            if ok(mid):
                c = mid
            else:
                u = mid
        return c if side == "certified" else u
    if method != "brent":  # pragma: no cover - programming error
        raise ValueError(f"unknown method {method!r}")
    from scipy.optimize import brentq

    if log_value:
        lv = math.log(value)
        g = lambda t: math.log(max(func(back(t)), 1e-300)) - lv  # noqa: E731
    else:
        g = lambda t: func(back(t)) - value  # noqa: E731
    a, b = sorted((fwd(c), fwd(u)))
    root = brentq(g, a, b, xtol=xtol, rtol=rtol)
    step = max(4.0 * rtol * abs(root), 10.0 * xtol)
    tc, tu = fwd(c), fwd(u)
    if side == "certified":  # step toward c until certified
        t = min(max(root, a), b)
        while not ok(back(t)):
            t = min(t + step, tc) if tc > t else max(t - step, tc)
            step *= 2.0
        return back(t)
    t = root  # step toward u until uncertified (or u itself)
    while t != tu and ok(back(t)):
        t = min(t + step, tu) if tu > t else max(t - step, tu)
        step *= 2.0
    return back(t)

"""All shuffle bounds behind one interface, and the best valid upper bound.

``all_bounds(randomizer, n, delta=...)`` (ε for a target δ) or ``eps=...`` (δ for
a given ε) returns one :class:`Bound` per applicable method.  Results whose proof is
known to be broken (``valid=False``) are only included with ``include_invalid=True``.
``best_upper_bound`` picks the smallest valid upper bound and says which method gave it.
"""

from __future__ import annotations

from typing import Callable

from darrm import validation as v
from darrm.errors import DarrmError, ParameterError, ParameterTypeError

from . import blanket, clones, decomposition, erlingsson, krr, variation_ratio
from .bound import Bound
from .randomizers import FiniteRandomizer, GenericLDP, RandomizedResponse, Randomizer

Method = tuple[str, Callable[..., Bound], Callable[..., Bound], Callable[[Randomizer], bool]]


def _any(_: Randomizer) -> bool:
    return True


def _specific(r: Randomizer) -> bool:
    return isinstance(r, (RandomizedResponse, FiniteRandomizer))


def _rr_or_generic(r: Randomizer) -> bool:
    return isinstance(r, (RandomizedResponse, GenericLDP))


#: (name, eps(δ) function, δ(ε) function, applicability)
METHODS: list[Method] = [
    ("erlingsson", erlingsson.eps_bound, erlingsson.delta_bound, _any),
    ("blanket-hoeffding",
     lambda r, n, d: blanket.eps_bound(r, n, d, "hoeffding"),
     lambda r, n, e: blanket.delta_bound(r, n, e, "hoeffding"), _any),
    ("blanket-bennett",
     lambda r, n, d: blanket.eps_bound(r, n, d, "bennett"),
     lambda r, n, e: blanket.delta_bound(r, n, e, "bennett"), _any),
    ("clones", clones.eps_bound, clones.delta_bound, _any),
    ("variation-ratio", variation_ratio.eps_bound, variation_ratio.delta_bound, _any),
    ("optimal-decomposition", decomposition.eps_bound, decomposition.delta_bound, _specific),
    ("fft-lower", decomposition.lower_eps_bound, decomposition.lower_delta_bound, _any),
    ("krr-exact", krr.lower_eps_bound, krr.lower_delta_bound, _rr_or_generic),
]


def _paper_only(randomizer: Randomizer, n: int, delta: float) -> list[Bound]:
    out: list[Bound] = []
    if isinstance(randomizer, RandomizedResponse):
        out.append(variation_ratio.paper_specific_eps_bound(randomizer, n, delta))
        try:
            out.append(krr.paper_eps_bound(randomizer, n, delta))
        except ParameterError:
            pass
    return out


def all_bounds(
    randomizer: Randomizer,
    n: int,
    *,
    delta: float | None = None,
    eps: float | None = None,
    include_invalid: bool = False,
    methods: list[str] | None = None,
) -> list[Bound]:
    """One Bound per applicable method (ε for ``delta`` or δ for ``eps``)."""
    v.instance("randomizer", randomizer, (GenericLDP, RandomizedResponse, FiniteRandomizer),
               "a GenericLDP, RandomizedResponse or FiniteRandomizer")
    include_invalid = v.flag("include_invalid", include_invalid)
    if methods is not None:
        names = [m[0] for m in METHODS]
        if isinstance(methods, (str, bytes)) or not isinstance(methods, (list, tuple, set, frozenset)):
            raise ParameterTypeError("methods", f"must be a list of method names or None, got {methods!r}")
        for m in methods:
            v.choice("methods", m, names)
    n = v.count("n", n)
    if (delta is None) == (eps is None):
        raise ParameterError("delta", "give exactly one of delta (to get eps) or eps (to get delta)")
    if delta is not None:
        delta = v.open_unit("delta", delta)
    else:
        eps = v.epsilon("eps", eps, allow_zero=True)
    out: list[Bound] = []
    for name, f_eps, f_delta, ok in METHODS:
        if methods is not None and name not in methods:
            continue
        if not ok(randomizer):
            continue
        try:
            b = f_eps(randomizer, n, delta) if delta is not None else f_delta(randomizer, n, eps)
        except DarrmError:
            continue  # method not computable for these parameters (e.g. n too large)
        if b.valid or include_invalid:
            out.append(b)
    if include_invalid and delta is not None and methods is None:
        out.extend(_paper_only(randomizer, n, delta))
    return out


def best_upper_bound(
    randomizer: Randomizer, n: int, *, delta: float | None = None, eps: float | None = None
) -> Bound:
    """The smallest *valid* upper bound over all methods (``method`` names the winner)."""
    bounds = [b for b in all_bounds(randomizer, n, delta=delta, eps=eps) if b.kind == "upper" and b.valid]
    if not bounds:  # cannot happen: clones applies to every randomizer
        raise ParameterError("randomizer", "no valid upper bound applies")
    key = (lambda b: b.eps) if delta is not None else (lambda b: b.delta)
    return min(bounds, key=key)


def randomizer_for(eps0: float, classes: int | None = None) -> Randomizer:
    """A generic ε0-LDP randomizer (``classes=None``) or k-ary randomized response over ``classes``."""
    return GenericLDP(eps0) if classes is None else RandomizedResponse(eps0, classes)


def bound_records(n: int, eps0s: list[float], delta: float, classes: int | None = None) -> list[dict]:
    """Every bound (invalid ones included, marked) for each ε0 as JSON-ready records
    (``darrm shuffle``): :meth:`Bound.as_record` plus ``eps0`` and ``n``."""
    recs = []
    for e0 in eps0s:
        for b in all_bounds(randomizer_for(e0, classes), n, delta=delta, include_invalid=True):
            recs.append({**b.as_record(), "eps0": e0, "n": n})
    return recs

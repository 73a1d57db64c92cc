"""All shuffle bounds behind one interface, and the best valid upper bound.

``all_bounds(randomizer, n, delta=...)`` (ε for a target δ) or ``eps=...`` (δ for
a given ε) returns one :class:`Bound` per applicable method.  Results whose proof is
known to be broken (``valid=False``) are only included with ``include_invalid=True``.
``best_upper_bound`` picks the smallest valid upper bound and says which method gave it.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from darrm import validation as v
from darrm.errors import ParameterError, ParameterTypeError

from . import binary_rr_exact, blanket, clones, decomposition, erlingsson, krr, variation_ratio
from .bound import Bound, Kind, NotApplicable
from .randomizer_spec import RandomizerSpec
from .randomizers import FiniteRandomizer, GenericLDP, RandomizedResponse, Randomizer


class Method(NamedTuple):
    """One row of :data:`METHODS`: the method's ``name`` (its module's ``NAME``), whether it
    gives an ``upper`` or a ``lower`` bound, its ε(δ) and δ(ε) functions, and
    ``not_for(randomizer)``: why it does not apply to that randomizer, or None.  ``randomizers``
    and ``notes`` are its row of the docs' table of methods (docs/shuffle.md, written from
    :data:`METHODS` by ``docs/hooks/shuffle_methods_table.py``): which randomizers it covers, its
    source, its assumptions and whether its proof holds."""

    name: str
    kind: Kind
    eps_bound: Callable[..., Bound]
    delta_bound: Callable[..., Bound]
    not_for: Callable[[Randomizer], str | None]
    randomizers: str = ""
    notes: str = ""


def _any(_: Randomizer) -> str | None:
    return None


def _specific(r: Randomizer) -> str | None:
    if isinstance(r, (RandomizedResponse, FiniteRandomizer)):
        return None
    return "needs a specific randomizer (RandomizedResponse or FiniteRandomizer), not a generic eps0-LDP one"


def _binary_rr(r: Randomizer) -> str | None:
    if isinstance(r, RandomizedResponse) and r.k == 2:
        return None
    return "the exact curve is binary randomized response's (k = 2) only"


def _binary_rr_or_generic(r: Randomizer) -> str | None:
    if isinstance(r, GenericLDP) or _binary_rr(r) is None:
        return None
    return "applies to binary randomized response (or, as a lower bound, a generic eps0-LDP randomizer) only"


def _rr_or_generic(r: Randomizer) -> str | None:
    if isinstance(r, (RandomizedResponse, GenericLDP)):
        return None
    return "applies to k-ary randomized response (or binary RR for a generic eps0-LDP randomizer) only"


_BLANKET_NOTES = ("BBGN19 privacy blanket, transcribed from `shuffleddp` (its δ ≥ 1e-11 floor is not "
                  "applied); valid")


def _blanket(which: str) -> Method:
    return Method(blanket.NAMES[which], "upper",
                  lambda r, n, d: blanket.eps_bound(r, n, d, which),
                  lambda r, n, e: blanket.delta_bound(r, n, e, which), _any,
                  "any ε0-LDP (generic constants) or k-RR (k-RR constants)", _BLANKET_NOTES)


#: every method: name (carried by its module), kind, ε(δ), δ(ε), applicability, its docs row
METHODS: list[Method] = [
    Method(erlingsson.NAME, "upper", erlingsson.eps_bound, erlingsson.delta_bound, _any, "any ε0-LDP",
           "EFMRTT19: ε = 12ε0√(ln(1/δ)/n) only if ε0 ≤ 1/2, n ≥ 1000, δ ≤ 0.01; else the trivial ε0; valid"),
    _blanket("hoeffding"),
    _blanket("bennett"),
    Method(clones.NAME, "upper", clones.eps_bound, clones.delta_bound, _any, "any ε0-LDP",
           "FMT21 clone pair, exact evaluation (C ~ Bin(n−1, e^{−ε0})); valid"),
    Method(variation_ratio.NAME, "upper", variation_ratio.eps_bound, variation_ratio.delta_bound, _any,
           "generic ε0-LDP; k-RR and finite (specific)",
           "generic: p = q = e^{ε0} is the FMT23a stronger clone, whose post-processing is flawed (Su et al. "
           "§3.3; FMT23b restrict it to a sub-class): **not valid**, reproduces Wang et al. Table 5 only.  "
           "k-RR and finite: the g = 0 decomposition with the randomizer's own clone probability (a "
           "general-clone pair, Su et al. Thm 4): valid.  A per-pair refinement that keeps the victim's "
           "left-over as its own symbol is an unreviewed derivation, checked only numerically at small n, "
           "so it is not used"),
    Method(decomposition.NAME, "upper", decomposition.eps_bound, decomposition.delta_bound, _specific,
           "specific (matrix)",
           "Su et al. Thm 6/13: blanket (= optimal general-clone) decomposition, δ = (1/n)E[(ΣG)_+].  "
           "**Exact at every n** when the GPARV has ≤ 3 non-zero atoms (k-RR, binary RR, any randomizer "
           "with ratios in {e^{−ε0}, 1, e^{ε0}} and input symmetry…): multinomial count sums, see Numerics.  "
           "Otherwise min(FFT with rounded-up GPARV for n ≤ 20000, count sum with atoms rounded up to 3 "
           "groups, clone, valid variation-ratio); valid"),
    Method(decomposition.LOWER_NAME, "lower", decomposition.lower_eps_bound, decomposition.lower_delta_bound,
           _any, "specific (generic: binary RR)",
           "Su et al. Thm 14: exact divergence of (x0, x*, …, x*) vs (x1, x*, …, x*), and of the uniform "
           "i.i.d. mixture of the others' inputs (GKMP20; a mixture of dataset pairs, ≤ the worst pair by "
           "joint convexity).  Exact count sums for ≤ 3 atoms (k-RR: x* ∈ {x0, x1} and the mixture), else "
           "FFT rounded down for n ≤ 20000 or, above, count sum with atoms rounded down.  Name kept for "
           "the CLI; non-degenerate at n = 1e6 and beyond; valid"),
    Method(krr.LOWER_NAME, "lower", krr.lower_eps_bound, krr.lower_delta_bound, _rr_or_generic,
           "k-RR (generic: binary RR), n ≤ 20000 (else not applicable)",
           "Biswas et al. corrected: divergence of the x0-bin count for n_x0 ∈ {0,1,2} (post-processing of "
           "one dataset's output); valid"),
    Method(binary_rr_exact.NAME, "upper", binary_rr_exact.eps_bound, binary_rr_exact.delta_bound, _binary_rr,
           f"binary RR, n ≤ {binary_rr_exact.MAX_N_BLOCKS:.0e} (blocks of splits above {binary_rr_exact.MAX_N})",
           "the exact shuffled binary-RR curve: max over every split of the others' inputs of the count's "
           "hockey-stick divergence (upper tails by log-concavity), rigorous FFT/tail error terms added "
           "(above n = 20000: blocks of splits with FFT-free count tails, within ~1e-3 of the lower bound); "
           "valid"),
    Method(binary_rr_exact.LOWER_NAME, "lower", binary_rr_exact.lower_eps_bound, binary_rr_exact.lower_delta_bound,
           _binary_rr_or_generic,
           f"binary RR (generic: binary RR), n ≤ {binary_rr_exact.MAX_N_BLOCKS:.0e} (some splits above "
           f"{binary_rr_exact.MAX_N})",
           "the same exact curve with the error terms subtracted: attained by a pair of datasets; valid"),
]


def register(method: Method) -> Method:
    """Add a shuffle bound to :data:`METHODS`: :func:`all_bounds`, :func:`best_upper_bound`,
    ``darrm shuffle`` (table, ``--json``, ``--plot``) and the docs' table of methods read it.

    Args:
        method: the new row; its ``name`` must be new.

    Returns:
        ``method``, so a module can keep it.

    Raises:
        ParameterError: ``name`` is already registered, or ``kind`` is not "upper"/"lower".
    """
    if any(m.name == method.name for m in METHODS):
        raise ParameterError("name", f"a shuffle bound named {method.name!r} is already registered")
    v.choice("kind", method.kind, ("upper", "lower"))
    METHODS.append(method)
    return method


def _paper_only(randomizer: Randomizer, n: int, delta: float) -> list[Bound]:
    out: list[Bound] = []
    if isinstance(randomizer, RandomizedResponse):
        out.append(variation_ratio.paper_specific_eps_bound(randomizer, n, delta))
        try:
            out.append(krr.paper_eps_bound(randomizer, n, delta))
        except NotApplicable as exc:
            out.append(Bound.not_applicable(krr.PAPER_NAME, "upper", str(exc), delta=delta))
    return out


def all_bounds(
    randomizer: Randomizer,
    n: int,
    *,
    delta: float | None = None,
    eps: float | None = None,
    include_invalid: bool = False,
    methods: list[str] | None = None,
    kinds: tuple[str, ...] = ("upper", "lower"),
) -> list[Bound]:
    """One Bound per applicable method (ε for ``delta`` or δ for ``eps``).

    Args:
        randomizer: the local randomizer of every user.
        n: the number of users.
        delta: the target δ (gives ε); exactly one of ``delta`` and ``eps``.
        eps: the target ε (gives δ).
        include_invalid: also return published results whose proof is broken, and
            methods that do not apply (``valid=False``, the note says why).
        methods: only these methods (names from :data:`METHODS`); a method asked for
            by name that does not apply is returned as an invalid Bound with the reason.
        kinds: evaluate only methods of these kinds (``"upper"``, ``"lower"``).

    Returns:
        The bounds, in the order of :data:`METHODS`.

    Raises:
        ParameterError: a parameter is out of range; any error of a method other than
            :class:`~darrm.accounting.shuffle.bound.NotApplicable` propagates.
    """
    v.instance("randomizer", randomizer, (GenericLDP, RandomizedResponse, FiniteRandomizer),
               "a GenericLDP, RandomizedResponse or FiniteRandomizer")
    include_invalid = v.flag("include_invalid", include_invalid)
    if methods is not None:
        names = [m.name for m in METHODS]
        if isinstance(methods, (str, bytes)) or not isinstance(methods, (list, tuple, set, frozenset)):
            raise ParameterTypeError("methods", f"must be a list of method names or None, got {methods!r}")
        for m in methods:
            v.choice("methods", m, names)
    if isinstance(kinds, (str, bytes)) or not isinstance(kinds, (list, tuple, set, frozenset)) or not kinds:
        raise ParameterTypeError("kinds", f"must be a non-empty tuple of 'upper'/'lower', got {kinds!r}")
    for k in kinds:
        v.choice("kinds", k, ("upper", "lower"))
    n = v.count("n", n)
    if (delta is None) == (eps is None):
        raise ParameterError("delta", "give exactly one of delta (to get eps) or eps (to get delta)")
    if delta is not None:
        delta = v.open_unit("delta", delta)
    else:
        eps = v.epsilon("eps", eps, allow_zero=True)
    out: list[Bound] = []
    for meth in METHODS:
        if (methods is not None and meth.name not in methods) or meth.kind not in kinds:
            continue
        reason = meth.not_for(randomizer)
        try:
            if reason is not None:
                raise NotApplicable("randomizer", reason)
            b = meth.eps_bound(randomizer, n, delta) if delta is not None else meth.delta_bound(randomizer, n, eps)
        except NotApplicable as exc:
            if include_invalid or methods is not None:
                out.append(Bound.not_applicable(meth.name, meth.kind, str(exc), delta=delta, eps=eps))
            continue
        if b.valid or include_invalid:
            out.append(b)
    if include_invalid and delta is not None and methods is None and "upper" in kinds:
        out.extend(_paper_only(randomizer, n, delta))
    return out


def best_upper_bound(
    randomizer: Randomizer, n: int, *, delta: float | None = None, eps: float | None = None
) -> Bound:
    """The smallest *valid* upper bound over all methods (``method`` names the winner).

    Only upper-bound methods are evaluated (a lower bound can cost far more and never
    wins).

    Args:
        randomizer: the local randomizer of every user.
        n: the number of users.
        delta: the target δ (gives ε); exactly one of ``delta`` and ``eps``.
        eps: the target ε (gives δ).

    Returns:
        The winning :class:`Bound`.

    Raises:
        ParameterError: a parameter is out of range.

    Examples:
        1,000 users each answer binary randomized response at ε0 = 1; shuffled, their reports
        are (0.127, 10⁻⁶)-DP, by the exact bound for binary RR:

        >>> from darrm.accounting import RandomizedResponse, best_upper_bound
        >>> bound = best_upper_bound(RandomizedResponse(1.0, 2), 1000, delta=1e-6)
        >>> bound.method, bound.kind, bound.valid, round(bound.eps, 3)
        ('binary-rr-exact', 'upper', True, 0.127)
    """
    bounds = [b for b in all_bounds(randomizer, n, delta=delta, eps=eps, kinds=("upper",)) if b.valid]
    if not bounds:  # cannot happen: clones applies to every randomizer
        raise ParameterError("randomizer", "no valid upper bound applies")
    key = (lambda b: b.eps) if delta is not None else (lambda b: b.delta)
    return min(bounds, key=key)


def randomizer_for(eps0: float, classes: int | None = None, spec: RandomizerSpec | None = None) -> Randomizer:
    """A generic ε0-LDP randomizer (``classes=None``), k-ary randomized response over ``classes``,
    or the randomizer named by ``spec`` (:mod:`.randomizer_spec`; not together with ``classes``)."""
    if spec is not None:
        if classes is not None:
            raise ParameterError("classes", "give the number of classes or a randomizer spec, not both")
        v.instance("spec", spec, RandomizerSpec, "a RandomizerSpec (parse_randomizer)")
        return spec.build(eps0)
    return GenericLDP(eps0) if classes is None else RandomizedResponse(eps0, classes)


def bound_records(n: int, eps0s: list[float], delta: float, classes: int | None = None,
                  spec: RandomizerSpec | None = None) -> list[dict]:
    """Every bound (invalid ones included, marked) for each ε0 as JSON-ready records
    (``darrm shuffle``): :meth:`Bound.as_record` plus ``eps0`` and ``n``; the randomizer as in
    :func:`randomizer_for`."""
    recs = []
    for e0 in eps0s:
        for b in all_bounds(randomizer_for(e0, classes, spec), n, delta=delta, include_invalid=True):
            recs.append({**b.as_record(), "eps0": e0, "n": n})
    return recs

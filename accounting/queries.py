"""Tight total budgets of DaRRM queries: composition of each table's exact dominating pair.

Public API (stable; the total-budget solver and the comparisons build on it):

* :func:`query_pld` (profile or table) → a dp_accounting ``PrivacyLossDistribution`` of one query;
* :func:`composed_epsilon` / :func:`composed_delta` (table, queries, δ_total / ε_total,
  member_randomness=…) → :class:`QueryBound` (the bound, its name, the discretisation bracket);
* :class:`QueryAccountant`: ``step(table, n)``, ``get_epsilon(delta)``, ``get_delta(eps)``,
  ``pld()`` (export), ``ledger``; Opacus-style;
* :func:`fixed_members_bound`: what holds when the same trained members answer every query;
* :func:`record_group_bounds`: each record group's own total for a table of record groups on
  shards (:class:`~darrm.ShardGroupParams`), fresh or fixed members;
* :func:`generic_epsilon`: the generic (Kairouz–Oh–Viswanath optimal homogeneous) bound, for comparison.

**When composition applies** (``member_randomness``, which the caller must state):

* ``"fresh"`` — the members answer each query with fresh randomness (e.g. each vote is a fresh
  private release).  Each query is then a mechanism whose every conditional law (given the past
  answers) is dominated by its table's pair (P, Q) (:mod:`darrm.privacy.profile`, Claim 2: the
  pair dominates *every* admissible member behaviour, so also the one the past induces), and
  Zhu, Dong & Wang 2022 (Theorem 10) give: the product of the pairs dominates the adaptive
  composition.  The PLD of that product is computed by dp_accounting.
* ``"fixed"`` — the same trained models answer every query.  Then the queries' votes are
  dependent through the models and the per-query theorem does not apply as it stands (no proof
  is claimed here).  What always holds is post-processing of the members' own guarantees, for any
  number of queries: for members on disjoint shards that are (ε, Δ)-DP on their shard, one record
  changes one member, so every release is (ε, Δ)-DP (bound ``"members-disjoint-post-processing"``);
  for K members on shared data, each (ε, Δ)-DP, the vote vectors are the K-fold composition
  (bound ``"members-shared-composition"``, Kairouz–Oh–Viswanath's exact homogeneous composition);
  for records copied into r_g shards (:class:`~darrm.ShardGroupParams`), one record of group g
  changes the r_g members holding its copies, each (ε, Δ)-DP on its shard with its own
  randomness, so every release is a post-processing of r_g such mechanisms: their exact
  homogeneous composition (bound ``"members-record-copies-composition"``; r_g for group g's
  records, max_g r_g for every record).  Each member's guarantee must cover everything it outputs
  (all its votes).

**Record groups** (:class:`~darrm.ShardGroupParams`).  Each record group g has its own per-query
profile δ_g (:func:`darrm.models.shard_groups.profile.record_group_profiles`): for fresh members the
records of group g are owed the Q-fold composition of group g's pair (Zhu et al. Theorem 10 with
group g's pair, which dominates every query's conditional law for those records);
:func:`record_group_bounds` reports it group by group, and the largest is a total for every record.
:func:`composed_epsilon` on such a table composes the pair every record meets (the union of the
groups' clouds, :func:`darrm.models.profile.privacy_profile`): also valid, for any sequence of
tables, but looser than the largest group total when the groups' worst cases differ.

**Discretisation, both ways.**  One query's privacy loss L = log(P(j)/Q(j)) under P, with the
infinite-loss atom P(0) as dp_accounting's ``infinity_mass``, is rounded *up* to multiples of the
interval (pessimistic) or *down* (optimistic) and composed by dp_accounting (its tail truncation
follows the same side).  δ(ε) = E[(1 − e^{ε − L})₊] + infinite mass is non-decreasing in every
loss, also after convolution, so raising losses gives an upper bound and lowering them a lower
bound on the exact composition of the pairs.  The same argument allows a cap: the pessimistic
side sends losses above ``loss_cap`` to +∞ and raises losses below −cap to −cap; the optimistic
side lowers losses above the cap to the cap and drops those below −cap (to −∞).  The exact value
lies in [optimistic, pessimistic]; :func:`composed_epsilon` halves the interval until that bracket
is within ``bracket`` (relative).  (dp_accounting's ``from_two_probability_mass_functions`` does
the same rounding, without the cap, which its dense composition needs for losses like ±21.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.models import model_named, model_of
from darrm.models.disjoint.members import ApproxDP, LocalRR
from darrm.models.profile import privacy_profile
from darrm.models.shard_groups.params import ShardGroupParams
from darrm.numerics.delta import composed_delta as failure_delta
from darrm.privacy.profile import PrivacyProfile
from darrm.table import GammaTable

from .composition import optimal_homogeneous_delta, optimal_homogeneous_epsilon

__all__ = [
    "BOUND_FRESH", "BOUND_GENERIC", "MEMBER_RANDOMNESS", "QueryAccountant", "QueryBound", "bound_name",
    "composed_delta", "composed_epsilon", "fixed_members_bound", "generic_epsilon", "loss_cap_for",
    "loss_distribution", "query_pld", "record_group_bounds", "table_profile",
]

#: what the caller must say about the members' randomness across queries
MEMBER_RANDOMNESS = ("fresh", "fixed")
#: the bound's name for fresh members: the PLD of the product of the tables' dominating pairs
BOUND_FRESH = "dominating-pair-pld"
#: the generic bound: Q identical (ε_q, δ_q) queries, Kairouz–Oh–Viswanath optimal homogeneous composition
BOUND_GENERIC = "kairouz-oh-viswanath-optimal"
#: the fixed-members bounds' names, as each member model declares them (``MemberModel.fixed_bound``)
BOUND_FIXED_DISJOINT = model_named("disjoint").fixed_bound
BOUND_FIXED_SHARED = model_named("shared").fixed_bound
BOUND_FIXED_GROUPS = model_named("groups").fixed_bound
BOUND_FIXED_COPIES = model_named("shard-groups").fixed_bound

#: default discretisation interval of the PLDs (privacy-loss units)
DEFAULT_INTERVAL = 1e-4
#: the loss cap (module docstring) is at least this; with ``loss_cap=None`` it grows to cover every
#: loss whose P or Q mass is ≥ :data:`CAP_MASS`, up to :data:`MAX_LOSS_CAP`
DEFAULT_LOSS_CAP = 10.0
MAX_LOSS_CAP = 60.0
CAP_MASS = 1e-12
#: default relative width of the [optimistic, pessimistic] bracket of :func:`composed_epsilon`
DEFAULT_BRACKET = 0.0025
#: :func:`composed_epsilon` halves the interval at most this many times
MAX_REFINEMENTS = 4


def check_member_randomness(value: object) -> str:
    """``member_randomness``: "fresh" or "fixed" (no default: the caller must say which holds)."""
    if value is None:
        raise ParameterError("member_randomness", "must be said: 'fresh' (members answer each query with "
                             "fresh randomness) or 'fixed' (the same trained members answer every query)")
    return v.choice("member_randomness", value, MEMBER_RANDOMNESS)


#: profiles by table fingerprint (:func:`table_profile`), at most :data:`_PROFILE_CACHE_SIZE`
_PROFILES: dict[str, PrivacyProfile] = {}
_PROFILE_CACHE_SIZE = 32


def table_profile(table: GammaTable) -> PrivacyProfile:
    """The table's :func:`~darrm.models.profile.privacy_profile`, cached by its fingerprint (the
    sha256 of its parameters and exact γ values: equal tables share one profile)."""
    from .table_identity import table_fingerprint

    v.instance("table", table, GammaTable, "a darrm.GammaTable")
    key = table_fingerprint(table)
    if key not in _PROFILES:
        if len(_PROFILES) >= _PROFILE_CACHE_SIZE:
            _PROFILES.pop(next(iter(_PROFILES)))
        _PROFILES[key] = privacy_profile(table)
    return _PROFILES[key]


def loss_cap_for(profile: PrivacyProfile) -> float:
    """The automatic cap: :data:`DEFAULT_LOSS_CAP`, raised to 1 + the largest |loss| of a segment
    with P or Q mass ≥ :data:`CAP_MASS`, at most :data:`MAX_LOSS_CAP` (a larger cap only costs time)."""
    P, Q = profile.pair()
    ok = (P > 0) & (Q > 0) & (np.maximum(P, Q) >= CAP_MASS)
    big = float(np.max(np.abs(np.log(P[ok]) - np.log(Q[ok])), initial=0.0))
    return min(MAX_LOSS_CAP, max(DEFAULT_LOSS_CAP, 1.0 + math.ceil(big)))


def loss_distribution(profile: PrivacyProfile, cap: float, pessimistic: bool) -> tuple[np.ndarray, np.ndarray, float]:
    """(losses, masses, infinity mass) of one query's privacy loss L = log(P/Q) under P, the losses
    clamped to [−cap, cap] in the direction of ``pessimistic`` (module docstring)."""
    P, Q = profile.pair()
    inf_mass = float(P[0])
    ok = (P > 0) & (Q > 0)
    loss, mass = np.log(P[ok]) - np.log(Q[ok]), P[ok]
    if pessimistic:
        inf_mass += float(np.sum(mass[loss > cap]))  # a larger loss: infinite
        keep = loss <= cap
        loss, mass = np.maximum(loss[keep], -cap), mass[keep]  # a larger loss: −cap
    else:
        keep = loss >= -cap  # a smaller loss: −∞ (contributes nothing)
        loss, mass = np.minimum(loss[keep], cap), mass[keep]  # a smaller loss: cap
    return loss, mass, inf_mass


def query_pld(profile: PrivacyProfile | GammaTable, *, value_discretization_interval: float = DEFAULT_INTERVAL,
              pessimistic: bool = True, loss_cap: float | None = None):
    """The dp_accounting ``PrivacyLossDistribution`` of one query (its dominating pair, losses rounded
    and capped at ±``loss_cap`` on the side of ``pessimistic``; module docstring).  Symmetric: the
    pair dominates both neighbouring directions.

    Args:
        profile: a :class:`~darrm.privacy.profile.PrivacyProfile` or a table (profiled, cached).
        value_discretization_interval: the PLD's loss grid (> 0).
        pessimistic: round losses up (an upper bound, the default) or down (a lower bound).
        loss_cap: the cap on |loss| (> 0); None: :func:`loss_cap_for`.

    Raises:
        ParameterError: bad arguments."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    if isinstance(profile, GammaTable):
        profile = table_profile(profile)
    v.instance("profile", profile, PrivacyProfile, "a PrivacyProfile or a darrm.GammaTable")
    interval = v.positive("value_discretization_interval", value_discretization_interval)
    cap = loss_cap_for(profile) if loss_cap is None else v.positive("loss_cap", loss_cap)
    v.flag("pessimistic", pessimistic)
    loss, mass, inf_mass = loss_distribution(profile, cap, pessimistic)
    idx = np.ceil(loss / interval) if pessimistic else np.floor(loss / interval)
    rounded: dict[int, float] = {}
    for i, m in zip(idx.astype(np.int64).tolist(), mass.tolist(), strict=True):
        rounded[i] = rounded.get(i, 0.0) + m
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        rounded, inf_mass, interval, pessimistic_estimate=pessimistic)


@dataclass(frozen=True)
class QueryBound:
    """A total (ε, δ) of a sequence of DaRRM queries, and which theorem gives it.

    Attributes:
        epsilon: the total ε (inf: no finite ε at that δ).
        delta: the total δ.
        bound: the bound's name (:data:`BOUND_FRESH`, :data:`BOUND_GENERIC`, ``members-…``).
        member_randomness: "fresh" or "fixed".
        queries: the number of queries composed.
        lower: for :data:`BOUND_FRESH`, the optimistic discretisation of the same composition
            (the exact composed value of the pairs lies in [lower, epsilon] or [lower, delta]);
            else equal to the bound.
        interval: the PLD's discretisation interval (0 where none is used).
        solved_for: "epsilon" (ε for a given total δ) or "delta" (δ for a given total ε).
    """

    epsilon: float
    delta: float
    bound: str
    member_randomness: str
    queries: int
    lower: float
    interval: float = 0.0
    solved_for: str = "epsilon"

    @property
    def upper(self) -> float:
        """The computed quantity (``epsilon`` or ``delta``, whichever was solved for)."""
        return self.epsilon if self.solved_for == "epsilon" else self.delta

    @property
    def bracket(self) -> float:
        """Relative width (upper − lower)/upper of the discretisation bracket (0 for closed forms)."""
        u = self.upper
        return 0.0 if u == 0.0 or not math.isfinite(u) else max(0.0, (u - self.lower) / u)

    def to_dict(self) -> dict:
        """JSON-ready, with the keys of :mod:`darrm.json_vocabulary`.

        Returns:
            ``{"epsilon_total", "delta_total", "accountant", "member_randomness", "queries",
            "lower_bound", "bracket", "value_discretization_interval"}`` with their values.
        """
        return {"epsilon_total": self.epsilon, "delta_total": self.delta, "accountant": self.bound,
                "member_randomness": self.member_randomness, "queries": self.queries,
                "lower_bound": self.lower, "bracket": self.bracket, "value_discretization_interval": self.interval}


def _steps(steps: Sequence[tuple[GammaTable, int]]) -> list[tuple[GammaTable, int]]:
    out = []
    what = "a darrm.GammaTable or a non-empty sequence of (GammaTable, queries) pairs"
    if not isinstance(steps, Sequence) or isinstance(steps, (str, bytes)) or not steps:
        raise ParameterError("table", f"must be {what}, got {steps!r}")
    for step in steps:
        if not isinstance(step, (tuple, list)) or len(step) != 2:
            raise ParameterError("table", f"must be {what}, got an element {step!r}")
        t, n = step
        v.instance("table", t, GammaTable, "a darrm.GammaTable")
        out.append((t, v.count("queries", n)))
    return out


def _composed(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], interval: float, pessimistic: bool,
              loss_cap: float | None):
    total = None
    for t, n in steps:
        one = query_pld(t, value_discretization_interval=interval, pessimistic=pessimistic, loss_cap=loss_cap)
        part = one.self_compose(n) if n > 1 else one
        total = part if total is None else total.compose(part)
    return total


def _exposures(params: object):
    """The members one record can change, from the table's member model (refused, naming the option,
    when the model has no fixed-members bound)."""
    model = model_of(params)
    model.require("fixed-members", "member_randomness")
    return model, model.exposures(params)


def fixed_members_bound(table: GammaTable, delta_total: float | None = None,
                        epsilon_total: float | None = None) -> QueryBound:
    """The bound for fixed (trained once) members, for ANY number of queries: post-processing of
    the members' own guarantees (module docstring): the exact composition of the ``count`` members
    one record changes when they share one guarantee, else the heterogeneous composition of all of
    them (:meth:`darrm.models.base.MemberModel.exposures`).  Give ``delta_total`` (→ ε) or
    ``epsilon_total`` (→ δ).

    Raises:
        ParameterError: neither or both targets; members with no privacy guarantee give ε = inf."""
    if (delta_total is None) == (epsilon_total is None):
        raise ParameterError("delta_total", "give exactly one of delta_total and epsilon_total")
    model, exposed = _exposures(table.params)
    if len(exposed) == 1:
        count, member = exposed[0]
        return _shard_members_bound(member, count, model.fixed_bound, delta_total, epsilon_total)
    from .composition import heterogeneous_composition

    total = heterogeneous_composition([(m.eps, m.delta) for n, m in exposed for _ in range(n)])
    if delta_total is not None:
        dt = v.open_unit("delta_total", delta_total)
        eps = float(total.get_epsilon_for_delta(dt))
        return QueryBound(eps, dt, model.fixed_bound, "fixed", 0, eps)
    et = v.epsilon("epsilon_total", epsilon_total, allow_zero=True)
    dl = min(1.0, float(total.get_delta_for_epsilon(et)))
    return QueryBound(et, dl, model.fixed_bound, "fixed", 0, dl, 0.0, "delta")


def _shard_members_bound(member: object, copies: int, name: str, delta_total: float | None,
                         epsilon_total: float | None) -> QueryBound:
    """Members on shards, ``copies`` of them changed by one record (module docstring): the exact
    composition of ``copies`` (ε, Δ)-DP members; members with no guarantee give ε = inf; local-RR
    members are refused (they randomise every report afresh)."""
    if isinstance(member, LocalRR):
        raise ParameterError("member_randomness", "local-RR members randomise every report afresh: use "
                                                  "member_randomness='fresh'")
    if not isinstance(member, ApproxDP):
        return QueryBound(math.inf, 1.0, name, "fixed", 0, math.inf,
                          solved_for="epsilon" if delta_total is not None else "delta")
    return _homogeneous_bound(member.eps, member.delta, copies, name, delta_total, epsilon_total)


def _homogeneous_bound(e: float, d: float, k: int, name: str, delta_total: float | None,
                       epsilon_total: float | None) -> QueryBound:
    """k (e, d)-DP mechanisms composed (Kairouz–Oh–Viswanath's exact homogeneous composition)."""
    if delta_total is not None:
        dt = v.open_unit("delta_total", delta_total)
        eps = math.inf if dt < failure_delta(d, k) else optimal_homogeneous_epsilon(e, d, k, dt)
        return QueryBound(eps, dt, name, "fixed", 0, eps)
    et = v.epsilon("epsilon_total", epsilon_total, allow_zero=True)
    dl = optimal_homogeneous_delta(e, d, k, et)
    return QueryBound(et, dl, name, "fixed", 0, dl, 0.0, "delta")


def generic_epsilon(table: GammaTable, queries: int, delta_total: float) -> float:
    """The generic bound: ``queries`` identical (ε_q, δ_q) queries composed by Kairouz–Oh–Viswanath's
    exact homogeneous composition (the worst (ε_q, δ_q)-DP mechanism each time); inf where
    δ_total < 1 − (1 − δ_q)^Q."""
    from .table_identity import per_query_budget

    eps_q, delta_q = per_query_budget(table)
    q = v.count("queries", queries)
    dt = v.open_unit("delta_total", delta_total)
    if dt < failure_delta(delta_q, q):
        return math.inf
    return optimal_homogeneous_epsilon(eps_q, delta_q, q, dt)


def _refined(steps, target: float, want_eps: bool, interval: float | None, bracket: float,
             loss_cap: float | None) -> tuple[float, float, float]:
    """(pessimistic, optimistic, interval): halve the interval until the bracket is within ``bracket``."""
    h = DEFAULT_INTERVAL if interval is None else interval
    for attempt in range(MAX_REFINEMENTS + 1):
        hi_pld = _composed(steps, h, True, loss_cap)
        lo_pld = _composed(steps, h, False, loss_cap)
        if want_eps:
            hi, lo = float(hi_pld.get_epsilon_for_delta(target)), float(lo_pld.get_epsilon_for_delta(target))
        else:
            hi, lo = float(hi_pld.get_delta_for_epsilon(target)), float(lo_pld.get_delta_for_epsilon(target))
        lo = min(lo, hi)
        if interval is not None or not math.isfinite(hi) or hi == 0 or (hi - lo) <= bracket * hi \
                or attempt == MAX_REFINEMENTS:
            return hi, lo, h
        h /= 2.0
    raise AssertionError("unreachable")  # pragma: no cover


def composed_epsilon(table: GammaTable | Sequence[tuple[GammaTable, int]], queries: int | None = None, *,
                     delta_total: float, member_randomness: str,
                     value_discretization_interval: float | None = None, bracket: float = DEFAULT_BRACKET,
                     loss_cap: float | None = None) -> QueryBound:
    """Total ε at ``delta_total`` of ``queries`` answers of ``table`` (or a sequence of
    (table, queries) steps), by the bound that holds for ``member_randomness`` (module docstring).

    Args:
        table: a certified :class:`~darrm.GammaTable`, or a sequence of (table, queries).
        queries: the number of queries (with one table).
        delta_total: the total δ, in (0, 1).
        member_randomness: "fresh" (PLD of the dominating pairs) or "fixed" (post-processing of
            the members' guarantees, the same for any number of queries).
        value_discretization_interval: the PLD interval; None: start at :data:`DEFAULT_INTERVAL`
            and halve until the [optimistic, pessimistic] bracket is within ``bracket``.
        bracket: relative bracket width targeted (> 0).
        loss_cap: the losses' cap (module docstring; None: :func:`loss_cap_for` per table).

    Returns:
        A :class:`QueryBound` (``epsilon`` is the pessimistic value: an upper bound).

    Raises:
        ParameterError: bad arguments (naming them)."""
    dt = v.open_unit("delta_total", delta_total)
    return _query_bound(table, queries, dt, True, member_randomness, value_discretization_interval, bracket, loss_cap)


def composed_delta(table: GammaTable | Sequence[tuple[GammaTable, int]], queries: int | None = None, *,
                   epsilon_total: float, member_randomness: str,
                   value_discretization_interval: float | None = None, bracket: float = DEFAULT_BRACKET,
                   loss_cap: float | None = None) -> QueryBound:
    """Total δ at ``epsilon_total`` (≥ 0); otherwise as :func:`composed_epsilon`.

    Args:
        table: one certified γ table, or (table, count) pairs for heterogeneous queries.
        queries: the number Q of queries (with one table).
        epsilon_total: the total ε (≥ 0).
        member_randomness: "fresh" or "fixed" (as :func:`composed_epsilon`).
        value_discretization_interval: the PLD's loss grid (None: refined to ``bracket``).
        bracket: the relative width of the optimistic/pessimistic bracket.
        loss_cap: the PLD's largest finite loss (None: the table's own).

    Returns:
        The total δ with its accountant's name and bracket.

    Raises:
        ParameterError: a parameter is invalid (named).
        CertificationError: a table is not certified.
    """
    et = v.epsilon("epsilon_total", epsilon_total, allow_zero=True)
    return _query_bound(table, queries, et, False, member_randomness, value_discretization_interval, bracket,
                        loss_cap)


def _query_bound(table, queries, target: float, want_eps: bool, member_randomness: object,
                 interval: float | None, bracket: float, loss_cap: float | None) -> QueryBound:
    """:func:`composed_epsilon` (``want_eps``: ``target`` is δ_total) or :func:`composed_delta`."""
    mr = check_member_randomness(member_randomness)
    steps = _steps([(table, queries)] if isinstance(table, GammaTable) else table)
    v.positive("bracket", bracket)
    if mr == "fixed":
        return _fixed(steps, **({"delta_total": target} if want_eps else {"epsilon_total": target}))
    h = None if interval is None else v.positive("value_discretization_interval", interval)
    hi, lo, used = _refined(steps, target, want_eps, h, bracket, loss_cap)
    n = sum(q for _, q in steps)
    if want_eps:
        return QueryBound(hi, target, BOUND_FRESH, "fresh", n, lo, used)
    return QueryBound(target, min(1.0, hi), BOUND_FRESH, "fresh", n, lo, used, "delta")


def _fixed(steps: list[tuple[GammaTable, int]], **target: float) -> QueryBound:
    """Fixed members: one post-processing bound for all steps (they must describe the same members)."""
    members = {_exposures(t.params)[0].fixed_members(t.params) for t, _ in steps}
    if len(members) > 1:
        raise ParameterError("table", "with member_randomness='fixed' every table must describe the same members")
    b = fixed_members_bound(steps[0][0], **target)
    return QueryBound(b.epsilon, b.delta, b.bound, "fixed", sum(n for _, n in steps), b.lower, 0.0, b.solved_for)


def record_group_bounds(table: GammaTable, queries: int, *, member_randomness: str,
                        delta_total: float | None = None, epsilon_total: float | None = None,
                        value_discretization_interval: float | None = None, bracket: float = DEFAULT_BRACKET,
                        loss_cap: float | None = None) -> tuple[QueryBound, ...]:
    """Each record group's own total over ``queries`` answers of a record-groups table (module
    docstring, *Record groups*), in the order of ``table.params.groups``.  Give ``delta_total``
    (→ each group's total ε) or ``epsilon_total`` (→ each group's total δ).

    Args:
        table: a certified :class:`~darrm.GammaTable` of :class:`~darrm.ShardGroupParams`.
        queries: the number Q of answered queries.
        member_randomness: "fresh" (the Q-fold PLD composition of group g's own dominating pair,
            :func:`darrm.models.shard_groups.profile.record_group_profiles`) or "fixed" (the exact
            composition of the r_g members a record of group g changes, any Q).
        delta_total: the total δ, in (0, 1).
        epsilon_total: the total ε (≥ 0).
        value_discretization_interval: the PLD interval (None: refined to ``bracket``, as
            :func:`composed_epsilon`).
        bracket: relative bracket width targeted (> 0).
        loss_cap: the losses' cap (None: :func:`loss_cap_for` per group).

    Returns:
        One :class:`QueryBound` per record group; the largest is a total for every record.

    Raises:
        ParameterError: not a record-groups table, neither or both totals, or another bad argument.
    """
    from darrm.models.shard_groups.profile import record_group_profiles

    v.instance("table", table, GammaTable, "a darrm.GammaTable")
    p = table.params
    if not isinstance(p, ShardGroupParams):
        raise ParameterError("table", f"must be a table of record groups on shards (darrm.ShardGroupParams), "
                                      f"not of {p.members!r} members: use composed_epsilon")
    if (delta_total is None) == (epsilon_total is None):
        raise ParameterError("delta_total", "give exactly one of delta_total and epsilon_total")
    want_eps = delta_total is not None
    target = v.open_unit("delta_total", delta_total) if want_eps else \
        v.epsilon("epsilon_total", epsilon_total, allow_zero=True)
    q = v.count("queries", queries)
    v.positive("bracket", bracket)
    if check_member_randomness(member_randomness) == "fixed":
        dt, et = (target, None) if want_eps else (None, target)
        return tuple(replace(_shard_members_bound(p.member, g.copies, BOUND_FIXED_COPIES, dt, et), queries=q)
                     for g in p.groups)
    h = None if value_discretization_interval is None else \
        v.positive("value_discretization_interval", value_discretization_interval)
    out = []
    for prof in record_group_profiles(table):
        hi, lo, used = _refined([(prof, q)], target, want_eps, h, bracket, loss_cap)
        out.append(QueryBound(hi, target, BOUND_FRESH, "fresh", q, lo, used) if want_eps
                   else QueryBound(target, min(1.0, hi), BOUND_FRESH, "fresh", q, lo, used, "delta"))
    return tuple(out)


@dataclass
class QueryAccountant:
    """An Opacus-style accountant of DaRRM queries: ``step(table, n)`` records n answers of a table,
    ``get_epsilon(delta)`` / ``get_delta(eps)`` report the total by the bound that holds for
    ``member_randomness`` (module docstring), ``pld()`` exports the composition (fresh members)
    as a dp_accounting ``PrivacyLossDistribution`` to compose with other mechanisms.

    Composed PLDs are cached per ledger, and the steps of one table are merged, so a check after
    each batch costs one self-composition per table.

    Args:
        member_randomness: "fresh" (the table's own pair, composed by PLD) or "fixed" (post-processing
            of the members' own guarantees).
        value_discretization_interval: the PLD's loss grid (> 0).
        loss_cap: the PLD's largest finite loss (None: the table's own).
    """

    member_randomness: str
    value_discretization_interval: float = DEFAULT_INTERVAL
    loss_cap: float | None = None
    _steps: list[tuple[GammaTable, int]] = field(default_factory=list, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.member_randomness = check_member_randomness(self.member_randomness)
        self.value_discretization_interval = v.positive("value_discretization_interval",
                                                        self.value_discretization_interval)
        if self.loss_cap is not None:
            self.loss_cap = v.positive("loss_cap", self.loss_cap)

    def step(self, table: GammaTable, n: int = 1) -> None:
        """Record ``n`` ≥ 1 answers of ``table`` (profiled once; its pair is cached).

        Args:
            table: the certified γ table that answered.
            n: the number of answers.

        Raises:
            ParameterError: ``table`` is not a GammaTable, ``n`` < 1, or (fixed members) the table's
                members differ from those already recorded or have no post-processing bound.
        """
        v.instance("table", table, GammaTable, "a darrm.GammaTable")
        n = v.count("n", n)
        if self.member_randomness == "fixed":  # refuses other members, or members with no such bound, up front
            _fixed([*self._steps[:1], (table, n)], delta_total=0.5)
        self._steps.append((table, n))

    @property
    def ledger(self) -> list[tuple[str, int]]:
        """(table fingerprint, queries) per recorded step."""
        from .table_identity import table_fingerprint

        return [(table_fingerprint(t), n) for t, n in self._steps]

    @property
    def queries(self) -> int:
        """Answers recorded."""
        return sum(n for _, n in self._steps)

    def _merged(self, extra: Sequence[tuple[GammaTable, int]] = ()) -> list[tuple[GammaTable, int]]:
        from .table_identity import table_fingerprint

        by: dict[str, list] = {}
        for t, n in [*self._steps, *extra]:
            key = table_fingerprint(t)
            if key in by:
                by[key][1] += n
            else:
                by[key] = [t, n]
        return [(t, n) for t, n in by.values()]

    def pld(self, extra: Sequence[tuple[GammaTable, int]] = (), pessimistic: bool = True):
        """The composed dp_accounting PLD of the recorded steps (plus ``extra``), fresh members only.

        Args:
            extra: (table, answers) pairs composed as if recorded, without recording them.
            pessimistic: the pessimistic (upper-bound) discretisation; False gives the optimistic one.

        Raises:
            ParameterError: fixed members (no per-query composition is claimed) or no steps.
        """
        if self.member_randomness != "fresh":
            raise ParameterError("member_randomness", "a per-query PLD exists for fresh members only; fixed "
                                                      "members are bounded by post-processing (get_epsilon)")
        steps = self._merged(extra)
        if not steps:
            raise ParameterError("steps", "no queries recorded")
        from .table_identity import table_fingerprint

        key = (tuple((table_fingerprint(t), n) for t, n in steps), pessimistic)
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = _composed(steps, self.value_discretization_interval, pessimistic, self.loss_cap)
        return self._cache[key]

    def get_epsilon(self, delta: float, extra: Sequence[tuple[GammaTable, int]] = ()) -> float:
        """Total ε at δ_total = ``delta`` (0 with no queries; inf where no finite ε exists).

        Args:
            delta: δ_total, in (0, 1).
            extra: (table, answers) pairs composed as if recorded, without recording them.

        Returns:
            ε_total.

        Raises:
            ParameterError: naming ``delta``, outside (0, 1).
        """
        dt = v.open_unit("delta", delta)
        steps = self._merged(extra)
        if not steps:
            return 0.0
        if self.member_randomness == "fixed":
            return _fixed(steps, delta_total=dt).epsilon
        return float(self.pld(extra).get_epsilon_for_delta(dt))

    def get_delta(self, eps: float, extra: Sequence[tuple[GammaTable, int]] = ()) -> float:
        """Total δ at ε_total = ``eps`` (0 with no queries).

        Args:
            eps: ε_total ≥ 0.
            extra: (table, answers) pairs composed as if recorded, without recording them.

        Returns:
            δ_total, at most 1.

        Raises:
            ParameterError: naming ``eps``, when negative or not finite.
        """
        et = v.epsilon("eps", eps, allow_zero=True)
        steps = self._merged(extra)
        if not steps:
            return 0.0
        if self.member_randomness == "fixed":
            return _fixed(steps, epsilon_total=et).delta
        return min(1.0, float(self.pld(extra).get_delta_for_epsilon(et)))

    def bound_name(self) -> str:
        """The name of the bound :meth:`get_epsilon` reports (:func:`bound_name`).

        Returns:
            The bound's name for the member randomness and the first recorded table.
        """
        return bound_name(self.member_randomness, self._steps[0][0] if self._steps else None)


def bound_name(member_randomness: str, table: GammaTable | None) -> str:
    """The name of the bound reported for ``member_randomness`` and ``table`` (module docstring)."""
    if check_member_randomness(member_randomness) == "fresh":
        return BOUND_FRESH
    return BOUND_FIXED_SHARED if table is None else model_of(table.params).fixed_bound

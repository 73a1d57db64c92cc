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
:func:`record_group_bounds` reports it group by group, and the largest is a total for every record
(each record is in one group, and its loss is its group's).  Every door computes a group's total by
one function, :func:`group_total` (the group's own PLD, its certified μ-GDP and a confirmed per-query
pair, the smallest), so :func:`composed_epsilon` of one such table, the labelling session,
``darrm account queries`` and the designed table's verifier give the same number, the largest group
total (:func:`record_group_totals`; budget groups on one-group shards, :class:`~darrm.WeightedShardParams`,
likewise).  :func:`composed_delta` and a sequence of tables compose the pair every record meets (the
union of the groups' clouds, :func:`darrm.models.profile.privacy_profile`): also valid, but looser
than the largest group total when the groups' worst cases differ.

**Discretisation, both ways, and the closed forms.**  One query's privacy loss L = log(P(j)/Q(j))
under P, with the infinite-loss atom P(0) as dp_accounting's ``infinity_mass``, is put on a grid of
step h (the interval) on each side and composed by dp_accounting (its tail truncation follows the
same side).  δ(ε) = E[(1 − e^{ε − L})₊] + infinite mass is non-decreasing in every loss, also after
convolution, so raising losses gives an upper bound and lowering them a lower bound on the exact
composition of the pairs.  The same argument allows a cap: the pessimistic side sends losses above
``loss_cap`` to +∞ and raises losses below −cap to −cap; the optimistic side lowers losses above the
cap to the cap and drops those below −cap (to −∞).

* Pessimistic: *connect-the-dots* (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi 2022, Algorithm 1)
  on the finite pair, atom by atom (:func:`split_to_grid`): each atom is split into two atoms at
  the grid points around its loss, whose merge it is; the split pair therefore dominates the
  (capped) pair, its hockey-stick curve is the chord of the pair's curve between neighbouring grid
  points (δ is convex in e^ε), and its composition dominates the composition (Zhu, Dong & Wang
  2022, Definition 7 and Theorem 10).  The split preserves each atom's (P, Q) masses, so the error
  is second order: measured ≤ 3·10⁻⁴ relative at Q = 10⁶ and h = 3·10⁻⁴, against up to Q·h for
  rounding every loss up.
  The composition of the split pairs is one FFT per step (:func:`_grid_self_compose`,
  :func:`_grid_compose`); its floating-point error is bounded, not measured: Higham's normwise bound
  on each DFT, the n-fold power's amplification per frequency, the frequencies where |z_k| ≈ 1
  recomputed in 40-digit mpmath, the inverse DFT's bound, and the ℓ1 distance to the exact masses
  carried as ``GridPLD.error`` and added to every δ read (proofs in those functions; tested against
  exact rational convolutions, ``tests/accounting/test_fft_error_bound.py``): about 4·10⁻¹³ at
  Q = 10⁴ of a pure (0.007, 0) profile, where the float64 bound alone would be 10⁻⁶.  The 40-digit
  recomputation runs only where the float64 bound exceeds 10⁻⁶ of the δ at stake
  (:func:`_pessimistic_side`): both are rigorous, and the float64 pass is milliseconds.
* Optimistic: each loss rounded *down* (and the cap as above); a lower bound whose error grows
  like Q·h/2, so the reported bracket [lower, upper] is tight at small Q and wide at large Q.
* Closed forms: every query of a table is (ε′, δ_γ(ε′))-DP for each ε′ of its profile (the pair
  dominates both directions), so Q of them are bounded by Kairouz–Oh–Viswanath's exact homogeneous
  composition of (ε′, δ_γ(ε′)) (:func:`~darrm.accounting.composition.optimal_homogeneous_epsilon`,
  Theorem 3.3), for any Q and in time ~√Q; the minimum over a few ε′ and the PLD is reported (for
  a sequence of tables: the largest ε′ among them at each δ′).  For a pure profile (0.007, 0) at
  Q = 20,000 that is the exact 4.8301.

The interval: :data:`DEFAULT_INTERVAL` (dp_accounting's own), coarsened when the composed PLD would
exceed :data:`MAX_PLD_POINTS` points (estimated from the losses' mean, spread and range before
anything is composed; refused, naming ``queries`` or the interval, beyond :data:`MAX_INTERVAL`),
and halved while the bracket is wider than ``bracket`` and the finer PLD stays within
:data:`REFINE_POINTS` points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.models import model_named, model_of
from darrm.models.disjoint.members import ApproxDP, LocalRR
from darrm.models.profile import privacy_profile
from darrm.numerics.delta import composed_delta as failure_delta
from darrm.privacy.profile import PrivacyProfile
from darrm.table import GammaTable

from .composition import (
    certified_above,
    float_homogeneous_epsilon,
    optimal_homogeneous_delta,
    optimal_homogeneous_epsilon,
)
from .table_identity import per_query_budget, table_fingerprint

__all__ = [
    "BOUND_CLOSED_FORM", "BOUND_FRESH", "BOUND_GDP", "BOUND_GENERIC", "GroupPart", "MEMBER_RANDOMNESS",
    "QueryAccountant", "QueryBound", "UNBOUNDED", "bound_name", "check_interval", "choose_interval",
    "closed_form_bound", "composed_delta", "composed_epsilon", "derived_member_randomness", "exceeds_quickly",
    "fixed_members_bound", "fresh_bound", "gdp_bound", "gdp_composed_mu", "generic_epsilon", "group_closed_form",
    "group_parts", "group_parts_of", "group_total", "has_record_groups", "homogeneous_epsilon", "largest_group_total",
    "loss_cap_for", "loss_distribution", "pld_points", "query_pld", "record_group_bounds", "record_group_totals",
    "recorded_pair", "table_gdp", "table_profile",
]

#: what :meth:`LabellingSession.remaining_queries` returns where ε does not grow with the count
#: (fixed members: the post-processing bound holds for any number of queries)
UNBOUNDED = "unbounded"
#: what the caller must say about the members' randomness across queries
MEMBER_RANDOMNESS = ("fresh", "fixed")
#: the bound's name for fresh members: the PLD of the product of the tables' dominating pairs
BOUND_FRESH = "dominating-pair-pld"
#: the generic bound: Q identical (ε_q, δ_q) queries, Kairouz–Oh–Viswanath optimal homogeneous composition
BOUND_GENERIC = "kairouz-oh-viswanath-optimal"
#: fresh members, when a closed form beats the PLD: Kairouz–Oh–Viswanath's exact homogeneous
#: composition at a point (ε′, δ_γ(ε′)) of the table's own profile
BOUND_CLOSED_FORM = "profile-point-kairouz-oh-viswanath"
#: fresh members, when the tables' certified Gaussian-DP dominance beats the PLD (:func:`gdp_bound`)
BOUND_GDP = "profile-gdp-certificate"
#: the fixed-members bounds' names, as each member model declares them (``MemberModel.fixed_bound``)
BOUND_FIXED_DISJOINT = model_named("disjoint").fixed_bound
BOUND_FIXED_SHARED = model_named("shared").fixed_bound
BOUND_FIXED_GROUPS = model_named("groups").fixed_bound
BOUND_FIXED_COPIES = model_named("shard-groups").fixed_bound

#: default discretisation interval of the PLDs (privacy-loss units): dp_accounting's own default, so
#: the exported PLDs compose with dp_accounting's
DEFAULT_INTERVAL = 1e-4
#: the finest and coarsest intervals accepted (finer: the connect-the-dots differences of δ lose float64
#: precision; coarser: the grid no longer resolves one query's losses)
MIN_INTERVAL = 1e-7
MAX_INTERVAL = 0.1
#: the largest composed PLD computed (points; about 16 bytes each, several copies in the FFT)
MAX_PLD_POINTS = 2**24
#: the optimistic side (the lower end of the bracket) is composed on at most this many points
REFINE_POINTS = 2**18
#: the composed loss's estimated half-width, in standard deviations (dp_accounting truncates at 1e-15)
TAIL_SD = 10.0
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


def derived_member_randomness(table: GammaTable, value: object) -> str:
    """``member_randomness`` for ``table``: the value given, checked; or, when None, the one the
    member model settles — members on disjoint shards with no privacy of their own (or local
    randomised response) can only be accounted per query ("fresh": the randomness is DaRRM's coins,
    drawn per query; "fixed" would give ε = ∞).  Elsewhere None is refused, saying both choices.

    Raises:
        ParameterError: None where the model does not settle it, "fixed" for such members, or a bad value."""
    why = model_of(table.params).fresh_only(table.params)
    if value is None and why is not None:
        return "fresh"
    mr = check_member_randomness(value)
    if mr == "fixed" and why is not None:
        raise ParameterError("member_randomness", f"'fixed' has no bound for {why}; 'fresh' applies: the randomness "
                                                  "of every answer is DaRRM's own coins, drawn per query")
    return mr


#: profiles by table fingerprint (:func:`table_profile`), at most :data:`_PROFILE_CACHE_SIZE`
_PROFILES: dict[str, PrivacyProfile] = {}
_PROFILE_CACHE_SIZE = 32


def table_profile(table: GammaTable) -> PrivacyProfile:
    """The table's :func:`~darrm.models.profile.privacy_profile`, cached by its fingerprint (the
    sha256 of its parameters and exact γ values: equal tables share one profile)."""

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


def check_interval(value: object, name: str = "value_discretization_interval") -> float:
    """A PLD interval in [:data:`MIN_INTERVAL`, :data:`MAX_INTERVAL`] (an interval of 1e-20 would
    overflow the loss grid's integer indices)."""
    return v.real(name, value, MIN_INTERVAL, MAX_INTERVAL)


def split_to_grid(loss: np.ndarray, mass: np.ndarray, interval: float) -> dict[int, float]:
    """Connect-the-dots on a finite pair: each atom of P-mass p at loss ℓ ∈ (a, b) = (k·h, (k+1)·h)
    is split into an atom at a and one at b with p_b = p·e^{b−ℓ}·(e^{ℓ−a} − 1)/(e^{b−a} − 1) and
    p_a = p − p_b, their Q-masses p_a e^{−a} and p_b e^{−b} adding up to the atom's q = p e^{−ℓ}.
    The atom is the merge of the two (a post-processing), so the split pair dominates the pair, and
    its hockey-stick curve is the chord of the atom's hinge q·(e^ℓ − e^ε)₊ between e^a and e^b:
    Doroshenko et al.'s connect-the-dots PLD on the grid, computed without differences of δ.
    Returns {grid index: P-mass}."""
    k = np.floor(loss / interval)
    a = k * interval
    frac = loss - a  # in [0, h)
    with np.errstate(over="ignore", invalid="ignore"):
        up = np.where(frac > 0.0, mass * np.exp(interval - frac) * np.expm1(frac) / math.expm1(interval), 0.0)
    up = np.clip(up, 0.0, mass)
    out: dict[int, float] = {}
    for i, m in zip(k.astype(np.int64).tolist(), (mass - up).tolist(), strict=True):
        out[i] = out.get(i, 0.0) + m
    for i, m in zip((k.astype(np.int64) + 1).tolist(), up.tolist(), strict=True):
        if m > 0.0:
            out[i] = out.get(i, 0.0) + m
    return out


def query_pld(profile: PrivacyProfile | GammaTable, *, value_discretization_interval: float = DEFAULT_INTERVAL,
              pessimistic: bool = True, loss_cap: float | None = None):
    """The dp_accounting ``PrivacyLossDistribution`` of one query (its dominating pair; module
    docstring): pessimistic by connect-the-dots, optimistic by rounding losses down, capped at
    ±``loss_cap`` on the side of ``pessimistic``.  Symmetric: the pair dominates both neighbouring
    directions, under the table's own neighbouring relation (``table.params.neighboring``).

    Args:
        profile: a :class:`~darrm.privacy.profile.PrivacyProfile` or a table (profiled, cached).
        value_discretization_interval: the PLD's loss grid, in [:data:`MIN_INTERVAL`,
            :data:`MAX_INTERVAL`] (default: dp_accounting's, so the result composes with its PLDs).
        pessimistic: an upper bound (the default) or a lower bound.
        loss_cap: the cap on |loss| (> 0); None: :func:`loss_cap_for`.

    Raises:
        ParameterError: bad arguments."""
    from dp_accounting.pld import privacy_loss_distribution as pld

    if isinstance(profile, GammaTable):
        profile = table_profile(profile)
    v.instance("profile", profile, PrivacyProfile, "a PrivacyProfile or a darrm.GammaTable")
    interval = check_interval(value_discretization_interval)
    cap = loss_cap_for(profile) if loss_cap is None else v.real("loss_cap", loss_cap, 0.0, MAX_LOSS_CAP,
                                                                closed="right")
    v.flag("pessimistic", pessimistic)
    loss, mass, inf_mass = loss_distribution(profile, cap, pessimistic)
    if pessimistic:
        rounded = split_to_grid(loss, mass, interval)
    else:
        rounded = {}
        for i, m in zip(np.floor(loss / interval).astype(np.int64).tolist(), mass.tolist(), strict=True):
            rounded[i] = rounded.get(i, 0.0) + m
    return pld.PrivacyLossDistribution.create_from_rounded_probability(
        rounded, inf_mass, interval, pessimistic_estimate=pessimistic)


def _loss_moments(profile: PrivacyProfile, cap: float) -> tuple[float, float, float]:
    """(mean, standard deviation, range) of one query's finite (capped, pessimistic) loss under P:
    what the size of a composed PLD is estimated from."""
    loss, mass, _ = loss_distribution(profile, cap, True)
    if loss.size == 0:
        return 0.0, 0.0, 0.0
    w = mass / max(float(mass.sum()), 1e-300)
    mean = float(np.sum(w * loss))
    sd = math.sqrt(max(0.0, float(np.sum(w * (loss - mean) ** 2))))
    return mean, sd, float(loss.max() - loss.min())


def composed_width(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], loss_cap: float | None = None) -> float:
    """The estimated width (privacy-loss units) of the composed PLD of ``steps``: per step, n·range
    or 2·:data:`TAIL_SD`·√n·sd + range, whichever is smaller (the central limit; dp_accounting
    truncates its tails at 1e-15).  Cheap: no PLD is built."""
    width = 0.0
    for t, n in steps:
        prof = table_profile(t) if isinstance(t, GammaTable) else t
        cap = loss_cap_for(prof) if loss_cap is None else loss_cap
        _, sd, rng = _loss_moments(prof, cap)
        width += min(n * rng, 2.0 * TAIL_SD * math.sqrt(n) * sd + rng)
    return width


def pld_points(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], interval: float,
               loss_cap: float | None = None) -> float:
    """The estimated number of points of the composed PLD of ``steps`` at ``interval``."""
    return composed_width(steps, loss_cap) / interval + 1.0


def choose_interval(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], interval: float | None = None,
                    loss_cap: float | None = None, accuracy: float = DEFAULT_BRACKET) -> float:
    """The interval to compose ``steps`` at: ``interval`` if given (refused, naming it, when the PLD
    would exceed :data:`MAX_PLD_POINTS`); else :data:`DEFAULT_INTERVAL`, coarsened where that grid
    would exceed :data:`REFINE_POINTS` points to the interval whose connect-the-dots error (about
    n·h²/8 for n queries, measured; module docstring) is a quarter of ``accuracy``·ε̂ (ε̂ = n·mean +
    5·√n·sd of one query's loss, a rough scale of the total) or to :data:`REFINE_POINTS` points,
    whichever is finer, and at least to the interval that fits :data:`MAX_PLD_POINTS` (refused,
    naming ``queries``, beyond :data:`MAX_INTERVAL`).

    Raises:
        ParameterError: the composition cannot be computed within :data:`MAX_PLD_POINTS` points."""
    width = composed_width(steps, loss_cap)
    n = sum(q for _, q in steps)
    if interval is not None:
        h = check_interval(interval)
        if width / h + 1.0 > MAX_PLD_POINTS:
            raise ParameterError("value_discretization_interval",
                                 f"{h:g} would need a PLD of about {width / h:.3g} points for {n} queries (at most "
                                 f"{MAX_PLD_POINTS}); use a coarser interval (at least {width / MAX_PLD_POINTS:.3g}) "
                                 f"or leave it to be chosen")
        return h
    scale = 0.0
    var = 0.0
    for t, q in steps:
        prof = table_profile(t) if isinstance(t, GammaTable) else t
        mean, sd, _ = _loss_moments(prof, loss_cap_for(prof) if loss_cap is None else loss_cap)
        scale += q * max(mean, 0.0)
        var += q * sd * sd
    scale += 5.0 * math.sqrt(var)
    coarse = min(MAX_INTERVAL, 0.5 * math.sqrt(accuracy * scale / n), width / (REFINE_POINTS - 1))
    h = max(DEFAULT_INTERVAL, coarse, width / (MAX_PLD_POINTS - 1))
    if width / MAX_INTERVAL + 1.0 > MAX_PLD_POINTS:
        raise ParameterError("queries", f"{n} queries: their composed PLD would need about "
                                        f"{width / MAX_INTERVAL:.3g} points even at the coarsest interval "
                                        f"{MAX_INTERVAL:g} (at most {MAX_PLD_POINTS}); no closed form covers it")
    return h


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
    """The composition of ``steps`` as a dp_accounting PLD (the export; dp_accounting's own FFT)."""
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


#: the mass each composed tail may leave out of the FFT's window (sent to +∞, pessimistic)
TAIL_MASS = 1e-15


#: unit roundoff of float64
_U = 2.0**-53
#: Higham's η for one DFT by scipy's pocketfft (computed twiddle factors accurate to a few ulps): 8u,
#: the generous value :mod:`darrm.accounting.shuffle.binary_rr_exact` uses too
_FFT_ETA = 8.0 * _U


def _dft_relative_error(size: int) -> float:
    """A bound on ‖fl(DFT x) − DFT x‖₂ / ‖DFT x‖₂ for a DFT of ``size`` points (forward or inverse):
    log₂(size)·η/(1 − log₂(size)·η) (Higham, *Accuracy and Stability of Numerical Algorithms*,
    Theorem 24.2), with η = :data:`_FFT_ETA` and the factor 1.01 for the denominator."""
    return 1.01 * math.log2(max(2, size)) * _FFT_ETA


def _spectrum_norm(half: np.ndarray, size: int) -> float:
    """‖y‖₂ of a full (Hermitian) spectrum of ``size`` points from its rfft half ``half`` (real, ≥ 0 entries
    per frequency): the entries k and size − k are conjugates, so each appears twice except k = 0 and,
    for an even size, the Nyquist one."""
    w = np.full(half.size, 2.0)
    w[0] = 1.0
    if size % 2 == 0:
        w[-1] = 1.0
    return float(math.sqrt(float(np.dot(w, half * half))))


def _power(z: np.ndarray, n: int) -> np.ndarray:
    """z**n entrywise by binary powering (n − 1 multiplications' worth of rounding at most: each complex
    product errs by a relative √2·γ₂ ≤ 2.83u, Higham Lemma 3.5, so the result is within a relative
    (1 + 2.83u)^{n−1} − 1 of the exact power of the computed z)."""
    out = np.ones_like(z)
    base = z.copy()
    while n:
        if n & 1:
            out = out * base
        n >>= 1
        if n:
            base = base * base
    return out


def _power_error(mag: np.ndarray, n: int, b1: float) -> np.ndarray:
    """Per frequency, a bound on |ŵ_k − z_k^n| where z_k is the exact DFT entry, z̃_k the computed one
    (|z̃_k − z_k| ≤ b1, ``mag`` = |z̃_k|) and ŵ_k = :func:`_power` (z̃_k, n): by the mean value theorem
    |z̃^n − z^n| ≤ n·max(|z̃|, |z|)^{n−1}·|z̃ − z| ≤ n·(|z̃| + b1)^{n−1}·b1, plus the powering's own
    rounding ((1 + 2.83u)^{n−1} − 1)·|z̃|^n and an underflow allowance of 2^{−1000} per product."""
    with np.errstate(under="ignore"):
        lift = np.exp((n - 1) * np.log1p(np.maximum(mag + b1, 1e-300) - 1.0))
        rounding = math.expm1((n - 1) * math.log1p(2.83 * _U)) * 1.01
        return n * lift * b1 * 1.01 + rounding * lift * (mag + b1) + 2.0 * n.bit_length() * 2.0**-1000


#: most frequencies whose n-th power :func:`_exact_powers` recomputes in high precision, and most
#: terms it sums for them (over the one-query masses)
EXACT_FREQUENCIES = 4096
EXACT_WORK = 1_000_000
#: the float64 bound :func:`_exact_powers` leaves on the frequencies it does not recompute (ℓ2 norm),
#: by default
EXACT_TARGET = 1e-13
#: the share of the δ at stake that the proven FFT error may take (:func:`_pessimistic_side`)
FFT_ERROR_SHARE = 1e-6


def _exact_powers(p: np.ndarray, size: int, n: int, w: np.ndarray, per: np.ndarray,
                  tolerance: float = EXACT_TARGET) -> None:
    """Where the float64 bound ``per`` on |w_k − z_k^n| is largest (the frequencies near 0, and every
    other peak of |z|, where |z_k|^{n−1} ≈ 1 multiplies the DFT's rounding n-fold), recompute
    z_k = Σ_j p_j e^{−2πi jk/size} and z_k^n in mpmath at 40 digits (the input floats are exact there;
    a sparse p is summed over its non-zeros with jk reduced mod size in integers, a dense one by
    Horner's scheme), store them in ``w`` and their bound, 2.2u·|w_k| (one rounding to complex128 of a
    value accurate to ~10^{−35} relative), in ``per``.  At most :data:`EXACT_FREQUENCIES` frequencies
    and :data:`EXACT_WORK` terms, and only until the others' bound is below ``tolerance`` (ℓ2, both
    halves of the spectrum); the others keep their float64 bound."""
    import mpmath

    nz = np.nonzero(p)[0]
    sparse = 4 * nz.size < p.size
    budget = min(EXACT_FREQUENCIES, EXACT_WORK // max(1, nz.size if sparse else p.size))
    order = np.argsort(per)[::-1]
    # only as many as leave the rest's ℓ2 norm (both halves of the spectrum) below the tolerance
    rest = np.sqrt(2.0 * np.cumsum((per[order] ** 2)[::-1])[::-1])
    order = order[:min(budget, int(np.count_nonzero(rest > tolerance)))]
    if order.size == 0:
        return
    with mpmath.workdps(40):
        if sparse:
            js = [int(j) for j in nz]
            cs = [mpmath.mpf(float(p[j])) for j in nz]
            steps = [mpmath.expjpi(mpmath.mpf(-2 * j) / size) for j in js]  # e^{−2πi j/size}
        else:
            coeffs = [mpmath.mpf(float(x)) for x in p[::-1]]
        prev = -2
        twiddles: list = []
        for k in sorted(order.tolist()):
            if sparse:
                # e^{−2πi jk/size}: from k − 1 by one product (consecutive frequencies), else afresh;
                # ≤ EXACT_FREQUENCIES products at 40 digits keep 10^{−35} relative
                if k == prev + 1:
                    twiddles = [t * st for t, st in zip(twiddles, steps, strict=True)]
                else:
                    twiddles = [mpmath.expjpi(mpmath.mpf(-2 * ((j * k) % size)) / size) for j in js]
                prev = k
                acc = mpmath.fsum(c * t for c, t in zip(cs, twiddles, strict=True))
            else:
                omega = mpmath.expjpi(mpmath.mpf(-2 * k) / size)
                acc = mpmath.mpc(0)
                for c in coeffs:
                    acc = acc * omega + c
            val = complex(acc ** n)
            w[k] = val
            per[k] = 2.2 * _U * abs(val) + 1e-300


@dataclass(frozen=True)
class GridPLD:
    """A pessimistic privacy-loss distribution on the grid ``interval``·(lower + i): P-masses
    ``probs``, the infinite-loss mass, and ``error``, a bound on the ℓ1 distance between ``probs`` and
    the exact masses they stand for (the floating-point error of the FFTs that composed them,
    :func:`_grid_self_compose`, :func:`_grid_compose`); what :func:`_grid_composed` returns.

    Its δ(ε) adds ``error`` (each exact mass enters δ with a weight in [0, 1], so the exact δ is
    within ``error`` of the sum over the computed masses) and the dot product's own rounding (a
    relative γ_W for W terms, Higham Lemma 3.1): an upper bound on the exact δ of the pair whose
    composition the masses stand for, and so is every ε(δ) read from it."""

    lower: int
    probs: np.ndarray
    infinity_mass: float
    interval: float
    error: float = 0.0

    def get_delta_for_epsilon(self, eps: float) -> float:
        """δ(ε) = infinity mass + Σ_{L > ε} p·(1 − e^{ε − L}), plus ``error`` and the sum's rounding."""
        losses = (self.lower + np.arange(self.probs.size)) * self.interval
        i = int(np.searchsorted(losses, eps, side="right"))
        terms = int(self.probs.size - i) + 2
        body = float(np.dot(-np.expm1(eps - losses[i:]), self.probs[i:]))
        # each weight 1 − e^{ε−L} errs by a few ulps relative (expm1), and the sum by γ_W: (W + 4)·u·1.01
        out = (self.infinity_mass + body) * (1.0 + 1.01 * (terms + 4) * _U) + self.error
        return float(min(1.0, out))


def _chernoff_window(logp: np.ndarray, n: int) -> tuple[int, int, float]:
    """(l, u, bound): offsets such that the sum S of n draws from the sub-probability vector
    e^{logp} (offset i = 0..len−1) lies below l or above u with mass at most :data:`TAIL_MASS`
    each (Chernoff: P(S ≥ u) ≤ e^{nΛ(λ) − λu} with Λ the log moment generating function, minimised
    over a grid of λ > 0; the same with −λ below), and the upper bound achieved."""
    from scipy.special import logsumexp as lse

    span = logp.size
    nz = np.isfinite(logp)  # only the atoms enter the moment generating function
    i, logp = np.nonzero(nz)[0].astype(np.float64), logp[nz]
    logm = float(lse(logp))
    lam = np.geomspace(1e-12, 50.0, 600)
    lam_up = lse(logp[None, :] + lam[:, None] * i[None, :], axis=1) - logm
    lam_dn = lse(logp[None, :] - lam[:, None] * i[None, :], axis=1) - logm
    log_tail = math.log(TAIL_MASS)
    u_all = (n * lam_up - log_tail) / lam
    l_all = (log_tail - n * lam_dn) / lam
    u = min(float(np.min(u_all)), float(n * (span - 1)))
    lo = max(float(np.max(l_all)), 0.0)
    return int(math.floor(lo)), int(math.ceil(u)), TAIL_MASS


def _grid_self_compose(lower: int, probs: np.ndarray, inf: float, h: float, n: int,
                       tolerance: float = EXACT_TARGET) -> GridPLD:
    """n-fold composition by one FFT on a window chosen by :func:`_chernoff_window`, pessimistic:
    the FFT is cyclic, so the mass outside the window wraps into it (more mass: δ only grows), and
    the upper tail, whose wrapped copy lands at *lower* losses, is also counted as infinite loss.

    Floating-point error (``GridPLD.error``, proof).  With M the FFT size, p the masses and z = DFT p
    (exact), the computed z̃ satisfies ‖z̃ − z‖₂ ≤ b1 := r·‖z‖₂ = r·√M·‖p‖₂ (r :=
    :func:`_dft_relative_error`; Parseval), so |z̃_k − z_k| ≤ b1 for every k.  The computed power
    ŵ = :func:`_power` (z̃, n) is within e_k := :func:`_power_error` of z_k^n.  The exact n-fold cyclic
    convolution is c = DFT⁻¹(z^n); the computed one is ĉ = fl(DFT⁻¹ ŵ) with
    ‖ĉ − DFT⁻¹ŵ‖₂ ≤ r·‖ŵ‖₂/√M.  Hence, for the W ≤ M masses kept,
    ‖ĉ − c‖₁ ≤ √W·‖ĉ − c‖₂ ≤ √M·(‖ŵ − z^n‖₂/√M + r·‖ŵ‖₂/√M) = ‖e‖₂ + r·‖ŵ‖₂, and clipping negative
    values to 0 moves no mass away from the exact (non-negative) ones.  ∎"""
    from scipy import fft

    if n == 1:
        return GridPLD(lower, probs, inf, h)
    nz = np.nonzero(probs > 0)[0]
    first, last = int(nz[0]), int(nz[-1])
    p = probs[first:last + 1]
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    lo, hi, tail = _chernoff_window(logp, n)
    size = fft.next_fast_len(max(hi - lo + 1, p.size), real=True)
    r = _dft_relative_error(size)
    z = fft.rfft(p, size)
    b1 = r * math.sqrt(size) * float(np.linalg.norm(p)) * 1.01
    w = _power(z, n)
    per = _power_error(np.abs(z), n, b1)
    _exact_powers(p, size, n, w, per, tolerance)
    err = _spectrum_norm(per, size) + r * _spectrum_norm(np.abs(w), size) * 1.01
    out = fft.irfft(w, size)
    out = np.roll(out, -(lo % size))[:hi - lo + 1]
    out = np.clip(out, 0.0, None)
    inf_n = -math.expm1(n * math.log1p(-inf)) if inf < 1.0 else 1.0
    return GridPLD(n * (lower + first) + lo, out, min(1.0, inf_n + tail), h, err)


def _grid_compose(a: GridPLD, b: GridPLD) -> GridPLD:
    """The composition of two grid PLDs (one full linear convolution by FFT: no truncation).

    Error (``GridPLD.error``): with exact masses a, b within ℓ1 distances E_a, E_b of the computed
    ã, b̃, ‖ã⊛b̃ − a⊛b‖₁ ≤ E_a·‖b̃‖₁ + (‖ã‖₁ + E_a)·E_b; the FFT product adds, as in
    :func:`_grid_self_compose` (n = 1 per factor), ‖ŵ − âb̂‖₂ + r·‖ŵ‖₂ with |â_k − (DFT ã)_k| ≤ b_a,
    |b̂_k − (DFT b̃)_k| ≤ b_b and |ŵ_k − â_k b̂_k| ≤ 2.83u·|â_k||b̂_k|, so
    |ŵ_k − (DFT ã)_k(DFT b̃)_k| ≤ b_a·(|b̂_k| + b_b) + b_b·|â_k| + 2.83u·|â_k||b̂_k| (all ×1.01).  ∎"""
    from scipy import fft

    size = fft.next_fast_len(a.probs.size + b.probs.size - 1, real=True)
    r = _dft_relative_error(size)
    za, zb = fft.rfft(a.probs, size), fft.rfft(b.probs, size)
    ba = r * math.sqrt(size) * float(np.linalg.norm(a.probs)) * 1.01
    bb = r * math.sqrt(size) * float(np.linalg.norm(b.probs)) * 1.01
    w = za * zb
    ma, mb = np.abs(za), np.abs(zb)
    per = (ba * (mb + bb) + bb * ma + 2.83 * _U * ma * mb) * 1.01
    own = _spectrum_norm(per, size) + r * _spectrum_norm(np.abs(w), size) * 1.01
    probs = np.clip(fft.irfft(w, size)[: a.probs.size + b.probs.size - 1], 0.0, None)
    sa = float(np.sum(a.probs)) * (1.0 + a.probs.size * _U)  # ‖ã‖₁, rounded up (non-negative masses)
    sb = float(np.sum(b.probs)) * (1.0 + b.probs.size * _U)
    carried = a.error * sb + (sa + a.error) * b.error
    inf = 1.0 - (1.0 - a.infinity_mass) * (1.0 - b.infinity_mass)
    return GridPLD(a.lower + b.lower, probs, inf, a.interval, own + carried)


def _grid_composed(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], interval: float,
                   loss_cap: float | None, tolerance: float = EXACT_TARGET) -> GridPLD:
    """The pessimistic composition of ``steps`` on the grid (connect-the-dots per query, one FFT
    per step): its cost follows the composed PLD's width, √n, not n.  ``tolerance``: the ℓ2 error
    each step's power may keep in float64 (:func:`_pessimistic_side` chooses it), shared between the steps."""
    total: GridPLD | None = None
    tolerance = tolerance / max(1, len(steps))
    for t, n in steps:
        prof = table_profile(t) if isinstance(t, GammaTable) else t
        cap = loss_cap_for(prof) if loss_cap is None else loss_cap
        loss, mass, inf_mass = loss_distribution(prof, cap, True)
        grid = split_to_grid(loss, mass, interval) if loss.size else {0: 0.0}
        lo = min(grid)
        arr = np.zeros(max(grid) - lo + 1)
        for k, m in grid.items():
            arr[k - lo] += m
        if not np.any(arr > 0):
            arr[0] = 0.0
            part = GridPLD(lo, arr, -math.expm1(n * math.log1p(-min(inf_mass, 1.0 - 1e-16))), interval)
        else:
            part = _grid_self_compose(lo, arr, inf_mass, interval, n, tolerance)
        total = part if total is None else _grid_compose(total, part)
    assert total is not None
    return total


#: Berry–Esseen constant for sums of independent, non-identically distributed terms (Shevtsova 2010)
BERRY_ESSEEN = 0.56


def exceeds_quickly(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], epsilon: float, delta: float,
                    member_randomness: str = "fresh") -> bool:
    """True when a cheap *lower* bound already shows that ``steps`` (fresh members) spend more than
    ``epsilon`` at ``delta``: what refuses a huge batch at once, in memory of the order of one
    query's pair.  Fixed members: always False (their bound does not grow with the count).

    Proof: with S the composed loss (each query's finite loss under P, independent; the infinite-loss
    atoms only add to δ), δ(ε) ≥ E[(1 − e^{ε−S})₊]·Π(1 − y0)^n ≥ (1 − e^{−t})·P(S > ε + t)·Π(1 − y0)^n
    for t = 1, and by Berry–Esseen P(S > x) ≥ 1 − Φ((x − ΣnE L)/s) − C·Σnρ/s³ with s² = Σn Var L,
    ρ = E|L − E L|³, C = :data:`BERRY_ESSEEN`.  If that exceeds ``delta``, the total ε does too.
    Also δ(ε) ≥ 1 − Π(1 − y0)^n, the infinite-loss mass, at every ε.  (The pessimistic cap does not
    enter: the true pair's losses are used.)"""
    from scipy.stats import norm

    if member_randomness != "fresh":
        return False
    mean = var = rho = 0.0
    log_keep = 0.0
    for t, n in steps:
        prof = table_profile(t) if isinstance(t, GammaTable) else t
        P, Q = prof.pair()
        ok = (P > 0) & (Q > 0)
        if not ok.any():
            return False
        w = P[ok] / float(P[ok].sum())
        loss = np.log(P[ok]) - np.log(Q[ok])
        m = float(np.sum(w * loss))
        mean += n * m
        var += n * float(np.sum(w * (loss - m) ** 2))
        rho += n * float(np.sum(w * np.abs(loss - m) ** 3))
        log_keep += n * math.log(float(P[ok].sum()))
    if -math.expm1(log_keep) > delta:  # the infinite-loss atoms alone: δ ≥ 1 − Π(1 − y0)^n at any ε
        return True
    if var <= 0.0:
        return False
    sd = math.sqrt(var)
    tail = float(norm.sf((epsilon + 1.0 - mean) / sd)) - BERRY_ESSEEN * rho / sd**3
    return tail > 0.0 and (1.0 - math.exp(-1.0)) * tail * math.exp(log_keep) > delta


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

    eps_q, delta_q = per_query_budget(table)
    return homogeneous_epsilon(eps_q, delta_q, v.count("queries", queries), v.open_unit("delta_total", delta_total))


def homogeneous_epsilon(eps_q: float, delta_q: float, queries: int, delta_total: float) -> float:
    """ε_total of ``queries`` (ε_q, δ_q)-DP queries by Kairouz–Oh–Viswanath's exact homogeneous
    composition; inf where δ_q ≥ 1 or δ_total < 1 − (1 − δ_q)^Q (validated arguments)."""
    if delta_q >= 1.0 or delta_total < failure_delta(delta_q, queries):
        return math.inf
    return optimal_homogeneous_epsilon(eps_q, delta_q, queries, delta_total)


def _hockey_arrays(pld) -> list[tuple[np.ndarray, np.ndarray, float]] | None:
    """(losses, P-masses, infinity mass) of each direction of a PLD (a :class:`GridPLD` or a
    dp_accounting one: both directions when asymmetric); None where dp_accounting keeps its arrays
    elsewhere than 0.4–0.6 do."""
    if isinstance(pld, GridPLD):
        return [((pld.lower + np.arange(pld.probs.size)) * pld.interval, pld.probs, pld.infinity_mass)]
    try:
        pmfs = [pld._pmf_remove] if pld._symmetric else [pld._pmf_remove, pld._pmf_add]
        arrays = []
        for pmf in pmfs:
            dense = pmf.to_dense_pmf()
            probs = np.asarray(dense._probs, dtype=np.float64)
            losses = (dense._lower_loss + np.arange(probs.size)) * dense._discretization
            arrays.append((losses, probs, float(dense._infinity_mass)))
    except AttributeError:  # pragma: no cover - another dp_accounting layout
        return None
    return arrays


def _hockey_stick(pld, arrays: list[tuple[np.ndarray, np.ndarray, float]] | None = None):
    """δ(ε) of a PLD (a dp_accounting one or a :class:`GridPLD`) as a function, evaluated in one
    numpy pass over its losses above ε (the formula of dp_accounting's ``get_delta_for_epsilon``:
    infinity mass + Σ_{L > ε} p·(1 − e^{ε − L}), the larger of both directions for an asymmetric
    PLD; a GridPLD's own, with its proven error), from ``arrays`` (:func:`_hockey_arrays`) when given.
    Falls back on the public ``get_delta_for_epsilon`` where the PLD's arrays are not where
    dp_accounting 0.4–0.6 keep them."""
    if isinstance(pld, GridPLD):
        return pld.get_delta_for_epsilon
    arrays = _hockey_arrays(pld) if arrays is None else arrays
    if arrays is None:  # pragma: no cover - another dp_accounting layout
        return lambda e: float(pld.get_delta_for_epsilon(e))

    def delta(e: float) -> float:
        out = 0.0
        for losses, probs, inf in arrays:
            i = int(np.searchsorted(losses, e, side="right"))
            out = max(out, inf + float(np.dot(-np.expm1(e - losses[i:]), probs[i:])))
        return out

    return delta


def _segment_root(losses: np.ndarray, probs: np.ndarray, inf: float, delta: float) -> float:
    """The ε ≥ 0 at which inf + Σ_{L > ε} p·(1 − e^{ε − L}) = ``delta``, in float64 (inf where even
    ε = the largest loss leaves more than ``delta``): on ε ∈ [L_{k−1}, L_k) the sum is
    inf + S_k − e^ε·T_k with S_k = Σ_{j ≥ k} p_j and T_k = Σ_{j ≥ k} p_j e^{−L_j} (suffix sums), non-increasing
    in ε, so the first loss L_k at which it is ≤ ``delta`` gives e^ε = (inf + S_k − delta)/T_k.  Two
    passes over the losses; the caller checks the result with the rigorous δ(ε)."""
    keep = probs > 0.0
    losses, probs = losses[keep], probs[keep]
    if losses.size == 0:
        return 0.0 if inf <= delta else math.inf
    with np.errstate(over="ignore"):
        S = np.cumsum(probs[::-1])[::-1]
        T = np.cumsum((probs * np.exp(-losses))[::-1])[::-1]
        # δ at each loss L_k: the atoms above it, S_{k+1} − e^{L_k}·T_{k+1}
        above = np.concatenate([S[1:], [0.0]]) - np.exp(losses) * np.concatenate([T[1:], [0.0]])
    at = inf + np.maximum(above, 0.0)
    k = int(np.argmax(at <= delta)) if np.any(at <= delta) else -1
    if k < 0:
        return math.inf
    if T[k] <= 0.0:
        return max(0.0, float(losses[k]))
    rest = inf + float(S[k]) - delta
    eps = math.log(rest / float(T[k])) if rest > 0.0 else -math.inf
    lo = float(losses[k - 1]) if k > 0 else -math.inf
    return max(0.0, min(float(losses[k]), max(lo, eps)))


def epsilon_for_delta(pld, delta: float, *, upper: bool = True) -> float:
    """ε at which the PLD's hockey-stick divergence is ``delta`` (dp_accounting's own
    ``get_epsilon_for_delta`` walks the losses in a Python loop: seconds on a PLD of 10⁶ points).
    ``upper``: the returned ε satisfies δ(ε) ≤ ``delta`` (an upper bound on the exact ε of that PLD);
    else δ(ε) ≥ ``delta`` or ε = 0 (a lower bound).  Inf where no finite ε ≤ 700 reaches ``delta``.

    The root is solved on its segment between two losses from suffix sums (:func:`_segment_root`:
    two passes over the PLD), then checked with the rigorous δ(ε) (a :class:`GridPLD`'s carries its
    proven floating-point error) and moved outward by a relative 10⁻¹², ×4 per step, until the check
    holds, then bisected 4 times against the last point that failed (a few passes in all); where that
    fails within 20 steps (or the arrays are not readable) a bisection to a relative
    10⁻¹² decides, as before: the check, not the float solve, carries the claim."""
    arrays = _hockey_arrays(pld)
    f = _hockey_stick(pld, arrays)
    if f(v.EPS_MAX) > delta:
        return math.inf
    if f(0.0) <= delta:
        return 0.0
    if arrays is not None:
        aim = delta
        if isinstance(pld, GridPLD):  # its δ adds the proven error and the sum's rounding: aim below them
            aim = (delta - pld.error) / (1.0 + 1.01 * (pld.probs.size + 6) * _U)
        guess = max(_segment_root(losses, probs, inf, aim) for losses, probs, inf in arrays) if aim > 0 else 0.0

        def ok(e: float) -> bool:
            return f(e) <= delta if upper else f(e) > delta

        if 0.0 < guess < v.EPS_MAX:
            bad, step = guess, 1e-12 * guess + 1e-300
            for _ in range(20):
                e = min(v.EPS_MAX, guess + step) if upper else max(0.0, guess - step)
                if ok(e):
                    for _ in range(4):  # between the last point that failed and e
                        mid = 0.5 * (bad + e)
                        bad, e = (bad, mid) if ok(mid) else (mid, e)
                    return e
                bad, step = e, 4.0 * step
    lo, hi = 0.0, 1.0
    while f(hi) > delta:
        lo, hi = hi, min(2.0 * hi, v.EPS_MAX)
    while hi - lo > 1e-12 * hi:
        mid = 0.5 * (lo + hi)
        if f(mid) > delta:
            lo = mid
        else:
            hi = mid
    return hi if upper else lo


def _side(pld, target: float, want_eps: bool, upper: bool) -> float:
    """ε or δ of ``pld`` on the side ``upper`` (a :class:`GridPLD`'s δ already carries its proven
    floating-point error, ``GridPLD.error``)."""
    if want_eps:
        return epsilon_for_delta(pld, target, upper=upper)
    d = float(pld.get_delta_for_epsilon(target))
    return d if upper else max(0.0, d)


def _refined(steps, target: float, want_eps: bool, interval: float | None, bracket: float,
             loss_cap: float | None) -> tuple[float, float, float]:
    """(pessimistic, optimistic, interval): the pessimistic side composed at :func:`choose_interval`'s
    interval (connect-the-dots: second-order error), the optimistic side at its own interval, fine
    enough that its drift (at most n·h for n queries) is ``bracket`` of the pessimistic value, but
    never finer than :data:`REFINE_POINTS` points allow (nor than ``interval`` when given).  Where
    even that drift would exceed the pessimistic value, no lower bound is computed (``lower`` 0)."""
    n = sum(q for _, q in steps)
    h = choose_interval(steps, interval, loss_cap, bracket)
    hi = _pessimistic_side(steps, h, loss_cap, target, want_eps)
    if not math.isfinite(hi) or hi == 0.0:
        return hi, hi, h
    width = composed_width(steps, loss_cap)
    h_lo = interval if interval is not None else \
        max(MIN_INTERVAL, width / (REFINE_POINTS - 1), min(h, bracket * hi / n if want_eps else h))
    if want_eps and n * h_lo > hi:
        return hi, 0.0, h
    lo = _side(_composed(steps, h_lo, False, loss_cap), target, want_eps, False)
    return hi, min(lo, hi), h


def _pessimistic_side(steps, h: float, loss_cap: float | None, target: float, want_eps: bool) -> float:
    """ε at δ = ``target`` (or δ at ε = ``target``) of the pessimistic grid composition, its FFT error
    held to :data:`FFT_ERROR_SHARE` of the δ at stake (``target``, or the δ found; never below
    :data:`EXACT_TARGET`).  First in float64 alone; only where that proven error exceeds the share are
    the frequencies that carry it recomputed in 40 digits (:func:`_exact_powers`, seconds per
    composition).  Either result is rigorous (``GridPLD.error`` enters δ); the share only decides how
    much tightness the float64 error may cost: an error of 10⁻⁶·δ moves ε(δ) as δ → δ(1 − 10⁻⁶) would.
    Where δ is the target its share is known in advance, so one pass suffices."""
    if want_eps:
        return _side(_grid_composed(steps, h, loss_cap, max(EXACT_TARGET, FFT_ERROR_SHARE * target)), target,
                     True, True)
    grid = _grid_composed(steps, h, loss_cap, math.inf)
    out = _side(grid, target, want_eps, True)
    aim = max(EXACT_TARGET, FFT_ERROR_SHARE * (out - grid.error))
    if grid.error > aim:
        out = _side(_grid_composed(steps, h, loss_cap, aim), target, want_eps, True)
    return out


def _profiles(steps) -> list[PrivacyProfile]:
    return [table_profile(t) if isinstance(t, GammaTable) else t for t, _ in steps]


#: certified GDP parameters by table fingerprint (:func:`table_gdp`), at most :data:`_PROFILE_CACHE_SIZE`
_GDP: dict[str, float] = {}


def table_gdp(table: GammaTable) -> float:
    """The table's certified GDP parameter μ (:func:`darrm.budget.cloud.table_gdp_mu`: its member
    model's worst configurations, every point under the μ-Gaussian trade-off curve, checked in mpmath;
    inf where the model has no such cloud); cached by the table's fingerprint.  Read from γ and the
    parameters only: what a table's info records never enters."""
    from darrm.budget.cloud import table_gdp_mu

    key = table_fingerprint(table)
    if key not in _GDP:
        if len(_GDP) >= _PROFILE_CACHE_SIZE:
            _GDP.pop(next(iter(_GDP)))
        _GDP[key] = table_gdp_mu(table.gamma, table.params)
    return _GDP[key]


def gdp_composed_mu(terms: Sequence[tuple[float, int]]) -> float:
    """μ = √(Σ n_i μ_i²) of n_i queries each μ_i-GDP (Dong, Roth & Su 2022, Corollary 3.3: μ_i-GDP
    mechanisms compose adaptively to μ-GDP), rounded up (4 ulp); inf if any μ_i is."""
    if any(not math.isfinite(mu) for mu, _ in terms):
        return math.inf
    return math.sqrt(math.fsum(n * mu * mu for mu, n in terms)) * (1.0 + 4.0 * _U)


def _gdp_delta_upper(mu: float, eps: float) -> float:
    """δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Dong, Roth & Su, Corollary 2.13) at 40 digits,
    rounded up to a float (1 for μ = inf, 0 for μ = 0)."""
    from darrm.budget.targets import gdp_delta_exact

    if mu == math.inf:
        return 1.0
    if mu == 0.0:
        return 0.0
    val = gdp_delta_exact(mu, eps)
    return min(1.0, max(0.0, float(val)) * (1.0 + 1e-14) + 1e-300)


def gdp_bound(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], target: float, want_eps: bool) -> float:
    """The composition of ``steps`` by their tables' certified Gaussian-DP dominance
    (:func:`table_gdp`): ε_total at δ_total = ``target`` (``want_eps``) or δ_total at ε_total =
    ``target``; inf (or 1) where a step has no finite μ (a bare profile has none).  Valid at any count
    and δ, in time independent of the count.

    **Claim.**  A table whose every worst configuration lies under the μ-Gaussian trade-off curve
    answers each query μ-GDP (:func:`darrm.budget.targets.certified_gdp_mu`, with its proof), also
    given the past answers (fresh member randomness: the configurations cover every member
    behaviour); n_i queries of μ_i-GDP tables compose adaptively to √(Σ n_i μ_i²)-GDP (Dong, Roth &
    Su 2022, Corollary 3.3), whose δ(ε) is their Corollary 2.13.  ε is
    :func:`darrm.budget.targets.gdp_epsilon` (decided at 40 digits), δ rounded up.  ∎"""
    from darrm.budget.targets import gdp_epsilon

    tables = [(t, n) for t, n in steps if isinstance(t, GammaTable)]
    if len(tables) < len(steps):
        return math.inf if want_eps else 1.0
    mu = gdp_composed_mu([(table_gdp(t), n) for t, n in tables])
    if not want_eps:
        return _gdp_delta_upper(mu, target)
    if not math.isfinite(mu):
        return math.inf
    return 0.0 if mu == 0.0 else gdp_epsilon(mu, target)


def closed_form_bound(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], target: float,
                      want_eps: bool) -> float:
    """The smallest closed form of ``steps`` (:func:`closed_forms`): ε_total at δ_total = ``target``
    (``want_eps``) or δ_total at ε_total = ``target``; inf (or 1) where none applies."""
    return closed_forms(steps, target, want_eps)[0]


def closed_forms(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], target: float,
                 want_eps: bool) -> tuple[float, str]:
    """(the smallest closed form, its bound's name): the tables' certified Gaussian-DP dominance
    (:func:`gdp_bound`, :data:`BOUND_GDP`; the certificate a total-budget design of members on disjoint
    shards or in groups charges) and the Kairouz–Oh–Viswanath points (:func:`_kov_bound`,
    :data:`BOUND_CLOSED_FORM`).  Both are computed from the tables themselves (γ, parameters, exact
    profiles), never from what a table's info records, so the same table gives the same total at every
    door, and an edited record cannot lower it."""
    kov = _kov_bound(steps, target, want_eps)
    gdp = gdp_bound(steps, target, want_eps)
    return (gdp, BOUND_GDP) if gdp < kov else (kov, BOUND_CLOSED_FORM)


def confirmed_pairs(table: GammaTable) -> list[tuple[float, float]]:
    """The per-query pair (ε_q, δ_q) a one-part total-budget design records (``info["group_budgets"]``,
    its generic charge), kept only where the table's own profile confirms it: δ_γ(ε_q) ≤ δ_q
    (:meth:`~darrm.privacy.profile.PrivacyProfile.delta`, rounded up), or its member model's certificate
    does (:func:`darrm.budget.cloud.pair_certified`, what the verifier also accepts).  Then every query is
    (ε_q, δ_q)-DP whatever the record says, and Kairouz–Oh–Viswanath's composition of that pair is a
    total at any count and δ; an unconfirmed or malformed pair is not used."""
    gb = table.info.get("group_budgets")
    parts = gb.get("groups") if isinstance(gb, dict) else None
    if not isinstance(parts, list) or len(parts) != 1:
        return []
    pair = recorded_pair(parts[0])
    if pair is None:
        return []
    eq, dq = pair
    key = (table_fingerprint(table), eq, dq)
    if key not in _CONFIRMED:
        from darrm.budget.cloud import pair_certified

        if len(_CONFIRMED) >= _PROFILE_CACHE_SIZE:
            _CONFIRMED.pop(next(iter(_CONFIRMED)))
        _CONFIRMED[key] = float(table_profile(table).delta(eq)) <= dq or \
            pair_certified(table.gamma, table.params, eq, dq)
    return [(eq, dq)] if _CONFIRMED[key] else []


#: confirmations of recorded per-query pairs by (table fingerprint, ε_q, δ_q) (:func:`confirmed_pairs`)
_CONFIRMED: dict[tuple[str, float, float], bool] = {}


def _kov_bound(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], target: float, want_eps: bool) -> float:
    """The smallest Kairouz–Oh–Viswanath exact homogeneous composition over a few points
    (ε′, δ′) of the steps' profiles (module docstring, *closed forms*); inf (or 1) where none applies.
    Each query of every step is (ε′, δ′)-DP with ε′ the largest of the profiles' ε at δ′ (for a
    table, also its per-query budget (ε_q, δ_q), and for one table the recorded per-query pair its
    profile confirms, :func:`confirmed_pairs`); its cost grows like √Q, not Q."""

    n = sum(q for _, q in steps)
    profs = _profiles(steps)
    y0 = max(p.infinite_loss_mass for p in profs)
    floor = y0 * (1.0 + 1e-9) + 1e-300  # δ′ just above every infinite-loss mass: ε′ is the largest loss
    deltas = [floor] + [d for d in ((target if want_eps else 1e-3) / (n * 10.0**k) for k in (1, 2, 3, 6))
                        if d > floor]
    points = [(max(p.epsilon(d) for p in profs), d) for d in deltas if d < 1.0]
    tables = [t for t, _ in steps if isinstance(t, GammaTable)]
    if len(tables) == len(steps):
        budgets = [per_query_budget(t) for t in tables]
        points.append((max(e for e, _ in budgets), max(d for _, d in budgets)))
        if len(tables) == 1:
            points += confirmed_pairs(tables[0])
    best = math.inf if want_eps else 1.0
    winner: tuple[float, float] | None = None
    for e, d in points:
        if not (0.0 < e <= v.EPS_MAX) or not 0.0 <= d < 1.0:
            continue
        try:
            if want_eps:
                if target >= failure_delta(d, n):
                    root = float_homogeneous_epsilon(e, d, n, target)
                    if root < best:
                        best, winner = root, (e, d)
            else:
                best = min(best, optimal_homogeneous_delta(e, d, n, target))
        except ParameterError:  # too many compositions for the window of the exact sum
            continue
    if winner is not None:  # only the smallest float root is decided exactly (never below the true one)
        try:
            best = certified_above(winner[0], winner[1], n, target, best)
        except ParameterError:
            return math.inf
    return best


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
    return fresh_bound(steps, target, want_eps, interval=interval, bracket=bracket, loss_cap=loss_cap)


def fresh_bound(steps: Sequence[tuple[GammaTable | PrivacyProfile, int]], target: float, want_eps: bool, *,
                interval: float | None = None, bracket: float = DEFAULT_BRACKET,
                loss_cap: float | None = None) -> QueryBound:
    """The fresh-members total of ``steps`` ((table or profile, queries) pairs): the smaller of the
    PLD composition (:func:`_refined`) and :func:`closed_form_bound`; ε at δ_total = ``target``
    (``want_eps``) or δ at ε_total = ``target``.  The one composition path of the package: the
    session, ``darrm account queries``, :func:`composed_epsilon` and the total-budget designer
    all end here.  Where the PLD would be too large (:func:`choose_interval`) the closed form alone
    is reported (``lower`` 0), and where neither applies the ParameterError names the option.

    Raises:
        ParameterError: the composition cannot be computed (naming ``queries`` or the interval)."""
    n = sum(q for _, q in steps)
    if loss_cap is not None:
        loss_cap = v.real("loss_cap", loss_cap, 0.0, MAX_LOSS_CAP, closed="right")
    if want_eps and len(steps) == 1 and isinstance(steps[0][0], GammaTable):
        per = record_group_totals(steps[0][0], n, target, interval=interval, bracket=bracket, loss_cap=loss_cap)
        if per is not None:  # each record's loss is its own group's: the largest group total is every record's
            return largest_group_total(per)
    if interval is not None:
        choose_interval(steps, interval, loss_cap, bracket)  # a given interval that cannot work: refused first
    try:
        hi, lo, used = _refined(steps, target, want_eps, interval, bracket, loss_cap)
    except ParameterError:
        closed = closed_forms(steps, target, want_eps)
        if closed[0] == math.inf if want_eps else closed[0] >= 1.0:
            raise
        hi, lo, used = math.inf, 0.0, 0.0
    else:
        closed = closed_forms(steps, target, want_eps)
    name = BOUND_FRESH
    if closed[0] < hi:
        hi, name = closed
    lo = min(lo, hi)
    if want_eps:
        return QueryBound(hi, target, name, "fresh", n, lo, used)
    return QueryBound(target, min(1.0, hi), name, "fresh", n, lo, used, "delta")


@dataclass(frozen=True)
class GroupPart:
    """One record group of a table, as its fresh-members total is computed (:func:`group_total`).

    Attributes:
        profile: the group's exact per-query profile, rounded outward (its records' dominating pair).
        mu: the group's certified Gaussian-DP parameter (:func:`darrm.budget.cloud.points_gdp_mu`; inf: none).
        pair: a per-query pair (ε_q, δ_q) that the group's profile or the model's certificate confirms
            (None: none recorded, or not confirmed).
    """

    profile: PrivacyProfile
    mu: float
    pair: tuple[float, float] | None = None


def group_closed_form(part: GroupPart, queries: int, delta_total: float) -> tuple[float, str]:
    """(the smaller of :func:`group_total`'s closed forms (2) and (3), its bound's name); inf where neither
    applies."""
    from darrm.budget.targets import gdp_epsilon

    closed, name = math.inf, BOUND_GDP
    if math.isfinite(part.mu):
        closed = 0.0 if part.mu == 0.0 else gdp_epsilon(gdp_composed_mu([(part.mu, queries)]), delta_total)
    if part.pair is not None:
        e = float(optimal_homogeneous_epsilon(part.pair[0], part.pair[1], queries, delta_total))
        if e < closed:
            closed, name = e, BOUND_CLOSED_FORM
    return closed, name


def group_total(part: GroupPart, queries: int, delta_total: float, *, interval: float | None = None,
                bracket: float = DEFAULT_BRACKET, loss_cap: float | None = None) -> QueryBound:
    """ε_total at ``delta_total`` of ``queries`` fresh-members answers for the records of one group: the
    smallest of (1) :func:`fresh_bound` of the group's own pair (its PLD and the Kairouz–Oh–Viswanath points
    of its profile), (2) its certified μ composed exactly (√Q·μ-GDP, Dong, Roth & Su 2022, Corollary 3.3,
    turned into ε at 40 digits by :func:`darrm.budget.targets.gdp_epsilon`) and (3) the optimal homogeneous
    composition of its confirmed per-query pair (Kairouz, Oh & Viswanath 2017, Theorem 3.3).  Each is an
    upper bound on the group's records' total, so the smallest is one.  The one per-group computation:
    every door (:func:`composed_epsilon`, the session, ``darrm account queries``) and the verifier of a
    designed table's group totals call it.

    Raises:
        ParameterError: none of the three can be computed (naming the option the PLD refused)."""
    closed, name = group_closed_form(part, queries, delta_total)
    try:
        b = fresh_bound([(part.profile, queries)], delta_total, True, interval=interval, bracket=bracket,
                        loss_cap=loss_cap)
    except ParameterError:
        if closed == math.inf:
            raise
        return QueryBound(closed, delta_total, name, "fresh", queries, 0.0)
    if closed < b.epsilon:
        return replace(b, epsilon=closed, bound=name, lower=min(b.lower, closed))
    return b


def largest_group_total(per: Sequence[QueryBound]) -> QueryBound:
    """The largest of the groups' totals (the first on ties): a total for every record of the table,
    since a record's privacy loss is its own group's (each record belongs to one group)."""
    return max(per, key=lambda b: b.upper)


def has_record_groups(table: GammaTable) -> bool:
    """Whether the table's member model registers record groups
    (:func:`darrm.budget.group_clouds.register_group_clouds`; :func:`record_group_totals` applies)."""
    from darrm.budget.group_clouds import GROUP_CLOUDS

    return model_of(table.params).name in GROUP_CLOUDS


def recorded_pair(record: object) -> tuple[float, float] | None:
    """The per-query pair (ε_q, δ_q) a part's record names (its generic charge), if well formed:
    0 < ε_q ≤ :data:`darrm.validation.EPS_MAX`, 0 ≤ δ_q < 1; None otherwise."""
    pq = record.get("per_query") if isinstance(record, dict) else None
    if not (isinstance(pq, list) and len(pq) == 2):
        return None
    try:
        eq, dq = float(pq[0]), float(pq[1])
    except (TypeError, ValueError):
        return None
    return (eq, dq) if 0.0 < eq <= v.EPS_MAX and 0.0 <= dq < 1.0 else None


def group_parts_of(table: GammaTable, clouds: Sequence[Any],
                   certified_at: Callable[[int, float, float], bool]) -> list[GroupPart]:
    """Each part's profile, certified GDP μ (re-derived from its cloud, never read from a record) and
    the per-query pair its record names where the part's profile (δ_γ(ε_q) ≤ δ_q, rounded up) or the
    model's certificate (``certified_at(part, ε_q, δ_q)``) confirms it: then every query is (ε_q, δ_q)-DP
    for that part's records whatever the record says, so a forged pair is never used
    (:func:`darrm.accounting.queries.group_total`)."""
    gb = table.info.get("group_budgets")
    records = gb.get("groups") if isinstance(gb, dict) else None
    if not isinstance(records, list) or len(records) != len(clouds):
        records = [None] * len(clouds)
    out = []
    for i, (cloud, rec) in enumerate(zip(clouds, records, strict=True)):
        prof = cloud.profile(table.gamma)
        pair = recorded_pair(rec)
        if pair is not None and not (float(prof.delta(pair[0])) <= pair[1] or certified_at(i, *pair)):
            pair = None
        out.append(GroupPart(prof, float(cloud.gdp_mu(table.gamma, prof)), pair))
    return out


#: group parts by (table fingerprint, recorded per-query pairs), at most :data:`_PROFILE_CACHE_SIZE`
_GROUP_PARTS: dict[tuple[str, str], list[GroupPart]] = {}


def group_parts(table: GammaTable) -> list[GroupPart] | None:
    """Each record group of ``table`` as the accountant composes it (:func:`group_parts_of` of its
    registered clouds, :func:`darrm.budget.group_clouds.record_group_clouds`), or None where the member
    model has no record groups.  Cached by the table's fingerprint and the pairs its record names (a pair
    enters only where confirmed)."""
    from darrm.budget.group_clouds import record_group_clouds

    groups = record_group_clouds(table.gamma, table.params)
    if groups is None:
        return None
    gb = table.info.get("group_budgets")
    recs = gb.get("groups") if isinstance(gb, dict) else None
    key = (table_fingerprint(table), repr([recorded_pair(r) for r in recs] if isinstance(recs, list) else None))
    if key not in _GROUP_PARTS:
        if len(_GROUP_PARTS) >= _PROFILE_CACHE_SIZE:
            _GROUP_PARTS.pop(next(iter(_GROUP_PARTS)))
        _GROUP_PARTS[key] = group_parts_of(table, *groups)
    return _GROUP_PARTS[key]


def record_group_totals(table: GammaTable, queries: int, delta_total: float, *, interval: float | None = None,
                        bracket: float = DEFAULT_BRACKET,
                        loss_cap: float | None = None) -> tuple[QueryBound, ...] | None:
    """Each record group's fresh-members ε_total (:func:`group_total`) of a table whose member model
    registers its record groups (:func:`group_parts`: shard groups, weighted shards), in the order of its
    groups; None for other tables.

    Each record belongs to one group and changing it moves only what its group's worst configurations cover,
    so its loss is its own group's: group g's total holds for its records, and the largest group total
    (:func:`largest_group_total`) is a total for every record of the table."""
    parts = group_parts(table)
    if parts is None:
        return None
    return tuple(group_total(p, queries, delta_total, interval=interval, bracket=bracket, loss_cap=loss_cap)
                 for p in parts)


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
    v.instance("table", table, GammaTable, "a darrm.GammaTable")
    p: Any = table.params  # record groups (checked below): their member and groups are read
    copies = model_of(p).supports("record-groups")
    if not copies and not has_record_groups(table):
        raise ParameterError("table", f"must be a table of record groups (darrm.ShardGroupParams or "
                                      f"darrm.WeightedShardParams), not of {p.members!r} members: use composed_epsilon")
    if (delta_total is None) == (epsilon_total is None):
        raise ParameterError("delta_total", "give exactly one of delta_total and epsilon_total")
    want_eps = delta_total is not None
    target = v.open_unit("delta_total", delta_total) if want_eps else \
        v.epsilon("epsilon_total", epsilon_total, allow_zero=True)
    q = v.count("queries", queries)
    v.positive("bracket", bracket)
    if check_member_randomness(member_randomness) == "fixed":
        dt, et = (target, None) if want_eps else (None, target)
        if not copies:  # one record changes one member of its group: the members' own bound, every group
            return (replace(fixed_members_bound(table, dt, et), queries=q),) * len(p.groups)
        return tuple(replace(_shard_members_bound(p.member, g.copies, BOUND_FIXED_COPIES, dt, et), queries=q)
                     for g in p.groups)
    h = None if value_discretization_interval is None else check_interval(value_discretization_interval)
    if want_eps:
        per = record_group_totals(table, q, target, interval=h, bracket=bracket, loss_cap=loss_cap)
        assert per is not None  # every record-groups model registers its groups (has_record_groups)
        return per
    return tuple(fresh_bound([(part.profile, q)], target, want_eps, interval=h, bracket=bracket, loss_cap=loss_cap)
                 for part in group_parts(table) or ())


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
        value_discretization_interval: the PLD's loss grid; None (the default): chosen per total as
            :func:`composed_epsilon` does (the same number), and :data:`DEFAULT_INTERVAL`
            (dp_accounting's default) for :meth:`pld`.
        loss_cap: the PLD's largest finite loss (None: the table's own).
    """

    member_randomness: str
    value_discretization_interval: float | None = None
    loss_cap: float | None = None
    _steps: list[tuple[GammaTable, int]] = field(default_factory=list, repr=False)
    _cache: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.member_randomness = check_member_randomness(self.member_randomness)
        if self.value_discretization_interval is not None:
            self.value_discretization_interval = check_interval(self.value_discretization_interval)
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

        return [(table_fingerprint(t), n) for t, n in self._steps]

    @property
    def queries(self) -> int:
        """Answers recorded."""
        return sum(n for _, n in self._steps)

    def _merged(self, extra: Sequence[tuple[GammaTable, int]] = ()) -> list[tuple[GammaTable, int]]:
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
        h = self.value_discretization_interval
        h = choose_interval(steps, DEFAULT_INTERVAL if h is None else h, self.loss_cap)
        key = (tuple((table_fingerprint(t), n) for t, n in steps), pessimistic, h)
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = _composed(steps, h, pessimistic, self.loss_cap)
        return self._cache[key]

    def total(self, delta: float, extra: Sequence[tuple[GammaTable, int]] = ()) -> QueryBound | None:
        """The :class:`QueryBound` at δ_total = ``delta`` of the recorded steps (plus ``extra``),
        computed as :func:`composed_epsilon` computes it (None with no queries).

        Args:
            delta: δ_total, in (0, 1).
            extra: (table, answers) pairs composed as if recorded, without recording them.

        Returns:
            The bound (ε_total, the accountant that gave it), or None with no queries.

        Raises:
            ParameterError: naming ``delta``, outside (0, 1).
        """
        dt = v.open_unit("delta", delta)
        steps = self._merged(extra)
        if not steps:
            return None
        if self.member_randomness == "fixed":
            return _fixed(steps, delta_total=dt)
        key = (tuple((table_fingerprint(t), n) for t, n in steps), "eps", dt)
        if key not in self._cache:
            if len(self._cache) > 64:
                self._cache.clear()
            self._cache[key] = fresh_bound(steps, dt, True, interval=self.value_discretization_interval,
                                           loss_cap=self.loss_cap)
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
        b = self.total(delta, extra)
        return 0.0 if b is None else b.epsilon

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
        return fresh_bound(steps, et, False, interval=self.value_discretization_interval,
                           loss_cap=self.loss_cap).delta

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

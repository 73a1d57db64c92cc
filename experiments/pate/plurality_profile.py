"""The per-query privacy profile of the C-class plurality aggregator and its tight Q-fold composition.

:mod:`.plurality_top_two` certifies one query of M_γ at a single (ε_q, δ_q).  Here the whole
profile δ_γ(ε′) = sup over moves n → n′ of H_{e^{ε′}}(M_γ(n) ‖ M_γ(n′)), for every ε′ ≥ 0, is
turned into one finite dominating pair, and Q queries are composed through darrm's one accountant
(:func:`darrm.accounting.queries.fresh_bound`), exactly as darrm composes the binary DaRRM
(no second composition code).

Claim 1 (the profile is a maximum over a finite cloud).  For one move, both output distributions
are constant on the groups of :mod:`.plurality_top_two` (Claim 4 there: {a} and the rest; or {a},
{b} and the rest for a swap of the plurality class; a tie is uniform).  For s ≥ 0,
H_s(P ‖ P′) = sup_S P(S) − s·P′(S) over events S is attained at S = {c : P(c) > s·P′(c)}, a union of
groups.  So δ_γ(log s) = max(0, max over the cloud 𝒞 of y − s·x), where 𝒞 holds the points
(x, y) = (P′(S), P(S)) for every listed pair of states (Claims 2 and 3 there: a superset of the
real moves), both directions, and every union S of groups, with (0, 0) and (1, 1).

Claim 2 (one dominating pair for every move).  Let (x_0 = 0, y_0), …, (x_n = 1, 1) be the vertices of
the upper concave envelope of 𝒞.  The pair P(0) = y_0, Q(0) = 0 (infinite loss), P(j) = y_j − y_{j−1},
Q(j) = x_j − x_{j−1} satisfies H_s(P ‖ Q) = max_j (y_j − s·x_j) = δ_γ(log s) for every s ≥ 0, so it
dominates every move in both directions (Zhu, Dong & Wang 2022, Definition 7).  Proof: that of
Claim 2 of :mod:`darrm.privacy.profile`, which uses only that the cloud's points are
(P′(S), P(S)) of events attaining the hockey-stick divergence; the slopes of the envelope decrease,
so Σ_j (P(j) − s·Q(j))₊ telescopes to y_J − s·x_J at the last vertex J whose slope exceeds s, the
maximum of y − s·x over the envelope, which is its maximum over 𝒞 (a linear function increasing in
y peaks on the upper chain of the hull, at a vertex, and every vertex is a point of 𝒞).  This holds
for every s ≥ 0, including s < 1.  So no per-move pairs are needed: the worst case over moves,
taken pointwise in s, is itself the profile of a single pair.

Claim 3 (adaptive composition).  The teachers are deterministic functions of their disjoint shards;
changing one training record changes one teacher, so on every query, whatever the query (chosen
adaptively from earlier answers), the histogram moves by at most one vote or stays the same
(H_s(P ‖ P) = (1 − s)₊, the point (1, 1)).  Each answer draws fresh coins, so the Q answers are an
adaptive composition of mechanisms each dominated by (P, Q); by Zhu, Dong & Wang 2022, Theorem 10,
the product (P^Q, Q^Q) dominates the composition, and
:func:`~darrm.accounting.queries.fresh_bound` bounds its ε(δ_total) from above (pessimistic
discretisation, truncated tail counted as infinite loss).

Rigour (outward rounding).  Every cloud coordinate is a sum of at most C terms, each a product of
float64 inputs (γ ∈ [0, 1], 1/C, C − 1, …) computed in at most 6 roundings; all terms are
non-negative, so each computed coordinate is within a relative error :data:`RELATIVE_ERROR`
(= 64 u ≥ 6u/(1 − 6u) with margin) of the exact value of the stored γ.  Each vertex is rounded
outward, x ↦ x/(1 + ρ) (≤ the true x) and y ↦ min(1, y/(1 − ρ)) (≥ the true y), and the envelope
taken again, so the profile and pair are upper bounds (as in :mod:`darrm.privacy.profile`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from darrm.accounting.queries import QueryBound, fresh_bound
from darrm.errors import ParameterError
from darrm.privacy.profile import Envelope, PrivacyProfile, upper_hull
from darrm.validation import count, epsilon, open_unit

from .plurality_top_two import StatePairs, TopTwoTable, solve_top_two, state_pairs

__all__ = ["RELATIVE_ERROR", "PluralityBudget", "composed_plurality_epsilon", "plurality_cloud",
           "plurality_profile", "plurality_tight_budget"]

#: relative error bound of a cloud coordinate (module docstring, "Rigour")
RELATIVE_ERROR = 64 * 2.0**-53


def _groups(gi: np.ndarray, gj: np.ndarray, C: int, swap: bool) -> list[tuple[np.ndarray, np.ndarray]]:
    """(P(group), P′(group)) per group of classes, for states with γ = gi (P) and γ = gj (P′)."""
    a_i, b_i = 1.0 / C + gi * (1.0 - 1.0 / C), (1.0 - gi) / C
    a_j, b_j = 1.0 / C + gj * (1.0 - 1.0 / C), (1.0 - gj) / C
    if not swap:  # {a}, the other C − 1 classes
        return [(a_i, a_j), ((C - 1) * b_i, (C - 1) * b_j)]
    # class a is the plurality of P, class b of P′, C − 2 others
    return [(a_i, b_j), (b_i, a_j), ((C - 2) * b_i, (C - 2) * b_j)]


def _unions(groups: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """(x, y) = (P′(S), P(S)) for every non-empty proper union S of the groups."""
    xs, ys = [], []
    n = len(groups)
    for mask in range(1, 2**n - 1):
        y = sum(groups[k][0] for k in range(n) if mask >> k & 1)
        x = sum(groups[k][1] for k in range(n) if mask >> k & 1)
        xs.append(np.asarray(x, dtype=np.float64))
        ys.append(np.asarray(y, dtype=np.float64))
    return np.concatenate([np.atleast_1d(v) for v in xs]), np.concatenate([np.atleast_1d(v) for v in ys])


def plurality_cloud(gamma: np.ndarray, C: int, pairs: StatePairs) -> tuple[np.ndarray, np.ndarray]:
    """The cloud 𝒞 of Claim 1 (without (0, 0) and (1, 1)): (P′(S), P(S)) over every listed pair of
    states, both directions, and every union S of the pair's groups (float64, not rounded).

    Args:
        gamma: γ over :func:`~.plurality_top_two.states` (same order), in [0, 1].
        C: classes.
        pairs: the listed pairs (:func:`~.plurality_top_two.state_pairs`).

    Returns:
        (x, y) arrays.

    Raises:
        IndexError: ``gamma`` is shorter than the states the pairs index.
    """
    g = np.asarray(gamma, dtype=np.float64)
    parts: list[tuple[np.ndarray, np.ndarray]] = []
    if len(pairs.same):
        gi, gj = g[pairs.same[:, 0]], g[pairs.same[:, 1]]
        parts += [_unions(_groups(gi, gj, C, False)), _unions(_groups(gj, gi, C, False))]
    if len(pairs.tie):
        gt = g[pairs.tie]
        zero = np.zeros_like(gt)
        parts += [_unions(_groups(gt, zero, C, False)), _unions(_groups(zero, gt, C, False))]
    if len(pairs.swap):
        gs = g[pairs.swap]
        parts.append(_unions(_groups(gs, gs, C, True)))  # the swap is its own reverse (a ↔ b)
    if not parts:
        return np.zeros(0), np.zeros(0)
    return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])


def plurality_profile(table: TopTwoTable) -> PrivacyProfile:
    """The privacy profile of one query of the plurality aggregator, rounded outward (Claims 1–2).

    Args:
        table: a certified :class:`~.plurality_top_two.TopTwoTable`.

    Returns:
        A :class:`darrm.privacy.profile.PrivacyProfile` (``model="plurality"``): ``delta(ε′)`` bounds
        δ_γ(ε′) from above for every ε′ ≥ 0 and ``pair()`` is the dominating pair of Claim 2.

    Raises:
        ParameterError: ``table`` is not a TopTwoTable.
    """
    if not isinstance(table, TopTwoTable):
        raise ParameterError("table", f"must be a TopTwoTable, got {type(table).__name__}")
    x, y = plurality_cloud(table.gamma, table.C, state_pairs(table.K, table.C))
    env = Envelope(x, y)
    rho = RELATIVE_ERROR
    hx = np.clip(env.x / (1.0 + rho), 0.0, 1.0)
    hy = np.clip(env.y / (1.0 - rho), 0.0, 1.0)
    hx, hy = upper_hull(np.concatenate([hx, [0.0, 1.0]]), np.concatenate([hy, [0.0, 1.0]]))
    return PrivacyProfile(hx, hy, table.K, "plurality", rho, 0.0, int(x.size))


def composed_plurality_epsilon(table: TopTwoTable, queries: int, delta_total: float, *,
                               discretization: float | None = None) -> QueryBound:
    """ε_total(δ_total) of ``queries`` adaptive answers of the plurality aggregator (Claim 3; an upper
    bound: darrm's one accountant, :func:`darrm.accounting.queries.fresh_bound`, on
    :func:`plurality_profile`).

    Args:
        table: a certified :class:`~.plurality_top_two.TopTwoTable`.
        queries: number of answers Q.
        delta_total: the total δ, in (0, 1).
        discretization: the PLD grid step of the composition (None: the accountant refines it).

    Returns:
        The :class:`~darrm.accounting.queries.QueryBound` (its ε at ``delta_total``).

    Raises:
        ParameterError: a bad value.
    """
    q = count("queries", queries)
    return fresh_bound([(plurality_profile(table), q)], open_unit("delta_total", delta_total), True,
                       interval=discretization)


@dataclass(frozen=True)
class PluralityBudget:
    """A plurality table whose own profile composes to at most the total budget.

    Attributes:
        table: the certified per-query table, (eps_query, delta_query)-DP per query.
        eps_query: the LP's per-query ε.
        delta_query: the LP's per-query δ.
        composition: its tight Q-fold ε at ``delta_total`` (≤ ``eps_total``).
        eps_total: the requested total ε.
        delta_total: the total δ.
        solves: how many LPs the search solved.
    """

    table: TopTwoTable
    eps_query: float
    delta_query: float
    composition: QueryBound
    eps_total: float
    delta_total: float
    solves: int


def plurality_tight_budget(K: int, C: int, eps_total: float, delta_total: float, queries: int, *,
                           p_correct: float = 0.75, start: float | None = None,
                           steps: int = 8) -> PluralityBudget:
    """The largest per-query ε_q (δ_q = δ_total / (2Q)) whose solved table's OWN profile composes to
    ≤ ε_total over ``queries`` queries (bisection; a candidate is accepted only by its composition).

    The generic per-query ε_q (:func:`~.multiclass_aggregators.plurality_budget`) is always feasible
    here (the optimal homogeneous composition of (ε_q, δ_q) mechanisms bounds every (ε_q, δ_q)-DP
    one's), so it may be passed as ``start`` (the bisection's lower end; checked, not assumed).

    Args:
        K: teachers.
        C: classes.
        eps_total: total ε.
        delta_total: total δ.
        queries: Q.
        p_correct: the LP prior's per-teacher accuracy.
        start: a feasible per-query ε to start from (None: bisect from 0).
        steps: bisection steps.

    Returns:
        The :class:`PluralityBudget` of the largest feasible ε_q found.

    Raises:
        ParameterError: bad values, or no ε_q tried composes to ≤ ε_total.
    """
    K, C, Q = count("K", K), count("C", C, minimum=2), count("queries", queries)
    eps_total, delta_total = epsilon("eps_total", eps_total), open_unit("delta_total", delta_total)
    steps = count("steps", steps)
    dq = delta_total / (2 * Q)
    solves = 0

    def attempt(e: float) -> PluralityBudget | None:
        nonlocal solves
        solves += 1
        table = solve_top_two(K, C, e, dq, p_correct)
        comp = composed_plurality_epsilon(table, Q, delta_total)
        if comp.epsilon <= eps_total:
            return PluralityBudget(table, e, dq, comp, eps_total, delta_total, solves)
        return None

    best: PluralityBudget | None = None
    lo, hi = 0.0, eps_total
    if start is not None:
        start = epsilon("start", start)
        best = attempt(start)
        if best is not None:
            lo = start
            while lo < eps_total:  # double while feasible: the own profile is tighter than the generic bound
                probe = min(eps_total, 2.0 * lo)
                got = attempt(probe)
                if got is None:
                    hi = probe
                    break
                best, lo = got, probe
            if lo >= eps_total:
                return dataclasses.replace(best, solves=solves)
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        got = attempt(mid)
        if got is None:
            hi = mid
        else:
            best, lo = got, mid
    if best is None:
        raise ParameterError("eps_total", f"no per-query epsilon composes to {eps_total} over {Q} queries")
    return dataclasses.replace(best, solves=solves)

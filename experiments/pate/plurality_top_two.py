"""The plurality aggregator for C classes at large K: γ(t, s) over O(K²) top-two states.

Writing one privacy row per histogram and move fits small K and C only (the tests keep that brute
force, ``tests/references/plurality_reference.py``, as their independent check).  This module
proves that the rows depend only on the **top-two states** of the two histograms and solves the
same linear program over O(K²) variables and O(K²) pairs of states, so K = 250 teachers and C = 10
classes (PATE 2018's setting) fit in one HiGHS solve.

Mechanism M_γ.  For a vote histogram n with top counts t ≥ s (s = t when the
top is tied), M_γ releases argmax n with probability γ(t, s), else a uniform class; at a tie it releases
a uniform class (γ = 0).  So Pr[M_γ(n) = c] = A = 1/C + γ(1 − 1/C) at the plurality class and
B = (1 − γ)/C at every other class.

Claim 1 (states).  A top-two pair (t, s) with t > s is the state of some histogram of K votes over C
classes iff t + s ≤ K and K − t − s ≤ (C − 2)·s (the other C − 2 counts sum to K − t − s, each ≤ s); a
tie (t, t) iff 2t ≤ K and K − 2t ≤ (C − 2)·t.  Proof: necessity is the sum and order constraints;
for sufficiency spread K − t − s over the other C − 2 classes in parts ≤ s.

Claim 2 (one move changes the state by at most one in each coordinate, never both up or both down).
Moving one vote changes one count by −1 and another by +1.  Order statistics are 1-Lipschitz in the
ℓ∞ norm, so |t′ − t| ≤ 1 and |s′ − s| ≤ 1.  The top-two sum t + s is the largest sum of two counts;
every pair's sum changes by at most +1 (only one count grows) and at least −1, so
(t′ − t, s′ − s) ∉ {(1, 1), (−1, −1)}: 7 offsets remain.

Claim 3 (the plurality class changes only by a swap at s = t − 1).  If both n and n′ have a strict top
and the plurality class changes from a to b, then x_a − x_b ≥ 1 before and y_b − y_a ≥ 1 after; one move
changes x_b − x_a by at most 2, with equality only for the move a → b.  Hence x_a − x_b = 1, the move
is a → b, s = t − 1, and n′ has the state (t, t − 1) with the classes of a and b swapped.

Claim 4 (rows).  For two output distributions that are constant on groups of classes (here: {a}, the
rest; or {a}, {b}, the rest for a swap), the hockey-stick divergence sup_S P(S) − e^ε P′(S) is attained
at S = {c : P(c) > e^ε P′(c)}, a union of groups.  So M_γ is (ε, δ)-DP for one move iff
P(S) − e^ε P′(S) ≤ δ for every union S of groups, in both directions: 2 rows per direction for a
pair with one plurality class (or a tie, γ′ = 0), 6 for a swap.  Each row is affine in (γ(t, s), γ(t′, s′)).

Consequence.  Writing those rows for every state and every state reachable by the 7 offsets (plus the
swap and the ties) constrains every real move (Claims 2 and 3) and possibly some pairs that no
histogram realises: the LP's feasible set is *contained in* the set of (ε, δ)-DP tables (provably
private, possibly slightly conservative).  ``tests/experiments/test_plurality_top_two.py`` checks
that every move of every histogram maps to a listed pair, and certifies solved tables by the
40-digit brute force of :func:`.plurality.max_hockey_stick`.

Certificate at large K.  :func:`max_divergence` evaluates every listed pair's divergence in float64
(a handful of operations on numbers ≤ e^ε: absolute error below 1e-13 for ε ≤ 5); a table is accepted
only if that maximum plus :data:`ROUNDING_MARGIN` is ≤ δ, after scaling γ by λ ≤ 1 if needed
(the divergence is jointly convex in γ and 0 at γ ≡ 0, so HS(λγ) ≤ λ·HS(γ)).

Composition.  Each query draws fresh coins and the votes of fixed non-private teachers on disjoint
shards move by one vote under a change of one training record, so Q answers compose adaptively as
Q (ε, δ)-DP mechanisms (Kairouz, Oh & Viswanath 2015, Theorem 3.3, for the total; the same argument
as GNMax on these teachers).  The tighter total, from the table's own privacy profile composed by
PLD, is :mod:`.plurality_profile`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from darrm.errors import ParameterError, SolveError
from darrm.mechanism import class_votes
from darrm.validation import count, generator, instance, non_negative, open_unit

from .multiclass_aggregators import histograms_of

__all__ = ["ROUNDING_MARGIN", "StatePairs", "TopTwoTable", "max_divergence", "prior_weights", "release_plurality",
           "solve_top_two", "state_pairs", "states"]

#: margin added to the float64 divergence before comparing it with δ (see the module docstring)
ROUNDING_MARGIN = 1e-12
_OFFSETS = ((-1, 0), (-1, 1), (0, -1), (0, 0), (0, 1), (1, -1), (1, 0))


def _strict_ok(t: int, s: int, K: int, C: int) -> bool:
    return t > s >= 0 and t + s <= K and K - t - s <= (C - 2) * s


def _tie_ok(t: int, K: int, C: int) -> bool:
    return t >= 1 and 2 * t <= K and K - 2 * t <= (C - 2) * t


def states(K: int, C: int) -> list[tuple[int, int]]:
    """Every strict top-two state (t, s), t > s, of K votes over C classes (Claim 1), sorted.

    Args:
        K: number of votes.
        C: number of classes (at least 2).

    Returns:
        The states (t, s) some histogram of K votes over C classes has as its top two counts.

    Raises:
        ParameterError: ``K`` or ``C`` is not a valid count (naming it).
    """
    K, C = count("K", K), count("C", C, minimum=2)
    return [(t, s) for t in range(1, K + 1) for s in range(0, t) if _strict_ok(t, s, K, C)]


@dataclass(frozen=True)
class StatePairs:
    """Pairs of states one move apart (Claims 2 and 3), as index arrays into :func:`states`.

    Attributes:
        same: ``(n, 2)`` pairs (i, j) with one plurality class kept (i < j, or i == j for the offset (0, 0)).
        tie: (i,) strict states with a neighbouring tie (the tie releases the uniform label).
        swap: (i,) states (t, t − 1) whose plurality class can change by one move.
    """

    same: np.ndarray
    tie: np.ndarray
    swap: np.ndarray


def state_pairs(K: int, C: int) -> StatePairs:
    """The pairs of :class:`StatePairs` for K votes over C classes.

    Args:
        K: number of votes.
        C: number of classes (at least 2).

    Returns:
        The :class:`StatePairs`, indices into :func:`states` ``(K, C)``.

    Raises:
        ParameterError: ``K`` or ``C`` is not a valid count (naming it).
    """
    st = states(K, C)
    index = {ts: i for i, ts in enumerate(st)}
    same, tie, swap = set(), set(), []
    for i, (t, s) in enumerate(st):
        for dt, ds in _OFFSETS:
            t2, s2 = t + dt, s + ds
            j = index.get((t2, s2))
            if j is not None:
                same.add((min(i, j), max(i, j)))
            elif t2 == s2 and _tie_ok(t2, K, C):
                tie.add(i)
        if s == t - 1:
            swap.append(i)
    return StatePairs(np.array(sorted(same), dtype=np.int64).reshape(-1, 2), np.array(sorted(tie), dtype=np.int64),
                      np.array(swap, dtype=np.int64))


def _group_rows(C: int, e: float, swap: bool) -> list[tuple[float, float, float]]:
    """Rows (coefficient of γ, coefficient of γ′, constant) of P(S) − e^ε P′(S) for every union S of groups.

    One plurality class kept (``swap=False``): S ∈ {{a}, rest}.  Swap: S over {a}, {b}, rest (C − 2 classes).
    With A(g) = 1/C + g(1 − 1/C), B(g) = (1 − g)/C.
    """
    def A(k: float) -> tuple[float, float]:  # (coefficient of g, constant) of k·A(g)
        return k * (1 - 1 / C), k / C

    def B(k: float) -> tuple[float, float]:
        return -k / C, k / C

    rows = []
    if not swap:
        groups = [(A(1), A(1)), (B(C - 1), B(C - 1))]  # (P part in g, P′ part in g′)
    else:  # class a: A(g) vs B(g′); class b: B(g) vs A(g′); the rest: B vs B
        groups = [(A(1), B(1)), (B(1), A(1)), (B(C - 2), B(C - 2))]
    n = len(groups)
    for mask in range(1, 2**n - 1):
        cg = cg2 = const = 0.0
        for k in range(n):
            if mask >> k & 1:
                (pg, pc), (qg, qc) = groups[k]
                cg += pg
                const += pc
                cg2 -= e * qg
                const -= e * qc
        rows.append((cg, cg2, const))
    return rows


def max_divergence(gamma: np.ndarray, K: int, C: int, eps: float, pairs: StatePairs | None = None) -> float:
    """The largest hockey-stick divergence at ε over every listed pair, both directions (float64).

    Args:
        gamma: γ over :func:`states` (same order).
        K: votes.
        C: classes.
        eps: ε ≥ 0.
        pairs: :func:`state_pairs` (computed when omitted).

    Returns:
        max over pairs of Σ_c (P(c) − e^ε P′(c))₊, ≥ 0 (Claim 4).

    Raises:
        ParameterError: a negative ``eps`` or a bad ``K`` or ``C`` (naming it).
        IndexError: ``gamma`` is shorter than :func:`states` ``(K, C)``.
    """
    eps = non_negative("eps", eps)
    pairs = pairs or state_pairs(K, C)
    g = np.asarray(gamma, dtype=np.float64)
    e = math.exp(eps)

    def hs(gi: np.ndarray, gj: np.ndarray, swap: bool) -> np.ndarray:
        a_i, b_i = 1 / C + gi * (1 - 1 / C), (1 - gi) / C
        a_j, b_j = 1 / C + gj * (1 - 1 / C), (1 - gj) / C
        if not swap:
            return np.maximum(a_i - e * a_j, 0) + (C - 1) * np.maximum(b_i - e * b_j, 0)
        return np.maximum(a_i - e * b_j, 0) + np.maximum(b_i - e * a_j, 0) + (C - 2) * np.maximum(b_i - e * b_j, 0)

    parts = [np.zeros(1)]
    if len(pairs.same):
        gi, gj = g[pairs.same[:, 0]], g[pairs.same[:, 1]]
        parts += [hs(gi, gj, False), hs(gj, gi, False)]
    if len(pairs.tie):
        gt = g[pairs.tie]
        parts += [hs(gt, np.zeros_like(gt), False), hs(np.zeros_like(gt), gt, False)]
    if len(pairs.swap):
        gs = g[pairs.swap]
        parts += [hs(gs, gs, True)]
    return float(max(float(np.max(p)) for p in parts))


def prior_weights(K: int, C: int, p_correct: float, samples: int = 200_000, seed: int = 0) -> np.ndarray:
    """Objective weights over :func:`states`: E[1{state, plurality = truth}] − Pr[state]/C (Monte Carlo).

    Each teacher votes the true class with probability ``p_correct``, another class uniformly (a
    data-independent prior, like the paper's i.i.d. prior).  Pr[release = truth] = 1/C + Σ γ·weight.

    Args:
        K: number of teachers.
        C: number of classes (at least 2).
        p_correct: a teacher's probability of voting the true class, in (0, 1).
        samples: Monte-Carlo histograms drawn.
        seed: seeds the draw (stream ``[seed, 25]``).

    Returns:
        One weight per state of :func:`states`, same order.

    Raises:
        ParameterError: a bad ``K``, ``C``, ``p_correct`` or ``samples`` (naming it).
    """
    K, C = count("K", K), count("C", C, minimum=2)
    p_correct = open_unit("p_correct", p_correct)
    rng = np.random.default_rng([seed, 25])
    probs = np.full(C, (1.0 - p_correct) / (C - 1))
    probs[0] = p_correct
    hist = rng.multinomial(K, probs, size=count("samples", samples))
    order = np.sort(hist, axis=1)
    t, s = order[:, -1], order[:, -2]
    strict = t > s
    right = strict & (hist[:, 0] == t)
    index = {ts: i for i, ts in enumerate(states(K, C))}
    w = np.zeros(len(index))
    for tt, ss, ok in zip(t[strict], s[strict], right[strict], strict=True):
        w[index[(int(tt), int(ss))]] += (1.0 if ok else 0.0) - 1.0 / C
    return w / len(hist)


@dataclass(frozen=True)
class TopTwoTable:
    """A certified γ over the top-two states of K votes over C classes, (eps, delta)-DP per query.

    Attributes:
        K: number of teachers.
        C: number of classes.
        eps: per-query ε.
        delta: per-query δ.
        gamma: γ over :func:`states` ``(K, C)``, same order.
        max_divergence: the certified divergence, ≤ ``delta`` − :data:`ROUNDING_MARGIN`.
        expected_agreement: Pr[release = truth] under the prior.
        info: the LP's size, the certificate's scale λ and the proven gap to the LP optimum.
    """

    K: int
    C: int
    eps: float
    delta: float
    gamma: np.ndarray  # over states(K, C)
    max_divergence: float  # ≤ delta − ROUNDING_MARGIN
    expected_agreement: float  # Pr[release = truth] under the prior
    info: dict

    def lookup(self, t: np.ndarray, s: np.ndarray) -> np.ndarray:
        """γ(t, s) for arrays of top-two counts (0 at ties)."""
        index = {ts: i for i, ts in enumerate(states(self.K, self.C))}
        out = np.zeros(len(t))
        for k, (tt, ss) in enumerate(zip(np.asarray(t).tolist(), np.asarray(s).tolist(), strict=True)):
            if tt > ss:
                out[k] = self.gamma[index[(tt, ss)]]
        return out


def solve_top_two(K: int, C: int, eps: float, delta: float, p_correct: float = 0.9) -> TopTwoTable:
    """γ(t, s) maximising Pr[release = truth] under :func:`prior_weights`, subject to (ε, δ)-DP per query.

    Args:
        K: teachers (votes).
        C: classes.
        eps: per-query ε ≥ 0.
        delta: per-query δ in (:data:`ROUNDING_MARGIN`, 1).
        p_correct: the prior's per-teacher accuracy.

    Returns:
        The :class:`TopTwoTable`, certified by :func:`max_divergence` (module docstring); its ``info``
        records the LP size, the scale λ applied for the certificate and the proven gap
        ``gap_to_lp_optimum`` (LP optimum − certified objective, under the prior).

    Raises:
        ParameterError: bad K, C, ε, δ or prior.
        SolveError: HiGHS did not solve the LP, or the table could not be certified.
    """
    from scipy.optimize import linprog
    from scipy.sparse import coo_array

    K, C = count("K", K), count("C", C, minimum=2)
    eps, delta = non_negative("eps", eps), open_unit("delta", delta)
    if delta <= ROUNDING_MARGIN:  # the certificate needs max divergence + margin ≤ δ: even γ ≡ 0 fails
        raise ParameterError("delta", f"must exceed the certificate's rounding margin {ROUNDING_MARGIN:g}, "
                                      f"got {delta!r}")
    st = states(K, C)
    if not st:
        raise ParameterError("K", f"no histogram of K={K} votes over C={C} classes has a strict plurality")
    pairs = state_pairs(K, C)
    e = math.exp(eps)
    rows_i: list[np.ndarray] = []
    cols: list[np.ndarray] = []
    vals: list[np.ndarray] = []
    rhs: list[np.ndarray] = []
    n_rows = 0

    def add(i: np.ndarray, j: np.ndarray | None, swap: bool) -> None:
        nonlocal n_rows
        for cg, cg2, const in _group_rows(C, e, swap):
            r = n_rows + np.arange(len(i))
            rows_i.append(r)
            cols.append(i)
            vals.append(np.full(len(i), cg))
            if j is not None:
                rows_i.append(r)
                cols.append(j)
                vals.append(np.full(len(i), cg2))
            rhs.append(np.full(len(i), delta - const))
            n_rows += len(i)

    if len(pairs.same):
        a, b = pairs.same[:, 0], pairs.same[:, 1]
        add(a, b, False)
        add(b, a, False)
    if len(pairs.tie):
        add(pairs.tie, None, False)  # strict state vs the tie (γ′ = 0) ...
        rows_rev = _group_rows(C, e, False)  # ... and the tie vs the strict state: γ enters as γ′
        for _cg, cg2, const in rows_rev:
            r = n_rows + np.arange(len(pairs.tie))
            rows_i.append(r)
            cols.append(pairs.tie)
            vals.append(np.full(len(pairs.tie), cg2))
            rhs.append(np.full(len(pairs.tie), delta - const))
            n_rows += len(pairs.tie)
    if len(pairs.swap):
        add(pairs.swap, pairs.swap, True)
    A = coo_array((np.concatenate(vals), (np.concatenate(rows_i), np.concatenate(cols))),
                   shape=(n_rows, len(st))).tocsr()  # duplicates (i == j) are summed
    w = prior_weights(K, C, p_correct)
    # scipy accepts a sparse A_ub (HiGHS reads it as is); its stubs only list dense arrays
    res = linprog(-w, A_ub=cast(Any, A), b_ub=np.concatenate(rhs), bounds=(0.0, 1.0), method="highs")
    if res.status != 0 or res.x is None:
        raise SolveError(f"top-two plurality LP for K={K}, C={C}, eps={eps}, delta={delta}: {res.message}")
    gamma = np.clip(res.x, 0.0, 1.0)
    worst = max_divergence(gamma, K, C, eps, pairs)
    scale = 1.0
    if worst + ROUNDING_MARGIN > delta:  # convexity: HS(λγ) ≤ λ HS(γ)
        scale = (delta - ROUNDING_MARGIN) / worst
        gamma = gamma * scale
        worst = max_divergence(gamma, K, C, eps, pairs)
    if worst + ROUNDING_MARGIN > delta:
        raise SolveError(f"top-two plurality γ for K={K}, C={C} not certified: divergence {worst} > delta {delta}")
    # proven gap to the LP optimum: the certified table is the LP solution times `scale`, so its
    # objective is scale·(LP objective); the LP optimum bounds every table the reduction admits
    info = {"states": len(st), "rows": int(n_rows), "scale": scale, "p_correct": p_correct,
            "lp_objective": -float(cast(float, res.fun)), "gap_to_lp_optimum": float(w @ (res.x - gamma))}
    return TopTwoTable(K, C, eps, delta, gamma, worst, float(1.0 / C + w @ gamma), info)


def release_plurality(votes: object, table: TopTwoTable, rng: np.random.Generator | int | None) -> np.ndarray:
    """Labels M_γ releases for each row of ``votes`` (Q, K) with class labels in 0..C−1.

    The votes are validated as :func:`darrm.aggregate` validates its 0/1 votes
    (:func:`darrm.mechanism.class_votes`): a vote that is no class 0..C−1 would otherwise be
    released as a label outside the C outputs the (ε, δ) claim is about.

    Args:
        votes: teacher votes per query, at least one query.
        table: the certified γ.
        rng: the mechanism's randomness (fresh per query): a numpy Generator or a seed.

    Returns:
        One released class per query.

    Raises:
        ParameterError: ``table`` is no :class:`TopTwoTable`; ``votes`` is not a ``(Q, table.K)``
            matrix of integers in 0..C−1 with Q ≥ 1 (ragged rows, floats, negative or too large
            labels); ``rng`` is no Generator or seed.
    """
    instance("table", table, TopTwoTable, "a TopTwoTable (solve_top_two)")
    votes = class_votes(votes, table.K, table.C, min_queries=1)
    rng = generator("rng", rng)
    hist = histograms_of(votes, table.C)
    order = np.sort(hist, axis=1)
    t, s = order[:, -1], order[:, -2]
    g = table.lookup(t, s)
    top = hist.argmax(axis=1)
    keep = rng.random(len(votes)) < g
    return np.where(keep, top, rng.integers(table.C, size=len(votes)))

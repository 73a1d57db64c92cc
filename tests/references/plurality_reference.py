"""Test reference: the C-class plurality aggregator by brute force over every histogram (small K and C).

The product module is :mod:`darrm.experiments.pate.plurality_top_two` (any K); its tests and those of
:mod:`darrm.experiments.pate.plurality_profile` check it against this one.

Setting.  K teachers, each trained on its own disjoint shard, vote one of C classes; the vote
histogram n ∈ ℕ^C has Σ n = K.  Changing one training record changes one teacher's vote: the
neighbours of n are n − e_a + e_b (a ≠ b, n_a ≥ 1), one vote moved from class a to class b.

Mechanism M_γ.  With t ≥ s the two largest counts of n (s = t when the top is tied), M_γ releases
the plurality class argmax n with probability γ(t, s), else a uniformly random class; at a tie
(t = s) γ is 0 by definition (no class is singled out), so M_γ never breaks a tie.  Thus

    Pr[M_γ(n) = c] = γ(t, s)·[c = argmax n] + (1 − γ(t, s))/C.

Claim (privacy rows are linear in γ).  M_γ is (ε, δ)-DP with respect to moving one vote iff for every
histogram n and every move n → n′,

    Σ_c max(0, Pr[M_γ(n) = c] − e^ε Pr[M_γ(n′) = c]) ≤ δ          (hockey-stick divergence)

(the move n′ → n is itself a move, so both directions are covered).  Each term inside the max is
affine in the two values γ(t, s), γ(t′, s′), so with one auxiliary u_c ≥ 0 per output and pair,
u_c ≥ Pr[M(n) = c] − e^ε Pr[M(n′) = c], Σ_c u_c ≤ δ, the feasible set is a polyhedron in γ: a linear
program.  Proof: the hockey-stick divergence is the supremum over output sets S of
Pr[M(n) ∈ S] − e^ε Pr[M(n′) ∈ S], attained at S = {c : Pr[M(n) = c] > e^ε Pr[M(n′) = c]}, which the
positive parts sum; DP is this bound for every neighbouring pair (Dwork & Roth 2014, Definition 2.4).

Scope of this module.  Rows are enumerated over **every histogram** (C(K + C − 1, C − 1) of them), not
reduced to the O(K²) move types of the (t, s) pairs (that reduction, for K = 250, is
:mod:`.plurality_top_two`, whose tests use this module as the brute force); so it is for small K
and C only.  The solution is
certified by :func:`max_hockey_stick`, which recomputes every output distribution from scratch and
takes the exact divergence over every move in 40-digit arithmetic, and then scaled into feasibility:
the divergence is convex in γ and 0 at γ ≡ 0, so HS(λγ) ≤ λ·HS(γ) for λ ∈ [0, 1] and
λ = min(1, δ / max HS) makes every pair satisfy the bound.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import mpmath
import numpy as np

from darrm.errors import ParameterError, SolveError
from darrm.validation import count, non_negative, open_unit

__all__ = ["PluralityTable", "histograms", "max_hockey_stick", "moves", "output_distribution", "plurality_agreement",
           "solve_plurality", "top_two"]


def histograms(K: int, C: int) -> list[tuple[int, ...]]:
    """Every vote histogram of K votes over C classes (compositions of K into C parts).

    Args:
        K: number of votes.
        C: number of classes (at least 2).

    Returns:
        The C(K + C − 1, C − 1) histograms, each a C-tuple of counts summing to K.

    Raises:
        ParameterError: ``K`` or ``C`` is not a valid count (naming it).
    """
    K, C = count("K", K), count("C", C, minimum=2)
    out = []
    for bars in itertools.combinations(range(K + C - 1), C - 1):
        edges = (-1, *bars, K + C - 1)
        out.append(tuple(edges[i + 1] - edges[i] - 1 for i in range(C)))
    return out


def top_two(n: tuple[int, ...]) -> tuple[int, int]:
    """(t, s): the largest count and the second largest (equal to t when the top is tied).

    Args:
        n: a vote histogram (at least two classes).

    Returns:
        ``(t, s)`` with t ≥ s.

    Raises:
        IndexError: ``n`` has fewer than two counts.
    """
    a = sorted(n, reverse=True)
    return a[0], a[1]


def output_distribution(n: tuple[int, ...], gamma: dict[tuple[int, int], float]) -> list[float]:
    """Pr[M_γ(n) = c] for every class c (γ read at (t, s); 0 at a tie).

    With probability γ(t, s) M_γ releases the plurality class, otherwise a uniformly random class.

    Args:
        n: a vote histogram.
        gamma: γ(t, s) for every top-two pair with t > s.

    Returns:
        The C release probabilities (summing to 1).

    Raises:
        KeyError: ``gamma`` lacks the histogram's strict top-two pair.
    """
    t, s = top_two(n)
    C = len(n)
    g = 0.0 if t == s else float(gamma[(t, s)])
    p = [(1.0 - g) / C] * C
    p[n.index(t)] += g
    return p


def moves(n: tuple[int, ...]):
    for a, b in itertools.permutations(range(len(n)), 2):
        if n[a] >= 1:
            m = list(n)
            m[a] -= 1
            m[b] += 1
            yield tuple(m)


def max_hockey_stick(gamma: dict[tuple[int, int], float], K: int, C: int, eps: float) -> float:
    """max over every histogram n and every one-vote move n → n′ of Σ_c (P_n(c) − e^ε P_n′(c))₊ (40 digits).

    Args:
        gamma: γ(t, s) for every top-two pair with t > s.
        K: number of teachers.
        C: number of classes.
        eps: ε ≥ 0.

    Returns:
        The largest hockey-stick divergence (the smallest δ for which M_γ is (ε, δ)-DP).

    Raises:
        ParameterError: a negative ``eps`` or a bad ``K`` or ``C`` (naming it).
        KeyError: ``gamma`` lacks a strict top-two pair of some histogram.
    """
    eps = non_negative("eps", eps)
    with mpmath.workdps(40):
        e = mpmath.exp(mpmath.mpf(eps))
        worst = mpmath.mpf(0)
        for n in histograms(K, C):
            t, s = top_two(n)
            g = mpmath.mpf(0) if t == s else mpmath.mpf(gamma[(t, s)])
            p = [(1 - g) / C + (g if c == n.index(t) else 0) for c in range(C)]
            for m in moves(n):
                t2, s2 = top_two(m)
                g2 = mpmath.mpf(0) if t2 == s2 else mpmath.mpf(gamma[(t2, s2)])
                q = [(1 - g2) / C + (g2 if c == m.index(t2) else 0) for c in range(C)]
                hs = mpmath.fsum(max(mpmath.mpf(0), pc - e * qc) for pc, qc in zip(p, q, strict=True))
                worst = max(worst, hs)
        return float(worst)


@dataclass(frozen=True)
class PluralityTable:
    """A certified γ(t, s) for the plurality aggregator.

    Attributes:
        K: number of teachers.
        C: number of classes.
        eps: per-query ε.
        delta: per-query δ.
        gamma: γ(t, s) for every top-two pair with t > s.
        objective: Pr[release = argmax of the histogram] under the prior (1/C at ties).
        max_divergence: the certified max hockey-stick divergence, ≤ ``delta``.
    """

    K: int
    C: int
    eps: float
    delta: float
    gamma: dict[tuple[int, int], float]
    objective: float  # Pr[release = argmax of the histogram] under the prior (1/C at ties)
    max_divergence: float  # certified max hockey-stick divergence, ≤ delta


def _prior_weights(K: int, C: int, p_correct: float) -> dict[tuple[int, ...], float]:
    """Multinomial prior: each teacher votes class 0 with probability p, another class uniformly."""
    probs = [p_correct] + [(1.0 - p_correct) / (C - 1)] * (C - 1)
    out = {}
    for n in histograms(K, C):
        logw = math.lgamma(K + 1) + sum(c * math.log(pc) - math.lgamma(c + 1) for c, pc in zip(n, probs, strict=True))
        out[n] = math.exp(logw)
    return out


def solve_plurality(K: int, C: int, eps: float, delta: float, p_correct: float = 0.7) -> PluralityTable:
    """The γ(t, s) maximising Pr[release = plurality] under a multinomial prior, subject to (ε, δ)-DP.

    Args:
        K: teachers (small: the rows enumerate every histogram).
        C: classes.
        eps: ε ≥ 0 per query.
        delta: δ ∈ (0, 1) per query.
        p_correct: the prior's probability that a teacher votes the true class 0.

    Returns:
        A :class:`PluralityTable` certified by :func:`max_hockey_stick` (scaled into feasibility).

    Raises:
        ParameterError: bad K, C, ε, δ or prior.
        SolveError: HiGHS did not return an optimal solution.
    """
    import cvxpy as cp

    K, C = count("K", K), count("C", C, minimum=2)
    eps, delta = non_negative("eps", eps), open_unit("delta", delta)
    p_correct = open_unit("p_correct", p_correct)
    hs = histograms(K, C)
    pairs = sorted({top_two(n) for n in hs if top_two(n)[0] > top_two(n)[1]})
    if not pairs:
        raise ParameterError("K", f"no histogram of K={K} votes over C={C} classes has a strict plurality")
    index = {ts: i for i, ts in enumerate(pairs)}
    g = cp.Variable(len(pairs))
    e = math.exp(eps)

    def affine(n: tuple[int, ...], c: int):
        t, s = top_two(n)
        if t == s:
            return None, 1.0 / C  # coefficient index, constant
        return (index[(t, s)], (1.0 if c == n.index(t) else 0.0) - 1.0 / C), 1.0 / C

    constraints = [g >= 0, g <= 1]
    for n in hs:
        for m in moves(n):
            terms = []
            for c in range(C):
                (a1, const1), (a2, const2) = affine(n, c), affine(m, c)
                expr = const1 - e * const2
                if a1 is not None:
                    expr = expr + a1[1] * g[a1[0]]
                if a2 is not None:
                    expr = expr - e * a2[1] * g[a2[0]]
                terms.append(expr)
            u = cp.Variable(C, nonneg=True)
            constraints += [u[c] >= terms[c] for c in range(C)] + [cp.sum(u) <= delta]
    w = _prior_weights(K, C, p_correct)
    weight = np.zeros(len(pairs))
    for n, wn in w.items():
        t, s = top_two(n)
        if t > s:
            weight[index[(t, s)]] += wn * (1.0 - 1.0 / C)
    problem = cp.Problem(cp.Maximize(weight @ g), constraints)
    problem.solve(solver=cp.HIGHS)
    if problem.status != cp.OPTIMAL or g.value is None:
        raise SolveError(f"plurality LP for K={K}, C={C}: HiGHS status {problem.status}")
    gamma = {ts: float(min(1.0, max(0.0, v))) for ts, v in zip(pairs, g.value, strict=True)}
    worst = max_hockey_stick(gamma, K, C, eps)
    if worst > delta:  # convexity: HS(λγ) ≤ λ HS(γ)
        lam = delta / worst * (1.0 - 1e-12)
        gamma = {k: v * lam for k, v in gamma.items()}
        worst = max_hockey_stick(gamma, K, C, eps)
    if worst > delta:
        raise SolveError(f"plurality γ for K={K}, C={C} not certified: divergence {worst} > delta {delta}")
    return PluralityTable(K, C, eps, delta, gamma, plurality_agreement(gamma, K, C, p_correct), worst)


def plurality_agreement(gamma: dict[tuple[int, int], float], K: int, C: int, p_correct: float = 0.7) -> float:
    """Pr[M_γ(n) = argmax n] under the multinomial prior of :func:`solve_plurality` (1/C at ties).

    Args:
        gamma: γ(t, s) for every top-two pair with t > s.
        K: number of teachers.
        C: number of classes.
        p_correct: the prior's probability that a teacher votes the true class 0.

    Returns:
        The probability, in [1/C, 1].

    Raises:
        ParameterError: a bad ``K`` or ``C`` (naming it).
        KeyError: ``gamma`` lacks a strict top-two pair of some histogram.
    """
    return float(sum(wn * output_distribution(n, gamma)[n.index(max(n))]
                     for n, wn in _prior_weights(K, C, open_unit("p_correct", p_correct)).items()))

"""Q rounds of shuffled randomised-response votes: their total central privacy.

Composes one round (:mod:`darrm.accounting.votes.one_round`) over Q adaptive queries, either
through the count's own privacy-loss distribution (:mod:`darrm.accounting.votes.pld`, tight) or
by optimal composition of the per-query (ε, δ) (generic); and inverts the total for the largest
local budget ε0 meeting a target.  Totals are at δ_total = 1 − (1−δ)^Q(1−δ′)
(:func:`darrm.numerics.delta.composed_delta`).  Neighbouring relation: ``REPLACE_ONE``.
"""

from __future__ import annotations

from dataclasses import dataclass

from darrm import validation as v
from darrm.errors import ParameterError
from darrm.numerics.delta import composed_delta, per_step_delta
from darrm.numerics.inversion import inverse_monotone

from .. import composition
from .one_round import NEIGHBORING_RELATION, ShuffledBinaryRR, per_query_epsilon
from .pld import rounds_epsilon


@dataclass(frozen=True)
class VotesGuarantee:
    """Central guarantee of Q rounds of shuffled ε0-RR votes from K members.

    ``eps_total`` composes the count's own privacy-loss distribution
    (:mod:`darrm.accounting.votes.pld`, valid for adaptive queries); ``eps_total_generic``
    composes the per-query (ε, δ) (:func:`compose_queries`), both at ``delta_total``.
    """

    K: int
    eps0: float
    queries: int
    eps_query: float
    delta_query: float
    eps_total: float
    delta_total: float
    worst_n1: int
    eps_total_generic: float
    neighboring_relation = NEIGHBORING_RELATION

    def to_dict(self) -> dict:
        return dict(self.__dict__)


def compose_queries(eps: float, delta: float, queries: int, delta_prime: float) -> tuple[float, float]:
    """Q-fold composition of an (ε, δ)-DP query: exact optimal composition
    (:func:`darrm.accounting.composition.optimal_homogeneous_epsilon`) at
    δ_total = 1 − (1−δ)^Q(1−δ′); Q = 1 returns (ε, δ) unchanged.

    Valid for any (ε, δ)-DP query but loose for the shuffled count: prefer
    :func:`tight_total_epsilon`, which composes the count's privacy-loss distribution."""
    queries = v.count("queries", queries)
    if queries == 1:
        return eps, delta
    delta_prime = v.open_unit("delta_prime", delta_prime)
    delta_total = composed_delta(delta, queries, delta_prime)
    if eps == 0.0:  # Q-fold composition of (0, δ)-DP is (0, 1−(1−δ)^Q)-DP
        return 0.0, delta_total
    return composition.optimal_homogeneous_epsilon(eps, delta, queries, delta_total), delta_total


def tight_total_epsilon(K: int, eps0: float, queries: int, delta_total: float) -> float:
    """ε of Q (adaptive) rounds of shuffled binary ε0-RR votes at total δ: exact per-query ε for
    Q = 1, else the composed dominating PLD (:func:`darrm.accounting.votes.pld.rounds_epsilon`).

    Args:
        K: the number of members (voters).
        eps0: each vote's randomized-response ε0 (> 0).
        queries: the number Q of rounds.
        delta_total: the total δ, in (0, 1).

    Returns:
        The total ε.

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    queries = v.count("queries", queries)
    delta_total = v.open_unit("delta_total", delta_total)
    if queries == 1:
        return ShuffledBinaryRR(K, eps0).epsilon(delta_total)
    return rounds_epsilon(K, eps0, queries, delta_total)


def shuffled_votes_guarantee(
    K: int, eps0: float, delta: float, queries: int = 1, delta_prime: float | None = None
) -> VotesGuarantee:
    """Per-query exact (ε, δ) of the shuffled count and its Q-fold total at
    δ_total = 1 − (1−δ)^Q(1−δ′) (δ′ defaults to δ): tight (PLD) and generic (per-query) composition.

    Args:
        K: the number of members (voters).
        eps0: each vote's randomized-response ε0 (> 0).
        delta: the per-query δ, in (0, 1).
        queries: the number Q of rounds.
        delta_prime: the composition's slack δ′ (None: ``delta``).

    Returns:
        The per-query (ε, δ) and the Q-fold totals (tight and generic).

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    m = ShuffledBinaryRR(K, eps0)
    delta = v.open_unit("delta", delta)
    queries = v.count("queries", queries)
    if delta_prime is not None:  # checked even for Q = 1, where it is not used
        delta_prime = v.open_unit("delta_prime", delta_prime)
    eq = m.epsilon(delta)
    eg, dt = compose_queries(eq, delta, queries, delta if delta_prime is None else delta_prime)
    et = eq if queries == 1 else min(eg, tight_total_epsilon(m.K, m.eps0, queries, dt))
    return VotesGuarantee(m.K, m.eps0, int(queries), eq, delta, et, dt, m.worst_n1(eq), eg)


def largest_eps0(
    K: int, target_eps: float, target_delta: float, queries: int = 1, *, classes: int = 2,
    eps0_max: float = 50.0, rel_tol: float = 1e-9,
) -> float:
    """Largest ε0 (to within ``rel_tol`` relative, rounded down) for which Q rounds of shuffled
    ε0-RR votes over ``classes`` classes from K members are (target_eps, target_delta)-DP.

    Binary votes (``classes`` = 2): the total is :func:`tight_total_epsilon` at δ = target_delta
    (exact for Q = 1, composed dominating PLD for Q > 1).  k-ary votes: per-query ε from
    :func:`~darrm.accounting.votes.one_round.per_query_epsilon` composed by
    :func:`compose_queries` with δ′ = target_delta/2 and per-query δ_q such that
    1 − (1−δ_q)^Q(1−δ′) = target_delta.  Privacy only decreases with ε0 (RR with a smaller ε0
    is a post-processing of each report), so the total is increasing in ε0 and
    :func:`darrm.numerics.inversion.inverse_monotone` applies (bracket grown or shrunk by
    factors of 2 from min(target_eps, eps0_max) within [1e-9, eps0_max], then bisection); the
    returned ε0 is checked to satisfy the target.

    Args:
        K: the number of members (voters).
        target_eps: the target total ε (> 0).
        target_delta: the target total δ, in (0, 1).
        queries: the number Q of rounds.
        classes: the number of classes (2: binary votes).
        eps0_max: the largest ε0 searched.
        rel_tol: the relative tolerance of the search.

    Returns:
        The largest ε0 (rounded down) meeting the target.

    Raises:
        ParameterError: a parameter is out of range (named).
    """
    target_eps = v.epsilon("target_eps", target_eps)
    target_delta = v.open_unit("target_delta", target_delta)
    queries = v.count("queries", queries)
    classes = v.count("classes", classes, minimum=2)
    K = v.count("K", K)
    eps0_max = v.epsilon("eps0_max", eps0_max)
    rel_tol = v.open_unit("rel_tol", rel_tol)
    if queries == 1:
        dq, dprime = target_delta, target_delta
    else:
        dprime = target_delta / 2.0
        dq = per_step_delta(target_delta, queries, dprime)

    def total(e0: float) -> float:
        if classes == 2:
            return tight_total_epsilon(K, e0, queries, target_delta)
        eq, _ = per_query_epsilon(K, e0, dq, classes)
        return compose_queries(eq, dq, queries, dprime)[0]

    x = min(target_eps, eps0_max)  # ε0 ≤ target ε is enough when Q = 1 (post-processing)
    return inverse_monotone(total, target_eps, x, x, increasing=True, method="bisect", xtol=rel_tol,
                            rtol=rel_tol, expand=2.0, limits=(1e-9, eps0_max),
                            name="target_eps")


def account_votes(K: int, eps0: float | None, delta: float, classes: int = 2, queries: int = 1,
                  target_eps: float | None = None, target_delta: float | None = None) -> dict:
    """Everything ``darrm account-votes`` prints, as a record (also its ``--json`` output).

    Per-query (ε, δ) (exact for binary RR, best valid shuffle bound for k-RR), the total over
    ``queries`` (binary: composed privacy-loss distribution; k-ary: optimal composition) and,
    with ``target_eps``, the largest ε0 meeting (target ε, target δ) over the queries.  The
    target's total δ defaults to δ for Q = 1, else 1 − (1−δ)^Q·(1−δ′) with δ′ = δ.
    """
    if eps0 is None and target_eps is None:
        raise ParameterError("eps0", "give --eps0, --target-eps, or both")
    out: dict = {"K": K, "classes": classes, "Q": queries, "delta_query": delta}
    if eps0 is not None:
        eq, method = per_query_epsilon(K, eps0, delta, classes)
        eg, dt = compose_queries(eq, delta, queries, delta)
        et, how = eg, "optimal composition of the per-query (eps, delta)"
        if classes == 2 and queries > 1:
            et, how = min(eg, tight_total_epsilon(K, eps0, queries, dt)), "composed privacy-loss distribution"
        out.update(eps0=eps0, method=method, eps_query=eq, eps_total=et, delta_total=dt,
                   eps_total_generic=eg, composition=how)
    if target_eps is not None:
        if target_delta is None:
            target_delta = delta if queries == 1 else composed_delta(delta, queries, delta)
        out.update(target_eps=target_eps, target_delta=target_delta,
                   largest_eps0=largest_eps0(K, target_eps, target_delta, queries, classes=classes))
    return out

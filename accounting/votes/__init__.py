"""darrm.accounting.votes: shuffled randomised-response votes (one round, Q rounds, dominating PLD).

:mod:`.one_round` — the exact privacy of one round; :mod:`.pld` — its dominating privacy-loss
distribution; :mod:`.rounds` — Q rounds (tight and generic totals) and the largest ε0 for a
target.  Dependencies run one way: rounds → pld → one_round.
"""

from .one_round import NEIGHBORING_RELATION, ShuffledBinaryRR, per_query_epsilon
from .pld import dominating_pld, rounds_delta, rounds_epsilon
from .rounds import (
    VotesGuarantee,
    account_votes,
    compose_queries,
    largest_eps0,
    shuffled_votes_guarantee,
    tight_total_epsilon,
)

__all__ = [
    "NEIGHBORING_RELATION",
    "ShuffledBinaryRR",
    "VotesGuarantee",
    "account_votes",
    "compose_queries",
    "dominating_pld",
    "largest_eps0",
    "per_query_epsilon",
    "rounds_delta",
    "rounds_epsilon",
    "shuffled_votes_guarantee",
    "tight_total_epsilon",
]

"""darrm.accounting.shuffle: privacy amplification by shuffling, every published bound in one API.

Start with :func:`best_upper_bound` and :func:`all_bounds`; see ``docs/shuffle.md``.
Neighbouring relation: replace-one (:data:`NEIGHBORING_RELATION`).
"""

from .best import METHODS, all_bounds, best_upper_bound, bound_records, randomizer_for
from .bound import NEIGHBORING_RELATION, Bound, NotApplicable
from .calibration import central_epsilon, eps0_for_target
from .composition import ShuffleRound, rounds_epsilon
from .randomizers import (
    FiniteRandomizer,
    GenericLDP,
    RandomizedResponse,
    joint,
    parallel,
)

__all__ = [
    "METHODS",
    "NEIGHBORING_RELATION",
    "Bound",
    "FiniteRandomizer",
    "GenericLDP",
    "NotApplicable",
    "RandomizedResponse",
    "ShuffleRound",
    "all_bounds",
    "best_upper_bound",
    "bound_records",
    "central_epsilon",
    "eps0_for_target",
    "joint",
    "parallel",
    "randomizer_for",
    "rounds_epsilon",
]

"""darrm.accounting.shuffle: privacy amplification by shuffling, every published bound in one API.

Start with :func:`best_upper_bound` and :func:`all_bounds`; see ``docs/shuffle.md``.
Neighbouring relation: replace-one (:data:`NEIGHBORING_RELATION`).
"""

from .best import METHODS, all_bounds, best_upper_bound, bound_records, randomizer_for
from .bound import NEIGHBORING_RELATION, Bound
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
    "RandomizedResponse",
    "all_bounds",
    "best_upper_bound",
    "bound_records",
    "joint",
    "parallel",
    "randomizer_for",
]

"""darrm.accounting.shuffle: privacy amplification by shuffling, every published bound in one API.

Start with :func:`darrm.accounting.shuffle.best.all_bounds` and
:func:`darrm.accounting.shuffle.best.best_upper_bound`; see ``docs/shuffle.md``.
"""

from .bound import Bound
from .randomizers import FiniteRandomizer, GenericLDP, RandomizedResponse, joint, parallel

__all__ = [
    "Bound",
    "FiniteRandomizer",
    "GenericLDP",
    "RandomizedResponse",
    "joint",
    "parallel",
]

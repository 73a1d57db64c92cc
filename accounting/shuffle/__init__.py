"""darrm.accounting.shuffle: privacy amplification by shuffling, every published bound in one API.

Start with :func:`best_upper_bound` and :func:`all_bounds`; see ``docs/shuffle.md``.
Common randomizers (:func:`rappor`, :func:`oue`, :func:`hadamard_response`, :func:`asymmetric_rr`)
and :func:`poisson_subsampled` build :class:`FiniteRandomizer` values; the Laplace randomizer over
{0, 1} is bracketed by :func:`laplace_dominating` (upper) and :func:`laplace_binned` (lower);
:func:`parse_randomizer` reads ``darrm shuffle --randomizer`` specs.
Neighbouring relation: replace-one (:data:`NEIGHBORING_RELATION`).
"""

from .best import METHODS, all_bounds, best_upper_bound, bound_records, randomizer_for
from .bound import NEIGHBORING_RELATION, Bound, NotApplicable
from .calibration import central_epsilon, eps0_for_target
from .common_randomizers import (
    asymmetric_rr,
    hadamard_response,
    oue,
    poisson_subsampled,
    rappor,
    unary_encoding,
)
from .composition import ShuffleRound, rounds_epsilon
from .laplace import laplace_binned, laplace_dominating
from .randomizer_spec import RandomizerSpec, parse_randomizer
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
    "RandomizerSpec",
    "ShuffleRound",
    "all_bounds",
    "asymmetric_rr",
    "best_upper_bound",
    "bound_records",
    "central_epsilon",
    "eps0_for_target",
    "hadamard_response",
    "joint",
    "laplace_binned",
    "laplace_dominating",
    "oue",
    "parallel",
    "parse_randomizer",
    "poisson_subsampled",
    "randomizer_for",
    "rappor",
    "rounds_epsilon",
    "unary_encoding",
]

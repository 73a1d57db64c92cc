"""darrm.accounting.shuffle: privacy amplification by shuffling, every published bound in one API.

Start with :func:`best_upper_bound` and :func:`all_bounds`; see ``docs/shuffle.md``.
Common randomizers (:func:`rappor`, :func:`oue`, :func:`hadamard_response`, :func:`asymmetric_rr`)
and :func:`poisson_subsampled` build :class:`FiniteRandomizer` values; the Laplace randomizer over
{0, 1} is bracketed by :func:`laplace_dominating` (upper) and :func:`laplace_binned` (lower);
:func:`parse_randomizer` reads ``darrm shuffle --randomizer`` specs.
Multi-message protocols (one input-dependent message and blanket messages per user:
:class:`MultiMessageProtocol`, :func:`binary_sum`, :func:`uniform_blankets`,
:func:`multi_message_bounds`) and metric local privacy (:class:`MetricRandomizer`,
:func:`geometric_line`, :func:`geometric_grid`, :func:`pair_bounds`, :func:`distance_profile`)
have their own upper and lower bounds (:func:`protocol_records` for ``darrm shuffle``).
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
from .metric_ldp import DistanceBound, MetricRandomizer, distance_profile, geometric_grid, geometric_line, pair_bounds
from .multi_message import MultiMessageProtocol, binary_sum, uniform_blankets
from .multi_message import bounds as multi_message_bounds
from .protocol_bounds import protocol_records
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
    "DistanceBound",
    "FiniteRandomizer",
    "GenericLDP",
    "MetricRandomizer",
    "MultiMessageProtocol",
    "NotApplicable",
    "RandomizedResponse",
    "RandomizerSpec",
    "ShuffleRound",
    "all_bounds",
    "asymmetric_rr",
    "best_upper_bound",
    "binary_sum",
    "bound_records",
    "central_epsilon",
    "distance_profile",
    "eps0_for_target",
    "geometric_grid",
    "geometric_line",
    "hadamard_response",
    "joint",
    "laplace_binned",
    "laplace_dominating",
    "multi_message_bounds",
    "oue",
    "pair_bounds",
    "parallel",
    "parse_randomizer",
    "poisson_subsampled",
    "protocol_records",
    "randomizer_for",
    "rappor",
    "rounds_epsilon",
    "unary_encoding",
    "uniform_blankets",
]

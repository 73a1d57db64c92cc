"""darrm.accounting: privacy accounting for private majority ensembles.

The everyday API, importable from here (``from darrm.accounting import best_upper_bound``):

* composition of (ε, δ)-DP mechanisms — :func:`simple`, :func:`advanced_dwork_roth`,
  :func:`kairouz_general` (the paper's Theorem 2.3), :func:`optimal_homogeneous_epsilon` /
  :func:`optimal_homogeneous_delta` (exact), :func:`heterogeneous_pld`, :func:`parallel`;
* DP-SGD teachers (add/remove-one adjacency) — :class:`DPSGDRun`, :func:`dpsgd_epsilon`,
  :func:`noise_multiplier_for`;
* GNMax — :func:`calibrate_sigma`, :func:`gnmax_epsilon`, :func:`data_dependent_rdp`;
* privacy amplification by shuffling (replace-one adjacency) — :func:`best_upper_bound`,
  :func:`all_bounds`, :class:`Bound`, the randomizers :class:`GenericLDP`,
  :class:`RandomizedResponse`, :class:`FiniteRandomizer`;
* shuffled randomised-response votes — :class:`ShuffledBinaryRR` (one round),
  :func:`shuffled_votes_guarantee`, :func:`largest_eps0`, :func:`tight_total_epsilon` (Q rounds);
* the paper's tables — :func:`paper_tables`;
* a budgeted labelling session over a certified γ table — :class:`LabellingSession`
  (:class:`PrivacyBudgetExceeded` when a batch would overspend);
* :class:`NeighboringRelation` (dp_accounting's), stated by each result where it matters.

Submodules hold the rest: :mod:`.composition`, :mod:`.dpsgd`, :mod:`.gnmax`, :mod:`.shuffle`,
:mod:`.votes`, :mod:`.paper`, :mod:`.disjoint`, :mod:`.session`; :mod:`.cli` are the command lines.
Layering: darrm.experiments → darrm.accounting → darrm (core), never back.
"""

from darrm.neighboring import NeighboringRelation

from .composition import (
    advanced_dwork_roth,
    heterogeneous_pld,
    kairouz_general,
    optimal_homogeneous_delta,
    optimal_homogeneous_epsilon,
    parallel,
    simple,
)
from .disjoint import teacher_majority_budget
from .dpsgd import DPSGDRun, noise_multiplier_for
from .dpsgd import epsilon as dpsgd_epsilon
from .gnmax import calibrate_sigma, data_dependent_rdp
from .gnmax import epsilon as gnmax_epsilon
from .paper import tables as paper_tables
from .session import LabellingSession, PrivacyBudgetExceeded
from .shuffle import (
    Bound,
    FiniteRandomizer,
    GenericLDP,
    RandomizedResponse,
    all_bounds,
    best_upper_bound,
)
from .votes import (
    ShuffledBinaryRR,
    largest_eps0,
    shuffled_votes_guarantee,
    tight_total_epsilon,
)

__all__ = [
    "Bound",
    "DPSGDRun",
    "FiniteRandomizer",
    "GenericLDP",
    "LabellingSession",
    "NeighboringRelation",
    "PrivacyBudgetExceeded",
    "RandomizedResponse",
    "ShuffledBinaryRR",
    "advanced_dwork_roth",
    "all_bounds",
    "best_upper_bound",
    "calibrate_sigma",
    "data_dependent_rdp",
    "dpsgd_epsilon",
    "gnmax_epsilon",
    "heterogeneous_pld",
    "kairouz_general",
    "largest_eps0",
    "noise_multiplier_for",
    "optimal_homogeneous_delta",
    "optimal_homogeneous_epsilon",
    "paper_tables",
    "parallel",
    "shuffled_votes_guarantee",
    "simple",
    "teacher_majority_budget",
    "tight_total_epsilon",
]

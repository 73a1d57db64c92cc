"""darrm.accounting: privacy accounting for private majority ensembles.

The everyday API, importable from here (``from darrm.accounting import best_upper_bound``):

* composition of (ε, δ)-DP mechanisms — :func:`simple`, :func:`advanced_dwork_roth`,
  :func:`kairouz_general` (the paper's Theorem 2.3), :func:`optimal_homogeneous_epsilon` /
  :func:`optimal_homogeneous_delta` (exact), :func:`heterogeneous_pld`, :func:`parallel`;
* DP-SGD teachers (add/remove-one adjacency) — :class:`DPSGDRun`, :func:`dpsgd_epsilon`,
  :func:`noise_multiplier_for`;
* GNMax — :func:`calibrate_sigma`, :func:`gnmax_epsilon`, :func:`data_dependent_rdp`,
  :func:`confident_gnmax_epsilon` (Confident-GNMax, data-independent and data-dependent);
* privacy amplification by shuffling (replace-one adjacency) — :func:`best_upper_bound`,
  :func:`all_bounds`, :class:`Bound`, the randomizers :class:`GenericLDP`,
  :class:`RandomizedResponse`, :class:`FiniteRandomizer`;
* shuffled randomised-response votes — :class:`ShuffledBinaryRR` (one round),
  :func:`shuffled_votes_guarantee`, :func:`largest_eps0`, :func:`tight_total_epsilon` (Q rounds);
* the paper's tables — :func:`paper_tables`;
* total budgets of DaRRM queries through each table's exact privacy profile —
  :func:`composed_epsilon`, :func:`composed_delta`, :class:`QueryAccountant`, :class:`QueryBound`,
  :func:`query_pld` (a dp_accounting PLD to compose with other mechanisms), and each record
  group's own total for records copied into shards, :func:`record_group_bounds`;
* a budgeted labelling session over a certified γ table — :class:`LabellingSession`
  (:class:`PrivacyBudgetExceeded` when a batch would overspend);
* :class:`NeighboringRelation` (dp_accounting's), stated by each result where it matters.

Submodules hold the rest: :mod:`.composition`, :mod:`.dpsgd`, :mod:`.gnmax`, :mod:`.shuffle`,
:mod:`.votes`, :mod:`.paper`, :mod:`.disjoint`, :mod:`.queries`, :mod:`.session`; :mod:`.cli` are the command lines.
Layering: darrm.experiments → darrm.accounting → darrm (core), never back.

Public names are imported on first use (:mod:`darrm._lazy`): ``darrm --help`` and the
accounting subcommands' parsers load no numerical library.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from darrm._lazy import lazy_exports
from darrm.neighboring import NeighboringRelation as NeighboringRelation

if TYPE_CHECKING:  # the same names, eagerly, for type checkers
    from .composition import advanced_dwork_roth as advanced_dwork_roth
    from .composition import heterogeneous_pld as heterogeneous_pld
    from .composition import kairouz_general as kairouz_general
    from .composition import optimal_homogeneous_delta as optimal_homogeneous_delta
    from .composition import optimal_homogeneous_epsilon as optimal_homogeneous_epsilon
    from .composition import parallel as parallel
    from .composition import simple as simple
    from .disjoint import teacher_majority_budget as teacher_majority_budget
    from .dpsgd import DPSGDRun as DPSGDRun
    from .dpsgd import epsilon as dpsgd_epsilon
    from .dpsgd import noise_multiplier_for as noise_multiplier_for
    from .gnmax import calibrate_sigma as calibrate_sigma
    from .gnmax import confident_gnmax_epsilon as confident_gnmax_epsilon
    from .gnmax import data_dependent_rdp as data_dependent_rdp
    from .gnmax import epsilon as gnmax_epsilon
    from .paper import tables as paper_tables
    from .queries import QueryAccountant as QueryAccountant
    from .queries import QueryBound as QueryBound
    from .queries import composed_delta as composed_delta
    from .queries import composed_epsilon as composed_epsilon
    from .queries import query_pld as query_pld
    from .queries import record_group_bounds as record_group_bounds
    from .session import LabellingSession as LabellingSession
    from .session import PrivacyBudgetExceeded as PrivacyBudgetExceeded
    from .shuffle import Bound as Bound
    from .shuffle import FiniteRandomizer as FiniteRandomizer
    from .shuffle import GenericLDP as GenericLDP
    from .shuffle import RandomizedResponse as RandomizedResponse
    from .shuffle import all_bounds as all_bounds
    from .shuffle import best_upper_bound as best_upper_bound
    from .votes import ShuffledBinaryRR as ShuffledBinaryRR
    from .votes import largest_eps0 as largest_eps0
    from .votes import shuffled_votes_guarantee as shuffled_votes_guarantee
    from .votes import tight_total_epsilon as tight_total_epsilon

__all__ = [
    "Bound",
    "DPSGDRun",
    "FiniteRandomizer",
    "GenericLDP",
    "LabellingSession",
    "NeighboringRelation",
    "PrivacyBudgetExceeded",
    "QueryAccountant",
    "QueryBound",
    "RandomizedResponse",
    "ShuffledBinaryRR",
    "advanced_dwork_roth",
    "all_bounds",
    "best_upper_bound",
    "calibrate_sigma",
    "composed_delta",
    "composed_epsilon",
    "confident_gnmax_epsilon",
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
    "query_pld",
    "record_group_bounds",
    "shuffled_votes_guarantee",
    "simple",
    "teacher_majority_budget",
    "tight_total_epsilon",
]

#: public name → defining module (``module:attribute`` where the names differ), imported on first use
_EXPORTS = {
    "advanced_dwork_roth": ".composition",
    "heterogeneous_pld": ".composition",
    "kairouz_general": ".composition",
    "optimal_homogeneous_delta": ".composition",
    "optimal_homogeneous_epsilon": ".composition",
    "parallel": ".composition",
    "simple": ".composition",
    "teacher_majority_budget": ".disjoint",
    "DPSGDRun": ".dpsgd",
    "noise_multiplier_for": ".dpsgd",
    "dpsgd_epsilon": ".dpsgd:epsilon",
    "calibrate_sigma": ".gnmax",
    "confident_gnmax_epsilon": ".gnmax",
    "data_dependent_rdp": ".gnmax",
    "gnmax_epsilon": ".gnmax:epsilon",
    "paper_tables": ".paper:tables",
    "QueryAccountant": ".queries",
    "QueryBound": ".queries",
    "composed_delta": ".queries",
    "composed_epsilon": ".queries",
    "query_pld": ".queries",
    "record_group_bounds": ".queries",
    "LabellingSession": ".session",
    "PrivacyBudgetExceeded": ".session",
    "Bound": ".shuffle",
    "FiniteRandomizer": ".shuffle",
    "GenericLDP": ".shuffle",
    "RandomizedResponse": ".shuffle",
    "all_bounds": ".shuffle",
    "best_upper_bound": ".shuffle",
    "ShuffledBinaryRR": ".votes",
    "largest_eps0": ".votes",
    "shuffled_votes_guarantee": ".votes",
    "tight_total_epsilon": ".votes",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, __all__)

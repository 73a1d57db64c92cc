"""darrm: Data-dependent Randomized Response Majority (Jiang, Zhang, Joshi).

K private mechanisms vote 0/1; the vote count L selects a probability γ(L) of releasing the
true majority, else a fair coin (Algorithm 1).  The everyday API::

    import darrm
    params = darrm.PrivacyParams(K=11, m=3, eps=0.1, member_delta=1e-5)
    table = darrm.solve(params, darrm.IIDPrior(0.75))      # certified γ_opt
    darrm.save(table, "g.json")                             # atomic, checksummed
    labels = darrm.aggregate(votes, darrm.load("g.json"), rng=0)

Accounting (composition, DP-SGD, GNMax, shuffling) is :mod:`darrm.accounting`; the paper's
experiments are :mod:`darrm.experiments`.  The core never imports either.

Public names are imported on first use (:mod:`darrm._lazy`), so ``import darrm`` and the
command line start without numpy/scipy until a name is needed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ._lazy import lazy_exports
from ._version import __version__ as __version__
from .errors import CertificationError as CertificationError
from .errors import DarrmError as DarrmError
from .errors import GammaFileError as GammaFileError
from .errors import MissingDependencyError as MissingDependencyError
from .errors import ParameterError as ParameterError
from .errors import SolveError as SolveError
from .errors import WorkerLostError as WorkerLostError

if TYPE_CHECKING:  # the same names, eagerly, for type checkers
    from .accounting.budget import design_for_budget as design_for_budget
    from .accounting.budget import verify_charged_total as verify_charged_total
    from .api import FAMILIES as FAMILIES
    from .api import certify as certify
    from .api import family_gamma as family_gamma
    from .api import solve as solve
    from .budget.design import BudgetDesign as BudgetDesign
    from .budget.spec import GroupBudgets as GroupBudgets
    from .budget.spec import TotalBudget as TotalBudget
    from .gamma import gamma_const as gamma_const
    from .gamma import gamma_dsub as gamma_dsub
    from .gamma import gamma_sub as gamma_sub
    from .gamma_file import load as load
    from .gamma_file import save as save
    from .models.disjoint.members import ApproxDP as ApproxDP
    from .models.disjoint.members import LocalRR as LocalRR
    from .models.disjoint.members import NonPrivate as NonPrivate
    from .models.disjoint.params import DisjointParams as DisjointParams
    from .models.groups.params import GroupParams as GroupParams
    from .models.groups.params import MemberGroup as MemberGroup
    from .models.profile import privacy_profile as privacy_profile
    from .models.shard_groups.params import RecordGroup as RecordGroup
    from .models.shard_groups.params import ShardGroupParams as ShardGroupParams
    from .models.shard_groups.profile import record_group_profiles as record_group_profiles
    from .models.weighted_shards.params import BudgetGroup as BudgetGroup
    from .models.weighted_shards.params import WeightedShardParams as WeightedShardParams
    from .params import NeighboringRelation as NeighboringRelation
    from .params import PrivacyParams as PrivacyParams
    from .prior import BetaPrior as BetaPrior
    from .prior import DensityPrior as DensityPrior
    from .prior import IIDPrior as IIDPrior
    from .prior import IndependentPrior as IndependentPrior
    from .prior import PaperMCPrior as PaperMCPrior
    from .prior import Prior as Prior
    from .privacy.certify import Certificate as Certificate
    from .privacy.certify import certify_tight as certify_tight
    from .privacy.profile import PrivacyProfile as PrivacyProfile
    from .solver.objective import expected_signed_error as expected_signed_error
    from .solver.options import SolveOptions as SolveOptions
    from .solver.warm_start import WarmStart as WarmStart
    from .status import SolveReport as SolveReport
    from .status import StopReason as StopReason
    from .table import GammaTable as GammaTable
    from .utility import error_curve as error_curve
    from .verification import aggregate as aggregate
    from .verification import aggregate_counts as aggregate_counts

__all__ = [
    "ApproxDP",
    "BetaPrior",
    "BudgetDesign",
    "Certificate",
    "CertificationError",
    "DarrmError",
    "DensityPrior",
    "DisjointParams",
    "FAMILIES",
    "GammaFileError",
    "GammaTable",
    "GroupParams",
    "IIDPrior",
    "IndependentPrior",
    "MemberGroup",
    "LocalRR",
    "MissingDependencyError",
    "NeighboringRelation",
    "NonPrivate",
    "PaperMCPrior",
    "ParameterError",
    "Prior",
    "PrivacyParams",
    "PrivacyProfile",
    "RecordGroup",
    "ShardGroupParams",
    "BudgetGroup",
    "WeightedShardParams",
    "SolveError",
    "SolveOptions",
    "SolveReport",
    "StopReason",
    "GroupBudgets",
    "TotalBudget",
    "WarmStart",
    "WorkerLostError",
    "__version__",
    "aggregate",
    "aggregate_counts",
    "certify",
    "certify_tight",
    "design_for_budget",
    "verify_charged_total",
    "error_curve",
    "expected_signed_error",
    "family_gamma",
    "gamma_const",
    "gamma_dsub",
    "gamma_sub",
    "load",
    "privacy_profile",
    "record_group_profiles",
    "save",
    "solve",
]

#: public name → defining module (``module:attribute`` where the names differ), imported on first use
_EXPORTS = {
    "BudgetDesign": ".budget.design",
    # the design composes over queries, which is the accountant's: the facade (entry floor) may
    # name the layer above the core, the core itself never does (tests/test_layering.py)
    "design_for_budget": "darrm.accounting.budget",
    "verify_charged_total": "darrm.accounting.budget",
    "GroupBudgets": ".budget.spec",
    "TotalBudget": ".budget.spec",
    "ApproxDP": ".models.disjoint.members",
    "LocalRR": ".models.disjoint.members",
    "NonPrivate": ".models.disjoint.members",
    "DisjointParams": ".models.disjoint.params",
    "GroupParams": ".models.groups.params",
    "MemberGroup": ".models.groups.params",
    "RecordGroup": ".models.shard_groups.params",
    "ShardGroupParams": ".models.shard_groups.params",
    "BudgetGroup": ".models.weighted_shards.params",
    "WeightedShardParams": ".models.weighted_shards.params",
    "gamma_const": ".gamma",
    "gamma_dsub": ".gamma",
    "gamma_sub": ".gamma",
    "load": ".gamma_file",
    "save": ".gamma_file",
    "NeighboringRelation": ".params",
    "PrivacyParams": ".params",
    "BetaPrior": ".prior",
    "DensityPrior": ".prior",
    "IIDPrior": ".prior",
    "IndependentPrior": ".prior",
    "PaperMCPrior": ".prior",
    "Prior": ".prior",
    "Certificate": ".privacy.certify",
    "certify_tight": ".privacy.certify",
    "FAMILIES": ".api",
    "family_gamma": ".api",
    "solve": ".api",
    "PrivacyProfile": ".privacy.profile",
    "privacy_profile": ".models.profile",
    "record_group_profiles": ".models.shard_groups.profile",
    "expected_signed_error": ".solver.objective",
    "SolveOptions": ".solver.options",
    "WarmStart": ".solver.warm_start",
    "SolveReport": ".status",
    "StopReason": ".status",
    "GammaTable": ".table",
    "error_curve": ".utility",
    "aggregate": ".verification",
    "aggregate_counts": ".verification",
    "certify": ".api",
}

__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS, __all__)

# library code logs to the "darrm" logger (darrm.logs); the application decides where it goes
logging.getLogger(__name__).addHandler(logging.NullHandler())

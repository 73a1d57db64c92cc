"""darrm: Data-dependent Randomized Response Majority (Jiang, Zhang, Joshi).

K private mechanisms vote 0/1; the vote count L selects a probability γ(L) of releasing the
true majority, else a fair coin (Algorithm 1).  The everyday API::

    import darrm
    params = darrm.PrivacyParams(K=11, m=3, eps=0.1, Delta=1e-5)
    table = darrm.solve(params, darrm.IIDPrior(0.75))      # certified γ_opt
    darrm.save(table, "g.json")                             # atomic, checksummed
    labels = darrm.aggregate(votes, darrm.load("g.json"), rng=0)

Accounting (composition, DP-SGD, GNMax, shuffling) is :mod:`darrm.accounting`; the paper's
experiments are :mod:`darrm.experiments`.  The core never imports either.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .privacy.certify import Certificate as Certificate, certify_tight as certify_tight
from .utility import error_curve as error_curve
from .errors import (
    CertificationError as CertificationError,
    DarrmError as DarrmError,
    GammaFileError as GammaFileError,
    MissingDependencyError as MissingDependencyError,
    ParameterError as ParameterError,
    SolveError as SolveError,
)
from .gamma import gamma_const as gamma_const, gamma_dsub as gamma_dsub, gamma_sub as gamma_sub
from .gamma_file import load as load, save as save
from .solver.gamma_opt import expected_signed_error as expected_signed_error
from .params import NeighboringRelation as NeighboringRelation, PrivacyParams as PrivacyParams
from .disjoint.members import (
    ApproxDP as ApproxDP,
    LocalRR as LocalRR,
    NonPrivate as NonPrivate,
)
from .disjoint.params import DisjointParams as DisjointParams
from .prior import (
    BetaPrior as BetaPrior,
    DensityPrior as DensityPrior,
    IIDPrior as IIDPrior,
    IndependentPrior as IndependentPrior,
    PaperMCPrior as PaperMCPrior,
    Prior as Prior,
)
from .solver.status import StopReason as StopReason
from .solver.api import FAMILIES as FAMILIES, family_gamma as family_gamma, solve as solve
from .solver.options import SolveOptions as SolveOptions
from .table import GammaTable as GammaTable
from .verification import aggregate as aggregate, certify_gamma as certify

__all__ = [
    "ApproxDP",
    "BetaPrior",
    "Certificate",
    "CertificationError",
    "DarrmError",
    "DensityPrior",
    "DisjointParams",
    "FAMILIES",
    "GammaFileError",
    "GammaTable",
    "IIDPrior",
    "IndependentPrior",
    "LocalRR",
    "MissingDependencyError",
    "NeighboringRelation",
    "NonPrivate",
    "PaperMCPrior",
    "ParameterError",
    "Prior",
    "PrivacyParams",
    "SolveError",
    "SolveOptions",
    "StopReason",
    "__version__",
    "aggregate",
    "certify",
    "certify_tight",
    "error_curve",
    "expected_signed_error",
    "family_gamma",
    "gamma_const",
    "gamma_dsub",
    "gamma_sub",
    "load",
    "save",
    "solve",
]

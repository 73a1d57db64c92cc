"""Re-check the total budget a γ table claims (``darrm verify``, :func:`darrm.load`).

Shared members: the Q-fold composition of the table's own profile (:mod:`darrm.budget.compose`).
Members on disjoint shards: the recorded target, re-derived from the table: its certified GDP μ
(:meth:`darrm.budget.cloud.Cloud.gdp_mu`) and the exact composition √Q·μ
(:func:`darrm.budget.targets.gdp_epsilon`), both without an accountant; a table charged by the
accountant's PLD has that total re-computed by :func:`darrm.accounting.budget.verify.verify_charged_total`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import CertificationError, ParameterError
from ..models import model_of
from ..models.disjoint.params import DisjointParams
from ..models.profile import privacy_profile
from ..privacy.profile import PrivacyProfile
from ..table import GammaTable
from ..validation import positive
from .compose import Composition, composed_epsilon
from .spec import TotalBudget

#: recorded and recomputed composed ε may differ by this (relative): the computation is deterministic
#: up to the FFT library's rounding
RECORD_RTOL = 1e-6
#: the accountants a disjoint-members table may be charged by (:mod:`darrm.accounting.budget.disjoint`)
GDP_ACCOUNTANT = "gdp-vertex-certificate"
PLD_ACCOUNTANT = "dominating-pair-pld"


#: most loss-grid points a recorded composition may ask for (ε_total / discretization, and one
#: query's span of privacy losses / discretization): the PLD's support (time and memory of the
#: recomputation) grows with them (a K = 3 table with Q = 10⁶ at
#: discretization 10⁻⁶ took over 200 s and 2.7 GB); the designs record 10⁻⁴, and losses span at most
#: about 1,400 (float64)
MAX_GRID_POINTS = 3 * 10**7


def recorded_budget(table: GammaTable) -> tuple[TotalBudget, dict] | None:
    """(budget, record) of ``table.info["total_budget"]`` (None when the table claims none).

    Raises:
        CertificationError: a malformed record, or one for a member model without the
            ``total-budget`` capability."""
    tb = table.info.get("total_budget")
    if tb is None:
        return None
    try:
        budget = TotalBudget.from_dict(tb)
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    if not model_of(table.params).supports("total-budget"):
        raise CertificationError(f"a total budget is recorded for a {table.params.members} table, whose member model "
                                 "has no 'total-budget' capability")
    if "discretization" in tb:  # its size bounds a recomputation's work: checked before any work
        d = _discretization(tb)
        if budget.epsilon / d > MAX_GRID_POINTS:
            raise CertificationError(f"total_budget.discretization: {d!r} asks for {budget.epsilon / d:.3g} loss-grid "
                                     f"points up to ε_total = {budget.epsilon:g}, more than the "
                                     f"{MAX_GRID_POINTS:.0e} a recomputation may use")
    return budget, tb


def _discretization(tb: dict) -> float:
    try:
        return positive("discretization", tb["discretization"])
    except (KeyError, TypeError, ValueError, ParameterError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None


def verify_disjoint_target(table: GammaTable) -> float:
    """Re-derive a disjoint-members table's certified GDP μ and check the record: the recorded μ is
    not below it, and for a GDP-charged table its exact composition meets the budget and equals the
    recorded total.  Returns the re-derived μ.

    Raises:
        CertificationError: the table does not meet its recorded target or budget."""
    from .cloud import Cloud
    from .targets import gdp_epsilon

    rec = recorded_budget(table)
    if rec is None or not isinstance(table.params, DisjointParams):
        raise CertificationError("no total budget for members on disjoint shards is recorded")
    budget, tb = rec
    try:
        target = tb["target"]
        mu_rec = math.inf if target["mu"] is None else float(target["mu"])
        charged = float(tb["composed_epsilon"])
        accountant = tb["accountant"]
    except (KeyError, TypeError, ValueError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    if not charged <= budget.epsilon:
        raise CertificationError(f"the recorded total ε = {charged:.6g} exceeds the budget ε_total = "
                                 f"{budget.epsilon:g}")
    mu = Cloud(table.params.K, table.params.member).gdp_mu(table.gamma)
    if not mu <= mu_rec * (1.0 + RECORD_RTOL):
        raise CertificationError(f"the table is {mu:.9g}-GDP per query, not the recorded target μ = {mu_rec:.9g}")
    if accountant == GDP_ACCOUNTANT:
        eps = gdp_epsilon(mu * math.sqrt(budget.queries), budget.delta) if math.isfinite(mu) else math.inf
        if not eps <= budget.epsilon:
            raise CertificationError(f"{budget.queries} queries of a {mu:.6g}-GDP table compose to ε = {eps:.6g} "
                                     f"at δ = {budget.delta:g}, above the budget ε_total = {budget.epsilon:g}")
        if not math.isclose(eps, charged, rel_tol=RECORD_RTOL, abs_tol=1e-12):
            raise CertificationError(f"recorded total ε {charged!r} differs from the recomputed {eps!r}")
    elif accountant != PLD_ACCOUNTANT:
        raise CertificationError(f"unknown accountant {accountant!r} in the total_budget record")
    return mu


def verify_total_budget(table: GammaTable) -> Composition | None:
    """Recompute the total budget a table claims and check it (None when it claims none).

    Shared members: the Q-fold composition of its own profile, against the budget and the record.
    Disjoint members: :func:`verify_disjoint_target` (returns None).

    Raises:
        CertificationError: the recomputed ε exceeds the budget's ε_total, or differs from the
            recorded one; or the record is malformed."""
    rec = recorded_budget(table)
    if rec is None:
        return None
    budget, tb = rec
    if isinstance(table.params, DisjointParams):
        verify_disjoint_target(table)
        return None
    if "accountant" in tb:  # charged by the accountant: the total re-computed by darrm.accounting.budget.verify
        try:
            charged = float(tb["composed_epsilon"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CertificationError(f"malformed total_budget record: {exc}") from None
        if not charged <= budget.epsilon:
            raise CertificationError(f"the recorded total ε = {charged:.6g} exceeds the budget ε_total = "
                                     f"{budget.epsilon:g}")
        if "discretization" in tb:  # the accountant re-composes on this grid: its size bounded here
            _check_loss_grid(privacy_profile(table.gamma, table.params), _discretization(tb))
        return None
    try:
        recorded = float(tb["composed_epsilon"])
    except (KeyError, TypeError, ValueError) as exc:
        raise CertificationError(f"malformed total_budget record: {exc}") from None
    d = _discretization(tb)
    profile = privacy_profile(table.gamma, table.params)
    _check_loss_grid(profile, d)
    # ε(δ) is non-decreasing in the number of composed queries (one more mechanism never lowers the
    # hockey-stick divergence): a prefix above ε_total refuses the record at the cost of that prefix
    k = 1
    while k < budget.queries:
        prefix = composed_epsilon(profile, k, budget.delta, discretization=d)
        if not prefix.epsilon <= budget.epsilon:
            raise CertificationError(f"total_budget.queries: the first {k} of the {budget.queries} queries already "
                                     f"compose to ε = {prefix.epsilon:.6g} at δ = {budget.delta:g}, above the "
                                     f"recorded budget ε_total = {budget.epsilon:g}")
        k *= 2
    comp = composed_epsilon(profile, budget.queries, budget.delta, discretization=d)
    if not comp.epsilon <= budget.epsilon:
        raise CertificationError(f"{budget.queries} queries compose to ε = {comp.epsilon:.6g} at δ = {budget.delta:g}, "
                                 f"above the recorded budget ε_total = {budget.epsilon:g}")
    if not math.isclose(comp.epsilon, recorded, rel_tol=RECORD_RTOL, abs_tol=1e-12):
        raise CertificationError(f"recorded composed ε {recorded!r} differs from the recomputed {comp.epsilon!r}")
    return comp


def _check_loss_grid(profile: PrivacyProfile, d: float) -> None:
    """Refuse a discretization that puts one query's privacy losses on more than
    :data:`MAX_GRID_POINTS` points (the recomputation's time and memory grow with them)."""
    P, Qp = profile.pair()
    both = (P > 0) & (Qp > 0)
    losses = np.log(P[both]) - np.log(Qp[both])
    span = float(losses.max() - losses.min()) if losses.size else 0.0
    if span / d > MAX_GRID_POINTS:
        raise CertificationError(f"total_budget.discretization: {d!r} puts one query's privacy losses (a span of "
                                 f"{span:.3g}) on {span / d:.3g} grid points, more than the {MAX_GRID_POINTS:.0e} a "
                                 "recomputation may use")

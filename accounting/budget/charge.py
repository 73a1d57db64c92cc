"""The charge of a total-budget table: the one accountant's, and the re-check of a recorded one.

Every designer charges its candidates and its winner here, and every verifier recomputes a record
here: :func:`charged_total` is :func:`darrm.accounting.queries.composed_epsilon` with fresh members,
the number the labelling session and ``darrm account queries`` give for the same table and count
(the PLD of the table's pair, its Kairouz–Oh–Viswanath points and its certified Gaussian-DP
dominance, each computed from the table itself).  A verifier returns that recomputed total
(:func:`check_recorded`), so a table's record and its doors agree.
"""

from __future__ import annotations

import math

from darrm.budget.spec import TotalBudget
from darrm.budget.verify import RECORD_RTOL
from darrm.errors import CertificationError, ParameterError
from darrm.privacy.profile import PrivacyProfile
from darrm.table import GammaTable

from ..queries import DEFAULT_BRACKET, composed_delta, composed_epsilon, homogeneous_epsilon

__all__ = ["SCREEN_BRACKET", "charged_total", "check_recorded", "within_budget"]

#: the bracket of the search's screen (:func:`charged_total`): the optimistic side at the pessimistic
#: side's own interval, not refined
SCREEN_BRACKET = 1.0


def charged_total(table: GammaTable, budget: TotalBudget, *, screen: bool = False) -> float:
    """The session's charge of ``budget.queries`` answers of ``table`` at δ_total (fresh members);
    inf where the accountant cannot compute it (the candidate is then infeasible).

    ``screen``: the search's verdict on a candidate, the same accountant with the optimistic side of
    its bracket left coarse (:data:`SCREEN_BRACKET`): the pessimistic value, the only one read, is
    the session's wherever the composed PLD fits :data:`~darrm.accounting.queries.REFINE_POINTS`
    points at the default interval, and within the connect-the-dots error of it elsewhere; a design
    records only the unscreened charge of its winner."""
    try:
        return composed_epsilon(table, budget.queries, delta_total=budget.delta, member_randomness="fresh",
                                bracket=SCREEN_BRACKET if screen else DEFAULT_BRACKET).epsilon
    except ParameterError:
        return math.inf


def within_budget(table: GammaTable, budget: TotalBudget) -> bool:
    """The search's verdict on a candidate: the accountant's δ_total at ε_total (fresh members,
    :func:`darrm.accounting.queries.composed_delta`, optimistic side coarse) is at most the budget's
    δ_total.  δ(ε) is non-increasing, so for the PLD this is ε(δ_total) ≤ ε_total without the
    bisection in ε that the charge itself needs (its closed forms are taken at other points of the
    profile, so the two may differ at the budget's edge: a design records only the charge of its
    winner, :func:`charged_total`); False where the accountant cannot compute it."""
    try:
        return composed_delta(table, budget.queries, epsilon_total=budget.epsilon, member_randomness="fresh",
                              bracket=SCREEN_BRACKET).delta <= budget.delta
    except ParameterError:
        return False


def check_recorded(eps: float, charged: float, budget: TotalBudget) -> float:
    """A recomputed total ``eps`` must meet the budget and be at most the recorded ``charged`` (to
    :data:`~darrm.budget.verify.RECORD_RTOL`); returns ``eps``, the total every door reports.

    A recomputed total *below* the record is accepted: the record then claims more than the table
    spends (a table designed by an earlier version, charged before the accountant gained a closed
    form), which is never a privacy risk, and every door charges the recomputed total.  One above
    the record is refused: either the record was edited or the table was designed by a version
    whose accountant the current one does not reproduce; the message says to re-design it.

    Raises:
        CertificationError: ``eps`` is above the budget or above the record."""
    if not eps <= budget.epsilon:
        raise CertificationError(f"{budget.queries} queries compose to ε = {eps:.6g} at δ = {budget.delta:g}, "
                                 f"above its budget ε_total = {budget.epsilon:g}")
    if not eps <= charged * (1.0 + RECORD_RTOL) + 1e-12:
        raise CertificationError(f"recorded total ε {charged!r} differs from the recomputed {eps!r} (above it): the "
                                 "record was edited, or written by another version of the accountant; re-design "
                                 "the table with this version (darrm solve --total-eps, darrm.design_for_budget)")
    return eps


def profile_generic_epsilon(profile: PrivacyProfile, eps_q: float, budget: TotalBudget) -> float:
    """ε_total of Q queries each (ε_q, δ_γ(ε_q))-DP (:func:`~darrm.accounting.queries.homogeneous_epsilon`,
    the generic composition of the profile's per-query pair at ε_q)."""
    return homogeneous_epsilon(eps_q, float(profile.delta(eps_q)), budget.queries, budget.delta)
